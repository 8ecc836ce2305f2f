"""Checks every encoded game must pass, shared by the per-game test files (tests/test_station.py,
tests/test_vega.py, ...): random play, the same game from the same seed, and saves in the middle of a
game that load back and play on identically."""
from __future__ import annotations

import random
import re

MAX_DECISIONS = 30_000


def play_random(rs, players, seed, stop_after=None, chance="sampled", max_decisions=MAX_DECISIONS):
    """A game played by uniformly random choices (seeded), until it ends or after `stop_after` decisions."""
    g = rs.new_game(players, seed=seed, chance=chance)
    pick = random.Random(seed)
    steps = 0
    while not g.is_over() and steps < (stop_after or max_decisions):
        g.apply(pick.choice(g.legal_actions()))
        steps += 1
    return g


def check_same_seed_same_game(rs, players):
    a = play_random(rs, players, seed=11)
    b = play_random(rs, players, seed=11)
    assert a.to_json() == b.to_json()
    c = play_random(rs, players, seed=12)
    assert c.to_json() != a.to_json()


def check_round_trip_mid_game(rs, players, seed, cut, endings):
    """Saved after `cut` decisions, the game loads identically and plays on to the same end."""
    g = play_random(rs, players, seed=seed, stop_after=cut)
    assert not g.is_over()
    text = g.to_json()
    h = rs.load_game(text)
    assert h.to_json() == text
    assert [a.id for a in h.legal_actions()] == [a.id for a in g.legal_actions()]
    r1, r2 = random.Random(99), random.Random(99)
    while not g.is_over():
        g.apply(r1.choice(g.legal_actions()))
        h.apply(r2.choice(h.legal_actions()))
    assert g.to_json() == h.to_json()
    assert g.end_reason in endings


def check_explicit_chance_round_trip(rs, players, seed, steps):
    """In explicit chance mode, chance outcomes add up to 1 and a save in the middle loads identically."""
    g = rs.new_game(players, seed=seed, chance="explicit")
    pick = random.Random(seed)
    for _ in range(steps):
        if g.current_player == -1:
            outcomes = g.chance_outcomes()
            assert abs(sum(p for _, p in outcomes) - 1) < 1e-9
        g.apply(pick.choice(g.legal_actions()))
    text = g.to_json()
    assert rs.load_game(text).to_json() == text


def section_ids(rulebook):
    """The section ids of a rulebook (`## [V-4.5] ...` headings, English twins `V-4-en` included)."""
    with open(rulebook, encoding="utf-8") as fh:
        return re.findall(r"^## \[([A-Z]-[\d.]+(?:-en)?)\]", fh.read(), re.M)


def cited_ids(rules_path):
    """Every section id a rule file cites with `@rule "..."` (one or several ids)."""
    with open(rules_path, encoding="utf-8") as fh:
        text = fh.read()
    cited = set()
    for ids_text in re.findall(r'@rule\s+((?:"[^"]+"\s*,\s*)*"[^"]+")', text):
        cited |= set(re.findall(r'"([^"]+)"', ids_text))
    return cited

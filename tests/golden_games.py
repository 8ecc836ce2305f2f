"""Digests of seeded random games of every rule file under games/, stored in tests/data/golden/games.json.

Each game file must keep playing identically across changes to the runtime, unless a rule changed on
purpose: the same rules, seed and decisions must give the same `to_json()` at every step (the saved frames,
their positions and locals included, so a game saved before a change still loads and continues after it).
`tests/test_golden_games.py` replays the games and compares; after a deliberate rule change, write the new
digests with

    python -m tests.golden_games            # every file
    python -m tests.golden_games connect4    # only the files whose path contains the text
"""
from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "tests" / "data" / "golden" / "games.json"
SEEDS = (0, 1)
MAX_STEPS = 300  # decisions per game (Vega's and Mars's random games are long)


def rule_files() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "games").rglob("*.rules"))


def digest(rules, players: int, seed: int) -> str:
    """sha256 over to_json() after every decision of a seeded random game (chance drawn by its
    probabilities from the same seeded generator as the decisions)."""
    h = hashlib.sha256()
    g = rules.new_game(players, seed=seed, chance="explicit")
    rng = random.Random(seed)
    for _ in range(MAX_STEPS):
        h.update(g.to_json().encode())
        if g.is_over():
            break
        if g.is_chance():
            outs = g.chance_outcomes()
            pick = rng.choices([a for a, _ in outs], [p for _, p in outs])[0]
        else:
            pick = rng.choice(g.legal_actions())
        g.apply(pick)
    h.update(g.to_json().encode())
    return h.hexdigest()


def digests_of(path: str) -> dict[str, str]:
    """Every player count with each seed; then each variant the file declares, alone, at the smallest
    player count with the first seed."""
    import rulelang

    rules = rulelang.load(str(ROOT / path))
    counts = sorted(rules.player_counts)
    out = {f"{players}p seed {seed}": digest(rules, players, seed) for players in counts for seed in SEEDS}
    for variant in rules.variants:
        varied = rulelang.load(str(ROOT / path), variants=(variant,))
        out[f"{counts[0]}p seed {SEEDS[0]} variant {variant}"] = digest(varied, counts[0], SEEDS[0])
    return out


def main(argv: list[str]) -> int:
    stored = json.loads(STORE.read_text()) if STORE.exists() else {}
    for path in rule_files():
        if argv and not any(a in path for a in argv):
            continue
        stored[path] = digests_of(path)
        print(path, "written")
    STORE.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Shrunk reproductions of a finding: the shortest log of decisions that still shows it, with the fewest
deviations from the first legal choice; written as a log for `rulelang replay` and as a ready-to-paste
scenario.

A finding is whatever `reproduces(game_or_exception)` recognises: a run-time rule error or a stuck
position (the `GameError` that `new_game` or `apply` raised), an action refused (`IllegalAction`), or
something about the game after the last decision (an invariant broken, a game past the decision
bound). The procedure (docs/validate.md, "Findings and reproductions"):

1. **Shortest prefix.** The log is replayed once from `new_game(players, seed=seed, chance=chance)`;
   `reproduces` is asked after setup and after every decision, and the first prefix it accepts is kept.
   The log must replay as recorded (else `ShrinkError`).
2. **Fewer decisions** (delta debugging). Chunks of decisions are removed: the first half of the log,
   then the second; then each quarter, each eighth, ... and at last each single decision. The decisions
   after a removed chunk are taken at the positions the game reaches without it (a seat's decision may
   pass to another seat: ids do not name the seat).
3. **Fewest deviations.** A deviation is a decision that is not the first legal action of its
   position (the first outcome, for a chance decision in explicit mode). Each deviation in turn is
   replaced by the first legal action.

Every candidate is replayed from `new_game`. A decision that is not legal where a candidate reaches it
is *repaired*: replaced by the first legal action of its position (so a candidate never fails for an
illegal decision). A candidate is kept when `reproduces` accepts one of its prefixes (the shortest such
prefix is kept) and it has fewer decisions, or as many and fewer deviations. Steps 2 and 3 repeat until
a round keeps nothing; each kept candidate is strictly smaller, so this ends even without the bounds.
When it ends within the bounds, no single decision can be removed and no single deviation replaced by
the first legal choice without losing the finding.

Bounds: at most `max_replays` replays (default 2,000) and `max_seconds` of wall-clock time (default
60). Reaching one stops shrinking; the best log found so far is returned and `.complete` is False.
Without reaching a bound the result is deterministic: the same rules, seed, log and predicate give the
same shrunk log. `reproduces` is called with the live game and must not change it.
"""
from __future__ import annotations

import json
import time

from . import gamelog
from .errors import GameError, IllegalAction

DEFAULT_MAX_REPLAYS = 2_000
DEFAULT_MAX_SECONDS = 60.0
MAX_SCENARIO_NUMBER = (1 << 62) - 1  # the largest number a rule file may write (parser.MAX_NUMBER)
CHANCE = -1


class ShrinkError(ValueError):
    """The log cannot be shrunk: it does not replay, or it does not reproduce the finding (one line)."""


class Shrunk(list):
    """The shrunk log (a list of {"player", "action"}), with what shrinking did:

    - `complete`: False when a bound stopped shrinking (the log is still a reproduction, maybe not minimal)
    - `reason`: None, "replays" or "time" (the bound reached)
    - `replays`: replays made; `seconds`: time taken
    - `original`: decisions in the log given; `prefix`: decisions in the shortest reproducing prefix
    - `deviations`: decisions of the shrunk log that are not the first legal choice
    - `outcome`: what `reproduces` accepted at the end of the shrunk log (the game, or the exception)
    """

    complete = True
    reason = None
    replays = 0
    seconds = 0.0
    original = 0
    prefix = 0
    deviations = 0
    outcome = None


def same_error(message):
    """A `reproduces` for a run-time error: the exception's first line is `message` (a finding's error
    text as `GameError` gives it, "path:line:col: message (in where)")."""
    def reproduces(x):
        return isinstance(x, (GameError, IllegalAction)) and _line(x) == message
    return reproduces


def infer_chance(log) -> str:
    """"explicit" when the log holds chance decisions (player -1), else "sampled" (in sampled mode the
    engine draws chance itself and logs nothing for it)."""
    return "explicit" if any(_entry(e)["player"] == CHANCE for e in log) else "sampled"


def _entry(e) -> dict:
    if isinstance(e, dict) and "player" in e and "action" in e:
        player, action = e["player"], e["action"]
    elif isinstance(e, (list, tuple)) and len(e) == 2:
        player, action = e
    else:
        raise ShrinkError(f"a log entry is {{\"player\": seat, \"action\": id}}, not {str(e)[:60]}")
    if isinstance(player, bool) or not isinstance(player, int) or not isinstance(action, str):
        raise ShrinkError(f"a log entry is {{\"player\": seat, \"action\": id}}, not {str(e)[:60]}")
    return {"player": player, "action": action}


def _inputs(ruleset, variants, log, chance):
    """The log's entries and the chance mode, checked (ShrinkError)."""
    if sorted(variants) != sorted(getattr(ruleset, "active_variants", ())):
        raise ShrinkError(f"the ruleset is loaded with variants {list(ruleset.active_variants)}, "
                          f"not {list(variants)}")
    entries = [_entry(e) for e in log]
    chance = chance or infer_chance(entries)
    if chance not in ("sampled", "explicit"):
        raise ShrinkError(f"chance is \"sampled\" or \"explicit\", not {chance!r}")
    return entries, chance


class _Budget:
    def __init__(self, max_replays, max_seconds):
        self.max_replays = max_replays
        self.deadline = time.monotonic() + max_seconds
        self.replays = 0
        self.reason = None

    def take(self):
        """One more replay, if the bounds allow it."""
        if self.replays >= self.max_replays:
            self.reason = "replays"
        elif time.monotonic() > self.deadline:
            self.reason = "time"
        if self.reason:
            return False
        self.replays += 1
        return True


class _Run:
    """One replay: the decisions applied, the first legal id at each, and what reproduced (or None)."""

    __slots__ = ("log", "firsts", "outcome")

    def __init__(self):
        self.log = []
        self.firsts = []
        self.outcome = None

    @property
    def deviations(self):
        return sum(1 for e, f in zip(self.log, self.firsts) if e["action"] != f)

    def size(self):
        """What shrinking makes smaller: the decisions first, then the deviations among them."""
        return (len(self.log), self.deviations)


def _replay(ruleset, players, seed, chance, entries, reproduces, strict, deadline=None, same=-1):
    """Replay `entries` from a new game, asking `reproduces` after setup and after each decision; stops
    at the first prefix that reproduces. strict: every entry must be legal as recorded (ShrinkError
    otherwise); else an entry not legal now is replaced by the first legal action (the repair).
    `same`: the first `same` decisions are those of a replay already made, where no prefix reproduced:
    the game is the same there, so `reproduces` is not asked again until after decision `same` + 1."""
    run = _Run()
    try:
        g = ruleset.new_game(players, seed=seed, chance=chance)
    except (GameError, IllegalAction) as exc:
        if reproduces(exc):
            run.outcome = exc
            return run
        if strict:
            raise ShrinkError(f"the game fails at setup with another error: {_line(exc)}") from None
        return run
    if same < 0 and reproduces(g):
        run.outcome = g
        return run
    for k, e in enumerate(entries):
        if g.is_over():
            if strict:
                raise ShrinkError(f"decision {k + 1} of the log comes after the end of the game")
            break
        if deadline is not None and time.monotonic() > deadline:
            break  # a replay cut by the time bound does not reproduce
        legal = g.legal_actions()
        if not legal:
            break
        ids = [a.id for a in legal]
        seat = g.current_player
        aid = e["action"]
        if strict and e["player"] != seat:
            raise ShrinkError(f"decision {k + 1} of the log is by {_seat(e['player'])}, but it is "
                              f"{_seat(seat)}'s decision")
        if aid not in ids and not strict:
            aid = ids[0]  # the repair: the first legal action where the recorded one is not legal
        run.log.append({"player": seat, "action": aid})
        run.firsts.append(ids[0])
        try:
            g.apply(aid)
        except (GameError, IllegalAction) as exc:
            if reproduces(exc):
                run.outcome = exc
                return run
            if strict and isinstance(exc, IllegalAction):
                raise ShrinkError(f"decision {k + 1} of the log does not replay: {_line(exc)}") from None
            if strict:
                raise ShrinkError(f"the log fails at decision {k + 1} with another error: {_line(exc)}") from None
            return run
        if k >= same and reproduces(g):
            run.outcome = g
            return run
    return run


def shrink_log(ruleset, players, seed, variants, log, reproduces, *, chance=None,
               max_replays=DEFAULT_MAX_REPLAYS, max_seconds=DEFAULT_MAX_SECONDS) -> list:
    """The shrunk log (a `Shrunk`, a list of {"player", "action"}) that still reproduces the finding.

    `variants` must be the ruleset's active variants (the log is replayed with `ruleset`). `chance` is
    the game's chance mode; by default it is inferred from the log (`infer_chance`). Raises
    `ShrinkError` when the log does not replay or no prefix of it reproduces the finding."""
    start = time.monotonic()
    entries, chance = _inputs(ruleset, variants, log, chance)
    if isinstance(max_replays, bool) or not isinstance(max_replays, int) or max_replays < 1:
        raise ShrinkError(f"max_replays is a whole number of at least 1, not {max_replays!r}")
    budget = _Budget(max_replays, max_seconds)
    budget.replays = 1  # the first replay (the shortest prefix) is always made
    best = _replay(ruleset, players, seed, chance, entries, reproduces, strict=True)
    if best.outcome is None:
        raise ShrinkError(f"the log ({len(entries)} decisions) does not reproduce the finding")
    prefix = len(best.log)

    def attempt(cand, same):
        """Replay a candidate; keep it when it reproduces and is smaller. None when the bounds are reached."""
        nonlocal best
        if not budget.take():
            return None
        run = _replay(ruleset, players, seed, chance, cand, reproduces, strict=False, deadline=budget.deadline,
                      same=same)
        if run.outcome is not None and run.size() < best.size():
            best = run
            return True
        return False

    changed = True
    while changed and budget.reason is None:
        changed = False
        # 1. remove decisions: chunks of half the log, then a quarter, ... then one decision at a time
        for n in _chunk_sizes(len(best.log), players):
            i = 0
            while i + n <= len(best.log) and budget.reason is None:
                kept = attempt(best.log[:i] + best.log[i + n:], i)
                if kept:
                    changed = True  # the next chunk now starts at i
                elif i + n < len(best.log) < i + 2 * n:
                    i = len(best.log) - n  # the last chunk ends with the log
                else:
                    i += n
        # 2. replace each deviation by the first legal action of its position
        i = 0
        while i < len(best.log) and budget.reason is None:
            if best.log[i]["action"] != best.firsts[i]:
                cand = [dict(e) for e in best.log]
                cand[i]["action"] = best.firsts[i]
                if attempt(cand, i):
                    changed = True
            i += 1
    out = Shrunk(best.log)
    out.complete = budget.reason is None
    out.reason = budget.reason
    out.replays = budget.replays
    out.seconds = time.monotonic() - start
    out.original = len(entries)
    out.prefix = prefix
    out.deviations = best.deviations
    out.outcome = best.outcome
    return out


def _chunk_sizes(length, players) -> list:
    """The sizes of the chunks removed, largest first: half the log, a quarter, ... one decision, and also
    one round of the players and two decisions (a removal that keeps the seats in turn)."""
    sizes = set()
    n = length // 2
    while n >= 1:
        sizes.add(n)
        n //= 2
    sizes.update(k for k in (players, 2) if 1 <= k < length)
    return sorted(sizes, reverse=True)


# ------------------------------------------------------------------------------------ a log file
def write_log(path, ruleset, players, seed, variants, log, *, chance=None, error=None, rules=None):
    """Write `log` as `rulelang play --log` writes a game (the same keys, in the same order; the file is
    written to a temporary file and renamed into place). The log is replayed to fill in the end of the
    game: its end reason, scores, winners and final state hash, or the error it stops with. `error` is
    the finding to record when the game itself does not fail (e.g. "invariant 'stock' broken"), so
    that `rulelang replay` accepts a log that ends before the game does. `rules` is the rule file's
    path as written in the log (default: the path the ruleset was loaded from). Agents are recorded as
    "shrunk". Returns the record written."""
    entries, chance = _inputs(ruleset, variants, log, chance)
    game_error = None
    try:
        g = ruleset.new_game(players, seed=seed, chance=chance)
    except (GameError, IllegalAction) as exc:
        raise ShrinkError(f"the game fails at setup: {_line(exc)}") from None
    for k, e in enumerate(entries):
        if g.is_over():
            raise ShrinkError(f"decision {k + 1} of the log comes after the end of the game")
        try:
            g.apply(e["action"])
        except IllegalAction as exc:
            raise ShrinkError(f"decision {k + 1} of the log does not replay: {_line(exc)}") from None
        except GameError as exc:
            if k != len(entries) - 1:
                raise ShrinkError(f"the game fails at decision {k + 1}, before the end of the log: "
                                  f"{_line(exc)}") from None
            game_error = _line(exc)
    ended = game_error is None and g.is_over()
    scores = winners = digest = returns = None
    if game_error is None:
        try:
            scores = gamelog.jsonable(list(g.scores()))
            winners = list(g.winners())
            returns = gamelog.jsonable(list(g.returns()))
            digest = gamelog.state_hash(g)
        except GameError as exc:
            game_error = _line(exc)
            scores = digest = returns = None
    recorded = game_error if game_error is not None else (error if not ended else None)
    record = {
        "format": gamelog.LOG_FORMAT, "version": gamelog.LOG_VERSION,
        "rules": rules if rules is not None else getattr(ruleset, "path", None),
        "game": getattr(ruleset, "name", None), "variants": list(variants),
        "players": players, "seed": seed, "chance": chance, "agents": ["shrunk"] * players,
        "log": [dict(e) for e in g.log], "decisions": len(g.log),
        # as `play --log` writes a game that stopped with an error: no end, scores, winners or final state
        "end_reason": g.end_reason if ended and recorded is None else None,
        "scores": scores if recorded is None else None,
        "winners": winners if recorded is None else [],
        "returns": returns if recorded is None else None,
        "final_sha256": digest if recorded is None else None,
        "error": recorded,
    }
    if game_error is None and recorded is not None:  # a finding in a game still going: replay checks it is
        record["unfinished"] = True
    try:
        gamelog.write_record(str(path), record)
    except OSError as exc:
        raise ShrinkError(f"{path}: cannot write log: {exc.strerror or exc}") from None
    return record


# ------------------------------------------------------------------------------------ a scenario
def as_scenario(name, players, seed, log, note, *, chance=None, variants=(), expect=(), last_if_legal=True) -> str:
    """A ready-to-paste `scenario` block (docs/language.md, "Scenarios") that plays `log`: `play` steps
    for the players' decisions, `chance` steps for chance decisions (in explicit mode; in sampled mode
    the game's seed draws chance itself, as in the logged game). `note` (the finding, in words) becomes
    comments above the block and in its `then`; `expect` is a list of tests (text in rule syntax, or
    (test, message) pairs) written into `then`, such as an invariant that should hold. A finding that is
    an error at the last decision shows as the scenario failing at its last `play` with that error; an
    invariant broken by a decision fails the scenario there (scenarios check the invariants after every
    step). `last_if_legal`: the last decision, when it is a player's, is taken only if it is still legal
    (`if "id" in legal { play "id" }`), so that the scenario passes once the rules are fixed by forbidding
    it."""
    entries = [_entry(e) for e in log]
    chance = chance or infer_chance(entries)
    if chance not in ("sampled", "explicit"):
        raise ShrinkError(f"chance is \"sampled\" or \"explicit\", not {chance!r}")
    if chance == "sampled" and any(e["player"] == CHANCE for e in entries):
        raise ShrinkError("a log with chance decisions (player -1) is a game in explicit chance mode")
    notes = [line.rstrip() for line in str(note or "").splitlines() if line.strip()]
    out = [f"# {line}" for line in notes]
    out.append(f"scenario {_quote(name)} {{")
    out.append(f"  players {int(players)}")
    if 0 <= seed <= MAX_SCENARIO_NUMBER:
        out.append(f"  seed {int(seed)}")
    elif chance == "sampled":
        raise ShrinkError(f"seed {seed} cannot be written in a rule file (numbers there stay below 2^62); "
                          "replay the log in explicit chance mode to make a scenario of it")
    else:
        out.append(f"  # seed {seed}: not needed, every chance outcome is forced below")
    out.append(f"  chance {chance}")
    for v in variants:
        out.append(f"  with variant {v}")
    if entries:
        out.append("  when {")
        for k, e in enumerate(entries):
            step = "chance" if e["player"] == CHANCE else "play"
            who = "" if e["player"] == CHANCE else f"  # P{e['player']}"
            if k == len(entries) - 1 and last_if_legal and e["player"] != CHANCE:
                # the decision that shows the finding: a fix that makes it illegal makes the scenario pass
                out.append("    # the last decision, taken if it is still legal (a fix may forbid it)")
                out.append(f"    if {_quote(e['action'])} in legal {{ {step} {_quote(e['action'])} }}{who}")
            else:
                out.append(f"    {step} {_quote(e['action'])}{who}")
        out.append("  }")
    out.append("  then {")
    for line in notes:
        out.append(f"    # {line}")
    for x in expect:
        test, msg = (x, None) if isinstance(x, str) else x
        out.append(f"    expect {test}" + (f" {_quote(msg)}" if msg else ""))
    out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


def _quote(text) -> str:
    """A rule-file string literal (its escapes are Python's, which JSON's are a part of)."""
    return json.dumps(str(text), ensure_ascii=False)


def _line(exc) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _seat(p) -> str:
    return "chance" if p == CHANCE else f"P{p}"

"""What the OpenSpiel and PettingZoo adapters share (no third-party imports here)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Optional

if TYPE_CHECKING:
    from interpreter.game import Game
    from interpreter.ruleset import Ruleset

    from .action_space import ActionSpace

Facts = dict[str, Any]  # what walk_facts answers


def ruleset_of(path_or_ruleset: Any, variants: Iterable[str] = (), root: Optional[str] = None) -> Ruleset:
    """A loaded Ruleset as it is, or the rule file at a path loaded with the variants."""
    from interpreter.ruleset import Ruleset
    if isinstance(path_or_ruleset, Ruleset):
        if variants and tuple(variants) != tuple(path_or_ruleset.active_variants):
            raise ValueError("variants are given when loading the ruleset; this one was loaded with "
                             f"{list(path_or_ruleset.active_variants)}")
        return path_or_ruleset
    import rulelang
    return rulelang.load(str(path_or_ruleset), variants=tuple(variants), root=root)


DEFAULT_MAX_POSITIONS = 10_000  # positions the adapters' walk of a small game visits before giving up
DEFAULT_MAX_DEPTH = 256  # steps (decisions and chance outcomes) on one path before giving up


class _GiveUp(Exception):
    pass


# walk_facts' answers in this process, by what decides them (_walk_key); a few hundred bytes each
_WALKED: dict[tuple[Any, ...], Facts] = {}
MAX_WALKED = 256  # answers kept (the oldest go first)


def _walk_key(ruleset: Ruleset, players: int, space: ActionSpace, max_positions: int,
              max_depth: int) -> tuple[Any, ...]:
    """What decides a walk's answer: the rule texts read (every file of the `extends` chain), the variants,
    the player count, the action space's bounds, the walk's bounds and the rules' step budget and
    cascade depth. Equal for a ruleset loaded again from the same files (an adapter made twice, a
    training script that loads the game in every worker)."""
    import hashlib

    digest = hashlib.sha256()
    sources = ruleset.source_program.sources
    for path in sorted(sources):
        for part in (path, sources[path].text):
            data = part.encode("utf-8", "surrogatepass")
            digest.update(len(data).to_bytes(8, "big") + data)
    return (digest.hexdigest(), tuple(ruleset.active_variants), players, space.int_range, space.max_piece_id,
            max_positions, max_depth, ruleset.step_budget, ruleset.cascade_depth)


def walk_facts(ruleset: Ruleset, players: int, space: ActionSpace, max_positions: int = DEFAULT_MAX_POSITIONS,
               max_depth: int = DEFAULT_MAX_DEPTH) -> Facts:
    """What the whole game tree of a small game says, found by walking every reachable position once
    (explicit chance, every outcome; positions keyed as `interpreter.exhaustive.state_key`, so a
    position reached along several paths is walked once): `{"complete": True, "max_length": the most
    player actions of any game (an action taken in steps counts one per pick, as the adapters take it),
    "min_returns"/"max_returns": the lowest and highest return of any seat at any end, "zero_sum":
    whether the returns sum to 0 at every end}`. Gives `{"complete": False, "reason": ...}` when the walk
    passes `max_positions` positions or `max_depth` steps on one path, meets a cycle (a position on its
    own path: the game can go on for ever) or a rule error. Deterministic (a count, not a clock), so an
    answer is kept for the process (`_WALKED`): the same rules walked again (a board game too big to walk
    gives up after 10,000 positions, seconds each time) are answered at once; an answer from a rule error,
    which a time limit may have caused, is not kept."""
    key = _walk_key(ruleset, players, space, max_positions, max_depth)
    got = _WALKED.get(key)
    if got is None:
        got = _walk(ruleset, players, space, max_positions, max_depth)
        if "error" not in got:
            try:
                while len(_WALKED) >= MAX_WALKED:
                    _WALKED.pop(next(iter(_WALKED)))
            except (RuntimeError, StopIteration, KeyError):  # (another thread made room meanwhile)
                pass
            _WALKED[key] = got
    return {name: value for name, value in got.items() if name != "error"}


def _walk(ruleset: Ruleset, players: int, space: ActionSpace, max_positions: int, max_depth: int) -> Facts:
    """walk_facts without the memo; an answer from a rule error has "error": True."""
    from interpreter.exhaustive import state_key

    # key -> (max length below, min return, max return, zero-sum below)
    memo: dict[bytes, tuple[int, float, float, bool]] = {}
    on_path: set[bytes] = set()

    def weight(game: Game, oid: str) -> int:
        p = game.pending
        if p is None or p.kind == "chance":
            return 0
        if p.kind == "action":
            for i, (name, args) in p.options:
                if i == oid:
                    return 1 + len(space.picks(name, args)) if space.stepwise(name) else 1
        return 1

    def visit(game: Game, depth: int) -> tuple[int, float, float, bool]:
        if depth > max_depth:
            raise _GiveUp(f"a path longer than {max_depth} steps")
        key = state_key(game)
        got = memo.get(key)
        if got is not None:
            return got
        if key in on_path:
            raise _GiveUp("a cycle: a position comes back on its own path")
        if game.over:
            r = [float(x) for x in game.returns()]
            got = (0, min(r), max(r), sum(r) == 0)
        else:
            pending = game.pending
            if pending is None:
                raise _GiveUp("a position that is not over and waits for nothing")
            if len(memo) >= max_positions:
                raise _GiveUp(f"more than {max_positions:,} positions")
            on_path.add(key)
            longest, lo, hi, zero = 0, float("inf"), float("-inf"), True
            for oid, _ in list(pending.options):
                w = weight(game, oid)
                child = game.clone()
                child.apply(oid)
                c_len, c_lo, c_hi, c_zero = visit(child, depth + 1)
                longest = max(longest, w + c_len)
                lo, hi, zero = min(lo, c_lo), max(hi, c_hi), zero and c_zero
            on_path.discard(key)
            got = (longest, lo, hi, zero)
        memo[key] = got
        return got

    try:
        game = ruleset.new_game(players, seed=0, chance="explicit")
        longest, lo, hi, zero = visit(game, 0)
    except _GiveUp as e:
        return {"complete": False, "reason": str(e)}
    except Exception as e:  # a rule error (GameError), a deep recursion...: no facts, never a failed load
        text = str(e).splitlines()[0][:120] if str(e) else ""
        return {"complete": False, "reason": f"{type(e).__name__}: {text}", "error": True}
    return {"complete": True, "positions": len(memo), "max_length": longest, "min_returns": lo,
            "max_returns": hi, "zero_sum": zero}

"""Exhaustive mode: every reachable state of a small game, from the start, with chance expanded.

`explore_all(ruleset, players, max_states, check=None)` walks the game depth first in explicit chance
mode (each chance outcome is a child, whatever its probability), taking the legal actions in the order
`legal_actions()` gives them. It counts two things (the way OpenSpiel counts them):

- **positions**: distinct states, by a canonical key of the state: `Game.to_dict()` without the
  history (`log`, `notes`, `turns`), hashed with SHA-256. Two decision orders that reach the same
  position (a transposition) give one position. Terminal states, chance states and states where the
  rules failed count as positions too.
- **nodes**: the nodes of the full game tree, the root and every terminal node included; a position
  reached by k different histories is k nodes. The count of the subtree below each position is
  memoised by its key, so the tree is counted without walking every node (tic-tac-toe: 5,478
  positions, 549,946 nodes).

`check(game)` is called once for each distinct position (not for states where the rules failed) and
returns nothing, or findings: a text, a dict with "message" (and optionally "kind"), or a list of them.
It must not change the game. The walk itself finds run-time rule errors (kind "error"), stuck positions
(kind "stuck": the engine stops a game whose player has no legal action with "the game is stuck"; a
state that is not over and offers nothing is stuck too) and cycles (kind "cycle": a decision that leads
back to a position on the current path; the tree is then infinite and "nodes" is None).

Bounds: `max_states` distinct positions, `max_seconds` of wall-clock time (default 600) and
`max_depth` decisions on one path (default 10,000: each state on the current path is kept in memory).
Reaching one stops the walk: the result says `"complete": False` and the bound in `"reason"`, with the
counts found so far and `"nodes": None`. Within the bounds the result is deterministic.
"""
from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING, Any, Callable, Optional

from .errors import GameError, IllegalAction

if TYPE_CHECKING:
    from .game import Game
    from .ruleset import Ruleset

Finding = dict[str, Any]  # {"kind", "message", "log", "count", ...}

DEFAULT_MAX_SECONDS = 600.0
DEFAULT_MAX_DEPTH = 10_000
MAX_FINDINGS = 100  # distinct findings (kind and message) kept; further ones are only counted
HISTORY_KEYS = ("log", "notes", "turns")  # what a position's key leaves out: how the game got there


def state_key(game: Game) -> bytes:
    """The canonical key of a game's position: a digest of its saved state without the history
    (``HISTORY_KEYS``), Game.position_key."""
    return game.position_key()


class _Frame:
    __slots__ = ("key", "game", "ids", "i", "count")

    def __init__(self, key: bytes, game: Game, ids: list[str]) -> None:
        self.key = key
        self.game = game
        self.ids = ids
        self.i = 0
        self.count = 1  # this node


class _Findings:
    def __init__(self) -> None:
        self.items: dict[tuple[str, str], Finding] = {}
        self.dropped = 0

    def add(self, kind: str, message: str, log: list[Any], extra: Optional[dict[str, Any]] = None) -> None:
        key = (kind, message)
        got = self.items.get(key)
        if got is not None:
            got["count"] += 1
            return
        if len(self.items) >= MAX_FINDINGS:
            self.dropped += 1
            return
        f = {"kind": kind, "message": message, "log": [dict(e) for e in log], "count": 1}
        if extra:
            f.update({k: v for k, v in extra.items() if k not in f})
        self.items[key] = f

    def from_check(self, got: Any, game: Game) -> None:
        if got is None or got is False or got == "":
            return
        if isinstance(got, (str, dict)):
            got = [got]
        for x in got:
            if isinstance(x, dict):
                self.add(str(x.get("kind", "check")), str(x.get("message", "")), game.log,
                         {k: v for k, v in x.items() if k not in ("kind", "message")})
            elif x:
                self.add("check", str(x), game.log)


def _error_kind(message: str) -> str:
    return "stuck" if "the game is stuck" in message else "error"


def _line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def explore_all(ruleset: Ruleset, players: int, max_states: int, check: Optional[Callable[[Game], Any]] = None, *,
                max_seconds: float = DEFAULT_MAX_SECONDS, max_depth: int = DEFAULT_MAX_DEPTH,
                seed: int = 0) -> dict[str, Any]:
    """Enumerate every reachable state of a `players`-player game (see the module's text). Returns

    {"complete", "reason" (None, "max_states", "time" or "max_depth"), "players", "seed", "chance":
    "explicit", "positions", "nodes" (None when incomplete or cyclic), "terminal_positions",
    "chance_positions", "error_positions", "max_depth" (the most decisions on one path), "cyclic",
    "findings" (a list of {"kind", "message", "log", "count"}: "log" is the first path found to it,
    replayable with `new_game(players, seed=seed, chance="explicit")`), "findings_dropped", "seconds"}.
    """
    if isinstance(max_states, bool) or not isinstance(max_states, int) or max_states < 1:
        raise ValueError(f"max_states is a whole number of at least 1, not {max_states!r}")
    counts = tuple(getattr(ruleset, "player_counts", ()))
    if counts and players not in counts:
        raise ValueError(f"{ruleset.name} is for {', '.join(map(str, counts))} players, not {players!r}")
    start = time.monotonic()
    deadline = start + max_seconds
    findings = _Findings()
    out: dict[str, Any] = {"complete": True, "reason": None, "players": players, "seed": seed, "chance": "explicit",
           "positions": 0, "nodes": None, "terminal_positions": 0, "chance_positions": 0,
           "error_positions": 0, "max_depth": 0, "cyclic": False}

    def finish(nodes: Optional[int]) -> dict[str, Any]:
        out["nodes"] = nodes if out["complete"] and not out["cyclic"] else None
        out["findings"] = list(findings.items.values())
        out["findings_dropped"] = findings.dropped
        out["seconds"] = round(time.monotonic() - start, 3)
        return out

    try:
        root = ruleset.new_game(players, seed=seed, chance="explicit")
    except (GameError, IllegalAction) as exc:
        msg = _line(exc)
        findings.add(_error_kind(msg), msg, [])
        return finish(0)

    memo: dict[bytes, int] = {}  # key -> node count of the subtree (finished positions)
    on_path: set[bytes] = set()  # keys of the positions on the current path
    stack: list[_Frame] = []

    def discover(game: Game, key: bytes, failed: bool) -> Optional[int]:
        """A new position: count it, check it; returns its node count if it is a leaf, else None (pushed)."""
        out["positions"] += 1
        depth = len(game.log)
        if depth > out["max_depth"]:
            out["max_depth"] = depth
        if failed:
            out["error_positions"] += 1
            out["terminal_positions"] += 1
            return 1
        if check is not None:
            try:
                got = check(game)
            except GameError as exc:  # the check itself failed on this position (e.g. an invariant's error)
                got = {"kind": "error", "message": _line(exc)}
            findings.from_check(got, game)
        if game.is_over():
            out["terminal_positions"] += 1
            return 1
        ids = [a.id for a in game.legal_actions()]
        if not ids:
            findings.add("stuck", f"P{game.current_player} has no legal action: the game is stuck", game.log)
            out["terminal_positions"] += 1
            return 1
        if game.current_player == -1:
            out["chance_positions"] += 1
        stack.append(_Frame(key, game, ids))
        on_path.add(key)
        return None

    key = state_key(root)
    got = discover(root, key, False)
    if got is not None:
        return finish(got)
    while stack:
        top = stack[-1]
        if top.i >= len(top.ids):
            stack.pop()
            on_path.discard(top.key)
            memo[top.key] = top.count
            if stack:
                stack[-1].count += top.count
            continue
        if time.monotonic() > deadline:
            out.update(complete=False, reason="time")
            break
        aid = top.ids[top.i]
        top.i += 1
        child = top.game.clone()
        failed = False
        try:
            child.apply(aid)
        except GameError as exc:
            msg = _line(exc)
            findings.add(_error_kind(msg), msg, child.log)
            failed = True
        except IllegalAction as exc:  # an id that legal_actions() gave: a bug, reported as a finding
            findings.add("error", _line(exc), top.game.log + [{"player": top.game.current_player, "action": aid}])
            continue
        try:
            ckey = state_key(child)
        except (TypeError, ValueError):  # a state the rules left unsaveable when they failed: its own position
            if not failed:
                raise
            ckey = hashlib.sha256(top.key + b"\0" + aid.encode("utf-8")).digest()
        got = memo.get(ckey)
        if got is not None:
            top.count += got
            continue
        if ckey in on_path:
            out["cyclic"] = True
            findings.add("cycle", "a decision leads back to an earlier position (the game can go on forever)",
                         child.log)
            continue
        if out["positions"] >= max_states:
            out.update(complete=False, reason="max_states")
            break
        if len(child.log) > max_depth:
            out.update(complete=False, reason="max_depth")
            break
        got = discover(child, ckey, failed)
        if got is not None:
            memo[ckey] = got
            top.count += got
    if not out["complete"]:
        return finish(None)
    return finish(memo.get(key))

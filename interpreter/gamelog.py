"""The game log file: what `rulelang play --log` writes and `rulelang replay` reads, and what shrunk
findings (interpreter/shrink.py) and the browser server's downloads are written in.

A log is a JSON object: ``format`` ("rulelang-log"), ``version``, the ``game``'s name, ``players``,
``seed``, ``variants``, ``chance``, the ``log`` of decisions (``{"player": seat, "action": id}``) and the
outcome (``outcome()``: end reason, scores, winners, returns, the final state's SHA-256, the error, and
whether the game was left unfinished). Reading one is reading untrusted input: ``read_log`` checks every
field and says what is wrong in one line (``LogError``), within size limits fixed before parsing.
Nothing here knows a game, nor the command line.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from typing import Any, Iterable, Optional, Protocol, Sequence, Union

from rulelang.atomic import write_text_atomic
from .errors import GameError

__all__ = ["LOG_FORMAT", "LOG_VERSION", "LogError", "read_log", "entry", "entries", "outcome", "state_hash",
           "jsonable", "dumps_record", "write_record", "same_error"]

LOG_FORMAT = "rulelang-log"
LOG_VERSION = 1
MAX_LOG_BYTES = 64 * 1024 * 1024  # a log of 100,000 decisions is ~5 MB
MAX_LOG_DIGITS = 30  # digits of a number in a log (seeds are far shorter)
MAX_LOG_VALUES = 1_000_000  # lists, objects and list items in a log (about 330,000 decisions), counted before parsing


class LogError(Exception):
    """A log that cannot be used; ``str()`` is one line saying why."""


class Decision(Protocol):
    """One decision of a game's log (interpreter/game.py's entries): who chose, and the action's id."""

    @property
    def player(self) -> int: ...

    @property
    def action(self) -> str: ...


class PlayedGame(Protocol):
    """A game (interpreter/game.py's Game), as far as its log's outcome reads it. (A protocol: the game stands
    above this module.)"""

    @property
    def log(self) -> Sequence[Any]: ...  # each a Decision, a dict or a [player, action] pair

    @property
    def end_reason(self) -> Optional[str]: ...

    def to_json(self) -> str: ...

    def is_over(self) -> bool: ...

    def scores(self) -> Iterable[Any]: ...

    def winners(self) -> Iterable[int]: ...


# a decision as entry() accepts it: a dict, a [player, action] pair or an object with player and action
AnyDecision = Union[dict[str, Any], list[Any], tuple[Any, ...], Decision]


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def entry(e: AnyDecision) -> dict[str, Any]:
    """A log entry as a plain ``{"player", "action"}`` dict (accepts dicts, ``[player, action]``
    pairs and objects with ``player``/``action`` attributes)."""
    if isinstance(e, dict):
        return {"player": int(e["player"]), "action": str(e["action"])}
    if isinstance(e, (list, tuple)):
        player, action = e
        return {"player": int(player), "action": str(action)}
    return {"player": int(e.player), "action": str(e.action)}


def entries(game: PlayedGame) -> list[dict[str, Any]]:
    return [entry(e) for e in game.log]


def state_hash(game: PlayedGame) -> str:
    return hashlib.sha256(game.to_json().encode("utf-8")).hexdigest()


def jsonable(value: object) -> Any:
    return json.loads(json.dumps(value, default=str))


def outcome(game: PlayedGame, stopped: Optional[str] = None) -> dict[str, Any]:
    """What a log records of how a game ended (`play --log` writes it, `replay` compares it): ``end_reason``,
    ``scores``, ``winners``, ``returns``, ``final_sha256``, ``error`` and ``unfinished``.

    `stopped`: the error the rules stopped with (first line), if they did: then there is no end, no scores
    and no final state. A score, tiebreak or payoff that fails at the end is the game's error as well (a
    rules error, positioned), with the end reason and the final state kept. A game that is not over (the
    decision limit, an agent that could not decide) is ``unfinished``: no outcome, but its state's hash."""
    out: dict[str, Any] = {"end_reason": None, "scores": None, "winners": [], "returns": None, "final_sha256": None,
           "error": stopped, "unfinished": False}
    if stopped is not None:
        return out
    out["final_sha256"] = state_hash(game)
    if not game.is_over():
        out["unfinished"] = True
        return out
    out["end_reason"] = game.end_reason
    try:
        scores = jsonable(list(game.scores()))
        winners = list(game.winners())
        returns = jsonable(list(game.returns())) if hasattr(game, "returns") else None
    except GameError as exc:
        out["error"] = first_line(exc)
        return out
    out.update(scores=scores, winners=winners, returns=returns)
    return out


def dumps_record(data: dict[str, Any]) -> str:
    """JSON for a log file: one key per line, and one line per decision of the ``log`` list."""
    lines = []
    for key, value in data.items():
        if isinstance(value, list) and key == "log" and value:
            body = ",\n".join("  " + json.dumps(v, default=str) for v in value)
            text = "[\n" + body + "\n ]"
        else:
            text = json.dumps(value, default=str)
        lines.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def write_record(path: str, data: dict[str, Any]) -> None:
    """Write ``data`` as a log record to ``path``, whole or not at all (rulelang/atomic.py)."""

    write_text_atomic(path, dumps_record(data))


_ERROR_AT = re.compile(r"^.*?:(\d+):(\d+): ")


def same_error(got: str, recorded: str) -> bool:
    """The same run-time error, whatever path the rule file was given by (`path:line:col: message`)."""
    strip = (lambda t: _ERROR_AT.sub(r"\1:\2: ", t, count=1))
    return strip(got) == strip(recorded)


class _BadNumber(Exception):
    pass


def _log_number(text: str) -> int:
    if len(text.lstrip("-")) > MAX_LOG_DIGITS:
        raise _BadNumber(f"a number with {len(text)} digits")
    return int(text)


def _log_float(text: str) -> float:
    if len(text) > 2 * MAX_LOG_DIGITS:
        raise _BadNumber(f"a number with {len(text)} digits")
    return float(text)


def _log_constant(text: str) -> float:
    raise _BadNumber(f"'{text}' is not a JSON number")


def unreadable(path: str) -> str:
    """Why ``path`` cannot be read as a file, or ``""`` if it can (never opens it: a FIFO must not block)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return exc.strerror or str(exc)
    except ValueError:
        return "not a valid file name"
    if stat.S_ISDIR(st.st_mode):
        return "is a directory"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if not os.access(path, os.R_OK):
        return "permission denied"
    return ""


def read_log(path: str) -> dict[str, Any]:
    """A log file written by ``play --log``, checked: every problem is a one-line ``LogError``."""
    from rulelang.program import FileProblem, read_limited

    problem = unreadable(path)
    if problem:
        raise LogError(f"{path}: cannot read log: {problem}")
    try:
        raw = read_limited(path, MAX_LOG_BYTES)
    except FileProblem as exc:
        raise LogError(f"{path}: cannot read log: {exc}") from None
    bad = f"{path}: not a rulelang log"
    if b"\x00" in raw:
        raise LogError(f"{bad} (it is a binary file)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise LogError(f"{bad} (it is not UTF-8 text)") from None
    if text.count("[") + text.count("{") + text.count(",") > MAX_LOG_VALUES:  # parsed, they could fill the memory
        raise LogError(f"{bad}: more than {MAX_LOG_VALUES:,} values")
    try:
        data = json.loads(text, parse_int=_log_number, parse_float=_log_float, parse_constant=_log_constant)
    except _BadNumber as exc:
        raise LogError(f"{bad}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise LogError(f"{bad}: invalid JSON at line {exc.lineno}") from None
    except RecursionError:
        raise LogError(f"{bad}: the JSON is nested too deeply") from None
    if not isinstance(data, dict):
        raise LogError(f"{bad}: expected a JSON object")
    missing = [k for k in ("players", "seed", "log") if k not in data]
    if missing:
        raise LogError(f"{bad}: missing {', '.join(missing)}")
    whole = (lambda v: isinstance(v, int) and not isinstance(v, bool))
    variants = data.get("variants") or []
    if not whole(data["players"]) or not whole(data["seed"]):
        raise LogError(f"{bad}: players and seed must be whole numbers")
    if not 1 <= data["players"] <= 1000:
        raise LogError(f"{bad}: players must be a player count, not {data['players']}")
    if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
        raise LogError(f"{bad}: variants must be a list of names")
    if data.get("chance") not in (None, "sampled", "explicit"):
        raise LogError(f"{bad}: chance must be \"sampled\" or \"explicit\"")
    for key in ("game", "final_sha256", "error", "end_reason"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise LogError(f"{bad}: {key} must be text")
    if not isinstance(data["log"], list):
        raise LogError(f"{bad}: log must be a list of decisions")
    found = []
    for k, e in enumerate(data["log"]):
        if not (isinstance(e, dict) and set(e) == {"player", "action"} and whole(e["player"])
                and isinstance(e["action"], str)):
            raise LogError(f"{bad}: decision {k + 1} of the log is not "
                           '{"player": <seat number>, "action": "<action id>"}')
        found.append({"player": e["player"], "action": e["action"]})
    data["log"] = found
    data["variants"] = list(variants)
    return data

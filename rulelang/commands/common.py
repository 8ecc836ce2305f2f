"""What several commands share: ``Fail`` and the exit codes, loading a rule file for a command, the player
count, the game's error types, the log file's helpers (interpreter/gamelog.py), and the common options.

Everything heavy (the API, the runtime, even attrs) is imported inside the functions: ``rulelang --help``
stays quick.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import click

if TYPE_CHECKING:
    from types import ModuleType

    from interpreter.game import Game
    from interpreter.ruleset import Ruleset
    from rulelang.diagnostics import Diagnostic, RuleError

LOG_FORMAT = "rulelang-log"  # (interpreter/gamelog.py's, here for the commands that write logs)
LOG_VERSION = 1

EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


class Fail(Exception):
    """Stop the command with a one-line message on stderr (none if ``message`` is empty)."""

    def __init__(self, message: str = "", code: int = EXIT_FAIL):
        super().__init__(message)
        self.message = message
        self.code = code


def api() -> ModuleType:
    """The ``rulelang`` package (imported late: ``python -m rulelang --help`` stays quick)."""
    import rulelang

    return rulelang


def rule_error_type() -> type[RuleError]:
    from rulelang.diagnostics import RuleError

    return RuleError


def game_error_types() -> tuple[type[Exception], ...]:
    """Exceptions that mean "the game failed" (reported in one line, exit 1)."""
    from interpreter.agents import AgentError
    from interpreter.errors import GameError, IllegalAction
    from interpreter.simulate import DecisionLimitExceeded

    return (AgentError, DecisionLimitExceeded, GameError, IllegalAction)


def stop_error_types() -> tuple[type[Exception], ...]:
    """Exceptions that mean "the rules failed" (as opposed to an agent or the decision limit stopping play)."""
    from interpreter.errors import GameError

    return (GameError,)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def unreadable(path: str) -> str:
    """Why ``path`` cannot be read as a rule file, or ``""`` if it can (never opens it: a FIFO
    must not block). The one test, shared with the log reader (interpreter/gamelog.py)."""
    from interpreter.gamelog import unreadable as problem_of

    return problem_of(path)


def require_file(path: str, what: str = "file") -> None:
    problem = unreadable(path)
    if problem:
        raise Fail(f"{path}: cannot read {what}: {problem}")


def root_kw(root: str | None) -> dict[str, str]:
    """``root=`` for the API when ``--root`` was given (else nothing: the API default)."""
    return {"root": root} if root else {}


def unknown_variants(path: str, diags: Iterable[Diagnostic], from_log: bool = False) -> None:
    """Raise a usage error (or, for a log's variants, a failure) for an unknown variant (E106):
    it is a mistake on the command line, not at a position of the rule file."""
    unknown = [d for d in diags if getattr(d, "code", "") == "E106"]
    if not unknown:
        return
    names = ", ".join(f"'{d.message.split(chr(39))[1]}'" if d.message.count("'") >= 2 else d.message
                      for d in unknown)
    hint = unknown[0].hint
    known = hint.split(": ", 1)[1] if ": " in hint else "none"
    has = f"its variants are: {known}" if known != "none" else "it has no variants"
    if from_log:
        raise Fail(f"the log names variant {names}, which {path} does not have ({has})")
    raise Fail(f"--variant {names}: {path} has no such variant ({has})", EXIT_USAGE)


def load_rules(path: str, variants: Iterable[str], root: str | None = None, from_log: bool = False) -> Ruleset:
    """Load a ruleset; rule errors print their diagnostics on stderr and exit 1."""
    require_file(path)
    try:
        return api().load(path, variants=tuple(variants), **root_kw(root))
    except rule_error_type() as exc:
        unknown_variants(path, getattr(exc, "diagnostics", ()), from_log)
        click.echo(exc.render() if hasattr(exc, "render") else str(exc), err=True)
        raise Fail("") from None
    except OSError as exc:
        raise Fail(f"{path}: cannot read file: {exc.strerror or exc}") from None


def player_count(ruleset: Ruleset, players: int | None) -> int:
    """The player count: the one asked for (checked against ``player_counts``) or the smallest
    allowed one."""
    counts = tuple(getattr(ruleset, "player_counts", ()) or ())
    if players is None:
        if not counts:
            raise Fail("--players is required", EXIT_USAGE)
        return min(counts)
    if counts and players not in counts:
        allowed = ", ".join(str(c) for c in counts)
        raise Fail(f"{getattr(ruleset, 'name', 'this game')} is played by {allowed} players, not {players}")
    return players


def parse_workers(workers: str) -> int:
    """--workers as a number of worker processes, or a usage error naming the range."""
    from interpreter.runner import MAX_WORKERS, check_workers

    try:
        return check_workers(int(workers))
    except ValueError:
        shown = workers if len(workers) <= 24 else workers[:20] + "..."
        raise Fail(f"--workers {shown!r}: give a whole number of worker processes from 1 to {MAX_WORKERS}",
                   EXIT_USAGE) from None


def rule_files_below(path: str) -> list[str]:
    """A file as it is; a folder as the *.rules files below it, not following symbolic links out of it."""
    if os.path.isdir(path):
        from rulelang.folders import files_below

        found, outside = files_below(path, lambda name: name.endswith(".rules"))
        for f in outside:
            click.echo(f"rulelang: {printable(f)}: skipped: a symbolic link to a file outside {printable(path)}",
                       err=True)
        return found
    return [path]


# The log file's format lives in interpreter/gamelog.py (a layer below the command line); these names are
# what the commands call it by.
def log_entry(entry: Any) -> dict[str, Any]:
    """One decision of the game's log as the log file records it."""
    from interpreter.gamelog import entry as as_record

    return as_record(entry)


def log_entries(game: Game) -> list[dict[str, Any]]:
    from interpreter.gamelog import entries

    return entries(game)


def outcome(game: Game, stopped: str | None = None) -> dict[str, Any]:
    from interpreter.gamelog import outcome as game_outcome

    return game_outcome(game, stopped)


def write_json_atomic(path: str, data: dict[str, Any]) -> None:
    """Write the record ``data`` to ``path`` whole or not at all."""
    from interpreter.gamelog import write_record

    write_record(path, data)


def same_error(got: str, recorded: str) -> bool:
    from interpreter.gamelog import same_error as same

    return same(got, recorded)


def read_log(path: str) -> dict[str, Any]:
    """A log file written by ``play --log``, checked (interpreter/gamelog.py): every problem is a one-line ``Fail``."""
    from interpreter.gamelog import LogError
    from interpreter.gamelog import read_log as read_checked

    try:
        return read_checked(path)
    except LogError as exc:
        raise Fail(str(exc)) from None


def write_text_or_fail(path: str, text: str, what: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (rulelang/atomic.py); a failure is one line naming ``what``."""
    from rulelang.atomic import write_text_atomic

    try:
        write_text_atomic(path, text)
    except OSError as e:
        raise Fail(f"{path}: cannot write {what}: {e.strerror or e}") from None


def printable(text: object) -> str:
    """``text`` safe to print on any terminal (rulelang.diagnostics.printable, imported when first used)."""
    from rulelang.diagnostics import printable as safe

    return safe(text)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def seat_list(seats: Sequence[int]) -> str:
    from interpreter.agents import seat_name

    return ", ".join(seat_name(s) for s in seats)


def print_text(text: str) -> None:
    """Print a command's text as it is (a diagram, a drawing), nothing when it is empty (written to a file)."""
    if text:
        click.echo(text, nl=False)


Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

variant_option: Decorator = click.option("--variant", "variants", multiple=True, metavar="V",
                                         help="Activate a variant declared by the rules (repeatable).")
def _ask_native(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:  # the environment, so that worker processes compile (or find in the cache) the same
        os.environ["RULELANG_NATIVE"] = "1"


native_option: Decorator = click.option(
    "--native", is_flag=True, expose_value=False, callback=_ask_native,
    help="Run the rules' generated code compiled by Cython and the C compiler (needs rulelang[native] and a "
         "C compiler; cached after the first compile; the same as RULELANG_NATIVE=1). See docs/runtime.md.")


def native_note(ruleset: Ruleset) -> None:
    """When the native path was asked for: compile now (before any worker starts), and say in one note on
    stderr if the rules run as Python instead."""
    if os.environ.get("RULELANG_NATIVE", "") in ("", "0"):
        return
    note = getattr(ruleset, "native_note", None)
    if note:
        click.echo(f"note: the native path is not used ({note}); the rules run as Python", err=True)


root_option: Decorator = click.option("--root", metavar="DIR", type=click.Path(file_okay=False),
                                      help="The folder that 'extends' and 'rulebook' paths must stay inside "
                                           "(default: 'extends' stays in the rule file's folder).")

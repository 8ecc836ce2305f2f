"""The ``rulelang`` command line: check, play, simulate, replay and test rule files.

Exit codes: 0 success, 1 a problem with the input (rule errors, a failing game, a failed replay or
scenario, an unreadable file), 2 a usage error, 3 an internal error.  Errors are one line on stderr
(rendered diagnostics excepted); no command prints a Python traceback unless the environment
variable ``RULELANG_DEBUG=1`` is set.

Everything here goes through the public API (``docs/api.md``): ``rulelang.load``, ``rulelang.check``,
``Ruleset.new_game`` and the ``Game`` members.
"""
from __future__ import annotations

import json
import os
import sys

import click

from rulelang.diagnostics import ERROR, NOTE, WARNING, Diagnostic, printable

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


class _Group(click.Group):
    """A group that turns ``Fail`` into a one-line error and any other exception into
    ``rulelang: internal error: ...`` with exit code 3 (re-raised when RULELANG_DEBUG is set)."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except Fail as exc:
            if exc.message:
                click.echo(f"rulelang: {printable(exc.message)}", err=True)
            ctx.exit(exc.code)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except BrokenPipeError:  # e.g. `rulelang play ... | head`: stop quietly
            try:
                sys.stdout = open(os.devnull, "w")
            except OSError:
                pass
            ctx.exit(EXIT_FAIL)
        except Exception as exc:
            if os.environ.get("RULELANG_DEBUG", "") not in ("", "0"):
                raise
            click.echo(f"rulelang: internal error: {type(exc).__name__}: {_first_line(exc)}", err=True)
            ctx.exit(EXIT_INTERNAL)


# --- helpers ------------------------------------------------------------------------------------

def _api():
    """The ``rulelang`` package (imported late: ``python -m rulelang --help`` stays quick)."""
    import rulelang

    return rulelang


def _rule_error_type():
    from rulelang.diagnostics import RuleError

    return RuleError


def _game_error_types() -> tuple:
    """Exceptions that mean "the game failed" (reported in one line, exit 1)."""
    from interpreter.agents import AgentError
    from interpreter.errors import GameError, IllegalAction
    from interpreter.simulate import DecisionLimitExceeded

    return (AgentError, DecisionLimitExceeded, GameError, IllegalAction)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _unreadable(path: str) -> str:
    """Why ``path`` cannot be read as a rule file, or ``""`` if it can (never opens it: a FIFO
    must not block). The one test, shared with the log reader (interpreter/gamelog.py)."""
    from interpreter.gamelog import unreadable

    return unreadable(path)


def _require_file(path: str, what: str = "file") -> None:
    problem = _unreadable(path)
    if problem:
        raise Fail(f"{path}: cannot read {what}: {problem}")


def _root_kw(root) -> dict:
    """``root=`` for the API when ``--root`` was given (else nothing: the API default)."""
    return {"root": root} if root else {}


def _unknown_variants(path: str, diags, from_log: bool = False) -> None:
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


def _load_rules(path: str, variants, root=None, from_log: bool = False) -> object:
    """Load a ruleset; rule errors print their diagnostics on stderr and exit 1."""
    _require_file(path)
    try:
        return _api().load(path, variants=tuple(variants), **_root_kw(root))
    except _rule_error_type() as exc:
        _unknown_variants(path, getattr(exc, "diagnostics", ()), from_log)
        click.echo(exc.render() if hasattr(exc, "render") else str(exc), err=True)
        raise Fail("") from None
    except OSError as exc:
        raise Fail(f"{path}: cannot read file: {exc.strerror or exc}") from None


def _players(ruleset, players):
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


# The log file's format lives in interpreter/gamelog.py (a layer below the command line); these names are
# what the commands here call it by.
def _entry(e) -> dict:
    from interpreter.gamelog import entry

    return entry(e)


def _entries(game) -> list:
    from interpreter.gamelog import entries

    return entries(game)


def _stop_error_types() -> tuple:
    """Exceptions that mean "the rules failed" (as opposed to an agent or the decision limit stopping play)."""
    from interpreter.errors import GameError

    return (GameError,)


def _outcome(game, stopped=None) -> dict:
    from interpreter.gamelog import outcome

    return outcome(game, stopped)


def _state_hash(game) -> str:
    from interpreter.gamelog import state_hash

    return state_hash(game)


def _write_json_atomic(path: str, data) -> None:
    from interpreter.gamelog import write_record

    write_record(path, data)


def _dumps_record(data: dict) -> str:
    from interpreter.gamelog import dumps_record

    return dumps_record(data)


def _jsonable(value):
    from interpreter.gamelog import jsonable

    return jsonable(value)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _seat_list(seats) -> str:
    from interpreter.agents import seat_name

    return ", ".join(seat_name(s) for s in seats)


variant_option = click.option("--variant", "variants", multiple=True, metavar="V",
                              help="Activate a variant declared by the rules (repeatable).")
root_option = click.option("--root", metavar="DIR", type=click.Path(file_okay=False),
                           help="The folder that 'extends' and 'rulebook' paths must stay inside "
                                "(default: 'extends' stays in the rule file's folder).")



@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=None, package_name="rulelang", prog_name="rulelang",
                      message="%(prog)s %(version)s")
def cli():
    """rulelang: check, play, simulate, replay and test board game rule files."""


def main(argv=None):
    """Console entry point (``rulelang = rulelang.cli:main``)."""
    return cli.main(args=argv, prog_name="rulelang")


# --- check --------------------------------------------------------------------------------------

@cli.command()
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@variant_option
@root_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of the diagnostics.")
@click.option("--placeholders", is_flag=True, help="Also list every placeholder component value and placeholder rule.")
@click.option("--explore", type=click.IntRange(min=0), default=0, metavar="N",
              help="Also play N random games per player count, reporting stuck positions, run-time errors "
                   "and games that do not end.")
@click.option("--no-cache", is_flag=True,
              help="Check from scratch, without the cache of earlier checks (see RULELANG_NO_CACHE).")
@click.pass_context
def check(ctx, files, variants, root, as_json, placeholders, explore, no_cache):
    """Check rule files and report their errors and warnings (exit 1 on any error).
    A folder is checked as every *.rules file below it. An unchanged file is answered from the cache
    of earlier checks (~/.cache/rulelang; RULELANG_CACHE_DIR to move it, RULELANG_NO_CACHE=1 to turn it off)."""
    from rulelang import cache

    with cache.using(not no_cache):
        _check_files(ctx, files, variants, root, as_json, placeholders, explore)


def _check_files(ctx, files, variants, root, as_json, placeholders, explore):
    items = []
    failed = False
    for path in _rule_files(files):
        diags, marks = _check_one(path, variants, placeholders, root)
        if explore and not any(d.severity == ERROR for d in diags) and not _unreadable(path):
            from .explore import explore as run_explore

            diags = diags + run_explore(_api().load(path, variants=tuple(variants), **_root_kw(root)), path,
                                        explore, variants=tuple(variants))
        errors = sum(1 for d in diags if d.severity == ERROR)
        failed = failed or errors > 0
        problem = _unreadable(path)
        if problem and not as_json:
            click.echo(f"rulelang: {printable(path)}: cannot read file: {problem}", err=True)
            continue
        if as_json:
            items.extend(d.to_dict() for d in diags)
            items.extend(_placeholder_dict(p) for p in marks)
            continue
        for d in diags:
            click.echo(d.render())
        for p in marks:
            click.echo(f"{p.path}:{p.line}:{p.column}: placeholder: {p.what}")
        parts = [_plural(errors, "error"), _plural(sum(1 for d in diags if d.severity == WARNING), "warning")]
        notes = sum(1 for d in diags if d.severity == NOTE)
        if notes:
            parts.append(_plural(notes, "note"))
        if placeholders and not errors:
            parts.append(_plural(len(marks), "placeholder"))
        click.echo(f"{printable(path)}: {', '.join(parts)}")
    if as_json:
        click.echo(json.dumps(items, indent=2))
    ctx.exit(EXIT_FAIL if failed else 0)


def _rule_files(paths) -> list:
    """The files named on the command line, each folder replaced by the *.rules files below it
    (sorted; a folder without any is a failure)."""
    out = []
    for path in paths:
        if os.path.isdir(path):
            found = _scenario_files(path)
            if not found:
                raise Fail(f"{path}: no .rules files in this folder")
            out.extend(found)
        else:
            out.append(path)
    return out


def _check_one(path, variants, want_placeholders, root=None):
    """(diagnostics, placeholders) of one file.  For an unreadable file the first diagnostic is
    about that (the core's own ``E011``-style one, else an ``E000`` made here) and its
    ``severity`` is an error; ``_unreadable(path)`` tells the caller to print one line instead."""
    try:
        diags = list(_api().check(path, variants=tuple(variants), every_variant=True, **_root_kw(root)))
    except OSError as exc:
        diags = [Diagnostic(path=path, line=1, column=1, code="E000",
                            message=f"cannot read file: {exc.strerror or exc}")]
    problem = _unreadable(path)
    if problem:
        if not any(d.severity == ERROR for d in diags):
            diags = [Diagnostic(path=path, line=1, column=1, code="E000", message=f"cannot read file: {problem}")]
        return diags, []
    marks = []
    _unknown_variants(path, diags)
    if want_placeholders and not any(d.severity == ERROR for d in diags):
        try:
            marks = list(_api().load(path, variants=tuple(variants), **_root_kw(root)).placeholders)
        except _rule_error_type() as exc:  # check said fine but load disagrees: show why
            diags.extend(d for d in exc.diagnostics if d not in diags)
    return diags, marks


def _placeholder_dict(p) -> dict:
    return {"path": p.path, "line": p.line, "column": p.column, "end_line": p.line, "end_column": p.column,
            "code": "placeholder", "severity": NOTE, "message": f"placeholder: {p.what}", "hint": ""}


# --- play ---------------------------------------------------------------------------------------

@cli.command()
@click.argument("file")
@click.option("--players", "-p", type=click.IntRange(min=1), help="Number of players (default: the smallest allowed).")
@click.option("--seed", type=int, default=None,
              help="Game seed, 0 to 2^64-1 (agents are seeded from it). Default: 64 random bits from the system, "
                   "so nobody can guess the hidden cards; the seed used is printed and logged for replay.")
@variant_option
@click.option("--agents", "agents_spec", default="random", show_default=True, metavar="A,B,...",
              help="Agents by seat: random, first, human, mcts[:N] (N playouts per decision), ismcts[:N], "
                   "module:Class[:ARG] (your own, see docs/agents.md); one name applies to every seat.")
@click.option("--chance", type=click.Choice(["sampled", "explicit"]), default=None,
              help="explicit turns every random event into a chance decision, narrated (default: explicit when "
                   "a human plays, sampled otherwise).")
@click.option("--max-decisions", type=click.IntRange(min=1), default=100_000, show_default=True)
@click.option("--log", "log_path", metavar="PATH", help="Write a JSON log of the game (for replay).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object at the end instead of narrating.")
@click.option("--boards", "draw_boards", is_flag=True,
              help="Draw the boards (the whole state) after each decision of a game of bots; a human always "
                   "sees the boards as their seat sees them.")
@root_option
@click.pass_context
def play(ctx, file, players, seed, variants, agents_spec, chance, max_decisions, log_path, as_json, draw_boards, root):
    """Play one game with agents, narrating each decision (a human types help for the commands)."""
    from interpreter.agents import ChanceAgent, agent_seed, make_agent, parse_agent_specs, seat_name
    from interpreter.narrate import Session

    ruleset = _load_rules(file, variants, root)
    players = _players(ruleset, players)
    try:
        names = parse_agent_specs(agents_spec, players)
    except ValueError as exc:
        raise Fail(f"--agents: {exc}", EXIT_USAGE) from None
    if chance is None:  # a person sees each roll and draw as it happens (interpreter/narrate.py)
        chance = "explicit" if "human" in names else "sampled"
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little")
    human_out = sys.stderr if as_json else sys.stdout
    agents = []
    for seat, name in enumerate(names):
        try:
            if name == "human":
                agents.append(make_agent(name, input=sys.stdin, output=human_out))
            else:
                agents.append(make_agent(name, agent_seed(seed, seat)))
        except ValueError as exc:
            raise Fail(f"--agents: {exc}", EXIT_USAGE) from None

    say = (lambda text: None) if as_json else click.echo
    try:
        game = ruleset.new_game(players, seed=seed, chance=chance)
    except _game_error_types() as exc:
        raise Fail(f"game error during setup: {_first_line(exc)}") from None
    say(f"{getattr(ruleset, 'name', file)}: {players} players, seed {seed}"
        + (f", variants {', '.join(variants)}" if variants else ""))
    for e in _entries(game):  # chance events resolved during setup
        say(f"{seat_name(e['player'])}: {e['action']}")

    session = Session(game, agents, chance_agent=ChanceAgent(agent_seed(seed, "chance")),
                      max_decisions=max_decisions, say=say,
                      boards="human" if "human" in names else ("all" if draw_boards else None))
    stopped = None  # the game's own error (the rules failed), or None
    cut = None  # why the game was left unfinished (the decision limit, an agent that could not decide)
    try:
        session.run()
    except _stop_error_types() as exc:
        stopped = _first_line(exc)
    except _game_error_types() as exc:
        cut = _first_line(exc)
    game = session.game  # a new object after an undo

    outcome = _outcome(game, stopped)  # a score, tiebreak or payoff that fails is the game's error too
    error = outcome["error"] or cut
    record = {
        "format": LOG_FORMAT, "version": LOG_VERSION,
        "rules": file, "game": getattr(ruleset, "name", None), "variants": list(variants),
        "players": players, "seed": seed, "chance": chance, "agents": names,
        "log": _entries(game), "decisions": len(game.log),
        "end_reason": outcome["end_reason"], "scores": outcome["scores"], "winners": outcome["winners"],
        "returns": outcome["returns"], "final_sha256": outcome["final_sha256"], "error": error,
    }
    if outcome["unfinished"]:
        record["unfinished"] = True  # `rulelang replay` checks that it is (and the state it stopped in)
    if log_path:
        try:
            _write_json_atomic(log_path, record)
        except OSError as exc:
            raise Fail(f"{log_path}: cannot write log: {exc.strerror or exc}") from None
    if as_json:
        click.echo(json.dumps({k: record[k] for k in (
            "game", "players", "seed", "variants", "scores", "winners", "end_reason", "decisions", "log", "error")},
            default=str))
    if error is not None:
        raise Fail(f"game error after {_plural(len(game.log), 'decision')}: {error}")
    say(f"Game over after {_plural(len(game.log), 'decision')}: {game.end_reason or 'ended'}")
    say("Scores: " + ", ".join(f"{seat_name(s)} {v}" for s, v in enumerate(record["scores"])))
    winners = record["winners"]
    if not winners:
        say("No winner")
    elif len(winners) == 1:
        say(f"Winner: {_seat_list(winners)}")
    else:
        say(f"Winners (shared): {_seat_list(winners)}")
    ctx.exit(0)


# --- graph and show (bodies in rulelang/graph.py and interpreter/render.py) ----------------------

@cli.command("graph")
@click.argument("file")
@variant_option
@root_option
@click.option("--format", "fmt", type=click.Choice(["mermaid", "dot", "svg"]), default="mermaid", show_default=True,
              help="Mermaid text, Graphviz DOT text, or SVG drawn by Graphviz's dot.")
@click.option("--only", multiple=True, type=click.Choice(["flow", "actions", "events"]),
              help="Draw only these parts (repeatable; default: all three).")
@click.option("-o", "--output", "out", metavar="OUT", help="Write the diagram to OUT instead of stdout.")
def graph_command(file, variants, root, fmt, only, out):
    """Draw the structure of a rule file: flow, actions with what they read and change, events, triggers, endings."""
    from .graph import run_command

    text = run_command(file, variants, root, fmt, only, out)
    if text:
        click.echo(text, nl=False)


@cli.command("show")
@click.argument("file")
@click.option("--state", "state_path", required=True, metavar="SAVE.json",
              help="A saved game (the text of Game.to_json()), or a log written by play --log (replayed).")
@click.option("--seat", type=click.IntRange(min=0), default=None,
              help="Draw what this seat may see (default: the whole state the save holds).")
@variant_option
@root_option
@click.option("-o", "--output", "out", metavar="OUT", help="Write the SVG to OUT instead of stdout.")
def show_command(file, state_path, seat, variants, root, out):
    """Draw every board of a saved game as SVG."""
    from .show_cmd import run_show

    text = run_show(file, state_path, seat, variants, root, out)
    if text:
        click.echo(text, nl=False)


# --- replay -------------------------------------------------------------------------------------

def _same_error(got: str, recorded: str) -> bool:
    from interpreter.gamelog import same_error

    return same_error(got, recorded)


def _read_log(path: str) -> dict:
    """A log file written by ``play --log``, checked (interpreter/gamelog.py): every problem is a one-line ``Fail``."""
    from interpreter.gamelog import LogError, read_log

    try:
        return read_log(path)
    except LogError as exc:
        raise Fail(str(exc)) from None


@cli.command()
@click.argument("file")
@click.argument("log_file", metavar="LOG")
@root_option
@click.pass_context
def replay(ctx, file, log_file, root):
    """Re-play a game log made by `play --log` and verify it decision by decision."""
    from interpreter.agents import seat_name

    data = _read_log(log_file)
    ruleset = _load_rules(file, data["variants"], root, from_log=True)
    name = getattr(ruleset, "name", None)
    if data.get("game") and name and data["game"] != name:
        raise Fail(f"{log_file}: the log is of game '{data['game']}' but {file} is '{name}'")
    errors = _game_error_types()
    finding = _recorded_finding(data)  # a log written by `rulelang validate`: its finding must show again
    try:
        game = ruleset.new_game(data["players"], seed=data["seed"], chance=data.get("chance") or "sampled")
    except errors as exc:
        _confirmed(finding, exc, 0, ctx)
        raise Fail(f"replay failed at setup: {_first_line(exc)}") from None
    recorded = data["log"]
    reproduced = 0  # the decision at which the error the log records happened again
    stopped = None  # that error
    for k, entry in enumerate(recorded):
        step = f"decision {k + 1} ({seat_name(entry['player'])}: {entry['action']})"
        if len(game.log) > k:  # the game resolved this (chance) event itself
            have = _entry(game.log[k])  # one entry, not the whole log again: a long log replays in linear time
            if have != entry:
                raise Fail(f"replay diverged at {step}: the game took {have['action']} instead")
            continue
        if game.is_over():
            raise Fail(f"replay failed at {step}: the game is already over")
        if entry["player"] != game.current_player:
            raise Fail(f"replay failed at {step}: it is {seat_name(game.current_player)}'s decision")
        try:
            game.apply(entry["action"])
        except errors as exc:
            if k == len(recorded) - 1:
                _confirmed(finding, exc, len(recorded), ctx)  # a `validate` finding, shown again: exits 0
                if data.get("error") and game.error is not None:
                    if _same_error(_first_line(exc), data["error"]):  # the recorded error, reproduced
                        reproduced = k + 1
                        stopped = _first_line(exc)
                        continue
                    raise Fail(f"replay diverged at {step}: the game stopped with another error: {_first_line(exc)}")
            raise Fail(f"replay failed at {step}: {_first_line(exc)}") from None
        if len(game.log) <= k or _entry(game.log[k]) != entry:
            raise Fail(f"replay diverged at {step}: the game recorded it differently")
    have = _entries(game)
    if len(have) > len(recorded):  # chance events the game resolved after the last recorded decision
        if have[:len(recorded)] != recorded:
            raise Fail(f"replay diverged: the game log has {len(game.log)} decisions, the file {len(recorded)}")
    elif have != recorded:
        raise Fail(f"replay diverged: the game log has {len(game.log)} decisions, the file {len(recorded)}")
    if finding is not None:
        _confirmed(finding, game, len(recorded), ctx)
        raise Fail(f"replay: the recorded finding does not show again ({finding.code}: {finding.message})")
    got = _outcome(game, stopped)
    _compare_outcome(data, got, game, log_file)
    verified = ", final state verified" if data.get("final_sha256") else ""
    if got["unfinished"] and data.get("error"):  # stopped by what the log records (a limit, a finding)
        click.echo(f"OK: {_plural(len(recorded), 'decision')} replayed{verified}")
        click.echo(f"note: the recorded game stopped with an error: {data['error']}")
    elif got["unfinished"]:
        click.echo(f"OK: {_plural(len(recorded), 'decision')} replayed{verified}; the game is unfinished, as the "
                   f"log says (it is {seat_name(game.current_player)}'s decision)")
    elif stopped is not None:
        click.echo(f"OK: {_plural(len(recorded), 'decision')} replayed{verified}")
        click.echo(f"note: the recorded game stopped with an error, reproduced at decision {reproduced}: "
                   f"{data['error']}")
    else:
        click.echo(f"OK: {_plural(len(recorded), 'decision')} replayed{verified}")
        if got["error"] is not None:
            click.echo(f"note: the recorded game ended ({got['end_reason']}), then failed as it records: "
                       f"{data['error']}")
    ctx.exit(0)


_OUTCOME_KEYS = ("end_reason", "decisions", "scores", "winners", "returns", "final_sha256")


def _shown(value) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True, default=str)  # (true is not 1 here, as it would be in Python)


def _compare_outcome(data, got, game, log_file) -> None:
    """Every outcome the log records must be the one the replay reproduced: a one-line ``Fail`` naming the
    first that is not. A field left out (or null) claims nothing, but the end must be verified: by the
    final state's hash, or by the error the game stopped with happening again."""
    from interpreter.agents import seat_name

    said = data.get("error")
    if got["unfinished"]:
        if data.get("unfinished") is not True:
            if said:
                raise Fail(f"replay diverged: the log records the error \"{_short(said)}\", but the game did not "
                           f"stop with an error: after {_plural(len(game.log), 'decision')} it is "
                           f"{seat_name(game.current_player)}'s decision")
            raise Fail(f"{log_file}: the log is short: it ends after {_plural(len(data['log']), 'decision')}, "
                       f"before the game does (it is {seat_name(game.current_player)}'s decision)")
    else:
        if data.get("unfinished") not in (None, False):
            raise Fail("replay diverged: the log says the game is unfinished, but it "
                       + (f"ended ({got['end_reason']})" if got["error"] is None else "stopped with an error"))
        if got["error"] is not None and not said:
            raise Fail(f"replay diverged: the game fails at its end, but the log records no error: {got['error']}")
        if got["error"] is None and said:
            raise Fail(f"replay diverged: the log records the error \"{_short(said)}\", but the game ended "
                       f"without one ({got['end_reason']})")
        if got["error"] is not None and not _same_error(got["error"], said):
            raise Fail(f"replay diverged: the game fails at its end with another error: {got['error']}")
    got = dict(got, decisions=len(game.log))
    for key in _OUTCOME_KEYS:
        if key not in data or (data[key] is None and key != "winners"):
            continue  # no claim
        if _canonical(data[key]) != _canonical(got[key]):
            if key == "final_sha256":
                raise Fail("replay diverged: the final state differs from the recorded one")
            raise Fail(f"replay diverged: the log records {key} {_shown(data[key])}, the replay gives "
                       f"{_shown(got[key])}")
    if not got["unfinished"] and got["error"] is None and not data.get("final_sha256"):
        raise Fail(f"{log_file}: replay could not verify the end: the log has no final state hash (final_sha256)")


def _short(text: str) -> str:
    return printable(text if len(text) <= 80 else text[:77] + "...")


def _recorded_finding(data):
    """The finding a log written by `rulelang validate` records (its "finding" field), or None."""
    if "finding" not in data:
        return None
    from interpreter.validate import finding_from_record

    found = finding_from_record(data)
    if found is None:
        raise Fail("the log's finding is not {\"kind\": ..., \"path\": ..., \"line\": ..., \"message\": ...}")
    return found


def _confirmed(finding, game_or_exc, decisions, ctx):
    """Exit 0 saying so when the replayed game (or the error it stopped with) shows the recorded finding."""
    if finding is None:
        return
    from interpreter.validate import confirm

    if confirm(finding, game_or_exc):
        click.echo(f"OK: {_plural(decisions, 'decision')} replayed; the finding shows again: "
                   f"{printable(finding.path)}:{finding.line}:{finding.column}: {finding.code}: {printable(finding.message)}")
        ctx.exit(0)


# --- simulate -----------------------------------------------------------------------------------

@cli.command()
@click.argument("file")
@click.option("--players", "-p", type=click.IntRange(min=1), help="Number of players (default: the smallest allowed).")
@click.option("--games", "-n", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--workers", "-w", default="1", show_default=True, metavar="W",
              help="Worker processes (1 to 64).")
@variant_option
@click.option("--max-decisions", type=click.IntRange(min=1), default=100_000, show_default=True)
@click.option("--agents", "agents_spec", default="random", show_default=True, metavar="A,B,...",
              help="Agents by seat (one applies to every seat), e.g. random or random,first.")
@click.option("--out", "out", metavar="FILE",
              help="Also write one row per game to FILE: .jsonl, .csv or .parquet (see docs/results.md).")
@click.option("--format", "out_format", type=click.Choice(["jsonl", "csv", "parquet"], case_sensitive=False),
              help="The format of --out (default: from its extension).")
@click.option("--scheduler", metavar="ADDRESS",
              help="Run on Dask: tcp://HOST:PORT (a running scheduler) or local:N (start N local workers); "
                   "needs rulelang[dask].")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.option("--coverage", is_flag=True,
              help="Also count which cited rulebook sections the games exercised, and print the table "
                   "(the games run in this process).")
@root_option
@click.pass_context
def simulate(ctx, file, players, games, seed, workers, variants, max_decisions, agents_spec, out, out_format,
             scheduler, as_json, root, coverage):
    """Play many games between agents (random by default) and summarise them (exit 1 if any game failed)."""
    from interpreter.runner import MAX_WORKERS, RunnerError, check_agents, check_seeds, check_workers, parse_scheduler
    from interpreter.simulate import simulate as run
    from rulelang.progress import progress_bar

    try:
        workers = check_workers(int(workers))
    except ValueError:
        shown = workers if len(workers) <= 24 else workers[:20] + "..."
        raise Fail(f"--workers {shown!r}: give a whole number of worker processes from 1 to {MAX_WORKERS}",
                   EXIT_USAGE) from None
    if coverage and (workers > 1 or scheduler):
        raise Fail("--coverage counts in this process: leave out --workers and --scheduler", EXIT_USAGE)
    if scheduler is not None:
        if workers > 1:
            raise Fail("--workers and --scheduler: give one (the Dask workers are the scheduler's)", EXIT_USAGE)
        try:
            parse_scheduler(scheduler)
        except ValueError as exc:
            raise Fail(f"--{exc}", EXIT_USAGE) from None
    try:
        check_seeds(seed, games)
    except ValueError as exc:
        raise Fail(f"--seed {seed}: {exc}", EXIT_USAGE) from None
    _check_out(out, out_format)
    ruleset = _load_rules(file, variants, root)
    players = _players(ruleset, players)
    agents = _agent_specs(agents_spec, players, check_agents)
    cov = None
    if coverage:
        from interpreter.coverage import Coverage
        from interpreter.runtime import Located

        try:
            cov = Coverage(ruleset)
        except RecursionError:
            raise Fail(f"{file}: the rules are nested too deeply to count coverage") from None
        except Located as exc:  # the rules as checked (before the optimiser) failed to compile
            raise Fail(f"{exc.span.where() if exc.span else file}: {exc.message}") from None
        ruleset = cov.ruleset
    try:
        import functools

        loader = functools.partial(_api().load, root=root) if root else None
        with progress_bar(games, enabled=not as_json, label="simulating") as bar:
            summary = run(file, players, games, seed=seed, workers=workers, variants=tuple(variants),
                          max_decisions=max_decisions, ruleset=ruleset, progress=bar, loader=loader,
                          agents=agents, scheduler=scheduler, out=out, out_format=out_format)
    except RunnerError as exc:
        raise Fail(str(exc)) from None
    except OSError as exc:  # writing --out
        raise Fail(f"{out}: cannot write the rows: {exc.strerror or exc}") from None
    summary["rules"] = file
    if cov is not None:
        summary["coverage"] = cov.to_dict()
    if as_json:
        click.echo(json.dumps(summary, default=str))
    else:
        _print_summary(summary)
        if cov is not None:
            from rich.console import Console as _Console

            cov.render(_Console(file=sys.stdout, highlight=False, soft_wrap=False))
        if out is not None:
            click.echo(f"{_plural(summary['games'], 'row')} written to {printable(out)}")
    ctx.exit(EXIT_FAIL if summary["errors"] else 0)


def _check_out(out, out_format) -> None:
    """--out and --format, checked before anything runs (interpreter/results.py)."""
    if out is None:
        if out_format is not None:
            raise Fail("--format is the format of --out: give --out FILE too", EXIT_USAGE)
        return
    from interpreter.results import MissingDependency, OutputError, check_target, output_format

    try:
        check_target(out)
        output_format(out, out_format)
    except MissingDependency as exc:
        raise Fail(str(exc)) from None
    except OutputError as exc:
        raise Fail(f"--out {exc}", EXIT_USAGE) from None


def _agent_specs(text: str, players: int, check) -> tuple:
    """The agent spec of each seat from ``--agents`` (checked: a usage error names the problem)."""
    from interpreter.agents import parse_agent_specs

    try:
        return check(parse_agent_specs(text, players), players)
    except ValueError as exc:
        raise Fail(f"--agents: {_first_line(exc)}", EXIT_USAGE) from None


def _print_summary(s: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    from interpreter.agents import seat_name

    out = Console(file=sys.stdout, highlight=False, soft_wrap=False)
    title = f"{s.get('game') or s.get('rules')}: {s['games']} games, {s['players']} players, seed {s['seed']}"
    agents = s.get("agents") or []
    if agents and any(a != "random" for a in agents):
        title += f", agents {','.join(agents)}"
    click.echo(title)
    overview = Table(show_header=False)
    overview.add_column("what")
    overview.add_column("value", justify="right")
    overview.add_row("completed", str(s["completed"]))
    overview.add_row("errors", str(s["errors"]))
    overview.add_row("mean decisions", f"{s['mean_decisions']:.1f}")
    if s.get("mean_rounds") is not None:
        overview.add_row("mean rounds", f"{s['mean_rounds']:.1f}")
    if s.get("mean_branching") is not None:
        overview.add_row("mean legal actions", f"{s['mean_branching']:.1f}")
    overview.add_row("draws", f"{s['draws']} ({100 * s.get('draw_rate', 0.0):.1f}%)")
    overview.add_row("shared wins", str(s.get("shared_win_games", 0)))
    overview.add_row("seconds", f"{s['seconds']:.2f}")
    out.print(overview)

    seats = Table(title="by seat", title_justify="left",
                  caption="win rate: sole wins / completed games (draws and shared wins apart)", caption_justify="left")
    seats.add_column("seat")
    seats.add_column("win rate", justify="right")
    seats.add_column("shared wins", justify="right")
    seats.add_column("mean score", justify="right")
    shared = s.get("shared_wins") or [0] * len(s["win_rate"])
    for i, (w, m) in enumerate(zip(s["win_rate"], s["mean_score"])):
        seats.add_row(seat_name(i), f"{100 * w:.1f}%", str(shared[i]), f"{m:.2f}")
    out.print(seats)

    if s["ended_by"]:
        ends = Table(title="ended by", title_justify="left")
        ends.add_column("end condition")
        ends.add_column("games", justify="right")
        for reason, count in s["ended_by"].items():
            ends.add_row(reason, str(count))
        out.print(ends)
    if s["errors"]:
        click.echo(f"{_plural(s['errors'], 'game')} failed; first errors (replay one with `rulelang play --seed SEED`):")
    for ex in s.get("error_examples", []):
        click.echo(f"  game {ex['game']} (seed {ex['seed']}): {ex['message']}")


# --- compare (the body is in rulelang/compare_cmd.py) --------------------------------------------

@cli.command()
@click.argument("file")
@variant_option
@click.option("--against", metavar="FILE2", help="Compare FILE with this rule file (e.g. a house-rule file extending it).")
@click.option("--restrict", metavar="ACTION",
              help="Compare with the same games where seat i % players of game i never takes ACTION.")
@click.option("--players", "-p", type=click.IntRange(min=1), help="Number of players (default: the smallest allowed).")
@click.option("--games", "-n", type=click.IntRange(min=1, max=100_000), default=200, show_default=True,
              help="Games on each side (at most 100,000).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--agents", default="random", show_default=True, metavar="A[,A...]",
              help="The agents: one for every seat, or one per seat.")
@click.option("--workers", "-w", default="1", show_default=True, metavar="W", help="Worker processes (1 to 64).")
@click.option("--scheduler", metavar="ADDRESS", help="Run the games on a Dask cluster (tcp://HOST:PORT or local:N).")
@click.option("--max-decisions", type=click.IntRange(min=1), default=100_000, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as one JSON object (no report unless --html).")
@click.option("--html", metavar="REPORT.html", help="Where to write the HTML report (default: compare-report.html).")
@click.option("--no-html", is_flag=True, help="Write no HTML report.")
@click.option("--out", metavar="ROWS", help="Also write every game's row (both sides; .jsonl, .csv or .parquet).")
@root_option
@click.pass_context
def compare(ctx, file, variants, against, restrict, players, games, seed, agents, workers, scheduler,
            max_decisions, as_json, html, no_html, out, root):
    """Play the same seeds under two rule sets and compare them, with tests of significance:
    FILE without and with --variant, FILE against FILE2, or FILE with a seat restricted.
    Prints a summary and writes an HTML report (see docs/analysis.md)."""
    from rulelang import compare_cmd

    compare_cmd.run(ctx, file=file, variants=variants, against=against, players=players, games=games, seed=seed,
                    agents=agents, restrict=restrict, workers=workers, scheduler=scheduler, as_json=as_json,
                    html=html, no_html=no_html, out=out, max_decisions=max_decisions, root=root)


# --- validate -----------------------------------------------------------------------------------

@cli.command("validate")
@click.argument("file")
@click.option("--players", "-p", "player_counts", type=click.IntRange(min=1), multiple=True, metavar="N",
              help="A player count to play (repeatable; default: every allowed count).")
@variant_option
@click.option("--games", "-n", type=click.IntRange(min=1, max=1_000_000), default=20, show_default=True,
              help="Random games per player count.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--max-decisions", type=click.IntRange(min=1), default=20_000, show_default=True,
              help="A game not over after this many decisions (chance steps included) is a finding (E603).")
@click.option("--chance", type=click.Choice(["explicit", "sampled"]), default="explicit", show_default=True,
              help="explicit: every chance step is a decision, after which the invariants are checked too.")
@click.option("--exhaustive", is_flag=True, help="Also enumerate every reachable state (small games), up to --max-states.")
@click.option("--max-states", type=click.IntRange(min=1, max=100_000_000), default=1_000_000, show_default=True,
              help="The most distinct states --exhaustive visits per player count.")
@click.option("--out", "out_dir", default="rulelang-findings", show_default=True, metavar="DIR",
              help="Where the log (for `rulelang replay`) and the scenario of each finding are written.")
@click.option("--no-shrink", is_flag=True, help="Write the whole decision log of each finding, unshrunk.")
@click.option("--no-coverage", is_flag=True, help="Do not collect or print the rulebook coverage table.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (findings, summaries, coverage).")
@root_option
@click.pass_context
def validate_command(ctx, file, player_counts, variants, games, seed, max_decisions, chance, exhaustive, max_states,
                     out_dir, no_shrink, no_coverage, as_json, root):
    """Play random games checking the invariants after every decision and chance step; report run-time
    rule errors, stuck positions, games that do not end and invariant violations, each with a log that
    `rulelang replay` confirms (exit 1 if anything was found)."""
    from interpreter import validate as V
    from rulelang.progress import progress_bar

    ruleset = _load_rules(file, variants, root)
    counts = [_players(ruleset, n) for n in player_counts] or list(ruleset.player_counts)
    counts = list(dict.fromkeys(counts))
    last = (1 << 64) - 1
    if seed * 1_000_003 + games - 1 > last:  # the game seeds (interpreter.simulate.game_seed) must be seeds
        raise Fail(f"--seed {seed} is too large: with --games {games} the game seeds would pass 2^64-1 "
                   f"(the largest --seed is {(last - games + 1) // 1_000_003:,})", EXIT_USAGE)
    # the bar only on a terminal (stdout and stderr): never control codes in a pipe or a file, even when
    # the environment asks rich for colours (FORCE_COLOR)
    terminal = all(V._isatty(stream) for stream in (sys.stdout, sys.stderr))
    with progress_bar(games * len(counts), enabled=not as_json and terminal, label="validating") as bar:
        report = V.validate(ruleset, file, players=counts, games=games, seed=seed, variants=tuple(variants),
                            max_decisions=max_decisions, chance=chance, progress=bar,
                            coverage=not no_coverage, shrinking=not no_shrink,
                            exhaustive_states=max_states if exhaustive else None)
    if report.findings:
        try:
            V.write_files(ruleset, file, report, out_dir, _write_json_atomic)
        except OSError as exc:
            report.notes.append(f"{out_dir}: cannot write the logs of the findings: {exc.strerror or exc}")
    if as_json:
        click.echo(json.dumps(report.to_dict(), default=str))
    else:
        V.print_report(report, getattr(ruleset.program, "sources", {}), click.echo, variants=tuple(variants))
    ctx.exit(EXIT_FAIL if report.findings else 0)


# --- test ---------------------------------------------------------------------------------------

def _scenario_files(path: str) -> list:
    """A file as it is; a folder as the *.rules files below it, not following symbolic links out of it."""
    if os.path.isdir(path):
        from .folders import files_below

        found, outside = files_below(path, lambda name: name.endswith(".rules"))
        for f in outside:
            click.echo(f"rulelang: {printable(f)}: skipped: a symbolic link to a file outside {printable(path)}",
                       err=True)
        return found
    return [path]


@cli.command("test")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.pass_context
def test_command(ctx, paths):
    """Run the scenarios of rule files (directories are searched for *.rules)."""
    try:
        from interpreter import scenarios
    except ImportError as exc:
        raise Fail(f"the scenario runner is not available: {exc}") from None
    rule_error = _rule_error_type()
    game_errors = _game_error_types()
    passed = failed = 0
    missing = []
    for top in paths:
        problem = "" if os.path.isdir(top) else _unreadable(top)
        if problem:  # a file error, not a failing scenario
            click.echo(f"rulelang: {printable(top)}: cannot read file: {problem}", err=True)
            missing.append(top)
            continue
        for path in _scenario_files(top):
            try:
                results = list(scenarios.run_path(path))
            except rule_error as exc:
                click.echo(exc.render() if hasattr(exc, "render") else str(exc))
                click.echo(f"FAIL {path}: the rules have errors")
                failed += 1
                continue
            except game_errors as exc:
                click.echo(f"FAIL {path}: {_first_line(exc)}")
                failed += 1
                continue
            except OSError as exc:
                click.echo(f"FAIL {path}: cannot read file: {exc.strerror or exc}")
                failed += 1
                continue
            for r in results:
                if r.passed:
                    passed += 1
                    click.echo(f"PASS {r.name}")
                else:
                    failed += 1
                    lines = r.message.splitlines() or [""]
                    if len(lines) == 1:
                        click.echo(f"FAIL {r.path}:{r.line} {r.name}: {lines[0]}")
                    else:  # every failure of the scenario, one a line, in the order met
                        click.echo(f"FAIL {r.path}:{r.line} {r.name}: {len(lines)} failures")
                        for line in lines:
                            click.echo(f"  {line}")
    if missing and passed + failed == 0:
        raise Fail("")
    click.echo(f"{passed} passed, {failed} failed")
    if passed + failed == 0:
        raise Fail("no scenarios found")
    ctx.exit(EXIT_FAIL if failed or missing else 0)


# --- explore-all (exhaustive mode; `validate --exhaustive` will call the same explore_all) ------------

@cli.command("explore-all")
@click.argument("file")
@click.option("--players", "-p", type=click.IntRange(min=1), help="Number of players (default: the smallest allowed).")
@click.option("--max-states", type=click.IntRange(min=1, max=10_000_000), default=100_000, show_default=True,
              help="Stop (and say incomplete) after this many distinct positions.")
@click.option("--max-seconds", type=click.FloatRange(min=0.1, max=86_400), default=600.0, show_default=True)
@variant_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@root_option
@click.pass_context
def explore_all_command(ctx, file, players, max_states, max_seconds, variants, as_json, root):
    """Enumerate every reachable state of a small game (chance expanded): distinct positions, game-tree
    nodes, run-time errors, stuck positions and cycles."""
    from interpreter.exhaustive import explore_all

    ruleset = _load_rules(file, variants, root)
    players = _players(ruleset, players)
    r = explore_all(ruleset, players, max_states, max_seconds=max_seconds)
    if as_json:
        click.echo(json.dumps(r, default=str))
    else:
        done = "complete" if r["complete"] else f"incomplete: stopped at the {r['reason']} bound"
        nodes = f"{r['nodes']:,}" if r["nodes"] is not None else ("infinite (a cycle)" if r["cyclic"] else "unknown")
        click.echo(f"{getattr(ruleset, 'name', file)}, {players} players: {r['positions']:,} positions, {nodes} tree "
                   f"nodes ({r['terminal_positions']:,} terminal, {r['chance_positions']:,} chance), {done}")
        for f in r["findings"]:
            path = ",".join(e["action"] for e in f["log"])
            click.echo(f"{f['kind']}: {f['message']} ({_plural(f['count'], 'time')}; first after: {path or 'setup'})")
    ctx.exit(EXIT_FAIL if r["findings"] else 0)


# --- serve (rulelang/web, the `web` extra) -------------------------------------------------------

@cli.command()
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--db", default="games.sqlite", show_default=True, metavar="PATH",
              help="The SQLite database of the tables (created if missing; a restart resumes every game).")
@click.option("--workers", type=click.IntRange(1, 32), default=2, show_default=True,
              help="Worker processes running the rules (each with time and memory limits).")
@click.option("--agent", "agents", multiple=True, metavar="SPEC",
              help="Also offer this bot (e.g. my_bots:Greedy, imported by the server); repeatable. Off by default.")
def serve(files, host, port, db, workers, agents):
    """Play the rule files in the browser, people and bots at one table, and edit rules (docs/web.md)."""
    from rulelang.web.command import run_serve

    run_serve(files, host, port, db, workers, load=_load_rules, fail=Fail, agents=agents)


# --- lsp (the language server: rulelang/lsp.py; needs the optional extra `lsp`) ----------------------

@cli.command("lsp")
@click.option("--stdio", is_flag=True, help="Talk over standard input and output (the default and only way; "
                                            "accepted because editors pass it).")
def lsp_command(stdio):
    """Run the language server for editors (Language Server Protocol over stdin/stdout): diagnostics as
    you type, hover, go to definition, references, rename, completion, outline. See docs/authoring.md."""
    try:
        from rulelang.lsp import serve
    except ImportError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing not in ("pygls", "lsprotocol", "cattrs"):
            raise
        raise Fail("the language server needs the optional extra 'lsp': pip install 'rulelang[lsp]' "
                   f"({missing} is not installed)") from None
    serve()


# --- fmt (the body is rulelang/fmt.py) ---------------------------------------------------------------

@cli.command("fmt")
@click.argument("paths", nargs=-1, required=True, metavar="FILE_OR_DIR...")
@click.option("--check", is_flag=True, help="Change nothing; list the files that would change (exit 1 if any).")
@click.option("--diff", "show_diff", is_flag=True, help="Change nothing; print what would change as a unified diff.")
@click.pass_context
def fmt_command(ctx, paths, check, show_diff):
    """Rewrite rule files (and the ```rules blocks of Markdown files) in the one canonical layout, keeping
    every comment. A folder means every *.rules and *.md file below it, except those excluded by
    [tool.rulelang.fmt] in pyproject.toml. A file with a syntax error is reported and left unchanged."""
    from rulelang.fmt import run

    ctx.exit(run(paths, check=check, show_diff=show_diff, echo=click.echo,
                 echo_err=lambda message: click.echo(message, err=True)))

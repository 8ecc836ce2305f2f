"""``rulelang compare``: the same seeds under two rule sets, compared with tests of significance.

Three ways to make the two sides, always with the same seeds (game ``i`` of both sides has the game
seed ``game_seed(seed, i)``):

* ``--variant V ...``: A is the file without variants, B the file with them;
* ``--against FILE2``: A is FILE, B is FILE2 (say a house-rule file that ``extends`` FILE), both with
  the ``--variant``\\s given;
* ``--restrict ACTION``: A is FILE, B the same games with seat ``i % players`` of game ``i`` never
  taking ACTION (restricted play).

The games run through ``interpreter.runner.run_games``; ``interpreter.compare.compare`` makes the
statistics, ``interpreter.report`` the terminal tables and the HTML report.
"""
from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any, Iterable

import click

from .common import EXIT_FAIL, EXIT_USAGE, Fail, first_line, load_rules, native_note, native_option, parse_workers, player_count, root_option, variant_option

if TYPE_CHECKING:
    from interpreter.ruleset import Ruleset

DEFAULT_REPORT = "compare-report.html"
MAX_SEED = 2 ** 64 - 1  # a game seed (see Ruleset.new_game)


@click.command("compare")
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
@native_option
@click.pass_context
def command(ctx: click.Context, file: str, variants: tuple[str, ...], against: str | None, restrict: str | None,
            players: int | None, games: int, seed: int, agents: str, workers: str, scheduler: str | None,
            max_decisions: int, as_json: bool, html: str | None, no_html: bool, out: str | None,
            root: str | None) -> None:
    """Play the same seeds under two rule sets and compare them, with tests of significance:
    FILE without and with --variant, FILE against FILE2, or FILE with a seat restricted.
    Prints a summary and writes an HTML report (see docs/analysis.md)."""
    run(ctx, file=file, variants=variants, against=against, players=players, games=games, seed=seed,
        agents=agents, restrict=restrict, workers=workers, scheduler=scheduler, as_json=as_json,
        html=html, no_html=no_html, out=out, max_decisions=max_decisions, root=root)


def _writable(path: str, what: str) -> None:
    """Fail now (before any game is played) if ``path`` cannot be written."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise Fail(f"{path}: cannot write the {what}: is a directory")
    if not os.path.isdir(folder):
        raise Fail(f"{path}: cannot write the {what}: no such folder {folder}")
    if not os.access(folder, os.W_OK):
        raise Fail(f"{path}: cannot write the {what}: permission denied")


def _agents(text: str, players: int) -> tuple[str, ...]:
    """The agent specs for the runner: one per seat, or one for every seat."""
    specs = tuple(s.strip() for s in (text or "random").split(","))
    if any(not s for s in specs):
        raise Fail(f"--agents {text!r}: give agent names separated by commas, e.g. random or mcts:400,random",
                   EXIT_USAGE)
    if len(specs) not in (1, players):
        raise Fail(f"--agents {text!r}: give one agent for every seat, or {players} (one per seat), "
                   f"not {len(specs)}", EXIT_USAGE)
    try:  # the agents branch checks every spec (random, mcts:400, module:Class)
        from interpreter.agents import parse_agent_specs
    except ImportError:
        return specs
    try:
        parse_agent_specs(",".join(specs), players)
    except (ValueError, ImportError) as exc:
        raise Fail(f"--agents {text!r}: {first_line(exc)}", EXIT_USAGE) from None
    return specs


def _action_names(ruleset: Ruleset) -> list[str]:
    actions = getattr(ruleset, "actions", None)
    return sorted(actions) if isinstance(actions, dict) else []


def _label(path: str, variants: Iterable[str]) -> str:
    from rulelang.diagnostics import printable

    base = printable(os.path.basename(path))  # a file name that is not valid text stays writable
    return base + "".join(f" +{v}" for v in variants)


def run(ctx: click.Context, *, file: str, variants: Iterable[str], against: str | None, players: int | None,
        games: int, seed: int, agents: str, restrict: str | None, workers: str, scheduler: str | None,
        as_json: bool, html: str | None, no_html: bool, out: str | None, max_decisions: int,
        root: str | None) -> None:
    """``rulelang compare``: play both sides, print the summary, write the report and the rows."""
    from interpreter.compare import MissingAnalysis, compare, require_analysis
    from interpreter.simulate import WorkerError

    variants = tuple(variants)
    if against and restrict:
        raise Fail("give --against FILE2 or --restrict ACTION, not both", EXIT_USAGE)
    if not (variants or against or restrict):
        raise Fail("say what to compare with: --variant V (the file with a variant), --against FILE2 "
                   "(another rule file) or --restrict ACTION (a seat that never takes ACTION)", EXIT_USAGE)
    if html and no_html:
        raise Fail("give --html PATH or --no-html, not both", EXIT_USAGE)
    worker_count = parse_workers(workers)
    from interpreter.simulate import game_seed

    if game_seed(seed, games - 1) > MAX_SEED:
        raise Fail(f"--seed {seed}: too large: the games' seeds (seed * 1,000,003 + game) must stay below 2^64",
                   EXIT_USAGE)
    try:
        require_analysis()
    except MissingAnalysis as exc:
        raise Fail(f"compare: {exc}") from None
    report = html or (None if (no_html or as_json) else DEFAULT_REPORT)
    if report:
        try:
            from interpreter.report import _plotly

            _plotly()
        except MissingAnalysis as exc:
            if html:
                raise Fail(f"--html: {exc}") from None
            click.echo(f"rulelang: no HTML report: {exc}", err=True)
            report = None
    if report:
        _writable(report, "report")
    if out:
        _writable(out, "rows")

    if against:
        rules_a = load_rules(file, variants, root)
        rules_b = load_rules(against, variants, root)
        label_a, label_b = _label(file, variants), _label(against, variants)
        if label_a == label_b:
            label_a, label_b = f"A: {label_a}", f"B: {label_b}"
    elif restrict:
        rules_a = rules_b = load_rules(file, variants, root)
        names = _action_names(rules_a)
        if names and restrict not in names:
            raise Fail(f"--restrict {restrict!r}: {file} has no such action (its actions: {', '.join(names)})",
                       EXIT_USAGE)
        label_a, label_b = "unrestricted", f"without {restrict}"
    else:
        rules_a = load_rules(file, (), root)
        rules_b = load_rules(file, variants, root)
        label_a, label_b = "base", " + ".join(variants)
    native_note(rules_a)
    if rules_b is not rules_a:
        native_note(rules_b)
    players = player_count(rules_a, players)
    player_count(rules_b, players)
    specs = _agents(agents, players)

    from rich.console import Console

    from interpreter.runner import run_games
    from rulelang.progress import progress_bar

    show = Console(stderr=True).is_terminal and not as_json
    common = dict(players=players, games=games, seed=seed, agents=specs, max_decisions=max_decisions,
                  workers=worker_count, scheduler=scheduler)
    try:
        with progress_bar(2 * games, show) as update:
            rows_a = run_games(rules_a, rules=file, variants=() if not (against or restrict) else variants,
                               progress=lambda done, total: update(done, 2 * games), **common)
            rows_b = run_games(rules_b, rules=against or file, variants=variants,
                               restrict=restrict or None,
                               progress=lambda done, total: update(games + done, 2 * games), **common)
    except (ValueError, ImportError, WorkerError) as exc:
        raise Fail(first_line(exc)) from None
    except OSError as exc:  # a scheduler that cannot be reached, say
        raise Fail(f"could not run the games: {exc.strerror or first_line(exc)}") from None

    comparison = compare(rows_a, rows_b, labels=(label_a, label_b), players=players,
                         max_decisions=max_decisions, restrict=restrict or None)
    comparison.update(
        game=getattr(rules_a, "name", None),
        rules=[file, against or file],
        variants=[list(() if not (against or restrict) else variants), list(variants)],
        games=games,
        seed=seed,
        agents=list(specs),
        max_decisions=max_decisions,
        report=report,
        rows=out,
    )
    import shlex

    from rulelang.diagnostics import printable

    command_line = printable("rulelang compare " + " ".join(shlex.quote(a) for a in sys.argv[2:])) \
        if len(sys.argv) > 1 and sys.argv[1] == "compare" else None
    if report:
        from interpreter.report import write_report

        title = f"{comparison['game'] or file}: {label_a} vs {label_b}"
        try:
            write_report(comparison, report, title=title, command=command_line)
        except OSError as exc:
            raise Fail(f"{report}: cannot write the report: {exc.strerror or exc}") from None
    if out:
        from interpreter.results import write_rows

        rows = [dict(r, side="A") for r in rows_a] + [dict(r, side="B") for r in rows_b]
        try:
            write_rows(rows, out, extra=("side",))
        except (OSError, ValueError) as exc:
            raise Fail(f"{out}: cannot write the rows: {getattr(exc, 'strerror', None) or first_line(exc)}") \
                from None

    if as_json:
        click.echo(json.dumps(comparison, default=str))
    else:
        _print(comparison)
    failed = sum(s["games"] - s["completed"] for s in comparison["sides"])
    if failed and not as_json:
        click.echo(f"rulelang: {failed} of {2 * games} games did not complete (see 'completed' and the report)",
                   err=True)
    ctx.exit(EXIT_FAIL if failed else 0)


def _print(comparison: dict[str, Any]) -> None:
    """The terminal summary: one rich table per measure, significant differences marked."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from interpreter.report import footnote, tables
    from rulelang.diagnostics import printable

    def text(value: str) -> Text:  # names from the rules and file names: shown as they are, never as rich markup
        return Text(printable(value))

    out = Console(file=sys.stdout, highlight=False, soft_wrap=False)
    if not out.is_terminal:
        out.width = 120  # a file or a pipe: the tables on one line each
    a, b = comparison["sides"]
    click.echo(printable(f"{comparison.get('game') or ''}: {a['label']} (A) vs {b['label']} (B); "
               f"{comparison['players']} players, {comparison.get('games', a['games'])} games a side, "
               f"seed {comparison.get('seed', 0)}, agents {','.join(comparison.get('agents') or ['random'])}"))
    for note in comparison["notes"]:
        click.echo(printable(f"note: {note}"))
    for t in tables(comparison, max_actions=15):
        table = Table(title=text(t["title"]), title_justify="left")
        for i, c in enumerate(t["columns"]):
            table.add_column(text(c), justify="left" if i == 0 else "right")
        for cells, sig in zip(t["rows"], t["significant"]):
            table.add_row(*(text(c) for c in cells), style="bold" if sig else None)
        out.print(table)
    click.echo(footnote(comparison))
    if comparison.get("report"):
        click.echo(printable(f"report: {comparison['report']}"))
    if comparison.get("rows"):
        click.echo(printable(f"rows: {comparison['rows']}"))

"""``rulelang simulate``: many games between agents, summarised (interpreter/simulate.py and runner.py play
them; rows to a file with ``--out``; rulebook coverage with ``--coverage``)."""
from __future__ import annotations

import json
import sys
from typing import Any, Callable, Sequence

import click

from .common import EXIT_FAIL, EXIT_USAGE, Fail, api, first_line, load_rules, parse_workers, player_count, plural, printable, \
    native_note, native_option, root_option, variant_option


@click.command("simulate")
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
@native_option
@click.pass_context
def command(ctx: click.Context, file: str, players: int | None, games: int, seed: int, workers: str,
            variants: tuple[str, ...], max_decisions: int, agents_spec: str, out: str | None,
            out_format: str | None, scheduler: str | None, as_json: bool, root: str | None,
            coverage: bool) -> None:
    """Play many games between agents (random by default) and summarise them (exit 1 if any game failed)."""
    from interpreter.runner import RunnerError, check_agents, check_seeds, parse_scheduler
    from interpreter.simulate import simulate as run
    from rulelang.progress import progress_bar

    worker_count = parse_workers(workers)
    if coverage and (worker_count > 1 or scheduler):
        raise Fail("--coverage counts in this process: leave out --workers and --scheduler", EXIT_USAGE)
    if scheduler is not None:
        if worker_count > 1:
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
    ruleset = load_rules(file, variants, root)
    native_note(ruleset)
    players = player_count(ruleset, players)
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

        loader = functools.partial(api().load, root=root) if root else None
        with progress_bar(games, enabled=not as_json, label="simulating") as bar:
            summary = run(file, players, games, seed=seed, workers=worker_count, variants=tuple(variants),
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
            from rich.console import Console

            cov.render(Console(file=sys.stdout, highlight=False, soft_wrap=False))
        if out is not None:
            click.echo(f"{plural(summary['games'], 'row')} written to {printable(out)}")
    ctx.exit(EXIT_FAIL if summary["errors"] else 0)


def _check_out(out: str | None, out_format: str | None) -> None:
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


def _agent_specs(text: str, players: int,
                 check: Callable[[Sequence[str], int], tuple[str, ...]]) -> tuple[str, ...]:
    """The agent spec of each seat from ``--agents`` (checked: a usage error names the problem)."""
    from interpreter.agents import parse_agent_specs

    try:
        return check(parse_agent_specs(text, players), players)
    except ValueError as exc:
        raise Fail(f"--agents: {first_line(exc)}", EXIT_USAGE) from None


def _print_summary(s: dict[str, Any]) -> None:
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
        click.echo(f"{plural(s['errors'], 'game')} failed; first errors (replay one with `rulelang play --seed SEED`):")
    for ex in s.get("error_examples", []):
        click.echo(f"  game {ex['game']} (seed {ex['seed']}): {ex['message']}")

"""``rulelang validate``: random games checking the invariants after every decision and chance step
(interpreter/validate.py); each finding with a log ``rulelang replay`` confirms."""
from __future__ import annotations

import json
import sys

import click

from .common import EXIT_FAIL, EXIT_USAGE, Fail, load_rules, native_note, native_option, player_count, root_option, variant_option, \
    write_json_atomic


@click.command("validate")
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
@native_option
@click.pass_context
def command(ctx: click.Context, file: str, player_counts: tuple[int, ...], variants: tuple[str, ...], games: int,
            seed: int, max_decisions: int, chance: str, exhaustive: bool, max_states: int, out_dir: str,
            no_shrink: bool, no_coverage: bool, as_json: bool, root: str | None) -> None:
    """Play random games checking the invariants after every decision and chance step; report run-time
    rule errors, stuck positions, games that do not end and invariant violations, each with a log that
    `rulelang replay` confirms (exit 1 if anything was found)."""
    from interpreter import validate as V
    from rulelang.progress import progress_bar

    ruleset = load_rules(file, variants, root)
    native_note(ruleset)
    counts = [player_count(ruleset, n) for n in player_counts] or list(ruleset.player_counts)
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
            V.write_files(ruleset, file, report, out_dir, write_json_atomic)
        except OSError as exc:
            report.notes.append(f"{out_dir}: cannot write the logs of the findings: {exc.strerror or exc}")
    if as_json:
        click.echo(json.dumps(report.to_dict(), default=str))
    else:
        V.print_report(report, getattr(ruleset.program, "sources", {}), click.echo, variants=tuple(variants))
    ctx.exit(EXIT_FAIL if report.findings else 0)

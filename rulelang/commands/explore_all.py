"""``rulelang explore-all``: every reachable state of a small game, chance expanded (interpreter/exhaustive.py)."""
from __future__ import annotations

import json

import click

from .common import EXIT_FAIL, load_rules, native_note, native_option, player_count, plural, root_option, variant_option


@click.command("explore-all")
@click.argument("file")
@click.option("--players", "-p", type=click.IntRange(min=1), help="Number of players (default: the smallest allowed).")
@click.option("--max-states", type=click.IntRange(min=1, max=10_000_000), default=100_000, show_default=True,
              help="Stop (and say incomplete) after this many distinct positions.")
@click.option("--max-seconds", type=click.FloatRange(min=0.1, max=86_400), default=600.0, show_default=True)
@variant_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@root_option
@native_option
@click.pass_context
def command(ctx: click.Context, file: str, players: int | None, max_states: int, max_seconds: float,
            variants: tuple[str, ...], as_json: bool, root: str | None) -> None:
    """Enumerate every reachable state of a small game (chance expanded): distinct positions, game-tree
    nodes, run-time errors, stuck positions and cycles."""
    from interpreter.exhaustive import explore_all

    ruleset = load_rules(file, variants, root)
    native_note(ruleset)
    players = player_count(ruleset, players)
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
            click.echo(f"{f['kind']}: {f['message']} ({plural(f['count'], 'time')}; first after: {path or 'setup'})")
    ctx.exit(EXIT_FAIL if r["findings"] else 0)

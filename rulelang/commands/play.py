"""``rulelang play``: one game between agents (bots or people), narrated (interpreter/narrate.py), with an
optional log for ``rulelang replay``."""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable

import click

from .common import EXIT_USAGE, LOG_FORMAT, LOG_VERSION, Fail, first_line, game_error_types, load_rules, \
    log_entries, native_note, native_option, outcome, player_count, plural, root_option, seat_list, stop_error_types, \
    variant_option, write_json_atomic


@click.command("play")
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
@native_option
@click.pass_context
def command(ctx: click.Context, file: str, players: int | None, seed: int | None, variants: tuple[str, ...],
            agents_spec: str, chance: str | None, max_decisions: int, log_path: str | None, as_json: bool,
            draw_boards: bool, root: str | None) -> None:
    """Play one game with agents, narrating each decision (a human types help for the commands)."""
    from interpreter.agents import ChanceAgent, agent_seed, make_agent, parse_agent_specs, seat_name
    from interpreter.narrate import Session

    ruleset = load_rules(file, variants, root)
    native_note(ruleset)
    players = player_count(ruleset, players)
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

    say: Callable[[str], None] = (lambda text: None) if as_json else click.echo
    try:
        game = ruleset.new_game(players, seed=seed, chance=chance)
    except game_error_types() as exc:
        raise Fail(f"game error during setup: {first_line(exc)}") from None
    say(f"{getattr(ruleset, 'name', file)}: {players} players, seed {seed}"
        + (f", variants {', '.join(variants)}" if variants else ""))
    for e in log_entries(game):  # chance events resolved during setup
        say(f"{seat_name(e['player'])}: {e['action']}")

    session = Session(game, agents, chance_agent=ChanceAgent(agent_seed(seed, "chance")),
                      max_decisions=max_decisions, say=say,
                      boards="human" if "human" in names else ("all" if draw_boards else None))
    stopped = None  # the game's own error (the rules failed), or None
    cut = None  # why the game was left unfinished (the decision limit, an agent that could not decide)
    try:
        session.run()
    except stop_error_types() as exc:
        stopped = first_line(exc)
    except game_error_types() as exc:
        cut = first_line(exc)
    game = session.game  # a new object after an undo

    result = outcome(game, stopped)  # a score, tiebreak or payoff that fails is the game's error too
    error = result["error"] or cut
    record: dict[str, Any] = {
        "format": LOG_FORMAT, "version": LOG_VERSION,
        "rules": file, "game": getattr(ruleset, "name", None), "variants": list(variants),
        "players": players, "seed": seed, "chance": chance, "agents": names,
        "log": log_entries(game), "decisions": len(game.log),
        "end_reason": result["end_reason"], "scores": result["scores"], "winners": result["winners"],
        "returns": result["returns"], "final_sha256": result["final_sha256"], "error": error,
    }
    if result["unfinished"]:
        record["unfinished"] = True  # `rulelang replay` checks that it is (and the state it stopped in)
    if log_path:
        try:
            write_json_atomic(log_path, record)
        except OSError as exc:
            raise Fail(f"{log_path}: cannot write log: {exc.strerror or exc}") from None
    if as_json:
        click.echo(json.dumps({k: record[k] for k in (
            "game", "players", "seed", "variants", "scores", "winners", "end_reason", "decisions", "log", "error")},
            default=str))
    if error is not None:
        raise Fail(f"game error after {plural(len(game.log), 'decision')}: {error}")
    say(f"Game over after {plural(len(game.log), 'decision')}: {game.end_reason or 'ended'}")
    say("Scores: " + ", ".join(f"{seat_name(s)} {v}" for s, v in enumerate(record["scores"])))
    winners = record["winners"]
    if not winners:
        say("No winner")
    elif len(winners) == 1:
        say(f"Winner: {seat_list(winners)}")
    else:
        say(f"Winners (shared): {seat_list(winners)}")
    ctx.exit(0)

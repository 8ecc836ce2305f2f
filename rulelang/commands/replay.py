"""``rulelang replay``: re-play a game log (``play --log``, or a finding's log from ``validate``) decision by
decision, and verify the outcome it records."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from .common import Fail, first_line, game_error_types, load_rules, log_entries, log_entry, outcome, plural, \
    printable, read_log, root_option, same_error

if TYPE_CHECKING:
    from interpreter.game import Game
    from interpreter.validate import Finding


@click.command("replay")
@click.argument("file")
@click.argument("log_file", metavar="LOG")
@root_option
@click.pass_context
def command(ctx: click.Context, file: str, log_file: str, root: str | None) -> None:
    """Re-play a game log made by `play --log` and verify it decision by decision."""
    from interpreter.agents import seat_name

    data = read_log(log_file)
    ruleset = load_rules(file, data["variants"], root, from_log=True)
    name = getattr(ruleset, "name", None)
    if data.get("game") and name and data["game"] != name:
        raise Fail(f"{log_file}: the log is of game '{data['game']}' but {file} is '{name}'")
    errors = game_error_types()
    finding = _recorded_finding(data)  # a log written by `rulelang validate`: its finding must show again
    try:
        game = ruleset.new_game(data["players"], seed=data["seed"], chance=data.get("chance") or "sampled")
    except errors as exc:
        _confirmed(finding, exc, 0, ctx)
        raise Fail(f"replay failed at setup: {first_line(exc)}") from None
    recorded = data["log"]
    reproduced = 0  # the decision at which the error the log records happened again
    stopped = None  # that error
    for k, entry in enumerate(recorded):
        step = f"decision {k + 1} ({seat_name(entry['player'])}: {entry['action']})"
        if len(game.log) > k:  # the game resolved this (chance) event itself
            have = log_entry(game.log[k])  # one entry, not the whole log again: a long log replays in linear time
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
                    if same_error(first_line(exc), data["error"]):  # the recorded error, reproduced
                        reproduced = k + 1
                        stopped = first_line(exc)
                        continue
                    raise Fail(f"replay diverged at {step}: the game stopped with another error: {first_line(exc)}")
            raise Fail(f"replay failed at {step}: {first_line(exc)}") from None
        if len(game.log) <= k or log_entry(game.log[k]) != entry:
            raise Fail(f"replay diverged at {step}: the game recorded it differently")
    have_all = log_entries(game)
    if len(have_all) > len(recorded):  # chance events the game resolved after the last recorded decision
        if have_all[:len(recorded)] != recorded:
            raise Fail(f"replay diverged: the game log has {len(game.log)} decisions, the file {len(recorded)}")
    elif have_all != recorded:
        raise Fail(f"replay diverged: the game log has {len(game.log)} decisions, the file {len(recorded)}")
    if finding is not None:
        _confirmed(finding, game, len(recorded), ctx)
        raise Fail(f"replay: the recorded finding does not show again ({finding.code}: {finding.message})")
    got = outcome(game, stopped)
    _compare_outcome(data, got, game, log_file)
    verified = ", final state verified" if data.get("final_sha256") else ""
    if got["unfinished"] and data.get("error"):  # stopped by what the log records (a limit, a finding)
        click.echo(f"OK: {plural(len(recorded), 'decision')} replayed{verified}")
        click.echo(f"note: the recorded game stopped with an error: {data['error']}")
    elif got["unfinished"]:
        click.echo(f"OK: {plural(len(recorded), 'decision')} replayed{verified}; the game is unfinished, as the "
                   f"log says (it is {seat_name(game.current_player)}'s decision)")
    elif stopped is not None:
        click.echo(f"OK: {plural(len(recorded), 'decision')} replayed{verified}")
        click.echo(f"note: the recorded game stopped with an error, reproduced at decision {reproduced}: "
                   f"{data['error']}")
    else:
        click.echo(f"OK: {plural(len(recorded), 'decision')} replayed{verified}")
        if got["error"] is not None:
            click.echo(f"note: the recorded game ended ({got['end_reason']}), then failed as it records: "
                       f"{data['error']}")
    ctx.exit(0)


_OUTCOME_KEYS = ("end_reason", "decisions", "scores", "winners", "returns", "final_sha256")


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)  # (true is not 1 here, as it would be in Python)


def _compare_outcome(data: dict[str, Any], got: dict[str, Any], game: Game, log_file: str) -> None:
    """Every outcome the log records must be the one the replay reproduced: a one-line ``Fail`` naming the
    first that is not. A field left out (or null) claims nothing, but the end must be verified: by the
    final state's hash, or by the error the game stopped with happening again."""
    from interpreter.agents import seat_name

    said = data.get("error")
    if got["unfinished"]:
        if data.get("unfinished") is not True:
            if said:
                raise Fail(f"replay diverged: the log records the error \"{_short(said)}\", but the game did not "
                           f"stop with an error: after {plural(len(game.log), 'decision')} it is "
                           f"{seat_name(game.current_player)}'s decision")
            raise Fail(f"{log_file}: the log is short: it ends after {plural(len(data['log']), 'decision')}, "
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
        if got["error"] is not None and said and not same_error(got["error"], said):  # (said is set here: see above)
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


def _recorded_finding(data: dict[str, Any]) -> Finding | None:
    """The finding a log written by `rulelang validate` records (its "finding" field), or None."""
    if "finding" not in data:
        return None
    from interpreter.validate import finding_from_record

    found = finding_from_record(data)
    if found is None:
        raise Fail("the log's finding is not {\"kind\": ..., \"path\": ..., \"line\": ..., \"message\": ...}")
    return found


def _confirmed(finding: Finding | None, game_or_exc: Game | BaseException, decisions: int,
               ctx: click.Context) -> None:
    """Exit 0 saying so when the replayed game (or the error it stopped with) shows the recorded finding."""
    if finding is None:
        return
    from interpreter.validate import confirm

    if confirm(finding, game_or_exc):
        click.echo(f"OK: {plural(decisions, 'decision')} replayed; the finding shows again: "
                   f"{printable(finding.path)}:{finding.line}:{finding.column}: {finding.code}: {printable(finding.message)}")
        ctx.exit(0)

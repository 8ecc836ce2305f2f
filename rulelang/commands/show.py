"""``rulelang show``: the boards of a saved game or of the game a log ends in, drawn as SVG from one seat's
view (interpreter/render.py draws)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from .common import Fail, first_line, game_error_types, load_rules, print_text, read_log, require_file, \
    root_option, variant_option, write_text_or_fail

if TYPE_CHECKING:
    from interpreter.game import Game
    from interpreter.ruleset import Ruleset


@click.command("show")
@click.argument("file")
@click.option("--state", "state_path", required=True, metavar="SAVE.json",
              help="A saved game (the text of Game.to_json()), or a log written by play --log (replayed).")
@click.option("--seat", type=click.IntRange(min=0), default=None,
              help="Draw what this seat may see (default: the whole state the save holds).")
@variant_option
@root_option
@click.option("-o", "--output", "out", metavar="OUT", help="Write the SVG to OUT instead of stdout.")
def command(file: str, state_path: str, seat: int | None, variants: tuple[str, ...], root: str | None,
            out: str | None) -> None:
    """Draw every board of a saved game as SVG."""
    print_text(drawing(file, state_path, seat, variants, root, out))


def _read_state(path: str) -> tuple[str, dict[str, Any]]:
    """(text, JSON object) of a save or log file, read and parsed within the limits of a save
    (interpreter/saves.py: size, number of values, digits, nesting); raises Fail in one line."""
    from types import SimpleNamespace

    from interpreter.errors import GameError
    from interpreter.saves import MAX_SAVE_CHARS, parse
    from rulelang.program import FileProblem, read_limited

    try:
        raw = read_limited(path, 4 * MAX_SAVE_CHARS)  # a character is at most 4 bytes
    except FileProblem as e:
        raise Fail(f"{path}: cannot read save: {e}") from None
    if b"\x00" in raw:
        raise Fail(f"{path}: not a saved game: a binary file")
    try:
        text = raw.decode("utf-8")
        data = parse(SimpleNamespace(name="these rules"), text)
    except UnicodeDecodeError:
        raise Fail(f"{path}: not a saved game: not UTF-8 text") from None
    except GameError as e:
        raise Fail(f"{path}: {str(e).strip().splitlines()[0]}") from None
    except Exception as e:  # a part of the file of a wrong form (saves.Bad): one line
        raise Fail(f"{path}: not a saved game: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    if not isinstance(data, dict):
        raise Fail(f"{path}: not a saved game: expected a JSON object")
    return text, data


def _variants_of(data: dict[str, Any]) -> tuple[str, ...]:
    v = data.get("variants") if isinstance(data, dict) else None
    if isinstance(v, list) and all(isinstance(x, str) for x in v) and len(v) <= 100:
        return tuple(v)
    return ()


def _game_from_log(rs: Ruleset, data: dict[str, Any], path: str) -> Game:
    """The game a `play --log` file ends in: its decisions replayed (each checked as `apply` does)."""
    errors = game_error_types()
    try:
        game = rs.new_game(data["players"], seed=data["seed"], chance=data.get("chance") or "sampled")
        for k, entry in enumerate(data["log"]):
            if len(game.log) > k:  # a chance event the game resolved itself
                continue
            game.apply(entry["action"])
    except errors as exc:
        raise Fail(f"{path}: the log does not replay: {first_line(exc)}") from None
    return game


def drawing(path: str, state_path: str, seat: int | None, variants: tuple[str, ...], root: str | None,
            out: str | None) -> str:
    """The SVG text to print ("" when written to `out`); raises ``Fail``. The state is a save
    (`Game.to_json()`) or a log written by `play --log` (replayed to its end)."""
    from interpreter.errors import GameError
    from interpreter.gamelog import LOG_FORMAT
    from interpreter.render import board_names, boards_svg

    require_file(state_path, "save")
    text, data = _read_state(state_path)
    if data.get("format") == LOG_FORMAT:
        data = read_log(state_path)
        rs = load_rules(path, variants or data["variants"], root, from_log=not variants)
        game = _game_from_log(rs, data, state_path)
    else:
        rs = load_rules(path, variants or _variants_of(data), root, from_log=not variants)
        try:
            game = rs.load_game(text)
        except GameError as e:
            first = str(e).strip().splitlines()
            raise Fail(f"{state_path}: {first[0] if first else 'not a saved game'}") from None
    if seat is not None and not 0 <= seat < game.n:
        raise Fail(f"--seat {seat}: the saved game has {game.n} players (seats 0 to {game.n - 1})", 2)
    if not board_names(game):
        raise Fail(f"{path}: these rules declare no board, so there is nothing to draw")
    svg = boards_svg(game, seat)
    if out:
        write_text_or_fail(out, svg, "the drawing")
        return ""
    return svg

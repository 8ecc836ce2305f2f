"""Drawing the boards of a game, as text and as SVG, from what one seat may see.

A board is a fixed graph (interpreter/boards.py); what stands on it lives in variables and pieces. The
contents of a node are read from `game.view(seat)` — never from the state itself — so a drawing holds
exactly what that seat's view holds (`seat=None`: the whole state, as `view(None)`). A node's contents
come from, in declaration order:

* a `map[node, X]` variable: the value at the node (a player shows as P0, P1 ...);
* a `set[node]` or `list[node]` variable: its name, at each node it holds;
* a `node` variable: its name at that node (per player: with the seat, e.g. `marker P1`);
* a `map[K, node]` variable: `name[K]` at the node;
* a piece with a field of type `node`: `kind#id` at the node.

When only one variable or piece kind puts things on a board, the labels are its bare values;
otherwise each label names its variable (`name=value`). Values the view hides are not drawn: the
drawing says how many entries of which variable are hidden. Nothing here knows a game.

`board_text(game, seat, board)` / `boards_text(game, seat)` draw text (square grids as a grid with row 0
at the bottom, unless the board is declared with `row_zero_at_top: true`; hex
grids as offset rows, lines as a row, other graphs as a list of nodes with their neighbours);
`board_svg(game, seat, board)` / `boards_svg(game, seat)` draw SVG (square cells, pointy-top hexes at
the boards' axial or offset coordinates, graph boards at declared `x`/`y` node attributes, or laid out
by networkx's Kamada-Kawai layout, which is deterministic).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal, Optional, Protocol, Sequence, Union, overload
from xml.sax.saxutils import escape, quoteattr

from .boards import Board, Node, _nx
from .values import Json, fmt, skey

if TYPE_CHECKING:
    from rulelang.program import Program
    from rulelang.types import Type

    from .pieces import PieceKind


class DrawnRules(Protocol):
    """The compiled rules (interpreter/ruleset.py), as far as a drawing reads them."""

    @property
    def program(self) -> Program: ...

    @property
    def boards(self) -> dict[str, Board]: ...

    @property
    def vars(self) -> Sequence[tuple[str, bool, Any, Type, str]]: ...  # (name, per player, start, type, visibility)

    @property
    def pieces(self) -> dict[str, PieceKind]: ...


class DrawnGame(Protocol):
    """A game (interpreter/game.py's Game), as far as a drawing reads it: its rules and a seat's view. (A
    protocol: the game stands above this module.)"""

    @property
    def rs(self) -> DrawnRules: ...

    def view(self, player: Optional[int] = None) -> dict[str, Any]: ...


Drawing = tuple[str, tuple[float, float, float, float]]  # an SVG <g> element, and its (x0, y0, width, height)
Labels = list[tuple[str, Optional[int]]]  # what stands on a node: (label, the seat it belongs to, or None)

MAX_CELL = 12  # characters of a cell in a square text grid (longer contents are listed under the grid)
HEX_CELL = 5  # the same for a hex grid
MAX_LABEL = 40  # characters of one label
MAX_TEXT_NODES = 2_000  # nodes a text drawing lists one per line at most (the rest are counted)
PALETTE = ("#e06666", "#6fa8dc", "#93c47d", "#ffd966", "#8e7cc3", "#f6b26b", "#76a5af", "#c27ba0",
           "#a4c2f4", "#b6d7a8")  # by seat: a node holding one player's value is filled with that seat's colour


# ---------------------------------------------------------------------------- what stands where
def board_names(game: DrawnGame) -> list[str]:
    """The names of the game's boards, in declaration order."""
    return list(game.rs.boards)


def _board(game: DrawnGame, board: Union[str, Board]) -> Board:
    if isinstance(board, str):
        try:
            return game.rs.boards[board]
        except KeyError:
            known = ", ".join(game.rs.boards) or "none"
            raise ValueError(f"there is no board {board!r} (boards: {known})") from None
    return board


def board_kind(game: DrawnGame, board: Union[str, Board]) -> tuple[str, tuple[()]]:
    """("square_grid" | "hex_grid" | "hex_rect" | "line" | "graph", generator arguments)."""
    b = _board(game, board)
    decl = game.rs.program.decls.get(b.name)
    spec = getattr(decl, "spec", None)
    if spec is None:
        return "graph", ()
    return spec.func.ident, ()


def _plain_key(v: Json) -> str:
    """The fmt() text of a node given as plain view data (tuples come back as lists)."""
    if isinstance(v, list):
        return "(" + ",".join(_plain_key(x) for x in v) + ")" if len(v) != 1 else "(" + _plain_key(v[0]) + ",)"
    if v is None:
        return "none"
    if v is True:
        return "true"
    if v is False:
        return "false"
    return str(v)


def _text(v: Json, ty: Optional[Type] = None) -> str:
    """A value of the view as a short label."""
    if getattr(ty, "name", "") == "player" and isinstance(v, int) and not isinstance(v, bool):
        return f"P{v}"
    if isinstance(v, list):
        return "(" + ",".join(_text(x) for x in v) + ")"
    if isinstance(v, dict):
        if set(v) == {"hidden"}:
            return "?"
        return "{" + ",".join(f"{k}:{_text(x)}" for k, x in v.items()) + "}"
    if v is None:
        return "none"
    if v is True:
        return "true"
    if v is False:
        return "false"
    text = str(v)
    return text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 3] + "..."


def _is(ty: Optional[Type], name: str) -> bool:
    return getattr(ty, "name", None) == name


class Contents:
    """What a seat sees on one board: `labels[node] = [(label, seat or None), ...]`, and `hidden`: lines
    such as "secret: 3 hidden entries" for what the view hides."""

    def __init__(self, board: Board) -> None:
        self.board = board
        self.labels: dict[Node, Labels] = {}
        self.hidden: list[str] = []
        self.sources: list[str] = []  # the variables and piece kinds that put something on this board

    def put(self, node: Node, label: str, seat: Optional[int] = None) -> None:
        self.labels.setdefault(node, []).append((label, seat))


def board_contents(game: DrawnGame, seat: Optional[int], board: Union[str, Board]) -> Contents:
    """The Contents of `board` as `seat` sees it (None: the whole state)."""
    b = _board(game, board)
    view = game.view(seat)
    by_key = {fmt(n): n for n in b.nodes}
    found: list[tuple[str, Node, str, bool, Optional[int]]] = []  # (source name, node, value text, is a bare mark, seat of the value)
    hidden: list[str] = []

    def node_of(v: Json) -> Optional[Node]:
        return by_key.get(_plain_key(v))

    def hidden_count(v: Json) -> int:
        return v.get("hidden", 0) if isinstance(v, dict) else 0

    for name, per, _, ty, vis in game.rs.vars:
        value = view["vars"].get(name)
        owners = list(enumerate(value)) if per and isinstance(value, list) else [(None, value)]
        for owner, val in owners:
            who = f" P{owner}" if owner is not None else ""
            if _is(ty, "node"):
                if val == "?" or (isinstance(val, dict) and "hidden" in val):  # a hidden coordinate tuple
                    hidden.append(f"{name}{who}: hidden")
                elif node_of(val) is not None:
                    found.append((name, node_of(val), name + who, True, owner))
            elif ty.name in ("list", "set") and ty.args and _is(ty.args[0], "node"):
                if isinstance(val, dict):
                    if hidden_count(val):
                        hidden.append(f"{name}{who}: {hidden_count(val)} hidden")
                    val = val.get("known", [])
                for item in val if isinstance(val, list) else ():
                    if node_of(item) is not None:
                        found.append((name, node_of(item), name + who, True, owner))
            elif ty.name == "map" and len(ty.args) == 2 and _is(ty.args[0], "node"):
                if isinstance(val, dict) and "hidden" in val and set(val) <= {"known", "hidden"}:
                    if val["hidden"]:
                        hidden.append(f"{name}{who}: {val['hidden']} hidden entries")
                    val = val.get("known", {})
                for key, x in (val.items() if isinstance(val, dict) else ()):
                    n = by_key.get(key)
                    if n is None:
                        continue
                    vseat = x if _is(ty.args[1], "player") and isinstance(x, int) and not isinstance(x, bool) else owner
                    found.append((name, n, (f"P{owner}:" if owner is not None else "") + _text(x, ty.args[1]),
                                  False, vseat))
            elif ty.name == "map" and len(ty.args) == 2 and _is(ty.args[1], "node"):
                if isinstance(val, dict) and "hidden" in val and set(val) <= {"known", "hidden"}:
                    if val["hidden"]:
                        hidden.append(f"{name}{who}: {val['hidden']} hidden entries")
                    val = val.get("known", {})
                for key, x in (val.items() if isinstance(val, dict) else ()):
                    if node_of(x) is not None:
                        found.append((name, node_of(x), f"{name}[{key}]{who}", True, owner))
    for kind, items in (view.get("pieces") or {}).items():
        pk = game.rs.pieces.get(kind)
        if pk is None:
            continue
        for i, f in enumerate(pk.fields):
            if not _is(pk.types[i], "node"):
                continue
            for item in items:
                v = item.get(f)
                owner = item.get("owner") if pk.owner is not None else None
                owner = owner if isinstance(owner, int) and not isinstance(owner, bool) else None
                if v == "?" or (isinstance(v, dict) and "hidden" in v):
                    hidden.append(f"{kind}#{item['id']}.{f}: hidden")
                elif node_of(v) is not None:
                    found.append((kind, node_of(v), f"{kind}#{item['id']}", True, owner))
    out = Contents(b)
    sources: list[str] = []
    for src, *_ in found:
        if src not in sources:
            sources.append(src)
    out.sources = sources
    several = len(sources) > 1
    for src, n, label, bare, owner in found:
        if several and not bare:
            label = f"{src}={label}"
        out.put(n, label, owner)
    out.hidden = hidden
    return out


# ---------------------------------------------------------------------------- text
def _cell(labels: Optional[Labels]) -> str:
    return ",".join(label for label, _ in labels) if labels else "."


def board_text(game: DrawnGame, seat: Optional[int], board: Union[str, Board]) -> str:
    """The board as text: what `seat` may see (None: the whole state)."""
    b = _board(game, board)
    kind, _ = board_kind(game, b)
    c = board_contents(game, seat, b)
    cells = {n: _cell(c.labels.get(n)) for n in b.nodes}
    limit = MAX_CELL if kind == "square_grid" else HEX_CELL if kind in ("hex_grid", "hex_rect", "hex_rhombus") else 10 ** 9
    long = [n for n in b.nodes if len(cells[n]) > limit]  # shown as [k], listed under the drawing
    shown = dict(cells)
    for k, n in enumerate(long, 1):
        shown[n] = f"[{k}]"
    lines = [f"board {b.name}" + (f" ({', '.join(c.sources)})" if c.sources else "")]
    if kind == "square_grid":
        rows = sorted({n[0] for n in b.nodes})
        cols = sorted({n[1] for n in b.nodes})
        w = max([len(str(x)) for x in cols] + [len(t) for t in shown.values()] + [1])
        rw = max(len(str(r)) for r in rows)
        lines.append(" " * (rw + 1) + " ".join(str(x).center(w) for x in cols))
        for r in (rows if b.row_zero_at_top else rows[::-1]):  # row 0 at the bottom unless the board says
            lines.append(str(r).rjust(rw) + " " + " ".join(shown.get((r, x), "").center(w) for x in cols).rstrip())
    elif kind in ("hex_grid", "hex_rect", "hex_rhombus"):
        # x in half cells: axial (q, r) -> 2q + r; offset rows (r, c) -> 2c + (r odd); rhombus (r, c) -> 2c + r
        if kind == "hex_grid":
            place = {n: (n[1], 2 * n[0] + n[1]) for n in b.nodes}
        elif kind == "hex_rhombus":
            place = {n: (n[0], 2 * n[1] + n[0]) for n in b.nodes}
        else:
            place = {n: (n[0], 2 * n[1] + n[0] % 2) for n in b.nodes}
        w = max([len(t) for t in shown.values()] + [1])
        half = (w + 2) // 2
        xmin = min(x for _, x in place.values())
        for row in sorted({r for r, _ in place.values()}):
            line = ""
            for n in sorted((n for n in b.nodes if place[n][0] == row), key=lambda n: place[n][1]):
                col = (place[n][1] - xmin) * half
                line = line.ljust(col) + shown[n].center(w)
            lines.append(line.rstrip())
        top = min(b.nodes, key=lambda n: (place[n][0], place[n][1]))
        lines.append(f"(the top left hex is {fmt(top)})")
    elif kind == "line":
        lines.append(" - ".join(f"{fmt(n)}:{shown[n]}" for n in b.nodes[:MAX_TEXT_NODES]))
    else:
        for n in b.nodes[:MAX_TEXT_NODES]:
            nb = ", ".join(fmt(m) for m in b.adj[n])
            lines.append(f"  {fmt(n)}: {cells[n]}  (next to {nb})")
        long = []
    if len(b.nodes) > MAX_TEXT_NODES and kind in ("line", "graph"):
        lines.append(f"  ... and {len(b.nodes) - MAX_TEXT_NODES} more nodes")
    for k, n in enumerate(long, 1):
        lines.append(f"  [{k}] {fmt(n)}: {cells[n]}")
    for h in c.hidden:
        lines.append(f"  hidden: {h}")
    return "\n".join(lines)


def boards_text(game: DrawnGame, seat: Optional[int]) -> str:
    """Every board of the game as text (\"\" when the rules declare none)."""
    return "\n".join(board_text(game, seat, name) for name in board_names(game))


# ---------------------------------------------------------------------------- SVG
KAMADA_KAWAI_NODES = 400  # graph boards up to this size are laid out by Kamada-Kawai (memory ~ nodes squared)
SPRING_NODES = 2_000  # up to this size by a spring layout (seeded); larger ones in rows, in board order
HEX = 28.0  # radius of a hex, pixels
SQUARE = 56.0  # side of a square cell
NODE_R = 22.0  # radius of a node of a graph board


def _positions(game: DrawnGame, b: Board, kind: str) -> tuple[dict[Node, tuple[float, float]], str]:
    """Node -> (x, y) centre in pixels, and the shape: "square", "hex" or "circle"."""
    if kind == "square_grid":  # row 0 at the bottom unless the board says row_zero_at_top
        top = max(n[0] for n in b.nodes)
        return {n: (n[1] * SQUARE + SQUARE / 2, (n[0] if b.row_zero_at_top else top - n[0]) * SQUARE + SQUARE / 2)
                for n in b.nodes}, "square"
    if kind == "hex_grid":
        s3 = math.sqrt(3)
        return {n: (HEX * s3 * (n[0] + n[1] / 2), HEX * 1.5 * n[1]) for n in b.nodes}, "hex"
    if kind == "hex_rhombus":
        s3 = math.sqrt(3)
        return {n: (HEX * s3 * (n[1] + n[0] / 2), HEX * 1.5 * n[0]) for n in b.nodes}, "hex"
    if kind == "hex_rect":
        s3 = math.sqrt(3)
        return {n: (HEX * s3 * (n[1] + 0.5 * (n[0] % 2)), HEX * 1.5 * n[0]) for n in b.nodes}, "hex"
    if kind == "line":
        return {n: (i * 3 * NODE_R, 0.0) for i, n in enumerate(b.nodes)}, "circle"
    declared = {n: (b.attr(n, "x"), b.attr(n, "y")) for n in b.nodes}
    if all(isinstance(x, (int, float)) and isinstance(y, (int, float)) for x, y in declared.values()):
        return {n: (x * 3 * NODE_R, y * 3 * NODE_R) for n, (x, y) in declared.items()}, "circle"
    nx = _nx()
    if len(b.nodes) <= 1:
        pos = {n: (0.0, 0.0) for n in b.nodes}
    else:
        g = nx.Graph()
        g.add_nodes_from(b.nodes)  # in board order: the layout depends on it
        g.add_edges_from(sorted(b.graph.edges, key=lambda e: (skey(e[0]), skey(e[1]))))
        if len(b.nodes) <= KAMADA_KAWAI_NODES:
            pos = nx.kamada_kawai_layout(g)
        elif len(b.nodes) <= SPRING_NODES:
            pos = nx.spring_layout(g, seed=0)
        else:  # too many nodes to lay out in good time: rows in board order
            side = math.ceil(math.sqrt(len(b.nodes)))
            pos = {n: ((i % side) / side, (i // side) / side) for i, n in enumerate(b.nodes)}
    scale = 3 * NODE_R * max(2.0, math.sqrt(len(b.nodes)))
    return {n: (float(p[0]) * scale, float(p[1]) * scale) for n, p in pos.items()}, "circle"


def _hex_points(x: float, y: float, r: float) -> str:
    return " ".join(f"{x + r * math.cos(math.radians(60 * i - 30)):.1f},{y + r * math.sin(math.radians(60 * i - 30)):.1f}"
                    for i in range(6))


@overload
def board_svg(game: DrawnGame, seat: Optional[int], board: Union[str, Board], standalone: Literal[True] = True) -> str: ...


@overload
def board_svg(game: DrawnGame, seat: Optional[int], board: Union[str, Board], standalone: Literal[False]) -> Drawing: ...


def board_svg(game: DrawnGame, seat: Optional[int], board: Union[str, Board], standalone: bool = True) -> Union[str, Drawing]:
    """The board as an SVG document (or, with standalone=False, a <g> element and its size)."""
    b = _board(game, board)
    kind, _ = board_kind(game, b)
    c = board_contents(game, seat, b)
    pos, shape = _positions(game, b, kind)
    pad = 40.0
    xs = [p[0] for p in pos.values()] or [0.0]
    ys = [p[1] for p in pos.values()] or [0.0]
    x0, y0 = min(xs) - pad, min(ys) - pad - 20
    width = max(xs) - min(xs) + 2 * pad
    height = max(ys) - min(ys) + 2 * pad + 20 + 16 * len(c.hidden)
    parts = [f'<g class="board" data-board={quoteattr(b.name)}>',
             f'<title>{escape("board " + b.name)}</title>',
             f'<text x="{x0 + 8:.1f}" y="{y0 + 18:.1f}" font-size="14" font-weight="bold">'
             f'{escape("board " + b.name)}</text>']
    if shape == "circle":
        for a, m in sorted(b.graph.edges, key=lambda e: (skey(e[0]), skey(e[1]))):
            (ax, ay), (bx, by) = pos[a], pos[m]
            parts.append(f'<line x1="{ax:.1f}" y1="{ay:.1f}" x2="{bx:.1f}" y2="{by:.1f}" stroke="#999"/>')
    for n in b.nodes:
        x, y = pos[n]
        labels = c.labels.get(n, [])
        seats = {s for _, s in labels if s is not None}
        fill = PALETTE[next(iter(seats)) % len(PALETTE)] if len(seats) == 1 else ("#eeeeee" if labels else "#ffffff")
        key = fmt(n)
        parts.append(f'<g class="node" data-node={quoteattr(key)}><title>{escape(key + ": " + _cell(labels))}</title>')
        if shape == "square":
            parts.append(f'<rect x="{x - SQUARE / 2:.1f}" y="{y - SQUARE / 2:.1f}" width="{SQUARE:.1f}" '
                         f'height="{SQUARE:.1f}" fill="{fill}" stroke="#555"/>')
        elif shape == "hex":
            parts.append(f'<polygon points="{_hex_points(x, y, HEX)}" fill="{fill}" stroke="#555"/>')
        else:
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{NODE_R:.1f}" fill="{fill}" stroke="#555"/>')
        parts.append(f'<text x="{x:.1f}" y="{y - (SQUARE if shape == "square" else HEX) / 3:.1f}" font-size="8" '
                     f'fill="#777" text-anchor="middle">{escape(key)}</text>')
        for i, (label, _) in enumerate(labels[:3]):
            text = label.split("=", 1)[-1]  # the value (its variable is in the node's <title>)
            text = text if len(text) <= 10 else text[:9] + "~"
            parts.append(f'<text x="{x:.1f}" y="{y + 4 + 10 * i:.1f}" font-size="9" text-anchor="middle">'
                         f'{escape(text)}</text>')
        if len(labels) > 3:
            parts.append(f'<text x="{x:.1f}" y="{y + 34:.1f}" font-size="8" text-anchor="middle">'
                         f'+{len(labels) - 3}</text>')
        parts.append("</g>")
    for i, h in enumerate(c.hidden):
        parts.append(f'<text x="{x0 + 8:.1f}" y="{y0 + height - 8 - 16 * (len(c.hidden) - 1 - i):.1f}" '
                     f'font-size="11" fill="#555">{escape("hidden: " + h)}</text>')
    parts.append("</g>")
    body = "\n".join(parts)
    if not standalone:
        return body, (x0, y0, width, height)
    return _document([(body, (x0, y0, width, height))])


def _document(drawings: Sequence[Drawing]) -> str:
    """One SVG document stacking the drawings (each: <g> text, (x0, y0, width, height)) top to bottom."""
    width = max([w for _, (_, _, w, _) in drawings] + [100.0])
    height = sum(h for _, (_, _, _, h) in drawings) or 40.0
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.1f} {height:.1f}" font-family="Helvetica, Arial, sans-serif">',
           f'<rect width="{width:.1f}" height="{height:.1f}" fill="white"/>']
    top = 0.0
    for body, (x0, y0, w, h) in drawings:
        out.append(f'<g transform="translate({-x0:.1f},{top - y0:.1f})">')
        out.append(body)
        out.append("</g>")
        top += h
    if not drawings:
        out.append('<text x="10" y="24" font-size="14">these rules declare no board</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def boards_svg(game: DrawnGame, seat: Optional[int]) -> str:
    """Every board of the game as one SVG document, one under the other."""
    return _document([board_svg(game, seat, name, standalone=False) for name in board_names(game)])


def seat_boards_text(game: DrawnGame, seat: Optional[int]) -> str:
    """The boards as `seat` sees them (None: the whole state), as text; "" when the game has none or they
    cannot be drawn (a drawing is a courtesy: a game object without boards, a fake in tests)."""
    try:
        return boards_text(game, seat) if board_names(game) else ""
    except Exception:
        return ""

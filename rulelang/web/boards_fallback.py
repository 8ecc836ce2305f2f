"""A stand-in board drawing for `rulelang serve`, used only while `interpreter.render.board_svg`
(issue 13) is not installed; `rulelang/web/worker.py` prefers that one when it can import it.

``board_svg(game, seat, board) -> str``: the board's nodes in a grid (by their coordinates when they are
pairs of numbers, else in rows of a square), each labelled with what the seat's view holds for it in any
``map[node, X]`` variable. It reads only ``game.view(seat)``, so it shows nothing the seat may not see.
"""
from __future__ import annotations

import math
from xml.sax.saxutils import escape


def board_svg(game, seat, board: str) -> str:
    nodes = list(game.rs.boards[board].graph.nodes)[:2000]
    view = game.view(seat)["vars"]
    labels = {}
    for value in view.values():  # maps keyed by nodes; of a partly hidden map, its known entries
        if isinstance(value, dict):
            if isinstance(value.get("known"), dict) and "hidden" in value:
                value = value["known"]
            for key, v in value.items():
                labels.setdefault(str(key).replace(" ", ""), []).append(str(v))
    cells = []
    side = max(1, math.isqrt(len(nodes) - 1) + 1) if nodes else 1  # other nodes: in rows of a square
    for k, n in enumerate(nodes):
        pair = isinstance(n, tuple) and len(n) == 2 and all(isinstance(c, int) for c in n)
        x, y = (n[1], n[0]) if pair else (k % side, k // side)
        text = " ".join(labels.get(str(n).replace(" ", ""), []))[:12]
        cells.append((x, y, str(n), text))
    if not cells:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>'
    x0, y0 = min(c[0] for c in cells), min(c[1] for c in cells)
    w, h = max(c[0] for c in cells) - x0 + 1, max(c[1] for c in cells) - y0 + 1
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="board" viewBox="0 0 {w * 60} {h * 60}" '
           f'width="{min(w * 60, 600)}" role="img" aria-label="board {escape(board)}">']
    for x, y, name, text in cells:
        px, py = (x - x0) * 60, (y - y0) * 60
        out.append(f'<g data-node="{escape(name, {chr(34): "&quot;"})}"><rect x="{px + 1}" y="{py + 1}" width="58" '
                   f'height="58" fill="#f4f1e8" stroke="#555"/><text x="{px + 30}" y="{py + 36}" '
                   f'text-anchor="middle" font-size="18">{escape(text)}</text></g>')
    out.append("</svg>")
    return "".join(out)

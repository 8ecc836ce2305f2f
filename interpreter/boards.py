"""Boards: static topologies built once per ruleset: nodes with attributes, and each node's neighbours.

A board never changes during a game (what stands on it lives in variables), so every game shares
the same board and copies of a game cost nothing for it. Grids know their straight-line directions,
which line_length() follows. The searches walk the neighbour lists; a networkx graph of the board is
made on first use, for what networkx does better (groups, drawing), so checking or playing a game that
never needs it does not import networkx.
"""
from __future__ import annotations

from collections import deque
from itertools import count, takewhile
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Optional, Sequence

from .builtins import Func, RunningGame, charge, over
from .values import Value, skey, sort_values

if TYPE_CHECKING:
    import networkx

SQUARE_DIRS = [(0, 1), (1, 0)]
SQUARE_DIAG_DIRS = [(0, 1), (1, 0), (1, 1), (1, -1)]
HEX_AXIAL_DIRS = [(1, 0), (0, 1), (1, -1)]  # axial: the six neighbours are +/- these
DISTANCE_TABLE_ENTRIES = 500_000  # per board: the most remembered distances (some 80 MB at worst)
MAX_RAY_ITEMS = 200_000  # nodes a board keeps in the rays of line_length (beyond: it walks as before)

Node = Value  # a node of a board: a name, a number or coordinates (a tuple)
Attrs = dict[str, Value]  # a node's attributes
# for a walk from a node: node -> (steps, work charged until it is met), and the work of the whole walk
DistanceTable = tuple[dict[Node, tuple[int, int]], int]
Rays = tuple[tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]], ...]  # per direction: (ahead, behind)


def _nx() -> Any:  # (the networkx module)
    """networkx, imported on first use: loading it takes longer than checking a rule file, and only
    games with boards need it."""
    import networkx

    return networkx


class Board:
    def __init__(self, name: str, attrs: dict[Node, Attrs], edges: Iterable[tuple[Node, Node]],
                 directions: Iterable[tuple[int, ...]] = ()) -> None:
        """`attrs`: node -> its attributes, in the order the nodes were made; `edges`: (node, node) pairs,
        each a node of `attrs` (a pair given twice, either way round, is one edge)."""
        self.name = name
        self._attrs = attrs
        near: dict[Node, set[Node]] = {n: set() for n in attrs}
        self._edges: list[tuple[Node, Node]] = []
        for a, b in edges:
            if b not in near[a]:
                near[a].add(b)
                near[b].add(a)
                self._edges.append((a, b))
        self._graph: Optional[networkx.Graph] = None
        self.nodes = tuple(sort_values(tuple(attrs)))  # (without skey when Python orders them the same)
        self.adj = {n: tuple(sort_values(near[n])) for n in self.nodes}
        self.directions = tuple(directions)  # coordinate offsets that form straight lines (one per axis)
        self._distance_tables: dict[Node, DistanceTable] = {}  # start node -> see _distances_from
        self._distance_entries = 0
        self.known_rays: dict[Node, Rays] = {}  # (x, y) node -> its rays, for line_length (see _rays_of; generated code reads it too)
        self._ray_items = 0  # nodes held by known_rays, at most MAX_RAY_ITEMS
        self.row_zero_at_top = False  # how a square grid is drawn (interpreter/render.py): row 0 at the bottom

    def has_node(self, n: Value) -> bool:
        try:
            return n in self._attrs
        except TypeError:  # a value that cannot be a node (a map)
            return False

    def set_attrs(self, n: Node, values: Attrs) -> None:
        """Set attributes of node n (while the board is built: boards never change in a game)."""
        self._attrs[n].update(values)
        if self._graph is not None:
            self._graph.nodes[n].update(values)

    def attr(self, n: Value, name: str, default: Value = None) -> Value:
        if not self.has_node(n):
            return default
        return self._attrs[n].get(name, default)

    @property
    def graph(self) -> networkx.Graph:
        """The board as a networkx graph (made on first use; the same nodes, attributes and edges)."""
        if self._graph is None:
            g = _nx().Graph()
            g.add_nodes_from((n, dict(a)) for n, a in self._attrs.items())
            g.add_edges_from(self._edges)
            self._graph = g
        return self._graph

    def edge_count(self) -> int:
        return len(self._edges)

    # -------------------------------------------------------------- searches (predicates are callables)
    # G (a game, or None) is charged one unit of work per node visited and per edge followed.
    def reachable(self, start: Node, steps: int, through: Optional[Func] = None,
                  G: Optional[RunningGame] = None) -> tuple[Node, ...]:
        """Nodes within `steps` moves of start, every node entered passing `through` (start excluded)."""
        if start not in self.adj:
            return ()
        dist = {start: 0}
        q = deque([start])
        while q:
            n = q.popleft()
            d = dist[n]
            if d >= steps:
                continue
            charge(G, len(self.adj[n]) + 1)
            for m in self.adj[n]:
                if m not in dist and (through is None or through(m)):
                    dist[m] = d + 1
                    q.append(m)
        return self._in_order(dist, start, G)

    def _in_order(self, found: Collection[Node], leave_out: Optional[Node], G: Optional[RunningGame]) -> tuple[Node, ...]:
        """The nodes in `found` (but leave_out) in board order, by the cheaper of two ways (same result)."""
        n = len(found)
        cost = n * n.bit_length()
        if cost < len(self.nodes):
            charge(G, cost + 1)
            return tuple(sort_values([x for x in found if x != leave_out]))
        charge(G, len(self.nodes))
        return tuple(x for x in self.nodes if x in found and x != leave_out)

    def distance(self, a: Node, b: Node, through: Optional[Func] = None,
                 G: Optional[RunningGame] = None) -> Optional[int]:
        """Shortest number of steps from a to b; every node strictly between passes `through`."""
        adj = self.adj
        if a not in adj or b not in adj:
            return None
        if a == b:
            return 0
        if through is None:
            table = self._distances_from(a)
            if table is not None:  # the walk's result and work, looked up
                found, whole = table
                hit = found.get(b)
                if hit is None:
                    charge(G, whole)
                    return None
                charge(G, hit[1])
                return hit[0]
        dist = {a: 0}
        q = deque([a])
        pop = q.popleft
        push = q.append
        while q:
            n = pop()
            near = adj[n]
            if G is not None:  # charge(G, len(near) + 1), inline
                G.work += len(near) + 1
                if G.work > G.work_mark:
                    over(G)
            d = dist[n] + 1
            for m in near:
                if m in dist:
                    continue
                if m == b:
                    return d
                if through is None or through(m):
                    dist[m] = d
                    push(m)
        return None

    def _distances_from(self, a: Node) -> Optional[DistanceTable]:
        """For a walk from `a` with no `through` test: node -> (steps, work the walk in distance() charges
        until it meets that node), and the work of the whole walk (for nodes it never meets). Boards never
        change, so each table is made once; None when the tables of this board already hold
        DISTANCE_TABLE_ENTRIES entries (a huge board is walked each time instead)."""
        table = self._distance_tables.get(a)
        if table is not None or self._distance_entries > DISTANCE_TABLE_ENTRIES:
            return table
        adj = self.adj
        steps = {a: 0}
        found: dict[Node, tuple[int, int]] = {}
        spent = 0
        q = deque([a])
        while q:  # the walk of distance(), to its end, noting the work spent when each node is met
            n = q.popleft()
            spent += len(adj[n]) + 1
            d = steps[n] + 1
            for m in adj[n]:
                if m not in steps:
                    steps[m] = d
                    found[m] = (d, spent)
                    q.append(m)
        self._distance_tables[a] = table = (found, spent)
        self._distance_entries += len(found) + 1
        return table

    def group(self, n: Node, where: Optional[Func] = None, G: Optional[RunningGame] = None) -> tuple[Node, ...]:
        if n not in self.adj or (where is not None and not where(n)):
            return ()
        seen = {n}
        q = deque([n])
        while q:
            x = q.popleft()
            charge(G, len(self.adj[x]) + 1)
            for m in self.adj[x]:
                if m not in seen and (where is None or where(m)):
                    seen.add(m)
                    q.append(m)
        return self._in_order(seen, None, G)

    def groups(self, where: Optional[Func] = None, G: Optional[RunningGame] = None) -> tuple[tuple[Node, ...], ...]:
        charge(G, (len(self.nodes) + self.edge_count()) * 2)
        keep = [n for n in self.nodes if where is None or where(n)]
        sub = self.graph.subgraph(keep)
        comps = [tuple(sorted(c, key=skey)) for c in _nx().connected_components(sub)]
        return tuple(sorted(comps, key=lambda c: skey(c[0])))

    def line_length(self, n: Node, where: Optional[Func] = None, G: Optional[RunningGame] = None) -> int:
        if n not in self.adj or not self.directions or (where is not None and not where(n)):
            return 0
        if n.__class__ is tuple and len(n) == 2:
            return self._line_length_2(n, where, G)
        best = 1
        adj = self.adj
        two = len(n) == 2
        walked = 0
        for d in self.directions:
            length = 1
            for sign in (1, -1):
                cur = n
                while True:
                    if two:
                        nxt = (cur[0] + sign * d[0], cur[1] + sign * d[1])
                    else:
                        nxt = tuple(c + sign * o for c, o in zip(cur, d))
                    if nxt not in adj or (where is not None and not where(nxt)):
                        break
                    walked += 1
                    length += 1
                    cur = nxt
            if length > best:
                best = length
        if walked > 8:
            charge(G, walked)
        return best


    def rays(self, n: Node) -> Optional[Rays]:
        """For a node (x, y) of a board with straight lines: per direction, the nodes ahead of n and behind
        it to the edge (listed at the first call); None for other nodes, or when the board keeps no more."""
        if n.__class__ is not tuple or len(n) != 2 or not self.directions:
            return None
        rays = self.known_rays.get(n)
        if rays is None and n in self.adj:
            rays = self._rays_of(n)
        return rays

    def _line_length_2(self, n: tuple[int, int], where: Optional[Func], G: Optional[RunningGame]) -> int:
        """line_length on a board of (x, y) nodes: the same walk, the same calls of `where` in the same
        order and the same charge as the general loop, along the node's rays (listed at its first walk)."""
        rays = self.known_rays.get(n)
        if rays is None:
            rays = self._rays_of(n)
            if rays is None:  # the rays kept for this board are at their limit
                return self._walk_2(n, where, G)
        best = 1
        walked = 0
        if where is None:
            for ahead, behind in rays:
                k = len(ahead) + len(behind)
                walked += k
                if k >= best:
                    best = k + 1
        else:
            for ahead, behind in rays:
                # takewhile asks `where` of each node in turn and stops at the first "no", as the walk does
                k = len(tuple(takewhile(where, ahead))) + len(tuple(takewhile(where, behind)))
                walked += k
                if k >= best:
                    best = k + 1
        if walked > 8:
            charge(G, walked)
        return best

    def _rays_of(self, n: tuple[int, int]) -> Optional[Rays]:
        """For each direction, the nodes from `n` onwards (not n itself) and backwards, to the board's edge."""
        on_board = self.adj.__contains__
        r0, c0 = n
        rays = tuple((tuple(takewhile(on_board, zip(count(r0 + dr, dr), count(c0 + dc, dc)))),
                      tuple(takewhile(on_board, zip(count(r0 - dr, -dr), count(c0 - dc, -dc)))))
                     for dr, dc in self.directions)
        size = sum(len(a) + len(b) + 2 for a, b in rays)
        if self._ray_items + size > MAX_RAY_ITEMS:
            return None
        self._ray_items += size
        self.known_rays[n] = rays
        return rays

    def _walk_2(self, n: tuple[int, int], where: Optional[Func], G: Optional[RunningGame]) -> int:
        """_line_length_2 without rays: the walk with plain numbers instead of tuples per step."""
        adj = self.adj
        r0, c0 = n
        best = 1
        walked = 0
        for dr, dc in self.directions:
            r = r0 + dr
            c = c0 + dc
            if where is None:
                while (r, c) in adj:
                    r += dr
                    c += dc
            else:
                while (r, c) in adj and where((r, c)):
                    r += dr
                    c += dc
            ahead = (r - r0) // dr if dr else (c - c0) // dc
            r = r0 - dr
            c = c0 - dc
            if where is None:
                while (r, c) in adj:
                    r -= dr
                    c -= dc
            else:
                while (r, c) in adj and where((r, c)):
                    r -= dr
                    c -= dc
            behind = (r0 - r) // dr if dr else (c0 - c) // dc
            length = ahead + behind - 1  # both walks stopped one step past the line
            walked += length - 1
            if length > best:
                best = length
        if walked > 8:
            charge(G, walked)
        return best


def square_grid(name: str, rows: int, cols: int, diagonals: bool = False, row_zero_at_top: bool = False) -> Board:
    """`row_zero_at_top` changes only how the board is drawn (row 0 is at the bottom by default)."""
    attrs = {(r, c): {"row": r, "column": c} for r in range(rows) for c in range(cols)}
    dirs = SQUARE_DIAG_DIRS if diagonals else SQUARE_DIRS
    edges = [((r, c), (r + dr, c + dc)) for r in range(rows) for c in range(cols) for dr, dc in dirs
             if (r + dr, c + dc) in attrs]
    # lines run along rows, columns and both diagonals even when adjacency is orthogonal only
    board = Board(name, attrs, edges, SQUARE_DIAG_DIRS)
    board.row_zero_at_top = bool(row_zero_at_top)
    return board


def hex_grid(name: str, radius: int) -> Board:
    attrs: dict[Node, Attrs] = {}
    for q in range(-radius, radius + 1):
        for r in range(max(-radius, -q - radius), min(radius, -q + radius) + 1):
            ring = max(abs(q), abs(r), abs(q + r))
            attrs[(q, r)] = {"q": q, "r": r, "ring": ring, "edge": ring == radius}
    edges = [(n, (n[0] + dq, n[1] + dr)) for n in attrs for dq, dr in HEX_AXIAL_DIRS
             if (n[0] + dq, n[1] + dr) in attrs]
    return Board(name, attrs, edges, HEX_AXIAL_DIRS)


def hex_rect(name: str, rows: int, cols: int) -> Board:
    """Offset rows: odd rows shifted half a hex to the right."""
    attrs = {(r, c): {"row": r, "column": c, "edge": r in (0, rows - 1) or c in (0, cols - 1)}
             for r in range(rows) for c in range(cols)}
    edges = [((r, c), (r + dr, c + dc)) for r in range(rows) for c in range(cols)
             for dr, dc in [(0, 1), (1, -1 + r % 2), (1, r % 2)] if (r + dr, c + dc) in attrs]
    return Board(name, attrs, edges, ())


def hex_rhombus(name: str, rows: int, cols: int) -> Board:
    """A rhombus of hexes (the board of Hex): nodes (row, column), each row shifted half a hex to the right
    of the one above; (r, c) touches (r, c - 1), (r, c + 1), (r - 1, c), (r - 1, c + 1), (r + 1, c - 1) and
    (r + 1, c). Straight lines run along the three hex axes."""
    attrs = {(r, c): {"row": r, "column": c, "edge": r in (0, rows - 1) or c in (0, cols - 1)}
             for r in range(rows) for c in range(cols)}
    edges = [((r, c), (r + dr, c + dc)) for r in range(rows) for c in range(cols)
             for dr, dc in [(0, 1), (1, 0), (1, -1)] if (r + dr, c + dc) in attrs]
    return Board(name, attrs, edges, [(0, 1), (1, 0), (1, -1)])


def line(name: str, n: int) -> Board:
    return Board(name, {i: {} for i in range(n)}, [(i, i + 1) for i in range(n - 1)], ())


def from_edges(name: str, chains: Iterable[Sequence[Node]], node_attrs: Iterable[tuple[Node, Attrs]]) -> Board:
    attrs: dict[Node, Attrs] = {}
    for nname, more in node_attrs:
        attrs.setdefault(nname, {}).update(more)
    edges: list[tuple[Node, Node]] = []
    for chain in chains:
        for a in chain:
            attrs.setdefault(a, {})
        edges.extend(zip(chain, chain[1:]))
    return Board(name, attrs, edges, ())


# nodes each generator makes, from its arguments (checked before building: see MAX_BOARD_NODES)
NODE_COUNTS: dict[str, Callable[..., Any]] = {
    "square_grid": lambda rows, cols, diagonals=False, row_zero_at_top=False: rows * cols,
    "hex_grid": lambda radius: 3 * radius * radius + 3 * radius + 1,
    "hex_rect": lambda rows, cols: rows * cols,
    "hex_rhombus": lambda rows, cols: rows * cols,
    "line": lambda n: n,
}
MAX_BOARD_NODES = 50_000  # nodes of all the boards of a game together


def node_count(kind: str, args: Sequence[Value], kwargs: dict[str, Value]) -> Optional[int]:
    """How many nodes `kind(*args, **kwargs)` would make, or None if the arguments do not fit it."""
    try:
        n = NODE_COUNTS[kind](*args, **kwargs)
    except (TypeError, KeyError):
        return None
    return n if n.__class__ is int else None


GENERATORS: dict[str, Callable[..., Board]] = {"square_grid": square_grid, "hex_grid": hex_grid, "hex_rect": hex_rect, "hex_rhombus": hex_rhombus,
              "line": line}

"""Diagrams of a rule file: the checked program as a graph, written as Mermaid, Graphviz DOT or SVG.

`build(program, only=SELECTIONS) -> Diagram` reads the checked program (rulelang.program.Program, as
`Ruleset.source_program` holds it) and makes one graph model; `to_mermaid`, `to_dot` and `to_svg`
write it. Nothing here knows a game: every node comes from a declaration or a statement.

What the graph holds (each part can be chosen with `only`):

* ``flow``: `setup`, `flow`, every phase and procedure the flow reaches (with "calls" edges; a call made
  inside a loop is labelled "repeats"), every `offer` statement (in the cluster of the phase or
  procedure holding it, labelled "turn: offer" inside a `turn`) with an "offers" edge to each action
  it offers, and the endings (`ending` declarations and the reasons of `end_game` / `trigger_end`)
  with an edge from where they are reached.
* ``actions``: every action with the variables and piece kinds it reads and changes: its `require`,
  `cost` and `effect`, and everything the procedures and functions it calls read and change (followed
  through calls). An edge `action -> var` says "changes" (the action may also read it), a dotted
  `var -> action` only "reads".
* ``events``: every event (declared or built in) and trigger: `event -> trigger` ("fires"), and every
  place that emits an event (`emit`, a `turn` emits turn_start / turn_end, an `offer` action_done,
  setup game_start), followed through procedure calls, so a trigger whose effect emits an event has
  the cascade edge `trigger -> event`.

Node ids are stable text ("action:NAME", "var:NAME", "trigger:3", ...): the SVG keeps them as each
node's <title>, so a test or a tool can find them.
"""
from __future__ import annotations

import json
import shutil
import subprocess

import attrs

from . import ast as A

SELECTIONS = ("flow", "actions", "events")
FORMATS = ("mermaid", "dot", "svg")
DOT_TIMEOUT = 60  # seconds Graphviz may take to lay out one diagram
MAX_LABEL = 60  # characters of a node label
MERMAID_MAX_EDGES = 500  # Mermaid's default `maxEdges`: a larger flowchart is refused unless it is raised

# node kinds: their shape in DOT and Mermaid
_DOT_SHAPES = {
    "setup": "house", "flow": "house", "phase": "box3d", "procedure": "box", "offer": "cds",
    "action": "box", "var": "cylinder", "piece": "folder", "event": "ellipse", "trigger": "hexagon",
    "ending": "doubleoctagon",
}
_DOT_FILL = {
    "setup": "#e8e8e8", "flow": "#e8e8e8", "phase": "#dbe9f6", "procedure": "#f2f2f2", "offer": "#fff2cc",
    "action": "#d5f5d5", "var": "#fbe5d6", "piece": "#fbe5d6", "event": "#e4dcf5", "trigger": "#f8d7e3",
    "ending": "#f4cccc",
}
_MERMAID_SHAPES = {  # (open, close)
    "setup": ("[/", "/]"), "flow": ("[/", "/]"), "phase": ("[[", "]]"), "procedure": ("[", "]"),
    "offer": (">", "]"), "action": ("(", ")"), "var": ("[(", ")]"), "piece": ("[(", ")]"),
    "event": ("([", "])"), "trigger": ("{{", "}}"), "ending": ("(((", ")))"),
}


class GraphError(Exception):
    """The diagram cannot be made (Graphviz missing or failing): a one-line message."""


@attrs.define
class Node:
    id: str
    label: str
    kind: str
    cluster: str = ""  # the id of the phase/procedure cluster it is drawn in ("" none)
    where: str = ""  # path:line:col of its declaration or statement


@attrs.define
class Edge:
    src: str
    dst: str
    kind: str  # calls, offers, reads, changes, emits, fires, ends
    label: str = ""


@attrs.define
class Diagram:
    title: str
    nodes: dict = attrs.Factory(dict)  # id -> Node, in insertion order
    edges: list = attrs.Factory(list)
    clusters: dict = attrs.Factory(dict)  # cluster id -> label

    def add(self, node):
        if node.id not in self.nodes:
            self.nodes[node.id] = node
        return node.id

    def link(self, src, dst, kind, label=""):
        e = Edge(src, dst, kind, label)
        if not any(x.src == src and x.dst == dst and x.kind == kind for x in self.edges):
            self.edges.append(e)


def _short(text):
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 3] + "..."


# ---------------------------------------------------------------------------- the analysis
@attrs.define
class _Facts:
    """What one block of rules does, directly (before following calls)."""
    reads: set = attrs.Factory(set)  # ("var"|"piece", name)
    writes: set = attrs.Factory(set)
    calls: list = attrs.Factory(list)  # (procedure name, in a loop)
    funcs: set = attrs.Factory(set)
    offers: list = attrs.Factory(list)  # (Offer stmt, in a turn, in a loop)
    emits: set = attrs.Factory(set)  # event names
    ends: list = attrs.Factory(list)  # (reason, "end_game"|"trigger_end")


def _root(expr):
    while isinstance(expr, (A.Index, A.Field)):
        expr = expr.target
    return expr


class _Analyser:
    def __init__(self, program):
        self.program = program
        self.pieces = {d.name for d in program.decls.values() if isinstance(d, A.PieceDecl)}

    def _place(self, expr, out):
        """Record a write to the place `expr` (a variable, an item of one, a field of a piece)."""
        if expr is None:
            return
        root = _root(expr)
        if isinstance(root, A.Name) and root.ref == "var":
            out.writes.add(("var", root.ident))
        cur = expr
        while isinstance(cur, (A.Index, A.Field)):
            if isinstance(cur, A.Field) and getattr(cur.target.ty, "name", None) in self.pieces:
                out.writes.add(("piece", cur.target.ty.name))
                break
            cur = cur.target

    def facts(self, obj):
        out = _Facts()
        self._walk(obj, out, in_turn=False, in_loop=False)
        return out

    def _walk(self, obj, out, in_turn, in_loop):
        if isinstance(obj, (list, tuple)):
            for x in obj:
                self._walk(x, out, in_turn, in_loop)
            return
        if not attrs.has(type(obj)):
            return
        if isinstance(obj, A.Name):
            if obj.ref == "var":
                out.reads.add(("var", obj.ident))
            elif obj.ref == "pieces":
                out.reads.add(("piece", obj.ident))
            return
        if isinstance(obj, A.Field) and getattr(obj.target.ty, "name", None) in self.pieces:
            out.reads.add(("piece", obj.target.ty.name))
        if isinstance(obj, A.Call) and isinstance(obj.func, A.Name):
            if obj.func.ref == "proc":
                out.calls.append((obj.func.ident, in_loop))
            elif obj.func.ref == "func" or isinstance(self.program.decls.get(obj.func.ident), A.FuncDecl):
                out.funcs.add(obj.func.ident)
        elif isinstance(obj, A.Assign):
            self._place(obj.target, out)
        elif isinstance(obj, (A.Add, A.DrawInto)):
            self._place(obj.target, out)
            if isinstance(obj, A.DrawInto):
                self._place(obj.pile, out)
        elif isinstance(obj, A.Remove):
            self._place(obj.source, out)
        elif isinstance(obj, A.Move):
            self._place(obj.source, out)
            self._place(obj.target, out)
        elif isinstance(obj, A.Shuffle):
            self._place(obj.pile, out)
            self._place(obj.source, out)
        elif isinstance(obj, A.Draw):
            self._place(obj.pile, out)
        elif isinstance(obj, A.Reveal):
            self._place(obj.item, out)
        elif isinstance(obj, A.New):
            out.writes.add(("piece", obj.kind))
        elif isinstance(obj, A.Destroy):
            kind = getattr(obj.piece.ty, "name", None)
            if kind in self.pieces:
                out.writes.add(("piece", kind))
        elif isinstance(obj, A.Offer):
            out.offers.append((obj, in_turn, in_loop))
            out.emits.add("action_done")
        elif isinstance(obj, A.Turn):
            out.emits.update(("turn_start", "turn_end"))
            self._walk(obj.player, out, in_turn, in_loop)
            self._walk(obj.body, out, True, in_loop)
            return
        elif isinstance(obj, (A.Loop, A.While, A.For, A.Repeat)):
            for name in A._child_fields(type(obj)):
                self._walk(getattr(obj, name), out, in_turn, name == "body" or in_loop)
            return
        elif isinstance(obj, A.Emit):
            out.emits.add(obj.event)
        elif isinstance(obj, (A.EndGame, A.TriggerEnd)):
            what = "end_game" if isinstance(obj, A.EndGame) else "trigger_end"
            if obj.reason_expr is None:
                out.ends.append((obj.reason or "", what))
            else:  # the texts its expression may give
                texts = [n.value for n in A.walk(obj.reason_expr)
                         if isinstance(n, A.Literal) and isinstance(n.value, str)]
                out.ends.extend((t, what) for t in texts or [""])
        for child in A.iter_child_nodes(obj):
            self._walk(child, out, in_turn, in_loop)


def _closure(start, direct, follow):
    """Every fact set reached from `start` through `follow(facts) -> names` (calls), each visited once."""
    seen = set()
    todo = [start]
    got = []
    while todo:
        name = todo.pop()
        if name in seen or name not in direct:
            continue
        seen.add(name)
        got.append(direct[name])
        todo.extend(follow(direct[name]))
    return got


def build(program, only=SELECTIONS):
    """The diagram of a checked program (`Ruleset.source_program`), with the parts named in `only`."""
    only = tuple(only) or SELECTIONS
    for part in only:
        if part not in SELECTIONS:
            raise ValueError(f"unknown part {part!r} (the parts are {', '.join(SELECTIONS)})")
    an = _Analyser(program)
    decls = program.decls
    title = program.game.title if program.game is not None else "rules"
    d = Diagram(title)

    procs = {n: x for n, x in decls.items() if isinstance(x, A.ProcDecl)}
    actions = {n: x for n, x in decls.items() if isinstance(x, A.ActionDecl)}
    funcs = {n: x for n, x in decls.items() if isinstance(x, A.FuncDecl)}
    events = [x for x in decls.values() if isinstance(x, A.EventDecl)]
    triggers = list(program.triggers)
    endings = list(program.endings)

    # direct facts per block: ("proc", name), ("action", name), ("func", name), ("trigger", i), ("ending", name)
    direct = {}
    for n, p in procs.items():
        direct[("proc", n)] = an.facts(p.body)
    for n, a in actions.items():
        f = an.facts([a.params, [r.test for r in a.requires], [(c.target, c.amount) for c in a.costs], a.effect])
        for c in a.costs:  # paying a cost changes what it is paid from
            an._place(c.target, f)
        direct[("action", n)] = f
    for n, fn in funcs.items():
        direct[("func", n)] = an.facts(fn.body)
    for i, t in enumerate(triggers):
        direct[("trigger", i)] = an.facts([t.condition, t.body])
    for e in endings:
        direct[("ending", e.name)] = an.facts(e.condition)

    def follow_all(f):
        return [("proc", c) for c, _ in f.calls] + [("func", c) for c in f.funcs]

    def follow_procs(f):
        return [("proc", c) for c, _ in f.calls]

    def where(x):
        return x.span.where() if getattr(x, "span", None) is not None else ""

    def proc_id(name):
        p = procs[name]
        return p.proc_kind if p.proc_kind in ("setup", "flow") else ("phase:" if p.proc_kind == "phase" else "proc:") + name

    def ending_id(reason):
        return "ending:" + (reason or "(end_game)")

    def add_ending(reason, x=None):
        label = f"ending: {reason}" if reason else "the game ends"
        return d.add(Node(ending_id(reason), _short(label), "ending", where=where(x) if x is not None else ""))

    want_flow = "flow" in only
    want_actions = "actions" in only
    want_events = "events" in only

    # ------------------------------------------------------------------ flow
    if want_flow:
        roots = [n for n in procs if procs[n].proc_kind in ("setup", "flow")]
        reached = []
        todo = list(roots)
        while todo:
            n = todo.pop(0)
            if n in reached or n not in procs:
                continue
            reached.append(n)
            todo.extend(c for c, _ in direct[("proc", n)].calls)
        for n in reached:
            p = procs[n]
            kind = p.proc_kind if p.proc_kind in ("setup", "flow", "phase") else "procedure"
            pid = proc_id(n)
            cluster = pid if kind in ("setup", "flow", "phase") else ""
            if cluster:
                d.clusters[cluster] = {"setup": "setup", "flow": "flow"}.get(kind, f"phase {n}")
            label = n if kind in ("setup", "flow") else (f"phase {n}" if kind == "phase" else f"procedure {n}")
            d.add(Node(pid, label, kind, cluster, where(p)))
        for n in reached:
            f = direct[("proc", n)]
            pid = proc_id(n)
            cluster = d.nodes[pid].cluster
            for c, in_loop in f.calls:
                if c in procs:
                    d.link(pid, proc_id(c), "calls", "repeats" if in_loop else "")
            for k, (offer, in_turn, in_loop) in enumerate(f.offers):
                oid = f"offer:{n}:{offer.span.line}:{offer.span.column}"
                label = ("turn: offer" if in_turn else "offer") + (" (repeats)" if in_loop else "")
                d.add(Node(oid, label, "offer", cluster, where(offer)))
                d.link(pid, oid, "calls")
                for a in offer.actions:
                    if a in actions:
                        d.add(Node("action:" + a, a, "action", where=where(actions[a])))
                        d.link(oid, "action:" + a, "offers")
            for reason, how in f.ends:
                d.link(pid, add_ending(reason), "ends", how)
        for n, a in actions.items():
            d.add(Node("action:" + n, n, "action", where=where(a)))
            for reason, how in direct[("action", n)].ends:
                d.link("action:" + n, add_ending(reason), "ends", how)
        # an action offered by one phase only is drawn inside it
        offered_in = {}
        for e in d.edges:
            if e.kind == "offers":
                offered_in.setdefault(e.dst, set()).add(d.nodes[e.src].cluster)
        for aid, clusters in offered_in.items():
            if len(clusters) == 1 and "" not in clusters:
                d.nodes[aid].cluster = next(iter(clusters))
        for e in endings:
            add_ending(e.name, e)

    # ------------------------------------------------------------------ actions: reads and changes
    if want_actions:
        for n, a in actions.items():
            aid = d.add(Node("action:" + n, n, "action", where=where(a)))
            reads, writes = set(), set()
            for f in _closure(("action", n), direct, follow_all):
                reads |= f.reads
                writes |= f.writes
            for kind, name in sorted(writes):
                vid = d.add(_value_node(kind, name, decls))
                d.link(aid, vid, "changes")
            for kind, name in sorted(reads - writes):
                vid = d.add(_value_node(kind, name, decls))
                d.link(vid, aid, "reads")
        for e in endings:
            eid = add_ending(e.name, e)
            reads = set()
            for f in _closure(("ending", e.name), direct, follow_all):
                reads |= f.reads
            for kind, name in sorted(reads):
                d.link(d.add(_value_node(kind, name, decls)), eid, "reads")

    # ------------------------------------------------------------------ events and triggers
    if want_events:
        from .library import BUILTIN_EVENTS

        for name in BUILTIN_EVENTS:
            d.add(Node("event:" + name, f"event {name}", "event"))
        for e in events:
            d.add(Node("event:" + e.name, f"event {e.name}", "event", where=where(e)))
        for i, t in enumerate(triggers):
            tid = f"trigger:{i}"
            label = f"when {t.event}" + (" if ..." if t.condition is not None else "")
            if t.name and t.name != f"when {t.event}":
                label = t.name
            label += f" (line {t.span.line})"  # several triggers of one event differ by their place
            d.add(Node(tid, _short(label), "trigger", where=where(t)))
            d.link("event:" + t.event, tid, "fires")
            emitted = set()
            ends = []
            for f in _closure(("trigger", i), direct, follow_procs):
                emitted |= f.emits
                ends.extend(f.ends)
            for ev in sorted(emitted):
                d.add(Node("event:" + ev, f"event {ev}", "event"))
                d.link(tid, "event:" + ev, "emits")
            for reason, how in ends:
                d.link(tid, add_ending(reason), "ends", how)
        # who else emits: setup (game_start), the blocks holding turns, offers and emit statements
        sources = [(proc_id(n), ("proc", n)) for n in procs] + [("action:" + n, ("action", n)) for n in actions]
        for nid, key in sources:
            emitted = set(direct[key].emits)
            if key == ("proc", "setup") or (key[0] == "proc" and procs[key[1]].proc_kind == "setup"):
                emitted.add("game_start")
            if not emitted:
                continue
            if nid not in d.nodes:
                p = procs.get(key[1]) if key[0] == "proc" else actions.get(key[1])
                kind = "action" if key[0] == "action" else (
                    p.proc_kind if p.proc_kind in ("setup", "flow", "phase") else "procedure")
                label = key[1] if kind in ("setup", "flow", "action") else f"{'phase' if kind == 'phase' else 'procedure'} {key[1]}"
                d.add(Node(nid, label, kind, where=where(p)))
            for ev in sorted(emitted):
                d.add(Node("event:" + ev, f"event {ev}", "event"))
                d.link(nid, "event:" + ev, "emits")
        if "setup" not in procs:
            d.add(Node("setup", "setup", "setup"))
            d.link("setup", "event:game_start", "emits")
    # clusters that kept no node are dropped
    used = {n.cluster for n in d.nodes.values()}
    d.clusters = {c: label for c, label in d.clusters.items() if c in used}
    return d


def _value_node(kind, name, decls):
    x = decls.get(name)
    where = x.span.where() if x is not None else ""
    if kind == "piece":
        return Node("piece:" + name, f"pieces {name}", "piece", where=where)
    per = "per player " if getattr(x, "per_player", False) else ""
    return Node("var:" + name, f"{per}{name}", "var", where=where)


# ---------------------------------------------------------------------------- writers
def _dot_quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


_DOT_EDGE_STYLE = {
    "calls": "", "offers": 'color="#2e7d32"', "reads": 'style=dashed color="#888888"',
    "changes": 'color="#c55a11"', "emits": 'color="#5e35b1"', "fires": 'color="#5e35b1" style=bold',
    "ends": 'color="#c00000"',
}


def to_dot(d):
    """Graphviz DOT text of the diagram (clusters per setup, flow and phase)."""
    lines = [f"digraph {_dot_quote(d.title)} {{",
             "  graph [rankdir=LR fontname=Helvetica fontsize=12 labelloc=t "
             f"label={_dot_quote(d.title)}];",
             "  node [fontname=Helvetica fontsize=10 style=filled];",
             "  edge [fontname=Helvetica fontsize=9];"]

    def node_line(n):
        return (f"    {_dot_quote(n.id)} [label={_dot_quote(n.label)} shape={_DOT_SHAPES[n.kind]} "
                f"fillcolor={_dot_quote(_DOT_FILL[n.kind])}"
                + (f" tooltip={_dot_quote(n.where)}" if n.where else "") + "];")

    for i, (cid, label) in enumerate(d.clusters.items()):
        lines.append(f"  subgraph {_dot_quote('cluster_' + cid)} {{")
        lines.append(f"    label={_dot_quote(label)}; style=rounded; color=\"#7f9fbf\";")
        lines.extend(node_line(n) for n in d.nodes.values() if n.cluster == cid)
        lines.append("  }")
    lines.extend(node_line(n)[2:] for n in d.nodes.values() if n.cluster not in d.clusters)
    for e in d.edges:
        attrs_ = [_DOT_EDGE_STYLE.get(e.kind, "")]
        label = e.label or ("" if e.kind in ("calls", "offers", "changes", "reads", "fires", "emits") else e.kind)
        if label:
            attrs_.append(f"label={_dot_quote(label)}")
        attrs_.append(f"tooltip={_dot_quote(e.kind)}")
        lines.append(f"  {_dot_quote(e.src)} -> {_dot_quote(e.dst)} [{' '.join(a for a in attrs_ if a)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _mermaid_id(ids, nid):
    return ids.setdefault(nid, f"n{len(ids)}")


def _mermaid_text(text):
    """A quoted Mermaid label: `#`, quotes and angle brackets as Mermaid's entity codes (#quot; ...)."""
    text = str(text).replace("#", "#35;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")
    return '"' + text + '"'


_MERMAID_ARROWS = {"calls": "-->", "offers": "==>", "reads": "-.->", "changes": "-->", "emits": "-->",
                   "fires": "==>", "ends": "-->"}


def to_mermaid(d):
    """Mermaid flowchart text of the diagram (subgraphs per setup, flow and phase)."""
    ids = {}
    lines = ["---", f"title: {json.dumps(d.title)}", "---", "flowchart LR"]
    if len(d.edges) > MERMAID_MAX_EDGES:
        lines.append(f"  %% {len(d.edges)} edges: Mermaid draws at most {MERMAID_MAX_EDGES} unless its maxEdges "
                     "setting is raised; draw a part (--only) or use --format dot or svg")

    def node_line(n, indent):
        o, c = _MERMAID_SHAPES[n.kind]
        return f"{indent}{_mermaid_id(ids, n.id)}{o}{_mermaid_text(n.label)}{c}"

    for cid, label in d.clusters.items():
        lines.append(f"  subgraph {_mermaid_id(ids, 'cluster:' + cid)}[{_mermaid_text(label)}]")
        lines.extend(node_line(n, "    ") for n in d.nodes.values() if n.cluster == cid)
        lines.append("  end")
    lines.extend(node_line(n, "  ") for n in d.nodes.values() if n.cluster not in d.clusters)
    for e in d.edges:
        arrow = _MERMAID_ARROWS.get(e.kind, "-->")
        label = e.label or ("reads" if e.kind == "reads" else "changes" if e.kind == "changes" else "")
        text = f"|{_mermaid_text(label)}|" if label else ""
        lines.append(f"  {_mermaid_id(ids, e.src)} {arrow}{text} {_mermaid_id(ids, e.dst)}")
    for n in d.nodes.values():
        lines.append(f"  class {_mermaid_id(ids, n.id)} {n.kind}")
    for kind, fill in _DOT_FILL.items():
        lines.append(f"  classDef {kind} fill:{fill}")
    return "\n".join(lines) + "\n"


def dot_program():
    """The path of Graphviz's `dot`, or raise GraphError saying what to install."""
    path = shutil.which("dot")
    if path is None:
        raise GraphError("Graphviz's 'dot' program is not installed (needed for --format svg): install the "
                         "Graphviz package (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz), "
                         "or write --format dot or mermaid")
    return path


def to_svg(d, timeout=DOT_TIMEOUT):
    """SVG of the diagram, laid out by Graphviz's `dot` (raises GraphError when it is missing or fails)."""
    return render_dot(to_dot(d), timeout)


def render_dot(text, timeout=DOT_TIMEOUT):
    """SVG text for DOT text, by Graphviz's `dot` (bounded in time)."""
    exe = dot_program()
    try:
        done = subprocess.run([exe, "-Tsvg"], input=text.encode("utf-8"), capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GraphError(f"Graphviz took more than {timeout} seconds to lay out the diagram; "
                         "draw a part of it (--only flow, actions or events)") from None
    except OSError as e:
        raise GraphError(f"cannot run Graphviz's 'dot': {e.strerror or e}") from None
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GraphError(f"Graphviz failed: {err[0] if err else 'exit code ' + str(done.returncode)}")
    return done.stdout.decode("utf-8")


def render(program, fmt="mermaid", only=SELECTIONS):
    """The diagram of `program` as text in `fmt` (mermaid, dot or svg)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (the formats are {', '.join(FORMATS)})")
    d = build(program, only)
    if fmt == "dot":
        return to_dot(d)
    if fmt == "svg":
        return to_svg(d)
    return to_mermaid(d)

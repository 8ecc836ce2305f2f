"""Lints: warnings about rules that are legal but probably not what the author meant.

Each lint is a function registered with @lint(code) (rulelang/lint_registry.py); it receives the finished
Checker and reports through checker.warn / checker.err. Add a lint by writing one function here. The
deeper static checks are in lints_static.py and lints_flow.py; LINTS below runs all of them in order.
A lint with a W code reports no errors (warnings and notes only): a check that keeps only errors leaves
it out.
"""
from __future__ import annotations

import re
from typing import Any, Iterator, Optional

from . import ast as A
from . import lints_flow, lints_static
from .diagnostics import NOTE
from .lint_registry import CheckResults, registry
from .lints_static import _game_nodes, _nodes, _scenario_nodes
from .program import read_rulebook
from .suppress import without_allowed

BASIC_LINTS, lint = registry()  # the lints of this module


def run_lints(checker: CheckResults, warnings: bool = True) -> None:
    """Run every lint on the finished checker; ``warnings=False``: only those that may report an error."""
    for code, fn in LINTS:
        if warnings or not code.startswith("W"):
            fn(checker, code)
    checker.diags = without_allowed(checker.diags)  # `# allow: CODE` on a warning's line hides it


@lint("E108")
def has_flow(c: CheckResults, code: str) -> None:
    if "flow" not in c.prog.decls and c.prog.game is not None:
        c.err(c.prog.game.span, code, "the game has no flow",
              hint="add: flow { loop { for p in players { turn p { offer [ACTIONS] to p } } } }")


@lint("W301")
def can_end(c: CheckResults, code: str) -> None:
    if c.prog.game is None or "flow" not in c.prog.decls:
        return
    if c.ends or c.prog.endings:
        return
    flow = c.prog.decls["flow"]
    if any(isinstance(n, A.Loop) for n in A.walk(flow.body)):
        c.warn(c.prog.game.span, code, "the game has no way to end",
               hint='add an ending "name" when CONDITION, or end_game "name" in the flow')


@lint("W302")
def endless_loops(c: CheckResults, code: str) -> None:
    if c.ends or c.prog.endings:
        return  # the game can end from elsewhere (an ending, or end_game in an action)
    for loop in c.endless_loops:
        c.warn(loop.span, code, "this loop has no break, return or end_game inside, and the game has no ending",
               hint="the game can never finish; add an ending or an end_game")


def _reachable(c: CheckResults) -> set[str]:
    graph = c.calls
    start = ["setup", "flow"] + [t.name for t in c.prog.triggers]
    seen: set[str] = set()
    todo = list(start)
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        for m in graph.get(n, ()):
            todo.append(m[len("action:"):] if m.startswith("action:") else m)
    return seen


@lint("W303")
def unreachable_procs(c: CheckResults, code: str) -> None:
    seen = _reachable(c)
    for d in c.prog.of_kind("procedure"):
        if d.proc_kind in ("phase", "procedure") and d.name not in seen:
            word = "phase" if d.proc_kind == "phase" else "procedure"
            c.warn(d.span, code, f"{word} '{d.name}' can never be reached",
                   hint="nothing reachable from setup, flow, the offered actions or the triggers calls it")


@lint("W304")
def unoffered_actions(c: CheckResults, code: str) -> None:
    seen = _reachable(c)
    for d in c.prog.of_kind("action"):
        if d.name not in c.offered:
            c.warn(d.span, code, f"action '{d.name}' is never offered", hint=f"add it to an offer: offer [{d.name}] to PLAYER")
        elif d.name not in seen:
            c.warn(d.span, code, f"action '{d.name}' is only offered from places that are never reached")


@lint("W305")
def unused_vars(c: CheckResults, code: str) -> None:
    for d in c.prog.of_kind("var"):
        if d.name not in c.var_reads and d.name not in c.var_writes:
            c.warn(d.span, code, f"variable '{d.name}' is never used")


@lint("W307")
def unemitted_events(c: CheckResults, code: str) -> None:
    for d in c.prog.of_kind("event"):
        if d.name not in c.emitted:
            c.warn(d.span, code, f"event '{d.name}' is never emitted", hint=f"emit {d.name}(...) where it happens")


@lint("W308")
def uncited_placeholder_rules(c: CheckResults, code: str) -> None:
    """An invented rule stands only for a mechanic the rulebook names: it must say where (`@rule`)."""
    for d in c.prog.decls.values():
        if isinstance(d, (A.ProcDecl, A.FuncDecl, A.ActionDecl)) and d.placeholder is not None:
            if not any(getattr(n, "cites", None) for n in A.walk(d)):
                kind = d.proc_kind if isinstance(d, A.ProcDecl) else d.kind
                c.warn(d.span, code, f"placeholder {kind} '{d.name}' cites no rule: an invented rule must stand "
                                     "for a mechanic the rulebook names",
                       hint=f'put @rule "SECTION" (where the rulebook names it) before {kind} {d.name}')


SECTION_RE = re.compile(r"^## \[([A-Z]-[\d.]+(?:-en)?)\]", re.M)


def rulebook_sections(c: CheckResults) -> tuple[Optional[set[str]], Optional[str]]:
    """The section ids of the header's rulebook, or why it was not read (see program.read_rulebook)."""
    text, problem = read_rulebook(c.prog)
    return (None, problem) if text is None else (set(SECTION_RE.findall(text)), None)


@lint("W306")
def unknown_citations(c: CheckResults, code: str) -> None:
    game = c.prog.game
    if game is None or not game.rulebook:
        return
    ids, problem = rulebook_sections(c)
    if ids is None:
        if problem == "no such file":
            # A rulebook is often not the rule file author's to ship (it stays beside the repository, not in
            # it): its absence is said quietly, as a note, and the file checks clean without it.
            c.err(game.span, code, f"the rulebook '{game.rulebook}' is not there; citations are not checked",
                  hint="put the rulebook at that path (relative to this file) to check citations against it",
                  severity=NOTE)
            return
        c.warn(game.span, code, f"cannot read the rulebook '{game.rulebook}' ({problem}); citations are not checked",
               hint="the path is relative to this file")
        return
    for node in _cited_nodes(c):
        for cid in node.cites:
            if cid not in ids:
                close = [i for i in ids if i.startswith(cid.split(".")[0])]
                c.warn(node.span, code, f"'{cid}' is not a section of the rulebook",
                       hint=("sections like it: " + ", ".join(sorted(close)[:6])) if close else "")


def _cited_nodes(c: CheckResults) -> Iterator[Any]:
    """Every node that cites rulebook sections: the game's rules (the node list the static checks walk
    once per check) and then invariants, scenarios and variants."""
    game = _game_nodes(c)
    prog = c.prog
    # the nodes of invariants, scenarios and variants, each once, in that order: the scenarios' are
    # the list the static checks keep (less any node an invariant holds)
    seen: set[int] = set()
    extra = _nodes(prog.invariants, seen)
    extra += [n for n in _scenario_nodes(c) if id(n) not in seen]
    seen.update(id(n) for n in extra)
    extra += _nodes(list(prog.variants.values()), seen)
    in_game = {id(n) for n in game}
    extra = [n for n in extra if id(n) not in in_game]
    for n in game + extra:
        if getattr(n, "cites", None):
            yield n


# every lint, in the order `rulelang check` runs them: this module's, the deeper static checks (W310-W315),
# then W316
LINTS = BASIC_LINTS + lints_static.LINTS + lints_flow.LINTS

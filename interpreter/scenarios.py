"""Scenarios: executable rulebook examples (given / when / then), run by `rulelang test` and pytest.

A scenario starts a new game (its players, seed and variants; chance decisions explicit), runs the
`given` statements (which may set variables directly), takes the `when` steps (`play "id"`,
`chance "outcome"`), then checks every `expect` of `then`. A chance decision that no `chance` step
forces is drawn from the scenario's seeded sampler when the next `play` needs a player decision.

The rules' invariants are checked after setup and after every decision the scenario takes (its `play`
and `chance` steps, and the outcomes its sampler draws): a decision that breaks one fails the scenario,
with the invariant's name and the step (each invariant once, until it holds again). From the first
`given` block that changes the state directly (an assignment, a piece made ...), they are no longer
checked: such a position may be one the rules never reach, and the invariants speak of those they reach.

A scenario written `scenario "B" after "A"` continues A: it runs A's blocks (and those of the scenario A
continues, and so on) before its own, with the players, seed, chance mode and variants of the first
scenario of that chain, in one game; A's locals are known in B's blocks.

Every failure is reported, in the order met: each failing `expect`, each broken invariant, and the step
that could not be taken (which ends the scenario). Values are shown as a rule file writes them.
"""
from __future__ import annotations

import json
import os
import random
import re

from typing import TYPE_CHECKING, Any, Optional

import attrs

import rulelang
from rulelang import ast as A
from rulelang.diagnostics import RuleError

from .builtins import RuleRuntimeError, start_work
from .closures import StmtCompiler
from .errors import GameError, IllegalAction
from .values import fmt, skey

if TYPE_CHECKING:
    from rulelang.program import Program

    from .game import Game
    from .ruleset import Ruleset


@attrs.define
class ScenarioResult:
    name: str
    path: str
    line: int
    passed: bool
    message: str = ""  # every failure, one a line (in the order met)
    cites: tuple = ()
    failures: list = attrs.Factory(list)  # the failures, each "path:line: what"


class ScenarioFailure(Exception):
    pass


class Driver:
    """Performs scenario steps for the ops of a scenario block."""

    def __init__(self, seed: Optional[int], invariants: bool = False) -> None:
        self.rng = random.Random(seed)
        self.failures: list[tuple[Any, str]] = []  # (span, text), in the order met
        self.span: Any = None
        self.invariants = invariants  # check the rules' invariants after each decision taken
        self.broken: set[str] = set()  # the invariants that do not hold now (reported when a decision breaks them)
        self.steps = 0  # play and chance steps taken
        self.setup_drawn: list[str] = []  # setup's chance outcomes drawn by the sampler (the scenario did not force them)

    def value(self, G: Game, name: str) -> Any:
        if name == "legal":
            return tuple(a.id for a in G.legal_actions())
        if name == "over":
            return G.is_over()
        if name == "winners":
            return tuple(G.winners())
        if name == "scores":
            return tuple(G.scores())
        if name == "end_reason":
            return G.end_reason
        if name == "decider":
            return G.current_player
        raise RuleRuntimeError(f"unknown scenario value {name}")

    def settle_chance(self, G: Game, before: str = "") -> list[str]:
        """Draw the pending chance decisions from the sampler; returns the outcomes drawn."""
        drawn = []
        while not G.is_over() and G.is_chance():
            outcomes = G.chance_outcomes()
            acts = [a for a, _ in outcomes]
            weights = [p for _, p in outcomes]
            act = self.rng.choices(acts, weights)[0]
            G.apply(act)
            drawn.append(act.id if hasattr(act, "id") else str(act))
            self.check_invariants(G, f"the chance outcome {rule_text(drawn[-1])} drawn by the scenario's sampler"
                                     + (f" {before}" if before else ""))
        return drawn

    def check_invariants(self, G: Game, after: str) -> None:
        """Check the rules' invariants after a decision (`after` says which): each one this decision broke
        is a failure of the scenario."""
        if not self.invariants:
            return
        now: dict[str, str] = {}
        for name, _where, message in G.check_invariants():
            now.setdefault(name, message)
        for name, message in now.items():
            if name not in self.broken:
                count = f" (decision {len(G.log)} of the game)" if G.log else ""
                self.failures.append((self.span, f"{message} after {after}{count}"))
        self.broken = set(now)

    @staticmethod
    def _apply(G: Game, value: Any) -> None:
        try:
            G.apply(value if isinstance(value, str) else fmt(value))
        except IllegalAction as e:
            raise ScenarioFailure(str(e)) from None

    def step(self, G: Game, kind: str, value: Any) -> None:
        if kind == "play":
            aid = value if isinstance(value, str) else fmt(value)
            self.settle_chance(G, f"before play {rule_text(aid)}")
            if G.is_over():
                raise ScenarioFailure(f"cannot play {rule_text(aid)}: the game is over ({G.end_reason})")
            seat = G.current_player
            self._apply(G, aid)
            self.steps += 1
            self.check_invariants(G, f"play {rule_text(aid)} (by P{seat})")
        elif kind == "chance":
            aid = value if isinstance(value, str) else fmt(value)
            if not G.is_chance():
                raise ScenarioFailure(self._no_chance(G, aid))
            self._apply(G, aid)
            self.steps += 1
            self.check_invariants(G, f"chance {rule_text(aid)}")
        elif kind == "expect":
            ok, msg, detail = value
            if ok is not True:
                text = msg or "expectation failed"
                if isinstance(detail, tuple):  # (left value, its type, right value, its type)
                    lv, lt, rv, rt = detail
                    detail = f"left side is {rule_text(lv, lt)}, right side is {rule_text(rv, rt)}"
                if detail:
                    text += f" ({detail})"
                self.failures.append((self.span, text))
        return None

    def _no_chance(self, G: Game, aid: str) -> str:
        """Why `chance aid` cannot be taken now, and what to write instead."""
        if G.is_over():
            now = f"the game is over ({G.end_reason})"
        else:
            now = f"P{G.current_player} to decide" + (f": {G.prompt}" if G.prompt else "")
        text = f"chance {rule_text(aid)}: no chance decision is pending (now: {now})"
        if self.setup_drawn and self.steps == 0:
            drawn = ", ".join(rule_text(x) for x in self.setup_drawn[:10]) + (", ..." if len(self.setup_drawn) > 10
                                                                              else "")
            text += (f"; setup's random outcomes were already drawn by the scenario's sampler ({drawn}), because "
                     "the scenario's first step is not a chance step: to force them, write the chance steps first, "
                     "before anything else in the first block (a given describes the position after setup)")
        return text


_BARE = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*$")


def rule_text(v: Any, ty: Any = None) -> str:
    """A value as a rule file writes it: texts quoted ("advance((3,7))"), lists in [..], tuples in (..),
    sets in {..}, maps as {key: value}, enum members and table rows by name, none/true/false. `ty` is
    the checker's type of the expression the value came from; without it, a text is quoted and a list or
    tuple is written as a list."""
    name = getattr(ty, "name", "any")
    kind = getattr(ty, "kind", "basic")
    args = tuple(getattr(ty, "args", ()) or ())
    if v is None:
        return "none"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        if kind in ("enum", "record") or (name == "node" and _BARE.match(v)):
            return v
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, tuple):
        if name == "tuple":
            items = [rule_text(x, args[i] if i < len(args) else None) for i, x in enumerate(v)]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if name == "node":  # a grid's coordinates
            return "(" + ", ".join(rule_text(x) for x in v) + ")"
        elem = args[0] if name in ("list", "deck", "bag", "set") and args else None
        return "[" + ", ".join(rule_text(x, elem) for x in v) + "]"
    if isinstance(v, frozenset):
        elem = args[0] if args else None
        return "{" + ", ".join(rule_text(x, elem) for x in sorted(v, key=skey)) + "}"
    if isinstance(v, dict):
        kt, vt = (args[0], args[1]) if name == "map" and len(args) == 2 else (None, None)
        return "{" + ", ".join(f"{rule_text(k, kt)}: {rule_text(x, vt)}"
                               for k, x in sorted(v.items(), key=lambda kv: skey(kv[0]))) + "}"
    return fmt(v)  # a deck or bag (its size), a piece (KIND#ID)


SCENARIO_STEP_BUDGET = 1_000_000


def _exec(G: Game, code: Any, L: dict[str, Any]) -> None:
    """Run one scenario block; `L` holds the scenario's locals, shared by all its blocks."""
    pc = 0
    ops = code.ops
    steps = 0
    start_work(G)
    while pc < len(ops):
        steps += 1
        if steps > SCENARIO_STEP_BUDGET:
            raise ScenarioFailure(f"the block ran {SCENARIO_STEP_BUDGET:,} steps (an endless loop?)")
        G.scenario.span = code.spans[pc]
        r = ops[pc](G, L)
        if r is None:
            pc += 1
        elif r.__class__ is int:
            pc = r
        else:
            raise ScenarioFailure("this statement cannot run in a scenario (procedures, turns and decisions run "
                                  "inside the game)")


def reconsider(G: Game) -> None:
    """After `given` changed variables directly, recompute the pending decision from the new state."""
    if G.is_over() or G.pending is None:
        return
    fr = G.frames[-1]
    op = fr.code.ops[fr.pc - 1]
    p = G.pending
    G._actions = None
    if p.kind == "chance" and hasattr(op, "step"):
        # a draw or roll under way: its outcomes come from the pile as it is now
        G.pending = None
        if op.step(G, fr.locals, p) is None:
            G._run()
        return
    if p.acc:
        return  # a choice with picks already made keeps its options
    fr.pc -= 1
    G.pending = None
    G._run()


_STEPS = (A.Play, A.ChanceStep, A.Expect, A.Log, A.Break, A.Continue)


def _sets_state(block: A.Block) -> bool:
    """Whether a scenario block changes the state directly (assigns, adds, makes or destroys a piece ...),
    rather than only through decisions (`play`, `chance`): a position it sets up may be one the rules never
    reach."""
    for st in block.stmts:
        if isinstance(st, _STEPS):
            continue
        if isinstance(st, A.Let) and not isinstance(st.value, A.New):
            continue
        if isinstance(st, A.If):
            if any(_sets_state(b) for _, b in st.branches) or (st.orelse is not None and _sets_state(st.orelse)):
                return True
            continue
        if isinstance(st, (A.For, A.While, A.Repeat, A.Loop)):
            if st.body is not None and _sets_state(st.body):
                return True
            continue
        return True
    return False


def _forces_setup_chance(parts: list[tuple[str, A.Block]]) -> bool:
    """Whether the scenario's first step, in written order, forces a chance outcome."""
    for _kind, block in parts:
        if block.stmts:
            return isinstance(block.stmts[0], A.ChanceStep)
    return False


def starting(program: Program, sc: A.ScenarioDecl, by_name: Optional[dict] = None) -> A.ScenarioDecl:
    """The scenario whose settings (players, seed, chance mode, variants) ``sc`` runs with: the first of the
    scenarios it continues (`scenario "B" after "A"`), or itself. ``by_name``: program.scenarios_by_name(),
    for a caller that asks for many."""
    return program.scenario_chain(sc, by_name)[0][0]


def run_scenario(rs: Ruleset, sc: A.ScenarioDecl, by_name: Optional[dict] = None) -> ScenarioResult:
    """Run one scenario, after the blocks of every scenario it continues (`after`), from the first of them:
    its players, seed, chance mode and variants. `rs` should be loaded with those variants (run_file does
    that); if it is not, the rules are loaded again with them."""
    where = sc.span
    res = ScenarioResult(sc.name, where.path, where.line, False, "", tuple(sc.cites))
    first = starting(rs.program, sc, by_name)
    if tuple(first.variants) != tuple(rs.active_variants):
        try:
            rs = rs.reload(first.variants)  # type: ignore[attr-defined]  # (set by rulelang.api.load)
        except RuleError as e:
            res.message = e.render()
            return res
        sc = next((x for x in rs.program.scenarios if x.name == sc.name), sc)
        by_name = None
    chain, _stop = rs.program.scenario_chain(sc, by_name)  # whole: the checker rejects unknown names and cycles
    first = chain[0]
    parts = [part for each in chain for part in each.parts]
    players = first.players or min(rs.player_counts)
    G = None
    stop = None
    try:
        G = rs.new_game(players, seed=first.seed, chance=first.chance)
        G.scenario = Driver(first.seed, invariants=bool(getattr(rs, "invariants", ())))
        comp = StmtCompiler(rs, rs._xc)
        G.scenario.check_invariants(G, "setup")
        if not _forces_setup_chance(parts):
            # `given` describes a position after setup: finish setup's random draws first
            G.scenario.setup_drawn = G.scenario.settle_chance(G, "during setup")
        scenario_locals: dict[str, Any] = {}
        for i, (kind, block) in enumerate(parts):
            if kind == "given" and _sets_state(block):
                # the position is set by hand from here on: it may be one the rules never reach, and the
                # invariants state what holds in the positions they reach
                G.scenario.invariants = False
            _exec(G, comp.code(f"scenario-{kind}-{i}", block), scenario_locals)
            if kind == "given":
                reconsider(G)
    except ScenarioFailure as e:
        stop = str(e)
    except (GameError, RuleRuntimeError) as e:
        stop = str(e)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError, OverflowError,
            RecursionError) as e:
        stop = f"a value of the wrong kind: {e}"
    fails = [] if G is None or G.scenario is None else list(G.scenario.failures)
    if stop is not None:
        span = G.scenario.span if G is not None and G.scenario and G.scenario.span else where
        fails.append((span, stop))
    if fails:
        res.failures = [f"{s.path}:{s.line}: {m}" if s is not None else f"{where.path}:{where.line}: {m}"
                        for s, m in fails]
        res.message = "\n".join(res.failures)
        return res
    res.passed = True
    return res


def rule_files(path: str) -> list[str]:
    if os.path.isdir(path):
        out = []
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(".rules"):
                    out.append(os.path.join(root, f))
        return out
    return [path]


def run_file(path: str) -> list[ScenarioResult]:
    results = []
    try:
        base = rulelang.load(path)
    except RuleError as e:
        return [ScenarioResult("(loading the file)", path, 1, False, e.render())]
    by_variants: dict[tuple[str, ...], list[str]] = {}
    by_name = base.program.scenarios_by_name()  # once: a file may hold thousands of scenarios
    for sc in base.program.scenarios:
        by_variants.setdefault(tuple(starting(base.program, sc, by_name).variants), []).append(sc.name)
    for variants, names in by_variants.items():
        try:
            rs = base if not variants else rulelang.load(path, variants=variants)
        except RuleError as e:
            results.append(ScenarioResult(f"(loading with variants {', '.join(variants)})", path, 1, False, e.render()))
            continue
        wanted = set(names)
        by_name = rs.program.scenarios_by_name()
        for sc in rs.program.scenarios:
            if sc.name in wanted and tuple(starting(rs.program, sc, by_name).variants) == variants:
                results.append(run_scenario(rs, sc, by_name))
    return results


def run_path(path: str) -> list[ScenarioResult]:
    """Run every scenario in a rule file, or in every .rules file below a folder."""
    results = []
    for f in rule_files(path):
        results.extend(run_file(f))
    return results

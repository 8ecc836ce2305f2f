"""Scenarios: executable rulebook examples (given / when / then), run by `rulelang test` and pytest.

A scenario starts a new game (its players, seed and variants; chance decisions explicit), runs the
`given` statements (which may set variables directly), takes the `when` steps (`play "id"`,
`chance "outcome"`), then checks every `expect` of `then`. A chance decision that no `chance` step
forces is drawn from the scenario's seeded sampler when the next `play` needs a player decision.
"""
from __future__ import annotations

import os
import random

import attrs

import rulelang
from rulelang import ast as A
from rulelang.diagnostics import RuleError

from .builtins import RuleRuntimeError, start_work
from .closures import StmtCompiler
from .errors import GameError, IllegalAction
from .values import fmt, readable


@attrs.define
class ScenarioResult:
    name: str
    path: str
    line: int
    passed: bool
    message: str = ""
    cites: tuple = ()


class ScenarioFailure(Exception):
    pass


class Driver:
    """Performs scenario steps for the ops of a scenario block."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.failures = []
        self.span = None

    def value(self, G, name):
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

    def settle_chance(self, G):
        while not G.is_over() and G.is_chance():
            outcomes = G.chance_outcomes()
            acts = [a for a, _ in outcomes]
            weights = [p for _, p in outcomes]
            G.apply(self.rng.choices(acts, weights)[0])

    @staticmethod
    def _apply(G, value):
        try:
            G.apply(value if isinstance(value, str) else fmt(value))
        except IllegalAction as e:
            raise ScenarioFailure(str(e)) from None

    def step(self, G, kind, value):
        if kind == "play":
            self.settle_chance(G)
            if G.is_over():
                raise ScenarioFailure(f"cannot play {readable(value)}: the game is over ({G.end_reason})")
            self._apply(G, value)
        elif kind == "chance":
            if not G.is_chance():
                raise ScenarioFailure(f"no chance decision is pending (now: {G.prompt})")
            self._apply(G, value)
        elif kind == "expect":
            ok, msg, detail = value
            if ok is not True:
                text = msg or "expectation failed"
                if detail:
                    text += f" ({detail})"
                self.failures.append((self.span, text))
        return None


SCENARIO_STEP_BUDGET = 1_000_000


def _exec(G, code, L):
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


def reconsider(G):
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


def _forces_setup_chance(sc):
    """Whether the scenario's first step, in written order, forces a chance outcome."""
    for _kind, block in sc.parts:
        if block.stmts:
            return isinstance(block.stmts[0], A.ChanceStep)
    return False


def run_scenario(rs, sc) -> ScenarioResult:
    """Run one scenario. `rs` should be loaded with the scenario's variants (run_file does that);
    if it is not, the rules are loaded again with them."""
    where = sc.span
    res = ScenarioResult(sc.name, where.path, where.line, False, "", tuple(sc.cites))
    if tuple(sc.variants) != tuple(rs.active_variants):
        try:
            rs = rs.reload(sc.variants)
        except RuleError as e:
            res.message = e.render()
            return res
        sc = next((x for x in rs.program.scenarios if x.name == sc.name), sc)
    players = sc.players or min(rs.player_counts)
    try:
        G = rs.new_game(players, seed=sc.seed, chance=sc.chance)
        G.scenario = Driver(sc.seed)
        comp = StmtCompiler(rs, rs._xc)
        if not _forces_setup_chance(sc):
            # `given` describes a position after setup: finish setup's random draws first
            G.scenario.settle_chance(G)
        scenario_locals = {}
        for i, (kind, block) in enumerate(sc.parts):
            _exec(G, comp.code(f"scenario-{kind}-{i}", block), scenario_locals)
            if kind == "given":
                reconsider(G)
    except ScenarioFailure as e:
        span = G.scenario.span if "G" in locals() and G.scenario and G.scenario.span else where
        res.message = f"{span.path}:{span.line}: {e}"
        return res
    except (GameError, RuleRuntimeError) as e:
        span = G.scenario.span if "G" in locals() and G.scenario and G.scenario.span else where
        res.message = f"{span.path}:{span.line}: {e}"
        return res
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError, OverflowError,
            RecursionError) as e:
        span = G.scenario.span if "G" in locals() and G.scenario and G.scenario.span else where
        res.message = f"{span.path}:{span.line}: a value of the wrong kind: {e}"
        return res
    fails = G.scenario.failures
    if fails:
        res.message = "; ".join(f"{s.path}:{s.line}: {m}" for s, m in fails)
        return res
    res.passed = True
    return res


def rule_files(path):
    if os.path.isdir(path):
        out = []
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(".rules"):
                    out.append(os.path.join(root, f))
        return out
    return [path]


def run_file(path):
    results = []
    try:
        base = rulelang.load(path)
    except RuleError as e:
        return [ScenarioResult("(loading the file)", path, 1, False, e.render())]
    by_variants = {}
    for sc in base.program.scenarios:
        by_variants.setdefault(tuple(sc.variants), []).append(sc.name)
    for variants, names in by_variants.items():
        try:
            rs = base if not variants else rulelang.load(path, variants=variants)
        except RuleError as e:
            results.append(ScenarioResult(f"(loading with variants {', '.join(variants)})", path, 1, False, e.render()))
            continue
        wanted = set(names)
        for sc in rs.program.scenarios:
            if sc.name in wanted and tuple(sc.variants) == variants:
                results.append(run_scenario(rs, sc))
    return results


def run_path(path):
    """Run every scenario in a rule file, or in every .rules file below a folder."""
    results = []
    for f in rule_files(path):
        results.extend(run_file(f))
    return results

"""A Ruleset: checked rules compiled for play (the generated backend or the closures), their constants,
boards, actions and triggers, and the games they start (interpreter/game.py)."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Optional

from rulelang import ast as A
from rulelang.parser import MAX_PLAYERS
from . import boards as B
from . import pieces as P
from . import rng as R
from .builtins import RuleRuntimeError, TIME_CHECK_EVERY, TIME_LIMIT
from .closures import ExprCompiler, StmtCompiler
from .codegen.expressions import ExprGenerator
from . import native
from .codegen.helpers import GenerationFailed
from .codegen.statements import make_stmt_generator
from .errors import GameError
from .game import BACKENDS, DEFAULT_CASCADE_DEPTH, DEFAULT_STEP_BUDGET, Game, _vars_read
from .runtime import Code, CompiledAction, CompiledFunction, Located, MAX_ACTION_CHOICES, RETURN, _Fixed
from .values import Value

if TYPE_CHECKING:
    from rulelang.checker import Checker
    from rulelang.program import Program
    from rulelang.types import Type

    from .boards import Board
    from .pieces import PieceKind
    from .value_check import ValueTypes

Closure = Callable[[Any, dict[str, Value]], Value]  # a compiled expression: (the game, the locals) -> its value


# ============================================================================ ruleset
class Ruleset:
    # Set only by interpreter/coverage.py on its instrumented copy (None, the default, costs nothing):
    # `compile_hooks(xc, sc)` is called with the closures' compilers before the rules are compiled;
    # `observer.finished(game, reason)` is told when a game ends.
    compile_hooks: Optional[Callable[[Any, Any], None]] = None
    observer: Any = None

    # What _build sets (see there). The expression and statement compilers are those of the closures
    # (interpreter/closures.py) or of the generated code (interpreter/codegen/), not typed yet: Any.
    source_program: Program
    optimised: bool
    checker: Checker
    program: Program
    time_limit: float
    name: str
    player_counts: tuple[int, ...]
    variants: tuple[str, ...]
    active_variants: tuple[str, ...]
    step_budget: int
    cascade_depth: int
    endings: tuple[str, ...]
    action_cache: dict[int, dict[Any, Any]]
    _cached_actions: int
    _starts: dict[int, Any]
    _first_decisions: dict[tuple[int, str, int, int], Game]
    option_lists: dict[Any, Any]
    _listed: int
    table_rows: dict[str, tuple[str, ...]]
    row_fields: dict[str, dict[str, Value]]
    boards: dict[str, Board]
    functions: dict[str, CompiledFunction]
    codes: dict[str, Code]
    actions: dict[str, CompiledAction]
    triggers: dict[str, list[tuple[Code, list[str]]]]
    trigger_tests: dict[str, list[tuple[Optional[Closure], tuple[str, ...]]]]
    _xc: Any
    _board_nodes: int
    _native: bool  # set by _ready when the native path is asked for (interpreter/native.py)
    _native_note: Optional[str]
    _built: str
    _wanted: str
    _fallback: Optional[str]
    consts: list[tuple[str, Closure]]
    vars: list[tuple[str, bool, Optional[Closure], Type, str]]  # (name, per player, start, type, visibility)
    var_spans: dict[str, A.Span]
    visibility: dict[str, str]
    per_player: set[str]
    pieces: dict[str, PieceKind]
    pieces_by_key: dict[str, PieceKind]
    ending_checks: list[tuple[str, Closure, A.Span]]
    invariant_checks: list[tuple[str, Closure, A.Span, Any]]
    invariants: tuple[str, ...]
    score_fn: Optional[tuple[str, Closure]]
    tiebreak_fn: Optional[tuple[str, Closure]]
    payoff_fn: Optional[tuple[str, Closure]]
    heuristic_fn: Optional[tuple[str, Closure]]
    max_decisions: Optional[int]
    placeholders: list[Any]
    warnings: list[Any]
    _value_types: ValueTypes  # (set by interpreter/runtime.py at the first value it checks)

    def __init__(self, program: Program, checker: Checker, step_budget: int = DEFAULT_STEP_BUDGET,
                 cascade_depth: int = DEFAULT_CASCADE_DEPTH, time_limit: float = TIME_LIMIT,
                 backend: str = "generated", optimise: bool = True) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"backend is one of {', '.join(BACKENDS)}, not {backend!r}")
        self.source_program = program  # as checked, before the optimiser (coverage counts the calls it inlines)
        if optimise:  # passes over the checked tree (interpreter/optimise, docs/optimiser.md)
            from .optimise import optimise as _optimise
            program = _optimise(program)
        self.optimised = bool(optimise)
        self.checker = checker
        # the closures first: cheap, and they find every load-time error (a ruleset that is only checked
        # never pays for generating code); the generated code replaces them before the first game runs
        self._build(program, checker, step_budget, cascade_depth, time_limit, "closures")
        self._wanted = backend

    def _ready(self) -> None:
        """Build the backend asked for, if not yet done (before anything runs the rules)."""
        if self._wanted == self._built:
            return
        self._wanted = self._built = "generated"
        keep: dict[str, Any] = {k: self.__dict__[k] for k in ("placeholders", "warnings", "path", "reload") if k in self.__dict__}
        limits = (self.step_budget, self.cascade_depth, self.time_limit)  # as they may have been set since
        static = (self.table_rows, self.row_fields, self.boards, self._board_nodes)
        try:
            self._build(self.program, self.checker, *limits, "generated", static)
        except (GenerationFailed, RecursionError, MemoryError) as e:
            # Python could not compile the generated source (its nesting limits): the closures run these rules
            self._build(self.program, self.checker, *limits, "closures", static)
            self._fallback = str(e) or type(e).__name__
            self._wanted = "closures"
        if self._built == "generated" and native.wanted():  # opt in: compiled by Cython (interpreter/native.py)
            self._native_note = native.use(self)
            self._native = self._native_note is None
        self.__dict__.update(keep)

    @property
    def backend(self) -> str:
        """"generated" or "closures": how the rules run (see docs/runtime.md)."""
        self._ready()
        return self._built

    @property
    def fallback(self) -> Optional[str]:
        """Why the closures run these rules although the generated backend was asked for (None: it was not)."""
        self._ready()
        return self._fallback

    @property
    def native(self) -> bool:
        """Whether the generated code runs compiled by Cython (asked for by RULELANG_NATIVE=1; docs/runtime.md)."""
        self._ready()
        return self.__dict__.get("_native", False)

    @property
    def native_note(self) -> str | None:
        """Why the native path was asked for but not taken (None: it was taken, or not asked for)."""
        self._ready()
        return self.__dict__.get("_native_note")

    def with_backend(self, backend: str) -> Ruleset:
        """The same rules (same program, same check) compiled by another backend: tests play both side by side."""
        other = Ruleset(self.program, self.checker, self.step_budget, self.cascade_depth, self.time_limit,
                        backend=backend, optimise=False)  # self.program is optimised already, if asked
        other.optimised = self.optimised
        other.source_program = self.source_program
        for attr in ("placeholders", "warnings", "path", "reload"):
            if attr in self.__dict__:
                setattr(other, attr, getattr(self, attr))
        return other

    @property
    def generated_source(self) -> str:
        """The Python source generated for these rules ("" with the closures backend): see docs/runtime.md."""
        self._ready()
        return self._xc.source if self._built == "generated" else ""

    def _build(self, program: Program, checker: Checker, step_budget: int, cascade_depth: int, time_limit: float,
               backend: str, static: Optional[tuple[Any, Any, Any, int]] = None) -> None:
        self._built = backend
        self._fallback = None
        self.program = program
        self.time_limit = time_limit  # seconds of CPU time the rules may compute between two decisions
        game = program.game
        assert game is not None  # (a checked program has its game header)
        self.name = game.title
        self.player_counts = tuple(game.player_counts) or (2,)
        for n in self.player_counts:
            if not 1 <= n <= MAX_PLAYERS:
                raise Located(f"a game is for 1 to {MAX_PLAYERS} players, not {n:,}", game.span, code="E327",
                              hint="list the player counts the rulebook allows, such as 'players 2..4'")
        self.variants = tuple(program.variants)
        self.active_variants = tuple(program.active_variants)
        self.step_budget = step_budget
        self.cascade_depth = cascade_depth
        ends = [e.name for e in program.endings]
        for reason, _ in checker.ends:
            if reason and reason not in ends:
                ends.append(reason)
        self.endings = tuple(ends)
        # seat (an action's) or -2 - seat (a choice's; chance: -1) -> {(id, value): Action}, see Game._make_actions
        self.action_cache = {}
        self._cached_actions = 0  # Actions held by action_cache
        # players -> (constants, start values of the variables): computed by the first game of that many
        # players, copied by the next ones (they depend only on the rules and the number of players: no
        # expression reads the seed or the random state)
        self._starts = {}
        # (players, chance mode, step budget, cascade depth) -> a game stopped at its first decision, when reaching
        # it drew nothing at random:
        # the next games of that many players are copies of it with their own seed (see new_game)
        self._first_decisions = {}
        # (seat, options or id(options)) -> (Action list, (options, {id: position}) or None, options, the decision
        # that offered them)
        self.option_lists = {}
        self._listed = 0  # options held by option_lists
        self.table_rows = {}
        self.row_fields = {}
        self.boards = {}
        self.functions = {}
        self.codes = {}
        self.actions = {}
        self.triggers = {}
        # event -> per trigger, its condition (None: it has none) and parameter names: emit_event tests them
        # (not under coverage, which counts the tests where the triggers run them)
        self.trigger_tests = {}
        xc: Any = ExprCompiler(self)
        if backend == "generated":
            xc = ExprGenerator(self, xc, label=os.path.basename(game.span.path or "rules"))
            for d in program.decls.values():  # named first: a call may come before the function, or be recursive
                if isinstance(d, A.FuncDecl):
                    xc.declare_function(d.name, [p.name for p in d.params])
        self._xc = xc
        self._board_nodes = 0  # nodes of the boards built so far
        if static is None:
            self._build_static(program, xc)
        else:  # tables and boards are fixed data, the same whatever runs the rules: built once
            self.table_rows, self.row_fields, self.boards, self._board_nodes = static
        sc = make_stmt_generator(self, xc) if backend == "generated" else StmtCompiler(self, xc)
        if self.compile_hooks is not None and backend == "closures":
            self.compile_hooks(xc, sc)
        self.consts = [(d.name, xc.const_value(d.name)) for d in program.decls.values()
                       if isinstance(d, A.ConstDecl)]
        self.vars = []
        for d in program.decls.values():
            if isinstance(d, A.VarDecl):
                ty = checker.resolve_type(d.type)
                self.vars.append((d.name, d.per_player, xc.compile(d.value) if d.value is not None else None, ty,
                                  d.visibility))
        self.var_spans = {d.name: d.span for d in program.decls.values() if isinstance(d, A.VarDecl)}
        self.visibility = {name: vis for name, _, _, _, vis in self.vars}
        self.per_player = {name for name, per, _, _, _ in self.vars if per}
        self.pieces = P.build_pieces(self, program, checker, xc)  # piece kinds: name -> PieceKind
        self.pieces_by_key = {k.key: k for k in self.pieces.values()}
        for d in program.decls.values():
            if isinstance(d, A.FuncDecl):
                params = [p.name for p in d.params]
                if backend == "generated":  # fn(G, arg, ...); body(G, L) for closures (an expression fallen back)
                    fn = xc.define_function(d.name, d.body, d.span)
                    self.functions[d.name] = CompiledFunction(
                        params, lambda G, L, fn=fn, params=params: fn(G, *[L[p] for p in params]))
                else:
                    self.functions[d.name] = CompiledFunction(params, xc.compile(d.body))
        triggered = {t.event for t in program.triggers}
        # the end of setup: the game_start event (an op that does nothing when no trigger waits for it)
        start = (lambda G, L: G.emit_event("game_start", ())) if "game_start" in triggered else _no_event
        for d in program.decls.values():
            if isinstance(d, A.ProcDecl):
                cid = d.proc_kind if d.proc_kind in ("setup", "flow") else "proc:" + d.name
                epi = None
                if d.proc_kind == "setup":
                    epi = lambda c: c.emit(start, d.span)  # noqa: E731
                self.codes[cid] = sc.code(cid, d.body, name=d.name, epilogue=epi)
        if "setup" not in self.codes:
            c = Code("setup", "setup")
            c.emit(start, game.span)
            self.codes["setup"] = c
        for d in program.decls.values():
            if isinstance(d, A.ActionDecl):
                self._compile_action(d, xc, sc)
        for i, t in enumerate(program.triggers):
            self._compile_trigger(i, t, xc, sc)
        self.ending_checks = [(e.name, xc.compile(e.condition), e.span) for e in program.endings]
        # invariants: compiled like endings (the generated backend writes an expression's code at its first
        # call, so they cost nothing until Game.check_invariants() runs them; normal play never does)
        self.invariant_checks = [(d.name, xc.compile(d.condition), d.span, _vars_read(d.condition))
                                 for d in getattr(program, "invariants", ())]
        self.invariants = tuple(d.name for d in getattr(program, "invariants", ()))
        self.score_fn = (program.score.param, xc.compile(program.score.value)) if program.score else None
        self.tiebreak_fn = (program.tiebreak.param, xc.compile(program.tiebreak.value)) if program.tiebreak else None
        payoff = getattr(program, "payoff", None)
        self.payoff_fn = (payoff.param, xc.compile(payoff.value)) if payoff is not None else None
        heuristic = getattr(program, "heuristic", None)
        self.heuristic_fn = (heuristic.param, xc.compile(heuristic.value)) if heuristic is not None else None
        self.max_decisions = getattr(program.game, "max_decisions", None) if program.game is not None else None
        self.placeholders = []
        self.warnings = []
        if backend == "generated":
            xc.finish()  # compiles the generated source: every function handed out gets its code
            xc.auto_finish = True  # what is compiled later (scenario blocks) is compiled at once

    def _build_static(self, program: Program, xc: Any) -> None:
        class _Static:
            n = 0
            consts = {}  # type: dict[str, Value]
            data = {}  # type: dict[str, Value]
            fdepth = 0
            memo = None  # (no evaluation answers from memory here: see Game.heuristics)
            work = 0
            work_mark = TIME_CHECK_EVERY
            deadline = float("inf")  # no time limit while building tables and boards
            time_limit = TIME_LIMIT

        G = _Static()
        for d in program.decls.values():
            if isinstance(d, A.TableDecl):
                rec = program.decls[d.record]
                order = [f.name for f in rec.fields]
                defaults = {f.name: f.default for f in rec.fields}
                rows = []
                for row in d.rows:
                    fields = {}
                    pos = 0
                    for name, value in row.values:
                        if name is None:
                            name = order[pos]
                            pos += 1
                        fields[name] = self._static_eval(xc, value, G)
                    for f in order:
                        if f not in fields:
                            fields[f] = self._static_eval(xc, defaults[f], G)
                    self.row_fields[row.name] = fields
                    rows.append(row.name)
                self.table_rows[d.name] = tuple(rows)
        for d in program.decls.values():
            if isinstance(d, A.BoardDecl):
                if d.spec is not None:
                    spec: Any = d.spec  # (checked: a call of a board generator, such as hex(5))
                    gen = B.GENERATORS[spec.func.ident]
                    posargs = [self._static_eval(xc, a.value, G) for a in spec.args if a.name is None]
                    kws = {a.name: self._static_eval(xc, a.value, G) for a in spec.args if a.name is not None}
                    for v in list(posargs) + list(kws.values()):
                        if v.__class__ is int and not 1 <= v <= 200:
                            raise Located(f"board '{d.name}' needs sizes from 1 to 200, not {v}", spec.span)
                    count = B.node_count(spec.func.ident, posargs, kws)
                    if count is not None:  # before building it
                        self._charge_nodes(d, count, spec.span)
                    try:
                        board = gen(d.name, *posargs, **kws)
                    except Exception as e:  # noqa: BLE001 - any failure of a generator is a rule error here
                        raise Located(f"board '{d.name}' cannot be built: {e}", spec.span) from None
                    for key_expr, args, span in d.nodes:
                        key = self._static_eval(xc, key_expr, G)
                        if not board.has_node(key):
                            raise Located(f"{key} is not a node of board '{d.name}'", span)
                        board.set_attrs(key, {a.name: self._static_eval(xc, a.value, G) for a in args})
                    self.boards[d.name] = board
                else:
                    attrs = [(n, {a.name: self._static_eval(xc, a.value, G) for a in args}) for n, args, _ in d.nodes]
                    self.boards[d.name] = B.from_edges(d.name, d.edges, attrs)
                    self._charge_nodes(d, len(self.boards[d.name].nodes), d.span)

    def _charge_nodes(self, d: A.BoardDecl, count: int, span: A.Span) -> None:
        """Count a board's nodes against MAX_BOARD_NODES (for all the boards together)."""
        self._board_nodes += count
        if self._board_nodes > B.MAX_BOARD_NODES:
            raise Located(f"board '{d.name}' has {count:,} nodes; the boards of a game hold at most "
                          f"{B.MAX_BOARD_NODES:,} nodes in all", span, code="E503",
                          hint="use a smaller board")

    def _static_eval(self, xc: Any, expr: Any, G: Any) -> Value:
        try:
            return xc.closure(expr)(G, {})
        except (RuleRuntimeError, KeyError, TypeError) as e:
            raise Located(f"this value must be fixed data (numbers, names, lists): {e}", expr.span) from None

    def _compile_action(self, d: A.ActionDecl, xc: Any, sc: Any) -> None:
        domains: list[Any] = []  # per parameter: its candidates (_Fixed) or a closure that lists them
        sizes: list[Optional[int]] = []  # the number of choices of each parameter, where it is known when loading
        for p in d.params:
            if p.domain is not None and xc.is_constant(p.domain):
                domains.append(_Fixed(xc.compile(p.domain)(None, {})))
                sizes.append(len(domains[-1].values))
            elif p.domain is not None:
                domains.append(xc.compile(p.domain))
                sizes.append(None)
            else:
                sizes.append(self._type_domain_size(p))
                _check_choices(d, sizes)  # before listing a typed range
                domains.append(self._type_domain(p))
        choices = _check_choices(d, sizes)
        if d.params and None not in sizes:
            xc.charge(choices, d.span, "choices listed when the rules load")
        requires = [(xc.compile(r.test), r.span) for r in d.requires]
        costs = [(P.place(xc, c.target), xc.compile(c.amount)) for c in d.costs]
        name = d.name

        def epilogue(code):
            # type: (Code) -> None
            # with no trigger waiting for it the event would do nothing (its argument, `me`, is always
            # there): no op at all (a save made inside the action ends at the same place)
            if "action_done" in triggered:
                code.emit(lambda G, L: G.emit_event("action_done", (L["me"], name)), d.span)
        triggered = {t.event for t in self.program.triggers}
        cid = "action:" + name
        body = d.effect or A.Block(stmts=[], span=d.span)
        if d.costs:  # paid first, each as `PLACE -= AMOUNT` written there (one op each: the same positions)
            pays = [A.Assign(op="-=", target=c.target, value=c.amount, span=c.span) for c in d.costs]
            body = A.Block(stmts=pays + list(body.stmts), span=body.span)
        # for the generated code: the parameters (always in an action's locals, with `me`), and those whose
        # every candidate is a whole number (their class need not be tested)
        sc.action_locals = ([p.name for p in d.params],
                            {p.name: int for p, dom in zip(d.params, domains) if dom.__class__ is _Fixed and dom.values
                             and all(v.__class__ is int for v in dom.values)})
        try:
            code = sc.code(cid, body, name=name, epilogue=epilogue)
        finally:
            sc.action_locals = None
        self.codes[cid] = code
        act = self.actions[name] = CompiledAction(name, [p.name for p in d.params], domains, requires, costs, code,
                                                  d.text, d.span, d.order or None, [p.shape for p in d.params])
        if self._built == "generated":
            if not costs and (not d.params or act.fixed_options is not None):
                act.fast_legal, act.same_pairs = xc.legal_function(act, [r.test for r in d.requires], d.span)
            elif len(d.params) <= 8 and all(_plain_place(c.target) for c in d.costs):
                specs: list[tuple[str, Any]] = []
                for p, dom in zip(d.params, domains):
                    if dom.__class__ is _Fixed:
                        specs.append(("fixed", dom.values))
                    elif p.domain is not None:
                        specs.append(("expr", p.domain))
                    elif isinstance(p.type, A.TypeName) and p.type.name == "player":
                        specs.append(("players", None))
                    else:
                        specs.append(("fn", dom))
                act.fast_legal = xc.legal_general(act, specs, [r.test for r in d.requires],
                                                  [(c.target, c.amount) for c in d.costs], d.span, act.order)

    def _type_domain_size(self, p: A.Param) -> int:
        t = p.type
        if isinstance(t, A.TypeRange):
            return max(0, t.high - t.low + 1)
        if t.name == "bool":
            return 2
        if t.name == "player":
            return max(self.player_counts)
        decl = self.program.decls.get(t.name)
        if isinstance(decl, A.EnumDecl):
            return len(decl.members)
        if isinstance(decl, A.RecordDecl):
            return sum(len(rs) for tname, rs in self.table_rows.items() if self.program.decls[tname].record == t.name)
        return 0

    def _type_domain(self, p: A.Param) -> Closure:
        t = p.type
        if isinstance(t, A.TypeRange):
            vals = tuple(range(t.low, t.high + 1))
            return lambda G, L: vals
        name = t.name
        if name == "bool":
            return lambda G, L: (False, True)
        if name == "player":
            return lambda G, L: G.active_players()
        decl = self.program.decls.get(name)
        if isinstance(decl, A.EnumDecl):
            vals = tuple(decl.members)
            return lambda G, L: vals
        if isinstance(decl, A.PieceDecl):  # a parameter of a piece kind: any live piece of it
            return lambda G, L: P.live(G, name)
        if isinstance(decl, A.RecordDecl):
            rows = tuple(r for tname, rs in self.table_rows.items()
                         if self.program.decls[tname].record == name for r in rs)
            return lambda G, L: rows
        return lambda G, L: ()

    def _compile_trigger(self, i: int, t: A.TriggerDecl, xc: Any, sc: Any) -> None:
        cond = xc.compile(t.condition) if t.condition is not None else None

        def prologue(code):
            # type: (Code) -> None
            if cond is not None:
                code.emit(lambda G, L: None if cond(G, L) else RETURN, t.span)
        cid = f"trigger:{i}"
        code = sc.code(cid, t.body, name=f"when {t.event} (line {t.span.line})", prologue=prologue)
        self.codes[cid] = code
        self.triggers.setdefault(t.event, []).append((code, list(t.params)))
        if self.compile_hooks is None:
            tests = self.trigger_tests.setdefault(t.event, [])
            params = tuple(t.params)
            if tests and tests[-1][1] == params:  # the same names: one table of locals serves both tests
                params = tests[-1][1]
            tests.append((cond, params))

    # ------------------------------------------------------------------ games
    def new_game(self, players: int, seed: Optional[int] = None, chance: str = "sampled") -> Game:
        if players.__class__ is int and seed.__class__ is int and 0 <= seed < 1 << 64:
            # the usual call, when a game of this many players was made before: a copy (see below; a key is
            # only there for a valid count and chance mode)
            first = self._first_decisions.get((players, chance, self.step_budget, self.cascade_depth))
            if first is not None:
                return _reseeded(first, seed)
        self._ready()
        if isinstance(players, bool) or not isinstance(players, int) or players not in self.player_counts:
            raise GameError(f"{self.name} is for {_counts_text(self.player_counts)} players, not {players}")
        if seed is None:
            # no seed given: 64 bits from the operating system, so the hidden state cannot be guessed
            # by trying small seeds against what a seat sees (the seed is saved, so the game replays)
            seed = int.from_bytes(os.urandom(8), "little")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 64:
            raise GameError(f"the seed must be a whole number from 0 to 2^64-1, not {seed!r}")
        if chance not in ("sampled", "explicit"):
            raise GameError(f"chance is \"sampled\" or \"explicit\", not {chance!r}")
        # (the limits a user may set between games are part of the key: a run under others might fail)
        key = (players, chance, self.step_budget, self.cascade_depth)
        if key in self._first_decisions:  # (a seed given as a bool or another kind of int: as above)
            return _reseeded(self._first_decisions[key], seed)
        g = Game(self, players, seed, chance)
        g._init_state()
        g._run()
        if g.rng == R.seed_state(seed) and not g.over and self.compile_hooks is None and len(self._first_decisions) < 64:
            # nothing drew at random, so nothing read the seed (no expression can): every game of this many
            # players reaches the same first decision, with only the seed and the random state its own
            first = self._first_decisions[key] = g.clone()
            if first._actions is None and first.pending is not None:
                first._list_actions()  # made once here, handed to every copy (as a repeated offer's are)
        return g

    def load_game(self, json_text: object) -> Game:
        self._ready()
        return Game.from_json(self, json_text)


def _reseeded(first: Game, seed: int) -> Game:
    """A copy of a game stopped at its first decision, with its own seed and the random state that seed gives."""
    g = first.clone()
    g.seed = seed
    g.rng = R.seed_state(seed)
    return g


def _no_event(G: Any, L: dict[str, Value]) -> None:
    """An event that no trigger waits for (what emit_event would do)."""


def _plain_place(target: Optional[A.Expr]) -> bool:
    """A variable or local with [index] steps only (a cost read as an expression reads the same)."""
    while isinstance(target, A.Index):
        target = target.target
    return isinstance(target, A.Name) and target.ref in ("var", "local")


def _check_choices(d: A.ActionDecl, sizes: list[Optional[int]]) -> int:
    """The product of the known domain sizes of action `d`; more than MAX_ACTION_CHOICES is a load error."""
    total = 1
    for n in sizes:
        if n is not None:
            total *= n
    if total > MAX_ACTION_CHOICES:
        shown = " × ".join(f"{n:,}" for n in sizes if n is not None)
        raise Located(f"action '{d.name}' has {total:,} possible choices ({shown}); an action may have at most "
                      f"{MAX_ACTION_CHOICES:,}", d.span, code="E503",
                      hint="give its parameters smaller domains, or choose in steps with 'choose'")
    return total


def _counts_text(seats: tuple[int, ...]) -> str:
    counts = sorted(seats)
    if len(counts) == 1:
        return str(counts[0])
    if counts == list(range(counts[0], counts[-1] + 1)):
        return f"{counts[0]} to {counts[-1]}"
    return ", ".join(map(str, counts))

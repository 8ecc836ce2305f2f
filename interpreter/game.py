"""A Game: the running state of one game of a Ruleset. It is plain data — variables, a stack of frames
(code id, position, locals), the pending decision, the RNG state, the log — so it serializes to JSON,
loads back identically and copies cheaply. `_run()` executes ops until the rules need a decision (or the
game ends); `apply()` feeds one decision in and runs on. Views (what one seat sees) are here too."""
from __future__ import annotations

import functools
import hashlib
import json

from itertools import chain, islice
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, NoReturn, Optional, Protocol, Sequence, Union
from rulelang import ast as A
from . import pieces as P
from . import rng as R
from . import saves as _saves
from .determinize import determinize
from .hidden import hidden_form, shown_value
from .builtins import RuleRuntimeError, TIME_CHECK_EVERY, charge, check_time, start_work
from .errors import GameError, IllegalAction
from .runtime import END, MAX_FRAMES, Frame, Located, NO_LOCALS, OfferOp, RETURN, SUSPEND, _DONE, _get
from .saves import MAX_NOTE_CHARS, MAX_NOTES, SAVE_FORMAT, SavedRules  # the limits of a save, which the game keeps to
from .values import Json, Pile, Value, canonical, default_value, encode, fmt, readable, skey, to_plain

if TYPE_CHECKING:
    from .runtime import Code, CompiledAction, Pending
    from .value_check import ValueTypes

Locals = dict[str, Value]
Closure = Callable[[Any, Locals], Value]  # a compiled expression: (the game, the locals) -> its value
Seats = frozenset[int]  # seats that know a place (-1: everyone)


DEFAULT_STEP_BUDGET = 2_000_000
DEFAULT_CASCADE_DEPTH = 64
TIME_CHECK_STEPS = 1024  # steps between two looks at the clock in _run
MAX_CACHED_ACTIONS = 20_000  # Action objects kept for reuse by a ruleset (the cache starts again when full)
MAX_SHOWN_VALUE = 200  # characters of a variable's value shown when an invariant does not hold
MAX_LISTED_OPTIONS = 64  # offers of at most this many actions keep their Action list for reuse
SEARCHED_OPTIONS = 16  # apply() searches a listing of at most this many options (no id -> position table)
_FIRST = itemgetter(0)  # the id of an (id, value) option
BACKENDS = ("generated", "closures")  # how expressions run: generated Python source, or the reference closures
_STOPS = (RuleRuntimeError, KeyError, TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError,
          OverflowError, Located, RecursionError)  # what _run reports as the game's error (see Game._stopped)
_ACTIVE: dict[tuple[bool, ...], tuple[int, ...]] = {}  # eliminated flags (a tuple of bools) -> the seats still in the game, for active_players


class PlayedRules(SavedRules, Protocol):
    """The compiled rules (interpreter/ruleset.py's Ruleset), as far as a game reads them (and loading a save:
    SavedRules). A protocol: the ruleset stands above this module."""

    _starts: dict[int, Any]  # players -> (constants, start values of the variables)
    option_lists: dict[Any, Any]  # (seat, id of options) -> (Actions, lookup, options, decision)
    _listed: int
    action_cache: dict[int, dict[Any, Action]]
    _cached_actions: int
    _value_types: ValueTypes  # (made by runtime.loose_check at the first value it checks)

    @property
    def compile_hooks(self) -> Optional[Callable[[Any, Any], None]]: ...

    @property
    def observer(self) -> Any: ...  # (interpreter/coverage.py's, told when a game ends)

    @property
    def time_limit(self) -> float: ...

    @property
    def step_budget(self) -> int: ...

    @property
    def var_spans(self) -> Mapping[str, A.Span]: ...

    @property
    def trigger_tests(self) -> Mapping[str, Sequence[tuple[Optional[Closure], tuple[str, ...]]]]: ...

    @property
    def ending_checks(self) -> Sequence[tuple[str, Closure, A.Span]]: ...

    @property
    def invariant_checks(self) -> Sequence[tuple[str, Closure, A.Span, Any]]: ...

    @property
    def actions(self) -> Mapping[str, CompiledAction]: ...

    @property
    def max_decisions(self) -> Optional[int]: ...

    @property
    def score_fn(self) -> Optional[tuple[str, Closure]]: ...

    @property
    def tiebreak_fn(self) -> Optional[tuple[str, Closure]]: ...

    @property
    def payoff_fn(self) -> Optional[tuple[str, Closure]]: ...

    @property
    def heuristic_fn(self) -> Optional[tuple[str, Closure]]: ...

    def _ready(self) -> None: ...


class Action:
    """One legal decision: `.id` is stable text, str() is readable."""

    __slots__ = ("id", "player", "_text", "_describe")

    def __init__(self, id: str, player: int, text: Optional[str] = None,
                 describe: Optional[Callable[[], str]] = None) -> None:
        self.id = id
        self.player = player
        self._text = text
        self._describe = describe  # computes the text when first asked (most bots never ask)

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self._describe() if self._describe is not None else self.id
        return self._text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Action({self.id!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Action) and other.id == self.id and other.player == self.player

    def __hash__(self) -> int:
        return hash((self.id, self.player))


def _coerce(ty: Any, v: Value) -> Value:
    if ty.name == "deck" and isinstance(v, tuple):
        return Pile("deck", v, ())
    if ty.name == "bag" and isinstance(v, tuple):
        return Pile("bag", (), v)
    if ty.name == "set" and isinstance(v, tuple):
        return frozenset(v)
    if ty.name == "set" and isinstance(v, dict) and not v:
        return frozenset()
    return v


# ============================================================================ game
class Game:
    def __init__(self, rs: PlayedRules, n: int, seed: int, chance: str) -> None:
        rs._ready()  # the backend asked for is built before anything runs
        self.rs = rs
        self._triggers = rs.triggers  # event -> triggers, for emit_event
        self.n = n
        self.seed = seed
        self.chance_mode = chance
        self.consts: dict[str, Value] = {}
        self.data: dict[str, Value] = {}
        self.frames: list[Frame] = []
        self.pending: Optional[Pending] = None
        self.current = 0
        self.eliminated = (False,) * n
        self.known: dict[str, dict[tuple[Value, ...], Seats]] = {}  # variable -> {place (tuple of keys): frozenset of seats (-1: everyone)}
        self.over = False
        self.end_reason: Optional[str] = None
        self.end_pending: Optional[str] = None
        self.rng = R.seed_state(seed)
        self.log: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.turns = 0
        self.fdepth = 0
        self.memo: Optional[dict[Any, Any]] = None  # rule functions' values during a read-only evaluation (heuristics)
        self.work = 0  # units of work since the last decision (see builtins.WORK_BUDGET)
        self.work_mark = 0  # the next value of work at which the budget and the clock are checked
        self.deadline: Optional[float] = None  # the CPU time (time.process_time) at which the rules stop; set at the first look
        start_work(self)  # setting up counts as the first stretch of work
        self.scenario: Any = None  # (interpreter/scenarios.py's, while a scenario runs)
        self.error: Optional[str] = None
        self._actions: Optional[list[Action]] = None
        self._lookup: Optional[tuple[list[tuple[str, Value]], dict[str, int]]] = None  # (options, {id: position in options}) made by legal_actions() for apply()

    # ------------------------------------------------------------------ setup
    def _init_state(self) -> None:
        rs = self.rs
        start = rs._starts.get(self.n)
        if start is not None:  # the values of the first game of this many players (they depend on nothing else)
            self.consts = start[0]  # shared: nothing writes a game's constants after this
            self.data = dict(start[1])  # values are never changed in place; a game's pieces get their own maps
            if rs.pieces:
                P.init_pieces(self)
        else:
            self._start_values()
        self.frames = [Frame(rs.codes["flow"], 0, {}, 0)] if "flow" in rs.codes else []
        self.frames.append(Frame(rs.codes["setup"], 0, {}, 0))

    def _start_values(self) -> None:
        """The constants and the variables' start values, computed (see Ruleset._starts)."""
        rs = self.rs
        try:
            for name, f in rs.consts:
                self.consts[name] = f(self, {})
            for name, per, f, ty, _ in rs.vars:
                v = _coerce(ty, f(self, {})) if f is not None else default_value(ty)
                if ty.kind == "range" and isinstance(v, int) and not ty.low <= v <= ty.high:
                    raise RuleRuntimeError(f"the start value {v} of '{name}' is outside {ty.low}..{ty.high}")
                if ty.name == "player" and v is not None and (v.__class__ is not int or not 0 <= v < self.n):
                    sp = rs.var_spans.get(name)
                    raise GameError(f"{sp.where() + ': ' if sp else ''}the start value {v!r} of '{name}' is not a "
                                    f"player (seats are 0 to {self.n - 1})")
                self.data[name] = (v,) * self.n if per else v
            if rs.compile_hooks is None:  # (coverage counts what every game computes)
                rs._starts[self.n] = (self.consts, dict(self.data))
            P.init_pieces(self)
        except (RuleRuntimeError, KeyError, TypeError, ValueError, IndexError) as e:
            raise GameError(f"while setting up the game: {e}") from None

    # ------------------------------------------------------------------ helpers the ops use
    def active_players(self) -> tuple[int, ...]:
        el = self.eliminated
        got = _ACTIVE.get(el)
        if got is None:
            got = tuple(p for p in range(len(el)) if not el[p])
            if len(_ACTIVE) > 4096:
                _ACTIVE.clear()
            _ACTIVE[el] = got
        return got

    def next_active(self, p: int, step: int) -> int:
        for i in range(1, self.n + 1):
            q = (p + step * i) % self.n
            if not self.eliminated[q]:
                return q
        return p

    def random_below(self, n: int) -> int:
        self.rng, x = R.below(self.rng, n)
        return x

    def emit_event(self, name: str, args: Sequence[Value]) -> Optional[tuple[Any, ...]]:
        """None when no trigger waits for the event or none of their conditions holds, else ("push",
        [(code, locals), ...]) or, when the first of them starts after its condition, ("push", [...], 1).

        The triggers run in order, each testing its condition first. Until one runs, nothing changes the
        state between two tests, so they are made here: the triggers in front whose condition is false are
        left out, and the first one whose condition holds starts after its test. A test that fails (an error,
        the work budget) is left to the trigger (nothing it charged is kept), which makes it again and says
        its error at its place. The same triggers run, in the same order, on the same state; one step fewer
        per test counts against the step budget."""
        trig = self._triggers.get(name)
        if not trig:
            return None
        tests = self.rs.trigger_tests.get(name)
        k = 0
        if tests is not None:
            L = made = None
            for cond, params in tests:
                if cond is None:
                    break
                if params is not made:  # (a test only reads its locals: the next one with the same names shares them)
                    L = dict(zip(params, args))
                    made = params
                work, fdepth = self.work, self.fdepth
                try:
                    hit = cond(self, L)  # type: ignore[arg-type]  # (set: `made` starts as None)
                except Exception:
                    self.work, self.fdepth = work, fdepth
                    break
                if hit:
                    rest = [(code, dict(zip(params, args))) for code, params in trig[k + 1:]]
                    return ("push", [(trig[k][0], L)] + rest, 1)
                k += 1
            if k == len(trig):  # no condition holds: nothing runs (and nothing nests deeper)
                return None
        return ("push", [(code, dict(zip(params, args))) for code, params in trig[k:]])

    # ------------------------------------------------------------------ knowledge by place
    # A place is a variable and a path of keys into it (a seat of a per-player variable, a list
    # position, a map key). `reveal` records that seats know what stands at a place; views show a
    # hidden variable's places known to the viewer (a known place shows everything inside it).
    # Writing a place forgets what was known of it: the new content is not known to anybody.
    def reveal(self, name: str, keys: tuple[Value, ...], player: Optional[int]) -> None:
        if player is not None and (player.__class__ is not int or not 0 <= player < self.n):
            raise RuleRuntimeError(f"cannot reveal to {fmt(player)}: not a player of this {self.n}-player game")
        c = self.data[name]
        for i, k in enumerate(keys):
            if c.__class__ is dict and k not in c:
                return  # an empty map entry: nothing stands there to be seen
            c = _get(c, k)
        self._charge(1)
        places = self.known.setdefault(name, {})
        who = -1 if player is None else player
        cur = places.get(keys, frozenset())
        if who not in cur and -1 not in cur:
            places[keys] = frozenset({-1}) if who == -1 else cur | {who}

    def forget(self, name: str, keys: tuple[Value, ...]) -> None:
        """The place (name, keys) was written: what was known of it, and of what is inside it, is gone;
        a known place around it stays known for everything else it holds."""
        places = self.known.get(name)
        if not places:
            return
        self._charge(len(places))
        n = len(keys)
        for path in list(places):
            if path[:n] == keys:
                del places[path]
            elif keys[:len(path)] == path:  # a known place around the one written
                seats = places.pop(path)
                c = self.data[name]
                for k in path:
                    c = _get(c, k)
                for depth in range(len(path), n):
                    step = keys[depth]
                    siblings = range(len(c)) if c.__class__ is tuple else (c if c.__class__ is dict else ())
                    self._charge(len(siblings))
                    for k in siblings:
                        if k != step:
                            sib = keys[:depth] + (k,)
                            places[sib] = places.get(sib, frozenset()) | seats
                    if c.__class__ is not tuple and c.__class__ is not dict or (c.__class__ is dict and step not in c):
                        break
                    c = _get(c, step)
        if not places:
            del self.known[name]

    def _charge(self, n: int) -> None:
        charge(self, n)

    def _known_to(self, name: str, player: int) -> tuple[set[tuple[Value, ...]], set[tuple[Value, ...]]]:
        """The places of variable `name` known to `player`, and every place that holds one of them."""
        seen = set()
        inner = set()
        for path, seats in self.known.get(name, {}).items():
            if -1 in seats or player in seats:
                seen.add(path)
                for i in range(len(path)):
                    inner.add(path[:i])
        return seen, inner

    @property
    def time_limit(self) -> float:
        return self.rs.time_limit

    def note(self, text: str) -> None:
        if len(text) > MAX_NOTE_CHARS:
            text = text[:MAX_NOTE_CHARS - 3] + "..."
        self.notes.append(text)
        if len(self.notes) > MAX_NOTES:
            del self.notes[0]

    def finish(self, reason: Optional[str]) -> None:
        self.over = True
        self.end_reason = reason
        self.pending = None
        self._actions = None
        if self.rs.observer is not None:
            self.rs.observer.finished(self, reason)

    def scenario_value(self, name: str) -> Value:
        if self.scenario is None:
            raise RuleRuntimeError(f"'{name}' is only known in scenarios")
        return self.scenario.value(self, name)

    def scenario_step(self, kind: str, value: Value) -> Value:
        if self.scenario is None:
            raise RuleRuntimeError("scenario steps only run in scenarios")
        return self.scenario.step(self, kind, value)

    # ------------------------------------------------------------------ the machine
    def _run(self, budget: Optional[int] = None, fresh: bool = True) -> None:
        budget = budget or self.rs.step_budget
        if fresh:  # (not after an action run by _run_action: its work counts with what follows)
            self.work = 0  # start_work(self), inline: the work budget and the clock start again
            self.work_mark = TIME_CHECK_EVERY
            self.deadline = None
            self.fdepth = 0
        self._actions = None  # the listing of the decision the run stops at is made anew (an offer may make it)
        frames = self.frames
        steps = 0
        # the clock is read every TIME_CHECK_STEPS steps: `limit` is the next step count to look at
        limit = budget if budget < TIME_CHECK_STEPS else TIME_CHECK_STEPS
        fr = None
        pc = 0
        try:
            while True:
                if self.over:
                    frames.clear()
                    return
                if not frames:
                    if not self._check_endings():
                        self.finish(self.end_pending or "end of flow")
                    return
                fr = frames[-1]
                ops = fr.code.ops
                L = fr.locals
                pc = fr.pc
                n = len(ops)
                while pc < n:
                    steps += 1
                    if steps > limit:
                        if steps > budget:
                            raise RuleRuntimeError(
                                f"the rules ran {budget:,} steps without needing a decision, the step budget "
                                "(an endless loop?)")
                        check_time(self)
                        limit = min(budget, steps + TIME_CHECK_STEPS)
                    r = ops[pc](self, L)
                    if r is None:
                        pc += 1
                        continue
                    if r.__class__ is int:
                        pc = r
                        continue
                    fr.pc = pc + 1
                    if r is SUSPEND:
                        return
                    if r is RETURN:
                        frames.pop()
                        break
                    if r is END:
                        frames.clear()
                        return
                    if r[0] == "call" and len(frames) < MAX_FRAMES and not self.over:
                        # a procedure: its frame runs at once (what _push and the loop above would do)
                        fr = Frame(r[1], 0, r[2], fr.depth)
                        frames.append(fr)
                        ops = fr.code.ops
                        L = fr.locals
                        pc = 0
                        n = len(ops)
                        continue
                    self._push(r, fr)
                    break
                else:
                    fr.pc = pc
                    frames.pop()
        except _STOPS as e:
            self._stopped(e, fr, pc)

    def _stopped(self, e: BaseException, fr: Optional[Frame], pc: int) -> None:
        """An error raised by op `pc` of frame `fr` (the running one): the game stops with it, said where."""
        if isinstance(e, RuleRuntimeError):
            span = fr.code.spans[pc] if fr is not None and pc < len(fr.code.spans) else None
            self._fail(str(e), span, fr.code.name if fr is not None else "")
        if isinstance(e, KeyError):
            span = fr.code.spans[pc] if fr is not None and pc < len(fr.code.spans) else None
            self._fail(f"{e} has no value here", span, fr.code.name if fr is not None else "")
        if isinstance(e, (TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError, OverflowError)):
            # a kind of value the checker could not rule out: report it at the statement, never as a crash
            span = fr.code.spans[pc] if fr is not None and pc < len(fr.code.spans) else None
            self._fail(f"a value of the wrong kind: {e}", span, fr.code.name if fr is not None else "")
        if isinstance(e, Located):
            if e.frames and fr is not None:  # procedures that ran without frames: their frames, as they would be
                fr.pc = e.caller_pc  # type: ignore[assignment]  # (set with the frames)
                for code, cpc, cl in e.frames:
                    self.frames.append(Frame(code, cpc, cl, fr.depth))
            self._fail(e.message, e.span, e.where if e.where is not None else fr.code.name if fr is not None else "")
        span = fr.code.spans[pc] if fr is not None and pc < len(fr.code.spans) else None  # RecursionError
        self._fail("the rules nest too deeply (a function calling itself without end?)", span, "")

    # An offered action whose whole code is one generated op (code.whole) is called by apply() without a frame,
    # then the rules run on as _run: the same work budget, errors (said at the same place, the action's frame
    # left as _run leaves it) and state; one step fewer against the step budget. The two helpers below are what
    # _run would do with a stop or a signal of that op.
    def _stopped_in_action(self, e: BaseException, code: Code, L: Locals, depth: int) -> None:
        fr = Frame(code, 0, L, depth)
        self.frames.append(fr)
        self._stopped(e, fr, 0)

    def _action_signal(self, r: Any, code: Code, L: Locals, depth: int) -> bool:
        """A signal of the action's op (END, RETURN, a call or triggers): as _run takes it. True for END (the
        rules stop there)."""
        fr = Frame(code, 1, L, depth)
        self.frames.append(fr)
        if r is END:
            self.frames.clear()
            return True
        if r is RETURN:
            self.frames.pop()
        else:
            try:
                self._push(r, fr)
            except RuleRuntimeError as e:
                self._stopped(e, fr, 0)
        return False

    def _push(self, r: Any, fr: Optional[Frame]) -> None:
        frames = self.frames
        if r[0] == "call":
            if len(frames) >= MAX_FRAMES:
                raise RuleRuntimeError(f"procedures call each other more than {MAX_FRAMES} deep")
            frames.append(Frame(r[1], 0, r[2], fr.depth if fr is not None else 0))
            return
        depth = (fr.depth if fr is not None else 0) + 1
        if depth > self.rs.cascade_depth:
            raise RuleRuntimeError(f"triggers set off triggers more than {self.rs.cascade_depth} deep (a trigger cascade "
                                   "that does not stop?)")
        if len(frames) + len(r[1]) > MAX_FRAMES:
            raise RuleRuntimeError(f"more than {MAX_FRAMES} procedures and triggers are running at once")
        for code, L2 in reversed(r[1]):
            frames.append(Frame(code, 0, L2, depth))
        if len(r) > 2:  # the first trigger's condition was tested by emit_event: it starts after its test
            frames[-1].pc = r[2]

    def _fail(self, message: str, span: Optional[A.Span], where: str) -> NoReturn:
        self.error = message
        loc = f"{span.where()}: " if span is not None else ""
        inside = f" (in {where})" if where else ""
        self.over = True
        self.end_reason = None
        self.pending = None
        raise GameError(f"{loc}{message}{inside}")

    def _check_endings(self) -> bool:
        for name, cond, span in self.rs.ending_checks:
            try:
                hit = cond(self, NO_LOCALS)  # type: ignore[arg-type]  # (an expression never writes its locals)
            except (RuleRuntimeError, KeyError) as e:
                self._fail(f"while checking ending \"{name}\": {e}", span, "")
            if hit:
                self.finish(name)
                self.frames.clear()
                return True
        return False

    def check_invariants(self) -> list[tuple[str, str, str]]:
        """The rules' invariants that do not hold now: a list of ``(name, position, message)``, in
        declaration order (``position`` is the invariant's ``path:line:col``). An invariant whose
        evaluation fails (a run-time error, the work budget) is reported too, with why. Nothing of the
        game changes; the work budget and the time limit apply to each invariant as to the rules."""
        checks = self.rs.invariant_checks
        if not checks:
            return []
        saved = (self.work, self.work_mark, self.deadline, self.fdepth)
        out = []
        try:
            for name, cond, span, reads in checks:
                start_work(self)
                self.fdepth = 0
                try:
                    hit = cond(self, {})
                except RuleRuntimeError as e:
                    out.append((name, span.where(), f"invariant \"{name}\" could not be checked: {e}"))
                    continue
                except Located as e:
                    out.append((name, span.where(), f"invariant \"{name}\" could not be checked: {e.message}"))
                    continue
                except KeyError as e:
                    out.append((name, span.where(), f"invariant \"{name}\" could not be checked: {e} has no value here"))
                    continue
                except (TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError, OverflowError) as e:
                    out.append((name, span.where(), f"invariant \"{name}\" could not be checked: a value of the "
                                                    f"wrong kind: {e}"))
                    continue
                except RecursionError:
                    out.append((name, span.where(), f"invariant \"{name}\" could not be checked: it nests too "
                                                    "deeply (a function calling itself without end?)"))
                    continue
                if hit is True:
                    continue
                if hit is False:
                    shown = self._shown_values(reads)
                    out.append((name, span.where(), f"invariant \"{name}\" does not hold" +
                                (f" ({shown})" if shown else "")))
                else:
                    out.append((name, span.where(), f"invariant \"{name}\" gave {fmt(hit)[:80]}, not true or false"))
        finally:
            self.work, self.work_mark, self.deadline, self.fdepth = saved
        return out

    def _shown_values(self, names: Iterable[str], limit: int = MAX_SHOWN_VALUE) -> str:
        """``name = value, ...`` for the variables an invariant reads (a long value is cut short)."""
        parts = []
        for name in names:
            if name not in self.data:
                continue
            v = self.data[name]
            text = readable(v) if _small(v, limit) else f"a value of {_size(v, limit)}+ items"
            if len(text) > limit:
                text = text[:limit - 3] + "..."
            parts.append(f"{name} = {text}")
        return ", ".join(parts)

    # ------------------------------------------------------------------ public API
    @property
    def current_player(self) -> int:
        if self.over or self.pending is None:
            return -4
        if self.pending.kind == "chance":
            return -1
        return self.pending.player

    @property
    def prompt(self) -> str:
        if self.over:
            return "the game is over"
        p = self.pending
        if p is None:
            return ""
        return p.prompt

    def is_over(self) -> bool:
        return self.over

    def is_chance(self) -> bool:
        return self.pending is not None and self.pending.kind == "chance"

    @property
    def decision_kind(self) -> Optional[str]:
        """What the pending decision is: "action" (an offered action), "choose" (a choice inside one),
        "chance", or None when nothing is pending (the game is over)."""
        p = self.pending
        return None if self.over or p is None else p.kind

    def action_in_progress(self) -> Optional[tuple[int, str]]:
        """The offered action being carried out at the pending decision, as (its place on the stack of
        running code, its name): the outermost one, so that choices inside procedures and triggers it set off
        count as its own. None at an offer, in setup and in the flow between actions."""
        for depth, frame in enumerate(self.frames):
            if frame.code.id.startswith("action:"):
                return depth, frame.code.id[7:]
        return None

    def legal_actions(self) -> list[Action]:
        if self.over or self.pending is None:
            return []
        acts = self._actions
        if acts is None:
            acts = self._list_actions()
        return list(acts)

    def _list_actions(self) -> list[Action]:
        """The Action objects of the pending options (kept in self._actions until the decision changes), and
        the id -> position table apply() uses (self._lookup)."""
        p: Pending = self.pending  # type: ignore[assignment]  # (a decision is pending: see legal_actions)
        options = p.options
        rs = self.rs
        if p.kind == "action":
            who = p.player
            # A generated listing of fixed candidates hands out one list per set of legal ones, known by its
            # identity (the cache holds the list too, so no other object can have its id): its Actions and
            # lookup are kept for the next time it is offered (OfferOp finds them with its decision). Other
            # listings are new lists of computed candidates, seldom offered again alike: nothing is kept
            # for them (finding them by their options cost more than it saved: a 3-player rulebook game 2% slower)
            key = (who, id(options)) if p.same_pairs and len(options) <= MAX_LISTED_OPTIONS else None
            if key is not None:
                got = rs.option_lists.get(key)
                if got is not None:
                    out, pair = got[0], got[1]
                    self._actions = out
                    self._lookup = pair if pair is None or pair[0] is options else (options, pair[1])
                    return out
            out = self._make_actions(True, who, options)
        else:
            out = self._make_actions(False, -1 if p.kind == "chance" else p.player, options)
            key = None
        self._actions = out
        # id -> position for apply(), kept with the very options list it was made from (ids are unique in
        # practice; if two were equal, apply() searches the list as before and takes the first). A short
        # list is searched by apply() (quicker than making the table), unless the table is kept for the
        # next time the same options are offered
        if len(options) > SEARCHED_OPTIONS or key is not None:
            look: Optional[dict[str, int]] = dict(zip(map(_FIRST, options), range(len(options))))
            if len(look) != len(options):  # type: ignore[arg-type]  # (the dict just made)
                look = None
        else:
            look = None
        self._lookup = (options, look) if look is not None else None
        if key is not None:
            rs._listed += len(options) + 1
            if rs._listed > MAX_CACHED_ACTIONS:  # the cache starts again when full
                rs.option_lists.clear()
                rs._listed = len(options) + 1
            # (options: alive as long as the key; the decision too, for an offer of the same list: an offer's
            # Pending is never changed once made, see OfferOp)
            rs.option_lists[key] = (out, self._lookup, options, p)
        return out

    def _make_actions(self, is_action: bool, who: int, options: list[tuple[str, Value]]) -> list[Action]:
        """An Action per option: shared by the games of a ruleset, one per (kind, seat, id, value)."""
        rs = self.rs
        key = who if is_action else -2 - who  # (a number: quicker to find than a pair)
        seat: Optional[dict[Any, Action]] = rs.action_cache.get(key)
        if seat is None:
            seat = rs.action_cache[key] = {}
        try:
            out: list[Any] = list(map(seat.get, options))  # options are (id, value) pairs: the pair is the key
        except TypeError:  # a value that cannot be a key (a map): new Actions, not kept
            out = [None] * len(options)
            seat = None
        if all(out):  # an Action is always true
            return out
        for k, o in enumerate(options):
            if out[k] is None:
                i, v = o
                if is_action:
                    a = Action(i, who, None, functools.partial(rs.actions[v[0]].describe, v[1]))
                else:
                    a = Action(i, who, None, functools.partial(_choice_text, v))
                out[k] = a
                if seat is not None:
                    rs._cached_actions += 1
                    seat[o] = a
        if rs._cached_actions > MAX_CACHED_ACTIONS:  # the cache starts again when full
            rs.action_cache.clear()
            rs._cached_actions = 0
        return out

    def chance_outcomes(self) -> list[tuple[Action, float]]:
        p = self.pending
        if self.over or p is None or p.kind != "chance":
            return []
        return list(zip(self.legal_actions(), p.probs))  # type: ignore[arg-type]  # (a chance has its chances)

    def apply(self, action: Union[Action, str]) -> None:
        if self.error is not None:
            raise GameError(f"the game stopped on an error: {self.error}")
        if self.over:
            raise IllegalAction("the game is over")
        aid = action.id if action.__class__ is Action or isinstance(action, Action) else action
        if aid.__class__ is not str and not isinstance(aid, str):
            raise IllegalAction(f"an action is an Action or its id (a string), not {type(action).__name__}")
        p: Pending = self.pending  # type: ignore[assignment]  # (a decision is pending: the game is not over)
        options = p.options
        look = self._lookup
        if look is not None and look[0] is options:  # made by legal_actions() from these very options
            k = look[1].get(aid)
            if k is None:
                self._illegal(aid, p)
            value = options[k][1]
        else:
            for i, v in options:
                if i == aid:
                    value = v
                    break
            else:
                self._illegal(aid, p)
        self._lookup = None
        bound = self.rs.max_decisions
        if bound is not None and len(self.log) >= bound and p.kind != "chance" and \
                sum(1 for e in self.log if e["player"] >= 0) >= bound:
            self._fail(f"the game header says a game takes at most {bound:,} decisions (max_decisions), and "
                       f"this would be decision {bound + 1:,}", self.rs.program.game.span, "")  # type: ignore[union-attr]
        self.log.append({"player": -1 if p.kind == "chance" else p.player, "action": aid})
        self._actions = None
        fr = self.frames[-1]
        pc = fr.pc - 1
        op = fr.code.ops[pc]
        if op.__class__ is OfferOp and len(self.frames) < MAX_FRAMES:  # op.resume and _push, inline
            self.pending = None
            try:
                act = self.rs.actions[value[0]]
                L2 = act.make_locals(value[1], p.player)
            except (KeyError, TypeError, ValueError, IndexError) as e:
                self._fail(f"a value of the wrong kind: {e}", fr.code.spans[pc], fr.code.name)
            code = act.code
            if code.whole is not None and len(self.frames) + 1 < MAX_FRAMES:  # (as many frames as _run sees)
                # its op called here, without a frame (see _stopped_in_action)
                self.work = 0
                self.work_mark = TIME_CHECK_EVERY
                self.deadline = None
                self.fdepth = 0
                try:
                    r = code.whole(self, L2)
                except _STOPS as e:
                    self._stopped_in_action(e, code, L2, fr.depth)
                if r is None or r.__class__ is int:  # the position it goes on at (the end: the action is done)
                    pc = 1 if r is None else r
                    if pc < len(code.ops):
                        self.frames.append(Frame(code, pc, L2, fr.depth))
                elif self._action_signal(r, code, L2, fr.depth):
                    return
                self._run(fresh=False)  # (its work counts with the action's)
            else:
                self.frames.append(Frame(act.code, 0, L2, fr.depth))
                self._run()
            return
        self.work = 0  # start_work(self), inline
        self.work_mark = TIME_CHECK_EVERY
        self.deadline = None
        try:
            r = op.resume(self, fr.locals, value)
        except RuleRuntimeError as e:
            self._fail(str(e), fr.code.spans[pc], fr.code.name)
        except Located as e:
            self._fail(e.message, e.span, fr.code.name)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError, OverflowError) as e:
            self._fail(f"a value of the wrong kind: {e}", fr.code.spans[pc], fr.code.name)
        if r is SUSPEND:
            return
        if r is not None:
            if r[0] == "call" and len(self.frames) < MAX_FRAMES:  # _push, inline for the common case
                self.frames.append(Frame(r[1], 0, r[2], fr.depth))
            else:
                try:
                    self._push(r, fr)
                except RuleRuntimeError as e:
                    self._fail(str(e), fr.code.spans[pc], fr.code.name)
        self._run()

    def _illegal(self, aid: str, p: Pending) -> NoReturn:
        legal = [i for i, _ in p.options]
        shown = ", ".join(legal[:12]) + (" ..." if len(legal) > 12 else "")
        who = "chance" if p.kind == "chance" else f"P{p.player}"
        raise IllegalAction(f"'{aid}' is not legal now ({who} to decide: {p.prompt}); legal: {shown}")

    def scores(self) -> list[int]:
        if self.rs.score_fn is None:
            return [0] * self.n
        start_work(self)
        self.fdepth = 0
        param, f = self.rs.score_fn
        where = self.rs.program.score.span.where()  # type: ignore[union-attr]  # (there: its _fn is)
        try:
            out = [f(self, {param: p}) for p in range(self.n)]
        except (RuleRuntimeError, KeyError, TypeError, ValueError, IndexError) as e:
            raise GameError(f"{where}: while scoring: {e}") from None
        except RecursionError:
            raise GameError(f"{where}: while scoring: the score nests too deeply (a function calling itself "
                            "without end?)") from None
        for p, v in enumerate(out):
            if v.__class__ is not int:
                raise GameError(f"{where}: the score of P{p} is {fmt(v)}, not a number")
        return out

    def _tiebreaks(self) -> list[tuple[Value, ...]]:
        if self.rs.tiebreak_fn is None:
            return [()] * self.n
        param, f = self.rs.tiebreak_fn
        out = []
        start_work(self)
        self.fdepth = 0
        for p in range(self.n):
            try:
                v = f(self, {param: p})
            except (RuleRuntimeError, KeyError, TypeError, ValueError, IndexError) as e:
                raise GameError(f"{self.rs.program.tiebreak.span.where()}: while breaking ties: {e}"  # type: ignore[union-attr]
                                ) from None
            except RecursionError:
                raise GameError(f"{self.rs.program.tiebreak.span.where()}: while breaking ties: the tiebreak nests "  # type: ignore[union-attr]
                                "too deeply (a function calling itself without end?)") from None
            out.append(tuple(v) if isinstance(v, tuple) else (v,))
        return out

    def winners(self) -> list[int]:
        if not self.over or self.error is not None:
            return []
        alive = self.active_players()
        if not alive:
            return []
        sc = self.scores()
        tb = self._tiebreaks()
        key = {p: (sc[p],) + tuple(skey(x) for x in tb[p]) for p in alive}
        best = max(key.values())
        return [p for p in alive if key[p] == best]

    def returns(self, scheme: str = "zero_sum") -> list[float]:
        """Each seat's utility at the end (all 0.0 before). With a `payoff p = EXPR` declaration: its value
        for each seat. Otherwise ("zero_sum"): every seat outside winners() gets -1 and the k winners share
        what the losers lose, (n - k) / k each; so one winner of two gets +1 and the loser -1, and the
        returns always sum to 0 (a victory shared by all: 0 each). scheme="legacy" is the rule before
        payoffs: one winner +1 and the rest -1; on a shared victory the winners 0 and the rest -1."""
        if scheme not in ("zero_sum", "legacy"):
            raise ValueError(f"scheme is \"zero_sum\" or \"legacy\", not {scheme!r}")
        if not self.over:
            return [0.0] * self.n
        if self.rs.payoff_fn is not None and scheme == "zero_sum":
            return [float(v) for v in self.payoffs()]  # type: ignore[union-attr]  # (a list: payoff_fn is set)
        w = self.winners()
        if scheme == "legacy":
            if len(w) == 1:
                return [1.0 if p == w[0] else -1.0 for p in range(self.n)]
            return [0.0 if p in w else -1.0 for p in range(self.n)]
        if not w:
            return [0.0] * self.n
        share = (self.n - len(w)) / len(w)
        return [share if p in w else -1.0 for p in range(self.n)]

    def heuristics(self) -> Optional[list[int]]:
        """The `heuristic p = EXPR` declaration's value for each seat now (whole numbers), or None without
        one: how well each seat stands, as the rules' author estimates it (the heuristic agent reads it).
        Computed under the work budget; an error is the game's error, said where the heuristic is."""
        if self.rs.heuristic_fn is None:
            return None
        start_work(self)
        self.fdepth = 0
        param, f = self.rs.heuristic_fn
        where = self.rs.program.heuristic.span.where()  # type: ignore[union-attr]  # (there: its _fn is)
        self.memo = {}  # (nothing changes while it is computed: a function's call is made once per arguments)
        try:
            out = [f(self, {param: p}) for p in range(self.n)]
        except (RuleRuntimeError, KeyError, TypeError, ValueError, IndexError) as e:
            raise GameError(f"{where}: while computing the heuristic: {e}") from None
        except RecursionError:
            raise GameError(f"{where}: while computing the heuristic: it nests too deeply") from None
        finally:
            self.memo = None
        for p, v in enumerate(out):
            if v.__class__ is not int:
                raise GameError(f"{where}: the heuristic of P{p} is {fmt(v)}, not a number")
        return out

    def payoffs(self) -> Optional[list[int]]:
        """The `payoff p = EXPR` declaration's value for each seat (whole numbers), or None without one."""
        if self.rs.payoff_fn is None:
            return None
        start_work(self)
        self.fdepth = 0
        param, f = self.rs.payoff_fn
        where = self.rs.program.payoff.span.where()  # type: ignore[union-attr]  # (there: its _fn is)
        try:
            out = [f(self, {param: p}) for p in range(self.n)]
        except (RuleRuntimeError, KeyError, TypeError, ValueError, IndexError) as e:
            raise GameError(f"{where}: while computing the payoffs: {e}") from None
        except RecursionError:
            raise GameError(f"{where}: while computing the payoffs: the payoff nests too deeply (a function "
                            "calling itself without end?)") from None
        for p, v in enumerate(out):
            if v.__class__ is not int:
                raise GameError(f"{where}: the payoff of P{p} is {fmt(v)}, not a number")
        return out

    def clone(self) -> Game:
        # Every field is set by name, in __init__'s order: copying through __dict__ would turn both games'
        # attributes into a plain dict, which CPython reads about twice as slowly as an instance's own slots
        # (tests/test_hot_paths.py checks that this list is every field a game has)
        g = Game.__new__(Game)
        g.rs = self.rs
        g._triggers = self._triggers
        g.n = self.n
        g.seed = self.seed
        g.chance_mode = self.chance_mode
        g.consts = self.consts
        g.data = self.data.copy()
        g.frames = [Frame(f.code, f.pc, f.locals.copy(), f.depth) for f in self.frames]
        g.pending = self.pending.copy() if self.pending is not None else None
        g.current = self.current
        g.eliminated = self.eliminated
        g.known = {name: dict(places) for name, places in self.known.items()} if self.known else {}
        g.over = self.over
        g.end_reason = self.end_reason
        g.end_pending = self.end_pending
        g.rng = self.rng
        g.log = list(self.log)
        g.notes = list(self.notes)
        g.turns = self.turns
        g.fdepth = self.fdepth
        g.memo = None
        g.work = self.work
        g.work_mark = self.work_mark
        g.deadline = self.deadline
        g.scenario = None
        g.error = self.error
        g._actions = self._actions
        g._lookup = self._lookup
        if self.rs.pieces:
            P.copy_pieces(g)
        return g

    def determinize(self, seat: int, rng: Any = None) -> Game:
        """A copy in which every value hidden from `seat` is dealt out again at random (`rng`: a
        random.Random or a seed); see interpreter/determinize.py."""
        return determinize(self, seat, rng)

    # ------------------------------------------------------------------ views
    def view(self, player: Optional[int] = None) -> dict[str, Any]:
        if player is not None and (isinstance(player, bool) or not isinstance(player, int) or not 0 <= player < self.n):
            raise GameError(f"there is no player {player!r} in a {self.n}-player game")
        out: dict[str, Any] = {
            "game": self.rs.name,
            "players": self.n,
            "viewer": player,
            "current_player": self.current_player,
            "turn_of": self.current,
            "over": self.over,
            "end_reason": self.end_reason,
            "eliminated": [p for p in range(self.n) if self.eliminated[p]],
            "vars": {},
        }
        for name, per, _, ty, vis in self.rs.vars:
            out["vars"][name] = self._visible(name, per, vis, self.data[name], player)
        if self.rs.pieces:
            out["pieces"] = P.view_pieces(self, player)
        p = self.pending
        if p is not None:
            pend = {"kind": p.kind, "player": -1 if p.kind == "chance" else p.player, "prompt": p.prompt}
            if player is None or (p.kind == "chance" and p.prompt != "draw") or (p.kind != "chance" and p.player == player):
                # the outcomes of a draw would tell what is left in the pile: only the full view has them
                pend["options"] = [i for i, _ in p.options]
            out["pending"] = pend
        if self.over:
            out["scores"] = self.scores()
            out["winners"] = self.winners()
        out["notes"] = list(self.notes[-20:])
        return out

    def _visible(self, name: str, per: bool, vis: str, value: Value, player: Optional[int]) -> Json:
        if player is None:
            return to_plain(value, full=True)
        if vis == "all":
            return to_plain(value)
        if vis == "none":
            return [hidden_form(v) for v in value] if per else hidden_form(value)
        seen, inner = self._known_to(name, player)  # owner / known: one's own seat, and revealed places
        if per:
            return [to_plain(v) if q == player else shown_value(v, (q,), seen, inner)
                    for q, v in enumerate(value)]
        return shown_value(value, (), seen, inner)

    # ------------------------------------------------------------------ save / load
    POSITION_FIELDS = ("format", "game", "variants", "players", "seed", "chance", "data", "frames", "pending",
                       "current", "eliminated", "known", "over", "end_reason", "end_pending", "rng", "error")

    def position_key(self) -> bytes:
        """A digest of the position: what to_dict() saves (the fields POSITION_FIELDS), but not how the
        game got there (log, notes, turns). Equal for positions equal in all of those, different
        otherwise (SHA-256 of the repr of canonical forms, values.canonical); several times quicker than
        hashing to_dict()'s JSON, for the walks that key every position (exhaustive search, the
        adapters' facts)."""
        form = (SAVE_FORMAT, self.rs.name, tuple(self.rs.active_variants), self.n, self.seed, self.chance_mode,
                canonical(self.data),
                tuple((f.code.id, f.pc, canonical(f.locals), f.depth) for f in self.frames),
                # (a pending decision is JSON already, its options many: the C encoder, keys sorted)
                json.dumps(self.pending.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                if self.pending is not None else None,
                self.current, tuple(self.eliminated),
                canonical({name: places for name, places in self.known.items() if places}),
                self.over, self.end_reason, self.end_pending, canonical(self.rng), self.error)
        return hashlib.sha256(repr(form).encode("utf-8")).digest()

    def to_dict(self) -> dict[str, Json]:
        return {
            "format": SAVE_FORMAT,
            "game": self.rs.name,
            "variants": list(self.rs.active_variants),
            "players": self.n,
            "seed": self.seed,
            "chance": self.chance_mode,
            "data": {k: encode(v) for k, v in self.data.items()},
            "frames": [[f.code.id, f.pc, {k: encode(v) for k, v in f.locals.items()}, f.depth] for f in self.frames],
            "pending": self.pending.to_dict() if self.pending is not None else None,
            "current": self.current,
            "eliminated": list(self.eliminated),
            "known": [[name, [encode(k) for k in path], sorted(seats)]
                      for name in sorted(self.known)
                      for path, seats in sorted(self.known[name].items(), key=lambda kv: skey(kv[0]))],
            "over": self.over,
            "end_reason": self.end_reason,
            "end_pending": self.end_pending,
            "rng": self.rng,
            "log": [dict(x) for x in self.log],
            "notes": list(self.notes),
            "turns": self.turns,
            "error": self.error,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, rs: PlayedRules, text: object) -> Game:
        return _saves.load_game(cls, rs, text)  # a save is untrusted: checked completely (interpreter/saves.py)


def _vars_read(expr: Any) -> tuple[str, ...]:
    """The variables an expression reads, in order of first appearance (for the message of a failed invariant)."""
    out = []
    for n in A.walk(expr):
        if isinstance(n, A.Name) and n.ref == "var" and n.ident not in out:
            out.append(n.ident)
    return tuple(out)


def _size(v: Value, limit: int) -> int:
    """The number of items in v, nested ones included, counting no further than ``limit`` (the walk holds
    at most ``limit`` items waiting: a container's items are taken only as far as the count can go)."""
    n = 0
    stack = [v]
    while stack and n <= limit:
        x = stack.pop()
        n += 1
        room = limit + 1 - n - len(stack)  # items still worth keeping to count
        if x.__class__ is dict:
            if room > 0:
                stack.extend(islice(chain.from_iterable(x.items()), room))
            else:
                n += 2 * len(x)
        elif isinstance(x, (tuple, frozenset)):
            if room > 0:
                stack.extend(islice(x, room))
            else:
                n += len(x)
        elif isinstance(x, Pile):
            n += len(x)
    return n


def _small(v: Value, limit: int) -> bool:
    return _size(v, limit) <= limit


def _choice_text(v: Value) -> str:
    return "done" if v is _DONE else readable(v)

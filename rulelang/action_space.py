"""Stable integer action ids for a ruleset: what the OpenSpiel and PettingZoo adapters number decisions by.

The same decision is the same integer in every state of every game of a ruleset (whatever the player
count), and every id is below `ActionSpace.size`, which is computed from the checked program when the
space is built, never from a game. The scheme (docs/ecosystem.md, "Action ids"):

Player decisions (ids `0 .. size-1`, OpenSpiel's `num_distinct_actions`):

* **the action blocks**, one per action in the order the file declares them: an action without
  parameters is one id; an action whose parameter domains are known finite sets (a literal range or
  list, a typed parameter such as `c: Colour`, or the universe of its domain's element type) with at
  most `DIRECT_LIMIT` combinations gets one id per combination (mixed radix over its parameters, in
  declaration order: tic-tac-toe's `place(r, c)` is `3r + c`); a larger one is taken pick by pick:
  first the action's own id, then each parameter's value from the value block (the adapters keep the
  picks made so far in their state; the rules see one whole action).
* **`done`**: ends an optional or multiple `choose` (only in a program with a `choose`).
* **the value block**: every value a `choose` may offer, and every parameter value of an action taken
  pick by pick, in the canonical value order (`interpreter.values.skey`).

Chance outcomes (ids `0 .. max_chance_outcomes-1`, their own numbering, as in OpenSpiel): every value a
`roll` or `draw` may produce, in the canonical value order.

The values a `choose`, `roll` or `draw` may produce: the universe of the element type the checker gave
its options, where that type is finite (`bool`, an int range `a..b`, an enum's members, a record's table
rows, a piece kind's pieces (ids `1..max_piece_id`), `player` (seats of the largest player count), `node`
(every node of every board), a tuple of these (the product)); for `int`, `str` and `any` the values the
program can put there: a constant expression (`roll one of 1..6`, `[0, 1, 2]`) is evaluated, and a
pile or list variable holds its start values and whatever the rules add, move, draw or assign into it
(found by a fixed point over every such statement; one the analysis cannot follow gives up). Where
that fails, the fallback universe: every atom (`none`, the bools, the plain-int window `int_range`,
every string the program can name, every node, every piece id).

A value outside these bounds (an int beyond `int_range`, a piece id beyond `max_piece_id`, a list) has no
id: `ActionSpaceError` says which and how to widen the bound. A space larger than `MAX_SIZE` ids is
refused with the same error.
"""
from __future__ import annotations

import itertools

from interpreter.game import Game
from interpreter.values import Piece, Pile, fmt, skey

from . import ast as A
from . import types as T

DIRECT_LIMIT = 4096  # most ids one action may take as whole combinations; larger ones are picked in steps
MAX_SIZE = 1_000_000  # most ids in one space (an action mask is one byte per id)
DEFAULT_INT_RANGE = (0, 99)  # plain-int values that have an id (choose one of 0..k; roll one of 1..6)
DEFAULT_MAX_PIECE_ID = 256  # piece ids that have an id (ids start at 1 and are never reused in a game)
MAX_INFERRED = 100_000  # most values the analysis of constants and piles keeps for one place


class ActionSpaceError(ValueError):
    """A decision or a value that has no stable id under this space's bounds (one-line message)."""


class ActionSpace:
    """The stable numbering of a ruleset's decisions. Build once per ruleset; ask per game state."""

    def __init__(self, ruleset, int_range=DEFAULT_INT_RANGE, max_piece_id=DEFAULT_MAX_PIECE_ID):
        lo, hi = int_range
        if not (isinstance(lo, int) and isinstance(hi, int) and lo <= hi):
            raise ActionSpaceError(f"int_range is (low, high) with low <= high, not {int_range!r}")
        if not isinstance(max_piece_id, int) or max_piece_id < 0:
            raise ActionSpaceError(f"max_piece_id is a whole number from 0, not {max_piece_id!r}")
        self.rs = ruleset
        self.int_range = (lo, hi)
        self.max_piece_id = max_piece_id
        self._skey = skey
        prog = ruleset.source_program
        self._prog = prog
        self._atoms_cache = None
        self.max_players = max(ruleset.player_counts)
        self._domains = _Domains(self)

        # the values of choices (and stepwise parameters), and the chance outcomes
        values = {}
        outcomes = {}

        def add(into, universe):
            for v in universe:
                into.setdefault(skey(v), v)
        self.chance = False
        chooses = False
        for node in A.walk(_game_roots(prog)):
            if isinstance(node, A.Choose):
                chooses = True
                add(values, self._produces(node.options))
            elif isinstance(node, A.Roll):
                self.chance = True
                add(outcomes, self._produces(node.faces))
            elif isinstance(node, (A.Draw, A.DrawInto)):
                self.chance = True
                add(outcomes, self._produces(node.pile))

        # the actions, in the order the file declares them
        self.actions = {}  # name -> (base, universes, direct, index)
        self._split = {}  # a stepwise action -> per parameter: None (one pick) or k (a tuple: k picks)
        plan = []
        for name in ruleset.actions:
            decl = prog.decls[name]
            compiled = ruleset.actions[name]
            universes = []
            for p, dom in zip(decl.params, compiled.domains):
                if dom.__class__.__name__ == "_Fixed":
                    universes.append(tuple(dom.values))
                elif p.domain is not None:
                    universes.append(self._produces(p.domain))
                else:
                    universes.append(self._universe(self._param_type(p.type)))
            combos = 1
            for u in universes:
                combos *= max(1, len(u))
                if combos > DIRECT_LIMIT:
                    break
            direct = combos <= DIRECT_LIMIT
            if not direct:
                split = []
                for p, u in zip(decl.params, universes):
                    parts = self._tuple_parts(p)
                    if parts is not None and len(u) > DIRECT_LIMIT:  # a tuple picked part by part
                        split.append(len(parts))
                        for part in parts:
                            add(values, part)
                    else:
                        split.append(None)
                        add(values, u)
                self._split[name] = tuple(split)
            plan.append((name, universes, direct, combos if direct else 1))
        base = 0
        self._by_base = []
        for name, universes, direct, width in plan:
            index = [{skey(v): i for i, v in enumerate(u)} for u in universes] if direct else None
            self.actions[name] = (base, universes, direct, index)
            self._by_base.append((base, width, name))
            base += width
        # `done` only where a choose may offer it
        self.done_id = base if chooses else None
        base += 1 if chooses else 0
        self.value_base = base
        keys = sorted(values)
        self.values = [values[k] for k in keys]
        self._value_id = {k: base + i for i, k in enumerate(keys)}
        self.size = base + len(keys)
        if self.size > MAX_SIZE:
            raise ActionSpaceError(f"{ruleset.name}: {self.size:,} action ids, more than {MAX_SIZE:,}; lower "
                                   "int_range or max_piece_id, or give large parameters a literal domain")
        keys = sorted(outcomes)
        self.outcomes = [outcomes[k] for k in keys]
        self._outcome_id = {k: i for i, k in enumerate(keys)}
        self.max_chance_outcomes = len(self.outcomes) if self.chance else 0

    def _produces(self, expr):
        """The values an element of the collection `expr` may be (a choose's options, a roll's faces, a
        pile drawn from, a parameter's domain)."""
        t = self.element_type(expr)
        if _finite(t, self._prog):
            return self._universe(t)
        got = self._domains.elements(expr)
        if got is not None:
            return tuple(got.values())
        return self._universe(t)

    # ------------------------------------------------------------------ universes
    def _atoms(self):
        """Every value of a basic kind that has an id: none, bools, the int window, every string the program
        can name, every board node, every piece id."""
        if self._atoms_cache is None:
            rs, prog = self.rs, self._prog
            out = [None, False, True]
            out += range(self.int_range[0], self.int_range[1] + 1)
            strings = set()
            for d in prog.decls.values():
                if isinstance(d, A.EnumDecl):
                    strings.update(d.members)
            for rows in rs.table_rows.values():
                strings.update(r for r in rows if isinstance(r, str))
            for node in A.walk(_game_roots(prog)):
                if isinstance(node, A.Literal) and isinstance(node.value, str):
                    strings.add(node.value)
            nodes = self._nodes()
            strings.update(n for n in nodes if isinstance(n, str))
            out += sorted(strings)
            out += [n for n in nodes if not isinstance(n, str)]
            for d in prog.decls.values():
                if isinstance(d, A.PieceDecl):
                    out += [Piece(d.name, i) for i in range(1, self.max_piece_id + 1)]
            self._atoms_cache = tuple(out)
        return self._atoms_cache

    def _nodes(self):
        seen = {}
        for b in self.rs.boards.values():
            for n in b.nodes:
                seen.setdefault(self._skey(n), n)
        return [seen[k] for k in sorted(seen)]

    def _param_type(self, t):
        """A parameter's declared type (syntax) as a checker type."""
        if isinstance(t, A.TypeRange):
            return T.rng(t.low, t.high)
        if isinstance(t, A.TypeName):
            if t.name in T.BASIC:
                return T.BASIC[t.name]
            decl = self._prog.decls.get(t.name)
            if isinstance(decl, A.EnumDecl):
                return T.Type(t.name, kind="enum")
            if isinstance(decl, (A.RecordDecl, A.PieceDecl)):
                return T.Type(t.name, kind="record")
        return T.ANY

    def _universe(self, t, depth=0):
        if t.kind == "range":
            return tuple(range(t.low, t.high + 1))
        name = t.name
        if name == "bool":
            return (False, True)
        if name == "int":
            return tuple(range(self.int_range[0], self.int_range[1] + 1))
        if name == "player":
            return tuple(range(self.max_players))
        if name == "none":
            return (None,)
        if name == "node":
            return tuple(self._nodes())
        if name == "str":
            return tuple(a for a in self._atoms() if isinstance(a, str))
        decl = self._prog.decls.get(name)
        if isinstance(decl, A.EnumDecl):
            return tuple(decl.members)
        if isinstance(decl, A.PieceDecl):
            return tuple(Piece(name, i) for i in range(1, self.max_piece_id + 1))
        if isinstance(decl, A.RecordDecl):
            return tuple(r for tname, rows in self.rs.table_rows.items()
                         if self._prog.decls[tname].record == name for r in rows)
        if name == "tuple" and t.args and depth < 3:
            parts = [self._universe(a, depth + 1) for a in t.args]
            size = 1
            for p in parts:
                size *= len(p)
            if size <= MAX_SIZE:
                return tuple(itertools.product(*parts))
        return self._atoms()

    # ------------------------------------------------------------------ ids
    def value_id(self, v):
        """The player id of a chosen value (or of a parameter picked in steps)."""
        i = self._value_id.get(self._skey(v))
        if i is None:
            raise self._no_id(v)
        return i

    def outcome_id(self, v):
        """The chance outcome id of a rolled or drawn value."""
        i = self._outcome_id.get(self._skey(v))
        if i is None:
            raise self._no_id(v, "chance outcome ")
        return i

    def value_at(self, i):
        """The value a player id of the value block stands for."""
        return self.values[i - self.value_base]

    def _no_id(self, v, what=""):
        return ActionSpaceError(
            f"the value {fmt(v)[:60]} has no {what}id in {self.rs.name} (ints have ids from "
            f"{self.int_range[0]} to {self.int_range[1]} unless the rules say which can occur, piece ids up to "
            f"{self.max_piece_id}): widen int_range or max_piece_id")

    def action_id(self, name, args):
        """The id of the whole action `name(args)`, or of its first pick if it is taken in steps."""
        base, universes, direct, index = self.actions[name]
        if not direct:
            return base
        i = 0
        for v, idx, u in zip(args, index, universes):
            k = idx.get(self._skey(v))
            if k is None:
                raise ActionSpaceError(f"{name}: the parameter value {fmt(v)[:60]} is outside the parameter's "
                                       f"domain of {len(u)} values known when the rules load")
            i = i * len(u) + k
        return base + i

    def stepwise(self, name):
        return not self.actions[name][2]

    def picks(self, name, args):
        """The values an action taken in steps is picked as, in order: each parameter's value, or the parts
        of a tuple whose universe is too large to number whole (a `jump(m)` whose `m` is a (row, column,
        direction) of plain ints, is three picks)."""
        split = self._split.get(name)
        if not split:
            return tuple(args)
        out = []
        for k, v in zip(split, args):
            if k is not None and v.__class__ is tuple and len(v) == k:
                out.extend(v)
            else:
                out.append(v)
        return tuple(out)

    def max_picks(self):
        """The most value picks one action taken in steps may need."""
        most = 0
        for name in self.actions:
            if self.stepwise(name):
                split = self._split.get(name, ())
                most = max(most, sum(1 if k is None else k for k in split))
        return most

    def element_type(self, expr, depth=0):
        """The type of an item of the collection `expr`: the checker's, or where it says `any`, what the
        expression builds (the branches of an `if`, a comprehension's item, a called function's body)."""
        t = T.element(expr.ty or T.ANY)
        if t.name != "any" or depth > 8:
            return t
        c = expr.__class__
        if c is A.Cond:
            parts = [self.element_type(e, depth + 1) for e in (expr.then, expr.orelse) if not _empty(e)]
            return T.join_all(parts) if parts else t
        if c is A.Comprehension and expr.kind == "list" and expr.element is not None:
            return expr.element.ty or t
        if c is A.ListLit and expr.items:
            return T.join_all([e.ty or T.ANY for e in expr.items])
        if c is A.Call and expr.func.__class__ is A.Name and expr.func.ref == "func":
            decl = self._prog.decls.get(expr.func.ident)
            if isinstance(decl, A.FuncDecl) and decl.body is not None:
                return self.element_type(decl.body, depth + 1)
        return t

    def _tuple_parts(self, p):
        """The universes of the parts of a parameter whose values are tuples of a known length, or None."""
        t = None
        if p.domain is not None:
            t = self.element_type(p.domain)
        elif isinstance(p.type, A.TypeGeneric) and p.type.name == "tuple":
            t = T.Type("tuple", tuple(self._param_type(a) for a in p.type.args), kind="generic")
        if t is None or t.name != "tuple" or not t.args:
            return None
        return [self._universe(a) for a in t.args]

    def options(self, game, partial=()):
        """The legal decisions of `game` (with the picks `partial` of a stepwise action made so far) as a
        sorted list of (id, option id or None, probability or None): the option id is the rule-level id to
        apply (None: a pick that needs more picks)."""
        p = game.pending
        if game.over or p is None:
            return []
        out = {}
        if p.kind == "chance":
            for (oid, v), prob in zip(p.options, p.probs or [1.0 / len(p.options)] * len(p.options)):
                out[self.outcome_id(v)] = (oid, prob)
        elif p.kind == "choose":
            for oid, v in p.options:
                out[self.done_id if oid == "done" and v.__class__.__name__ == "_Done" else self.value_id(v)] = \
                    (oid, None)
        elif not partial:
            for oid, (name, args) in p.options:
                if self.stepwise(name):
                    out.setdefault(self.action_id(name, args), (None, None))
                else:
                    out[self.action_id(name, args)] = (oid, None)
        else:
            name, picked = partial[0], tuple(partial[1:])
            k = len(picked)
            for oid, (n2, args) in p.options:
                if n2 == name:
                    flat = self.picks(name, args)
                    if flat[:k] == picked:
                        i = self.value_id(flat[k])
                        out[i] = (oid if k + 1 == len(flat) else None, None)
        return [(i, oid, prob) for i, (oid, prob) in sorted(out.items())]

    def name_of(self, i):
        """The action whose block holds id `i` (None for a value or `done`)."""
        for base, width, name in self._by_base:
            if base <= i < base + width:
                return name
        return None

    def describe_outcome(self, i):
        """A readable text of a chance outcome id."""
        import operator
        try:
            i = operator.index(i)
        except TypeError:
            return f"<no outcome {i!r}>"
        if isinstance(i, bool) or not 0 <= i < len(self.outcomes):
            return f"<no outcome {i}>"
        return fmt(self.outcomes[i])

    def describe(self, i):
        """A readable text of a player id (the same in every state)."""
        import operator
        try:
            i = operator.index(i)  # an int, or a NumPy integer from a mask
        except TypeError:
            return f"<no action {i!r}>"
        if isinstance(i, bool) or not 0 <= i < self.size:
            return f"<no action {i}>"
        if i >= self.value_base:
            return fmt(self.value_at(i))
        if i == self.done_id:
            return "done"
        for base, width, name in self._by_base:
            if base <= i < base + width:
                _, universes, direct, _ = self.actions[name]
                if not universes:
                    return name
                if not direct:
                    return name + "(...)"
                k = i - base
                args = []
                for u in reversed(universes):
                    args.append(u[k % len(u)])
                    k //= len(u)
                act = self.rs.actions[name]
                return f"{name}({','.join(act.arg_text(k, a) for k, a in enumerate(reversed(args)))})"
        return f"<no action {i}>"


def _game_roots(prog):
    """What runs in a game (scenarios aside): declarations, triggers, endings, score, payoff."""
    roots = list(prog.decls.values()) + list(prog.triggers) + list(prog.endings)
    roots += [s for s in (prog.score, prog.tiebreak, getattr(prog, "payoff", None), getattr(prog, "heuristic", None))
              if s is not None]
    return roots


def _empty(e):
    """An empty list literal (`[]`): it adds no items to a union of branches."""
    return (e.__class__ is A.ListLit and not e.items) or e.__class__ is A.EmptyLit


def _finite(t, prog):
    """Whether the checker type `t` has a finite universe of its own (no analysis needed)."""
    if t.kind == "range":
        return True
    if t.name in ("bool", "player", "none", "node"):
        return True
    if isinstance(prog.decls.get(t.name), (A.EnumDecl, A.RecordDecl, A.PieceDecl)):
        return True
    if t.name == "tuple" and t.args:
        return all(_finite(a, prog) for a in t.args)
    return False


class _Unknown(Exception):
    """An expression whose value the analysis cannot tell."""


_PILES = ("list", "set", "deck", "bag")


class _Domains:
    """Which values a `choose`, `roll` or `draw` of an `int`, `str` or `any` element may produce: the
    values of a constant expression, or what a pile or list variable can hold (its start values and
    everything any statement of the rules adds, moves, draws, shuffles or assigns into it, as a least
    fixed point). Anything the analysis cannot follow makes the answer None (unknown): it is never a
    guess, so a universe it gives holds every value that can occur."""

    def __init__(self, space):
        self.space = space
        self.prog = space._prog
        self.rs = space.rs
        self._start = None
        self._vars = None

    # ------------------------------------------------------------------ start values and constants
    def _starts(self):
        """(constants, [the variables' start values at each player count])."""
        if self._start is None:
            consts, datas = {}, []
            for n in self.rs.player_counts:
                g = Game(self.rs, n, 0, "explicit")
                g._start_values()
                consts.update(g.consts)
                datas.append(g.data)
            self._start = (consts, datas)
        return self._start

    def const(self, e):
        """The value of a constant expression (raises _Unknown)."""
        c = e.__class__
        if c is A.Literal:
            return e.value
        if c is A.Name:
            if e.ref == "const":
                consts = self._starts()[0]
                if e.ident in consts:
                    return consts[e.ident]
            if e.ref == "member":
                return e.ident
            raise _Unknown
        if c is A.Unary and e.op == "-":
            v = self.const(e.operand)
            if v.__class__ is int:
                return -v
            raise _Unknown
        if c is A.Binary and e.op in ("..", "+", "-", "*"):
            a, b = self.const(e.left), self.const(e.right)
            if a.__class__ is int and b.__class__ is int:
                if e.op == "..":
                    if b - a >= MAX_INFERRED:
                        raise _Unknown
                    return tuple(range(a, b + 1))
                return a + b if e.op == "+" else a - b if e.op == "-" else a * b
            if e.op == "+" and a.__class__ is tuple and b.__class__ is tuple:
                return a + b
            raise _Unknown
        if c in (A.ListLit, A.TupleLit):
            return tuple(self.const(x) for x in e.items)
        if c is A.SetLit:
            return frozenset(self.const(x) for x in e.items)
        raise _Unknown

    # ------------------------------------------------------------------ what a place may hold
    def elements(self, e):
        """{skey: value} of every item the collection expression `e` may hold, or None."""
        try:
            return self._elements(e)
        except _Unknown:
            return None

    def _elements(self, e):
        t = T.element(e.ty or T.ANY)
        if _finite(t, self.prog):
            return self._keyed(self.space._universe(t))
        try:
            return self._items(self.const(e))
        except _Unknown:
            pass
        v = self._tracked(e)
        if v is not None:
            got = self._solve().get(v)
            if got is None:
                raise _Unknown
            return got
        if e.__class__ is A.Binary and e.op == "+":
            return {**self._elements(e.left), **self._elements(e.right)}
        raise _Unknown

    def _item(self, e):
        """{skey: value} of every value the expression `e` may have (an item put into a pile)."""
        t = e.ty or T.ANY
        if _finite(t, self.prog):
            return self._keyed(self.space._universe(t))
        try:
            return self._keyed((self.const(e),))
        except _Unknown:
            pass
        if e.__class__ is A.Index:  # an item of a collection: whatever it holds
            return self._elements(e.target)
        raise _Unknown

    def _items(self, v):
        if v.__class__ is Pile:
            v = v.items()
        elif v.__class__ is dict:
            v = tuple(v)
        if not isinstance(v, (tuple, frozenset)):
            raise _Unknown
        return self._keyed(v)

    def _keyed(self, values):
        skey = self.space._skey
        if len(values) > MAX_INFERRED:
            raise _Unknown
        return {skey(v): v for v in values}

    def _tracked(self, e):
        """The variable whose items `e` is, when `e` is a tracked pile variable (`deck`) or one seat's
        (`hand[p]` of a per-player variable); else None."""
        if e.__class__ is A.Name and e.ref == "var" and e.ident in self._decls():
            decl = self._decls()[e.ident]
            return None if decl.per_player else e.ident
        if e.__class__ is A.Index and e.target.__class__ is A.Name and e.target.ref == "var":
            decl = self._decls().get(e.target.ident)
            if decl is not None and decl.per_player:
                return e.target.ident
        return None

    def _decls(self):
        """The variables whose type is a list, set, deck or bag (one per seat or not)."""
        if self._vars is None:
            self._vars = {}
            for name, per, _, ty, _ in self.rs.vars:
                if ty.name in _PILES:
                    self._vars[name] = self.prog.decls[name]
        return self._vars

    def _root(self, e):
        """The global variable at the root of a place expression, or None."""
        while e.__class__ in (A.Index, A.Field):
            e = e.target
        if e.__class__ is A.Name and e.ref == "var":
            return e.ident
        return None

    def _solve(self):
        """{variable: {skey: value} or None (unknown)} for every tracked variable."""
        if getattr(self, "_solved", None) is not None:
            return self._solved
        decls = self._decls()
        sources = {v: [] for v in decls}  # variable -> [(how, expression)]
        unknown = set()
        for node in A.walk(_game_roots(self.prog)):
            c = node.__class__
            if c is A.Assign:
                target, how = node.target, ("elems" if node.op in ("=", "+=") else None)
            elif c is A.Add:
                target, how = node.target, "item"
            elif c is A.Move:
                target, how = node.target, "elems"
            elif c is A.DrawInto:
                target, how = node.target, "elems"
            elif c is A.Shuffle and node.source is not None:
                target, how = node.pile, "elems"
            else:
                continue
            root = self._root(target)
            if root not in decls:
                continue
            value = {A.Assign: lambda: node.value, A.Add: lambda: node.item, A.Move: lambda: node.source,
                     A.DrawInto: lambda: node.pile, A.Shuffle: lambda: node.source}[c]()
            if self._tracked(target) == root:
                if how is not None:
                    sources[root].append((how, value))
            elif (c is A.Assign and node.op == "=" and target.__class__ is A.Index
                  and self._tracked(target.target) == root):
                sources[root].append(("item", value))  # an item of the list assigned
            else:
                unknown.add(root)  # a write the analysis does not follow
        datas = self._starts()[1]
        state = {}
        for v in decls:
            if v in unknown:
                state[v] = None
                continue
            got = {}
            try:
                for data in datas:
                    for value in (data[v] if decls[v].per_player else (data[v],)):
                        if value is not None:
                            got.update(self._items(value))
            except _Unknown:
                got = None
            state[v] = got
        self._solved = state
        for _ in range(len(decls) + 2):
            changed = False
            for v, srcs in sources.items():
                if state[v] is None:
                    continue
                before = len(state[v])
                try:
                    for how, e in srcs:
                        state[v].update(self._elements(e) if how == "elems" else self._item(e))
                    if len(state[v]) > MAX_INFERRED:
                        raise _Unknown
                except _Unknown:
                    state[v] = None
                    changed = True
                    continue
                changed = changed or len(state[v]) != before
            if not changed:
                return state
        for v in state:  # no fixed point within the rounds: give up on what still grew
            state[v] = None
        return state

"""Stable integer action ids for a ruleset: what the OpenSpiel and PettingZoo adapters number decisions by.

The same decision is the same integer in every state of every game of a ruleset (whatever the player
count), and every id is below `ActionSpace.size`, which is computed from the checked program when the
space is built, never from a game. The scheme (docs/ecosystem.md, "Action ids"):

* **the value block** `0 .. values-1`: every value a `choose`, `roll` or `draw` may produce, and every
  parameter value of an action numbered pick by pick (below). A value's universe comes from the type the
  checker gave the options: `bool`, an int range `a..b`, an enum's members, a record's table rows, a piece
  kind's pieces (ids `1..max_piece_id`), `player` (seats of the largest player count), `node` (every node
  of every board), `str` (every string the program can name: members, rows, nodes, string literals), a
  plain `int` (the window `int_range`), a tuple type (the product of its parts); `any` and other types
  take every one of these atoms. The block is the union of these universes, in the canonical value order
  (`interpreter.values.skey`). Chance outcomes use the same ids (a chance outcome `3` and a chosen `3` are
  the same id; only one kind of decision is pending at a time).
* **`done`**: the id `values` ends an optional or multiple `choose` (only in a program with a `choose`).
* **the action blocks**, one per action in name order: an action without parameters is one id; an action
  whose parameter domains are known finite sets (a literal range or list, a typed parameter such as
  `c: Colour`, or the universe of its domain's element type) with at most `DIRECT_LIMIT` combinations gets
  one id per combination (mixed radix over its parameters, in declaration order); a larger one is taken
  pick by pick: first the action's own id, then each parameter's value from the value block (the
  adapters keep the picks made so far in their state; the rules see one whole action).

A value outside its universe (an int beyond `int_range`, a piece id beyond `max_piece_id`, a list) has no
id: `ActionSpaceError` says which and how to widen the bound. A space larger than `MAX_SIZE` ids is
refused with the same error.
"""
from __future__ import annotations

import itertools

from . import ast as A
from . import types as T

DIRECT_LIMIT = 4096  # most ids one action may take as whole combinations; larger ones are picked in steps
MAX_SIZE = 1_000_000  # most ids in one space (an action mask is one byte per id)
DEFAULT_INT_RANGE = (0, 99)  # plain-int values that have an id (choose one of 0..k; roll one of 1..6)
DEFAULT_MAX_PIECE_ID = 256  # piece ids that have an id (ids start at 1 and are never reused in a game)


class ActionSpaceError(ValueError):
    """A decision or a value that has no stable id under this space's bounds (one-line message)."""


class ActionSpace:
    """The stable numbering of a ruleset's decisions. Build once per ruleset; ask per game state."""

    def __init__(self, ruleset, int_range=DEFAULT_INT_RANGE, max_piece_id=DEFAULT_MAX_PIECE_ID):
        from interpreter.values import skey
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

        # the value block: choices, chance outcomes and stepwise parameters
        values = {}

        def add(universe):
            for v in universe:
                values.setdefault(skey(v), v)
        self.chance = False
        chooses = False
        for node in A.walk(_game_roots(prog)):
            if isinstance(node, A.Choose):
                chooses = True
                add(self._universe(T.element(node.options.ty or T.ANY)))
            elif isinstance(node, A.Roll):
                self.chance = True
                add(self._universe(T.element(node.faces.ty or T.ANY)))
            elif isinstance(node, (A.Draw, A.DrawInto)):
                self.chance = True
                add(self._universe(T.element(node.pile.ty or T.ANY)))

        # the actions, in name order
        self.actions = {}  # name -> (base, universes, direct)
        plan = []
        for name in sorted(ruleset.actions):
            decl = prog.decls[name]
            compiled = ruleset.actions[name]
            universes = []
            for p, dom in zip(decl.params, compiled.domains):
                if dom.__class__.__name__ == "_Fixed":
                    universes.append(tuple(dom.values))
                elif p.domain is not None:
                    universes.append(self._universe(T.element(p.domain.ty or T.ANY)))
                else:
                    universes.append(self._universe(self._param_type(p.type)))
            combos = 1
            for u in universes:
                combos *= max(1, len(u))
                if combos > DIRECT_LIMIT:
                    break
            direct = combos <= DIRECT_LIMIT
            if not direct:
                for u in universes:
                    add(u)
            plan.append((name, universes, direct, combos if direct else 1))
        self.values = [values[k] for k in sorted(values)]
        self._value_id = {k: i for i, k in enumerate(sorted(values))}
        # `done` only where a choose may offer it: a file without one numbers its first action's options from 0
        self.done_id = len(self.values) if chooses else None
        base = len(self.values) + (1 if chooses else 0)
        self._by_base = []
        for name, universes, direct, width in plan:
            index = [{skey(v): i for i, v in enumerate(u)} for u in universes] if direct else None
            self.actions[name] = (base, universes, direct, index)
            self._by_base.append((base, width, name))
            base += width
        self.size = base
        if self.size > MAX_SIZE:
            raise ActionSpaceError(f"{ruleset.name}: {self.size:,} action ids, more than {MAX_SIZE:,}; lower "
                                   "int_range or max_piece_id, or give large parameters a literal domain")
        self.max_chance_outcomes = len(self.values) if self.chance else 0

    # ------------------------------------------------------------------ universes
    def _atoms(self):
        """Every value of a basic kind that has an id: none, bools, the int window, every string the program
        can name, every board node, every piece id."""
        if self._atoms_cache is None:
            from interpreter.values import Piece
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
        from interpreter.values import Piece
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
        i = self._value_id.get(self._skey(v))
        if i is None:
            from interpreter.values import fmt
            raise ActionSpaceError(
                f"the value {fmt(v)[:60]} has no action id in {self.rs.name} (ints have ids from "
                f"{self.int_range[0]} to {self.int_range[1]}, piece ids up to {self.max_piece_id}): widen "
                "int_range or max_piece_id")
        return i

    def action_id(self, name, args):
        """The id of the whole action `name(args)`, or of its first pick if it is taken in steps."""
        base, universes, direct, index = self.actions[name]
        if not direct:
            return base
        i = 0
        for v, idx, u in zip(args, index, universes):
            k = idx.get(self._skey(v))
            if k is None:
                from interpreter.values import fmt
                raise ActionSpaceError(f"{name}: the parameter value {fmt(v)[:60]} is outside the parameter's "
                                       f"domain of {len(u)} values known when the rules load")
            i = i * len(u) + k
        return base + i

    def stepwise(self, name):
        return not self.actions[name][2]

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
                out[self.value_id(v)] = (oid, prob)
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
                if n2 == name and tuple(args[:k]) == picked:
                    i = self.value_id(args[k])
                    out[i] = (oid if k + 1 == len(args) else None, None)
        return [(i, oid, prob) for i, (oid, prob) in sorted(out.items())]

    def name_of(self, i):
        """The action whose block holds id `i` (None for a value or `done`)."""
        for base, width, name in self._by_base:
            if base <= i < base + width:
                return name
        return None

    def describe(self, i):
        """A readable text of an id (the same in every state)."""
        import operator
        from interpreter.values import fmt
        try:
            i = operator.index(i)  # an int, or a NumPy integer from a mask
        except TypeError:
            return f"<no action {i!r}>"
        if isinstance(i, bool) or not 0 <= i < self.size:
            return f"<no action {i}>"
        if i < len(self.values):
            return fmt(self.values[i])
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
                return f"{name}({','.join(fmt(a) for a in reversed(args))})"
        return f"<no action {i}>"


def _game_roots(prog):
    """What runs in a game (scenarios aside): declarations, triggers, endings, score, payoff."""
    roots = list(prog.decls.values()) + list(prog.triggers) + list(prog.endings)
    roots += [s for s in (prog.score, prog.tiebreak, getattr(prog, "payoff", None), getattr(prog, "heuristic", None))
              if s is not None]
    return roots

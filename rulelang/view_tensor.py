"""A seat's view as a fixed-size vector of numbers, laid out from the declared types of a rule file.

`ViewEncoder(ruleset, players, space)` lays the vector out once (its `size` and `segments()` depend only
on the program, the player count and the action space); `encode(view, picks=())` fills one from
`Game.view(seat)` (and the seat's own picks of an action taken in steps). The OpenSpiel adapter gives
it as `observation_tensor` and `information_state_tensor`, the PettingZoo environment as its `Box`
observation. See docs/ecosystem.md, "Tensors".

The vector is computed from the view alone, never from the state: whatever a seat may not see is not in
its view (docs/language.md, "Hidden information and views"), so it is not in its tensor either.

Layout, in this order (every number a float32):

* **header**: the viewer (one-hot over seats); the player to act (one-hot over seats, then chance, then
  nobody: the game is over); whose turn it is (one-hot over seats, then none); over (1/0); the
  eliminated seats (multi-hot); the pending decision's kind (action, choose, chance) and its prompt
  (one-hot over the prompts the program can show, then other); the end reason (one-hot over the
  reasons the program names, then other); at the end, each seat's score and the winners (multi-hot).
* **variables**, in declaration order (a per-player variable: once per seat, seat 0 first), each by
  its declared type:
  - a value of a finite type (`bool`, a range, an enum, a record's rows, `player`, `node`, a piece
    kind, a tuple of these, `str`: every string the program names): one-hot over its values, then
    `other` (a value outside them: a string the rules computed, hashed into 16 more slots), then
    `unknown` (hidden: `"?"`); `none` is all zeros;
  - `int` and `any`: the number (0 for none or a non-number), then `unknown`;
  - a list, set, deck or bag of a finite type: how many of each value it holds (multi-hot counts),
    then `other`, then its size, then how many of its items are hidden (a face-down pile's contents, a
    hidden hand); of another type: its size, the hidden count and the sum of its known numbers;
  - a map whose keys are of a finite type (a board's cells, seats, an enum): for each key, its value
    encoded as above (an absent key: zeros; tic-tac-toe's `map[node, player]` is nine one-hots), then
    how many entries are hidden and the size; other maps: the size and the hidden count;
  - a tuple: its parts one after the other (hidden: each part unknown).
  An encoding larger than `MAX_PART` numbers falls back to the size and hidden count.
* **pieces**, per piece kind: how many are live, then per field the counts of its values over the live
  pieces (finite types, with `unknown`) or the sum of its numbers and the hidden count.
* **picks** of an action taken in steps (only the seat making them): which action (one-hot over those
  actions), then for each pick (a parameter, or a part of a tuple parameter) whether it is made and the
  picked value's id.
"""
from __future__ import annotations

import hashlib
import itertools
import json

import numpy as np

from interpreter.values import Piece, fmt, to_plain

from . import ast as A
from . import types as T

MAX_PART = 65_536  # most numbers one variable's encoding may take before it falls back to its size
MAX_TUPLE_UNIVERSE = 4096  # a tuple type's values are one-hot only up to this many combinations
HASH_SLOTS = 16  # `other` strings are also hashed into this many slots (stable: BLAKE2b of the text)


def _plain_key(v):
    """The key of a value as it appears in a view (to_plain): the canonical JSON text."""
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _is_hidden_scalar(v):
    return v == "?"


def _hidden_count(v):
    """N for a hidden collection `{"hidden": N}`, else None."""
    if isinstance(v, dict) and len(v) == 1 and isinstance(v.get("hidden"), int):
        return v["hidden"]
    return None


def _hash_slot(text):
    return hashlib.blake2b(text.encode("utf-8"), digest_size=4).digest()[0] % HASH_SLOTS


class _Part:
    size = 0
    label = ""

    def put(self, out, off, v):  # pragma: no cover - every part overrides it
        raise NotImplementedError

    def unknown(self, out, off):
        """Mark the whole value hidden."""
        out[off + self.size - 1] = 1.0


class _OneHot(_Part):
    """One of a finite set of values: [value..., other (+ hashed slots), unknown]."""

    def __init__(self, values, hashed=False):
        self.index = {}
        for v in values:
            self.index.setdefault(_plain_key(to_plain(v)), len(self.index))
        self.hashed = hashed
        self.n = len(self.index)
        self.size = self.n + 1 + (HASH_SLOTS if hashed else 0) + 1
        self.label = f"one-hot of {self.n}"

    def put(self, out, off, v):
        if v is None:
            return
        if _is_hidden_scalar(v) and _plain_key(v) not in self.index:
            out[off + self.size - 1] = 1.0
            return
        k = _plain_key(v)
        i = self.index.get(k)
        if i is not None:
            out[off + i] = 1.0
            return
        out[off + self.n] = 1.0
        if self.hashed:
            out[off + self.n + 1 + _hash_slot(k)] = 1.0

    def count(self, out, off, v, by=1.0):
        """Add `by` at v's slot (for multi-hot counts); False for a hidden item."""
        if _is_hidden_scalar(v) and _plain_key(v) not in self.index:
            return False
        if v is None:
            return True
        i = self.index.get(_plain_key(v))
        out[off + (self.n if i is None else i)] += by
        return True


class _Number(_Part):
    """An int (or anything else single): [number, unknown]."""

    size = 2
    label = "number"

    def put(self, out, off, v):
        if _is_hidden_scalar(v) or _hidden_count(v) is not None:
            out[off + 1] = 1.0
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[off] = float(v)
        elif v is True:
            out[off] = 1.0


def _items(v):
    """(known items, hidden count) of a list, set, deck or bag as a view shows it, or None."""
    n = _hidden_count(v)
    if n is not None:
        return [], n
    if isinstance(v, dict) and isinstance(v.get("known"), list) and isinstance(v.get("hidden"), int):
        return v["known"], v["hidden"]  # a pile: its ordered part and the size of its shuffled part
    if isinstance(v, list):
        known = [x for x in v if not _is_hidden_scalar(x)]
        return known, len(v) - len(known)
    return None


class _Counts(_Part):
    """A collection of a finite type: [count per value..., other, size, hidden]."""

    def __init__(self, onehot):
        self.oh = onehot
        self.size = onehot.n + 3
        self.label = f"counts of {onehot.n}"

    def put(self, out, off, v):
        got = _items(v)
        if got is None:
            return
        known, hidden = got
        for x in known:
            i = self.oh.index.get(_plain_key(x)) if x is not None else None
            out[off + (self.oh.n if i is None else i)] += 1.0
        out[off + self.oh.n + 1] = float(len(known) + hidden)
        out[off + self.oh.n + 2] = float(hidden)


class _Size(_Part):
    """A collection of another type: [size, hidden, sum of its known numbers]."""

    size = 3
    label = "size"

    def put(self, out, off, v):
        if v is None:
            return
        if isinstance(v, dict) and not (isinstance(v.get("known"), list) and "hidden" in v):
            n = _hidden_count(v)
            if n is not None:
                out[off] = out[off + 1] = float(n)
                return
            if isinstance(v.get("known"), dict) and isinstance(v.get("hidden"), int):  # a partly known map
                out[off] = float(len(v["known"]) + v["hidden"])
                out[off + 1] = float(v["hidden"])
                return
            out[off] = float(len(v))
            return
        got = _items(v)
        if got is None:
            out[off + 1] = 1.0 if _is_hidden_scalar(v) else 0.0
            return
        known, hidden = got
        out[off] = float(len(known) + hidden)
        out[off + 1] = float(hidden)
        out[off + 2] = float(sum(x for x in known if isinstance(x, int) and not isinstance(x, bool)))

    def unknown(self, out, off):
        out[off + 1] = 1.0


class _Map(_Part):
    """A map with keys of a finite type: [value part per key..., hidden entries, size]."""

    def __init__(self, keys, value):
        self.keys = {fmt(k): i for i, k in enumerate(keys)}
        self.value = value
        self.size = len(self.keys) * value.size + 2
        self.label = f"{len(self.keys)} keys of {value.label}"

    def put(self, out, off, v):
        if v is None:
            return
        n = _hidden_count(v)
        if n is not None:
            out[off + self.size - 2] = out[off + self.size - 1] = float(n)
            return
        if not isinstance(v, dict):
            return
        hidden = 0
        if set(v) == {"known", "hidden"} and isinstance(v["known"], dict) and isinstance(v["hidden"], int) \
                and "known" not in self.keys:
            v, hidden = v["known"], v["hidden"]
        w = self.value.size
        for k, x in v.items():
            i = self.keys.get(k)
            if i is not None:
                self.value.put(out, off + i * w, x)
        out[off + self.size - 2] = float(hidden)
        out[off + self.size - 1] = float(len(v) + hidden)

    def unknown(self, out, off):
        out[off + self.size - 2] = 1.0


class _Tuple(_Part):
    def __init__(self, parts):
        self.parts = parts
        self.size = sum(p.size for p in parts)
        self.label = "tuple"

    def put(self, out, off, v):
        if v is None:
            return
        if _hidden_count(v) is not None or _is_hidden_scalar(v):
            self.unknown(out, off)
            return
        if isinstance(v, list):
            for p, x in zip(self.parts, v):
                p.put(out, off, x)
                off += p.size

    def unknown(self, out, off):
        for p in self.parts:
            p.unknown(out, off)
            off += p.size


class ViewEncoder:
    """The fixed layout of one ruleset's views at one player count (see the module)."""

    def __init__(self, ruleset, players, space):
        self.rs = ruleset
        self.n = players
        self.space = space
        self.prog = ruleset.source_program
        self._segments = []  # (name, offset, part)
        self._strings = None
        n = players
        self._add("viewer", _OneHot(range(n)))
        self._add("current_player", _OneHot(list(range(n)) + ["chance", "over"]))
        self._add("turn_of", _OneHot(range(n)))
        self._add("over", _Number())
        self._add("eliminated", _Counts(_OneHot(range(n))))
        self._add("pending.kind", _OneHot(["action", "choose", "chance"]))
        self._add("pending.prompt", _OneHot(self._prompts(), hashed=True))
        self._add("end_reason", _OneHot(self._reasons(), hashed=True))
        self._add("scores", _Tuple([_Number() for _ in range(n)]))
        self._add("winners", _Counts(_OneHot(range(n))))
        for name, per, _, ty, _ in ruleset.vars:
            part = self._part(ty)
            for seat in (range(n) if per else (None,)):
                self._add(f"vars.{name}" + (f"[{seat}]" if per else ""), part)
        self._pieces = []
        for d in self.prog.decls.values():
            if isinstance(d, A.PieceDecl):
                fields = []
                for f in d.fields:
                    t = self._checked_type(f.type)
                    dom = self._domain(t)
                    fields.append((f.name, _Counts(_OneHot(dom)) if dom is not None else _Size()))
                self._add(f"pieces.{d.name}.count", _Number())
                for fname, part in fields:
                    self._add(f"pieces.{d.name}.{fname}", part)
                self._pieces.append((d.name, fields))
        self._stepwise = [name for name in space.actions if space.stepwise(name)]
        self._max_params = space.max_picks()
        if self._stepwise:
            self._add("picks.action", _OneHot(self._stepwise))
            for i in range(self._max_params):
                self._add(f"picks.{i}", _Tuple([_Number(), _Number()]))
        self.size = sum(p.size for _, _, p in self._segments)
        self._by_name = {name: (off, part) for name, off, part in self._segments}

    # ------------------------------------------------------------------ the layout
    def _add(self, name, part):
        off = self._segments[-1][1] + self._segments[-1][2].size if self._segments else 0
        self._segments.append((name, off, part))

    def segments(self):
        """[(name, offset, size, what)] of the layout, in order."""
        return [(name, off, part.size, part.label) for name, off, part in self._segments]

    def _prompts(self):
        out = {"take an action", "choose one", "roll", "draw"}
        for node in A.walk(list(self.prog.decls.values()) + list(self.prog.triggers)):
            if isinstance(node, A.Choose) and node.prompt:
                out.add(node.prompt)
        return sorted(out)

    def _reasons(self):
        out = set()
        for node in A.walk(list(self.prog.decls.values()) + list(self.prog.triggers) + list(self.prog.endings)):
            if isinstance(node, (A.EndGame, A.TriggerEnd)) and node.reason:
                out.add(node.reason)
            elif isinstance(node, A.EndingDecl):
                out.add(node.name)
        return sorted(out)

    def _checked_type(self, t):
        """A declared type (syntax) as a checker type."""
        if isinstance(t, A.TypeRange):
            return T.rng(t.low, t.high)
        if isinstance(t, A.TypeGeneric):
            return T.Type(t.name, tuple(self._checked_type(a) for a in t.args), kind="generic")
        if isinstance(t, A.TypeName):
            if t.name in T.BASIC:
                return T.BASIC[t.name]
            decl = self.prog.decls.get(t.name)
            if isinstance(decl, A.EnumDecl):
                return T.Type(t.name, kind="enum")
            if isinstance(decl, (A.RecordDecl, A.PieceDecl)):
                return T.Type(t.name, kind="record")
        return T.ANY

    def _domain(self, t, depth=0):
        """The values of a finite type, or None."""
        if t.kind == "range":
            return list(range(t.low, t.high + 1))
        name = t.name
        if name == "bool":
            return [False, True]
        if name == "player":
            return list(range(self.n))
        if name == "node":
            return list(self.space._nodes())
        if name == "str":
            return self._all_strings()
        decl = self.prog.decls.get(name)
        if isinstance(decl, A.EnumDecl):
            return list(decl.members)
        if isinstance(decl, A.PieceDecl):
            return [Piece(name, i) for i in range(1, self.space.max_piece_id + 1)]
        if isinstance(decl, A.RecordDecl):
            return [r for tname, rows in self.rs.table_rows.items()
                    if self.prog.decls[tname].record == name for r in rows]
        if name == "tuple" and t.args and depth < 3:
            parts = [self._domain(a, depth + 1) for a in t.args]
            if all(p is not None for p in parts):
                size = 1
                for p in parts:
                    size *= max(1, len(p))
                if size <= MAX_TUPLE_UNIVERSE:
                    return list(itertools.product(*parts))
        return None

    def _all_strings(self):
        if self._strings is None:
            self._strings = [a for a in self.space._atoms() if isinstance(a, str)]
        return self._strings

    def _part(self, t, depth=0):
        part = self._part_of(t, depth)
        if part.size > MAX_PART:
            return _Size()
        return part

    def _part_of(self, t, depth):
        dom = self._domain(t)
        if dom is not None:
            return _OneHot(dom, hashed=t.name == "str")
        if t.name in ("list", "set", "deck", "bag") and t.args:
            el = self._domain(t.args[0])
            if el is not None and len(el) <= MAX_PART:
                return _Counts(_OneHot(el, hashed=t.args[0].name == "str"))
            return _Size()
        if t.name == "map" and len(t.args) == 2 and depth < 3:
            keys = self._domain(t.args[0])
            if keys is not None and keys:
                value = self._part(t.args[1], depth + 1)
                if len(keys) * value.size <= MAX_PART:
                    return _Map(keys, value)
            return _Size()
        if t.name == "tuple" and t.args and depth < 3:
            return _Tuple([self._part(a, depth + 1) for a in t.args])
        if t.name in ("int", "any", "none"):
            return _Number()
        return _Size()

    # ------------------------------------------------------------------ filling it
    def encode(self, view, picks=()):
        """The vector of `view` (a `Game.view(seat)`), with `picks`: the seat's own picks of an action
        taken in steps (the action's name, then the values picked)."""
        out = np.zeros(self.size, np.float32)
        seg = self._by_name
        n = self.n

        def put(name, v):
            off, part = seg[name]
            part.put(out, off, v)

        put("viewer", view.get("viewer"))
        cp = view.get("current_player")
        put("current_player", "chance" if cp == -1 else "over" if not isinstance(cp, int) or cp < 0 else cp)
        put("turn_of", view.get("turn_of") if isinstance(view.get("turn_of"), int) and
            0 <= view.get("turn_of") < n else None)
        put("over", 1 if view.get("over") else 0)
        put("eliminated", view.get("eliminated") or [])
        pend = view.get("pending")
        if pend:
            put("pending.kind", pend.get("kind"))
            put("pending.prompt", pend.get("prompt"))
        put("end_reason", view.get("end_reason"))
        if view.get("over"):
            put("scores", view.get("scores"))
            put("winners", view.get("winners") or [])
        vars_ = view.get("vars", {})
        for name, per, _, _, _ in self.rs.vars:
            v = vars_.get(name)
            if per:
                for seat in range(n):
                    put(f"vars.{name}[{seat}]", v[seat] if isinstance(v, list) and seat < len(v) else None)
            else:
                put(f"vars.{name}", v)
        pieces = view.get("pieces") or {}
        for kind, fields in self._pieces:
            live = pieces.get(kind) or []
            off, part = seg[f"pieces.{kind}.count"]
            out[off] = float(len(live))
            for fname, part in fields:
                off, _ = seg[f"pieces.{kind}.{fname}"]
                if isinstance(part, _Counts):
                    for p in live:
                        x = p.get(fname)
                        if _is_hidden_scalar(x) or _hidden_count(x) is not None:
                            out[off + part.size - 1] += 1.0
                        elif x is not None:
                            i = part.oh.index.get(_plain_key(x))
                            out[off + (part.oh.n if i is None else i)] += 1.0
                    out[off + part.oh.n + 1] = float(len(live))
                else:
                    for p in live:
                        x = p.get(fname)
                        if _is_hidden_scalar(x) or _hidden_count(x) is not None:
                            out[off + 1] += 1.0
                        elif isinstance(x, int) and not isinstance(x, bool):
                            out[off + 2] += float(x)
                    out[off] = float(len(live))
        if picks and self._stepwise:
            put("picks.action", picks[0])
            for i, value in enumerate(picks[1:self._max_params + 1]):
                off, _ = seg[f"picks.{i}"]
                out[off] = 1.0
                out[off + 2] = float(self.space.value_id(value))
        return out

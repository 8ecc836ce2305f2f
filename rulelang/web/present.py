"""A seat's view as a person reads it: the panels of a seat's page (each player's public state, the
shared state), the table rows an option or a value names, and readable values. Runs in the workers
(it needs the compiled rules' declarations) on data that is already a seat's view.

Nothing here knows a game. What goes where comes from the declarations: a ``per player`` variable is
shown in each player's panel, a piece with an ``owner`` field in its owner's panel, every other
variable in the shared panel; variables that the boards draw (their values are nodes, or keyed by
nodes: see interpreter/render.py) are listed once more, folded, under the shared panel. A value is
shown by its declared type: a player as ``P1``, a table row by its name with its fields, a hidden
value as ``hidden`` and a hidden collection as ``5 × Card, hidden`` (its size is public), a deck or
bag as its known items and how many lie shuffled.

Every function reads only the view it is given and the rules' public declarations (tables are
constants of the rules), so a panel holds exactly what the view holds.

A display value (``D`` below) is plain data, the same in the JSON API and in the page's template:

| form | what |
|---|---|
| ``{"text": "3"}`` | a number, a name, a node, yes/no |
| ``{"none": true}`` | no value |
| ``{"hidden": "5 × Card, hidden"}`` | what the view hides |
| ``{"row": "c7", "table": "cards", "tip": "suit hearts, value 7"}`` | a table row (a card, a tile) |
| ``{"items": [D, ...], "more": "12 × Kind, shuffled"}`` | a list, set, deck or bag (``more``: its hidden part) |
| ``{"pairs": [[D, D], ...], "more": "3 entries hidden"}`` | a map |
| ``{"parts": [D, ...]}`` | a tuple |
"""
from __future__ import annotations

MAX_ITEMS = 200  # items of one collection shown at most (the rest are counted)
MAX_TEXT = 200  # characters of one text shown at most
MAX_FIELDS_TEXT = 400  # characters of a row's fields in a tooltip
MAX_ROW_CARDS = 8  # rows shown under one choice at most
MAX_DEPTH = 12  # nesting shown at most (deeper values are "...")
MAX_NODES = 10_000  # display values made for one page at most (then "..."; a text counts 1 per 40 characters more)


class Budget:
    """How many display values one page may still make (a hostile view cannot make a huge page)."""

    def __init__(self, nodes=MAX_NODES):
        self.left = nodes


class Schema:
    """The public declarations a page needs, from a compiled ruleset: variables (name, per player,
    type, visibility, drawn on a board), piece kinds, and every table row's table and fields."""

    def __init__(self, rs):
        from interpreter.values import fmt

        self.boards = bool(getattr(rs, "boards", None))
        self.vars = [(name, per, ty, vis, self.boards and _drawn(ty)) for name, per, _, ty, vis in rs.vars]
        self.pieces = {}
        for kind, pk in (getattr(rs, "pieces", None) or {}).items():
            fields = list(zip(pk.fields, pk.types, pk.vis))
            owner = pk.fields[pk.owner] if pk.owner is not None else None
            self.pieces[kind] = (fields, owner)
        self.row_table = {}
        for table, rows in (getattr(rs, "table_rows", None) or {}).items():
            for row in rows:
                self.row_table.setdefault(row, table)
        self.row_fields = {}
        for row, fields in (getattr(rs, "row_fields", None) or {}).items():
            self.row_fields[row] = [(k, _cut(fmt(v), MAX_TEXT)) for k, v in fields.items() if not _absent(v)]

    def row(self, name):
        """The card of a table row: {"row", "table", "fields": [[name, text], ...]}, or None."""
        if not isinstance(name, str) or name not in self.row_fields:
            return None
        return {"row": name, "table": self.row_table.get(name, ""), "fields": [list(f) for f in self.row_fields[name]]}

    def tip(self, name) -> str:
        text = ", ".join(f"{k} {v}" for k, v in self.row_fields.get(name, ()))
        table = self.row_table.get(name)
        return _cut((f"{table} {name}: " if table else f"{name}: ") + text, MAX_FIELDS_TEXT)


def _absent(v) -> bool:
    """A field with nothing in it (none, false, an empty collection): left off a row's card."""
    return v is None or v is False or (isinstance(v, (tuple, list, frozenset, dict)) and not v)


def _drawn(ty) -> bool:
    """Whether interpreter/render.py draws a variable of this type on a board."""
    name = getattr(ty, "name", None)
    args = getattr(ty, "args", ())
    if name == "node":
        return True
    if name in ("list", "set") and args and getattr(args[0], "name", None) == "node":
        return True
    return name == "map" and len(args) == 2 and "node" in (getattr(args[0], "name", None), getattr(args[1], "name", None))


def _cut(text, limit) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _arg(ty, i):
    args = getattr(ty, "args", ()) or ()
    return args[i] if i < len(args) else None


def _what(ty, n) -> str:
    """``5 × Card`` (records and enums name their kind), else ``5 items``."""
    kind = getattr(ty, "kind", None)
    if kind in ("record", "enum"):
        return f"{n} × {ty.name}"
    return f"{n} item{'' if n == 1 else 's'}"


def _text(v) -> str:
    if isinstance(v, list):
        return _cut("(" + ",".join(_text(x) for x in v[:MAX_TEXT]) + ")", MAX_TEXT)
    return _cut(str(v), MAX_TEXT)


def show(schema: Schema, v, ty=None, hideable=False, depth=0, budget=None) -> dict:
    """``_show`` within the page's budget of display values (texts count by their length)."""
    if budget is None:
        budget = Budget()
    out = _show(schema, v, ty, hideable, depth, budget)
    if "text" in out:
        budget.left -= len(out["text"]) // 40
    return out


def _show(schema: Schema, v, ty, hideable, depth, budget) -> dict:
    """The display value of ``v``, a value of a view, whose declared type is ``ty``; ``hideable``:
    the place may be hidden from the viewer (a variable or field not ``visible to all``)."""
    budget.left -= 1
    if depth > MAX_DEPTH or budget.left < 0:
        return {"text": "..."}
    name = getattr(ty, "name", None)
    if hideable:
        if v == "?" and name not in ("list", "set", "map", "deck", "bag"):
            return {"hidden": "hidden"}
        if isinstance(v, dict) and set(v) == {"hidden"} and isinstance(v["hidden"], int):
            n = v["hidden"]
            elem = _arg(ty, 1) if name == "map" else _arg(ty, 0)
            if name == "map":
                return {"hidden": f"{n} entr{'y' if n == 1 else 'ies'}, hidden"}
            return {"hidden": f"{_what(elem, n)}, hidden" if n else "empty"}
        if name == "map" and isinstance(v, dict) and set(v) == {"known", "hidden"} and isinstance(v["known"], dict):
            out = _pairs(schema, v["known"], ty, hideable, depth, budget)
            if v["hidden"]:
                out["more"] = f"{v['hidden']} entr{'y' if v['hidden'] == 1 else 'ies'} hidden"
            return out
    if v is None:
        return {"none": True}
    if v is True or v is False:
        return {"text": "yes" if v else "no"}
    if name == "player" and isinstance(v, int):
        return {"text": f"P{v}"}
    if isinstance(v, int):
        return {"text": str(v)}
    if isinstance(v, str):
        if v in schema.row_fields:
            return {"row": v, "table": schema.row_table.get(v, ""), "tip": schema.tip(v)}
        return {"text": _cut(v, MAX_TEXT)}
    if name in ("deck", "bag") and isinstance(v, dict) and "hidden" in v:
        known = v.get("known") if isinstance(v.get("known"), list) else []
        out = _items(schema, known, _arg(ty, 0), hideable, depth, budget)
        n = v.get("hidden")
        if isinstance(n, int) and n:
            out["more"] = f"{_what(_arg(ty, 0), n)}, shuffled"
        if not known and not n:
            return {"text": "empty"}
        return out
    if isinstance(v, list):
        if name == "node" or (name is None and all(isinstance(x, (int, str)) for x in v)):
            return {"text": _text(v)}
        if name == "tuple":
            args = getattr(ty, "args", ()) or ()
            return {"parts": [show(schema, x, args[i] if i < len(args) else None, hideable, depth + 1, budget)
                              for i, x in enumerate(v[:MAX_ITEMS])]}
        return _items(schema, v, _arg(ty, 0), hideable, depth, budget)
    if isinstance(v, dict):
        return _pairs(schema, v, ty, hideable, depth, budget)
    return {"text": _cut(str(v), MAX_TEXT)}


def _items(schema, items, elem, hideable, depth, budget) -> dict:
    out = {"items": [show(schema, x, elem, hideable, depth + 1, budget) for x in items[:MAX_ITEMS]]}
    if len(items) > MAX_ITEMS:
        out["more"] = f"and {len(items) - MAX_ITEMS} more"
    return out


def _pairs(schema, d, ty, hideable, depth, budget) -> dict:
    kty, vty = (_arg(ty, 0), _arg(ty, 1)) if getattr(ty, "name", None) == "map" else (None, None)
    pairs = []
    for k, x in list(d.items())[:MAX_ITEMS]:
        key = {"text": f"P{k}"} if getattr(kty, "name", None) == "player" and k.isdigit() else {"text": _cut(k, MAX_TEXT)}
        if k in schema.row_fields:
            key = show(schema, k, None, False, depth + 1, budget)
        pairs.append([key, show(schema, x, vty, hideable, depth + 1, budget)])
    out = {"pairs": pairs}
    if len(d) > MAX_ITEMS:
        out["more"] = f"and {len(d) - MAX_ITEMS} more"
    return out


def empty(d) -> bool:
    """A display value with nothing in it (no value, an empty collection): listed by name only."""
    if d.get("none"):
        return True
    if "items" in d or "pairs" in d:
        return not d.get("items") and not d.get("pairs") and not d.get("more")
    return d.get("text") == "empty"


def panels(schema: Schema, view: dict, players: int) -> dict:
    """The panels of a seat's page from its view: ``players`` (one per seat: ``entries`` [[name, D]],
    ``empty`` [names], ``pieces`` [[label, [[field, D]]]]), ``shared`` (the same for the variables of
    nobody in particular) and ``drawn`` (the variables the boards draw, as text)."""
    seats = [{"seat": q, "entries": [], "empty": [], "pieces": []} for q in range(players)]
    shared = {"entries": [], "empty": [], "pieces": []}
    drawn = {"entries": [], "empty": [], "pieces": []}
    values = view.get("vars") or {}
    budget = Budget()
    for name, per, ty, vis, on_board in schema.vars:
        if name not in values:
            continue
        v = values[name]
        hideable = vis != "all"
        if per and isinstance(v, list) and len(v) == players:
            for q in range(players):
                _put(seats[q], name, show(schema, v[q], ty, hideable, 0, budget))
        else:
            _put(drawn if on_board else shared, name, show(schema, v, ty, hideable, 0, budget))
    for kind, items in (view.get("pieces") or {}).items():
        fields, owner = schema.pieces.get(kind, ([], None))
        for item in items if isinstance(items, list) else ():
            shown = [[f, show(schema, item.get(f), fty, fvis != "all", 1, budget)] for f, fty, fvis in fields
                     if f != owner and f in item]
            label = f"{kind} #{item.get('id')}"
            who = item.get(owner) if owner else None
            target = seats[who] if isinstance(who, int) and not isinstance(who, bool) and 0 <= who < players else shared
            target["pieces"].append([label, shown])
    return {"players": seats, "shared": shared, "drawn": drawn}


def _put(panel, name, d) -> None:
    if empty(d):
        panel["empty"].append(name)
    else:
        panel["entries"].append([name, d])


def rows_in(schema: Schema, value, limit=MAX_ROW_CARDS) -> list:
    """The table rows a value names (an option's value: a row, or an action's arguments), as cards."""
    out = []
    seen = set()
    stack = [value]
    steps = 0
    while stack and len(out) < limit and steps < 10_000:
        steps += 1
        v = stack.pop()
        if isinstance(v, str):
            if v not in seen:
                card = schema.row(v)
                if card is not None:
                    seen.add(v)
                    out.append(card)
        elif isinstance(v, (tuple, list, frozenset, set)):
            stack.extend(reversed(list(v)))
        elif isinstance(v, dict):
            stack.extend(reversed([x for kv in v.items() for x in kv]))
    return out

"""The checker's part for pieces: `piece` declarations, `new`, `destroy` and piece fields.

Mixed into checker.Checker. Codes reused from the table in docs/language.md: E101 (a field declared
twice), E203 (no such field), E301 (a value of the wrong type), E304 (`visible to owner` without an
owner), E305 (a field given twice), E306 (a field not given), E309 (an unnamed value), E403 (not in a
function), E408 (a piece's id cannot change), E413 (`new` only on the right of `let`); new: E329
(`new` of something that is not a piece kind), E330 (`destroy` of something that is not a piece).
"""
from __future__ import annotations

from . import ast as A
from . import types as T
from .scopes import Context, Scope

RESERVED_FIELDS = {"id"}


class PieceChecks:
    def check_piece_decl(self, d):
        seen = set()
        names = {f.name for f in d.fields}
        for f in d.fields:
            if f.name in seen:
                self.err(f.span, "E101", f"field '{f.name}' is declared twice in piece '{d.name}'")
            if f.name in RESERVED_FIELDS:
                self.err(f.span, "E101", f"'{f.name}' is every piece's number; choose another field name",
                         hint=f"read it as x.{f.name}")
            seen.add(f.name)
            ft = self.resolve_type(f.type)
            if f.default is not None:
                vt = self.expr(f.default, Scope(), Context("const", pure=True), expected=ft)
                self.expect_type(vt, ft, f.default, f"the default of field '{f.name}'")
            if f.visibility == "owner":
                owner = next((g for g in d.fields if g.name == "owner"), None)
                if owner is None or self.resolve_type(owner.type) != T.PLAYER:
                    self.err(f.span, "E304", f"'visible to owner' on '{f.name}' needs a field 'owner: player' in "
                                             f"piece '{d.name}'",
                             hint="add owner: player to the piece (the player who sees the field)"
                             if "owner" not in names else "declare it as owner: player")

    def piece_field_type(self, e, tt):
        d = self.prog.decls.get(tt.name)
        if e.name == "id":
            return T.INT
        for f in d.fields:
            if f.name == e.name:
                return self.resolve_type(f.type)
        fields = [f.name for f in d.fields] + ["id"]
        self.err(e.span, "E203", f"piece '{tt.name}' has no field '{e.name}'",
                 hint=self.suggest(e.name, fields) or "fields: " + ", ".join(fields))
        return T.ANY

    def check_new(self, v, scope, ctx):
        d = self.prog.decls.get(v.kind)
        if ctx.pure:
            self.err(v.span, "E403", "a function cannot create pieces", hint="create it in a procedure or an action")
        if not isinstance(d, A.PieceDecl):
            pieces = [x.name for x in self.prog.of_kind("piece")]
            self.err(v.span, "E329", f"'{v.kind}' is not a piece kind, so 'new' cannot make one",
                     hint=self.suggest(v.kind, pieces) or "declare it: piece NAME { field: TYPE, ... }")
            for a in v.args:
                self.expr(a.value, scope, ctx)
            return T.ANY
        fields = {f.name: f for f in d.fields}
        given = set()
        for a in v.args:
            if a.name is None:
                self.err(a.span, "E309", f"the fields of a new {d.name} are named: new {d.name}(field: value)")
                self.expr(a.value, scope, ctx)
                continue
            f = fields.get(a.name)
            if f is None:
                self.err(a.span, "E203", f"piece '{d.name}' has no field '{a.name}'",
                         hint=self.suggest(a.name, fields) or "fields: " + ", ".join(fields))
                self.expr(a.value, scope, ctx)
                continue
            if a.name in given:
                self.err(a.span, "E305", f"field '{a.name}' is given twice")
            given.add(a.name)
            ft = self.resolve_type(f.type)
            self.expect_type(self.expr(a.value, scope, ctx, expected=ft), ft, a.value, f"field '{a.name}' of {d.name}")
        for f in d.fields:
            if f.name not in given and f.default is None:
                self.err(v.span, "E306", f"a new {d.name} needs a value for field '{f.name}'",
                         hint=f"write new {d.name}(..., {f.name}: VALUE), or give the field a default")
        return self.types[d.name]

    def e_New(self, e, scope, ctx, expected):
        if ctx.pure:
            self.err(e.span, "E403", "a function cannot create pieces", hint="create it in a procedure or an action")
            return T.ANY
        self.err(e.span, "E413", "'new' stands only on the right of 'let'",
                 hint=f"let x = new {e.kind}(...), then use x")
        return T.ANY

    def s_Destroy(self, s, scope, ctx):
        t = self.expr(s.piece, scope, ctx)
        if t.kind != "piece" and t.name != "any":
            self.err(s.piece.span, "E330", f"'destroy' takes a piece, not {t}",
                     hint="pieces are made with new KIND(...) and listed by their kind's name")

    def piece_lvalue(self, e, root, ctx):
        """check_lvalue for a place whose root is a field of a piece (root: the Field node)."""
        if ctx.pure:
            self.err(e.span, "E403", "a function cannot change pieces")
        if root.name == "id":
            self.err(e.span, "E408", "a piece's id never changes")

    def piece_reveal(self, s, root):
        """reveal of a field of a piece: the field must be visible to known or owner."""
        d = self.prog.decls.get(root.target.ty.name)
        f = next((f for f in d.fields if f.name == root.name), None)
        if f is None:
            return
        if f.visibility not in ("known", "owner"):
            shown = "everybody already sees it" if f.visibility == "all" else "nobody may ever see it"
            self.err(s.item.span, "E420", f"field '{root.name}' of {d.name} is visible to {f.visibility}: {shown}, "
                                          "so it cannot be revealed",
                     hint="declare the field 'visible to known' (or 'visible to owner') to reveal it")

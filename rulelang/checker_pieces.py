"""The checker's part for pieces: `piece` declarations, `new`, `destroy` and piece fields.

Mixed into checker.Checker. Codes reused from the table in docs/language.md: E101 (a field declared
twice), E203 (no such field), E301 (a value of the wrong type), E304 (`visible to owner` without an
owner), E305 (a field given twice), E306 (a field not given), E309 (an unnamed value), E403 (not in a
function), E408 (a piece's id cannot change), E413 (`new` only on the right of `let`); new: E329
(`new` of something that is not a piece kind), E330 (`destroy` of something that is not a piece).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Protocol, Union

from . import ast as A
from . import types as T
from .diagnostics import ERROR
from .scopes import Context, Scope

if TYPE_CHECKING:
    from .program import Program

RESERVED_FIELDS = {"id"}


class CheckerCore(Protocol):
    """What the checker's mixed-in parts (PieceChecks here) use of checker.Checker: the program, the types
    of its declarations, reporting, and the checks of types and expressions. (A protocol, the self type of
    the mixin's methods, so that they are checked without the mixin importing the class it is mixed into.)"""

    prog: Program
    types: dict[str, T.Type]  # enum, record and piece name -> its type

    def err(self, span: A.Span, code: str, message: str, hint: str = "", severity: str = ERROR) -> None: ...

    def suggest(self, name: str, candidates: Union[Iterable[str], Callable[[], Iterable[str]]]) -> str: ...

    def resolve_type(self, t: Any) -> T.Type: ...  # (a type as written: TypeName, TypeGeneric, TypeRange or None)

    def expr(self, e: Optional[A.Expr], scope: Scope, ctx: Context, expected: Optional[T.Type] = None) -> T.Type: ...

    def expect_type(self, got: T.Type, want: T.Type, node: A.Expr, what: str) -> None: ...


class PieceChecks:
    def check_piece_decl(self: CheckerCore, d: A.PieceDecl) -> None:
        seen: set[str] = set()
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

    def piece_field_type(self: CheckerCore, e: A.Field, tt: T.Type) -> T.Type:
        d = self.prog.decls.get(tt.name)
        if e.name == "id":
            return T.INT
        if d is None:  # (a piece type is always declared)
            return T.ANY
        for f in d.fields:
            if f.name == e.name:
                return self.resolve_type(f.type)
        fields = [f.name for f in d.fields] + ["id"]
        self.err(e.span, "E203", f"piece '{tt.name}' has no field '{e.name}'",
                 hint=self.suggest(e.name, fields) or "fields: " + ", ".join(fields))
        return T.ANY

    def check_new(self: CheckerCore, v: A.New, scope: Scope, ctx: Context) -> T.Type:
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
        given: set[str] = set()
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

    def e_New(self: CheckerCore, e: A.New, scope: Scope, ctx: Context, expected: Optional[T.Type]) -> T.Type:
        if ctx.pure:
            self.err(e.span, "E403", "a function cannot create pieces", hint="create it in a procedure or an action")
            return T.ANY
        self.err(e.span, "E413", "'new' stands only on the right of 'let'",
                 hint=f"let x = new {e.kind}(...), then use x")
        return T.ANY

    def s_Destroy(self: CheckerCore, s: A.Destroy, scope: Scope, ctx: Context) -> None:
        t = self.expr(s.piece, scope, ctx)
        if t.kind != "piece" and t.name != "any":
            self.err(s.piece.span if s.piece is not None else s.span, "E330", f"'destroy' takes a piece, not {t}",
                     hint="pieces are made with new KIND(...) and listed by their kind's name")

    def piece_lvalue(self: CheckerCore, e: A.Expr, root: A.Field, ctx: Context) -> None:
        """check_lvalue for a place whose root is a field of a piece (root: the Field node)."""
        if ctx.pure:
            self.err(e.span, "E403", "a function cannot change pieces")
        if root.name == "id":
            self.err(e.span, "E408", "a piece's id never changes")

    def piece_reveal(self: CheckerCore, s: A.Reveal, root: A.Field) -> None:
        """reveal of a field of a piece: the field must be visible to known or owner."""
        d = self.prog.decls.get(root.target.ty.name) if root.target is not None else None
        f = next((f for f in d.fields if f.name == root.name), None) if d is not None else None
        if d is None or f is None:
            return
        if f.visibility not in ("known", "owner"):
            shown = "everybody already sees it" if f.visibility == "all" else "nobody may ever see it"
            self.err(s.item.span if s.item is not None else s.span, "E420", f"field '{root.name}' of {d.name} is visible to {f.visibility}: {shown}, "
                                          "so it cannot be revealed",
                     hint="declare the field 'visible to known' (or 'visible to owner') to reveal it")

"""The public entry points: load / loads / check (see docs/api.md)."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Iterable, Optional

import attrs

from .diagnostics import ERROR, Diagnostic, RuleError, Source

if TYPE_CHECKING:
    from interpreter.ruleset import Ruleset


@attrs.frozen
class Placeholder:
    path: str
    line: int
    column: int
    what: str


def _compile(path: str, text: Optional[str], variants: Iterable[str], root: Optional[str] = None,
             optimise: bool = True, seen: Optional[dict[str, Any]] = None, parses: Optional[dict] = None,
             warnings: bool = True) -> tuple[Optional[Ruleset], list[Diagnostic]]:
    """Parse, merge, check and compile. Returns (Ruleset or None, diagnostics). `optimise=False` skips
    the optimiser's passes: `check` does, since they never change a diagnostic (docs/optimiser.md).
    ``seen``, a dict, receives the merged "program" and the "checker" as far as they were made (the
    language server's symbol index reads them: rulelang/symbols.py). ``parses``: see build_program.
    ``warnings=False``: for a caller that keeps only the errors (the lints that only warn are not run)."""
    # imported on first use, here and below: `rulelang check` answered from the cache loads neither the
    # parser and checker nor the runtime, and a file with errors never loads the runtime (tests/test_startup.py)
    from .checker import check_program
    from .program import build_program

    try:
        prog, diags = build_program(path, text, tuple(variants), root=root, parses=parses)
    except RecursionError:
        return None, [Source(text or "", path).diag("E006", "the file is nested too deeply to read", 1, 1)]
    if seen is not None:
        seen["program"] = prog
    if prog is None or any(d.severity == ERROR for d in diags):
        return None, diags
    try:
        checker = check_program(prog, warnings=warnings)
    except RecursionError:
        return None, diags + [Source(text or "", path).diag("E006", "the rules are nested too deeply to check", 1, 1)]
    if seen is not None:
        seen["checker"] = checker
    diags = diags + checker.diags
    if any(d.severity == ERROR for d in diags):
        return None, diags
    from interpreter.compiler import Located
    from interpreter.ruleset import Ruleset

    try:
        rs = Ruleset(prog, checker, optimise=optimise)
    except Located as e:
        src = prog.sources.get(e.span.path) or Source("", e.span.path)
        return None, diags + [src.diag(e.code, e.message, e.span.line, e.span.column, hint=e.hint,
                                       end_line=e.span.end_line, end_column=e.span.end_column)]
    except RecursionError:
        return None, diags + [Source(text or "", path).diag("E006", "the rules are nested too deeply to compile", 1, 1)]
    rs.placeholders = [Placeholder(s.path, s.line, s.column, what) for s, what in
                       sorted(checker.placeholders, key=lambda x: (x[0].path, x[0].line, x[0].column))]
    rs.warnings = [d for d in diags if d.severity != ERROR]
    rs.path = path  # type: ignore[attr-defined]  # (Ruleset gets path and reload here, where they are known)

    def reload(other_variants: Iterable[str]) -> Ruleset:
        """The same rules with other variants."""
        again, more = _compile(path, text, other_variants, root)
        if again is None:
            raise RuleError(_order(more))
        return again
    rs.reload = reload  # type: ignore[attr-defined]  # (see rs.path)
    return rs, diags


def _order(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    return sorted(diags, key=lambda d: (d.path, d.line, d.column, d.code))


def load(path: str | os.PathLike[str], variants: Iterable[str] = (), root: Optional[str] = None) -> Ruleset:
    """Load a rule file (following `extends`), with the named variants applied. Raises RuleError.

    `extends` paths must stay inside ``root`` (default: the file's folder); with ``root`` given, the
    header's `rulebook` must too (see "Files and paths" in docs/language.md)."""
    path = os.fspath(path)
    rs, diags = _compile(path, None, variants, root)
    if rs is None:
        raise RuleError(_order(diags))
    return rs


def loads(text: str, name: str = "<string>", variants: Iterable[str] = (), root: Optional[str] = None) -> Ruleset:
    """Load rules from a string. Raises RuleError. `extends` paths are relative to ``name``'s
    folder and stay inside ``root`` (default: that folder, the current one for "<string>")."""
    if not isinstance(text, str):
        raise TypeError("loads() takes the rule text as a str")
    rs, diags = _compile(name, text, variants, root)
    if rs is None:
        raise RuleError(_order(diags))
    return rs


EVERY_VARIANT = ("<every variant>",)  # the check cache's key for a check of the base and each variant


def check(path: str | os.PathLike[str], variants: Iterable[str] = (), text: Optional[str] = None,
          root: Optional[str] = None, cache: Optional[bool] = None, every_variant: bool = False) -> list[Diagnostic]:
    """Every diagnostic (errors and warnings) of a rule file, without raising (``root`` as for load).

    ``every_variant=True`` (what `rulelang check` does when no variant is named) checks the base rules
    and then each variant the files declare, on its own: an error that only a variant has is added,
    its message ending in "(with variant NAME)".

    ``cache=True`` answers from the check cache (rulelang/cache.py) when nothing the check read has
    changed, and stores the answer otherwise; ``None`` (the default) leaves the choice to the caller
    that turned the cache on (``rulelang check`` does, unless ``--no-cache``); ``False`` never uses it.
    ``RULELANG_NO_CACHE=1`` turns it off in every case. The diagnostics are the same either way."""
    from . import cache as C  # (on first use: see _compile)

    path = os.fspath(path)
    variants = tuple(variants)
    every = every_variant and not variants
    use = text is None and (C.active() if cache is None else bool(cache) and not C.disabled_by_env())
    if not use:
        return _order(_checked(path, text, variants, root, every))
    key = EVERY_VARIANT if every else variants
    stored = C.lookup(path, key, root)
    if stored is not None:
        return C.diagnostics_of(stored)
    with C.recording() as deps:
        diags = _order(_checked(path, text, variants, root, every))
    C.store(path, key, root, deps, diags)
    return diags


def _checked(path: str, text: Optional[str], variants: tuple[str, ...], root: Optional[str],
             every: bool) -> list[Diagnostic]:
    """The diagnostics of the rules with ``variants``; with ``every``, also the errors that each declared
    variant, applied alone, adds to those of the base."""
    seen: dict[str, Any] = {}
    parses: dict = {}  # each file is parsed once, for the base rules and every variant
    _, diags = _compile(path, text, variants, root, optimise=False, seen=seen, parses=parses)
    prog = seen.get("program")
    if not every or prog is None or not prog.variants:
        return diags
    known = {(d.path, d.line, d.column, d.code, d.message) for d in diags}
    out = list(diags)
    for name in sorted(prog.variants):
        _, more = _compile(path, text, (name,), root, optimise=False, parses=parses, warnings=False)
        for d in more:
            if d.severity == ERROR and (d.path, d.line, d.column, d.code, d.message) not in known:
                known.add((d.path, d.line, d.column, d.code, d.message))
                out.append(attrs.evolve(d, message=f"{d.message} (with variant {name})"))
    return out

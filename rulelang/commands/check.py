"""``rulelang check``: the errors and warnings of rule files (``rulelang/__main__.py`` answers the common
case without loading click, byte for byte as this command does)."""
from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import click

from .common import EXIT_FAIL, Fail, api, plural, printable, root_kw, root_option, rule_error_type, \
    rule_files_below, unknown_variants, unreadable, variant_option

if TYPE_CHECKING:
    from rulelang.api import Placeholder
    from rulelang.diagnostics import Diagnostic


@click.command("check")
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@variant_option
@root_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of the diagnostics.")
@click.option("--placeholders", is_flag=True, help="Also list every placeholder component value and placeholder rule.")
@click.option("--explore", type=click.IntRange(min=0), default=0, metavar="N",
              help="Also play N random games per player count, reporting stuck positions, run-time errors "
                   "and games that do not end.")
@click.option("--no-cache", is_flag=True,
              help="Check from scratch, without the cache of earlier checks (see RULELANG_NO_CACHE).")
@click.pass_context
def command(ctx: click.Context, files: tuple[str, ...], variants: tuple[str, ...], root: str | None,
            as_json: bool, placeholders: bool, explore: int, no_cache: bool) -> None:
    """Check rule files and report their errors and warnings (exit 1 on any error).
    A folder is checked as every *.rules file below it. An unchanged file is answered from the cache
    of earlier checks (~/.cache/rulelang; RULELANG_CACHE_DIR to move it, RULELANG_NO_CACHE=1 to turn it off)."""
    from rulelang import cache

    with cache.using(not no_cache):
        _check_files(ctx, files, variants, root, as_json, placeholders, explore)


def _check_files(ctx: click.Context, files: Sequence[str], variants: Sequence[str], root: str | None,
                 as_json: bool, placeholders: bool, explore: int) -> None:
    from rulelang.diagnostics import ERROR, NOTE, WARNING

    items: list[dict[str, Any]] = []
    failed = False
    for path in _rule_files(files):
        diags, marks = _check_one(path, variants, placeholders, root)
        if explore and not any(d.severity == ERROR for d in diags) and not unreadable(path):
            from rulelang.explore import explore as run_explore

            diags = diags + run_explore(api().load(path, variants=tuple(variants), **root_kw(root)), path,
                                        explore, variants=tuple(variants))
        errors = sum(1 for d in diags if d.severity == ERROR)
        failed = failed or errors > 0
        problem = unreadable(path)
        if problem and not as_json:
            click.echo(f"rulelang: {printable(path)}: cannot read file: {problem}", err=True)
            continue
        if as_json:
            items.extend(d.to_dict() for d in diags)
            items.extend(_placeholder_dict(p) for p in marks)
            continue
        for d in diags:
            click.echo(d.render())
        for p in marks:
            click.echo(f"{p.path}:{p.line}:{p.column}: placeholder: {p.what}")
        parts = [plural(errors, "error"), plural(sum(1 for d in diags if d.severity == WARNING), "warning")]
        notes = sum(1 for d in diags if d.severity == NOTE)
        if notes:
            parts.append(plural(notes, "note"))
        if placeholders and not errors:
            parts.append(plural(len(marks), "placeholder"))
        click.echo(f"{printable(path)}: {', '.join(parts)}")
    if as_json:
        click.echo(json.dumps(items, indent=2))
    ctx.exit(EXIT_FAIL if failed else 0)


def _rule_files(paths: Iterable[str]) -> list[str]:
    """The files named on the command line, each folder replaced by the *.rules files below it
    (sorted; a folder without any is a failure)."""
    out = []
    for path in paths:
        if os.path.isdir(path):
            found = rule_files_below(path)
            if not found:
                raise Fail(f"{path}: no .rules files in this folder")
            out.extend(found)
        else:
            out.append(path)
    return out


def _check_one(path: str, variants: Sequence[str], want_placeholders: bool,
               root: str | None = None) -> tuple[list[Diagnostic], list[Placeholder]]:
    """(diagnostics, placeholders) of one file.  For an unreadable file the first diagnostic is
    about that (the core's own ``E011``-style one, else an ``E000`` made here) and its
    ``severity`` is an error; ``unreadable(path)`` tells the caller to print one line instead."""
    from rulelang.diagnostics import ERROR, Diagnostic

    try:
        diags = list(api().check(path, variants=tuple(variants), every_variant=True, **root_kw(root)))
    except OSError as exc:
        diags = [Diagnostic(path=path, line=1, column=1, code="E000",
                            message=f"cannot read file: {exc.strerror or exc}")]
    problem = unreadable(path)
    if problem:
        if not any(d.severity == ERROR for d in diags):
            diags = [Diagnostic(path=path, line=1, column=1, code="E000", message=f"cannot read file: {problem}")]
        return diags, []
    marks: list[Placeholder] = []
    unknown_variants(path, diags)
    if want_placeholders and not any(d.severity == ERROR for d in diags):
        try:
            marks = list(api().load(path, variants=tuple(variants), **root_kw(root)).placeholders)
        except rule_error_type() as exc:  # check said fine but load disagrees: show why
            diags.extend(d for d in exc.diagnostics if d not in diags)
    return diags, marks


def _placeholder_dict(p: Placeholder) -> dict[str, Any]:
    from rulelang.diagnostics import NOTE

    return {"path": p.path, "line": p.line, "column": p.column, "end_line": p.line, "end_column": p.column,
            "code": "placeholder", "severity": NOTE, "message": f"placeholder: {p.what}", "hint": ""}

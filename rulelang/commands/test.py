"""``rulelang test``: the scenarios of rule files (interpreter/scenarios.py runs them)."""
from __future__ import annotations

import os

import click

from .common import EXIT_FAIL, Fail, first_line, game_error_types, printable, rule_error_type, rule_files_below, \
    unreadable


@click.command("test")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.pass_context
def command(ctx: click.Context, paths: tuple[str, ...]) -> None:
    """Run the scenarios of rule files (directories are searched for *.rules)."""
    try:
        from interpreter import scenarios
    except ImportError as exc:
        raise Fail(f"the scenario runner is not available: {exc}") from None
    rule_error = rule_error_type()
    game_errors = game_error_types()
    passed = failed = 0
    missing = []
    for top in paths:
        problem = "" if os.path.isdir(top) else unreadable(top)
        if problem:  # a file error, not a failing scenario
            click.echo(f"rulelang: {printable(top)}: cannot read file: {problem}", err=True)
            missing.append(top)
            continue
        for path in rule_files_below(top):
            try:
                results = list(scenarios.run_path(path))
            except rule_error as exc:
                click.echo(exc.render() if hasattr(exc, "render") else str(exc))
                click.echo(f"FAIL {path}: the rules have errors")
                failed += 1
                continue
            except game_errors as exc:
                click.echo(f"FAIL {path}: {first_line(exc)}")
                failed += 1
                continue
            except OSError as exc:
                click.echo(f"FAIL {path}: cannot read file: {exc.strerror or exc}")
                failed += 1
                continue
            for r in results:
                if r.passed:
                    passed += 1
                    click.echo(f"PASS {r.name}")
                else:
                    failed += 1
                    lines = r.message.splitlines() or [""]
                    if len(lines) == 1:
                        click.echo(f"FAIL {r.path}:{r.line} {r.name}: {lines[0]}")
                    else:  # every failure of the scenario, one a line, in the order met
                        click.echo(f"FAIL {r.path}:{r.line} {r.name}: {len(lines)} failures")
                        for line in lines:
                            click.echo(f"  {line}")
    if missing and passed + failed == 0:
        raise Fail("")
    click.echo(f"{passed} passed, {failed} failed")
    if passed + failed == 0:
        raise Fail("no scenarios found")
    ctx.exit(EXIT_FAIL if failed or missing else 0)

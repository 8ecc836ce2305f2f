"""``rulelang fmt``: rule files in the one canonical layout (rulelang/fmt.py formats)."""
from __future__ import annotations

import click


@click.command("fmt")
@click.argument("paths", nargs=-1, required=True, metavar="FILE_OR_DIR...")
@click.option("--check", is_flag=True, help="Change nothing; list the files that would change (exit 1 if any).")
@click.option("--diff", "show_diff", is_flag=True, help="Change nothing; print what would change as a unified diff.")
@click.pass_context
def command(ctx: click.Context, paths: tuple[str, ...], check: bool, show_diff: bool) -> None:
    """Rewrite rule files (and the ```rules blocks of Markdown files) in the one canonical layout, keeping
    every comment. A folder means every *.rules and *.md file below it, except those excluded by
    [tool.rulelang.fmt] in pyproject.toml. A file with a syntax error is reported and left unchanged."""
    from rulelang.fmt import run

    ctx.exit(run(paths, check=check, show_diff=show_diff, echo=click.echo,
                 echo_err=lambda message: click.echo(message, err=True)))

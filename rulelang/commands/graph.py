"""``rulelang graph``: the structure of a rule file as a diagram (rulelang/graph.py draws it)."""
from __future__ import annotations

import click

from .common import Fail, load_rules, print_text, root_option, variant_option, write_text_or_fail


@click.command("graph")
@click.argument("file")
@variant_option
@root_option
@click.option("--format", "fmt", type=click.Choice(["mermaid", "dot", "svg"]), default="mermaid", show_default=True,
              help="Mermaid text, Graphviz DOT text, or SVG drawn by Graphviz's dot.")
@click.option("--only", multiple=True, type=click.Choice(["flow", "actions", "events"]),
              help="Draw only these parts (repeatable; default: all three).")
@click.option("-o", "--output", "out", metavar="OUT", help="Write the diagram to OUT instead of stdout.")
def command(file: str, variants: tuple[str, ...], root: str | None, fmt: str, only: tuple[str, ...],
            out: str | None) -> None:
    """Draw the structure of a rule file: flow, actions with what they read and change, events, triggers, endings."""
    print_text(diagram(file, variants, root, fmt, only, out))


def diagram(path: str, variants: tuple[str, ...], root: str | None, fmt: str, only: tuple[str, ...],
            out: str | None) -> str:
    """The diagram's text to print ("" when written to ``out``); raises ``Fail``."""
    from rulelang.graph import SELECTIONS, GraphError, render

    rs = load_rules(path, variants, root)
    try:
        text = render(rs.source_program, fmt, only or SELECTIONS)
    except GraphError as e:
        raise Fail(str(e)) from None
    if out:
        write_text_or_fail(out, text, "the diagram")
        return ""
    return text

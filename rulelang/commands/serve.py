"""``rulelang serve``: the rule files in the browser (rulelang/web/, the ``web`` extra)."""
from __future__ import annotations

import click

from .common import Fail, load_rules


@click.command("serve")
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--db", default="games.sqlite", show_default=True, metavar="PATH",
              help="The SQLite database of the tables (created if missing; a restart resumes every game).")
@click.option("--workers", type=click.IntRange(1, 32), default=2, show_default=True,
              help="Worker processes running the rules (each with time and memory limits).")
@click.option("--agent", "agents", multiple=True, metavar="SPEC",
              help="Also offer this bot (e.g. my_bots:Greedy, imported by the server); repeatable. Off by default.")
def command(files: tuple[str, ...], host: str, port: int, db: str, workers: int, agents: tuple[str, ...]) -> None:
    """Play the rule files in the browser, people and bots at one table, and edit rules (docs/web.md)."""
    from rulelang.web.command import run_serve

    run_serve(files, host, port, db, workers, load=load_rules, fail=Fail, agents=agents)

"""``rulelang lsp``: the language server for editors (rulelang/lsp.py; the ``lsp`` extra)."""
from __future__ import annotations

import click

from .common import Fail


@click.command("lsp")
@click.option("--stdio", is_flag=True, help="Talk over standard input and output (the default and only way; "
                                            "accepted because editors pass it).")
def command(stdio: bool) -> None:
    """Run the language server for editors (Language Server Protocol over stdin/stdout): diagnostics as
    you type, hover, go to definition, references, rename, completion, outline. See docs/authoring.md."""
    try:
        from rulelang.lsp import serve
    except ImportError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing not in ("pygls", "lsprotocol", "cattrs"):
            raise
        raise Fail("the language server needs the optional extra 'lsp': pip install 'rulelang[lsp]' "
                   f"({missing} is not installed)") from None
    serve()

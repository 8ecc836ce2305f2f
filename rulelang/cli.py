"""The ``rulelang`` command line: the click group of the commands (check, play, simulate, replay, test, ...),
each in its own module of ``rulelang/commands/``, imported when it is run or its help is shown.

Exit codes: 0 success, 1 a problem with the input (rule errors, a failing game, a failed replay or
scenario, an unreadable file), 2 a usage error, 3 an internal error.  Errors are one line on stderr
(rendered diagnostics excepted); no command prints a Python traceback unless the environment
variable ``RULELANG_DEBUG=1`` is set.

The commands go through the public API (``docs/api.md``): ``rulelang.load``, ``rulelang.check``,
``Ruleset.new_game`` and the ``Game`` members.
"""
from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Sequence

import click

from rulelang.commands.common import EXIT_FAIL, EXIT_INTERNAL, Fail, first_line, printable

# Each command's name and its module in rulelang/commands/ (whose ``command`` it is). Only the module of the
# command being run is imported (click's lazily loaded subcommands), so a command starts no slower for the
# others; ``rulelang --help`` imports them all, for their one-line help.
COMMANDS = {
    "check": "check",
    "compare": "compare",
    "explore-all": "explore_all",
    "fmt": "fmt",
    "graph": "graph",
    "lsp": "lsp",
    "play": "play",
    "replay": "replay",
    "serve": "serve",
    "show": "show",
    "simulate": "simulate",
    "test": "test",
    "validate": "validate",
}


class _Group(click.Group):
    """The commands of ``COMMANDS``, loaded by name. Running one turns ``Fail`` into a one-line error and
    any other exception into ``rulelang: internal error: ...`` with exit code 3 (re-raised when
    RULELANG_DEBUG is set)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS:
            module = importlib.import_module(f"rulelang.commands.{COMMANDS[cmd_name]}")
            found: click.Command = module.command
            return found
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            # click 8.4 and later suggest a close name ("Did you mean 'check'?") from the commands it holds,
            # which are none here: suggest from every command's name instead
            no_such = getattr(click.exceptions, "NoSuchCommand", None)
            if no_such is None or not isinstance(exc, no_such) or exc.possibilities:
                raise
            raise no_such(exc.command_name, possibilities=self.list_commands(ctx), ctx=ctx) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Fail as exc:
            if exc.message:
                click.echo(f"rulelang: {printable(exc.message)}", err=True)
            ctx.exit(exc.code)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except BrokenPipeError:  # e.g. `rulelang play ... | head`: stop quietly
            try:
                sys.stdout = open(os.devnull, "w")
            except OSError:
                pass
            ctx.exit(EXIT_FAIL)
        except Exception as exc:
            if os.environ.get("RULELANG_DEBUG", "") not in ("", "0"):
                raise
            click.echo(f"rulelang: internal error: {type(exc).__name__}: {first_line(exc)}", err=True)
            ctx.exit(EXIT_INTERNAL)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=None, package_name="rulelang", prog_name="rulelang",
                      message="%(prog)s %(version)s")
def cli() -> None:
    """rulelang: check, play, simulate, replay and test board game rule files."""


def main(argv: Sequence[str] | None = None) -> Any:
    """Console entry point (``rulelang = rulelang.cli:main``)."""
    return cli.main(args=argv, prog_name="rulelang")

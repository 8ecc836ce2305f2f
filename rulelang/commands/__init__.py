"""The commands of ``rulelang``, one module each (``rulelang/cli.py`` is the group that finds them by name):
each module's ``command`` is a click command. What several commands share (``Fail``, loading rules, the
log file's helpers, the common options) is in ``rulelang/commands/common.py``.

The commands are the application layer: they import the language and the runtime, and nothing below them
imports a command."""

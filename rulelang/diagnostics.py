"""Diagnostics: positioned errors and warnings about a rule file, rendered for the person who wrote it.

A diagnostic renders as::

    games/foo.rules:12:7: error[E201]: unknown name 'vpp'
       12 |     vpp[me] += 1
          |     ^^^
       hint: did you mean 'vp'?
"""
from __future__ import annotations

from typing import Any, Iterable

import attrs

ERROR = "error"
WARNING = "warning"
NOTE = "note"
MAX_SHOWN = 100  # characters of a source line shown under a diagnostic


def printable(text: object) -> str:
    """``text`` safe to print on any terminal: control characters (but tab) and lone surrogates
    (from a file name that is not valid text) are written as escapes."""
    text = str(text)
    if text.isprintable():
        return text
    out = []
    for ch in text:
        o = ord(ch)
        if ch == "\t" or (ch.isprintable() and not 0xD800 <= o <= 0xDFFF):
            out.append(ch)
        elif o < 0x100:
            out.append(f"\\x{o:02x}")
        else:
            out.append(f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}")
    return "".join(out)


@attrs.define(frozen=True)
class Diagnostic:
    path: str
    line: int  # 1-based
    column: int  # 1-based
    code: str
    message: str
    severity: str = ERROR
    hint: str = ""
    end_line: int = 0
    end_column: int = 0
    source_line: str = ""

    def render(self, color: bool = False) -> str:
        head = (f"{printable(self.path)}:{self.line}:{self.column}: {self.severity}[{self.code}]: "
                f"{printable(self.message)}")
        out = [head]
        if self.source_line:
            raw = self.source_line.rstrip("\n")
            col = self.column
            if len(raw) > 4 * MAX_SHOWN:  # cut a very long line near the column first (tabs expand less work)
                start = max(0, col - 1 - 2 * MAX_SHOWN)
                raw = raw[start:start + 4 * MAX_SHOWN]
                col -= start
            text = raw.expandtabs(4)
            width = 1
            if self.end_line == self.line and self.end_column > self.column:
                width = self.end_column - self.column
            if len(text) > MAX_SHOWN:  # show a window of a very long line around the column
                start = max(0, col - 1 - MAX_SHOWN // 2)
                text = ("..." if start else "") + text[start:start + MAX_SHOWN] + "..."
                col = col - start + (3 if start else 0)
            width = max(1, min(width, max(1, len(text) - col + 1), 60))
            num = str(self.line)
            out.append(f" {num} | {text}")
            out.append(" " + " " * len(num) + " | " + " " * (col - 1) + "^" * width)
        if self.hint:
            out.append(f"  hint: {printable(self.hint)}")
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": printable(self.path),
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "code": self.code,
            "severity": self.severity,
            "message": printable(self.message),
            "hint": printable(self.hint),
        }

    def __str__(self) -> str:
        return self.render()


class RuleError(Exception):
    """A rule file (or a set of them) could not be loaded. `.diagnostics` lists every problem found."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics = list(diagnostics)
        errors = [d for d in self.diagnostics if d.severity == ERROR]
        first = errors[0] if errors else (self.diagnostics[0] if self.diagnostics else None)
        summary = first.render() if first else "rule error"
        more = len(errors) - 1
        if more > 0:
            summary += f"\n(and {more} more error{'s' if more > 1 else ''})"
        super().__init__(summary)

    def render(self) -> str:
        return "\n".join(d.render() for d in self.diagnostics)


class Source:
    """One source text, able to turn offsets and positions into diagnostics."""

    def __init__(self, text: str, path: str):
        self.text = text
        self.path = path
        # only '\n' ends a line, as for the parser (str.splitlines also splits at \x0b, \x0c, \u2028 ...)
        self.lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]

    def line_text(self, line: int) -> str:
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return ""

    def diag(self, code: str, message: str, line: int | None, column: int | None, *, severity: str = ERROR,
             hint: str = "", end_line: int = 0, end_column: int = 0) -> Diagnostic:
        line = max(1, int(line or 1))
        column = max(1, int(column or 1))
        return Diagnostic(
            path=self.path, line=line, column=column, code=code, message=message,
            severity=severity, hint=hint, end_line=end_line or line, end_column=end_column or column + 1,
            source_line=self.line_text(line),
        )

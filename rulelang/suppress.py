"""Per-line suppression of warnings: a comment `# allow: W311` (several codes: `# allow: W311, W316`) on the
line a warning is reported at hides that warning. Errors cannot be suppressed (the rules would not run).
See "Suppressing a warning" in docs/checks.md."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable

from .diagnostics import WARNING

if TYPE_CHECKING:
    from .diagnostics import Diagnostic

ALLOW_RE = re.compile(r"#\s*allow:\s*([A-Z]\d{3}(?:\s*,\s*[A-Z]\d{3})*)")


def comment_of(line: str) -> str:
    """The comment of a source line (from a # outside a string to the end), or ''."""
    in_string = False
    i = 0
    while i < len(line):
        ch = line[i]
        if in_string:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "#":
            return line[i:]
        i += 1
    return ""


def allowed_codes(line: str) -> set[str]:
    """The codes a line's comment allows: `# allow: W311, W316` gives {"W311", "W316"}."""
    comment = comment_of(line)
    out: set[str] = set()
    for m in ALLOW_RE.finditer(comment):
        out |= {c.strip() for c in m.group(1).split(",")}
    return out


def without_allowed(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics but the warnings whose line allows their code. Each line is read once, however many
    warnings it has (a file written on one long line reads in time in proportion to its length)."""
    allowed: dict[tuple[str, int], set[str] | frozenset[str]] = {}  # (path, line) -> the codes its comment allows
    out = []
    for d in diags:
        if d.severity == WARNING:
            key = (d.path, d.line)
            codes = allowed.get(key)
            if codes is None:
                codes = allowed[key] = allowed_codes(d.source_line) if "allow" in d.source_line else frozenset()
            if d.code in codes:
                continue
        out.append(d)
    return out

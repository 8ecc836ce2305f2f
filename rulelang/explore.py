"""`rulelang check --explore N`: look for stuck positions, run-time rule errors and games that never
end, by playing N random games for every allowed player count. What it finds comes back as
diagnostics at the rule-file position where the game failed, with the command that replays it: a
run-time rule error is E601 and a stuck position E602, the codes `rulelang validate` gives them."""
from __future__ import annotations

import re

from .diagnostics import ERROR, WARNING, Diagnostic

POSITION = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<message>.*)$")


def explore(ruleset, path, games=20, max_decisions=5_000, variants=()):
    from interpreter.simulate import play_one

    found = {}
    source = {}
    for src_path, src in getattr(ruleset.program, "sources", {}).items():
        source[src_path] = src
    opt = "".join(f" --variant {v}" for v in variants)
    for players in ruleset.player_counts:
        for i in range(games):
            r = play_one(ruleset, i, 0, players, max_decisions)
            if r["ok"]:
                continue
            message = r["error"] or "unknown error"
            m = POSITION.match(message)
            replay = f"replay it: rulelang play {path} --players {players} --seed {r['seed']}{opt}"
            if message.startswith("the game did not end"):
                key = ("W601", message)
                if key not in found:
                    found[key] = Diagnostic(path=path, line=1, column=1, code="W601", severity=WARNING,
                                            message=f"a random {players}-player game did not end within "
                                                    f"{max_decisions} decisions", hint=replay)
                continue
            code = "E602" if _stuck(message) else "E601"
            if m:
                key = (code, m.group("path"), m.group("line"), m.group("message"))
                if key in found:
                    continue
                src = source.get(m.group("path"))
                line, col = int(m.group("line")), int(m.group("column"))
                found[key] = Diagnostic(path=m.group("path"), line=line, column=col, code=code, severity=ERROR,
                                        message=f"in a random {players}-player game: {m.group('message')}",
                                        hint=replay, end_line=line, end_column=col + 1,
                                        source_line=src.line_text(line) if src else "")
            else:
                key = (code, message)
                if key not in found:
                    found[key] = Diagnostic(path=path, line=1, column=1, code=code, severity=ERROR,
                                            message=f"in a random {players}-player game: {message}", hint=replay)
    return list(found.values())


def _stuck(message) -> bool:
    """Whether a game's error is a stuck position (the player to decide has no legal action), as
    interpreter.validate classifies it."""
    return "the game is stuck" in message or "has no legal action" in message

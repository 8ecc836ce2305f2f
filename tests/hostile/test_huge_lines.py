"""Thousands of diagnostics on one huge line (a 280 KB rule file written on one line, 12,000 warnings):
`rulelang check` answers within bounded memory, with the check cache on (it once stored every
diagnostic's whole source line: gigabytes), and each printed line stays short."""
from __future__ import annotations

from tests.hostile.bounded import run_cli_bounded


def test_many_diagnostics_on_one_huge_line_stay_within_memory(tmp_path):
    path = tmp_path / "one_line.rules"
    path.write_text('game "T" { players 2 }\nflow { end_game }\n'
                    + "".join(f"var v{i}: int = {i}  " for i in range(12000)) + "\n", encoding="utf-8")
    out = run_cli_bounded(["check", str(path)], seconds=60, memory=1024 ** 3)
    assert out.returncode == 0 and not out.traceback and not out.out_of_memory, out.explain()
    lines = out.stdout.splitlines()
    assert lines[-1].endswith("0 errors, 12000 warnings")
    assert max(len(line) for line in lines) < 1000
    again = run_cli_bounded(["check", str(path)], seconds=60, memory=1024 ** 3)  # from the cache, if kept
    assert again.stdout == out.stdout

"""Start-up: what each entry point imports (no timings here: benchmarks/ measures those)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAVY = ("networkx", "click", "lark", "attrs", "rich", "rulelang.checker", "interpreter.engine")


def imported_after(code: str) -> set:
    probe = code + f"\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60,
                       env=dict(os.environ, RULELANG_NO_CACHE="1"))
    assert r.returncode == 0, r.stderr
    return set(r.stdout.split())


def test_importing_the_package_loads_nothing_heavy():
    assert imported_after("import rulelang, rulelang.__main__, rulelang.cache") == set()


def test_the_command_line_does_not_load_networkx():
    assert "networkx" not in imported_after("import rulelang.cli")


def test_checking_a_game_without_a_board_does_not_load_networkx():
    got = imported_after("import rulelang\n"  # (a clone without the rulebook beside it has one note: W306)
                         "assert [d for d in rulelang.check('games/station.rules') if d.severity != 'note'] == []")
    assert "networkx" not in got and "rulelang.checker" in got


def test_a_board_still_loads_it():
    got = imported_after("import rulelang\nrulelang.load('games/examples/tictactoe.rules').new_game(2, seed=1)")
    assert "networkx" in got


def test_the_api_names_are_there_when_asked_for():
    import rulelang

    for name in rulelang.__all__:
        assert getattr(rulelang, name) is not None
    from rulelang import GameError, RuleError, load  # noqa: F401
    assert set(rulelang.__all__) <= set(dir(rulelang))
    with pytest.raises(AttributeError):
        rulelang.no_such_name  # noqa: B018


@pytest.mark.parametrize("args", [["--version"], ["--help"]])
def test_the_quick_entry_point_answers_as_the_full_one(args):
    def run(module_code):
        r = subprocess.run([sys.executable, "-c", module_code, *args], capture_output=True, text=True,
                           cwd=ROOT, timeout=60)
        return r.returncode, r.stdout, r.stderr
    quick = run("from rulelang.__main__ import main; main()")
    full = run("from rulelang.cli import main; main()")
    assert quick == full and quick[0] == 0

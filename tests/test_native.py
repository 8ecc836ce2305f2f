"""The opt-in native path (interpreter/native.py): the generated code compiled by Cython plays exactly as the
Python path, keeps the work budget, and falls back to Python with one note when it cannot compile.

Three small compiles in all (tic-tac-toe, Kuhn poker, a hostile file; a few seconds of CPU each), each into
a cache folder of this test run; skipped when Cython or a C compiler is missing."""
from __future__ import annotations

import json
import shutil
import sysconfig

import pytest

import rulelang
from tests.golden_games import ROOT, STORE, digests_of
from tests.hostile.bounded import run_bounded

pytest.importorskip("Cython", reason="Cython is not installed (pip install 'rulelang[native]'): no native path")
if not (shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0]) or shutil.which("cc")):
    pytest.skip("no C compiler: no native path", allow_module_level=True)

# (kuhn_poker, about 9 s of compiling and playing, is marked slow: `pytest -m slow`, which .ci/run runs)
GAMES = ("games/examples/tictactoe.rules", pytest.param("games/examples/kuhn_poker.rules", marks=pytest.mark.slow))

# two players: a flow that loops for ever summing a long list, which only the work budget stops; three: a
# function that calls itself 100,000 deep, which the depth limit stops (one file: one compile for both)
HOSTILE = '''game "T" { players 2..3 }
var xs: list[int] = []
function total(ys: list[int]) = sum(ys)
function deep(n: int): int = if n == 0 then 0 else 1 + deep(n - 1)
flow {
  if player_count == 2 { xs = [i for i in 1..100000]  loop { let y = total(xs) } }
  else { let d = deep(100000) }
}
'''

CHILD = '''
import rulelang
from rulelang import GameError
rs = rulelang.loads(ARGS["text"])
print("native", rs.native, rs.native_note)
for players in (2, 3):
    try:
        rs.new_game(players)
        print("NO ERROR")
    except GameError as e:
        print("GameError:", e)
'''


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("native-cache")


@pytest.fixture
def native(cache, monkeypatch):
    monkeypatch.setenv("RULELANG_CACHE_DIR", str(cache))
    monkeypatch.setenv("RULELANG_NATIVE", "1")
    monkeypatch.delenv("CC", raising=False)


@pytest.mark.parametrize("path", GAMES)
def test_a_compiled_game_plays_as_the_python_path(native, path):
    rules = rulelang.load(str(ROOT / path))
    assert rules.native, rules.native_note
    assert rules.backend == "generated" and rules.generated_source
    # the stored digests of seeded random games (every player count, two seeds, each variant): to_json()
    # after every decision, as the Python path plays them
    assert digests_of(path) == json.loads(STORE.read_text())[path]


def test_the_work_budget_and_the_depth_limit_stop_a_hostile_file_when_compiled(native, monkeypatch):
    rules = rulelang.loads(HOSTILE)
    assert rules.native, rules.native_note  # compiled here, into the cache the child finds it in
    out = run_bounded(CHILD, {"text": HOSTILE}, seconds=30)
    assert out.ok, out.explain()
    assert "native True None" in out.stdout, out.explain()
    errors = [line for line in out.stdout.splitlines() if line.startswith("GameError:")]
    assert len(errors) == 2, out.explain()
    assert "the work budget" in errors[0], out.explain()
    assert "function 'deep' calls itself more than 200 deep" in errors[1], out.explain()
    monkeypatch.setenv("RULELANG_NATIVE", "0")
    python_path = rulelang.loads(HOSTILE)
    for players, error in zip((2, 3), errors):  # the same messages, at the same places, as the Python path
        with pytest.raises(rulelang.GameError) as e:
            python_path.new_game(players)
        assert error == f"GameError: {e.value}"


def test_a_broken_compiler_falls_back_with_a_note(native, tmp_path, monkeypatch):
    monkeypatch.setenv("RULELANG_CACHE_DIR", str(tmp_path))  # nothing compiled there yet
    monkeypatch.setenv("CC", "/bin/false")
    rules = rulelang.loads(HOSTILE.replace("1..100000", "1..10"))
    assert not rules.native
    assert rules.native_note.startswith("the C compiler failed"), rules.native_note
    assert rules.backend == "generated"  # the Python functions run as before
    with pytest.raises(rulelang.GameError, match="work budget"):
        rules.new_game(2)


def test_not_asked_for_nothing_is_compiled(cache, monkeypatch):
    monkeypatch.setenv("RULELANG_CACHE_DIR", str(cache))
    monkeypatch.delenv("RULELANG_NATIVE", raising=False)
    rules = rulelang.load(str(ROOT / GAMES[0]))
    assert not rules.native and rules.native_note is None


def test_play_native_says_one_note_when_it_cannot_compile(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from rulelang.cli import cli

    monkeypatch.setenv("RULELANG_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", "/bin/false")
    monkeypatch.setenv("RULELANG_NATIVE", "0")  # --native sets it to 1: put back after the test
    result = CliRunner().invoke(cli, ["play", str(ROOT / GAMES[0]), "--native", "--seed", "1"])
    assert result.exit_code == 0, result.output
    notes = [line for line in result.output.splitlines() if line.startswith("note: the native path")]
    assert notes == ["note: the native path is not used (the C compiler failed (exit status 1)); "
                     "the rules run as Python"], result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", [["validate", "--games", "1", "--no-coverage", "--out", "{tmp}/findings"],
                                     ["compare", "--restrict", "place", "--games", "2", "--no-html"],
                                     ["explore-all", "--max-states", "50"]])
def test_the_other_commands_that_play_take_native_too(command, tmp_path, monkeypatch):
    """docs/language.md: `--native` on validate, compare and explore-all as on play and simulate: asked for,
    the compile is tried once at the start and a failure is one note (here the compiler fails)."""
    from click.testing import CliRunner

    from rulelang.cli import cli

    monkeypatch.setenv("RULELANG_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", "/bin/false")
    monkeypatch.setenv("RULELANG_NATIVE", "0")  # --native sets it to 1: put back after the test
    args = [command[0], str(ROOT / "games" / "examples" / "tictactoe.rules")]
    args += [a.replace("{tmp}", str(tmp_path)) for a in command[1:]] + ["--native"]
    result = CliRunner().invoke(cli, args)
    assert "Traceback" not in result.output
    notes = [line for line in result.output.splitlines() if line.startswith("note: the native path")]
    assert notes and set(notes) == {"note: the native path is not used (the C compiler failed (exit status 1)); "
                                    "the rules run as Python"}, result.output

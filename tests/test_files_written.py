"""Files rulelang writes look like files any editor writes (issue 30): a rewritten file keeps its mode, a
new one gets 0666 less the umask (a temporary file alone is 0600), and folder commands stay inside their
folder: a symbolic link to a file elsewhere is neither rewritten by `fmt DIR` nor run by `test DIR`."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from rulelang.atomic import current_umask, write_text_atomic
from rulelang.cli import cli

ROOT = Path(__file__).resolve().parent.parent
TICTACTOE = ROOT / "games" / "examples" / "tictactoe.rules"


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask():
    """Set the umask for a test and put the old one back."""
    old = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(old)


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.mark.parametrize("before", [0o644, 0o640, 0o664, 0o600, 0o444])
def test_fmt_keeps_the_mode_of_the_file_it_rewrites(tmp_path, before):
    path = tmp_path / "g.rules"
    path.write_text("const a=1\n")
    os.chmod(path, before)
    result = run("fmt", path)
    assert result.exit_code == 0, result.output
    assert path.read_text() == "const a = 1\n" and mode(path) == before


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_0666_less_the_umask(tmp_path, umask, mask, expected):
    umask(mask)
    assert current_umask() == mask
    write_text_atomic(tmp_path / "new.txt", "x")
    assert mode(tmp_path / "new.txt") == expected


def test_graph_output_is_readable_by_others_as_any_new_file(tmp_path, umask):
    umask(0o022)
    out = tmp_path / "g.dot"
    result = run("graph", TICTACTOE, "--format", "dot", "-o", out)
    assert result.exit_code == 0, result.output
    assert mode(out) == 0o644


def test_fmt_of_a_folder_does_not_follow_a_link_out_of_it(tmp_path):
    outside = tmp_path / "elsewhere" / "theirs.rules"
    outside.parent.mkdir()
    outside.write_text("const a=1\n")
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "own.rules").write_text("const b=2\n")
    (folder / "link.rules").symlink_to(outside)
    (folder / "inside.rules").symlink_to(folder / "own.rules")  # a link that stays in the folder is fine
    result = run("fmt", folder)
    assert result.exit_code == 0, result.output
    assert outside.read_text() == "const a=1\n"  # untouched
    assert (folder / "own.rules").read_text() == "const b = 2\n"
    assert f"{folder / 'link.rules'}: skipped: a symbolic link to a file outside {folder}" in result.output
    # a linked folder is not descended into either
    (folder / "sub").symlink_to(outside.parent, target_is_directory=True)
    assert run("fmt", folder).exit_code == 0
    assert outside.read_text() == "const a=1\n"


def test_test_of_a_folder_does_not_run_a_file_linked_from_outside(tmp_path):
    outside = tmp_path / "elsewhere" / "broken.rules"
    outside.parent.mkdir()
    outside.write_text("this does not parse\n")
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "ttt.rules").write_text(TICTACTOE.read_text())
    (folder / "link.rules").symlink_to(outside)
    result = run("test", folder)
    assert "skipped: a symbolic link to a file outside" in result.output
    assert "broken.rules" not in result.output.replace(str(folder / "link.rules"), "")
    assert result.exit_code == 0, result.output

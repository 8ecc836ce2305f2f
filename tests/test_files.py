"""A rule file names rule files, nothing else: `extends` stays inside a root folder and reads only
regular .rules files; `rulebook` is read only as a bounded regular Markdown file for the citation
lint; no diagnostic ever quotes a line of a file that is not rule text (docs/language.md, "Files
and paths")."""
from __future__ import annotations

import json
import os

import pytest

import rulelang
from rulelang import RuleError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICTACTOE = open(os.path.join(ROOT, "games", "examples", "tictactoe.rules"), encoding="utf-8").read()
SECRET_LINES = ["root:$6$Zq1pKs$notarealhash:19000:0:99999:7:::",
                "daemon:*:19000:0:99999:7:::",
                "token = 5f2c-SECRET-0b9e"]
SECRET = "\n".join(SECRET_LINES) + "\n"


def diagnostics(path, **kw):
    return rulelang.check(str(path), **kw)


def shown(diags):
    """Everything a person could see of the diagnostics: rendered, and as --json would print them."""
    return "\n".join(d.render() for d in diags) + "\n" + json.dumps([d.to_dict() for d in diags])


def assert_no_secret(diags):
    text = shown(diags)
    for line in SECRET_LINES:
        for piece in line.split(":") + [line]:
            if len(piece) > 6:
                assert piece not in text, text


def codes(diags):
    return [d.code for d in diags if d.severity == "error"]


def house(folder, target):
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "house.rules"
    p.write_text(f'extends "{target}"\n', encoding="utf-8")
    return p


# --- extends: what it may name ------------------------------------------------------------------

@pytest.mark.parametrize("target", ["/etc/passwd", "/etc/shadow", "/proc/self/status", "/etc/hostname"])
def test_extends_of_an_absolute_path_is_refused_without_reading_it(tmp_path, target):
    diags = diagnostics(house(tmp_path, target))
    assert codes(diags) == ["E015"]
    if os.path.exists(target) and os.access(target, os.R_OK):
        with open(target, errors="replace") as fh:
            lines = [ln for ln in fh.read(4000).splitlines() if len(ln.strip()) > 8]
        for line in lines[:5]:
            assert line not in shown(diags)


def test_extends_of_an_absolute_secret_file_never_echoes_it(tmp_path):
    secret = tmp_path / "elsewhere" / "shadow"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    diags = diagnostics(house(tmp_path / "game", str(secret)))
    assert codes(diags) == ["E015"]
    assert_no_secret(diags)


@pytest.mark.parametrize("name", ["secret.rules", "notes.txt", "shadow"])
def test_extends_of_a_file_that_is_not_rule_text_does_not_quote_it(tmp_path, name):
    (tmp_path / name).write_text(SECRET)
    diags = diagnostics(house(tmp_path, name))
    assert codes(diags) == (["E016"] if name.endswith(".rules") else ["E015"])
    assert all(d.path == str(tmp_path / "house.rules") for d in diags)
    assert_no_secret(diags)


def test_an_extended_file_of_comments_then_secrets_is_not_quoted(tmp_path):
    (tmp_path / "conf.rules").write_text("# settings\n\n" + SECRET)
    diags = diagnostics(house(tmp_path / "h", "../conf.rules"), root=tmp_path)
    assert codes(diags) == ["E016"]
    assert_no_secret(diags)


def test_extends_that_leaves_the_folder_is_refused_unless_the_root_is_wider(tmp_path):
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "ttt.rules").write_text(TICTACTOE)
    h = house(tmp_path / "house", "../base/ttt.rules")
    diags = diagnostics(h)
    assert codes(diags) == ["E015"]
    assert "outside" in diags[0].message and "--root" in diags[0].hint
    with pytest.raises(RuleError):
        rulelang.load(str(h))
    assert codes(diagnostics(h, root=tmp_path)) == []
    assert rulelang.load(str(h), root=tmp_path).name == "Tic-tac-toe"
    assert rulelang.load(h, root=str(tmp_path)).reload(()).name == "Tic-tac-toe"


@pytest.mark.parametrize("chain", ["..", "../..", "../../../../../../../../.."])
def test_dot_dot_chains_out_of_the_root_are_refused(tmp_path, chain):
    outside = tmp_path / "out.rules"
    outside.write_text(SECRET)
    game = tmp_path / "a" / "b"
    # from a/b, ".." stays in a; "../.." reaches tmp_path itself
    diags = diagnostics(house(game, f"{chain}/out.rules"), root=tmp_path / "a")
    assert codes(diags) == ["E015"] or codes(diags) == ["E011"]
    assert_no_secret(diags)
    diags = diagnostics(house(game, f"{chain}/out.rules"))
    assert codes(diags) in (["E015"], ["E011"])
    assert_no_secret(diags)


def test_a_symlink_out_of_the_root_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ttt.rules").write_text(TICTACTOE)
    game = tmp_path / "game"
    game.mkdir()
    os.symlink(outside / "ttt.rules", game / "link.rules")
    os.symlink(outside, game / "linkdir")
    assert codes(diagnostics(house(game, "link.rules"))) == ["E015"]
    assert codes(diagnostics(house(game, "linkdir/ttt.rules"))) == ["E015"]
    # a symlink that stays inside the root is fine
    (game / "real.rules").write_text(TICTACTOE)
    os.symlink(game / "real.rules", game / "inside.rules")
    assert codes(diagnostics(house(game, "inside.rules"))) == []


@pytest.mark.parametrize("name", ["a\\x00.rules", "a\\ud800.rules", "\\udcff.rules", "\\x00"])
def test_extends_with_an_impossible_file_name_is_a_diagnostic(tmp_path, name):
    diags = diagnostics(house(tmp_path, name))
    # a lone surrogate written in a rule file's string is not text (E008) wherever it stands
    assert codes(diags) == (["E008"] if "\\ud" in name else ["E015"])
    for d in diags:
        d.render().encode("utf-8")  # printable: no lone surrogate, no NUL
        json.dumps(d.to_dict(), ensure_ascii=False).encode("utf-8")
        assert "\x00" not in d.render()


def test_extends_of_special_files_is_refused_without_reading(tmp_path):
    fifo = tmp_path / "fifo.rules"
    os.mkfifo(fifo)
    os.symlink("/dev/zero", tmp_path / "zero.rules")
    assert codes(diagnostics(house(tmp_path, "fifo.rules"))) == ["E011"]
    assert "regular file" in diagnostics(house(tmp_path, "fifo.rules"))[0].message
    assert codes(diagnostics(house(tmp_path, "zero.rules"))) == ["E015"]  # /dev is outside the root


def test_what_already_held_still_holds(tmp_path):
    (tmp_path / "loop.rules").write_text('extends "loop.rules"\n')
    assert codes(diagnostics(tmp_path / "loop.rules")) == ["E014"]
    (tmp_path / "a.rules").write_text('extends "b.rules"\n')
    (tmp_path / "b.rules").write_text('extends "a.rules"\n')
    assert codes(diagnostics(tmp_path / "a.rules")) == ["E014"]
    os.symlink(tmp_path / "y.rules", tmp_path / "x.rules")
    os.symlink(tmp_path / "x.rules", tmp_path / "y.rules")
    diags = diagnostics(house(tmp_path / "h", "../x.rules"), root=tmp_path)
    assert len(codes(diags)) == 1 and codes(diags)[0] in ("E011", "E014")
    (tmp_path / "nul.rules").write_bytes(b"game \"x\" {\x00}")
    assert codes(diagnostics(house(tmp_path / "n", "../nul.rules"), root=tmp_path)) == ["E012"]
    (tmp_path / "latin.rules").write_bytes(b"# caf\xe9\n")
    assert codes(diagnostics(house(tmp_path / "l", "../latin.rules"), root=tmp_path)) == ["E012"]
    (tmp_path / "big.rules").write_text("#" * 1_000_001)
    assert codes(diagnostics(house(tmp_path / "b", "../big.rules"), root=tmp_path)) == ["E010"]
    assert codes(diagnostics(tmp_path / "big.rules")) == ["E010"]


def test_a_broken_base_rule_file_still_gets_its_own_diagnostics(tmp_path):
    (tmp_path / "base.rules").write_text(TICTACTOE + "\nconst x = (\n")
    diags = diagnostics(house(tmp_path / "h", "../base.rules"), root=tmp_path)
    assert diags and diags[0].path == str(tmp_path / "base.rules") and diags[0].code.startswith("E00")


# --- rulebook -----------------------------------------------------------------------------------

GAME = '''game "G" {
  players 2
  rulebook "%s"
}
var n: int = 0
@rule "R-1"
action go {
  effect { n += 1 }
}
@rule "R-9"
flow {
  loop {
    for p in players {
      turn p { offer [go] to p }
    }
  }
}
ending "done" when n >= 3
score p = n
'''


def book_warnings(diags):
    return [d for d in diags if d.code == "W306"]


def write_game(folder, rulebook):
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "g.rules"
    p.write_text(GAME % rulebook, encoding="utf-8")
    return p


def test_a_rulebook_beside_the_game_folder_is_read_by_default(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "book.md").write_text("# Book\n## [R-1] Going\ntext\n")
    g = write_game(tmp_path / "games", "../shared/book.md")
    ws = book_warnings(diagnostics(g))
    assert [w.message for w in ws] == ["'R-9' is not a section of the rulebook"]
    # with an explicit root the rulebook must lie inside it too
    ws = book_warnings(diagnostics(g, root=tmp_path / "games"))
    assert len(ws) == 1 and "not read" in ws[0].message
    assert book_warnings(diagnostics(g, root=tmp_path))[0].message == "'R-9' is not a section of the rulebook"


@pytest.mark.parametrize("rulebook", ["/etc/passwd", "/dev/zero", "/dev/urandom", "/proc/self/status",
                                      "book.txt", "a\\x00.md", "fifo.md", "zero.md",
                                      "latin.md", "binary.md", "big.md", "folder.md"])
def test_a_rulebook_that_cannot_be_read_is_a_warning(tmp_path, rulebook):
    (tmp_path / "book.txt").write_text(SECRET)
    os.mkfifo(tmp_path / "fifo.md")
    os.symlink("/dev/zero", tmp_path / "zero.md")
    (tmp_path / "latin.md").write_bytes(b"## [R-1] caf\xe9\n")
    (tmp_path / "binary.md").write_bytes(bytes(range(256)))
    (tmp_path / "big.md").write_text("## [R-1]\n" + "x" * 1_000_001)
    (tmp_path / "folder.md").mkdir()
    diags = diagnostics(write_game(tmp_path, rulebook))
    assert codes(diags) == []
    ws = book_warnings(diags)
    assert len(ws) == 1 and ws[0].message.startswith("cannot read the rulebook")
    for d in diags:
        d.render().encode("utf-8")
    assert_no_secret(diags)


def test_a_missing_rulebook_is_only_a_note_and_the_file_checks_clean(tmp_path):
    """A rulebook is often not the author's to ship: a clone without it checks with no warning."""
    diags = diagnostics(write_game(tmp_path, "missing.md"))
    assert [(d.code, d.severity) for d in diags] == [("W306", "note")]
    assert "not there" in diags[0].message and "citations are not checked" in diags[0].message


def test_the_games_check_without_warnings_in_a_clone_with_nothing_beside_it(tmp_path):
    """The repository stands on its own: copied where no shared/ rulebooks lie beside it, every game file
    (each variant too) has no error and no warning; the missing rulebook is said once, as a note."""
    import shutil

    games = tmp_path / "clone" / "games"
    shutil.copytree(os.path.join(ROOT, "games"), games)
    for name in ("station", "vega", "mars"):
        path = str(games / f"{name}.rules")
        for vs in [()] + [(v,) for v in rulelang.load(path).variants]:
            diags = rulelang.check(path, variants=vs, cache=False)
            assert [(d.code, d.severity) for d in diags] == [("W306", "note")], [d.render() for d in diags]


def test_station_checks_its_citations_when_the_shared_rulebooks_are_beside_the_checkout():
    book = os.path.join(ROOT, "..", "shared", "rulebooks", "station.md")
    if not os.path.exists(book):
        pytest.skip("../shared is not beside this checkout")
    diags = rulelang.check(os.path.join(ROOT, "games", "station.rules"))
    assert not [d for d in diags if d.code == "W306" and "cannot read" in d.message]

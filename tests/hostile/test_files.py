"""Hostile paths in `extends` and `rulebook` (absolute, `..` chains, special files, FIFOs, symlinks out
of the root, NUL and lone surrogates, binary, non-UTF-8 and huge files), and hostile files given to the
command line. Every case runs in a bounded child process (tests/hostile/bounded.py): it must end in
time and memory with a diagnostic of the right code, and no line of the target file may appear in any
output, plain or --json."""
from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile.bounded import run_bounded, run_cli_bounded

SECRET_LINES = ["root:$6$Zq1pKs$notarealhash:19000:0:99999:7:::",
                "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin",
                "api_token = 5f2c-SECRET-0b9e-77aa"]
SECRET = "\n".join(SECRET_LINES) + "\n"
TTT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   "games", "examples", "tictactoe.rules")

# The child: for each case write a file naming the target, then check it through the API and the
# command line (plain and --json); print one JSON line of what was seen.
CHILD = r'''
import json, os
from click.testing import CliRunner
import rulelang
from rulelang.cli import cli

game = ARGS["game"]
results = []
for i, (kind, target) in enumerate(ARGS["cases"]):
    lit = '"' + target.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'
    path = os.path.join(game, f"case{i}.rules")
    if kind == "extends":
        text = "extends " + lit + "\n"
    else:
        text = 'game "G" {\n  players 2\n  rulebook ' + lit + '\n}\nvar n: int = 0\n@rule "R-1"\naction go {\n  effect { n += 1 }\n}\nflow {\n  loop {\n    for p in players {\n      turn p { offer [go] to p }\n    }\n  }\n}\nending "done" when n >= 3\nscore p = n\n'
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    diags = rulelang.check(path)
    shown = [d.render() for d in diags] + [json.dumps(d.to_dict()) for d in diags]
    plain = CliRunner().invoke(cli, ["check", path])
    as_json = CliRunner().invoke(cli, ["check", "--json", path])
    for r in (plain, as_json):
        assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    json.loads(as_json.stdout)
    results.append({"target": target, "path": path,
                    "diags": [[d.path, d.line, d.code, d.severity, d.message] for d in diags],
                    "text": "\n".join(shown) + plain.output + as_json.output,
                    "exit": [plain.exit_code, as_json.exit_code]})
    os.unlink(path)
print(json.dumps(results, ensure_ascii=True))
'''


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """tmp/game is the root; tmp/secret is outside it."""
    top = tmp_path_factory.mktemp("hostile_files")
    game, secret = top / "game", top / "secret"
    game.mkdir()
    secret.mkdir()
    (secret / "shadow").write_text(SECRET)
    (secret / "s.rules").write_text(SECRET)
    (secret / "book.md").write_text(SECRET + "## [R-1] a heading of a secret file\n")
    (secret / "ttt.rules").write_text(open(TTT).read())
    os.mkfifo(game / "fifo.rules")
    os.mkfifo(game / "fifo.md")
    os.symlink("/dev/zero", game / "zero.rules")
    os.symlink("/dev/urandom", game / "urandom.rules")
    os.symlink("/dev/zero", game / "zero.md")
    os.symlink(secret / "s.rules", game / "out.rules")
    os.symlink(secret, game / "outdir")
    os.symlink(game / "loopb.rules", game / "loopa.rules")
    os.symlink(game / "loopa.rules", game / "loopb.rules")
    (game / "secret.rules").write_text(SECRET)
    (game / "secret.txt").write_text(SECRET)
    (game / "bin.rules").write_bytes(bytes(range(256)) * 64)
    (game / "bin.md").write_bytes(bytes(range(256)) * 64)
    (game / "latin.rules").write_bytes(SECRET.encode() + b"caf\xe9\n")
    (game / "latin.md").write_bytes(b"## [R-1] caf\xe9\n" + SECRET.encode())
    (game / "huge.rules").write_text("# " + "x" * 2_000_000 + "\n")
    (game / "huge.md").write_text("## [R-1]\n" + "x" * 2_000_000 + "\n")
    (game / "dir.rules").mkdir()
    return top


def run_cases(tree, cases):
    out = run_bounded(CHILD, {"game": str(tree / "game"), "cases": cases}, seconds=60)
    assert out.ok, out.explain()
    return json.loads(out.stdout.strip().splitlines()[-1])


def assert_nothing_leaked(result):
    for line in SECRET_LINES:
        for piece in [line] + [p for p in line.split(":") if len(p) > 8]:
            assert piece not in result["text"], (result["target"], result["text"])


FILE_CODES = {"E008", "E010", "E011", "E012", "E015", "E016"}  # E008: a name holding a lone surrogate is not text

EXTENDS_CASES = [
    ("/etc/passwd", "E015"), ("/etc/shadow", "E015"), ("/proc/self/status", "E015"),
    ("/dev/zero", "E015"), ("/dev/urandom", "E015"), ("fifo.rules", "E011"), ("zero.rules", "E015"),
    ("urandom.rules", "E015"), ("out.rules", "E015"), ("outdir/ttt.rules", "E015"),
    ("outdir/s.rules", "E015"), ("../secret/s.rules", "E015"), ("../secret/shadow", "E015"),
    ("secret.rules", "E016"), ("secret.txt", "E015"), ("bin.rules", "E012"), ("latin.rules", "E012"),
    ("huge.rules", "E010"), ("loopa.rules", "E011"), ("dir.rules", "E011"), ("a\x00.rules", "E015"),
    ("a\ud800.rules", "E008"), ("\x00", "E015"), ("../" * 40 + "etc/passwd", "E015"),
    (str("~/x.rules"), "E015"),
]


def test_extends_hostile_targets(tree):
    results = run_cases(tree, [["extends", t] for t, _ in EXTENDS_CASES])
    for (target, code), r in zip(EXTENDS_CASES, results):
        errors = [d for d in r["diags"] if d[3] == "error"]
        assert [d[2] for d in errors] == [code], (target, r["diags"])
        assert errors[0][0] == r["path"] and errors[0][1] == 1  # at the extends line of the naming file
        assert r["exit"] == [1, 1]
        assert_nothing_leaked(r)


RULEBOOK_CASES = ["/etc/passwd", "/etc/shadow", "/dev/zero", "/dev/urandom", "/proc/self/status",
                  "fifo.md", "zero.md", "bin.md", "latin.md", "huge.md", "secret.txt", "../secret/shadow",
                  "a\x00.md", "a\ud800.md", "dir.rules", "nosuch.md", "outdir/shadow"]


def test_rulebook_hostile_targets(tree):
    results = run_cases(tree, [["rulebook", t] for t in RULEBOOK_CASES])
    for target, r in zip(RULEBOOK_CASES, results):
        if "\ud800" in target:  # the name itself is not text: the string is an error where it is written
            assert [d[2] for d in r["diags"]] == ["E008"], (target, r["diags"])
            assert_nothing_leaked(r)
            continue
        assert [d for d in r["diags"] if d[3] == "error"] == [], (target, r["diags"])
        w = [d for d in r["diags"] if d[2] == "W306"]
        if target == "nosuch.md":  # simply not there: said quietly, as a note
            assert len(w) == 1 and w[0][3] == "note" and "not there" in w[0][4], (target, r["diags"])
        else:
            assert len(w) == 1 and w[0][4].startswith("cannot read the rulebook"), (target, r["diags"])
        assert r["exit"] == [0, 0]
        assert_nothing_leaked(r)


def test_a_markdown_rulebook_outside_the_folder_shows_only_section_ids(tree):
    # read by default (a rulebook is usually in a shared folder), but only its headings' ids are used
    [r] = run_cases(tree, [["rulebook", "../secret/book.md"]])
    assert [d[2] for d in r["diags"]] == []
    assert_nothing_leaked(r)


PREFIXES = ["", "./", "/", "../", "../../", "../" * 12, "sub/../", "outdir/", "outdir/../", "/dev/", "/etc/",
            "/proc/self/", "//", "game/../../"]
NAMES = ["passwd", "shadow", "zero", "urandom", "status", "fifo.rules", "zero.rules", "urandom.rules",
         "out.rules", "outdir/ttt.rules", "secret.rules", "secret.txt", "bin.rules", "huge.rules",
         "latin.rules", "loopa.rules", "secret/s.rules", "secret/ttt.rules", "s.rules", "nosuch.rules",
         "dir.rules", "fifo.md", "zero.md", "huge.md", "bin.md"]
JUNK = ["", "", "\x00", "\ud800", "\udcff", "\n", "\x7f"]


@st.composite
def hostile_path(draw):
    path = draw(st.sampled_from(PREFIXES)) + draw(st.sampled_from(NAMES))
    junk = draw(st.sampled_from(JUNK))
    at = draw(st.integers(0, len(path)))
    return path[:at] + junk + path[at:]


@settings(deadline=None, max_examples=8, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(hostile_path(), min_size=1, max_size=8))
def test_generated_extends_paths(tree, paths):
    for p, r in zip(paths, run_cases(tree, [["extends", p] for p in paths])):
        errors = [d for d in r["diags"] if d[3] == "error"]
        assert len(errors) == 1 and errors[0][2] in FILE_CODES, (p, r["diags"])
        assert errors[0][0] == r["path"]
        assert_nothing_leaked(r)


@settings(deadline=None, max_examples=4, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(hostile_path(), min_size=1, max_size=8))
def test_generated_rulebook_paths(tree, paths):
    for p, r in zip(paths, run_cases(tree, [["rulebook", p] for p in paths])):
        if any("\ud800" <= ch <= "\udfff" for ch in p):  # not text: an error where the string is written
            assert [d[2] for d in r["diags"]] == ["E008"], (p, r["diags"])
        else:
            assert [d for d in r["diags"] if d[3] == "error"] == [], (p, r["diags"])
            assert len([d for d in r["diags"] if d[2] == "W306"]) == 1
        assert_nothing_leaked(r)


# --- the command line given hostile files ---------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["check", "/dev/zero"], ["check", "/dev/urandom"], ["check", "{game}/fifo.rules"],
    ["play", "{game}/zero.rules"], ["simulate", "{game}/fifo.rules"],
    ["test", "{game}/fifo.rules"],
    ["replay", TTT, "/dev/zero"], ["replay", TTT, "{game}/fifo.rules"], ["replay", TTT, "{game}/bin.rules"],
    ["replay", TTT, "{game}/huge.rules"], ["replay", TTT, "{game}/secret.rules"],
])
def test_cli_on_special_files_ends_with_one_line(tree, argv):
    argv = [a.format(game=tree / "game") for a in argv]
    out = run_cli_bounded(argv, seconds=30)
    assert not out.timed_out and not out.traceback and not out.out_of_memory, out.explain()
    assert out.returncode == 1, out.explain()
    assert "internal error" not in out.stderr
    assert out.stderr.startswith("rulelang: ") and out.stderr.count("\n") == 1, out.explain()
    for line in SECRET_LINES:
        assert line not in out.stdout + out.stderr


@pytest.mark.parametrize("name, code", [("fifo.rules", "E011"), ("huge.rules", "E010"), ("bin.rules", "E012"),
                                        ("zero.rules", "E011")])
def test_cli_check_json_of_special_files(tree, name, code):
    out = run_cli_bounded(["check", "--json", str(tree / "game" / name)], seconds=30)
    assert out.returncode == 1 and not out.traceback, out.explain()
    assert [d["code"] for d in json.loads(out.stdout)] == [code]


def test_cli_root_option_confines_and_widens(tree):
    house = tree / "game" / "h.rules"
    house.write_text('extends "../secret/ttt.rules"\n')
    try:
        out = run_cli_bounded(["check", "--json", str(house)], seconds=30)
        assert out.returncode == 1 and [d["code"] for d in json.loads(out.stdout)] == ["E015"], out.explain()
        out = run_cli_bounded(["check", "--root", str(tree), str(house)], seconds=30)
        assert out.returncode == 0, out.explain()
    finally:
        house.unlink()

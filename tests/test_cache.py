"""The check cache (rulelang/cache.py): an unchanged rule file is answered from it, any change to a
file the check read is a miss, and a bad cache (corrupt, truncated, foreign, unreadable, unwritable)
changes nothing but speed."""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import rulelang
from rulelang import api, cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAMES = [os.path.join("games", "station.rules"), os.path.join("games", "vega.rules")] + sorted(
    os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "games", "examples", "*.rules")))
BAD_FILES = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "diagnostics", "*.rules")))

BASE = '''game "Base" { players 2 }
var total: int = 0
action add_one { effect { total += 1 } }
flow { loop { for p in players { turn p { offer [add_one] to p } } } }
ending "full" when total >= 3
score p = total
'''
HOUSE = 'extends "base.rules"\nphase unused { log 1 }\n'


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A private cache folder; returns a function listing its entry files."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("RULELANG_CACHE_DIR", str(folder))
    monkeypatch.delenv("RULELANG_NO_CACHE", raising=False)

    def entries():
        return sorted(glob.glob(str(folder / "check" / "*" / "*.json")))
    return entries


def no_compile(monkeypatch):
    """Make any real check fail loudly: what follows must come from the cache."""
    def boom(*a, **k):
        raise AssertionError("checked again instead of answering from the cache")
    monkeypatch.setattr(api, "_compile", boom)


def rules(tmp_path, base=BASE, house=HOUSE):
    (tmp_path / "base.rules").write_text(base, encoding="utf-8")
    (tmp_path / "house.rules").write_text(house, encoding="utf-8")
    return str(tmp_path / "house.rules")


def codes(diags):
    return [(d.path, d.line, d.code) for d in diags]


# --- hits and misses ----------------------------------------------------------------------------

def test_a_second_check_is_answered_from_the_cache(tmp_path, store, monkeypatch):
    path = rules(tmp_path)
    first = rulelang.check(path, cache=True)
    assert ("W303" in {d.code for d in first}) and len(store()) == 1
    no_compile(monkeypatch)
    assert rulelang.check(path, cache=True) == first


def test_the_cache_is_off_unless_asked_for(tmp_path, store):
    path = rules(tmp_path)
    rulelang.check(path)  # the library's default: no cache (the command line asks for it)
    assert store() == []
    with cache.using():
        rulelang.check(path)
    assert len(store()) == 1


@pytest.mark.parametrize("edit", ["top", "base", "rulebook", "new-base"])
def test_editing_any_file_the_check_read_is_a_miss(tmp_path, store, edit):
    (tmp_path / "book.md").write_text("# Book\n\n## [A-1] Start\n", encoding="utf-8")
    base = BASE.replace('game "Base" { players 2 }', 'game "Base" { players 2 rulebook "book.md" }')
    base = base.replace("action add_one", '@rule "A-1"\naction add_one')
    path = rules(tmp_path, base=base)
    assert not any(d.code == "W306" for d in rulelang.check(path, cache=True))
    if edit == "top":
        (tmp_path / "house.rules").write_text(HOUSE + "phase unused2 { log 2 }\n", encoding="utf-8")
        want = lambda ds: sum(d.code == "W303" for d in ds) == 2  # noqa: E731
    elif edit == "base":  # same size, one character changed
        (tmp_path / "base.rules").write_text(base.replace("total >= 3", "total >= 4"), encoding="utf-8")
        with open(tmp_path / "base.rules", "a", encoding="utf-8") as fh:
            fh.write("phase gone { log 3 }\n")
        want = lambda ds: any(d.code == "W303" and "gone" in d.message for d in ds)  # noqa: E731
    elif edit == "rulebook":
        (tmp_path / "book.md").write_text("# Book\n\n## [B-1] Other\n", encoding="utf-8")
        want = lambda ds: any(d.code == "W306" and "A-1" in d.message for d in ds)  # noqa: E731
    else:  # the base file is replaced by another one (a symbolic link to a new file)
        (tmp_path / "other.rules").write_text(base + "phase extra { log 4 }\n", encoding="utf-8")
        os.remove(tmp_path / "base.rules")
        os.symlink(tmp_path / "other.rules", tmp_path / "base.rules")
        want = lambda ds: any(d.code == "W303" and "extra" in d.message for d in ds)  # noqa: E731
    again = rulelang.check(path, cache=True)
    assert want(again)
    assert again == rulelang.check(path, cache=False)


def test_a_base_file_that_appears_is_a_miss(tmp_path, store):
    path = str(tmp_path / "house.rules")
    (tmp_path / "house.rules").write_text(HOUSE, encoding="utf-8")
    assert any(d.code == "E011" for d in rulelang.check(path, cache=True))
    (tmp_path / "base.rules").write_text(BASE, encoding="utf-8")
    assert not any(d.severity == "error" for d in rulelang.check(path, cache=True))


def test_variants_and_root_are_part_of_the_key(tmp_path, store):
    text = BASE + 'variant fast { override ending "full" when total >= 1 }\nphase p { log 1 }\n'
    (tmp_path / "v.rules").write_text(text, encoding="utf-8")
    path = str(tmp_path / "v.rules")
    plain = rulelang.check(path, cache=True)
    with_variant = rulelang.check(path, variants=("fast",), cache=True)
    unknown = rulelang.check(path, variants=("slow",), cache=True)
    rooted = rulelang.check(path, root=str(tmp_path), cache=True)
    assert len(store()) == 4
    assert not any(d.code == "E106" for d in plain + with_variant + rooted)
    assert any(d.code == "E106" for d in unknown)
    for variants, want in [((), plain), (("fast",), with_variant), (("slow",), unknown)]:
        assert rulelang.check(path, variants=variants, cache=True) == want == rulelang.check(path, variants=variants)


# --- the same answers -----------------------------------------------------------------------------

@pytest.mark.parametrize("path", GAMES + BAD_FILES)
def test_diagnostics_from_the_cache_are_the_fresh_ones(path, store, monkeypatch):
    monkeypatch.chdir(ROOT)
    fresh = rulelang.check(path)
    assert rulelang.check(path, cache=True) == fresh  # a miss, stored
    monkeypatch.setattr(api, "_compile", lambda *a, **k: pytest.fail("not from the cache"))
    hit = rulelang.check(path, cache=True)
    assert hit == fresh
    assert [d.render() for d in hit] == [d.render() for d in fresh]


FULL = ["-c", "from rulelang.cli import main; main()"]  # the click command line, without the quick path


def cli(args, env, cwd=ROOT, entry=("-m", "rulelang")):
    r = subprocess.run([sys.executable, *entry] + args, capture_output=True, text=True, env=env,
                       cwd=cwd, timeout=120)
    assert "Traceback" not in r.stderr
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("args", [
    ["check", "games/examples/tictactoe.rules"],
    ["check", "--json", "games/examples/connect4.rules", "tests/data/diagnostics/big_numbers.rules"],
    ["check", "tests/data/diagnostics/cond_branches.rules", "games/examples/kuhn_poker.rules"],
    ["check", "--variant", "nope", "games/examples/tictactoe.rules"],
])
def test_the_command_line_prints_the_same_from_the_cache(args, store, tmp_path):
    env = dict(os.environ)
    fresh = cli(args + ["--no-cache"], env, entry=FULL)
    assert cli(args + ["--no-cache"], env) == fresh  # the quick path, checking
    assert store() == []  # --no-cache neither reads nor writes
    first = cli(args, env)  # misses: checked and stored
    assert first == fresh
    if fresh[0] != 2:  # an unknown variant is a usage error, never stored
        assert store()
    assert cli(args, env) == fresh  # hits: answered without the full command line
    assert cli(args, env, entry=FULL) == fresh  # the full command line answers from the cache too


def test_a_hit_loads_neither_click_nor_the_parser(store, tmp_path):
    path = os.path.join(ROOT, "games", "examples", "tictactoe.rules")
    with cache.using():
        want = rulelang.check(path, every_variant=True)  # what `rulelang check` asks (and stores)
    code = ("import sys\nfrom rulelang.__main__ import _quick\n"
            f"code = _quick(['check', {path!r}])\n"
            "print('exit', code, sorted(m for m in ('click', 'lark', 'attrs', 'networkx', 'rulelang.checker')"
            " if m in sys.modules))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
                       timeout=60, cwd=ROOT)
    assert r.stdout.splitlines()[-1] == "exit 0 []", r.stdout + r.stderr
    assert r.stdout.splitlines()[:-1] == [d.render() for d in want] + [f"{path}: 0 errors, 0 warnings"]


def test_the_loaded_game_plays_identically_after_a_cached_check(store, monkeypatch):
    monkeypatch.chdir(ROOT)
    path = os.path.join("games", "examples", "connect4.rules")

    def moves():
        game = rulelang.load(path).new_game(2, seed=5)
        states = [game.to_json()]
        while not game.is_over():
            game.apply(game.legal_actions()[len(game.log) % len(game.legal_actions())])
            states.append(game.to_json())
        return states
    before = moves()
    rulelang.check(path, cache=True)
    rulelang.check(path, cache=True)
    assert moves() == before


# --- a bad cache changes nothing but speed ---------------------------------------------------------

def seal(data) -> bytes:
    """An entry file for ``data`` with a right checksum: only the checks of its content can refuse it."""
    body = json.dumps(data).encode("ascii")
    return cache._header(body) + b"\n" + body


def entry_of(tmp_path, store):
    path = rules(tmp_path)
    want = rulelang.check(path, cache=True)
    (entry,) = store()
    return path, want, entry


@pytest.mark.parametrize("damage", [
    b"", b"{", b"\x00\x01\x02", b"[]", b'{"format": "rulelang-check-cache"}', b"[" * 100_000 + b"]" * 100_000,
    "truncated", "foreign-key", "bad-diagnostic", "wrong-types", "folder", "symlink", "other-owner", "fifo", "huge",
])
def test_a_damaged_entry_is_ignored_and_written_again(tmp_path, store, damage, monkeypatch):
    path, want, entry = entry_of(tmp_path, store)
    good = open(entry, "rb").read()
    data = json.loads(good.partition(b"\n")[2])
    if damage == "truncated":
        open(entry, "wb").write(good[: len(good) // 2])
    elif damage == "foreign-key":
        data["key"]["path"] = "elsewhere.rules"
        open(entry, "wb").write(seal(data))
    elif damage == "bad-diagnostic":
        data["diagnostics"] = [{"fields": {"path": 1}, "text": "x", "json": {}}]
        open(entry, "wb").write(seal(data))
    elif damage == "wrong-types":
        data["deps"] = [[1, 2, 3]]
        open(entry, "wb").write(seal(data))
    elif damage == "folder":
        os.remove(entry)
        os.mkdir(entry)
    elif damage == "symlink":  # even to a valid entry: the cache never follows links
        os.rename(entry, entry + ".real")
        os.symlink(entry + ".real", entry)
    elif damage == "fifo":  # must not block
        os.remove(entry)
        os.mkfifo(entry)
    elif damage == "huge":  # over the size limit: not even read
        with open(entry, "ab") as fh:
            fh.truncate(cache.MAX_ENTRY_BYTES + 1)
    elif damage == "other-owner":
        if not hasattr(os, "chown") or os.geteuid() != 0:
            pytest.skip("needs to give a file to another user")
        os.chown(entry, 65534, 65534)
    else:
        open(entry, "wb").write(damage)
    assert rulelang.check(path, cache=True) == want
    if damage != "folder":
        assert open(entry, "rb").read() == good  # written again, whole
        monkeypatch.setattr(api, "_compile", lambda *a, **k: pytest.fail("not from the cache"))
        assert rulelang.check(path, cache=True) == want


EDITS = st.lists(st.tuples(st.floats(0, 1), st.sampled_from(["flip", "cut", "insert"]), st.integers(0, 255),
                           st.integers(1, 50), st.binary(min_size=1, max_size=20)), min_size=1, max_size=5)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=EDITS)
def test_any_damage_to_an_entry_gives_the_fresh_answer(tmp_path_factory, edits):
    tmp = tmp_path_factory.mktemp("fuzz")
    before = os.environ["RULELANG_CACHE_DIR"]
    os.environ["RULELANG_CACHE_DIR"] = str(tmp / "cache")
    try:
        path = rules(tmp)
        want = rulelang.check(path, cache=True)
        (entry,) = glob.glob(str(tmp / "cache" / "check" / "*" / "*.json"))
        raw = bytearray(open(entry, "rb").read())
        for where, how, value, length, more in edits:
            at = min(len(raw) - 1, int(where * len(raw))) if raw else 0
            if how == "flip" and raw:
                raw[at] = value
            elif how == "cut":
                del raw[at:at + length]
            else:
                raw[at:at] = more
        open(entry, "wb").write(bytes(raw))
        assert rulelang.check(path, cache=True) == want
    finally:
        os.environ["RULELANG_CACHE_DIR"] = before


def test_a_forged_entry_is_only_data_and_the_off_switches_skip_it(tmp_path, store, monkeypatch):
    """Whoever can write the cache can make check print other diagnostics, but never run code;
    --no-cache and RULELANG_NO_CACHE do not even look."""
    # the fingerprint of the code is taken now, as the command-line processes below take it: a source file
    # saved since this process first took it (an edit while the tests run) would key the entry apart
    monkeypatch.setattr(cache, "_stamp", None)
    path = rules(tmp_path)  # the entry `rulelang check` reads: the base rules and every variant
    want = rulelang.check(path, cache=True, every_variant=True)
    (entry,) = store()
    data = json.loads(open(entry).read().partition("\n")[2])
    data["diagnostics"] = [{"fields": {"path": path, "line": 1, "column": 1, "end_line": 1, "end_column": 2,
                                       "code": "W999", "message": "planted", "severity": "warning", "hint": "",
                                       "source_line": ""},
                            "text": "W999 planted", "json": {"code": "W999"}}]
    open(entry, "wb").write(seal(data))
    assert [d.code for d in rulelang.check(path, cache=True, every_variant=True)] == ["W999"]
    assert rulelang.check(path, cache=False, every_variant=True) == want
    monkeypatch.setenv("RULELANG_NO_CACHE", "1")
    assert rulelang.check(path, cache=True, every_variant=True) == want
    with cache.using():
        assert rulelang.check(path, every_variant=True) == want
    env = dict(os.environ)
    assert "W999" not in cli(["check", path], env)[1]
    env.pop("RULELANG_NO_CACHE")
    assert "W999 planted" in cli(["check", path], env)[1]
    assert "W999" not in cli(["check", "--no-cache", path], env)[1]


@pytest.mark.parametrize("where", ["under-a-file", "a-file", "read-only"])
def test_an_unusable_cache_folder_breaks_nothing(tmp_path, monkeypatch, where):
    (tmp_path / "plain").write_text("x")
    folder = {"under-a-file": tmp_path / "plain" / "cache", "a-file": tmp_path / "plain",
              "read-only": tmp_path / "ro"}[where]
    if where == "read-only":
        folder.mkdir()
        folder.chmod(0o500)
        if os.access(folder, os.W_OK):
            pytest.skip("this user can write anywhere (root)")
    monkeypatch.setenv("RULELANG_CACHE_DIR", str(folder))
    path = rules(tmp_path)
    want = rulelang.check(path)
    assert rulelang.check(path, cache=True) == want
    assert rulelang.check(path, cache=True) == want
    code, out, err = cli(["check", path], dict(os.environ))
    assert code == 0 and err == "" and out.endswith(f"{path}: 0 errors, 1 warning\n")


def test_nothing_is_stored_for_an_unreadable_top_file(tmp_path, store):
    missing = str(tmp_path / "nope.rules")
    assert [d.code for d in rulelang.check(missing, cache=True)] == ["E011"]
    os.mkdir(tmp_path / "dir.rules")
    rulelang.check(str(tmp_path / "dir.rules"), cache=True)
    assert store() == []
    code, out, err = cli(["check", missing], dict(os.environ))
    assert code == 1 and "cannot read file: no such file" in err


def test_entries_are_private_and_writes_leave_no_temporary_files(tmp_path, store):
    path = rules(tmp_path)
    rulelang.check(path, cache=True)
    (entry,) = store()
    folder = os.environ["RULELANG_CACHE_DIR"]
    assert os.stat(folder).st_mode & 0o077 == 0
    assert os.stat(entry).st_mode & 0o077 == 0
    assert [f for f in glob.glob(os.path.join(folder, "**", "*"), recursive=True) if f.endswith(".tmp")] == []


# --- size ---------------------------------------------------------------------------------------

def test_the_cache_keeps_to_its_size_and_drops_the_least_recently_used_first(tmp_path, store, monkeypatch):
    """docs/language.md, "The check cache": the entries are kept to a bound in all; beyond it, the least
    recently used go first (a hit counts as a use), so a long editing session cannot fill the disk."""
    (tmp_path / "a").mkdir()
    first = rules(tmp_path / "a")
    rulelang.check(first, cache=True)
    (kept,) = store()
    size = os.path.getsize(kept)
    monkeypatch.setattr(cache, "MAX_CHECK_BYTES", size * 4)  # room for four entries
    others = []
    for n in range(8):
        folder = tmp_path / f"b{n}"
        folder.mkdir()
        others.append(rules(folder, base=BASE.replace("Base", f"Base {n}")))
        os.utime(kept, (1, 1) if n == 0 else None)  # the first entry looks old ...
        assert rulelang.check(first, cache=True)  # ... but a hit makes it the most recently used
        rulelang.check(others[-1], cache=True)
        total = sum(os.path.getsize(f) for f in store())
        assert total <= size * 4 * 1.1, total  # (entries differ by a few bytes in size)
    assert kept in store()  # used at every step: never dropped
    no_compile(monkeypatch)
    assert rulelang.check(first, cache=True)  # still answered from the cache
    assert len(store()) < 9


def test_pruning_removes_the_oldest_files_and_skips_work_in_progress(tmp_path):
    for n in range(10):
        f = tmp_path / f"m{n}.so"
        f.write_bytes(b"x" * 100)
        os.utime(f, (1000 + n, 1000 + n))
    (tmp_path / "build-1").mkdir()
    (tmp_path / "build-1" / "big.c").write_bytes(b"y" * 10_000)
    (tmp_path / "link.so").symlink_to(tmp_path / "m9.so")
    removed = cache.prune(str(tmp_path), 500, skip=("build-",))
    left = sorted(p.name for p in tmp_path.glob("m*.so"))
    assert removed == 7 and left == ["m7.so", "m8.so", "m9.so"]  # down to three quarters of 500 bytes
    assert (tmp_path / "build-1" / "big.c").exists() and (tmp_path / "link.so").is_symlink()
    assert cache.prune(str(tmp_path), 500, skip=("build-",)) == 0
    assert cache.prune(str(tmp_path / "missing"), 1) == 0

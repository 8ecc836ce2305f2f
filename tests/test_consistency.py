"""Consistency checks, mypy style: every tests/consistency/*.rules file is checked with rulelang.check,
and its diagnostics must be exactly the ones written inline, on the line they concern:

    require coins[me] > 3 and coins[me] < 2 "x"     # W: W310 can never hold
    n = f(1)                                          # E:9: E301 must be int, not str

`# E:` expects an error, `# W:` a warning; then (optionally) `:COLUMN:`; then the code and a part of the
message. Several expectations may stand on one line, one after the other. A diagnostic nobody expected, or
an expectation nothing meets, fails the file. A first line `# variants: a, b` checks the file with those
variants applied. Files named dyn_*.rules hold findings of `rulelang validate` (run-time) and are read by
that command's tests, not here; tests/consistency/bases/ holds files the cases extend.

Also here: no clean rule file (the games, the examples, the examples of docs/language.md) has a finding
of the deeper checks, and every diagnostic code has an entry in docs/checks.md.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import rulelang
from rulelang.diagnostics import ERROR, WARNING

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "consistency"
EXPECT_RE = re.compile(r"#\s*([EW])(?::(\d+))?:\s*([EW]\d{3})\b[ \t]*(.*?)[ \t]*(?=#\s*[EW](?::\d+)?:\s*[EW]\d{3}\b|$)")
VARIANTS_RE = re.compile(r"^#\s*variants:\s*(.*)$")
DEEP_CODES = {"W310", "W311", "W312", "W313", "W314", "W315", "W316"}


def case_files():
    return sorted(p for p in CASES.glob("*.rules") if not p.name.startswith("dyn_"))


def expectations(text):
    """[(line, column or None, severity, code, message part)] written in a file."""
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        for m in EXPECT_RE.finditer(line):
            sev = ERROR if m.group(1) == "E" else WARNING
            col = int(m.group(2)) if m.group(2) else None
            out.append((number, col, sev, m.group(3), m.group(4).strip()))
    return out


def variants_of(text):
    first = text.split("\n", 1)[0]
    m = VARIANTS_RE.match(first)
    return tuple(v.strip() for v in m.group(1).split(",") if v.strip()) if m else ()


def compare(path):
    """(unexpected diagnostics, unmet expectations) of one case file, as printable lines."""
    text = path.read_text(encoding="utf-8")
    want = expectations(text)
    diags = rulelang.check(str(path), variants=variants_of(text), cache=False)
    mine = [d for d in diags if Path(d.path).resolve() == path.resolve()]
    others = [d for d in diags if d not in mine]
    unmet = []
    left = list(mine)
    for line, col, sev, code, part in want:
        hit = next((d for d in left if d.line == line and d.code == code and d.severity == sev
                    and (col is None or d.column == col) and part in d.message), None)
        if hit is None:
            unmet.append(f"{path.name}:{line}: expected {sev}[{code}]{f' at column {col}' if col else ''}: "
                         f"...{part}...")
        else:
            left.remove(hit)
    unexpected = [f"{d.path}:{d.line}:{d.column}: {d.severity}[{d.code}]: {d.message}" for d in left + others]
    return unexpected, unmet


@pytest.mark.parametrize("path", case_files(), ids=lambda p: p.name)
def test_case(path):
    unexpected, unmet = compare(path)
    assert not unexpected and not unmet, "\n".join(
        (["unexpected:"] + unexpected if unexpected else []) + (["missing:"] + unmet if unmet else []))


def test_there_are_enough_broken_files():
    files = case_files()
    broken = [p for p in files if expectations(p.read_text(encoding="utf-8"))]
    assert len(broken) >= 40, f"only {len(broken)} broken rule files in tests/consistency/"


def test_every_static_check_is_covered():
    """Each deeper check, the type holes and the main existing codes have a case that expects them."""
    seen = set()
    for p in case_files():
        seen |= {code for _, _, _, code, _ in expectations(p.read_text(encoding="utf-8"))}
    wanted = DEEP_CODES | {"W301", "W302", "W303", "W304", "W305", "W306", "W307", "W308", "W401",
                           "E001", "E002", "E003", "E004", "E101", "E102", "E103", "E107", "E108",
                           "E201", "E203", "E204", "E207", "E209", "E301", "E308", "E310", "E312", "E318",
                           "E326", "E328", "E403", "E406", "E408", "E409", "E410", "E413", "E415", "E502"}
    assert wanted <= seen, f"no case expects {sorted(wanted - seen)}"


# ------------------------------------------------------------------ the harness itself
def test_harness_reads_expectations():
    text = 'x = 1  # W: W311 never true # E:7: E301 must be int\n# variants: a\n'
    assert expectations(text) == [(1, None, WARNING, "W311", "never true"), (1, 7, ERROR, "E301", "must be int")]
    assert variants_of("# variants: a, b\ngame") == ("a", "b")
    assert variants_of("game") == ()


def test_harness_fails_on_unexpected_and_missing(tmp_path):
    """A wrong expectation and an unexpected diagnostic are both reported (the harness can fail)."""
    body = ('game "H" { players 2 }\n'
            'var unused: int\n'                                  # W305, not expected
            'action a { }   # W: W304 never offered\n'           # a is offered: unmet
            'flow { turn 0 { offer [a] to 0 } }\n')
    f = tmp_path / "case.rules"
    f.write_text(body, encoding="utf-8")
    unexpected, unmet = compare(f)
    assert any("W305" in u for u in unexpected)
    assert any("W304" in u for u in unmet)


def test_harness_checks_the_column(tmp_path):
    body = ('game "H" { players 2 }\n'
            'var unused: int   # W:2: W305 never used\n'
            'flow { }\n')
    f = tmp_path / "case.rules"
    f.write_text(body, encoding="utf-8")
    unexpected, unmet = compare(f)
    assert unmet and unexpected  # reported at column 1, not 2
    f.write_text(body.replace("# W:2:", "# W:1:"), encoding="utf-8")
    assert compare(f) == ([], [])


# ------------------------------------------------------------------ no false findings
CLEAN = sorted((ROOT / "games").glob("*.rules")) + sorted((ROOT / "games" / "examples").glob("*.rules"))


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: p.name)
def test_games_and_examples_have_no_findings(path):
    for vs in [()] + [(v,) for v in rulelang.load(str(path)).variants]:
        diags = [d for d in rulelang.check(str(path), variants=vs, cache=False)  # rulebooks live beside
                 if not (d.code == "W306" and d.severity == "note")]  # the checkout, if at all
        assert not diags, f"with variants {vs}:\n" + "\n".join(d.render() for d in diags)


def _docs_blocks():
    """(first line, text) of every ```rules block of docs/language.md (as tests/test_docs_examples.py)."""
    lines = (ROOT / "docs" / "language.md").read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```rules":
            start, body = i + 2, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            out.append((start, "\n".join(body) + "\n"))
        i += 1
    return out


LOCAL_CODES = {"W310", "W315"}  # findings that need no whole game: judged on fragments too


@pytest.mark.parametrize("line,text", _docs_blocks(), ids=[f"line{line}" for line, _ in _docs_blocks()])
def test_docs_examples_have_no_deep_findings(line, text):
    """A whole game of docs/language.md (`# complete`) has no finding with any of its variants; a fragment
    (a game header and a flow added where it has none) has none of the checks that need no whole game."""
    if text.lstrip().startswith("extends"):
        return  # a house-rule file: its base is not beside the docs
    where = f"docs/language.md:{line}"
    if text.lstrip().startswith("# complete"):
        names = rulelang.loads(text, where).variants
        for vs in [()] + [(v,) for v in names]:
            diags = rulelang.check(where, variants=vs, text=text, cache=False)
            assert not diags, f"with variants {vs}:\n" + "\n".join(d.render() for d in diags)
        return
    body = text
    if not re.search(r"^\s*game\s+\"", body, re.M):
        body = 'game "Docs" { players 2..4 }\n' + body
    if not re.search(r"^\s*flow\s*\{", body, re.M):
        body += "\nflow { }\n"
    diags = rulelang.check(where, text=body, cache=False)
    found = [d for d in diags if d.code in LOCAL_CODES]
    assert not found, "\n".join(d.render() for d in found)


# ------------------------------------------------------------------ docs/checks.md
def _table_codes():
    text = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    section = text.split("## Diagnostics", 1)[1].split("\n## ", 1)[0]
    codes = set(re.findall(r"[EW]\d{3}", section))
    for a, b in re.findall(r"([EW]\d{3})`?\s*[–-]\s*`?([EW]\d{3})", section):
        if a[0] == b[0]:
            codes |= {f"{a[0]}{n:03d}" for n in range(int(a[1:]), int(b[1:]) + 1)}
    return codes


def _source_codes():
    out = set()
    for folder in ("rulelang", "interpreter"):
        for p in (ROOT / folder).rglob("*.py"):
            out |= set(re.findall(r"\"([EW]\d{3})\"", p.read_text(encoding="utf-8")))
    return out


def test_every_code_has_an_entry_in_checks_md():
    checks = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
    entries = set(re.findall(r"^### `?([EW]\d{3})", checks, re.M))
    missing = (_table_codes() | _source_codes()) - entries
    assert not missing, f"docs/checks.md has no entry for {sorted(missing)}"
    for code in entries:  # each entry has an example and a fix
        body = checks.split(f"### `{code}`", 1)[1].split("\n### ", 1)[0] if f"### `{code}`" in checks else \
            checks.split(f"### {code}", 1)[1].split("\n### ", 1)[0]
        assert "```" in body and "Fix" in body, f"docs/checks.md: {code} needs an example and a fix"


def test_every_code_in_the_sources_is_in_the_table():
    missing = _source_codes() - _table_codes()
    assert not missing, f"the Diagnostics table of docs/language.md lacks {sorted(missing)}"


def test_checks_md_is_linked():
    assert "checks.md" in (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    assert "docs/checks.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def _checks_examples():
    """(code, example) of every ```rules example of docs/checks.md, under its ### `CODE` heading."""
    text = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
    out = []
    for part in re.split(r"^### ", text, flags=re.M)[1:]:
        m = re.match(r"`([EW]\d{3})`", part)
        if m:
            for ex in re.findall(r"```rules\n(.*?)```", part, re.S):
                out.append((m.group(1), ex))
    return out


@pytest.mark.parametrize("code,example", _checks_examples(), ids=[c for c, _ in _checks_examples()])
def test_checks_md_examples_get_their_code(code, example, tmp_path):
    """Each example on docs/checks.md gets the code it illustrates (a header and a flow added to snippets)."""
    body = example
    if not re.search(r"^\s*(game\s+\"|extends\s)", body, re.M):
        body = 'game "Example" { players 2 }\n' + body
    if code != "E108" and not re.search(r"^\s*(flow\s*\{|extends\s)", body, re.M):
        body += "flow { }\n"
    path = tmp_path / "example.rules"
    path.write_text(body, encoding="utf-8")
    diags = rulelang.check(str(path), cache=False)
    for v in re.findall(r"^\s*variant\s+(\w+)", body, re.M):  # what a variant holds is checked when applied
        diags += rulelang.check(str(path), variants=(v,), cache=False)
    assert code in {d.code for d in diags}, f"{code}: got " + ", ".join(f"{d.code} {d.message}" for d in diags)


def test_a_function_checked_early_for_its_type_is_checked_once():
    """A call before the function's declaration checks its body then (for the result's type): its errors
    and its placeholders are still reported once."""
    text = ('game "P" { players 2 }\nper player var vp: int\n'
            'action work { effect { vp[me] += bonus(me) } }\n'
            '@rule "X-1"\nfunction bonus(p) placeholder "not described" = ?2 + vpp[p]\n'
            'flow { loop { for p in players { turn p { offer [work] to p } } } }\n'
            'ending "e" when any(players, p => vp[p] > 3)\nscore p = vp[p]\n')
    diags = rulelang.check("<early>", text=text, cache=False)
    assert [d.code for d in diags] == ["E201"]
    rs = rulelang.loads(text.replace("vpp", "vp"))
    assert [p.what for p in rs.placeholders] == ["function bonus (not described)", "bonus: invented value"]

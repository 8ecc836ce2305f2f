"""The examples of docs/language.md are real: every ```rules block parses, every block marked
`# complete` loads without errors or warnings and passes its scenarios, and every example in the
built-in library tables evaluates to true."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import rulelang
from interpreter.scenarios import run_scenario
from rulelang.library import FUNCTIONS
from rulelang.parser import parse

DOC = Path(__file__).resolve().parent.parent / "docs" / "language.md"
TEXT = DOC.read_text(encoding="utf-8")
COMPLETE = "# complete"


def rules_blocks():
    """(first line number, text) of every ```rules block."""
    out = []
    lines = TEXT.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```rules":
            start = i + 2  # 1-based line number of the block's first line
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            assert i < len(lines), f"docs/language.md:{start - 1}: unterminated ```rules block"
            out.append((start, "\n".join(body) + "\n"))
        i += 1
    return out


BLOCKS = rules_blocks()
COMPLETE_BLOCKS = [(line, text) for line, text in BLOCKS if text.lstrip().startswith(COMPLETE)]


def _where(line):
    return f"docs/language.md:{line}"


def test_there_are_examples():
    assert len(BLOCKS) >= 40
    with_scenarios = 0
    for line, text in COMPLETE_BLOCKS:
        module, diags = parse(text, _where(line))
        if module is not None and any(getattr(d, "kind", "") == "scenario" for d in module.items):
            with_scenarios += 1
    assert with_scenarios >= 3


@pytest.mark.parametrize("line,text", BLOCKS, ids=[f"line{line}" for line, _ in BLOCKS])
def test_block_parses(line, text):
    module, diags = parse(text, _where(line))
    assert not diags, "\n".join(d.render() for d in diags)
    assert module is not None


@pytest.mark.parametrize("line,text", COMPLETE_BLOCKS, ids=[f"line{line}" for line, _ in COMPLETE_BLOCKS])
def test_complete_program_loads_and_passes_its_scenarios(line, text):
    try:
        rs = rulelang.loads(text, _where(line))
    except rulelang.RuleError as e:
        pytest.fail(e.render() if hasattr(e, "render") else str(e))
    assert not rs.warnings, "\n".join(w.render() for w in rs.warnings)
    failures = []
    for sc in rs.program.scenarios:
        if sc.variants:  # run_scenario runs on the ruleset it is given: load the scenario's variants
            with_variants = rulelang.loads(text, _where(line), variants=tuple(sc.variants))
            sc = next(s for s in with_variants.program.scenarios if s.name == sc.name)
            res = run_scenario(with_variants, sc)
        else:
            res = run_scenario(rs, sc)
        if not res.passed:
            failures.append(f"{sc.name}: {res.message}")
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------ the library tables
def _library_section():
    start = TEXT.index("## The built-in library")
    end = TEXT.index("\n## ", start + 1)
    return TEXT[start:end]


def library_examples():
    """(function cell, example expression) of every row of the library tables."""
    out = []
    for row in _library_section().splitlines():
        if not row.startswith("| `"):
            continue
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        m = re.fullmatch(r"`(.+)`", cells[-1])
        assert m, f"library row without an example: {row}"
        out.append((cells[0], m.group(1)))
    return out


EXAMPLES = library_examples()

HARNESS = """game "Library examples" { players 3 }
board grid = square_grid(3, 3)
board road {
  a -- b -- c -- d
  node b(toll: 2)
}
action wait { }
flow { loop { for p in players { turn p { offer [wait] to p } } } }
ending "never" when false
scenario "example" {
  players 3
  then { expect %s }
}
"""


def test_every_builtin_is_documented():
    section = _library_section()
    documented = {re.match(r"`(\w+)\(", cell).group(1) for cell, _ in EXAMPLES}
    missing = sorted(set(FUNCTIONS) - documented)
    assert not missing, f"built-ins missing from the library tables: {missing}"
    unknown = sorted(documented - set(FUNCTIONS))
    assert not unknown, f"documented functions that do not exist: {unknown}"
    for name, b in FUNCTIONS.items():
        for kw in b.kwargs:
            assert f"{kw}:" in section, f"option '{kw}' of {name}() is not documented"


@pytest.mark.parametrize("cell,example", EXAMPLES, ids=[e for _, e in EXAMPLES])
def test_library_example_holds(cell, example):
    rs = rulelang.loads(HARNESS % example, "library-example")
    res = run_scenario(rs, rs.program.scenarios[0])
    assert res.passed, f"{example}: {res.message}"

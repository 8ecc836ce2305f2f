"""Hostile rule files aimed at load time: huge ranges in constants and parameter domains, huge player
counts and boards, products of parameter domains, long strings and ids, many declarations. Each batch
runs in a bounded child process (2 GB, a time limit); every case must end in diagnostics or a clean load
(and a game that starts or stops with a GameError) within a few seconds — never a traceback, a
MemoryError or a hang."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile.bounded import run_bounded

CASE_SECONDS = 8.0  # the most CPU time one case may take on this (shared, slow) machine

RUNNER = """
import time
import rulelang
from tests.hostile.test_load import build
for i, case in enumerate(ARGS["cases"]):
    text = build(case)
    start = time.process_time()
    try:
        rs = rulelang.loads(text, name="bomb.rules")
    except rulelang.RuleError as e:
        assert e.diagnostics and all(d.line >= 1 for d in e.diagnostics), e.diagnostics
        outcome = "diagnostics " + ",".join(sorted({d.code for d in e.diagnostics if d.severity == "error"}))
    else:
        try:
            g = rs.new_game(min(rs.player_counts))
            g.legal_actions() if not g.over else None
            outcome = "loaded"
        except rulelang.GameError as e:
            outcome = "game error"
    print(i, round(time.process_time() - start, 2), outcome, flush=True)
"""


def game(extra, players="2", offered="go"):
    return (f'game "Bomb" {{ players {players} }}\n{extra}\n'
            'action go() { effect { end_game "done" } }\n'
            f'flow {{ loop {{ turn current {{ offer [{offered}] to current }} }} }}\n')


big = st.integers(min_value=0, max_value=10 ** 15)
low = st.integers(min_value=-10 ** 6, max_value=10)
GENERATORS = {"square_grid": 2, "hex_grid": 1, "hex_rect": 2, "line": 1}


# Each strategy draws a small recipe (kind, parameters); `build` turns it into rule text in the child
# process, so that big files need not travel through the environment.
def build(recipe):
    kind, a = recipe
    if kind == "const_range":
        lo, n = a
        return game(f"const a = {lo}..{lo + n}\nvar v: int = count(a)")
    if kind == "many_consts":
        k, n = a
        return game("\n".join(f"const c{i} = 0..{n}" for i in range(k)))
    if kind == "domain":
        lo, n, typed = a
        param = f"n: {lo}..{lo + n}" if typed else f"n in {lo}..{lo + n}"
        return game(f"action a({param}) {{ effect {{ }} }}", offered="go, a")
    if kind == "product":
        params = ", ".join(f"p{i} in 1..{n}" for i, n in enumerate(a))
        return game(f"action a({params}) {{ effect {{ }} }}", offered="go, a")
    if kind == "players":
        lo, hi, shape = a
        return game("", players={"range": f"{lo}..{hi}", "single": str(hi), "list": f"{lo + 1}, {hi}"}[shape])
    if kind == "board":
        gen, sizes = a
        k = GENERATORS[gen]
        return game("\n".join(f"board b{i} = {gen}({', '.join(map(str, sizes[i * k:i * k + k]))})"
                              for i in range(len(sizes) // k)))
    if kind == "long_ids":
        n, k, fixed = a
        items = ", ".join(f'"{chr(97 + i % 26) * n}"' for i in range(k))
        if fixed:
            return game(f"action a(s in [{items}]) {{ effect {{ }} }}", offered="go, a")
        return game(f"var names: list[str] = [{items}]\naction a(s in names) {{ effect {{ }} }}", offered="go, a")
    if kind == "many_declarations":
        n, what = a
        line = {"const": "const c{i} = {i} * 2\n", "unknown": "const c{i} = nothing{i} + 1\n",
                "var": "var v{i}: int = {i}\n"}[what]
        return game("".join(line.format(i=i) for i in range(n)))
    return game(kind)  # a literal piece of rule text


def recipe(kind, *parts):
    return st.tuples(st.just(kind), st.tuples(*parts))


BOMBS = st.one_of(
    recipe("const_range", low, big),
    recipe("many_consts", st.integers(1, 60), st.sampled_from([10, 1000, 999_999, 1_000_000])),
    recipe("domain", low, big, st.booleans()),
    st.tuples(st.just("product"), st.lists(st.integers(1, 10 ** 6), min_size=2, max_size=6).map(tuple)),
    recipe("players", st.integers(0, 5), big, st.sampled_from(["range", "single", "list"])),
    st.sampled_from(list(GENERATORS)).flatmap(lambda gen: recipe(
        "board", st.just(gen), st.lists(st.integers(1, 200) | st.integers(1, 10 ** 9), min_size=GENERATORS[gen],
                                        max_size=8 * GENERATORS[gen]).map(tuple))),
    recipe("long_ids", st.integers(1, 200_000), st.integers(1, 20), st.booleans()),
    recipe("many_declarations", st.integers(1000, 8000), st.sampled_from(["const", "unknown", "var"])),
)



def run_cases(cases, seconds):
    out = run_bounded(RUNNER, {"cases": cases}, seconds=seconds)
    assert out.ok, out.explain()
    lines = out.stdout.splitlines()
    assert len(lines) == len(cases), out.explain()
    for line in lines:
        i, took, outcome = line.split(" ", 2)
        assert float(took) < CASE_SECONDS, (cases[int(i)], line)
        assert outcome == "loaded" or outcome == "game error" or outcome.startswith("diagnostics E"), line
    return [line.split(" ", 2)[2] for line in lines]


@settings(deadline=None, max_examples=5, suppress_health_check=list(HealthCheck))
@given(st.lists(BOMBS, min_size=6, max_size=10))
def test_load_time_bombs_end_in_diagnostics_or_a_clean_load(cases):
    run_cases(cases, seconds=90)


def test_the_issue_cases_are_load_diagnostics():
    cases = [
        ("domain", (0, 10 ** 12, True)),
        ("players", (2, 30_000_000, "range")),
        ("many_consts", (60, 999_999)),
        ("board", ("hex_grid", (200,) * 5)),
        ("product", (1000, 1000, 1000)),
        ("long_ids", (500_000, 1, True)),
        ("const a = 1 / 0\nvar v: int = a", ()),
        ("domain", (0, 2_000_000, False)),
    ]
    outcomes = run_cases(cases, seconds=60)
    # a player count past 100 is already refused by the parser (E327), before load
    assert outcomes == ["diagnostics E503", "diagnostics E327"] + ["diagnostics E503"] * 4 + \
        ["diagnostics E502"] * 2, outcomes

"""What `check` says agrees with what happens when the rules run (issue 31.14): a name that would hide a
built-in is refused where it is declared; errors inside a variant are found by a plain `rulelang check`."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

import rulelang
from rulelang import RuleError
from rulelang.cli import cli

GAME = '''game "T" { players 2 }
per player var vp: int
action a { effect { vp[me] += 1 } }
flow { loop { for p in players { turn p { offer [a] to p } } } }
ending "x" when vp[0] > 2
'''


def codes(text):
    with pytest.raises(RuleError) as e:
        rulelang.loads(text)
    return [(d.code, d.line, d.message) for d in e.value.diagnostics]


@pytest.mark.parametrize("decl, name", [
    ("const players = 3", "players"),          # checked clean, then `for p in players` ran over 3
    ("function count(x) = 1", "count"),         # silently replaced the built-in
    ("var me: int = 0", "me"),
    ("enum Side { left, current }", "current"),
    ("procedure sorted() { log 1 }", "sorted"),
])
def test_a_declaration_cannot_take_a_built_in_name(decl, name):
    """A built-in value's name is refused for any declaration; a built-in function's for a function,
    procedure, action or event (a variable named `first` is fine: `first(xs)` then says it is one)."""
    got = [x for x in codes(GAME + decl + "\n") if x[0].startswith("E")]  # (W303/W305: it is unused too)
    assert [(c, line) for c, line, _ in got] == [("E205", 6)], got
    assert f"'{name}' is a built-in" in got[0][2]


def test_plain_check_reports_errors_inside_every_variant(tmp_path):
    """docs/checks.md's own E104 example: a variant inside a variant is found without --variant."""
    path = tmp_path / "v.rules"
    path.write_text(GAME + "variant a { variant b {} }\nvariant fine { override const none_such = 1 }\n"
                           "variant good { per player var extra: int }\n")
    diags = rulelang.check(str(path), cache=False, every_variant=True)
    assert [(d.code, d.line) for d in diags] == [("E104", 6), ("E102", 7)]
    assert diags[0].message.endswith("(with variant a)") and diags[1].message.endswith("(with variant fine)")
    result = CliRunner().invoke(cli, ["check", "--no-cache", str(path)])
    assert result.exit_code == 1 and "error[E104]" in result.output and "2 errors" in result.output
    # naming a variant checks just that one, as before
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--variant", "good", str(path)])
    assert result.exit_code == 0, result.output
    # the quick entry point (python -m rulelang check) says the same
    from rulelang.__main__ import _quick

    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = _quick(["check", "--no-cache", str(path)])
    assert code in (1, None)
    if code == 1:
        assert "error[E104]" in out.getvalue() and "2 errors" in out.getvalue()


@pytest.mark.parametrize("op, value", [("+", "1"), ("*", "1"), ("and", "true"), ("-", "0")])
def test_exactly_the_documented_200_operators_may_be_chained(op, value):
    """docs/language.md: one expression may chain at most 200 operators (E006 past that)."""
    def game(n):
        chain = f" {op} ".join([value] * (n + 1))
        return f'game "T" {{ players 2 }}\nvar x: any = none\nflow {{ x = {chain} }}\n'

    for backend in ("generated", "closures"):
        rs = rulelang.loads(game(200))
        rs = rs if backend == "generated" else rs.with_backend("closures")
        rs.new_game(2)  # plays (the flow runs at once)
    got = codes(game(201))
    assert [c for c, _, _ in got] == ["E006"] and "more than 200 operators" in got[0][2]


def test_a_keyword_used_as_a_name_says_it_is_a_keyword():
    """`record` as a procedure name parsed as a block's first statement but not after another one: the
    error says why (a keyword), wherever it stands."""
    text = 'game "T" { players 2 }\nprocedure record() { log 1 }\nflow { log 2  record() }\n'
    (diag,) = codes(text)
    assert diag[0] == "E004" and diag[2] == "unexpected keyword 'record'"
    with pytest.raises(RuleError) as e:
        rulelang.loads(text)
    assert "'record' is a keyword" in e.value.diagnostics[0].hint


def test_a_variable_may_share_a_built_in_functions_name():
    rs = rulelang.loads(GAME + "var first: int = 1\nvar count: int = 2\n")
    assert rs.new_game(2).view(None)["vars"]["first"] == 1


@pytest.mark.parametrize("backend", ["generated", "closures"])
@pytest.mark.parametrize("statement, expected", [
    ('end_game if fast then "quick win" else "slow win"', "quick win"),
    ('end_game ("won in " + "round two")', "won in round two"),
    ('trigger_end if fast then "quick" else "slow"  end_game', "quick"),
])
def test_the_reason_the_game_ends_may_be_an_expression(statement, expected, backend):
    """`end_game if r then "a" else "b"` was read as end_game and a stray expression (E406)."""
    text = GAME.replace('ending "x" when vp[0] > 2\n', "") + (
        "var fast: bool = true\naction b { effect { vp[me] += 1  if vp[me] > 1 { " + statement + " } } }\n"
    ).replace("offer [a]", "offer [b]")
    text = text.replace("offer [a] to p", "offer [b] to p")
    rs = rulelang.loads(text)
    rs = rs if backend == "generated" else rs.with_backend("closures")
    g = rs.new_game(2, seed=1)
    while not g.is_over():
        g.apply(g.legal_actions()[0])
    assert g.end_reason == expected


def test_a_reason_that_is_not_a_text_is_an_error():
    got = [c for c in codes(GAME + "action b { effect { end_game (3) } }\n") if c[0].startswith("E")]
    assert got[0][0] == "E301" and "reason the game ends is a text" in got[0][2]


@pytest.mark.parametrize("backend", ["generated", "closures"])
def test_an_empty_set_compared_with_empty_braces_is_equal(backend):
    """`{}` next to a set is the empty set (it was the empty map there: `s == {}` was always false)."""
    text = ('game "T" { players 2 }\nvar s: set[int] = {}\nvar m: map[int, int] = {}\nvar a: bool\nvar b: bool\n'
            'var c: bool\nvar d: bool\nflow { a = s == {}  b = {} != s  c = m == {}  add 1 to s  d = s == {}  end_game }\n')
    rs = rulelang.loads(text)
    rs = rs if backend == "generated" else rs.with_backend("closures")
    v = rs.new_game(2).view(None)["vars"]
    assert (v["a"], v["b"], v["c"], v["d"]) == (True, False, True, False)

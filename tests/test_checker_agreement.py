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
    ("enum Side { left, max }", "max"),
    ("procedure sorted() { log 1 }", "sorted"),
])
def test_a_declaration_cannot_take_a_built_in_name(decl, name):
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

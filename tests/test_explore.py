"""`rulelang check --explore`: random playouts find stuck positions and endless games."""
import json
import os

from click.testing import CliRunner

from rulelang.cli import cli


def test_explore_reports_a_stuck_position_at_its_offer(tmp_path):
    p = tmp_path / "stuck.rules"
    p.write_text('''game "Stuck" { players 2 }
per player var n: int = 0
action go { require n[me] < 3  effect { n[me] += 1 } }
flow { loop { for p in players { turn p { offer [go] to p } } } }
ending "never" when false
''')
    r = CliRunner().invoke(cli, ["check", "--explore", "3", str(p)])
    assert r.exit_code == 1
    # the code validate gives a stuck position (docs/checks.md), at the same offer
    assert f"{p}:4:43: error[E602]" in r.output and "E601" not in r.output
    assert "the game is stuck" in r.output and "--seed" in r.output
    r = CliRunner().invoke(cli, ["validate", str(p), "--json", "--games", "3", "--out", str(tmp_path / "o")])
    assert [(f["code"], f["line"], f["column"]) for f in json.loads(r.stdout)["findings"]] == [("E602", 4, 43)]


def test_explore_reports_a_rule_error_as_E601(tmp_path):
    p = tmp_path / "error.rules"
    p.write_text('''game "Error" { players 2 }
var track: list[int] = [0, 0]
var at: int
action go { effect { at += 1  track[at] += 1 } }
flow { loop { for p in players { turn p { offer [go] to p } } } }
ending "never" when false
''')
    r = CliRunner().invoke(cli, ["check", "--explore", "2", str(p)])
    assert r.exit_code == 1
    assert f"{p}:4:31: error[E601]" in r.output and "E602" not in r.output, r.output


def test_explore_warns_about_games_that_do_not_end(tmp_path):
    p = tmp_path / "endless.rules"
    p.write_text('''game "Endless" { players 2 }
action wait { effect { } }
flow { loop { for p in players { turn p { offer [wait] to p } } } }
ending "never" when false
''')
    r = CliRunner().invoke(cli, ["check", "--explore", "1", str(p)])
    assert r.exit_code == 0
    assert "W601" in r.output and "did not end" in r.output


def test_explore_is_quiet_on_a_sound_game():
    r = CliRunner().invoke(cli, ["check", "--explore", "5", os.path.join(os.path.dirname(__file__), "..", "games", "examples", "connect4.rules")])
    assert r.exit_code == 0, r.output
    assert "E601" not in r.output and "W601" not in r.output

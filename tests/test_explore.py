"""`rulelang check --explore`: random playouts find stuck positions and endless games."""
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
    assert f"{p}:4:43: error[E601]" in r.output
    assert "the game is stuck" in r.output and "--seed" in r.output


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

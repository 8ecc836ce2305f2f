"""Every rule file under games/ plays as it did when its digests were written (tests/golden_games.py):
a change to the parser, checker, optimiser, generator or engine must not change a single saved state of
a seeded game. A file without stored digests fails too, so that a new game gets its digests."""
from __future__ import annotations

import json

import pytest

from tests.golden_games import STORE, digests_of, rule_files

STORED = json.loads(STORE.read_text())


@pytest.mark.parametrize("path", rule_files())
def test_game_plays_as_recorded(path):
    assert path in STORED, f"no digests stored for {path}: run python -m tests.golden_games {path}"
    got = digests_of(path)
    changed = sorted(k for k in got if got[k] != STORED[path].get(k))
    assert not changed, (f"{path} plays differently ({', '.join(changed)}); if a rule changed on purpose, "
                         f"write the new digests: python -m tests.golden_games {path}")
    assert set(got) == set(STORED[path])


def test_the_digest_sees_a_changed_state():
    """The digest depends on the states, not only on the file: another seed gives another digest."""
    import rulelang
    from tests.golden_games import ROOT, digest

    rules = rulelang.load(str(ROOT / "games/examples/tictactoe.rules"))
    assert digest(rules, 2, 0) != digest(rules, 2, 1)
    assert digest(rules, 2, 0) == digest(rules, 2, 0)

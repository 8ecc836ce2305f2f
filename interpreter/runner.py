"""STAND-IN (replaced by the runner branch): the smallest ``run_games`` with the agreed signature
and row keys, serial, random agents only, so that ``rulelang compare`` can be built and tested
before the real runner is merged.  No compare logic lives here."""
from __future__ import annotations

from interpreter.agents import CHANCE, ChanceAgent, RandomAgent, agent_seed
from interpreter.simulate import DecisionLimitExceeded, _first_line, _known_errors, _load, game_seed

__all__ = ["run_games", "game_seed"]


def _name(action) -> str:
    return str(action.id).split("(", 1)[0]


def run_games(ruleset, *, rules=None, variants=(), players, games, seed=0, agents=("random",),
              restrict=None, max_decisions=100_000, chance="sampled", workers=1, scheduler=None,
              progress=None) -> list:
    if ruleset is None:
        ruleset = _load(rules, variants, None)
    specs = [str(a) for a in agents] or ["random"]
    for spec in specs:
        if spec != "random":
            raise ValueError(f"agent {spec!r}: the stand-in runner plays random agents only")
    specs = (specs * players)[:players]
    rows = []
    if progress is not None:
        progress(0, games)
    for i in range(games):
        gseed = game_seed(seed, i)
        banned = i % players if restrict else None
        row = {"index": i, "seed": gseed, "players": players,
               "variants": list(getattr(ruleset, "active_variants", variants) or ()),
               "agents": list(specs), "restricted_seat": banned, "ok": False, "winners": [],
               "draw": False, "scores": None, "decisions": 0, "rounds": None, "end_reason": None,
               "error": None, "internal": False, "actions": {}, "branching": None}
        options = 0
        try:
            game = ruleset.new_game(players, seed=gseed, chance=chance)
            bots = [RandomAgent(agent_seed(gseed, s)) for s in range(players)]
            dice = ChanceAgent(agent_seed(gseed, "chance"))
            while not game.is_over():
                seat = game.current_player
                if seat == CHANCE:
                    game.apply(dice.choose(game))
                    continue
                if row["decisions"] >= max_decisions:
                    raise DecisionLimitExceeded(f"the game did not end within {max_decisions} decisions")
                legal = game.legal_actions()
                options += len(legal)
                if seat == banned:
                    allowed = [a for a in legal if _name(a) != restrict]
                    legal = allowed or legal
                action = bots[seat].rng.choice(legal)
                game.apply(action)
                row["decisions"] += 1
                row["actions"][_name(action)] = row["actions"].get(_name(action), 0) + 1
            winners = list(game.winners())
            row.update(ok=True, winners=winners, draw=not winners or len(winners) == players,
                       scores=list(game.scores()), end_reason=game.end_reason)
        except _known_errors() as exc:
            row["error"] = _first_line(exc)
        except Exception as exc:
            row.update(error=f"internal error: {type(exc).__name__}: {_first_line(exc)}", internal=True)
        if row["decisions"]:
            row["branching"] = options / row["decisions"]
        rows.append(row)
        if progress is not None:
            progress(i + 1, games)
    return rows

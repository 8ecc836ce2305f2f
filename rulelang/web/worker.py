"""What runs in the worker processes of `rulelang serve`: compiling rule text, checking it, and playing
tables' decisions (people's and bots').

Rule text is untrusted (the edit page accepts any text), so none of this runs in the server process:
`rulelang/web/tables.py` calls these functions through a process pool whose workers have a memory limit
(``RLIMIT_AS``) and whose every call has a time limit (the worker is killed and replaced when a call
overruns). Inside, the language's own budgets apply (the step budget and time limit of each decision).

Every function here takes and returns plain data (dicts, lists, strings, numbers), so that a call can
be pickled to a worker and its answer back. A worker keeps recently used rulesets and games in small
caches; a game is rebuilt from its seed (or start save) and its decisions whenever the cached one is not
at the same decision, so that any worker can serve any table and a restarted server resumes exactly.
"""
from __future__ import annotations

import collections
import hashlib
import time

from interpreter.who_knows import seats_that_know, view_of

MAX_RULESETS = 8  # compiled rulesets a worker keeps
MAX_GAMES = 64  # games a worker keeps
MAX_LEGAL_SHOWN = 2_000  # legal actions listed on a seat's page at most (the rest are counted)
BOT_THINK_SECONDS = 10.0  # a search bot (mcts, ismcts) stops searching after this long per decision

_rulesets: "collections.OrderedDict" = collections.OrderedDict()
_games: "collections.OrderedDict" = collections.OrderedDict()


def limit_memory(max_bytes: int) -> None:
    """Pool initializer: cap this worker's address space, so one rule file cannot exhaust the machine."""
    import resource

    if max_bytes:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = max_bytes if hard == resource.RLIM_INFINITY else min(max_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    import rulelang  # noqa: F401  (import once, before the first call)
    import interpreter.engine  # noqa: F401


def rules_sha(text: str, name: str, root: str) -> str:
    return hashlib.sha256(f"{name}\0{root}\0{text}".encode("utf-8")).hexdigest()


def _diag(d) -> dict:
    return {"path": d.path, "line": d.line, "column": d.column, "code": d.code, "severity": d.severity,
            "message": d.message, "hint": d.hint, "text": d.render()}


def check_text(text: str, name: str, root: str, variants=()) -> list:
    """Every diagnostic of the rule text (as `rulelang check` reports them), as dicts."""
    import rulelang

    return [_diag(d) for d in rulelang.check(name, variants=tuple(variants), text=text, root=root, cache=False)]


def _ruleset(text: str, name: str, root: str, variants):
    import rulelang

    key = (rules_sha(text, name, root), tuple(variants))
    rs = _rulesets.get(key)
    if rs is None:
        rs = rulelang.loads(text, name=name, variants=tuple(variants), root=root)
        _rulesets[key] = rs
        while len(_rulesets) > MAX_RULESETS:
            _rulesets.popitem(last=False)
    else:
        _rulesets.move_to_end(key)
    return rs


def describe(text: str, name: str, root: str, variants=()) -> dict:
    """The game a rule text declares (name, player counts, variants), or its errors as diagnostics."""
    import rulelang

    try:
        rs = _ruleset(text, name, root, variants)
    except rulelang.RuleError as exc:
        return {"errors": [_diag(d) for d in exc.diagnostics]}
    return {"game": rs.name, "player_counts": list(rs.player_counts), "variants": list(rs.variants),
            "boards": list(getattr(rs, "boards", {}) or {})}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _board_svg():
    """The board drawing of the library (interpreter.render), the same as `rulelang show` draws."""
    from interpreter.render import board_svg

    return board_svg


def _game(job: dict):
    """The table's game after its stored decisions: from the cache when it is there, else rebuilt from
    the seed (or the start save) by applying every stored decision again."""
    from interpreter.errors import GameError, IllegalAction

    rs = _ruleset(job["text"], job["name"], job["root"], job["variants"])
    decisions = job["decisions"]
    key = job["table"]
    cached = _games.get(key)
    if cached is not None and cached[1] is rs and cached[2] == [tuple(d) for d in decisions[-1:]] + [len(decisions)]:
        del _games[key]  # taken: put back by advance() once the game is at a known decision again
        return cached[0], None
    _games.pop(key, None)
    if job.get("start_save"):
        game = rs.load_game(job["start_save"])
    else:
        game = rs.new_game(job["players"], seed=job["seed"], chance=job.get("chance") or "sampled")
    error = None
    for k, (player, action) in enumerate(decisions, 1):
        if game.current_player != player:
            raise ReplayError(f"decision {k} was P{player}'s, but the game asks P{game.current_player}")
        try:
            game.apply(action)
        except IllegalAction as exc:
            raise ReplayError(f"decision {k} ({action}) is not legal any more: {_first_line(exc)}") from None
        except GameError as exc:
            if k != len(decisions):
                raise ReplayError(f"decision {k} stopped the game: {_first_line(exc)}") from None
            error = _first_line(exc)
    return game, error


def _remember(key, game, rs, decisions) -> None:
    _games[key] = (game, rs, [tuple(d) for d in decisions[-1:]] + [len(decisions)])
    while len(_games) > MAX_GAMES:
        _games.popitem(last=False)


class ReplayError(Exception):
    """The stored decisions do not replay (the rule file changed on disk since the table began)."""




_schemas: dict = {}


def _schema(rs):
    """The public declarations of a ruleset that the pages show (rulelang/web/present.py), made once."""
    from .present import Schema

    got = _schemas.get(id(rs))
    if got is None or got[0] is not rs:
        if len(_schemas) > MAX_RULESETS * 2:
            _schemas.clear()
        got = _schemas[id(rs)] = (rs, Schema(rs))
    return got[1]


def _outcome(game):
    """(scores, winners, error) of a finished game: a score or tiebreak that fails is the game's error."""
    from interpreter.errors import GameError

    try:
        return list(game.scores()), list(game.winners()), None
    except GameError as exc:
        return None, [], f"the game ended ({game.end_reason}) but {_first_line(exc)}"


def _snapshot(game, error, bot_seats) -> dict:
    """What every seat may see, seat by seat, plus what is public."""
    from .present import panels, rows_in

    board_svg = _board_svg()
    schema = _schema(game.rs)
    boards = list(getattr(game.rs, "boards", {}) or {})
    over = game.is_over()
    scores, winners = None, []
    if over and error is None:
        scores, winners, error = _outcome(game)
    public = {
        "decisions": len(game.log),
        "current_player": game.current_player,
        "over": over,
        "end_reason": game.end_reason if over else None,
        "scores": scores,
        "winners": winners,
        "error": error,
    }
    seats = []
    for seat in range(game.n):
        view = view_of(game, seat)
        legal, more = [], 0
        if error is None and not over and game.current_player == seat and seat not in bot_seats:
            actions = game.legal_actions()
            pending = game.pending
            values = [v for _, v in pending.options] if pending is not None and len(pending.options) == len(actions) else None
            for k, a in enumerate(actions[:MAX_LEGAL_SHOWN]):
                entry = {"id": a.id, "text": str(a)}
                if values is not None:
                    v = values[k]
                    v = v[1] if pending.kind == "action" and isinstance(v, tuple) and len(v) == 2 else v
                    entry["rows"] = rows_in(schema, v)
                legal.append(entry)
            more = max(0, len(actions) - MAX_LEGAL_SHOWN)
        drawn = []
        for b in boards:
            try:
                svg = board_svg(game, seat, b)
                if svg.startswith("<?xml"):  # inline in the page: no XML declaration
                    svg = svg.split("?>", 1)[1].lstrip()
                drawn.append({"name": b, "svg": svg})
            except Exception as exc:  # a drawing is a courtesy: never fail a decision because of it
                drawn.append({"name": b, "svg": "", "problem": _first_line(exc)})
        seats.append({"view": view, "legal": legal, "more_legal": more, "boards": drawn,
                      "panels": panels(schema, view, game.n)})
    return {"public": public, "seats": seats}


def advance(job: dict) -> dict:
    """Apply a person's decision (``job["new"] = [seat, action_id]``, or none), then the chance
    decisions that follow (each drawn by a chance agent seeded from the table's seed and the decision
    number), and, when ``job["bots_move"]``, the bots' decisions, for at most ``job["max_bot_moves"]``
    decisions and ``job["max_seconds"]`` seconds. Returns the decisions added (``player``, ``action``,
    ``text``, ``prompt``, ``seen``: the seats that may know it), ``more`` (automatic decisions are
    left to make), the snapshot, and ``illegal`` (a one-line message) when the person's decision was
    refused: then nothing was added."""
    from interpreter.agents import CHANCE, ChanceAgent, agent_seed
    from interpreter.errors import GameError, IllegalAction
    import rulelang

    try:
        game, error = _game(job)
    except rulelang.RuleError as exc:
        return {"fatal": "the rules no longer load: " + _first_line(exc.render())}
    except ReplayError as exc:
        return {"fatal": f"the table cannot be resumed: {exc}"}
    except GameError as exc:
        return {"fatal": f"the table cannot be resumed: {_first_line(exc)}"}
    bots = {int(k): v for k, v in job["bots"].items()}
    added = []

    def take(chosen, actor):
        """Apply ``chosen`` (legal now) for ``actor``, and note it with the seats that may know it."""
        nonlocal error
        options = game.legal_actions()
        prompt = game.prompt
        text = str(chosen)
        before = game.clone()
        try:
            game.apply(chosen)
        except GameError as exc:
            error = _first_line(exc)
        seen = seats_that_know(before, options, chosen, actor, game)
        added.append({"player": actor, "action": chosen.id, "text": text, "prompt": prompt, "seen": seen})

    if job.get("new") is not None and error is None:
        seat, action = job["new"]
        refused = None
        if game.is_over():
            refused = "the game is over"
        elif game.current_player != seat:
            refused = f"it is not your decision (it is P{game.current_player}'s)"
        chosen = None if refused else next((a for a in game.legal_actions() if a.id == action), None)
        if chosen is None and refused is None:
            refused = f"'{action}' is not a legal action now"
        if refused is not None:
            _remember(job["table"], game, game.rs, job["decisions"])
            return {"illegal": refused}
        try:
            take(chosen, seat)
        except IllegalAction as exc:  # legal_actions() listed it: apply() left the game unchanged
            _remember(job["table"], game, game.rs, job["decisions"])
            return {"illegal": _first_line(exc)}
    deadline = time.monotonic() + job.get("max_seconds", 10.0)
    more = False
    while error is None and not game.is_over() and (game.current_player == CHANCE or game.current_player in bots):
        seat = game.current_player
        if (seat != CHANCE and not job.get("bots_move")) or len(added) >= job.get("max_bot_moves", 500) \
                or time.monotonic() > deadline:
            more = True
            break
        if seat == CHANCE:
            agent = ChanceAgent(agent_seed(job["seed"], f"chance:{len(game.log)}"))
        else:
            agent = _bot(bots[seat], agent_seed(job["seed"], f"{seat}:{len(game.log)}"))
        try:
            chosen = agent.choose(game) if seat == CHANCE else agent.choose(game, seat)
        except Exception as exc:  # an agent that cannot decide stops the game with its reason
            error = f"the bot in seat P{seat} could not decide: {_first_line(exc)}"
            break
        try:
            take(chosen, seat)
        except IllegalAction as exc:
            error = f"the bot in seat P{seat} chose an action that is not legal: {_first_line(exc)}"
            break
    if error is None:
        _remember(job["table"], game, game.rs, list(job["decisions"]) + [[d["player"], d["action"]] for d in added])
    else:
        _games.pop(job["table"], None)
    snap = _snapshot(game, error, set(bots))
    log = None
    if game.is_over() and snap["public"]["error"] is None:
        log = _replay_log(game, job, snap["public"])
        log["open_to"] = _open_to(game, job, added)
    return {"added": added, "more": more, "snapshot": snap, "log": log}


def _bot(spec, seed):
    """The agent of a bot's spec (checked when the table was made); a search stops after BOT_THINK_SECONDS."""
    from interpreter.agents import make_agent

    head = spec.split(":", 1)[0].strip().lower()
    if head in ("mcts", "ismcts"):
        return make_agent(spec, seed, max_seconds=BOT_THINK_SECONDS)
    return make_agent(spec, seed)


def _open_to(game, job, added) -> list:
    """The seats to whom the finished game's replay log (every decision and the seed) shows nothing
    they may not know. A seat that saw every decision (its ``seen``) of a game whose every chance
    event was a decision knows the whole game already: it knew the start (the rules and no chance
    yet) and told each decision apart from the other options. A game with chance drawn from the seed
    (an older table, or one started from a save) is open to such a seat only when its final view is
    the whole state and no random event happened (the seed would tell them)."""
    from interpreter import rng as R

    seen_all = set(range(game.n))
    for d in list(job.get("decisions_seen") or []) + [x["seen"] for x in added]:
        seen_all &= set(d or ())
    if not seen_all:
        return []
    if game.chance_mode == "explicit" and not job.get("start_save"):
        return sorted(seen_all)
    if job.get("start_save") or game.rng != R.seed_state(game.seed):
        return []
    whole = _comparable(view_of(game, None))
    return [s for s in sorted(seen_all) if _comparable(view_of(game, s)) == whole]


def _comparable(view):
    """A view without the name of its viewer."""
    return dict(view, viewer=None)


def _replay_log(game, job, public) -> dict:
    """The `rulelang replay` log of a finished game (the format `rulelang play --log` writes)."""
    import hashlib as H
    import json

    return {
        "format": "rulelang-log", "version": 1,
        "rules": job["name"], "game": game.rs.name, "variants": list(job["variants"]),
        "players": game.n, "seed": game.seed, "chance": game.chance_mode, "agents": job["agents"],
        "log": [{"player": e["player"], "action": e["action"]} for e in game.log],
        "decisions": len(game.log), "end_reason": game.end_reason,
        "scores": json.loads(json.dumps(public["scores"], default=str)), "winners": list(public["winners"]),
        "final_sha256": H.sha256(game.to_json().encode("utf-8")).hexdigest(), "error": None,
    }

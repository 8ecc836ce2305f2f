"""The game side of `rulelang serve`: creating tables, taking a seat's decision, letting bots move, and
telling each seat what it may see.

The server process never runs rule code (and never imports a module a request names): every compile,
check and decision goes to a worker of a process pool (pebble.ProcessPool: each call has a time limit,
after which its worker is killed and replaced; each worker has a memory limit). There are three pools,
so that one kind of work cannot hold up another: ``moves`` (people's decisions, starting and
reloading tables), ``bots`` (the bots' decisions, in slices of at most BOT_SECONDS) and ``checks``
(the editor's checks and compiling a rule text, with a short queue: beyond it a check is refused at
once). The answers (what every seat may see, the decisions added) are kept here in memory per table,
and every decision is committed to SQLite (store.py) before it is answered as accepted. A table's
decisions are taken one at a time (a lock per table); a decision must name the decision number the
seat saw, so a stale page cannot act on a game that has moved on.

A seat is told of each decision only what it may know (``seen``, worked out in the worker: see
interpreter/who_knows.py); the others' secret choices and hidden draws are listed as "(hidden)".
"""
from __future__ import annotations

import asyncio
import collections
import json
import os
import secrets
from concurrent.futures import TimeoutError as FutureTimeout

from . import worker as W

MAX_RULE_BYTES = 1024 * 1024  # a rule text (uploaded or served) at most
MAX_SAVE_BYTES = 4 * 1024 * 1024  # a start save at most
MAX_OPEN_TABLES = 2_000  # tables being played at once; creating more is refused
MAX_IN_MEMORY = 500  # finished tables kept in memory at most (games in progress are always kept)
MAX_LOG_SHOWN = 200  # decisions a seat's page narrates (the latest)
CALL_SECONDS = 60.0  # a worker call at most (then the worker is killed)
CHECK_SECONDS = 30.0  # an editor check (or compiling a rule text) at most
CHECK_QUEUE = 4  # editor checks waiting or running at once at most; more are refused (503) at once
BOT_SECONDS = 5.0  # bots move for at most this long per worker call; then other tables get a turn
BOT_MOVES = 500  # and at most this many decisions
MAX_BOT_PLAYOUTS = 1_000  # mcts:N / ismcts:N at most (a search also stops after worker.BOT_THINK_SECONDS)
BUILT_IN_BOTS = ("random", "first", "mcts", "ismcts")  # what a request may name (and "human")
WORKER_MEMORY = 2 * 1024 ** 3  # address space of a worker (RLIMIT_AS)
MAX_SEED = 2 ** 64 - 1


class Refused(Exception):
    """A request that changes nothing: ``status`` is the HTTP status, ``message`` one line for the person."""

    def __init__(self, status: int, message: str, diagnostics=None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.diagnostics = diagnostics or []


class Served:
    """A rule file given on the command line: its path, and the game's name, player counts, variants."""

    def __init__(self, index, path, game, player_counts, variants, shown=None):
        self.index = index
        self.path = path
        self.game = game
        self.player_counts = list(player_counts)
        self.variants = list(variants)
        self.shown = shown or os.path.basename(path)  # its name as pages show it (see shown_names)

    @property
    def root(self) -> str:
        return os.path.dirname(os.path.abspath(self.path))

    def text(self) -> str:
        from rulelang.program import read_limited

        return read_limited(self.path, MAX_RULE_BYTES).decode("utf-8")


def shown_names(paths) -> list:
    """The served files' names as the pages show them: relative to the folder that holds them all
    (never the server's absolute paths)."""
    folders = [os.path.dirname(os.path.abspath(p)) for p in paths]
    try:
        common = os.path.commonpath(folders) if folders else ""
    except ValueError:  # (different drives)
        common = ""
    return [os.path.relpath(os.path.abspath(p), common) if common else os.path.basename(p) for p in paths]


class Live:
    """A table in memory: what is stored, plus the latest snapshot of every seat's view."""

    def __init__(self, row):
        self.id = row["id"]
        self.row = row
        self.decisions = row["decisions"]
        self.status = row["status"]
        self.error = row["error"]
        self.snapshot = None
        self.replay_log = None
        self.version = 0
        self.json_cache = {}
        self.lock = asyncio.Lock()
        self.changed = asyncio.Condition()

    def job(self, new=None, bots_move=False) -> dict:
        r = self.row
        seats = r["seats"]
        return {"table": self.id, "text": r["rules"]["text"], "name": r["rules"]["name"], "root": r["rules"]["root"],
                "variants": r["variants"], "players": r["players"], "seed": r["seed"], "start_save": r["start_save"],
                "chance": r.get("chance") or "sampled",
                "decisions": [[d["player"], d["action"]] for d in self.decisions],
                "decisions_seen": [d.get("seen") for d in self.decisions], "new": new, "bots_move": bots_move,
                "bots": {s["seat"]: s["agent"] for s in seats if s["agent"] != "human"},
                "agents": [s["agent"] for s in seats], "max_seconds": BOT_SECONDS, "max_bot_moves": BOT_MOVES}


class Tables:
    """``agents``: the bot specs the server's own configuration adds to the built-in ones (``rulelang
    serve --agent module:Class``); a request may name only those and the built-in bots."""

    def __init__(self, store, served, workers: int = 2, memory: int = WORKER_MEMORY, call_seconds: float = CALL_SECONDS,
                 agents=(), check_seconds: float = CHECK_SECONDS):
        self.store = store
        self.served = served
        self.workers = workers
        self.memory = memory
        self.call_seconds = call_seconds
        self.check_seconds = check_seconds
        self.agents = tuple(agents)
        self.live = collections.OrderedDict()  # table id -> Live, the most recently used last
        self.loading = {}
        self.pools = {}
        self.checks_waiting = 0
        self.background = set()

    @property
    def pool(self):
        return self.pools.get("moves")

    # ------------------------------------------------------------------ the worker pools
    def start(self) -> None:
        import multiprocessing

        import pebble

        context = multiprocessing.get_context("spawn")
        for name, size in (("moves", self.workers), ("bots", self.workers), ("checks", 1)):
            self.pools[name] = pebble.ProcessPool(max_workers=size, initializer=W.limit_memory,
                                                  initargs=(self.memory,), context=context)

    def resume_all(self) -> None:
        """Bring every unfinished table back (bots whose turn it is move again)."""
        for table_id in self.store.tables_with_status("playing"):
            self._spawn(self._load(table_id))

    def stop(self) -> None:
        for pool in self.pools.values():
            pool.stop()
        for pool in self.pools.values():
            pool.join(timeout=10)
        self.pools = {}

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def call(self, fn, *args, seconds=None, pool="moves"):
        """``fn(*args)`` in a worker of ``pool``; a one-line ``Refused`` when it overruns or its worker dies."""
        import pebble

        future = self.pools[pool].schedule(fn, args, timeout=seconds or self.call_seconds)
        try:
            return await asyncio.wrap_future(future)
        except FutureTimeout:
            raise Refused(503, f"the rules took longer than {seconds or self.call_seconds:.0f} seconds: stopped") from None
        except pebble.ProcessExpired as exc:
            raise Refused(503, f"the worker running the rules stopped ({_why(exc)}); "
                               "the rules may need more memory than the server allows") from None
        except MemoryError:
            raise Refused(503, "the rules need more memory than the server allows") from None
        except Exception as exc:  # a fault of the server's own code in the worker: one line, never a 500 page
            import traceback

            traceback.print_exception(exc)
            raise Refused(503, f"the worker running the rules failed ({type(exc).__name__}: "
                               f"{W._first_line(exc)[:200]}); nothing changed") from None

    # ------------------------------------------------------------------ rules
    def source(self, file=None, text=None):
        """(sha, name, root, text) of a served file (by index) or of an edited text based on one."""
        if not self.served:
            raise Refused(400, "this server serves no rule file")
        try:
            base = self.served[int(file or 0)]
        except (ValueError, TypeError, IndexError):
            raise Refused(400, f"there is no served rule file {file!r} (there are {len(self.served)})") from None
        if text is None:
            try:
                text = base.text()
            except Exception as exc:  # the file was removed or changed into something unreadable
                raise Refused(400, f"{base.path}: cannot read the rule file: {exc}") from None
        elif not isinstance(text, str):
            raise Refused(400, "the rule text must be a string")
        if len(text.encode("utf-8", "surrogatepass")) > MAX_RULE_BYTES:
            raise Refused(413, f"the rule text is over {MAX_RULE_BYTES // 1024} KiB")
        name = base.path
        return (W.rules_sha(text, name, base.root), name, base.root, text)

    async def compile_check(self, fn, *args):
        """``fn(*args)`` (a check or a compile of rule text) in the checks pool: its own worker and time
        limit, and a short queue, so that checks never hold up a table's decisions."""
        if self.checks_waiting >= CHECK_QUEUE:
            raise Refused(503, f"the server is checking {CHECK_QUEUE} rule texts already; try again in a moment")
        self.checks_waiting += 1
        try:
            return await self.call(fn, *args, seconds=self.check_seconds, pool="checks")
        finally:
            self.checks_waiting -= 1

    async def check(self, file=None, text=None, variants=()) -> list:
        sha, name, root, text = self.source(file, text)
        variants = _variants(variants)
        diags = await self.compile_check(W.check_text, text, name, root, variants)
        shown = self.served[int(file or 0)].shown
        for d in diags:  # the file's name as the pages show it, not the server's path
            if d.get("path") == name:
                d["path"] = shown
            if isinstance(d.get("text"), str):
                d["text"] = d["text"].replace(name, shown)
        return diags

    def agent_spec(self, spec) -> str:
        """A seat's agent as a request names it, checked without importing anything: "human", a built-in
        bot (random, first, mcts[:N], ismcts[:N] with N up to MAX_BOT_PLAYOUTS), or one of the specs the
        server's configuration adds. ``Refused(422)`` otherwise."""
        if not isinstance(spec, str):
            raise Refused(400, "seats must be a list of agent names, one per seat")
        text = spec.strip()
        low = text.lower()
        if low in ("human", "random", "first", "mcts", "ismcts"):
            return low
        head, _, arg = low.partition(":")
        if head in ("mcts", "ismcts"):
            if arg.isascii() and arg.isdigit() and len(arg) <= 9 and 1 <= int(arg) <= MAX_BOT_PLAYOUTS:
                return f"{head}:{int(arg)}"
            raise Refused(422, f"{head}:N takes from 1 to {MAX_BOT_PLAYOUTS:,} playouts per decision on this server, "
                               f"not {arg[:20]!r}")
        if text in self.agents:
            return text
        offered = ", ".join(("human",) + BUILT_IN_BOTS[:2] + ("mcts:N", "ismcts:N") + self.agents)
        raise Refused(422, f"unknown agent {text[:40]!r} (this server offers: {offered})")

    # ------------------------------------------------------------------ tables
    async def create(self, spec: dict) -> dict:
        """A new table from ``spec`` (``file`` or ``text`` + ``file``, ``players``, ``variants``, ``seed``,
        ``seats``: one agent per seat, "human" or a bot spec, ``save``: an optional start save).
        Returns the table id, the admin token and the seats with their tokens."""
        if not isinstance(spec, dict):
            raise Refused(400, "a table is described by a JSON object")
        if self.store.count_tables("playing") >= MAX_OPEN_TABLES:
            raise Refused(503, f"the server already has {MAX_OPEN_TABLES} games in progress; try later")
        rules = self.source(spec.get("file"), spec.get("text"))
        variants = _variants(spec.get("variants") or [])
        # an edited text is compiled with the editor's checks (its own worker and queue); a served file where
        # the tables' decisions are taken (its compiled rules are kept there for the table's first call)
        describe = self.compile_check if spec.get("text") is not None else self.call
        info = await describe(W.describe, rules[3], rules[1], rules[2], ())
        _errors(info)
        unknown = [v for v in variants if v not in info["variants"]]
        if unknown:
            raise Refused(422, f"{info['game']} has no variant {unknown[0]!r} "
                               f"(its variants: {', '.join(info['variants']) or 'none'})")
        if variants:
            info = await describe(W.describe, rules[3], rules[1], rules[2], variants)
            _errors(info)
        players = spec.get("players")
        if players in (None, ""):
            players = min(info["player_counts"])
        players = _whole(players, "players")
        if players not in info["player_counts"]:
            raise Refused(422, f"{info['game']} is played by {', '.join(map(str, info['player_counts']))} players, "
                               f"not {players}")
        seats = spec.get("seats") or ["human"] * players
        if not isinstance(seats, list) or not all(isinstance(s, str) for s in seats):
            raise Refused(400, "seats must be a list of agent names, one per seat")
        seats = [self.agent_spec(s) for s in seats[:players]]
        if len(seats) < players:
            seats += ["human"] * (players - len(seats))
        if "human" not in seats:
            raise Refused(422, "at least one seat must be a person's (\"human\")")
        seed = spec.get("seed")
        seed = secrets.randbits(64) if seed in (None, "") else _whole(seed, "seed")
        if not 0 <= seed <= MAX_SEED:
            raise Refused(422, "the seed is a whole number from 0 to 2^64-1")
        save = spec.get("save") or None
        if save is not None and (not isinstance(save, str) or len(save.encode("utf-8", "surrogatepass")) > MAX_SAVE_BYTES):
            raise Refused(413, f"the start save must be a text of at most {MAX_SAVE_BYTES // 1024 // 1024} MiB")
        table_id = secrets.token_urlsafe(12)
        tokens = [secrets.token_urlsafe(24) if s == "human" else None for s in seats]
        row = {"id": table_id, "rules": dict(zip(("sha", "name", "root", "text"), rules)), "game": info["game"],
               "players": players, "variants": variants, "seed": seed, "start_save": save,
               "seats": [{"seat": k, "agent": a, "token": t} for k, (a, t) in enumerate(zip(seats, tokens))],
               "decisions": [], "status": "playing", "error": None,
               "chance": "sampled" if save is not None else "explicit"}
        if save is not None:  # the game's seed is the save's (the bots are seeded from it)
            import json

            try:
                got = json.loads(save)
            except ValueError:
                raise Refused(422, "the start save is not JSON") from None
            if isinstance(got, dict) and isinstance(got.get("seed"), int) and 0 <= got["seed"] <= MAX_SEED:
                seed = row["seed"] = got["seed"]
        live = Live(row)
        answer = await self.call(W.advance, live.job())
        if "fatal" in answer:
            raise Refused(422, answer["fatal"].replace("the table cannot be resumed", "the table cannot start"))
        admin = secrets.token_urlsafe(24)
        self.store.create_table(table_id, admin, rules, info["game"], players, variants, seed, save,
                                list(zip(seats, tokens)), chance=row["chance"])
        self._take(live, answer)
        self._keep(live)
        if answer.get("more"):
            self._spawn(self._bots(live))
        return {"table": table_id, "admin": admin, "game": info["game"], "players": players,
                "seats": [{"seat": k, "agent": a, "token": t} for k, (a, t) in enumerate(zip(seats, tokens))]}

    def _take(self, live: Live, answer: dict) -> None:
        """Store what a worker call added (committed before anyone is told), and keep its snapshot."""
        added = answer["added"]
        snap = answer["snapshot"]
        pub = snap["public"]
        status = "error" if pub["error"] else "over" if pub["over"] else "playing"
        if added or status != live.status or pub["error"] != live.error:
            self.store.add_decisions(live.id, len(live.decisions) + 1, added, status, pub["error"])
        first = len(live.decisions) + 1
        live.decisions = live.decisions + [dict(d, n=first + k) for k, d in enumerate(added)]
        live.status, live.error = status, pub["error"]
        live.snapshot = snap
        live.replay_log = answer.get("log")
        live.version += 1
        self._spawn(self._notify(live))

    async def _notify(self, live: Live) -> None:
        async with live.changed:
            live.changed.notify_all()

    async def _bots(self, live: Live) -> None:
        """Let the bots go on (a worker call stops after BOT_SECONDS so that other tables get a turn)."""
        while True:
            async with live.lock:
                if live.status != "playing":
                    return
                try:
                    answer = await self.call(W.advance, live.job(bots_move=True), pool="bots")
                except Refused as exc:
                    self._fail(live, f"a bot's decision could not be made: {exc.message}")
                    return
                if "fatal" in answer:
                    self._fail(live, answer["fatal"])
                    return
                self._take(live, answer)
                if not answer.get("more"):
                    return

    def _fail(self, live: Live, message: str) -> None:
        live.status, live.error = "error", message
        self.store.set_status(live.id, "error", message)
        live.version += 1
        self._spawn(self._notify(live))

    def _keep(self, live: Live) -> None:
        """Keep the table in memory; forget the least recently used finished ones beyond MAX_IN_MEMORY
        (they are loaded again from the database when asked for)."""
        self.live[live.id] = live
        self.live.move_to_end(live.id)
        if len(self.live) > MAX_IN_MEMORY:
            for table_id in [k for k, v in self.live.items() if v.status != "playing" and not v.lock.locked()]:
                if len(self.live) <= MAX_IN_MEMORY:
                    break
                del self.live[table_id]

    async def _load(self, table_id: str):
        """The table in memory, loading it (rebuilding its game in a worker) on first use."""
        live = self.live.get(table_id)
        if live is not None and live.snapshot is not None:
            self.live.move_to_end(table_id)
            return live
        lock = self.loading.setdefault(table_id, asyncio.Lock())
        async with lock:
            live = self.live.get(table_id)
            if live is not None and (live.snapshot is not None or live.status == "error"):
                return live
            row = self.store.table(table_id)
            if row is None:
                return None
            live = Live(row)
            answer = await self.call(W.advance, live.job())  # Refused (a worker overran): nothing stored, try later
            if "fatal" in answer:
                self._fail(live, answer["fatal"])
            else:
                self._take(live, answer)
            self._keep(live)
            self.loading.pop(table_id, None)
            if answer.get("more"):
                self._spawn(self._bots(live))
            return live

    async def seat(self, token: str):
        """(live table, seat) of a person's token; ``Refused(404)`` for any other token."""
        found = self.store.table_of_token(token) if isinstance(token, str) and len(token) < 100 else None
        if found is None:
            raise Refused(404, "no such seat: the link is wrong or the table was removed")
        live = await self._load(found[0])
        return live, found[1]

    async def admin(self, token: str):
        found = self.store.table_of_admin(token) if isinstance(token, str) and len(token) < 100 else None
        if found is None:
            raise Refused(404, "no such table")
        return self.store.table(found)

    async def act(self, token: str, action, decision) -> dict:
        """Take ``action`` (an action id) for the token's seat, if ``decision`` is the number of decisions
        the seat saw. Refused (nothing changes) when stale, not the seat's turn, or not legal."""
        live, seat = await self.seat(token)
        if not isinstance(action, str) or not action or len(action) > 10_000:
            raise Refused(400, "an action is the id of one of the legal actions shown")
        decision = _whole(decision, "decision")
        self._may_act(live, seat, action, decision)  # at once, without waiting for a bot's move to end
        async with live.lock:
            self._may_act(live, seat, action, decision)  # again: the table may have moved meanwhile
            answer = await self.call(W.advance, live.job(new=[seat, action]))
            if "illegal" in answer:
                raise Refused(422, f"{answer['illegal']}; nothing changed")
            if "fatal" in answer:
                self._fail(live, answer["fatal"])
                raise Refused(409, f"the game stopped: {answer['fatal']}")
            self._take(live, answer)
            if answer.get("more"):
                self._spawn(self._bots(live))
        return self.state(live, seat)

    def _may_act(self, live: Live, seat: int, action: str, decision: int) -> None:
        """Refuse a decision that is stale, out of turn or not among the legal actions shown."""
        if live.status == "over":
            raise Refused(409, "the game is over")
        if live.status == "error" or live.snapshot is None:
            raise Refused(409, f"the game stopped: {live.error}")
        have = len(live.decisions)
        if decision != have:
            raise Refused(409, f"stale: you acted on decision {decision}, but the game is at decision {have}; "
                               "the page shows the game as it is now")
        pub = live.snapshot["public"]
        if pub["current_player"] != seat:
            raise Refused(409, "it is not your decision" + (
                f" (it is P{pub['current_player']}'s)" if pub["current_player"] >= 0 else ""))
        mine = live.snapshot["seats"][seat]
        if not mine["more_legal"] and action not in {a["id"] for a in mine["legal"]}:
            raise Refused(422, f"'{action[:200]}' is not a legal action now; nothing changed")

    def state_json(self, live: Live, seat: int) -> bytes:
        """``state()`` as JSON bytes, made once per change of the table (polls are answered from it)."""
        got = live.json_cache.get(seat)
        if got is not None and got[0] == live.version:
            return got[1]
        data = json.dumps(self.state(live, seat), separators=(",", ":")).encode("utf-8", "backslashreplace")
        live.json_cache[seat] = (live.version, data)
        return data

    def state(self, live: Live, seat: int) -> dict:
        """What the seat may see, as JSON: only its own view and its own legal actions."""
        row = live.row
        snap = live.snapshot or {"public": {"current_player": -4, "over": False, "end_reason": None, "scores": None,
                                            "winners": [], "error": live.error}, "seats": None}
        pub = snap["public"]
        mine = snap["seats"][seat] if snap["seats"] else {"view": None, "legal": [], "more_legal": 0, "boards": [],
                                                          "panels": None}
        view = mine["view"] or {}
        pending = view.get("pending") or {}
        return {
            "game": row["game"], "seat": seat, "players": row["players"], "variants": row["variants"],
            "seats": [{"seat": s["seat"], "agent": s["agent"]} for s in row["seats"]],
            "decision": len(live.decisions), "version": live.version, "status": live.status, "error": live.error,
            "current_player": pub["current_player"], "your_turn": pub["current_player"] == seat and bool(mine["legal"]),
            "prompt": pending.get("prompt", ""), "over": pub["over"], "end_reason": pub["end_reason"],
            "scores": pub["scores"], "winners": pub["winners"],
            "legal": mine["legal"], "more_legal": mine["more_legal"], "boards": mine["boards"], "view": view,
            "panels": mine.get("panels"),
            "log": seat_log(live.decisions[-MAX_LOG_SHOWN:], seat),
            "notes": view.get("notes", []),
            "log_download": pub["over"] and live.status == "over" and live.replay_log is not None
            and seat in live.replay_log.get("open_to", ()),
        }

    async def replay_log(self, token: str) -> dict:
        live, seat = await self.seat(token)
        if live.status != "over" or live.replay_log is None:
            raise Refused(409, "the game is not over yet: its log can be downloaded when it ends")
        if seat not in live.replay_log.get("open_to", ()):
            raise Refused(403, "the game's log is not offered to this seat: with its seed it would tell what this "
                               "seat may not see (hidden cards, the others' secret choices)")
        return {k: v for k, v in live.replay_log.items() if k != "open_to"}


def log_entry(d: dict, seat: int) -> dict:
    """A decision as ``seat`` may hear of it: the seat's own, and those it may know (``seen``), in full;
    of the others, who decided and the prompt they answered, nothing of the choice."""
    player = d["player"]
    seen = d.get("seen")
    knows = player == seat or (isinstance(seen, list) and seat in seen)
    prompt = d.get("prompt") or ""
    if player < 0:  # chance
        if knows:
            text = {"roll": "rolled ", "draw": "drew "}.get(prompt, "") + d["text"]
        else:
            text = {"roll": "a roll (hidden)", "draw": "an item is drawn (hidden)"}.get(prompt, "a chance event (hidden)")
        who = "chance"
    else:
        text = d["text"] if knows else f"{prompt or 'a decision'} (hidden)"
        who = f"P{player}"
    return {"n": d["n"], "player": player, "who": who, "text": text, "action": d["action"] if knows else None,
            "hidden": not knows}


def seat_log(decisions, seat: int) -> list:
    """The decisions as ``seat`` may hear of them (log_entry), a run of hidden chance events of one kind
    told as one line ("12 items are drawn (hidden)", numbered by its last decision)."""
    out = []
    run = 0
    for d in decisions:
        e = log_entry(d, seat)
        same = (out and e["hidden"] and e["player"] < 0 and out[-1]["hidden"] and out[-1]["player"] < 0
                and out[-1].get("prompt") == d.get("prompt"))
        if same:
            run += 1
            e["text"] = {"roll": f"{run} rolls (hidden)", "draw": f"{run} items are drawn (hidden)"}.get(
                d.get("prompt"), f"{run} chance events (hidden)")
            out[-1] = e
        else:
            run = 1
            out.append(e)
        e["prompt"] = d.get("prompt")
    for e in out:
        e.pop("prompt", None)
    return out


def _errors(info: dict) -> None:
    if "errors" in info:
        errors = [d for d in info["errors"] if d["severity"] == "error"] or info["errors"]
        raise Refused(422, f"the rules have errors ({errors[0]['text'].splitlines()[0]})", info["errors"])


def _variants(variants) -> list:
    if isinstance(variants, str):
        variants = [variants]
    if not isinstance(variants, (list, tuple)) or not all(isinstance(v, str) and len(v) < 200 for v in variants):
        raise Refused(400, "variants must be a list of variant names")
    return [v for v in variants if v]


def _whole(value, what) -> int:
    if isinstance(value, bool):
        raise Refused(400, f"{what} must be a whole number")
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 30:
        return int(value.strip())
    if isinstance(value, int) and abs(value) < 10 ** 30:
        return value
    raise Refused(400, f"{what} must be a whole number")


def _why(exc) -> str:
    code = getattr(exc, "exitcode", None)
    if code is not None and code < 0:
        import signal

        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}" if code is not None else "it died"

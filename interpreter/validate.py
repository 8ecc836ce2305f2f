"""`rulelang validate`: play random games, check the invariants after every decision and every chance
step, and collect **findings**: run-time rule errors, stuck positions, games past the decision bound,
invariant violations.

``validate(ruleset, path, ...) -> Report`` plays ``games`` games per player count with the random agents
of ``interpreter.simulate`` (game ``i`` with the seed ``game_seed(seed, i)``, seat ``s`` with
``agent_seed(game seed, s)``, chance by ``agent_seed(game seed, "chance")``: the very games ``rulelang
play FILE --players N --seed <game seed> --chance explicit`` plays). Chance is explicit by default, so
that every chance step is a decision of its own after which the invariants are checked.

Each distinct finding (by kind and rule-file position) is kept once, with the first game that showed it
(its players, seed, variants and the decision log up to the finding) and how many games showed it. It is
then shrunk (``interpreter.shrink``, when that module is there) and written as a replayable log file
(the format ``rulelang play --log`` writes; ``rulelang replay`` confirms the finding) and as a
ready-to-paste scenario.

Bounds: ``games`` games per player count, each stopped after ``max_decisions`` decisions; the rules run
within the ruleset's step budget, work budget and time limit between two decisions, and so does each
invariant check; the shrinker and the exhaustive mode have their own bounds (see their modules).

Nothing here knows any game.
"""
from __future__ import annotations

import inspect
import io
import os
import re
import time

import attrs

from interpreter.agents import CHANCE, AgentError, ChanceAgent, RandomAgent, agent_seed
from interpreter.errors import GameError, IllegalAction
from interpreter.simulate import game_seed

__all__ = ["Finding", "Report", "validate", "confirm", "KINDS", "CODES", "DEFAULT_GAMES", "DEFAULT_MAX_DECISIONS"]

DEFAULT_GAMES = 20  # random games per player count
DEFAULT_MAX_DECISIONS = 20_000  # decisions (chance steps included) after which a game counts as endless
MAX_FINDINGS = 100  # distinct findings kept (later ones are only counted)
MAX_SHOWN_DECISIONS = 12  # decisions of a log shown in the text output

# kind -> diagnostic code (docs/language.md "Diagnostics", docs/validate.md)
CODES = {
    "error": "E601",  # a run-time rule error (the code `check --explore` gives it too)
    "stuck": "E602",  # a position where the player to decide has no legal action
    "endless": "E603",  # a game not over after the decision bound
    "invariant": "E604",  # an invariant that does not hold (or cannot be evaluated)
}
KINDS = tuple(CODES)
WHAT = {"error": "a run-time rule error", "stuck": "a stuck position", "endless": "a game that does not end",
        "invariant": "an invariant violation"}

POSITION = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<message>.*)$", re.S)


@attrs.define
class Finding:
    kind: str  # error, stuck, endless, invariant
    code: str
    path: str
    line: int
    column: int
    message: str
    players: int
    seed: int  # the game seed: rulelang play --seed
    variants: tuple = ()
    chance: str = "explicit"
    log: list = attrs.Factory(list)  # the decisions up to the finding: [{"player", "action"}]
    invariant: str | None = None  # the invariant's name (kind "invariant")
    games: int = 1  # games that showed it
    player_counts: list = attrs.Factory(list)  # the player counts it was seen at
    shrunk: list | None = None  # the shrunk log (None: not shrunk)
    shrink_note: str = ""  # why there is no shrunk log
    log_file: str | None = None  # the replayable log written
    scenario_file: str | None = None  # the scenario text written
    scenario: str | None = None
    exhaustive: bool = False  # found by --exhaustive (no seed, no random game)
    end_column: int = 0  # where the caret under the source line ends (0: one character)

    @property
    def key(self):
        if self.kind == "invariant":
            return (self.kind, self.invariant, self.path, self.line)
        if self.kind == "endless":
            return (self.kind,)
        return (self.kind, self.path, self.line, self.column)

    @property
    def reproduction(self) -> list:
        return self.shrunk if self.shrunk is not None else self.log

    def diagnostic(self, sources=None, hint=""):
        from rulelang.diagnostics import Diagnostic

        src = (sources or {}).get(self.path)
        return Diagnostic(path=self.path, line=self.line, column=self.column, code=self.code,
                          message=self.message, hint=hint, end_line=self.line,
                          end_column=max(self.end_column, self.column + 1),
                          source_line=src.line_text(self.line) if src is not None else "")

    def to_dict(self) -> dict:
        return {
            "kind": self.kind, "code": self.code, "path": self.path, "line": self.line, "column": self.column,
            "message": self.message, "invariant": self.invariant, "players": self.players, "seed": self.seed,
            "variants": list(self.variants), "chance": self.chance, "games": self.games,
            "player_counts": list(self.player_counts), "decisions": len(self.log), "log": list(self.log),
            "shrunk": self.shrunk, "shrink_note": self.shrink_note or None, "log_file": self.log_file,
            "scenario_file": self.scenario_file, "scenario": self.scenario, "exhaustive": self.exhaustive,
        }


@attrs.define
class Report:
    path: str
    game: str
    variants: tuple
    seed: int
    games: int
    max_decisions: int
    chance: str
    findings: list = attrs.Factory(list)
    summaries: dict = attrs.Factory(dict)  # player count -> summary dict
    notes: list = attrs.Factory(list)  # features not available, findings past MAX_FINDINGS ...
    coverage: object = None  # the Coverage object (interpreter.coverage), when there is one
    exhaustive: dict = attrs.Factory(dict)  # player count -> counts of the exhaustive run
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_dict(self) -> dict:
        cov = None
        if self.coverage is not None:
            try:
                cov = self.coverage.to_json() if hasattr(self.coverage, "to_json") else self.coverage.table()
                if isinstance(cov, str):
                    import json

                    cov = json.loads(cov)
            except Exception as exc:  # noqa: BLE001 - another module's output: never lose the findings for it
                cov = {"error": f"{type(exc).__name__}: {exc}"}
        return {
            "format": "rulelang-validate", "version": 1,
            "rules": self.path, "game": self.game, "variants": list(self.variants), "seed": self.seed,
            "games": self.games, "max_decisions": self.max_decisions, "chance": self.chance,
            "ok": self.ok, "findings": [f.to_dict() for f in self.findings],
            "summaries": {str(k): v for k, v in self.summaries.items()},
            "exhaustive": {str(k): v for k, v in self.exhaustive.items()} or None,
            "coverage": cov, "notes": list(self.notes), "seconds": round(self.seconds, 3),
        }


# ------------------------------------------------------------------------------------------ one game
def _where(message, default_path):
    """(path, line, column, message without its position) of an error message ``path:line:col: text``."""
    m = POSITION.match(message)
    if m:
        return m.group("path"), int(m.group("line")), int(m.group("column")), m.group("message")
    return default_path, 1, 1, message


def _first_line(exc) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _classify(exc) -> str:
    text = str(exc)
    if isinstance(exc, AgentError) or "the game is stuck" in text or "has no legal action" in text:
        return "stuck"
    return "error"


def _invariant_end(ruleset, name, line):
    """The end column of the invariant's declaration, when it ends on the line it starts (for the caret)."""
    for d in getattr(getattr(ruleset, "program", None), "invariants", ()):
        if d.name == name:
            return d.span.end_column if d.span.end_line == line else 0
    return 0


def _header(ruleset, path):
    game = getattr(getattr(ruleset, "program", None), "game", None)
    span = getattr(game, "span", None)
    if span is not None:
        return span.path, span.line, span.column
    return path, 1, 1


def play_checked(ruleset, players, gseed, *, chance="explicit", max_decisions=DEFAULT_MAX_DECISIONS, path="",
                 variants=(), invariants=True):
    """Play one random game (the agents of ``rulelang play --seed gseed``), checking the invariants
    after setup and after every decision. Returns ``(findings, game or None, decisions)``: the findings
    of this game (the game stops at the first one), the game, and the decisions taken."""
    found = []
    base = dict(players=players, seed=gseed, variants=tuple(variants), chance=chance, player_counts=[players])

    def from_exc(exc, log):
        kind = _classify(exc)
        p, line, col, msg = _where(_first_line(exc), path)
        if kind == "stuck" and p == path and line == 1 and col == 1:
            p, line, col = _header(ruleset, path)
        return Finding(kind=kind, code=CODES[kind], path=p, line=line, column=col, message=msg, log=list(log),
                       **base)

    def broken(game):
        out = []
        for name, position, message in game.check_invariants():
            p, line, col, _ = _where(position + ": x", path)
            out.append(Finding(kind="invariant", code=CODES["invariant"], path=p, line=line, column=col,
                               message=message, invariant=name, log=[dict(e) for e in game.log],
                               end_column=_invariant_end(ruleset, name, line), **base))
        return out

    def internal(exc, log):
        # a failure of rulelang itself, not of the rules: a finding too, so that the run goes on and says so
        p, line, col = _header(ruleset, path)
        return Finding(kind="error", code=CODES["error"], path=p, line=line, column=col,
                       message=f"internal error (a bug in rulelang, not in the rules): {type(exc).__name__}: "
                               f"{_first_line(exc)}", log=list(log), **base)

    try:
        game = ruleset.new_game(players, seed=gseed, chance=chance)
    except (GameError, IllegalAction, AgentError) as exc:
        return [from_exc(exc, [])], None, 0
    except Exception as exc:  # noqa: BLE001 - see internal()
        return [internal(exc, [])], None, 0
    agents = [RandomAgent(agent_seed(gseed, s)) for s in range(players)]
    chance_agent = ChanceAgent(agent_seed(gseed, "chance"))
    check = invariants and bool(getattr(ruleset, "invariants", ()))
    if check:
        found = broken(game)
        if found:
            return found, game, 0
    applied = 0
    while not game.is_over():
        if len(game.log) >= max_decisions:
            p, line, col = _header(ruleset, path)
            where = game.prompt
            msg = (f"a random {players}-player game did not end within {max_decisions:,} decisions"
                   + (f" (it was at: {where})" if where else ""))
            found.append(Finding(kind="endless", code=CODES["endless"], path=p, line=line, column=col, message=msg,
                                 log=[dict(e) for e in game.log], **base))
            return found, game, applied
        seat = game.current_player
        try:
            agent = chance_agent if seat == CHANCE else agents[seat]
            action = agent.choose(game, seat)
            game.apply(action)
        except (GameError, IllegalAction, AgentError) as exc:
            return [from_exc(exc, [dict(e) for e in game.log])], game, applied
        except IndexError:
            exc = AgentError(f"the game is not over but its current player is {seat!r}")
            return [from_exc(exc, [dict(e) for e in game.log])], game, applied
        except Exception as exc:  # noqa: BLE001 - see internal()
            return [internal(exc, [dict(e) for e in game.log])], game, applied
        applied += 1
        if check:
            try:
                found = broken(game)
            except Exception as exc:  # noqa: BLE001 - see internal()
                return [internal(exc, [dict(e) for e in game.log])], game, applied
            if found:
                return found, game, applied
    # a finished game is scored, as play and simulate do: an error in the scoring rules is a finding too
    try:
        game.scores()
        game.winners()
    except (GameError, IllegalAction, AgentError) as exc:
        return [from_exc(exc, [dict(e) for e in game.log])], game, applied
    except Exception as exc:  # noqa: BLE001 - see internal()
        return [internal(exc, [dict(e) for e in game.log])], game, applied
    return found, game, applied


def confirm(finding, game_or_exception) -> bool:
    """Whether a replayed game (or the exception its replay raised) shows ``finding`` again: the same
    kind at the same rule-file position (for an invariant: the same invariant broken now)."""
    x = game_or_exception
    if isinstance(x, BaseException):
        if finding.kind not in ("error", "stuck") or _classify(x) != finding.kind:
            return False
        p, line, col, _ = _where(_first_line(x), finding.path)
        if p == finding.path and line == finding.line and col == finding.column:
            return True
        return finding.kind == "stuck" and (line, col) == (1, 1)  # a stuck position without a position
    if x is None:
        return False
    if finding.kind == "error" and x.is_over():  # an error of the scoring rules shows when the game is scored
        try:
            x.scores()
            x.winners()
        except Exception as exc:  # noqa: BLE001 - compared like any error below
            return confirm(finding, exc)
        return False
    if finding.kind == "invariant":
        return any(name == finding.invariant for name, _, _ in x.check_invariants())
    if finding.kind == "endless":
        return not x.is_over() and len(x.log) >= _bound(finding)
    return False


def _bound(finding) -> int:
    m = re.search(r"within ([\d,]+) decisions", finding.message)
    return int(m.group(1).replace(",", "")) if m else len(finding.log)


def replay_log(ruleset, players, seed, chance, log):
    """Replay ``log`` from a new game: the game, or the exception a decision raised. A chance entry
    the game resolved by itself (sampled chance) is compared, not applied."""
    try:
        game = ruleset.new_game(players, seed=seed, chance=chance)
        for k, entry in enumerate(log):
            if len(game.log) > k:
                if game.log[k] != entry:
                    return IllegalAction(f"the game took {game.log[k]['action']} instead of {entry['action']}")
                continue
            game.apply(entry["action"])
    except (GameError, IllegalAction, AgentError) as exc:
        return exc
    return game


# ------------------------------------------------------------------------------------------ shrinking
class _Fixed:
    """A ruleset whose new games all use one chance mode (the one the finding was found with), whatever
    the caller asks: the shrinker replays candidate logs through it."""

    def __init__(self, ruleset, chance):
        self._rs = ruleset
        self._chance = chance

    def new_game(self, players, seed=None, chance=None):
        return self._rs.new_game(players, seed=seed, chance=self._chance)

    def __getattr__(self, name):
        return getattr(self._rs, name)


def shrink(ruleset, finding):
    """Shrink the finding's log with ``interpreter.shrink.shrink_log``; sets ``finding.shrunk`` (or
    ``finding.shrink_note`` saying why not)."""
    try:
        from interpreter.shrink import shrink_log
    except ImportError:
        finding.shrink_note = "shrinking is not available (interpreter.shrink is not installed)"
        return
    if finding.exhaustive:
        return
    if finding.kind == "endless":
        # its reproduction is a game of exactly the bound's length: no decision can go, and each replay of
        # a candidate would play them all (shrinking would only spend its time bound)
        finding.shrink_note = (f"not shrunk: a game past the decision bound needs all its {len(finding.log):,} "
                               "decisions")
        return
    rs = _Fixed(ruleset, finding.chance)
    kws = {}
    try:
        if "chance" in inspect.signature(shrink_log).parameters:
            kws["chance"] = finding.chance
    except (TypeError, ValueError):
        pass
    try:
        shrunk = shrink_log(rs, finding.players, finding.seed, list(finding.variants), list(finding.log),
                            lambda x: confirm(finding, x), **kws)
    except Exception as exc:  # noqa: BLE001 - another module: a failure there must not lose the finding
        finding.shrink_note = f"the shrinker failed: {type(exc).__name__}: {_first_line(exc)}"
        return
    shrunk = [{"player": int(e["player"]), "action": str(e["action"])} for e in (shrunk or [])]
    # keep it only if it really reproduces (the written log must replay to the finding)
    if confirm(finding, replay_log(ruleset, finding.players, finding.seed, finding.chance, shrunk)):
        finding.shrunk = shrunk
    else:
        finding.shrink_note = "the shrunk log did not reproduce the finding; the full log is given"


def scenario_text(finding, index):
    """A ready-to-paste scenario for the finding (``interpreter.shrink.as_scenario``), or None."""
    try:
        from interpreter.shrink import as_scenario
    except ImportError:
        return None
    name = f"validate finding {index}: {WHAT[finding.kind]}"
    note = f"{finding.code}: {finding.message} ({finding.path}:{finding.line}:{finding.column})"
    try:
        kws = {}
        params = inspect.signature(as_scenario).parameters
        if "chance" in params:
            kws["chance"] = finding.chance
        if "variants" in params:
            kws["variants"] = tuple(finding.variants)
        return as_scenario(name, finding.players, finding.seed, finding.reproduction, note, **kws)
    except Exception as exc:  # noqa: BLE001 - another module: never lose the finding for it
        finding.shrink_note = (finding.shrink_note + "; " if finding.shrink_note else "") + \
            f"no scenario: {type(exc).__name__}: {_first_line(exc)}"
        return None


def log_record(ruleset, path, finding) -> dict:
    """The log file of a finding, in the format ``rulelang play --log`` writes, plus ``finding``
    (what ``rulelang replay`` confirms)."""
    log = finding.reproduction
    return {
        "format": "rulelang-log", "version": 1,
        "rules": path, "game": getattr(ruleset, "name", None), "variants": list(finding.variants),
        "players": finding.players, "seed": finding.seed, "chance": finding.chance,
        "agents": ["random"] * finding.players,
        "log": list(log), "decisions": len(log),
        "end_reason": None, "scores": None, "winners": [], "final_sha256": None,
        "error": f"{finding.code}: {finding.message}",
        "finding": {"kind": finding.kind, "code": finding.code, "path": finding.path, "line": finding.line,
                    "column": finding.column, "message": finding.message, "invariant": finding.invariant},
    }


def finding_from_record(data) -> Finding | None:
    """The finding a log file records (``log_record``), or None when it records none (or a bad one)."""
    f = data.get("finding")
    if not isinstance(f, dict):
        return None
    kind = f.get("kind")
    if kind not in CODES:
        return None
    try:
        return Finding(kind=kind, code=CODES[kind], path=str(f.get("path") or ""), line=int(f.get("line") or 1),
                       column=int(f.get("column") or 1), message=str(f.get("message") or ""),
                       players=int(data["players"]), seed=int(data["seed"]), log=list(data["log"]),
                       invariant=str(f["invariant"]) if f.get("invariant") is not None else None,
                       chance=str(data.get("chance") or "sampled"))
    except (TypeError, ValueError, KeyError):
        return None


def write_files(ruleset, path, report, out_dir, write_json_atomic):
    """Write each finding's log (``NAME-N-CODE.log.json``) and scenario (``NAME-N-CODE.scenario.rules``)
    into ``out_dir`` (made if missing). ``write_json_atomic(path, data)`` writes a log file."""
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(path))[0] or "rules"
    for i, f in enumerate(report.findings, 1):
        if f.exhaustive and not f.log:
            continue
        base = os.path.join(out_dir, f"{stem}-{i}-{f.code}")
        write_json_atomic(base + ".log.json", log_record(ruleset, path, f))
        f.log_file = base + ".log.json"
        if f.scenario:
            _write_text_atomic(base + ".scenario.rules", f.scenario if f.scenario.endswith("\n") else f.scenario + "\n")
            f.scenario_file = base + ".scenario.rules"


def _write_text_atomic(target, text):
    from rulelang.atomic import write_text_atomic

    write_text_atomic(target, text)


# ------------------------------------------------------------------------------------------ exhaustive
def exhaustive(ruleset, path, players, max_states, variants=(), report=None):
    """Run ``interpreter.exhaustive.explore_all`` for one player count, checking the invariants in every
    distinct state. Returns its counts (a dict), or None when the module is not there."""
    try:
        from interpreter.exhaustive import explore_all
    except ImportError:
        return None

    def check(game):
        out = []
        for name, position, message in game.check_invariants():
            p, line, col, _ = _where(position + ": x", path)
            out.append({"kind": "invariant", "code": CODES["invariant"], "path": p, "line": line, "column": col,
                        "message": message, "invariant": name, "log": [dict(e) for e in game.log]})
        return out

    result = explore_all(ruleset, players, max_states, check)
    counts = {k: v for k, v in dict(result).items() if k != "findings"}
    if report is not None:
        for raw in (result.get("findings") or []):
            report_add(report, _exhaustive_finding(raw, ruleset, path, players, variants))
    return _plain(counts)


def _plain(value):
    import json

    return json.loads(json.dumps(value, default=str))


def _exhaustive_finding(raw, ruleset, path, players, variants):
    """A finding of the exhaustive mode (a dict as ``check`` makes them, or whatever explore_all reports)."""
    if isinstance(raw, Finding):
        return raw
    if isinstance(raw, BaseException):
        raw = {"message": _first_line(raw), "kind": _classify(raw)}
    if not isinstance(raw, dict):
        raw = {"message": str(raw)}
    message = str(raw.get("message") or raw.get("error") or "a finding")
    kind = raw.get("kind") if raw.get("kind") in CODES else ("stuck" if "stuck" in message or "no legal" in message
                                                             else "error")
    p, line, col = raw.get("path"), raw.get("line"), raw.get("column")
    if not (p and isinstance(line, int) and isinstance(col, int)):
        position = raw.get("position")
        p, line, col, message2 = _where((position + ": " + message) if position else message, path)
        message = message2 if not position else message
        if kind == "stuck" and (line, col) == (1, 1):
            p, line, col = _header(ruleset, path)
    log = raw.get("log") or []
    log = [{"player": int(e["player"]), "action": str(e["action"])} for e in log if isinstance(e, dict)]
    return Finding(kind=kind, code=CODES[kind], path=p, line=line, column=col, message=message, players=players,
                   seed=0, variants=tuple(variants), chance="explicit", log=log, invariant=raw.get("invariant"),
                   player_counts=[players], exhaustive=True)


# ------------------------------------------------------------------------------------------ the run
def report_add(report, finding):
    """Add a finding to the report, or count it with the same one found before (keeping the shortest example)."""
    for k, f in enumerate(report.findings):
        if f.key == finding.key:
            counts = f.player_counts + [n for n in finding.player_counts if n not in f.player_counts]
            if len(finding.log) < len(f.log) and not f.exhaustive and not finding.exhaustive:
                # the shortest example is the easiest to read (and to shrink)
                finding = attrs.evolve(finding, games=f.games + 1, player_counts=counts)
                report.findings[k] = finding
            else:
                f.games += 1
                f.player_counts = counts
            return
    if len(report.findings) >= MAX_FINDINGS:
        if not any(n.startswith("more findings") for n in report.notes):
            report.notes.append(f"more findings than {MAX_FINDINGS}: only the first {MAX_FINDINGS} are listed")
        return
    report.findings.append(finding)


def validate(ruleset, path, *, players=None, games=DEFAULT_GAMES, seed=0, variants=(),
             max_decisions=DEFAULT_MAX_DECISIONS, chance="explicit", progress=None, coverage=True,
             shrinking=True, exhaustive_states=None) -> Report:
    """Validate ``ruleset`` (loaded from ``path`` with ``variants``): ``games`` random games for each
    player count in ``players`` (default: every allowed count). ``progress(done, total)`` is called as
    games finish. ``coverage``: play the instrumented ruleset of ``interpreter.coverage`` (when there is
    one) and keep its tables. ``exhaustive_states``: also enumerate every reachable state, up to that
    many, per player count (``interpreter.exhaustive``). Returns a ``Report``."""
    start = time.perf_counter()
    counts = list(players) if players else list(ruleset.player_counts)
    report = Report(path=path, game=getattr(ruleset, "name", ""), variants=tuple(variants), seed=seed, games=games,
                    max_decisions=max_decisions, chance=chance)
    play_rs = ruleset
    if coverage:
        try:
            from interpreter.coverage import Coverage
        except ImportError:
            report.notes.append("rulebook coverage is not available (interpreter.coverage is not installed)")
        else:
            try:
                cov = Coverage(ruleset)
                play_rs = cov.ruleset
            except Exception as exc:  # noqa: BLE001 - another module: validate without it rather than not at all
                report.notes.append(f"rulebook coverage failed: {type(exc).__name__}: {_first_line(exc)}")
            else:
                report.coverage = cov
    total = games * len(counts)
    done = 0
    if progress is not None:
        progress(0, total)
    for n in counts:
        summary = {"games": games, "completed": 0, "with_findings": 0, "decisions": 0, "mean_decisions": 0.0,
                   "ended_by": {}, "findings": {k: 0 for k in KINDS}}
        for i in range(games):
            gseed = game_seed(seed, i)
            found, game, _ = play_checked(play_rs, n, gseed, chance=chance, max_decisions=max_decisions, path=path,
                                          variants=variants)
            decisions = len(game.log) if game is not None else 0
            summary["decisions"] += decisions
            if found:
                summary["with_findings"] += 1
                for f in found:
                    summary["findings"][f.kind] += 1
                    report_add(report, f)
            elif game is not None and game.is_over():
                summary["completed"] += 1
                reason = game.end_reason or "(none)"
                summary["ended_by"][reason] = summary["ended_by"].get(reason, 0) + 1
            done += 1
            if progress is not None:
                progress(done, total)
        summary["mean_decisions"] = round(summary["decisions"] / games, 1) if games else 0.0
        report.summaries[n] = summary
    if exhaustive_states:
        for n in counts:
            try:
                got = exhaustive(ruleset, path, n, exhaustive_states, variants, report)
            except Exception as exc:  # noqa: BLE001 - another module: keep the findings of the random games
                report.notes.append(f"exhaustive mode failed with {n} players: {type(exc).__name__}: "
                                    f"{_first_line(exc)}")
                continue
            if got is None:
                report.notes.append("exhaustive mode is not available (interpreter.exhaustive is not installed)")
                break
            report.exhaustive[n] = got
    for i, f in enumerate(report.findings, 1):
        if shrinking and not f.exhaustive:
            shrink(ruleset, f)
        f.scenario = scenario_text(f, i) if f.log or f.shrunk else None
    report.seconds = time.perf_counter() - start
    return report


# ------------------------------------------------------------------------------------------ text output
def _shell(word) -> str:
    import shlex

    return shlex.quote(str(word))


def replay_hint(report, finding, variants=()) -> str:
    """How to see the finding again, in words and commands."""
    from rulelang.diagnostics import printable

    rules = _shell(report.path)
    parts = []
    if finding.exhaustive:
        parts.append(f"found by --exhaustive with {_players_text(finding.players)}")
    else:
        counts = ", ".join(str(n) for n in sorted(finding.player_counts))
        parts.append(f"found in {finding.games} random game{'s' if finding.games != 1 else ''} "
                     f"({counts} players); the first: {_players_text(finding.players)}, seed {finding.seed}, "
                     f"{len(finding.log)} decision{'s' if len(finding.log) != 1 else ''}")
    if finding.log_file:
        size = (f" (shrunk to {len(finding.shrunk)} of {len(finding.log)} decisions)"
                if finding.shrunk is not None else "")
        parts.append(f"replay it: rulelang replay {rules} {_shell(finding.log_file)}{size}")
    if not finding.exhaustive:
        opt = "".join(f" --variant {_shell(v)}" for v in variants)
        parts.append(f"play it again: rulelang play {rules} --players {finding.players} --seed {finding.seed} "
                     f"--chance {finding.chance}{opt}")
    return printable("; ".join(parts))


def _count_text(v) -> str:
    from rulelang.diagnostics import printable

    if isinstance(v, bool) or v is None:
        return {True: "true", False: "false", None: "none"}[v]
    if isinstance(v, int):
        return f"{v:,}"
    return printable(v)[:200]


def _players_text(n) -> str:
    return f"{n} player{'' if n == 1 else 's'}"


def _decisions_text(log) -> str:
    from interpreter.agents import seat_name
    from rulelang.diagnostics import printable

    # the last decisions: those that lead to the finding
    shown = [f"{seat_name(e['player'])} {e['action']}" for e in log[-MAX_SHOWN_DECISIONS:]]
    before = len(log) - len(shown)
    return printable((f"({before} earlier) ... " if before > 0 else "") + ", ".join(shown))


class _AsciiText(io.StringIO):
    """Text for rich to write into, which it takes for a file that holds ASCII only: it draws the tables'
    boxes with +, - and | (the cells keep their text)."""

    encoding = "ascii"


def coverage_lines(coverage) -> list:
    """The coverage tables (``coverage.render(console)``) as plain lines of text, for a pipe or a file: no
    colours or other control codes, boxes drawn in ASCII, every table as wide as its cells need (no cell
    wrapped to fit an assumed width), no trailing blanks."""
    from rich.console import Console

    buf = _AsciiText()
    console = Console(file=buf, width=100_000, color_system=None, force_terminal=False, force_jupyter=False,
                      force_interactive=False, no_color=True, highlight=False, soft_wrap=False, emoji=False,
                      legacy_windows=False)
    coverage.render(console)
    return [_CONTROL.sub("", line).rstrip() for line in buf.getvalue().splitlines()]


_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]")


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def print_report(report, sources, echo, variants=(), plain=None):
    """The report as text: each finding as a diagnostic with how to replay it, the per-count summaries,
    the exhaustive counts, the coverage table, notes, and a last line with the totals. ``plain``: the
    coverage table without colours and in ASCII (default: when stdout is not a terminal)."""
    from rulelang.diagnostics import printable

    for f in report.findings:
        echo(f.diagnostic(sources, hint=replay_hint(report, f, variants)).render())
        log = f.reproduction
        if log:
            echo(f"  decisions{' (shrunk)' if f.shrunk is not None else ''}: {_decisions_text(log)}")
        if f.scenario_file:
            echo(f"  scenario: {printable(f.scenario_file)}")
        if f.shrink_note:
            echo(f"  note: {printable(f.shrink_note)}")
    for n, s in report.summaries.items():
        ends = ", ".join(f"{printable(k)} {v}" for k, v in sorted(s["ended_by"].items()))
        echo(f"{_players_text(n)}: {s['games']} games, {s['completed']} completed, {s['with_findings']} with findings, "
             f"mean {s['mean_decisions']} decisions" + (f"; ended by: {ends}" if ends else ""))
    for n, c in report.exhaustive.items():
        echo(f"exhaustive, {_players_text(n)}: " + ", ".join(f"{printable(k)} {_count_text(v)}" for k, v in c.items()))
    if report.coverage is not None:
        import sys

        try:
            if plain is None:
                plain = not _isatty(sys.stdout)
            if plain:
                for line in coverage_lines(report.coverage):
                    echo(line)
            else:  # a terminal: rich's tables, as wide as the terminal
                from rich.console import Console

                report.coverage.render(Console(file=sys.stdout, highlight=False, soft_wrap=False))
        except Exception as exc:  # noqa: BLE001 - another module: the findings matter more
            echo(f"note: the coverage table could not be printed: {type(exc).__name__}: {_first_line(exc)}")
    for note in report.notes:
        echo(f"note: {printable(note)}")
    played = sum(s["games"] for s in report.summaries.values())
    kinds = {}
    for f in report.findings:
        kinds[f.kind] = kinds.get(f.kind, 0) + 1
    what = ", ".join(f"{v} {WHAT[k].split(' ', 1)[1]}{'s' if v != 1 else ''}" for k, v in kinds.items())
    n = len(report.findings)
    if n:
        echo(f"{printable(report.path)}: {n} finding{'s' if n != 1 else ''} ({what}) in {played} games")
    else:
        echo(f"{printable(report.path)}: no findings in {played} games")

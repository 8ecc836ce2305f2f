"""Side-by-side statistics of two runs of games: ``compare(rows_a, rows_b) -> dict``.

The input is two lists of per-game rows as ``interpreter.runner.run_games`` returns them (side A,
side B), normally played with the same seeds.  The output is a plain, JSON-ready dict (what
``rulelang compare --json`` prints and what ``interpreter.report`` draws):

* per side (``sides[0]``, ``sides[1]``): games, completion, games cut by the decision limit, other
  errors, the distribution of decisions, rounds, score margins (winner minus runner-up: the best
  score minus the second best) and branching factor (``describe``: mean, sd, quantiles and a
  histogram whose bins both sides share), win rate per seat and draw rate with 95% Wilson score
  intervals, end reasons, and how often each action is taken per game;
* ``tests``: every difference B - A with its test of significance and a 95% interval.  When the
  two runs pair up game by game (the same seeds in the same order) the tests are paired: the exact
  McNemar test for rates, the Wilcoxon signed-rank test (Pratt's treatment of zero differences) for
  per-game quantities, and the intervals are bootstrap (BCa) intervals of the mean paired
  difference; otherwise Fisher's exact test and the Mann-Whitney U test, with Newcombe's hybrid
  score interval for rates and a two-sample bootstrap interval for means.  The distribution of end
  reasons is compared with a chi-square test of homogeneity (unpaired in either case).  With many
  tests some small p-values are chance, so the p-values are adjusted by the Benjamini-Hochberg
  procedure (``q``) within two families of the tests made: the action frequencies, and all the
  other measures (a measure on which the sides agree game by game is not a test); a difference is
  ``significant`` only when ``q < alpha`` (0.05 by default);
* ``restricted`` (with ``restrict=ACTION``, when side B is side A's games with seat ``i % players``
  of game ``i`` denied ACTION): how much the restricted seat loses, the action's weight in the
  game after Jaffe et al., "Evaluating competitive game balance with restricted play" (AIIDE 2012):
  its win rate with the restriction against the same seats' win rate in the same games without it.

A game counts as a draw when its row says ``draw`` (no winner, or every seat shares the victory);
a draw is never a win.  A seat that shares a victory with some (not all) others counts a win.
Rates other than completion are over the completed games.

numpy and scipy (the ``analysis`` extra) are imported when a function needs them; without them
``MissingAnalysis`` (an ``ImportError``) says what to install.
"""
from __future__ import annotations

import math
import warnings

__all__ = [
    "ALPHA",
    "FORMAT",
    "MissingAnalysis",
    "compare",
    "describe",
    "histogram_edges",
    "margin",
    "newcombe_interval",
    "paired",
    "require_analysis",
    "side_summary",
    "wilson_interval",
]

FORMAT = "rulelang-compare"
VERSION = 1
ALPHA = 0.05
CONFIDENCE = 0.95
MAX_BINS = 40
LIMIT_MESSAGE = "the game did not end within"  # how a game cut by the decision limit is reported


class MissingAnalysis(ImportError):
    """numpy/scipy are not installed."""


def require_analysis():
    """``(numpy, scipy.stats)``, or ``MissingAnalysis`` with a one-line message."""
    try:
        import numpy
        from scipy import stats
    except ImportError as exc:
        raise MissingAnalysis(f"comparing runs needs numpy and scipy ({exc.name or exc} is not installed): "
                              f"pip install 'rulelang[analysis]'") from None
    return numpy, stats


def _num(x):
    """A finite float, or None (NaN and infinities are not JSON)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


# --- intervals --------------------------------------------------------------------------------

def wilson_interval(successes: int, n: int, confidence: float = CONFIDENCE) -> tuple:
    """The Wilson score interval ``(low, high)`` of ``successes`` out of ``n`` (``(None, None)``
    when ``n == 0``)."""
    if n <= 0:
        return None, None
    _, stats = require_analysis()
    ci = stats.binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return _num(ci.low), _num(ci.high)


def newcombe_interval(k1: int, n1: int, k2: int, n2: int, confidence: float = CONFIDENCE) -> tuple:
    """An interval for the difference of two proportions ``k2/n2 - k1/n1``: Newcombe's hybrid score
    interval (method 10 of Newcombe 1998), built from the two Wilson intervals.  It treats the
    samples as independent, which is conservative when they are positively correlated (games with
    the same seeds).  ``(None, None)`` when a side is empty."""
    if n1 <= 0 or n2 <= 0:
        return None, None
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1, confidence)
    l2, u2 = wilson_interval(k2, n2, confidence)
    d = p2 - p1
    return (_num(d - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)),
            _num(d + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)))


BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20120101  # fixed: the same rows give the same intervals
BOOTSTRAP_MAX = 5000  # values per sample above which the normal interval is used (time and memory stay bounded)


def bootstrap_interval(b_values, a_values=None, confidence: float = CONFIDENCE) -> tuple:
    """A bootstrap interval (BCa, scipy) of a mean difference: of the mean of ``b_values`` (paired
    differences B - A) when ``a_values`` is None, else of ``mean(b_values) - mean(a_values)`` (two
    independent samples).  Seeded, so the same values give the same interval; ``(None, None)``
    without values; a single point when the values do not vary.  Above ``BOOTSTRAP_MAX`` values a
    sample mean is as good as normal: the normal interval (mean difference +- z * standard error)."""
    np, stats = require_analysis()
    ys = np.asarray([float(v) for v in b_values])
    xs = None if a_values is None else np.asarray([float(v) for v in a_values])
    if len(ys) == 0 or (xs is not None and len(xs) == 0):
        return None, None
    if xs is None:
        data, point = (ys,), float(ys.mean())

        def statistic(y, axis):
            return y.mean(axis=axis)
        constant = bool(np.all(ys == ys[0]))
    else:
        data, point = (ys, xs), float(ys.mean() - xs.mean())

        def statistic(y, x, axis):
            return y.mean(axis=axis) - x.mean(axis=axis)
        constant = bool(np.all(ys == ys[0]) and np.all(xs == xs[0]))
    if constant or min(len(d) for d in data) < 2:
        return _num(point), _num(point)
    if max(len(d) for d in data) > BOOTSTRAP_MAX:
        se = math.sqrt(sum(float(d.var(ddof=1)) / len(d) for d in data))
        z = float(stats.norm.ppf(0.5 + confidence / 2))
        return _num(point - z * se), _num(point + z * se)
    for method in ("BCa", "percentile"):  # BCa is undefined on some skewed samples: percentile then
        ci = _quiet(stats.bootstrap, data, statistic, n_resamples=BOOTSTRAP_RESAMPLES, vectorized=True,
                    batch=max(1, 2_000_000 // max(len(d) for d in data)),  # at most ~16 MB of resamples at once
                    confidence_level=confidence, method=method,
                    rng=np.random.default_rng(BOOTSTRAP_SEED)).confidence_interval
        low, high = _num(ci.low), _num(ci.high)
        if low is not None and high is not None:
            return low, high
    return None, None


def _rate(k: int, n: int) -> dict:
    low, high = wilson_interval(k, n)
    return {"count": int(k), "n": int(n), "rate": (k / n) if n else None, "low": low, "high": high}


# --- distributions ----------------------------------------------------------------------------

def histogram_edges(*samples) -> list:
    """Bin edges shared by the samples: one bin per whole number when the values are whole numbers
    spanning at most ``MAX_BINS``, else equal bins, as many as the Rice rule asks (2 n^(1/3)), at
    least 10 and at most ``MAX_BINS`` (a fixed count: an outlying score cannot ask for millions of
    bins)."""
    np, _ = require_analysis()
    values = [float(v) for s in samples for v in s if v is not None and math.isfinite(float(v))]
    if not values:
        return []
    lo, hi = min(values), max(values)
    if all(v == int(v) for v in values) and hi - lo + 1 <= MAX_BINS:
        return [lo - 0.5 + i for i in range(int(hi - lo) + 2)]
    bins = min(MAX_BINS, max(10, math.ceil(2 * len(values) ** (1 / 3))))
    return [float(e) for e in np.histogram_bin_edges(np.asarray(values), bins=bins)]


def describe(values, edges=None) -> dict | None:
    """Count, mean, sample standard deviation, minimum, quartiles, maximum and a histogram (counts
    in ``edges``, or in bins of their own) of ``values``; ``None`` for no values."""
    np, _ = require_analysis()
    values = [float(v) for v in values if v is not None]
    if not values:
        return None
    data = np.asarray(values)
    if edges is None:
        edges = histogram_edges(values)
    counts, _ = np.histogram(data, bins=np.asarray(edges))
    q25, median, q75 = np.percentile(data, [25, 50, 75])
    return {
        "n": len(values),
        "mean": _num(data.mean()),
        "sd": _num(data.std(ddof=1)) if len(values) > 1 else None,
        "min": _num(data.min()),
        "q25": _num(q25),
        "median": _num(median),
        "q75": _num(q75),
        "max": _num(data.max()),
        "histogram": {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts]},
    }


def margin(row) -> float | None:
    """The score margin of a completed game: the best score minus the second best (0 for a tie at
    the top); ``None`` without scores or with fewer than two seats."""
    scores = row.get("scores")
    if not row.get("ok") or not scores or len(scores) < 2:
        return None
    try:
        top = sorted((float(s) for s in scores), reverse=True)
    except (TypeError, ValueError):
        return None
    return top[0] - top[1]


# --- one side ---------------------------------------------------------------------------------

def _cut(row, max_decisions) -> bool:
    if row.get("ok"):
        return False
    if max_decisions is not None and (row.get("decisions") or 0) >= max_decisions:
        return True
    return str(row.get("error") or "").startswith(LIMIT_MESSAGE)


def _won(row, seat: int) -> bool:
    return bool(row.get("ok")) and not row.get("draw") and seat in (row.get("winners") or [])


def _players(rows_a, rows_b, players):
    if players is not None:
        return int(players)
    counts = {r.get("players") for r in list(rows_a) + list(rows_b) if r.get("players") is not None}
    if not counts:
        counts = {len(r["scores"]) for r in list(rows_a) + list(rows_b) if r.get("scores")}
    if len(counts) != 1:
        raise ValueError("the rows do not agree on the number of players: give players=")
    return counts.pop()


def side_summary(rows, players: int, *, label: str = "", max_decisions=None, edges=None) -> dict:
    """The measures of one side (see the module's doc).  ``edges`` maps a measure (``decisions``,
    ``rounds``, ``margin``, ``branching``) to its histogram edges (shared with the other side)."""
    edges = edges or {}
    rows = sorted(rows, key=lambda r: r["index"])
    done = [r for r in rows if r.get("ok")]
    n = len(done)
    cut = sum(1 for r in rows if _cut(r, max_decisions))
    reasons: dict = {}
    for r in done:
        reason = "(none)" if r.get("end_reason") is None else str(r["end_reason"])
        reasons[reason] = reasons.get(reason, 0) + 1
    names = sorted({a for r in done for a in (r.get("actions") or {})})
    actions = {}
    for a in names:
        counts = [int((r.get("actions") or {}).get(a, 0)) for r in done]
        actions[a] = {"per_game": sum(counts) / n, "games_with": sum(1 for c in counts if c)}
    errors = [r for r in rows if not r.get("ok")]
    examples = []
    for r in errors:
        if len(examples) >= 5:
            break
        if all(e["message"] != r.get("error") for e in examples):
            examples.append({"game": r["index"], "seed": r.get("seed"), "message": r.get("error")})
    return {
        "label": label,
        "games": len(rows),
        "completed": n,
        "completion": _rate(n, len(rows)),
        "cut_by_limit": _rate(cut, len(rows)),
        "errors": len(errors) - cut,
        "internal_errors": sum(1 for r in rows if r.get("internal")),
        "error_examples": examples,
        "decisions": describe([r.get("decisions") for r in done], edges.get("decisions")),
        "rounds": describe([r.get("rounds") for r in done], edges.get("rounds")),
        "margin": describe([margin(r) for r in done], edges.get("margin")),
        "branching": describe([r.get("branching") for r in done], edges.get("branching")),
        "wins": [dict(_rate(sum(1 for r in done if _won(r, s)), n), seat=s) for s in range(players)],
        "draws": _rate(sum(1 for r in done if r.get("draw")), n),
        "end_reasons": reasons,
        "actions": actions,
    }


# --- tests ------------------------------------------------------------------------------------

def paired(rows_a, rows_b) -> bool:
    """Whether the two runs pair up game by game: the same number of games, the same seeds in the
    same order."""
    a = sorted(rows_a, key=lambda r: r["index"])
    b = sorted(rows_b, key=lambda r: r["index"])
    return len(a) == len(b) and all(x.get("seed") == y.get("seed") for x, y in zip(a, b))


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# A test is ``(name, p, tested)``: ``tested`` is False when the data leave nothing to test (the two
# sides agree game by game, or nothing varies): p is then 1.0 (or None without data) and the test is
# left out of the multiple-comparisons correction.  Which tests are left out depends only on
# whether anything differs, not on the direction (an independent filter, Bourgon et al. 2010).

def _rate_test(pairs, a_values, b_values) -> tuple:
    """The test of a difference of two rates of 0/1 values: exact McNemar on pairs, else Fisher."""
    _, stats = require_analysis()
    if pairs is not None:
        only_a = sum(1 for x, y in pairs if x and not y)
        only_b = sum(1 for x, y in pairs if y and not x)
        if only_a + only_b == 0:
            return "McNemar exact", (1.0 if pairs else None), False
        return "McNemar exact", _num(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue), True
    ka, na, kb, nb = sum(a_values), len(a_values), sum(b_values), len(b_values)
    if not na or not nb:
        return "Fisher exact", None, False
    if ka + kb in (0, na + nb):
        return "Fisher exact", 1.0, False
    return "Fisher exact", _num(_quiet(stats.fisher_exact, [[ka, na - ka], [kb, nb - kb]]).pvalue), True


def _location_test(pairs, a_values, b_values) -> tuple:
    """The test of a difference of per-game quantities: Wilcoxon signed-rank on pairs (Pratt's
    treatment of zero differences), else Mann-Whitney U."""
    _, stats = require_analysis()
    if pairs is not None:
        diffs = [y - x for x, y in pairs]
        if not diffs:
            return "Wilcoxon signed-rank", None, False
        if all(d == 0 for d in diffs):
            return "Wilcoxon signed-rank", 1.0, False
        return "Wilcoxon signed-rank", _num(_quiet(stats.wilcoxon, diffs, zero_method="pratt").pvalue), True
    if not a_values or not b_values:
        return "Mann-Whitney U", None, False
    if len(set(a_values) | set(b_values)) == 1:
        return "Mann-Whitney U", 1.0, False
    return ("Mann-Whitney U",
            _num(_quiet(stats.mannwhitneyu, a_values, b_values, alternative="two-sided").pvalue), True)


def _distribution_test(counts_a: dict, counts_b: dict) -> tuple:
    """Chi-square test of homogeneity of two distributions of counts."""
    _, stats = require_analysis()
    keys = [k for k in sorted(set(counts_a) | set(counts_b)) if counts_a.get(k, 0) + counts_b.get(k, 0)]
    if not sum(counts_a.values()) or not sum(counts_b.values()):
        return "chi-square", None, False
    if len(keys) < 2:
        return "chi-square", 1.0, False
    table = [[counts_a.get(k, 0) for k in keys], [counts_b.get(k, 0) for k in keys]]
    return "chi-square", _num(_quiet(stats.chi2_contingency, table).pvalue), True


def family(test) -> str:
    """The family of hypotheses a test is corrected with: ``"actions"`` for the action frequencies
    (there may be hundreds), ``"game"`` for everything else (completion, length, margins, branching,
    draws, win rates, end reasons, restricted play), so that many actions do not drown the
    game's headline measures."""
    return "actions" if test.get("group") == "actions" else "game"


def _adjust(tests, alpha) -> None:
    """Benjamini-Hochberg ``q`` within each family over the tests that were made (``tested``), and
    ``significant``."""
    np, stats = require_analysis()
    for t in tests:
        t["q"] = t["p"]
    for name in sorted({family(t) for t in tests}):
        made = [t for t in tests if family(t) == name and t["tested"] and t["p"] is not None]
        if made:
            qs = stats.false_discovery_control(np.asarray([t["p"] for t in made]), method="bh")
            for t, q in zip(made, qs):
                t["q"] = _num(min(1.0, q))
    for t in tests:
        t["significant"] = bool(t["tested"] and t["q"] is not None and t["q"] < alpha)


def _by_index(rows):
    return {r["index"]: r for r in rows}


def compare(rows_a, rows_b, *, labels=("A", "B"), players=None, alpha: float = ALPHA, max_decisions=None,
            restrict=None) -> dict:
    """Compare side A's games with side B's (see the module's doc for the result)."""
    require_analysis()
    rows_a = sorted(rows_a, key=lambda r: r["index"])
    rows_b = sorted(rows_b, key=lambda r: r["index"])
    players = _players(rows_a, rows_b, players)
    is_paired = paired(rows_a, rows_b)
    done_a = [r for r in rows_a if r.get("ok")]
    done_b = [r for r in rows_b if r.get("ok")]
    measures = {
        "decisions": lambda r: r.get("decisions"),
        "rounds": lambda r: r.get("rounds"),
        "margin": margin,
        "branching": lambda r: r.get("branching"),
    }
    edges = {name: histogram_edges([f(r) for r in done_a], [f(r) for r in done_b])
             for name, f in measures.items()}
    side_a = side_summary(rows_a, players, label=labels[0], max_decisions=max_decisions, edges=edges)
    side_b = side_summary(rows_b, players, label=labels[1], max_decisions=max_decisions, edges=edges)

    pairs_all = list(zip(rows_a, rows_b)) if is_paired else None
    pairs_done = [(x, y) for x, y in pairs_all if x.get("ok") and y.get("ok")] if is_paired else None
    tests = []

    def add(measure, group, label, a, b, result, low=None, high=None):
        test, p, tested = result
        tests.append(dict(measure=measure, group=group, label=label, a=_num(a), b=_num(b),
                          difference=None if a is None or b is None else _num(b - a), low=low, high=high,
                          test=test, p=p, tested=tested))

    def rate(measure, group, label, rows_x, rows_y, pairs, f):
        xs, ys = [bool(f(r)) for r in rows_x], [bool(f(r)) for r in rows_y]
        if pairs is not None:
            pairs = [(bool(f(x)), bool(f(y))) for x, y in pairs]
            low, high = bootstrap_interval([int(y) - int(x) for x, y in pairs])
        else:
            low, high = newcombe_interval(sum(xs), len(xs), sum(ys), len(ys))
        a = sum(xs) / len(xs) if xs else None
        b = sum(ys) / len(ys) if ys else None
        add(measure, group, label, a, b, _rate_test(pairs, xs, ys), low, high)

    def location(measure, group, label, f):
        xs = [float(f(r)) for r in done_a if f(r) is not None]
        ys = [float(f(r)) for r in done_b if f(r) is not None]
        pairs = None
        if is_paired:
            pairs = [(float(f(x)), float(f(y))) for x, y in pairs_done if f(x) is not None and f(y) is not None]
            low, high = bootstrap_interval([y - x for x, y in pairs])
        else:
            low, high = bootstrap_interval(ys, xs)
        add(measure, group, label, sum(xs) / len(xs) if xs else None, sum(ys) / len(ys) if ys else None,
            _location_test(pairs, xs, ys), low, high)

    rate("completion", "overview", "completed", rows_a, rows_b, pairs_all, lambda r: bool(r.get("ok")))
    rate("cut_by_limit", "overview", "cut by the decision limit", rows_a, rows_b, pairs_all,
         lambda r: _cut(r, max_decisions))
    rate("draws", "overview", "draws", done_a, done_b, pairs_done, lambda r: bool(r.get("draw")))
    for name in measures:
        if side_a[name] is not None or side_b[name] is not None:
            location(name, "overview", {"decisions": "decisions per game", "rounds": "rounds per game",
                                        "margin": "score margin", "branching": "branching factor"}[name],
                     measures[name])
    for s in range(players):
        rate(f"wins[{s}]", "wins", f"P{s} win rate", done_a, done_b, pairs_done, lambda r, s=s: _won(r, s))
    add("end_reasons", "end_reasons", "end reasons", None, None,
        _distribution_test(side_a["end_reasons"], side_b["end_reasons"]))
    for name in sorted(set(side_a["actions"]) | set(side_b["actions"])):
        location(f"actions[{name}]", "actions", f"{name} per game",
                 lambda r, name=name: int((r.get("actions") or {}).get(name, 0)))

    restricted = None
    if restrict is not None:
        restricted = _restricted(rows_a, rows_b, players, restrict, is_paired)
        add("restricted", "restricted", f"win rate of the seat without {restrict}", restricted["unrestricted"]["rate"],
            restricted["restricted"]["rate"], (restricted["test"], restricted["p"], restricted["tested"]),
            low=None if restricted["high"] is None else -restricted["high"],
            high=None if restricted["low"] is None else -restricted["low"])

    _adjust(tests, alpha)
    if restricted is not None:
        t = tests[-1]
        restricted.update(q=t["q"], significant=t["significant"])
    flagged = sum(1 for t in tests if t["significant"])
    made = {name: sum(1 for t in tests if t["tested"] and family(t) == name) for name in ("game", "actions")}
    notes = []
    if not is_paired:
        notes.append("the two runs do not have the same seeds in the same order: the tests are unpaired")
    for side in (side_a, side_b):
        if side["completed"] < side["games"]:
            notes.append(f"{side['label']}: {side['games'] - side['completed']} of {side['games']} games did not "
                         f"complete; the measures other than completion are over the completed games")
    return {
        "format": FORMAT,
        "version": VERSION,
        "alpha": alpha,
        "confidence": CONFIDENCE,
        "correction": "Benjamini-Hochberg",
        "paired": is_paired,
        "players": players,
        "sides": [side_a, side_b],
        "tests": tests,
        "tests_made": made,
        "significant": flagged,
        "restricted": restricted,
        "notes": notes,
    }


def _restricted(rows_a, rows_b, players, action, is_paired) -> dict:
    """The restricted seat's wins in B against the same seats' wins in A (Jaffe et al. 2012)."""
    a_by = _by_index(rows_a)
    won_a, won_b, pairs = [], [], []
    for rb in rows_b:
        seat = rb.get("restricted_seat")
        if seat is None or not rb.get("ok"):
            continue
        won_b.append(_won(rb, seat))
        ra = a_by.get(rb["index"])
        if ra is not None and ra.get("ok") and ra.get("seed") == rb.get("seed"):
            pairs.append((_won(ra, seat), _won(rb, seat)))
    if is_paired:
        won_a = [x for x, _ in pairs]
        won_b = [y for _, y in pairs]
    else:  # the seat that would have been restricted in each game of A
        won_a = [_won(r, r["index"] % players) for r in rows_a if r.get("ok")]
    test, p, tested = _rate_test(pairs if is_paired else None, won_a, won_b)
    ka, na, kb, nb = sum(won_a), len(won_a), sum(won_b), len(won_b)
    if is_paired:  # the interval of the weight: unrestricted minus restricted
        low, high = bootstrap_interval([int(x) - int(y) for x, y in pairs])
    else:
        low, high = newcombe_interval(kb, nb, ka, na)
    taken = [int((r.get("actions") or {}).get(action, 0)) for r in rows_a if r.get("ok")]
    unrestricted, restricted = _rate(ka, na), _rate(kb, nb)
    loss = None if unrestricted["rate"] is None or restricted["rate"] is None \
        else unrestricted["rate"] - restricted["rate"]
    return {
        "action": action,
        "games": nb,
        "fair_share": 1 / players,
        "unrestricted": unrestricted,
        "restricted": restricted,
        "weight": _num(loss),
        "low": low,
        "high": high,
        "test": test,
        "p": p,
        "tested": tested,
        "taken_per_game": (sum(taken) / len(taken)) if taken else None,
        "games_with_action": sum(1 for t in taken if t),
    }

"""The comparison as tables (for the terminal and the page) and as a self-contained HTML report.

``tables(comparison)`` turns the dict of ``interpreter.compare.compare`` into titled tables of text
(the terminal summary of ``rulelang compare`` prints them with rich; the report shows the same).
``render_html(comparison, title=..., command=...) -> str`` is the report: those tables and plotly
figures (decisions, rounds, score margins and branching factor as histograms, win rates with
their 95% intervals, end reasons, actions per game, restricted play), with plotly's JavaScript
inlined, so the one file opens offline, with no network.  ``write_report(comparison, path, ...)``
writes it atomically.  Every text from the rules (names, end reasons, actions) is escaped.

plotly (the ``analysis`` extra) is imported by ``render_html`` only.
"""
from __future__ import annotations

import html
import json

from rulelang.atomic import write_text_atomic

from interpreter.compare import MissingAnalysis

__all__ = ["tables", "render_html", "write_report", "MAX_ACTIONS", "COLOURS"]

MAX_ACTIONS = 20  # actions shown per table and figure (the most significant, then the most frequent)
COLOURS = ("#4C78A8", "#F58518")  # side A, side B


# --- text -------------------------------------------------------------------------------------

def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _interval(d) -> str:
    if d is None or d.get("rate") is None:
        return "-"
    return f"{_pct(d['rate'])} [{_pct(d['low'])}, {_pct(d['high'])}]"


def _num(x, digits=2) -> str:
    if x is None:
        return "-"
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.{digits}f}"


def _signed(x, pct=False) -> str:
    if x is None:
        return "-"
    return ("+" if x > 0 else "") + (_pct(x) if pct else _num(x))


def _p(t) -> str:
    if t is None or t.get("p") is None or not t.get("tested", True):
        return "-"
    return "<0.001" if t["p"] < 0.001 else f"{t['p']:.3f}"


def _dist(d) -> str:
    if d is None:
        return "-"
    sd = "" if d["sd"] is None else f" ± {_num(d['sd'], 1)}"
    return f"{_num(d['mean'], 1)}{sd} (median {_num(d['median'], 1)})"


def _test_by_measure(comparison) -> dict:
    return {t["measure"]: t for t in comparison["tests"]}


def _mark(t) -> str:
    return "*" if t is not None and t.get("significant") else ""


def _difference(t, pct=False) -> str:
    """The difference B - A, its mark and its 95% interval."""
    if t is None or t.get("difference") is None:
        return "-"
    text = _signed(t["difference"], pct) + _mark(t)
    if t.get("low") is not None and t.get("high") is not None and t["low"] != t["high"]:
        text += f" [{_signed(t['low'], pct)}, {_signed(t['high'], pct)}]"
    return text


def tables(comparison, max_actions: int = MAX_ACTIONS) -> list:
    """``[{"key", "title", "columns", "rows", "significant"}]``: each table's cells as text;
    ``significant`` is a list of booleans, one per row (the row shows a significant difference)."""
    a, b = comparison["sides"]
    tests = _test_by_measure(comparison)
    la, lb = a["label"], b["label"]
    out = []

    rows, marks = [], []

    def row(label, va, vb, measure, pct=False):
        t = tests.get(measure)
        rows.append([label, va, vb, _difference(t, pct), _p(t)])
        marks.append(bool(t and t["significant"]))

    rows.append(["games", str(a["games"]), str(b["games"]), "", ""])
    marks.append(False)
    row("completed", _interval(a["completion"]), _interval(b["completion"]), "completion", pct=True)
    row("cut by the decision limit", _interval(a["cut_by_limit"]), _interval(b["cut_by_limit"]), "cut_by_limit",
        pct=True)
    if a["errors"] or b["errors"]:
        rows.append(["other errors", str(a["errors"]), str(b["errors"]), "", ""])
        marks.append(False)
    row("draws", _interval(a["draws"]), _interval(b["draws"]), "draws", pct=True)
    for key, label in (("decisions", "decisions per game"), ("rounds", "rounds per game"),
                       ("margin", "score margin (1st - 2nd)"), ("branching", "branching factor")):
        if a[key] is not None or b[key] is not None:
            row(label, _dist(a[key]), _dist(b[key]), key)
    out.append({"key": "overview", "title": "overview (rates with 95% intervals; per-game values: mean ± sd)",
                "columns": ["measure", la, lb, "B - A [95%]", "p"],
                "rows": rows, "significant": marks})

    rows, marks = [], []
    for s, (wa, wb) in enumerate(zip(a["wins"], b["wins"])):
        t = tests.get(f"wins[{s}]")
        rows.append([f"P{s}", _interval(wa), _interval(wb), _difference(t, True), _p(t)])
        marks.append(bool(t and t["significant"]))
    out.append({"key": "wins", "title": "win rate by seat (95% interval; a draw is no win)",
                "columns": ["seat", la, lb, "B - A [95%]", "p"], "rows": rows, "significant": marks})

    t = tests.get("end_reasons")
    reasons = sorted(set(a["end_reasons"]) | set(b["end_reasons"]),
                     key=lambda r: -(a["end_reasons"].get(r, 0) + b["end_reasons"].get(r, 0)))
    rows = []
    for r in reasons:
        ca, cb = a["end_reasons"].get(r, 0), b["end_reasons"].get(r, 0)
        sa = ca / a["completed"] if a["completed"] else None
        sb = cb / b["completed"] if b["completed"] else None
        rows.append([r, f"{ca} ({_pct(sa)})", f"{cb} ({_pct(sb)})",
                     "-" if sa is None or sb is None else _signed(sb - sa, True), ""])
    rows.append([f"all ends ({t['test']})" if t else "all ends", "", "", _mark(t), _p(t)])
    out.append({"key": "end_reasons", "title": "ended by (completed games)", "columns": ["end", la, lb, "B - A", "p"],
                "rows": rows, "significant": [bool(t and t["significant"])] * len(rows)})

    names = _top_actions(comparison, max_actions)
    rows, marks = [], []
    for name in names:
        t = tests.get(f"actions[{name}]")
        pa = a["actions"].get(name, {}).get("per_game", 0.0)
        pb = b["actions"].get(name, {}).get("per_game", 0.0)
        rows.append([name, _num(pa), _num(pb), _difference(t), _p(t)])
        marks.append(bool(t and t["significant"]))
    total = len(set(a["actions"]) | set(b["actions"]))
    more = f", {len(names)} of {total}" if total > len(names) else ""
    out.append({"key": "actions", "title": f"actions per game (mean{more})", "columns": ["action", la, lb, "B - A [95%]", "p"],
                "rows": rows, "significant": marks})

    r = comparison.get("restricted")
    if r:
        t = tests.get("restricted")
        rows = [
            ["games with the restriction", str(r["games"])],
            [f"{r['action']} taken per game, unrestricted (all seats)", _num(r["taken_per_game"])],
            ["win rate of those seats, unrestricted", _interval(r["unrestricted"])],
            [f"win rate of the seat without {r['action']}", _interval(r["restricted"])],
            ["fair share (1 / players)", _pct(r["fair_share"])],
            ["weight of the action (win rate lost)",
             f"{_signed(r['weight'], True)} [{_signed(r['low'], True)}, {_signed(r['high'], True)}]{_mark(t)}"],
            ["test", f"{r['test']}, p {_p(t)}"],
        ]
        out.append({"key": "restricted", "title": f"restricted play: a seat never takes {r['action']}",
                    "columns": ["measure", "value"], "rows": rows,
                    "significant": [False] * 5 + [bool(t and t["significant"])] + [False]})
    return out


def _top_actions(comparison, limit) -> list:
    a, b = comparison["sides"]
    tests = _test_by_measure(comparison)
    names = set(a["actions"]) | set(b["actions"])

    def key(name):
        t = tests.get(f"actions[{name}]")
        freq = max(a["actions"].get(name, {}).get("per_game", 0.0), b["actions"].get(name, {}).get("per_game", 0.0))
        return (not (t and t["significant"]), -freq, name)

    return sorted(names, key=key)[:limit]


def footnote(comparison) -> str:
    """What the marks and the tests mean, in one paragraph."""
    made = comparison.get("tests_made") or {}
    n = f"{made.get('game', 0)} tests of the game's measures and {made.get('actions', 0)} of the action frequencies"
    if comparison["paired"]:
        how = ("paired by seed: exact McNemar for rates, Wilcoxon signed-rank for per-game values, "
               "bootstrap intervals of the paired differences")
    else:
        how = ("unpaired: Fisher's exact test for rates, Mann-Whitney U for per-game values, Newcombe's "
               "interval for rates and bootstrap intervals for means")
    return (f"* significant at {comparison['alpha']:g} after the Benjamini-Hochberg correction, within {n} "
            f"({comparison['significant']} flagged). Tests are {how}; end reasons by a chi-square test. "
            f"Rates show 95% Wilson score intervals. A p of '-': the sides agree game by game (nothing to test).")


# --- figures ----------------------------------------------------------------------------------

def _plotly():
    try:
        import plotly.graph_objects as go
        import plotly.io as pio
        import plotly.offline
    except ImportError as exc:
        raise MissingAnalysis(f"the HTML report needs plotly ({exc.name or exc} is not installed): "
                              f"pip install 'rulelang[analysis]'") from None
    return go, pio, plotly.offline


def _layout(title, xtitle, ytitle, **extra):
    layout = dict(title=dict(text=title), template="plotly_white", barmode="group", height=380,
                  margin=dict(l=60, r=20, t=50, b=60), legend=dict(orientation="h", y=-0.2),
                  xaxis=dict(title=dict(text=xtitle)), yaxis=dict(title=dict(text=ytitle)))
    layout.update(extra)
    return layout


def _histogram(go, comparison, key, title, xtitle):
    sides = comparison["sides"]
    if all(s[key] is None for s in sides):
        return None
    fig = go.Figure()
    for side, colour in zip(sides, COLOURS):
        d = side[key]
        if d is None:
            continue
        edges, counts = d["histogram"]["edges"], d["histogram"]["counts"]
        total = sum(counts) or 1
        centres = [(lo + hi) / 2 for lo, hi in zip(edges, edges[1:])]
        widths = [hi - lo for lo, hi in zip(edges, edges[1:])]
        fig.add_trace(go.Bar(x=centres, y=[100 * c / total for c in counts], width=widths, name=side["label"],
                             marker_color=colour, opacity=0.6, customdata=counts,
                             hovertemplate="%{x}: %{customdata} games (%{y:.1f}%)<extra>" + _h(side["label"]) + "</extra>"))
    fig.update_layout(**_layout(title, xtitle, "% of completed games", barmode="overlay", bargap=0))
    return fig


def _rate_bars(go, comparison):
    sides = comparison["sides"]
    players = comparison["players"]
    labels = [f"P{s}" for s in range(players)] + ["draw"]
    fig = go.Figure()
    for side, colour in zip(sides, COLOURS):
        items = list(side["wins"]) + [side["draws"]]
        y = [100 * (d["rate"] or 0) for d in items]
        plus = [0 if d["high"] is None else 100 * (d["high"] - d["rate"]) for d in items]
        minus = [0 if d["low"] is None else 100 * (d["rate"] - d["low"]) for d in items]
        fig.add_trace(go.Bar(x=labels, y=y, name=side["label"], marker_color=colour,
                             error_y=dict(type="data", array=plus, arrayminus=minus, visible=True),
                             hovertemplate="%{x}: %{y:.1f}%<extra>" + _h(side["label"]) + "</extra>"))
    fig.update_layout(**_layout("win rate by seat, and draws (95% Wilson intervals)", "seat",
                                "% of completed games"))
    return fig


def _end_bars(go, comparison):
    sides = comparison["sides"]
    reasons = sorted(set(sides[0]["end_reasons"]) | set(sides[1]["end_reasons"]))
    if not reasons:
        return None
    fig = go.Figure()
    for side, colour in zip(sides, COLOURS):
        n = side["completed"] or 1
        fig.add_trace(go.Bar(x=reasons, y=[100 * side["end_reasons"].get(r, 0) / n for r in reasons],
                             name=side["label"], marker_color=colour,
                             hovertemplate="%{x}: %{y:.1f}%<extra>" + _h(side["label"]) + "</extra>"))
    fig.update_layout(**_layout("end reasons", "end", "% of completed games"))
    return fig


def _action_bars(go, comparison):
    sides = comparison["sides"]
    names = _top_actions(comparison, MAX_ACTIONS)
    if not names:
        return None
    names = list(reversed(names))  # the first at the top of a horizontal chart
    fig = go.Figure()
    for side, colour in zip(sides, COLOURS):
        fig.add_trace(go.Bar(y=names, x=[side["actions"].get(a, {}).get("per_game", 0.0) for a in names],
                             orientation="h", name=side["label"], marker_color=colour,
                             hovertemplate="%{y}: %{x:.2f} per game<extra>" + _h(side["label"]) + "</extra>"))
    fig.update_layout(**_layout("actions per game (mean)", "times taken per game", "",
                                height=max(380, 40 + 28 * len(names)), margin=dict(l=160, r=20, t=50, b=60)))
    return fig


def _restricted_bars(go, comparison):
    r = comparison.get("restricted")
    if not r:
        return None
    items = [("unrestricted", r["unrestricted"], COLOURS[0]), (f"without {r['action']}", r["restricted"], COLOURS[1])]
    fig = go.Figure()
    for label, d, colour in items:
        rate = d["rate"] or 0
        fig.add_trace(go.Bar(x=[label], y=[100 * rate], name=label, marker_color=colour,
                             error_y=dict(type="data", visible=True,
                                          array=[0 if d["high"] is None else 100 * (d["high"] - rate)],
                                          arrayminus=[0 if d["low"] is None else 100 * (rate - d["low"])])))
    fig.add_hline(y=100 * r["fair_share"], line_dash="dot", annotation_text="fair share")
    fig.update_layout(**_layout(f"restricted play: win rate of the seat that never takes {r['action']}", "",
                                "% of completed games"))
    return fig


def figures(comparison) -> list:
    """``[(key, plotly Figure)]``, the report's plots (only those with data)."""
    go, _, _ = _plotly()
    made = [
        ("decisions", _histogram(go, comparison, "decisions", "decisions per game", "player decisions")),
        ("rounds", _histogram(go, comparison, "rounds", "rounds per game", "rounds")),
        ("wins", _rate_bars(go, comparison)),
        ("margin", _histogram(go, comparison, "margin", "score margin: winner minus runner-up",
                              "best score minus second best")),
        ("end_reasons", _end_bars(go, comparison)),
        ("actions", _action_bars(go, comparison)),
        ("branching", _histogram(go, comparison, "branching", "branching factor (mean legal actions per decision)",
                                 "legal actions")),
        ("restricted", _restricted_bars(go, comparison)),
    ]
    return [(k, f) for k, f in made if f is not None]


# --- the page ---------------------------------------------------------------------------------

def _h(text) -> str:
    return html.escape(str(text), quote=True)


def _script_json(text: str) -> str:
    """JSON that is safe inside a <script> element."""
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.92em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3em 0.8em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
tr.significant td { font-weight: 600; background: #fff4d6; }
.rl-plot { width: 100%; min-height: 380px; }
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
@media (max-width: 900px) { .grid { grid-template-columns: 1fr; } }
.note, .meta { color: #555; font-size: 0.9em; }
code { background: #f4f4f4; padding: 0.1em 0.3em; }
"""


def _table_html(t) -> str:
    head = "".join(f"<th>{_h(c)}</th>" for c in t["columns"])
    body = []
    for cells, sig in zip(t["rows"], t["significant"]):
        cls = ' class="significant"' if sig else ""
        body.append(f"<tr{cls}>" + "".join(f"<td>{_h(c)}</td>" for c in cells) + "</tr>")
    return (f'<h2>{_h(t["title"])}</h2>\n<table id="table-{_h(t["key"])}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def render_html(comparison, *, title: str | None = None, command: str | None = None) -> str:
    """The whole report as one HTML document (plotly's JavaScript inlined; nothing is fetched)."""
    _, pio, offline = _plotly()
    a, b = comparison["sides"]
    title = title or f"{a['label']} vs {b['label']}"
    figs = figures(comparison)
    plots, scripts = [], []
    for key, fig in figs:
        plots.append(f'<div class="rl-plot" id="plot-{_h(key)}"></div>')
        spec = _script_json(pio.to_json(fig, validate=True, pretty=False))
        scripts.append(f"draw({json.dumps('plot-' + key)}, {spec});")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_h(title)}</title>",
        f"<style>{CSS}</style>",
        f'<script type="text/javascript">{offline.get_plotlyjs()}</script>',
        "</head><body>",
        f"<h1>{_h(title)}</h1>",
        f'<p class="meta">{comparison["players"]} players; side A: <b>{_h(a["label"])}</b>, side B: '
        f'<b>{_h(b["label"])}</b>; {a["games"]} and {b["games"]} games'
        f'{", the same seeds" if comparison["paired"] else ""}.</p>',
    ]
    if command:
        parts.append(f'<p class="meta">made by <code>{_h(command)}</code></p>')
    for note in comparison.get("notes", ()):
        parts.append(f'<p class="note">{_h(note)}</p>')
    made = tables(comparison)
    first = [t for t in made if t["key"] in ("overview", "wins")]  # the headline numbers, then the plots
    for t in first:
        parts.append(_table_html(t))
    parts.append('<h2>plots</h2>\n<div class="grid">' + "\n".join(plots) + "</div>")
    for t in made:
        if t not in first:
            parts.append(_table_html(t))
    parts.append(f'<p class="note">{_h(footnote(comparison))}</p>')
    parts.append(
        '<script type="text/javascript">\n'
        "function draw(id, fig) {\n"
        "  Plotly.newPlot(document.getElementById(id), fig.data, fig.layout,\n"
        "                 {responsive: true, displaylogo: false});\n"
        "}\n" + "\n".join(scripts) + "\n</script>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_report(comparison, path, **kwargs) -> None:
    """``render_html`` written to ``path`` whole or not at all."""

    write_text_atomic(str(path), render_html(comparison, **kwargs))

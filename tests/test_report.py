"""The HTML report of `rulelang compare` (interpreter/report.py): its structure, that it is
self-contained and escapes what the rules say, and that real headless Chromium draws its plots
(non-zero size, no console errors, no network), with a screenshot in tests/artifacts/."""
from __future__ import annotations

import html.parser
import os
import tempfile

import pytest

pytest.importorskip("scipy")  # the `analysis` extra; CI installs it through `test`
pytest.importorskip("plotly")

import rulelang
from interpreter import report
from interpreter.compare import compare
from interpreter.runner import run_games

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KUHN = os.path.join(ROOT, "games", "examples", "kuhn_poker.rules")
ARTIFACTS = os.path.join(ROOT, "tests", "artifacts")
from tests.system_tools import CHROMIUM, require_chromium
PLOTS = ("decisions", "rounds", "wins", "margin", "end_reasons", "actions", "branching", "restricted")


@pytest.fixture(scope="module")
def comparison():
    rules = rulelang.load(KUHN)
    a = run_games(rules, players=2, games=80, seed=3)
    b = run_games(rules, players=2, games=80, seed=3, restrict="bet")
    return compare(a, b, labels=("unrestricted", "without bet"), players=2, restrict="bet")


@pytest.fixture(scope="module")
def page(comparison, tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "report.html"
    report.write_report(comparison, path, title="Kuhn Poker: unrestricted vs without bet",
                        command="rulelang compare kuhn_poker.rules --restrict bet")
    return path


class _Parse(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.ids, self.scripts, self.urls, self._in_script = [], set(), [], [], False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for key in ("src", "href"):
            if attrs.get(key):
                self.urls.append(attrs[key])
        self._in_script = tag == "script"
        if tag == "script":
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def test_report_structure(page):
    text = page.read_text(encoding="utf-8")
    p = _Parse()
    p.feed(text)
    assert text.startswith("<!DOCTYPE html>")
    for key in PLOTS:
        assert f"plot-{key}" in p.ids
    for key in ("overview", "wins", "end_reasons", "actions", "restricted"):
        assert f"table-{key}" in p.ids
    assert not p.urls, p.urls  # self-contained: no scripts, styles or images from elsewhere
    assert any("Plotly" in s and len(s) > 1_000_000 for s in p.scripts)  # plotly.js inlined
    assert "Benjamini-Hochberg" in text and "rulelang compare kuhn_poker.rules --restrict bet" in text


def test_figures_only_with_data(comparison):
    keys = [k for k, _ in report.figures(comparison)]
    assert keys == list(PLOTS)  # Kuhn poker's flow has turns: its rows count rounds
    no_rounds = dict(comparison, sides=[dict(s, rounds=None) for s in comparison["sides"]])
    assert "rounds" not in [k for k, _ in report.figures(no_rounds)]
    plain = dict(comparison, restricted=None)
    assert "restricted" not in [k for k, _ in report.figures(plain)]


def test_text_from_the_rules_is_escaped(comparison):
    evil = "</script><img src=x onerror=alert(1)>"
    c = dict(comparison)
    c["sides"] = [dict(s, label=evil, end_reasons={evil: 3}) for s in comparison["sides"]]
    text = report.render_html(c, title=evil, command=evil)
    assert evil not in text
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in text  # shown as text


def test_tables_mark_only_significant_rows(comparison):
    for t in report.tables(comparison):
        assert len(t["rows"]) == len(t["significant"])
        for cells, sig in zip(t["rows"], t["significant"]):
            assert len(cells) == len(t["columns"])
    by = {t["key"]: t for t in report.tables(comparison)}
    tests = {t["measure"]: t for t in comparison["tests"]}
    wins_marked = [s for s in by["wins"]["significant"]]
    assert wins_marked == [tests[f"wins[{s}]"]["significant"] for s in range(2)]


# --- in a real browser -----------------------------------------------------------------------

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def _browser_or_skip():
    """Playwright and the system's Chromium; on CI (CI=true) their absence is a failure."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("playwright is not installed (it is in the `test` extra)")
        pytest.skip("playwright is not installed")
    require_chromium()
    return sync_playwright


def test_chromium_draws_every_plot(page):
    sync_playwright = _browser_or_skip()
    errors, requests = [], []
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS, viewport={"width": 1200, "height": 900})
        try:
            tab = browser.new_page()
            tab.on("console", lambda m: m.type == "error" and errors.append(m.text))
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.on("request", lambda r: requests.append(r.url))
            tab.goto(page.as_uri())
            tab.wait_for_function(
                "document.querySelectorAll('.rl-plot').length > 0 && "
                "[...document.querySelectorAll('.rl-plot')].every(d => d.querySelector('svg.main-svg .trace'))",
                timeout=30_000)
            sizes = {}
            for key in PLOTS:
                box = tab.query_selector(f"#plot-{key} svg.main-svg").bounding_box()
                sizes[key] = (box["width"], box["height"]) if box else (0, 0)
                # the plot has drawn its data: bars with a shape (a path with a non-empty outline)
                bars = tab.eval_on_selector_all(f"#plot-{key} .trace.bars path",
                                                "ps => ps.filter(p => (p.getAttribute('d') || '').length > 3).length")
                assert bars > 0, key
            os.makedirs(ARTIFACTS, exist_ok=True)
            shot = os.path.join(ARTIFACTS, "compare-report.png")
            tab.screenshot(path=shot, full_page=True)
        finally:
            browser.close()
    assert all(w > 100 and h > 100 for w, h in sizes.values()), sizes
    assert not errors, errors
    assert all(u.startswith(("file:", "data:", "blob:", "about:")) for u in requests), requests
    with open(shot, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"

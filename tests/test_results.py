"""Per-game rows written to files (interpreter/results.py, issue 11): JSON Lines, CSV and Parquet each
round-trip into pandas and DuckDB (the issue: "so pandas/DuckDB users load them directly"); the
format comes from the extension or --format; files are written whole or not at all; Parquet without
pyarrow, an unknown extension and --format without --out are one-line errors."""
from __future__ import annotations

import json
import math
import os
import sys

import pytest
from click.testing import CliRunner

import rulelang
from interpreter.results import MissingDependency, OutputError, output_format, write_rows
from interpreter.runner import ROW_KEYS, run_games
from rulelang.cli import cli

pd = pytest.importorskip("pandas")  # guards for machines without rulelang[analysis]; CI installs it
duckdb = pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KUHN = os.path.join(ROOT, "games", "examples", "kuhn_poker.rules")


@pytest.fixture(scope="module")
def rows():
    """Kuhn poker rows of every shape: a restricted seat, two action names, and games cut by the
    decision limit (no scores, an error message, no end reason)."""
    rs = rulelang.load(KUHN)
    out = run_games(rs, players=2, games=40, seed=3, restrict="bet", max_decisions=2)
    assert any(r["ok"] for r in out) and any(not r["ok"] for r in out)
    assert any(r["restricted_seat"] == 1 for r in out) and any(len(r["actions"]) == 2 for r in out)
    return out


def _plain(value):
    """A value as pandas gives it back, in plain Python (NaN and NA as None, numpy scalars and arrays
    as Python numbers and lists, a Parquet map as a dict)."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is pd.NA:
        return None
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list) and value and all(isinstance(x, tuple) and len(x) == 2 for x in value):
        return {k: _plain(v) for k, v in value}
    if isinstance(value, list):
        return [_plain(x) for x in value]
    return value


def _records(frame) -> list:
    return [{k: _plain(v) for k, v in rec.items()} for rec in frame.to_dict("records")]


def _normalise(rec: dict) -> dict:
    """A row read back from CSV: JSON text of the nested fields parsed (the documented encoding)."""
    out = dict(rec)
    for key in ("variants", "agents", "winners", "scores", "actions"):
        if isinstance(out[key], str):
            out[key] = json.loads(out[key])
    for key in ("restricted_seat", "rounds"):  # whole numbers in a column with empty cells: floats in pandas
        if isinstance(out[key], float):
            out[key] = int(out[key])
    return out


@pytest.mark.parametrize("ext", ["jsonl", "csv", "parquet"])
def test_rows_round_trip_into_pandas(rows, tmp_path, ext):
    path = tmp_path / f"rows.{ext}"
    assert write_rows(rows, path) == len(rows)
    if ext == "jsonl":
        frame = pd.read_json(path, lines=True, dtype=False)
    elif ext == "csv":
        frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    else:
        frame = pd.read_parquet(path)
    assert list(frame.columns) == list(ROW_KEYS)
    back = [_normalise(r) for r in _records(frame)]
    for got, want in zip(back, rows):
        if ext == "parquet" and got["actions"] == [] and want["actions"] == {}:
            got["actions"] = {}  # an empty map comes back as an empty list of pairs
        assert got == want, (got, want)
    assert len(back) == len(rows)


@pytest.mark.parametrize("ext", ["jsonl", "csv", "parquet"])
def test_rows_load_into_duckdb(rows, tmp_path, ext):
    path = str(tmp_path / f"rows.{ext}")
    write_rows(rows, path)
    reader = {"jsonl": "read_json_auto", "csv": "read_csv_auto", "parquet": "read_parquet"}[ext]
    con = duckdb.connect()
    n, decisions, failed, draws = con.execute(
        f"select count(*), sum(decisions), count(*) filter (where not ok), count(*) filter (where draw) "
        f"from {reader}(?)", [path]).fetchone()
    assert n == len(rows) and decisions == sum(r["decisions"] for r in rows)
    assert failed == sum(1 for r in rows if not r["ok"]) and draws == sum(1 for r in rows if r["draw"])
    seats = con.execute(f"select restricted_seat from {reader}(?) order by index", [path]).fetchall()
    assert [s for (s,) in seats] == [r["restricted_seat"] for r in rows]
    errors = con.execute(f"select error from {reader}(?) where not ok order by index", [path]).fetchall()
    assert [e for (e,) in errors] == [r["error"] for r in rows if not r["ok"]]
    # the action counts, from each format's nesting: a map (Parquet), a struct (JSON), JSON text (CSV)
    if ext == "parquet":
        sql = f"select coalesce(actions['pass'], 0) from {reader}(?) order by index"
    elif ext == "jsonl":
        sql = f"select coalesce(actions.pass, 0) from {reader}(?) order by index"
    else:
        sql = f"select coalesce(cast(json_extract(actions, '$.pass') as bigint), 0) from {reader}(?) order by index"
    passes = [p for (p,) in con.execute(sql, [path]).fetchall()]
    assert passes == [r["actions"].get("pass", 0) for r in rows]


def test_format_by_extension_or_by_name(tmp_path):
    assert output_format("a.jsonl") == "jsonl" and output_format("a.NDJSON") == "jsonl"
    assert output_format("a.csv") == "csv" and output_format("a.parquet") == "parquet"
    assert output_format("a.txt", "csv") == "csv" and output_format("a.csv", "jsonl") == "jsonl"
    with pytest.raises(OutputError, match="cannot tell the format"):
        output_format("a.txt")
    with pytest.raises(OutputError, match="unknown output format 'xml'"):
        output_format("a.csv", "xml")


def test_parquet_without_pyarrow_is_a_one_line_error(tmp_path, monkeypatch, rows):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(MissingDependency, match=r"pip install 'rulelang\[analysis\]'"):
        write_rows(rows, tmp_path / "rows.parquet")
    assert not (tmp_path / "rows.parquet").exists()
    r = CliRunner().invoke(cli, ["simulate", KUHN, "-n", "3", "--out", str(tmp_path / "rows.parquet")])
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and "needs pyarrow" in r.stderr


@pytest.mark.parametrize("ext", ["jsonl", "csv", "parquet"])
def test_a_failed_write_leaves_the_old_file_and_no_partial_one(tmp_path, rows, ext):
    path = tmp_path / f"rows.{ext}"
    path.write_text("the old file\n")

    def broken():
        yield from rows[:5]
        raise RuntimeError("the run stopped")

    with pytest.raises(RuntimeError):
        write_rows(broken(), path)
    assert path.read_text() == "the old file\n"
    assert os.listdir(tmp_path) == [path.name]


def test_cli_out_writes_rows_and_checks_its_options(tmp_path):
    out = tmp_path / "rows.csv"
    r = CliRunner().invoke(cli, ["simulate", KUHN, "-n", "12", "--seed", "2", "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    frame = pd.read_csv(out)
    assert len(frame) == 12 and list(frame["seed"]) == [2 * 1_000_003 + i for i in range(12)]
    assert int(frame["decisions"].sum()) == round(summary["mean_decisions"] * 12)
    assert int(frame["draw"].sum()) == summary["draws"]
    r = CliRunner().invoke(cli, ["simulate", KUHN, "-n", "4", "--out", str(tmp_path / "rows.data"),
                                 "--format", "jsonl"])
    assert r.exit_code == 0 and len((tmp_path / "rows.data").read_text().splitlines()) == 4
    assert "4 rows written to" in r.stdout
    for args, message in ((["--format", "csv"], "--format is the format of --out"),
                          (["--out", str(tmp_path / "rows.txt")], "cannot tell the format"),
                          (["--out", str(tmp_path)], "is a folder")):
        r = CliRunner().invoke(cli, ["simulate", KUHN, "-n", "2"] + args)
        assert r.exit_code == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.output
    r = CliRunner().invoke(cli, ["simulate", KUHN, "-n", "2", "--out", os.devnull, "--format", "csv"])
    assert r.exit_code == 2 and "not a regular file" in r.stderr and os.path.exists(os.devnull)
    with pytest.raises(OutputError, match="not a regular file"):
        write_rows([], os.devnull, "jsonl")
    r = CliRunner().invoke(cli, ["simulate", KUHN, "-n", "2", "--out", str(tmp_path / "no" / "rows.csv")])
    assert r.exit_code == 1 and "cannot write the rows" in r.stderr and r.stderr.count("\n") == 1


@pytest.mark.parametrize("ext", ["jsonl", "csv", "parquet"])
def test_simulate_rows_carry_the_runs_metadata(tmp_path, ext):
    """Every row of a `simulate --out` file names the rules it was played with (one digest of every file
    read), the rulelang version and the run seed; a Parquet file also keeps the whole record (the SHA-256
    of each file, the agents, players, variants, games)."""
    import hashlib

    import pyarrow.parquet as pq

    path = tmp_path / f"rows.{ext}"
    r = CliRunner().invoke(cli, ["simulate", KUHN, "--games", "5", "--seed", "9", "--agents", "random,first",
                                 "--json", "--out", str(path)])
    assert r.exit_code == 0, r.output
    files = sorted(hashlib.sha256(open(KUHN, "rb").read()).hexdigest() for _ in (0,))
    digest = hashlib.sha256("\n".join(files).encode()).hexdigest()
    if ext == "jsonl":
        back = [json.loads(line) for line in path.read_text().splitlines()]
    elif ext == "csv":
        back = pd.read_csv(path, keep_default_na=False, na_values=[""]).to_dict("records")
    else:
        back = pd.read_parquet(path).to_dict("records")
        meta = json.loads(pq.read_schema(path).metadata[b"rulelang"])
        assert meta["rules_sha256"] == files and meta["rules_digest"] == digest
        assert meta["agents"] == ["random", "first"] and meta["players"] == 2 and meta["games"] == 5
        assert meta["run_seed"] == 9 and meta["rulelang_version"] == rulelang.__version__
        assert meta["game"] == "Kuhn Poker" and meta["variants"] == []
    assert len(back) == 5
    for row in back:
        assert row["rules_digest"] == digest and str(row["rulelang_version"]) == rulelang.__version__
        assert int(row["run_seed"]) == 9
    # the game rows come first, as before: readers that know ROW_KEYS are unaffected
    columns = list(back[0])
    assert columns[:len(ROW_KEYS)] == list(ROW_KEYS)

"""Per-game rows written to a file: JSON Lines, CSV or Parquet (see docs/results.md).

``write_rows(rows, path, format=None) -> int`` writes the rows of ``interpreter.runner`` (any iterable,
consumed as it comes: a long run is never held in memory for the file's sake) and returns how many
it wrote.  The format is ``format`` (``"jsonl"``, ``"csv"`` or ``"parquet"``) or else the file's
extension (``.jsonl``/``.ndjson``, ``.csv``, ``.parquet``/``.pq``).  The file is written whole or not
at all (``rulelang.atomic.open_atomic``): if the run or the writing fails, an older file of that name
is left as it was and no partial file is left behind.

Columns: ``ROW_KEYS``, in that order, in every format, then the ``extra`` columns a caller names (text
columns such as ``rulelang compare``'s ``side``), then, when ``metadata`` is given (``interpreter.runner.
run_metadata``: what made the rows), ``METADATA_COLUMNS`` in every row: ``rules_digest`` (one SHA-256 over
the digests of every rule file read), ``rulelang_version`` and ``run_seed``.  A Parquet file also keeps the
whole metadata record as JSON in its key-value metadata under ``rulelang`` (``pyarrow.parquet.read_schema(
path).metadata[b"rulelang"]``).
* JSON Lines: one JSON object per line, each row as it is.
* CSV: a header line, then one line per game; ``true``/``false`` for booleans, an empty field for
  None, and the nested fields (``variants``, ``agents``, ``winners``, ``scores``, ``actions``) as JSON
  text (``[0, 1]``, ``{"place": 5}``), which DuckDB's ``json`` functions and Python's ``json.loads``
  read back.
* Parquet (needs the optional ``analysis`` dependencies: ``pip install 'rulelang[analysis]'``, for
  pyarrow): typed columns: ``seed`` uint64, whole numbers int64 (nullable where the row may hold
  None), ``branching`` float64, ``variants``/``agents`` list<string>, ``winners``/``scores``
  list<int64> (``scores`` list<double> if a game's scores are not whole numbers), ``actions``
  map<string, int64>.  Written in row groups of ``PARQUET_BATCH`` rows.
"""
from __future__ import annotations

import csv
import json
import os
import stat

from rulelang.atomic import open_atomic
from interpreter.runner import ROW_KEYS

__all__ = ["FORMATS", "METADATA_COLUMNS", "MissingDependency", "OutputError", "check_target", "output_format", "write_rows", "PARQUET_BATCH"]

FORMATS = ("jsonl", "csv", "parquet")
EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
NESTED = ("variants", "agents", "winners", "scores", "actions")
METADATA_COLUMNS = ("rules_digest", "rulelang_version", "run_seed")  # written when write_rows gets metadata
PARQUET_BATCH = 4096


class OutputError(ValueError):
    """The rows cannot be written as asked (an unknown format, pyarrow missing); one line."""


class MissingDependency(OutputError):
    """The format needs an optional dependency that is not installed."""


def output_format(path, format=None) -> str:
    """The format rows written to ``path`` take: ``format`` if given, else by the extension; checks that
    Parquet can be written here.  An ``OutputError`` (one line) otherwise."""
    if format is not None:
        fmt = str(format).strip().lower()
        if fmt not in FORMATS:
            raise OutputError(f"unknown output format {str(format)[:40]!r} (give jsonl, csv or parquet)")
    else:
        ext = os.path.splitext(os.fspath(path))[1].lower()
        fmt = EXTENSIONS.get(ext)
        if fmt is None:
            shown = os.path.basename(os.fspath(path))[:60]
            raise OutputError(f"{shown}: cannot tell the format from the file name: end it in .jsonl, .csv or "
                              ".parquet, or give --format")
    if fmt == "parquet":
        _pyarrow()
    return fmt


def check_target(path) -> None:
    """``path`` may be written: it does not exist yet or is a regular file (the write replaces the file
    at that name, so a device, a pipe or a folder there is refused); an ``OutputError`` otherwise."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except (OSError, ValueError) as exc:
        raise OutputError(f"{os.fspath(path)}: cannot write there: {getattr(exc, 'strerror', None) or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{os.fspath(path)}: is a folder; give a file name")
    if not stat.S_ISREG(st.st_mode):
        raise OutputError(f"{os.fspath(path)}: not a regular file (a device or a pipe); give a file name")


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise MissingDependency("writing Parquet needs pyarrow: pip install 'rulelang[analysis]' "
                          "(or write .jsonl or .csv)") from None
    return pyarrow, pyarrow.parquet


def _ordered(row: dict, keys=ROW_KEYS) -> dict:
    return {k: row.get(k) for k in keys}


def write_rows(rows, path, format=None, extra=(), metadata=None) -> int:
    """Write ``rows`` (dicts with ``ROW_KEYS``) to ``path`` in ``format`` (see the module); returns how
    many rows were written.  ``extra``: names of more columns, written after ``ROW_KEYS`` as text (or
    null).  ``metadata``: the run's record (``interpreter.runner.run_metadata``), written as the
    ``METADATA_COLUMNS`` of every row and, in Parquet, as the file's ``rulelang`` metadata.
    ``OutputError`` for an unknown format, missing pyarrow or a target that is not a regular file
    (checked before any row is consumed); ``OSError`` when the file cannot be written."""
    fmt = output_format(path, format)
    check_target(path)
    keys = tuple(ROW_KEYS) + tuple(k for k in extra if k not in ROW_KEYS)
    if metadata is not None:
        constant = {k: metadata.get(k) for k in METADATA_COLUMNS}
        keys += tuple(k for k in METADATA_COLUMNS if k not in keys)
        rows = (dict(r, **constant) for r in rows)
    if fmt == "parquet":
        return _write_parquet(rows, path, keys, metadata)
    writer = {"jsonl": _write_jsonl, "csv": _write_csv}[fmt]
    return writer(rows, path, keys)


def _write_jsonl(rows, path, keys=ROW_KEYS) -> int:

    n = 0
    with open_atomic(path, "w", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(_ordered(row, keys), ensure_ascii=False, separators=(",", ":"), default=str))
            fh.write("\n")
            n += 1
    return n


def _csv_cell(key, value):
    if value is None:
        return ""
    if key in NESTED:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _write_csv(rows, path, keys=ROW_KEYS) -> int:

    n = 0
    with open_atomic(path, "w", newline="") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(keys)
        for row in rows:
            out.writerow([_csv_cell(k, row.get(k)) for k in keys])
            n += 1
    return n


def _parquet_schema(pa, float_scores: bool, extra=(), metadata=None):
    score = pa.float64() if float_scores else pa.int64()
    types = {"run_seed": pa.uint64()}
    schema = pa.schema([*_row_fields(pa, score), *[(k, types.get(k, pa.string())) for k in extra]])
    if metadata is not None:
        schema = schema.with_metadata({b"rulelang": json.dumps(metadata, sort_keys=True).encode("utf-8")})
    return schema


def _row_fields(pa, score):
    return [
        ("index", pa.int64()), ("seed", pa.uint64()), ("players", pa.int64()),
        ("variants", pa.list_(pa.string())), ("agents", pa.list_(pa.string())),
        ("restricted_seat", pa.int64()), ("ok", pa.bool_()), ("winners", pa.list_(pa.int64())),
        ("draw", pa.bool_()), ("scores", pa.list_(score)), ("decisions", pa.int64()), ("rounds", pa.int64()),
        ("end_reason", pa.string()), ("error", pa.string()), ("internal", pa.bool_()),
        ("actions", pa.map_(pa.string(), pa.int64())), ("branching", pa.float64()),
    ]


def _write_parquet(rows, path, keys=ROW_KEYS, metadata=None) -> int:

    pa, pq = _pyarrow()
    n = 0
    writer = None
    schema = None
    batch = []

    def flush(fh):
        nonlocal writer, schema
        if schema is None:
            floats = any(not isinstance(v, int) for r in batch for v in (r.get("scores") or ()))
            schema = _parquet_schema(pa, floats, keys[len(ROW_KEYS):], metadata)
            writer = pq.ParquetWriter(fh, schema)
        data = [_ordered(r, keys) for r in batch]
        for r in data:
            for k in keys[len(ROW_KEYS):]:
                if k != "run_seed":
                    r[k] = None if r[k] is None else str(r[k])
            if r["actions"] is not None:
                r["actions"] = list(r["actions"].items())
            r["end_reason"] = None if r["end_reason"] is None else str(r["end_reason"])
        try:
            table = pa.Table.from_pylist(data, schema=schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError) as exc:
            raise OutputError(f"a row does not fit the Parquet columns: {str(exc).splitlines()[0][:200]}") from None
        writer.write_table(table)
        batch.clear()

    with open_atomic(path, "wb") as fh:
        try:
            for row in rows:
                batch.append(row)
                n += 1
                if len(batch) >= PARQUET_BATCH:
                    flush(fh)
            if batch or schema is None:
                flush(fh)
        finally:
            if writer is not None:
                writer.close()
    return n

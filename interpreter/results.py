"""STAND-IN (replaced by the runner branch): ``write_rows(rows, path, format=None)`` writes per-game
rows as JSON Lines (``.jsonl``, the default) or CSV (``.csv``), atomically.  No compare logic here."""
from __future__ import annotations

import csv
import io
import json

from rulelang.atomic import write_text_atomic

__all__ = ["write_rows"]


def write_rows(rows, path, format=None) -> None:
    fmt = format or ("csv" if str(path).endswith(".csv") else "jsonl")
    if fmt == "jsonl":
        text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)
    elif fmt == "csv":
        buf = io.StringIO()
        keys = list(rows[0]) if rows else []
        w = csv.DictWriter(buf, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in r.items()})
        text = buf.getvalue()
    else:
        raise ValueError(f"unknown rows format {fmt!r}: give jsonl or csv")
    write_text_atomic(str(path), text)

"""The body of `rulelang serve` (the click declaration is in rulelang/cli.py)."""
from __future__ import annotations

import sqlite3


def run_serve(files, host, port, db, workers, *, load, fail):
    """Check the served files (their errors as diagnostics, exit 1), open the database, serve."""
    missing = []
    for module in ("starlette", "uvicorn", "jinja2", "sse_starlette", "pebble"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise fail(f"rulelang serve needs the web extra ({', '.join(missing)} missing): "
                   "pip install 'rulelang[web]'")
    from .tables import Served

    served = []
    for k, path in enumerate(files):
        rs = load(path, ())
        served.append(Served(k, path, rs.name, rs.player_counts, rs.variants))
    from .app import serve
    from .store import Store

    try:
        Store(db).close()
    except sqlite3.Error as exc:
        raise fail(f"{db}: cannot open the games database: {exc}") from None
    except OSError as exc:
        raise fail(f"{db}: cannot open the games database: {exc.strerror or exc}") from None
    print(f"rulelang serve: http://{host}:{port}/ ({len(served)} rule file{'s' if len(served) != 1 else ''}, "
          f"games in {db}); stop with Ctrl-C", flush=True)
    serve(served, host=host, port=port, db=db, workers=workers)

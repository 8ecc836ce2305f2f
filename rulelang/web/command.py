"""The body of `rulelang serve` (the click declaration is in rulelang/commands/serve.py)."""
from __future__ import annotations

import socket
import sqlite3


def run_serve(files, host, port, db, workers, *, load, fail, agents=()):
    """Check the served files (their errors as diagnostics, exit 1) and the configured agents (``--agent
    module:Class``: imported here, from the server's own configuration, never from a request), open the
    database, serve."""
    missing = []
    for module in ("starlette", "uvicorn", "jinja2", "sse_starlette", "pebble"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise fail(f"rulelang serve needs the web extra ({', '.join(missing)} missing): "
                   "pip install 'rulelang[web]'")
    from .tables import Served, shown_names

    served = []
    names = shown_names(files)
    for k, path in enumerate(files):
        rs = load(path, ())
        served.append(Served(k, path, rs.name, rs.player_counts, rs.variants, names[k]))
    if agents:
        from interpreter.agents import check_agent_spec

        checked = []
        for spec in agents:
            try:
                checked.append(check_agent_spec(spec))
            except ValueError as exc:
                raise fail(f"--agent {spec}: {exc}") from None
        agents = tuple(checked)
    from .app import serve
    from .store import Store

    try:
        Store(db).close()
    except sqlite3.Error as exc:
        raise fail(f"{db}: cannot open the games database: {exc}") from None
    except OSError as exc:
        raise fail(f"{db}: cannot open the games database: {exc.strerror or exc}") from None
    try:  # a port in use is a one-line error here, not uvicorn's log
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        raise fail(f"{host}:{port}: cannot listen there: {exc.strerror or exc}") from None
    print(f"rulelang serve: http://{host}:{port}/ ({len(served)} rule file{'s' if len(served) != 1 else ''}, "
          f"games in {db}); stop with Ctrl-C", flush=True)
    try:
        serve(served, host=host, port=port, db=db, workers=workers, agents=tuple(agents))
    except SystemExit as exc:  # uvicorn stops this way when it cannot start (its reason is in its log line)
        if exc.code not in (0, None):
            raise fail("") from None

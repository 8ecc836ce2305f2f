"""The web application of `rulelang serve` (Starlette, served by uvicorn): pages, the JSON API and
live updates (server-sent events). Game logic is in tables.py, storage in store.py; see docs/web.md.

Routes (``TOKEN`` is a seat's private token, ``ADMIN`` a table's creator token):

| route | what |
|---|---|
| ``GET /`` | the lobby: a form per served rule file to start a table |
| ``POST /tables`` | start a table (form); redirects to ``/created/ADMIN`` |
| ``GET /created/ADMIN`` | the seat links of a new table |
| ``GET /s/TOKEN`` | a seat's page; ``/s/TOKEN/fragment`` its changing part |
| ``POST /s/TOKEN/act`` | take a decision (form: ``action``, ``decision``) |
| ``GET /s/TOKEN/events`` | server-sent events: ``update`` with the decision number when the table changes |
| ``GET /s/TOKEN/log`` | the finished game as a `rulelang replay` log |
| ``GET /edit`` | the rules editor; ``POST /edit/play`` starts a table from the edited text |
| ``POST /api/tables``, ``GET /api/s/TOKEN``, ``POST /api/s/TOKEN/act``, ``POST /api/check`` | the same as JSON |
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os

from starlette.applications import Starlette
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from .tables import MAX_RULE_BYTES, MAX_SAVE_BYTES, Refused, Tables

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_BODY = MAX_SAVE_BYTES + MAX_RULE_BYTES + 64 * 1024  # bytes of a request body at most
KEEPALIVE = 15.0  # seconds between two keep-alive comments on an event stream
AGENT_CHOICES = ("human", "random", "first", "mcts:200")  # offered in the forms (the API also takes mcts:N, ismcts:N)


class JSONAnswer(JSONResponse):
    """JSON in ASCII: a text that is not valid Unicode (a lone surrogate) cannot break an answer."""

    def render(self, content) -> bytes:
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _valid_text(value, depth=0) -> bool:
    """Whether every text in a JSON value is valid Unicode (no lone surrogate such as "\ud800")."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if depth > 200:
        return False
    if isinstance(value, list):
        return all(_valid_text(x, depth + 1) for x in value)
    if isinstance(value, dict):
        return all(_valid_text(k, depth + 1) and _valid_text(x, depth + 1) for k, x in value.items())
    return True

templates = Jinja2Templates(directory=os.path.join(HERE, "templates"))


class LimitBody:
    """ASGI middleware: refuse a request body over ``limit`` bytes with 413 (by its Content-Length, or,
    sent in chunks, as it arrives: the body is read whole before the application sees it), and add the
    security headers to every response."""

    HEADERS = [(b"referrer-policy", b"no-referrer"),  # a seat's link must not leave in a Referer header
               (b"x-content-type-options", b"nosniff"),
               (b"x-frame-options", b"DENY"),
               (b"content-security-policy",
                b"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                b"frame-ancestors 'none'; base-uri 'none'; form-action 'self'")]

    def __init__(self, app, limit: int):
        self.app = app
        self.limit = limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    too_big = int(value) > self.limit
                except ValueError:
                    too_big = True
                if too_big:
                    return await _too_large(scope, receive, send, self.limit)
        async def with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", [])) + self.HEADERS
                message = dict(message, headers=headers)
            await send(message)

        if scope.get("method") in ("GET", "HEAD"):
            return await self.app(scope, receive, with_headers)
        chunks, seen = [], 0
        while True:  # the whole body first, at most `limit` bytes: the application never meets a cut body
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body = message.get("body", b"")
            seen += len(body)
            if seen > self.limit:
                return await _too_large(scope, receive, send, self.limit)
            chunks.append(body)
            if not message.get("more_body", False):
                break
        whole = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return whole
            return await receive()

        await self.app(scope, replay, with_headers)


async def _too_large(scope, receive, send, limit):
    body = json.dumps({"error": f"the request is over {limit // 1024} KiB"}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")] + LimitBody.HEADERS})
    await send({"type": "http.response.body", "body": body})


def create_app(tables: Tables, store=None) -> Starlette:
    """The application serving ``tables`` (whose worker pool it starts and stops with itself)."""

    @contextlib.asynccontextmanager
    async def lifespan(app):
        tables.start()
        tables.resume_all()
        try:
            yield
        finally:
            tables.stop()
            if store is not None:
                store.close()

    def page(request, name, status=200, **context):
        response = templates.TemplateResponse(request, name, dict(context, served=tables.served, agents=agent_choices()),
                                              status_code=status)
        response.headers["cache-control"] = "no-store"
        return response

    def refused(request, exc: Refused, as_json: bool):
        if as_json:
            return JSONAnswer({"error": exc.message, "diagnostics": exc.diagnostics}, status_code=exc.status)
        return page(request, "error.html", exc.status, message=exc.message, diagnostics=exc.diagnostics)

    def agent_choices():
        return AGENT_CHOICES + tuple(a for a in tables.agents if a not in AGENT_CHOICES)

    async def body_json(request):
        try:
            data = json.loads(await request.body())
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise Refused(400, "the request body is not JSON") from None
        if not _valid_text(data):
            raise Refused(400, "the request holds a text that is not valid Unicode (a lone surrogate)")
        return data

    async def form(request):
        try:
            got = await request.form(max_files=0, max_fields=200, max_part_size=MAX_BODY)
        except Exception:
            raise Refused(400, "the form could not be read") from None
        if not all(_valid_text(k) and _valid_text(v) for k, v in got.multi_items()):
            raise Refused(400, "the form holds a text that is not valid Unicode")
        return got

    def guarded(as_json):
        def wrap(fn):
            async def endpoint(request):
                try:
                    return await fn(request)
                except Refused as exc:
                    return refused(request, exc, as_json)
            return endpoint
        return wrap

    # ---------------------------------------------------------------- pages
    async def lobby(request):
        return page(request, "lobby.html")

    def spec_from_form(f) -> dict:
        players = f.get("players") or None
        n = int(players) if players and players.isdigit() and len(players) < 4 else 0
        seats = [f.get(f"seat{k}", "human") for k in range(n)] if n else []
        return {"file": f.get("file", "0"), "players": players, "variants": f.getlist("variant"),
                "seed": f.get("seed") or None, "seats": seats, "text": f.get("text") if "text" in f else None,
                "save": f.get("save") or None}

    @guarded(False)
    async def create_form(request):
        spec = spec_from_form(await form(request))
        made = await tables.create(spec)
        return RedirectResponse(f"/created/{made['admin']}", status_code=303)

    @guarded(False)
    async def created(request):
        row = await tables.admin(request.path_params["admin"])
        return page(request, "created.html", table=row, base=str(request.base_url).rstrip("/"))

    @guarded(False)
    async def seat_page(request):
        token = request.path_params["token"]
        live, seat = await tables.seat(token)
        return page(request, "seat.html", s=tables.state(live, seat), token=token)

    @guarded(False)
    async def seat_fragment(request):
        token = request.path_params["token"]
        live, seat = await tables.seat(token)
        return page(request, "seat_body.html", s=tables.state(live, seat), token=token)

    async def act_form(request):
        token = request.path_params["token"]
        try:
            f = await form(request)
            await tables.act(token, f.get("action"), f.get("decision"))
        except Refused as exc:
            try:
                live, seat = await tables.seat(token)
            except Refused:
                return refused(request, exc, False)
            return page(request, "seat.html", exc.status, s=tables.state(live, seat), token=token, problem=exc.message)
        return RedirectResponse(f"/s/{token}", status_code=303)

    async def events(request):
        from sse_starlette.sse import EventSourceResponse

        token = request.path_params["token"]
        try:
            live, seat = await tables.seat(token)
        except Refused as exc:
            return refused(request, exc, True)

        async def stream():
            seen = -1
            while True:
                if live.version != seen:
                    seen = live.version
                    yield {"event": "update", "data": json.dumps({"decision": len(live.decisions),
                                                                  "status": live.status})}
                async with live.changed:
                    try:
                        await asyncio.wait_for(live.changed.wait_for(lambda: live.version != seen), KEEPALIVE)
                    except asyncio.TimeoutError:
                        pass

        return EventSourceResponse(stream(), ping=KEEPALIVE, headers={"cache-control": "no-store"})

    @guarded(False)
    async def download_log(request):
        from interpreter.gamelog import dumps_record as _dumps_record

        record = await tables.replay_log(request.path_params["token"])
        name = "".join(c if c.isalnum() else "-" for c in (record.get("game") or "game").lower()).strip("-")
        return Response(_dumps_record(record), media_type="application/json",
                        headers={"content-disposition": f'attachment; filename="{name or "game"}.log.json"',
                                 "cache-control": "no-store"})

    @guarded(False)
    async def edit(request):
        file = request.query_params.get("file", "0")
        text = ""
        if tables.served:
            _, _, _, text = tables.source(file)
        base = None
        if tables.served:
            base = tables.served[int(file)] if file.isdigit() and int(file) < len(tables.served) else tables.served[0]
        return page(request, "edit.html", file=file, text=text, base=base)

    # ---------------------------------------------------------------- JSON API
    @guarded(True)
    async def api_create(request):
        made = await tables.create(await body_json(request))
        base = str(request.base_url).rstrip("/")
        for s in made["seats"]:
            s["link"] = f"{base}/s/{s['token']}" if s["token"] else None
        return JSONAnswer(made)

    @guarded(True)
    async def api_state(request):
        live, seat = await tables.seat(request.path_params["token"])
        return Response(tables.state_json(live, seat), media_type="application/json",
                        headers={"cache-control": "no-store"})

    @guarded(True)
    async def api_act(request):
        data = await body_json(request)
        if not isinstance(data, dict):
            raise Refused(400, 'send {"action": ID, "decision": N}')
        return JSONAnswer(await tables.act(request.path_params["token"], data.get("action"), data.get("decision")))

    @guarded(True)
    async def api_check(request):
        data = await body_json(request)
        if not isinstance(data, dict):
            raise Refused(400, 'send {"text": RULES, "file": N}')
        diags = await tables.check(data.get("file", "0"), data.get("text"), data.get("variants") or [])
        return JSONAnswer({"diagnostics": diags})

    routes = [
        Route("/", lobby),
        Route("/tables", create_form, methods=["POST"]),
        Route("/created/{admin}", created),
        Route("/s/{token}", seat_page),
        Route("/s/{token}/fragment", seat_fragment),
        Route("/s/{token}/act", act_form, methods=["POST"]),
        Route("/s/{token}/events", events),
        Route("/s/{token}/log", download_log),
        Route("/edit", edit),
        Route("/edit/play", create_form, methods=["POST"]),
        Route("/api/tables", api_create, methods=["POST"]),
        Route("/api/s/{token}", api_state),
        Route("/api/s/{token}/act", api_act, methods=["POST"]),
        Route("/api/check", api_check, methods=["POST"]),
        Mount("/static", StaticFiles(directory=os.path.join(HERE, "static")), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    return LimitBody(app, MAX_BODY)


def serve(files, host="127.0.0.1", port=8000, db="games.sqlite", workers=2, log_level="warning", agents=()) -> None:
    """What `rulelang serve` runs: load nothing but the served files' descriptions, then run uvicorn.
    ``agents``: bot specs the server's configuration adds (``--agent``), e.g. ``my_bots:Greedy``."""
    import uvicorn

    from .store import Store

    store = Store(db)
    tables = Tables(store, files, workers=workers, agents=agents)
    uvicorn.run(create_app(tables, store), host=host, port=port, log_level=log_level, timeout_graceful_shutdown=3)

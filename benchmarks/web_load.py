"""Load test of `rulelang serve` on loopback (issue 14): many seats polling and moving at once.

    python benchmarks/web_load.py [--seats 50] [--seconds 60] [--poll 0.25] [--workers 2]

Starts `rulelang serve games/examples/tictactoe.rules` on 127.0.0.1 (a free port, a fresh database in a
temporary folder), opens SEATS/2 tic-tac-toe tables of two people each, and runs one client per seat for
SECONDS: it polls its seat's state every POLL seconds and, when it is its decision, takes a random legal
action (sending the decision number it saw). A finished game is replaced by a new table. Requests go only
to the loopback server this script started, and stop by themselves after SECONDS.

Reported: requests, decisions accepted, games finished, errors (any answer other than 200, and refusals
of a decision), lost decisions (an accepted decision missing from the database, checked at the end by
reading the SQLite file), the latency of polls, of decisions and of new tables (p50, p99, max), and the
machine's load average at the end (other work on the machine shows in the latencies). Exit status 1 when
there was an error or a lost decision.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp  # the load's client: httpx's async pool queues badly at 50 connections and would measure itself
import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(db: str, workers: int):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rulelang", "serve", "games/examples/tictactoe.rules",
                             "--port", str(port), "--db", db, "--workers", str(workers)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    raise SystemExit("the server did not start")


class Stats:
    def __init__(self):
        self.poll, self.move, self.create = [], [], []
        self.errors = []
        self.accepted = []  # (token, decision number, action)
        self.games = 0
        self.requests = 0


class Table:
    def __init__(self):
        self.tokens = None
        self.generation = 0
        self.ready = asyncio.Event()


async def new_table(client, url, stats, table):
    t0 = time.perf_counter()
    async with client.post(url + "/api/tables", json={"file": 0, "seats": ["human", "human"]}) as r:
        body = await r.text()
    stats.requests += 1
    if r.status != 200:
        stats.errors.append(f"create: {r.status} {body[:100]}")
        return False
    table.tokens = [s["token"] for s in json.loads(body)["seats"]]
    table.generation += 1
    table.ready.set()
    stats.create.append(time.perf_counter() - t0)
    return True


async def seat(client, url, stats, table, k, stop_at, poll, rnd):
    await table.ready.wait()
    while time.monotonic() < stop_at:
        token, generation = table.tokens[k], table.generation
        t0 = time.perf_counter()
        try:
            async with client.get(f"{url}/api/s/{token}") as r:
                body = await r.text()
        except aiohttp.ClientError as exc:
            stats.errors.append(f"poll: {type(exc).__name__}")
            await asyncio.sleep(poll)
            continue
        stats.poll.append(time.perf_counter() - t0)
        stats.requests += 1
        if r.status != 200:
            stats.errors.append(f"poll: {r.status} {body[:100]}")
            await asyncio.sleep(poll)
            continue
        s = json.loads(body)
        if s["over"]:
            if k == 0 and table.generation == generation:
                stats.games += 1
                await new_table(client, url, stats, table)
            else:
                await asyncio.sleep(poll)
            continue
        if s["your_turn"]:
            action = rnd.choice(s["legal"])["id"]
            t0 = time.perf_counter()
            try:
                async with client.post(f"{url}/api/s/{token}/act",
                                       json={"action": action, "decision": s["decision"]}) as r:
                    body = await r.text()
            except aiohttp.ClientError as exc:
                stats.errors.append(f"move: {type(exc).__name__}")
                continue
            stats.move.append(time.perf_counter() - t0)
            stats.requests += 1
            if r.status == 200:
                stats.accepted.append((token, s["decision"] + 1, action))
            else:
                stats.errors.append(f"move: {r.status} {body[:100]}")
        await asyncio.sleep(poll)


def lost(db: str, accepted) -> int:
    con = sqlite3.connect(db)
    have = set()
    for token, n, action in con.execute(
            "SELECT s.token, d.n, d.action FROM decisions d JOIN seats s ON s.table_id = d.table_id "
            "AND s.seat = d.player"):
        have.add((token, n, action))
    con.close()
    return sum(1 for a in accepted if a not in have)


def pct(xs, q):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


async def run(url, seats, seconds, poll, seed):
    stats = Stats()
    connector = aiohttp.TCPConnector(limit=seats + 10)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=30)) as client:
        tables = [Table() for _ in range(seats // 2)]
        for t in tables:
            await new_table(client, url, stats, t)
        stats.create.clear()  # the first tables were made before the clock started
        began = time.monotonic()
        stop_at = began + seconds
        rnd = random.Random(seed)
        await asyncio.gather(*[seat(client, url, stats, t, k, stop_at, poll, random.Random(rnd.random()))
                               for t in tables for k in (0, 1)])
        stats.elapsed = time.monotonic() - began
    return stats


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seats", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--poll", type=float, default=0.25, help="seconds between two polls of a seat")
    ap.add_argument("--workers", type=int, default=2, help="the server's worker processes")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "games.sqlite")
        proc, url = start_server(db, args.workers)
        try:
            stats = asyncio.run(run(url, args.seats, args.seconds, args.poll, args.seed))
            elapsed = stats.elapsed
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        missing = lost(db, stats.accepted)
    out = {
        "seats": args.seats, "tables": args.seats // 2, "seconds": round(elapsed, 1), "poll_interval": args.poll,
        "requests": stats.requests, "requests_per_second": round(stats.requests / elapsed, 1),
        "decisions_accepted": len(stats.accepted), "games_finished": stats.games,
        "errors": len(stats.errors), "lost_decisions": missing,
        "poll_ms": {"p50": round(pct(stats.poll, .5) * 1000, 1), "p99": round(pct(stats.poll, .99) * 1000, 1),
                    "max": round(max(stats.poll, default=0) * 1000, 1)},
        "decision_ms": {"p50": round(pct(stats.move, .5) * 1000, 1), "p99": round(pct(stats.move, .99) * 1000, 1),
                        "max": round(max(stats.move, default=0) * 1000, 1)},
        "new_table_ms": {"p50": round(pct(stats.create, .5) * 1000, 1), "p99": round(pct(stats.create, .99) * 1000, 1),
                         "max": round(max(stats.create, default=0) * 1000, 1)},
        "load_average": [round(x, 1) for x in os.getloadavg()],
        "first_errors": stats.errors[:5],
    }
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for k, v in out.items():
            print(f"{k:>20}: {v}")
    return 1 if stats.errors or missing else 0


if __name__ == "__main__":
    sys.exit(main())

"""The tables of `rulelang serve` in SQLite (the standard library's sqlite3), so that nothing is lost.

Tables: ``rules`` (each rule text a table was started from, by SHA-256: the text of a served file as it
was when the table began, or an edited text), ``tables`` (rule text, player count, variants, seed, an
optional start save, status), ``seats`` (by table: a person with a private token, or a bot with its
agent spec) and ``decisions`` (every decision of every table, in order: player, action id, and the
action's text for the narration). A game is never stored as a state: a restarted server rebuilds each
table from its seed (or start save) and its decisions, which gives the same game byte for byte.

The database runs in WAL mode; a decision is committed before it is answered as accepted.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time

SCHEMA = """
CREATE TABLE IF NOT EXISTS rules (
  sha TEXT PRIMARY KEY,
  name TEXT NOT NULL,      -- the path the text is compiled as (its folder is where `extends` is read)
  root TEXT NOT NULL,      -- the folder `extends` stays inside
  text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tables (
  id TEXT PRIMARY KEY,
  admin_token TEXT NOT NULL UNIQUE,
  created REAL NOT NULL,
  rules_sha TEXT NOT NULL REFERENCES rules(sha),
  game TEXT NOT NULL,
  players INTEGER NOT NULL,
  variants TEXT NOT NULL,  -- JSON list
  seed TEXT NOT NULL,      -- decimal: a seed may exceed SQLite's 63-bit integers
  start_save TEXT,         -- a Game.to_json() the table started from, or NULL (a new game from the seed)
  status TEXT NOT NULL,    -- playing, over or error
  error TEXT,
  chance TEXT NOT NULL DEFAULT 'sampled'  -- explicit: every roll and draw is a decision (stored below)
);
CREATE TABLE IF NOT EXISTS seats (
  table_id TEXT NOT NULL REFERENCES tables(id),
  seat INTEGER NOT NULL,
  agent TEXT NOT NULL,     -- "human", or a bot's agent spec (random, first, ...)
  token TEXT UNIQUE,       -- a person's private link; NULL for a bot
  PRIMARY KEY (table_id, seat)
);
CREATE TABLE IF NOT EXISTS decisions (
  table_id TEXT NOT NULL REFERENCES tables(id),
  n INTEGER NOT NULL,      -- 1, 2, 3 ... in the order the game took them
  player INTEGER NOT NULL,
  action TEXT NOT NULL,
  text TEXT NOT NULL,
  at REAL NOT NULL,
  prompt TEXT,             -- the decision's prompt (what a seat that may not know the choice is told)
  seen TEXT,               -- JSON list of the seats that may know the choice (NULL, in older databases: nobody but the player)
  PRIMARY KEY (table_id, n)
);
"""
ADDED_COLUMNS = [  # columns added since the first version: added to an older database when it is opened
    ("tables", "chance", "TEXT NOT NULL DEFAULT 'sampled'"),
    ("decisions", "prompt", "TEXT"),
    ("decisions", "seen", "TEXT"),
]


class Store:
    """One SQLite connection shared by the server's threads (each call holds a lock; calls are short)."""

    def __init__(self, path: str):
        self.path = path
        self.lock = threading.Lock()
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        self.db.row_factory = sqlite3.Row
        with self.lock:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")  # in WAL mode: durable across a crash of the process
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.executescript(SCHEMA)
            for table, column, decl in ADDED_COLUMNS:
                have = {row["name"] for row in self.db.execute(f"PRAGMA table_info({table})")}
                if column not in have:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")

    def close(self) -> None:
        with self.lock:
            self.db.close()

    # ------------------------------------------------------------------ writing
    def create_table(self, table_id, admin_token, rules, game, players, variants, seed, start_save, seats,
                     chance="explicit") -> None:
        """``rules``: (sha, name, root, text); ``seats``: [(agent, token or None)] by seat."""
        with self.lock:
            with _transaction(self.db):
                self.db.execute("INSERT OR IGNORE INTO rules(sha, name, root, text) VALUES (?, ?, ?, ?)", rules)
                self.db.execute(
                    "INSERT INTO tables(id, admin_token, created, rules_sha, game, players, variants, seed, start_save,"
                    " status, chance) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'playing', ?)",
                    (table_id, admin_token, time.time(), rules[0], game, players, json.dumps(list(variants)),
                     str(seed), start_save, chance))
                self.db.executemany("INSERT INTO seats(table_id, seat, agent, token) VALUES (?, ?, ?, ?)",
                                    [(table_id, k, agent, token) for k, (agent, token) in enumerate(seats)])

    def add_decisions(self, table_id, first_n, decisions, status, error=None) -> None:
        """Append decisions numbered from ``first_n`` (a gap or a clash fails: nothing is written)."""
        now = time.time()
        with self.lock:
            with _transaction(self.db):
                self.db.executemany(
                    "INSERT INTO decisions(table_id, n, player, action, text, at, prompt, seen)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [(table_id, first_n + k, d["player"], d["action"], d["text"], now, d.get("prompt"),
                      json.dumps(d["seen"]) if d.get("seen") is not None else None)
                     for k, d in enumerate(decisions)])
                self.db.execute("UPDATE tables SET status = ?, error = ? WHERE id = ?", (status, error, table_id))

    def set_status(self, table_id, status, error=None) -> None:
        with self.lock:
            self.db.execute("UPDATE tables SET status = ?, error = ? WHERE id = ?", (status, error, table_id))

    # ------------------------------------------------------------------ reading
    def table_of_token(self, token: str):
        """(table id, seat) of a person's token, or None."""
        with self.lock:
            row = self.db.execute("SELECT table_id, seat FROM seats WHERE token = ?", (token,)).fetchone()
        return (row["table_id"], row["seat"]) if row else None

    def table_of_admin(self, token: str):
        with self.lock:
            row = self.db.execute("SELECT id FROM tables WHERE admin_token = ?", (token,)).fetchone()
        return row["id"] if row else None

    def table(self, table_id: str) -> dict:
        """Everything stored about a table: its row, rules, seats and decisions."""
        with self.lock:
            t = self.db.execute("SELECT * FROM tables WHERE id = ?", (table_id,)).fetchone()
            if t is None:
                return None
            r = self.db.execute("SELECT * FROM rules WHERE sha = ?", (t["rules_sha"],)).fetchone()
            seats = self.db.execute("SELECT seat, agent, token FROM seats WHERE table_id = ? ORDER BY seat",
                                    (table_id,)).fetchall()
            decisions = self.db.execute("SELECT n, player, action, text, prompt, seen FROM decisions"
                                        " WHERE table_id = ? ORDER BY n", (table_id,)).fetchall()
        out = dict(t)
        out["variants"] = json.loads(out["variants"])
        out["seed"] = int(out["seed"])
        out["rules"] = dict(r)
        out["seats"] = [dict(s) for s in seats]
        out["decisions"] = [dict(d, seen=_seats(d["seen"])) for d in decisions]
        return out

    def tables_with_status(self, status: str) -> list:
        with self.lock:
            return [row["id"] for row in self.db.execute(
                "SELECT id FROM tables WHERE status = ? ORDER BY created", (status,))]

    def count_tables(self, status=None) -> int:
        with self.lock:
            if status is None:
                return self.db.execute("SELECT COUNT(*) FROM tables").fetchone()[0]
            return self.db.execute("SELECT COUNT(*) FROM tables WHERE status = ?", (status,)).fetchone()[0]

    def decisions(self, table_id: str) -> list:
        with self.lock:
            return [dict(d) for d in self.db.execute(
                "SELECT n, player, action, text FROM decisions WHERE table_id = ? ORDER BY n", (table_id,))]


def _seats(text):
    """The stored list of seats that may know a decision (None when not stored)."""
    if text is None:
        return None
    try:
        got = json.loads(text)
    except ValueError:
        return None
    return [s for s in got if isinstance(s, int)] if isinstance(got, list) else None


class _transaction:
    def __init__(self, db):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind, exc, tb):
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
        return False

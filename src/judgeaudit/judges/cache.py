"""Persistent, content-addressed response cache: `<cache_dir>/judge/responses.sqlite`.

One row per cache key (`Request.cache_key(judge_fingerprint)`), holding the
answered response (raw text, parsed answer, status, usage, model version, latency).
SQLite in WAL mode: each response is committed as it arrives, so a SIGKILLed run
loses only its in-flight requests; several judge jobs may share the file (readers
never block the writer, writers wait on a busy timeout). Entries never expire.
Only answered responses (see `parse.ANSWERED`) are stored; transport errors are
not, so a rerun retries them. The cache lives outside results/, so
`snakemake --delete-all-output` keeps it. No secret ever enters a row: rows are
built from the provider's reply body, never from request headers.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from judgeaudit.judges.parse import ANSWERED

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    record TEXT NOT NULL,
    created REAL NOT NULL
) WITHOUT ROWID;
"""
_BATCH = 500


def cache_path(cache_dir: str | Path) -> Path:
    return Path(cache_dir) / "judge" / "responses.sqlite"


class ResponseCache:
    """Thread-confined SQLite handle; open one per process (or per event loop)."""

    def __init__(self, cache_dir: str | Path, timeout_s: float = 120.0):
        self.path = cache_path(cache_dir)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=timeout_s, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        keys = list(dict.fromkeys(keys))
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(keys), _BATCH):
            chunk = keys[i : i + _BATCH]
            marks = ",".join("?" * len(chunk))
            for key, record in self._db.execute(
                f"SELECT key, record FROM responses WHERE key IN ({marks})", chunk
            ):
                out[key] = json.loads(record)
        return out

    def get(self, key: str) -> dict[str, Any] | None:
        return self.get_many([key]).get(key)

    def put(self, key: str, judge: str, record: dict[str, Any]) -> bool:
        """Store an answered response (committed immediately). Returns False (and
        stores nothing) for statuses that must be retried on a rerun."""
        if record.get("status") not in ANSWERED:
            return False
        self._db.execute(
            "INSERT OR REPLACE INTO responses (key, judge, record, created) VALUES (?, ?, ?, ?)",
            (key, judge, json.dumps(record, sort_keys=True, ensure_ascii=False), time.time()),
        )
        return True

    def put_many(self, items: Iterable[tuple[str, str, dict[str, Any]]]) -> int:
        rows = [
            (k, j, json.dumps(r, sort_keys=True, ensure_ascii=False), time.time())
            for k, j, r in items
            if r.get("status") in ANSWERED
        ]
        self._db.execute("BEGIN")
        self._db.executemany(
            "INSERT OR REPLACE INTO responses (key, judge, record, created) VALUES (?, ?, ?, ?)",
            rows,
        )
        self._db.execute("COMMIT")
        return len(rows)

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

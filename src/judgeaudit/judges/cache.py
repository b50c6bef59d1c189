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

Two more tables coordinate processes that share the file (concurrent workflows,
cluster jobs):
 - `leases`: a request in flight is claimed (owner = host:boot id:PID namespace:pid:
   token, expiry) before it is sent; another process finding an unexpired lease waits
   for the answer instead of paying again. Leases are renewed (heartbeat) while the
   request is in flight, so only an expired lease is taken over; the one shortcut is
   an owner of this boot and PID namespace whose pid is gone (taken over at once).
 - `spend`: every paid call reserves its estimated cost under its budget scope
   (`judges.budget_scope`, else derived by the pre-flight from the API judges and
   their requests; `scopes` keeps the latest per judge set) and run id before it is
   sent,
   in one transaction with the budget check, so `judges.budget_usd` and the
   per-judge caps hold across every job, rerun and concurrent run of the study.
   The overshoot is bounded by the calls in flight: a reservation is the estimate,
   settled to the provider's usage after the answer, so the ledger can exceed the
   budget by at most sum(actual - estimate) over the calls in flight at the moment
   it is reached (concurrency x judge jobs calls). A call that ends without an
   answer (no bill) releases its reservation.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
import uuid
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
CREATE TABLE IF NOT EXISTS leases (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS scopes (
    judges TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    updated REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS spend (
    run TEXT NOT NULL,
    judge TEXT NOT NULL,
    key TEXT NOT NULL,
    usd REAL NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (run, judge, key)
) WITHOUT ROWID;
"""
# columns added after the first release: (name, declaration); added in place to an
# older cache file, whose rows keep their spend under scope '' and count as billed
SPEND_COLUMNS = (("scope", "TEXT NOT NULL DEFAULT ''"), ("billed", "INTEGER NOT NULL DEFAULT 1"))
DEFAULT_SCOPE = "default"
HOST = socket.gethostname()


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "noboot"


def _pid_namespace() -> str:
    """The inode of this process's PID namespace ('' where /proc does not say)."""
    try:
        link = os.readlink("/proc/self/ns/pid")  # 'pid:[4026531836]'
    except OSError:
        return ""
    return link.partition("[")[2].rstrip("]")


def new_owner() -> str:
    """A lease owner id: host, boot id, PID namespace, pid and a random run token.

    A pid alone names a process only inside one PID namespace of one boot: two
    containers or cluster jobs sharing a host name each see the other's pid as some
    other (or no) process. The boot id and namespace say when a pid lookup means
    anything; the token tells apart processes that reuse a pid."""
    return ":".join((HOST, _boot_id(), _pid_namespace() or "-", str(os.getpid()),
                     uuid.uuid4().hex[:12]))


def owner_alive(owner: str) -> bool:
    """False only when the owner is certainly dead: a process of this boot and this
    PID namespace whose pid no longer exists. Any other owner (another host, boot,
    container or an id of an older format) counts as alive until its lease expires:
    a lease is proven alive by its heartbeat (renewed every ttl/3), never by a pid
    lookup in a namespace the pid does not belong to."""
    parts = owner.split(":")
    if len(parts) != 5:
        return True
    host, boot, pidns, pid, _token = parts
    if host != HOST or boot != _boot_id() or pidns != (_pid_namespace() or "-"):
        return True
    if not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
        have = {row[1] for row in self._db.execute("PRAGMA table_info(spend)")}
        for name, decl in SPEND_COLUMNS:
            if name not in have:
                try:
                    self._db.execute(f"ALTER TABLE spend ADD COLUMN {name} {decl}")
                except sqlite3.OperationalError as exc:  # another process added it first
                    if "duplicate column" not in str(exc):
                        raise

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

    # ---------- leases (requests in flight, across processes) ----------
    def claim(self, key: str, owner: str, ttl_s: float) -> str:
        """Try to claim `key` for sending. Returns "claimed", "answered" (a response
        is cached now) or "busy" (another live owner holds an unexpired lease)."""
        now = time.time()
        self._db.execute("BEGIN IMMEDIATE")
        try:
            if self._db.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone():
                self._db.execute("COMMIT")
                return "answered"
            row = self._db.execute("SELECT owner, expires FROM leases WHERE key = ?",
                                   (key,)).fetchone()
            if row and row[0] != owner and row[1] > now and owner_alive(row[0]):
                self._db.execute("COMMIT")
                return "busy"
            self._db.execute("INSERT OR REPLACE INTO leases (key, owner, expires) VALUES (?, ?, ?)",
                             (key, owner, now + ttl_s))
            self._db.execute("COMMIT")
            return "claimed"
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def renew(self, keys: Iterable[str], owner: str, ttl_s: float) -> None:
        rows = [(time.time() + ttl_s, k, owner) for k in keys]
        if rows:
            self._db.executemany("UPDATE leases SET expires = ? WHERE key = ? AND owner = ?", rows)

    def release(self, key: str, owner: str) -> None:
        self._db.execute("DELETE FROM leases WHERE key = ? AND owner = ?", (key, owner))

    def leases(self) -> list[tuple[str, str, float]]:
        return list(self._db.execute("SELECT key, owner, expires FROM leases"))

    # ---------- spend ledger (budget across runs of one study) ----------
    def reserve(self, run: str, judge: str, key: str, usd: float,
                budget_usd: float | None, judge_cap_usd: float | None,
                scope: str = DEFAULT_SCOPE) -> str | None:
        """Reserve `usd` for one call of `run`, atomically with the budget check.

        The budgets bound everything the ledger holds for `scope` (the study: what it
        pays for, or `judges.budget_scope`), over every run, rerun and concurrent
        run that shares this cache, not only the current invocation. Returns None when
        reserved, else the reason nothing was reserved."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            if budget_usd is not None:
                total = self._db.execute(
                    "SELECT COALESCE(SUM(usd), 0) FROM spend WHERE scope = ?",
                    (scope,)).fetchone()[0]
                if total + usd > budget_usd + 1e-12:
                    self._db.execute("ROLLBACK")
                    return (f"judges.budget_usd=${budget_usd:g} reached (${total:.4f} spent or "
                            f"reserved in budget scope {scope!r} over all runs, next call est. "
                            f"${usd:.6f}; `judgeaudit spend` lists the ledger)")
            if judge_cap_usd is not None:
                spent = self._db.execute(
                    "SELECT COALESCE(SUM(usd), 0) FROM spend WHERE scope = ? AND judge = ?",
                    (scope, judge)).fetchone()[0]
                if spent + usd > judge_cap_usd + 1e-12:
                    self._db.execute("ROLLBACK")
                    return (f"judges.panel.{judge}.budget_usd=${judge_cap_usd:g} reached "
                            f"(${spent:.4f} spent or reserved in budget scope {scope!r} "
                            f"over all runs)")
            self._db.execute(
                "INSERT OR REPLACE INTO spend (run, judge, key, usd, created, scope, billed) "
                "VALUES (?, ?, ?, ?, ?, ?, 0)",
                (run, judge, key, usd, time.time(), scope))
            self._db.execute("COMMIT")
            return None
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def settle(self, run: str, judge: str, key: str, usd: float) -> None:
        """Replace a reservation by the cost computed from the provider's usage."""
        self._db.execute(
            "UPDATE spend SET usd = ?, billed = 1 WHERE run = ? AND judge = ? AND key = ?",
            (usd, run, judge, key))

    def swap_scope(self, judges: str, scope: str) -> str | None:
        """Record `scope` as the budget scope of the judge set `judges` (a name list);
        returns the scope recorded before (None: first time)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            row = self._db.execute("SELECT scope FROM scopes WHERE judges = ?",
                                   (judges,)).fetchone()
            self._db.execute("INSERT OR REPLACE INTO scopes (judges, scope, updated) "
                             "VALUES (?, ?, ?)", (judges, scope, time.time()))
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return row[0] if row else None

    def scope_for(self, judge: str) -> str | None:
        """The scope the latest pre-flight recorded for a judge set holding `judge`."""
        row = self._db.execute(
            "SELECT scope FROM scopes WHERE ',' || judges || ',' LIKE ? "
            "ORDER BY updated DESC LIMIT 1", (f"%,{judge},%",)).fetchone()
        return row[0] if row else None

    def unreserve(self, run: str, judge: str, key: str) -> None:
        """Drop a call's reservation that was never billed (the call ended without an
        answer: transport error, timeout), so an outage does not eat the budget."""
        self._db.execute("DELETE FROM spend WHERE run = ? AND judge = ? AND key = ? "
                         "AND billed = 0", (run, judge, key))

    def spent(self, run: str | None = None, judge: str | None = None,
              scope: str | None = None) -> float:
        """Spend (reserved + billed) of a run, a judge and/or a scope."""
        where, args = [], []
        for col, val in (("run", run), ("judge", judge), ("scope", scope)):
            if val is not None:
                where.append(f"{col} = ?")
                args.append(val)
        q = "SELECT COALESCE(SUM(usd), 0) FROM spend" + (
            " WHERE " + " AND ".join(where) if where else "")
        return float(self._db.execute(q, args).fetchone()[0])

    def ledger(self) -> list[dict[str, Any]]:
        """One row per (scope, run, judge): calls, USD reserved (not yet billed) and
        billed (settled from the provider's usage), first and last call time."""
        rows = self._db.execute(
            "SELECT scope, run, judge, COUNT(*), "
            "COALESCE(SUM(CASE WHEN billed = 0 THEN usd END), 0), "
            "COALESCE(SUM(CASE WHEN billed = 1 THEN usd END), 0), MIN(created), MAX(created) "
            "FROM spend GROUP BY scope, run, judge ORDER BY scope, MIN(created), judge")
        return [{"scope": r[0], "run": r[1], "judge": r[2], "calls": r[3],
                 "reserved_usd": r[4], "billed_usd": r[5], "first": r[6], "last": r[7]}
                for r in rows]

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

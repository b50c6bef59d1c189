"""Recover from a crashed Snakemake run without a manual `--unlock`, never from a
live one.

A SIGKILLed (or OOM-killed, or power-cut) `snakemake` leaves its lock files in
`<workdir>/.snakemake/locks/`; the next run then refuses to start until someone
runs `snakemake --unlock`. A lock is only meaningful while the process that wrote
it is alive, so a lock is *stale* when its owner is provably gone. Lock files name
no owner, so every main Snakemake process of this workflow writes an owner record
(`.snakemake/judgeaudit-owners/<token>.json`: host, boot id, PID-namespace inode,
pid and the process's start time, as the judge cache's leases do) before it locks,
and removes it when it exits. The locks are removed only when

 - every owner record is provably gone: an owner of this host, boot and PID
   namespace whose pid no longer exists (or now names a process started at another
   time), or an owner of an earlier boot of this host. An owner on another host or
   in another PID namespace (a container, `unshare --pid`) cannot be looked up from
   here, so its lock stands and the message names it and how to remove it;
 - and no live Snakemake process visible here (`/proc`, Linux only) works in the
   directory: a process counts as a Snakemake process when an argument of its
   command line is the `snakemake` executable or module; it holds the directory when
   its working directory is the workdir, or cannot be read (assume it does); the
   caller is excluded, its parents are not, so a job process never removes its own
   run's locks;
 - and only the lock files seen before the check, and only if unchanged since.
Set JUDGEAUDIT_NO_STALE_UNLOCK=1 to disable the recovery altogether.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import time
import uuid
from pathlib import Path

LOCK_GLOBS = ("*.input.lock", "*.output.lock")
OWNERS = Path(".snakemake") / "judgeaudit-owners"


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _pid_namespace(pid: str = "self") -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid").partition("[")[2].rstrip("]")
    except OSError:
        return ""


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (/proc/<pid>/stat field 22):
    tells a pid reused by another process apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rpartition(")")[2].split()[19]


def owner_record() -> dict:
    """Who this process is, in terms another process can check."""
    return {"host": socket.gethostname(), "boot_id": _boot_id(),
            "pid_namespace": _pid_namespace(), "pid": os.getpid(),
            "start_time": _start_time(os.getpid()), "started": round(time.time(), 3)}


def register_owner(workdir: str | Path = ".") -> Path:
    """Write this (main Snakemake) process's owner record; removed again at exit."""
    folder = Path(workdir) / OWNERS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{uuid.uuid4().hex}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(owner_record(), sort_keys=True))
    os.replace(tmp, path)

    def _drop() -> None:
        try:
            path.unlink()
        except OSError:
            pass

    atexit.register(_drop)
    return path


def owner_state(rec: dict) -> str:
    """"gone" (provably: same host, boot and PID namespace and no such process, or
    an earlier boot of this host), "alive" (this namespace, process there), or
    "unknown" (another host or PID namespace: cannot be looked up from here)."""
    if rec.get("host") != socket.gethostname():
        return "unknown"
    boot = _boot_id()
    if boot and rec.get("boot_id") and rec["boot_id"] != boot:
        return "gone"
    if not rec.get("pid_namespace") or rec["pid_namespace"] != _pid_namespace():
        return "unknown"
    pid = int(rec.get("pid") or 0)
    if pid <= 0:
        return "unknown"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "gone"
    except PermissionError:
        return "alive"
    started = _start_time(pid)
    if rec.get("start_time") and started and started != rec["start_time"]:
        return "gone"  # the pid names another, later process now
    return "alive"


def live_owners(workdir: str | Path) -> list[tuple[str, dict]]:
    """(state, record) of every owner record not provably gone; gone ones are deleted."""
    out = []
    folder = Path(workdir) / OWNERS
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.json")):
        try:
            rec = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # being written, or removed meanwhile
        state = owner_state(rec)
        if state == "gone":
            try:
                path.unlink()
            except OSError:
                pass
            continue
        out.append((state, rec))
    return out


def _is_snakemake(cmdline: list[str]) -> bool:
    for i, arg in enumerate(cmdline[:3]):
        base = os.path.basename(arg)
        if base in ("snakemake", "snakemake.exe") or base.startswith("snakemake-"):
            return True
        if arg == "-m" and i + 1 < len(cmdline) and cmdline[i + 1].startswith("snakemake"):
            return True
    return False


def snakemake_holders(workdir: str | Path, proc: str | Path = "/proc") -> list[int] | None:
    """PIDs of live Snakemake processes (other than this one) that may hold `workdir`;
    None when processes cannot be listed (not Linux)."""
    proc = Path(proc)
    if not proc.is_dir() or not (proc / "self").exists():
        return None
    target = os.path.realpath(workdir)
    me = os.getpid()
    holders = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        cmdline = [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
        if not _is_snakemake(cmdline):
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except FileNotFoundError:
            continue  # exited meanwhile
        except OSError:
            holders.append(int(entry.name))  # cannot tell: assume it holds the directory
            continue
        if os.path.realpath(cwd) == target:
            holders.append(int(entry.name))
    return holders


def clear_stale_locks(workdir: str | Path = ".") -> tuple[list[str], str]:
    """Remove Snakemake lock files in `workdir` when provably stale.
    Returns (removed files, explanation)."""
    if os.environ.get("JUDGEAUDIT_NO_STALE_UNLOCK"):
        return [], "stale-lock recovery disabled (JUDGEAUDIT_NO_STALE_UNLOCK)"
    lockdir = Path(workdir) / ".snakemake" / "locks"
    if not lockdir.is_dir():
        return [], "no locks"
    seen = {p: p.stat().st_mtime_ns for g in LOCK_GLOBS for p in lockdir.glob(g) if p.is_file()}
    if not seen:
        return [], "no locks"
    owners = [(st, r) for st, r in live_owners(workdir) if r.get("pid") != os.getpid()
              or r.get("pid_namespace") != _pid_namespace()]
    if owners:
        who = "; ".join(
            f"host {r.get('host')}, PID namespace {r.get('pid_namespace') or '?'}, pid "
            f"{r.get('pid')}, started {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(r.get('started') or 0))}"
            + ("" if st == "alive" else " (another host or PID namespace: cannot be checked from here)")
            for st, r in owners)
        return [], (f"locks held by a Snakemake run that may be alive ({who}); they stay. "
                    f"If that run is certainly over, remove them with `snakemake --unlock` "
                    f"in {os.path.realpath(workdir)}")
    holders = snakemake_holders(workdir)
    if holders is None:
        return [], "cannot list processes on this system; run `snakemake --unlock` if no run is active"
    if holders:
        return [], f"locks held by live Snakemake process(es) {sorted(holders)}"
    removed = []
    for path, mtime in seen.items():
        try:
            if path.stat().st_mtime_ns == mtime:
                path.unlink()
                removed.append(str(path))
        except FileNotFoundError:
            pass
    return removed, ("removed stale lock(s) left by a Snakemake run that is no longer "
                     f"alive: {sorted(os.path.basename(p) for p in removed)}")

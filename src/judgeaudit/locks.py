"""Recover from a crashed Snakemake run without a manual `--unlock`.

A SIGKILLed (or OOM-killed, or power-cut) `snakemake` leaves its lock files in
`<workdir>/.snakemake/locks/`; the next run then refuses to start until someone
runs `snakemake --unlock`. A lock is only meaningful while the process that wrote
it is alive, so a lock is *stale* when no live Snakemake process other than the
caller works in the same directory. This module decides that conservatively:

 - it lists every process on the machine (`/proc`, Linux only; elsewhere it does
   nothing and Snakemake's own message stands);
 - a process counts as a Snakemake process when an argument of its command line is
   the `snakemake` executable or module; it holds the directory when its working
   directory is the workdir (Snakemake chdirs into `--directory`), or when its
   working directory cannot be read (another user's process: assume it does);
 - the caller itself is excluded, but its parents are not, so a job process spawned
   by a running Snakemake never removes that run's locks;
 - only the lock files seen before the check are removed, and only if unchanged
   since, so a run that starts locking meanwhile keeps its locks.
Processes on other hosts (a shared filesystem) cannot be seen: set
JUDGEAUDIT_NO_STALE_UNLOCK=1 to disable the recovery there.
"""

from __future__ import annotations

import os
from pathlib import Path

LOCK_GLOBS = ("*.input.lock", "*.output.lock")


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

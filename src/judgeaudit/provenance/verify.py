"""`judgeaudit verify`: is a finished run still backed by the files it was made from?

Snakemake decides what to re-run from its own metadata; a file damaged after a
complete run (a clip cut in half, a response file edited, a cache page corrupted)
changes nothing it looks at, so the next run exits 0 and the report keeps showing
numbers the files no longer support. `verify` re-hashes, against what was recorded
when each output was made:
 - every clip of every manifest (`data/*/manifest.tsv`: path and sha256 columns);
 - every output that has a provenance record (trial shards, response files,
   metrics, tables, figures, ...), and every non-code input each record names;
 - the judge cache (`PRAGMA integrity_check`) and every answered response row's
   presence in it (what replay and `export-responses` rely on).
Each problem names the file and what changed; every table and figure whose
record chain reaches a damaged file is listed as resting on it. The result is
written to `results/verify.json` (time, result, problems), which the report shows.
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from judgeaudit.io import RECORD_SUFFIX, hash_path, read_jsonl, sha256_file, write_json_atomic

VERIFY_FILE = Path("results") / "verify.json"
RECORD_DIRS = ("data", "results", "figures")
FINAL_DIRS = ("results/tables", "figures")  # the outputs a reader sees


def _records(root: Path) -> dict[str, dict[str, Any]]:
    """Output path (relative to root) -> its provenance record."""
    out = {}
    for top in RECORD_DIRS:
        for rec_path in sorted((root / top).rglob("*" + RECORD_SUFFIX)):
            try:
                rec = json.loads(rec_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                out[str(rec_path.relative_to(root))] = {"unreadable": True}
                continue
            output = (rec.get("output") or {}).get("path")
            if output is None:
                output = str(rec_path.relative_to(root))[: -len(RECORD_SUFFIX)]
            out[output] = rec
    return out


class _Hasher:
    """Current hashes, each path hashed once."""

    def __init__(self, root: Path):
        self.root = root
        self._seen: dict[tuple[str, str], str | None] = {}

    def current(self, path: str, kind: str) -> str | None:
        key = (path, kind)
        if key not in self._seen:
            p = self.root / path
            if kind == "dir":
                self._seen[key] = hash_path(p)["sha256"] if p.is_dir() else None
            else:
                self._seen[key] = sha256_file(p) if p.is_file() else None
        return self._seen[key]


def _check_manifests(root: Path, problems: list[dict], damaged: dict[str, set[str]]) -> int:
    n = 0
    for manifest in sorted((root / "data").glob("*/manifest.tsv")):
        rel_manifest = str(manifest.relative_to(root))
        with open(manifest, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        for row in rows:
            path, want = row.get("path"), row.get("sha256")
            if not path or not want:
                continue
            n += 1
            clip = root / path
            if not clip.is_file():
                why = "missing"
            elif sha256_file(clip) != want:
                why = f"sha256 differs from {rel_manifest} (now {clip.stat().st_size} bytes)"
            else:
                continue
            problems.append({"kind": "clip", "path": path, "problem": why})
            # what records name is the manifest and the clip folder: they stand for it
            for node in (path, rel_manifest, str(Path(path).parent)):
                damaged[node].add(path)
    return n


def _check_records(root: Path, records: dict[str, dict], hasher: _Hasher,
                   problems: list[dict], damaged: dict[str, set[str]]) -> tuple[int, int]:
    n_out = n_in = 0
    for output, rec in records.items():
        if rec.get("unreadable"):
            problems.append({"kind": "record", "path": output, "problem": "unreadable record"})
            continue
        want = rec.get("output") or {}
        if want.get("sha256") is not None:
            n_out += 1
            now = hasher.current(output, want.get("kind", "file"))
            if now != want["sha256"]:
                problems.append({"kind": "output", "path": output, "rule": rec.get("rule"),
                                 "problem": "missing" if now is None else
                                 "changed after it was made (sha256 differs from its record)"})
                damaged[output].add(output)
        for inp in rec.get("inputs") or []:
            if inp.get("role") == "code" or inp.get("sha256") is None or \
                    inp.get("path") == VERIFY_FILE.as_posix():
                continue  # (the report reads verify's own last result: not evidence)
            n_in += 1
            path = inp["path"]
            now = hasher.current(path, inp.get("kind", "file"))
            if now != inp["sha256"]:
                problems.append({"kind": "input", "path": path, "used_by": output,
                                 "problem": "missing" if now is None else
                                 f"differs from the version {output} was made from"})
                damaged[path].add(path)
    return n_out, n_in


def _check_cache(root: Path, cache_dir: Path, problems: list[dict],
                 damaged: dict[str, set[str]]) -> dict[str, Any]:
    """The judge cache's integrity, and every answered response row's entry in it. A
    response file whose answers the cache can no longer give back (an unreadable or
    corrupt cache: all of them; missing entries: those files) is marked damaged by the
    cache, so the tables resting on it are named (`_resting_on`)."""
    from judgeaudit.judges.cache import cache_path
    from judgeaudit.judges.engine import NOT_ANSWERED

    db = cache_path(cache_dir)
    info: dict[str, Any] = {"path": str(db), "exists": db.exists()}
    if not db.exists():
        return info
    responses = sorted((root / "results" / "responses").glob("**/*.jsonl"))
    label = f"{db} (judge cache)"

    def all_rest_on_cache() -> None:
        for f in responses:
            damaged[str(f.relative_to(root))].add(label)

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        result = [r[0] for r in con.execute("PRAGMA integrity_check")]
        keys = {k for (k,) in con.execute("SELECT key FROM responses")}
    except sqlite3.DatabaseError as exc:
        problems.append({"kind": "cache", "path": str(db), "problem": f"unreadable: {exc}"})
        all_rest_on_cache()
        return info
    finally:
        con.close()
    info.update(integrity=result, responses=len(keys))
    if result != ["ok"]:
        problems.append({"kind": "cache", "path": str(db),
                         "problem": "integrity_check: " + "; ".join(result[:5])})
        all_rest_on_cache()
    missing: dict[str, int] = defaultdict(int)
    for f in responses:
        for row in read_jsonl(f):
            if row.get("status") not in NOT_ANSWERED and row.get("request_key") not in keys:
                missing[str(f.relative_to(root))] += 1
    for path, n in missing.items():
        problems.append({"kind": "cache", "path": path,
                         "problem": f"{n} answered rows have no entry in the judge cache "
                                    "(replay and export-responses would miss them)"})
        damaged[path].add(label)
    return info


def _resting_on(records: dict[str, dict], damaged: dict[str, set[str]]) -> dict[str, list[str]]:
    """Each table/figure -> the damaged files its record chain reaches (`damaged`: a
    path a record may name -> the damaged files it stands for)."""
    inputs = {out: [i["path"] for i in rec.get("inputs") or [] if i.get("role") != "code"]
              for out, rec in records.items() if not rec.get("unreadable")}

    def covers(path: str, bad: str) -> bool:  # a folder input holds a damaged file
        return path == bad or bad.startswith(path.rstrip("/") + "/")

    reach: dict[str, set[str]] = {}

    def visit(out: str, stack: frozenset[str] = frozenset()) -> set[str]:
        if out in reach:
            return reach[out]
        found = {f for b, fs in damaged.items() if covers(out, b) for f in fs}
        for path in inputs.get(out, []):
            found |= {f for b, fs in damaged.items() if covers(path, b) for f in fs}
            if path in inputs and path not in stack:
                found |= visit(path, stack | {out})
        reach[out] = found
        return found

    return {out: sorted(visit(out)) for out in sorted(inputs)
            if out.startswith(FINAL_DIRS) and visit(out)}


def verify(root: str | Path = ".", cache_dir: str | Path | None = None,
           write: bool = True) -> dict[str, Any]:
    """Check the run under `root`; returns (and writes to results/verify.json) the
    result: `ok`, the problems and the tables/figures resting on a damaged file."""
    root = Path(root)
    if cache_dir is None:
        cache_dir = _configured_cache_dir(root)
    cache_dir = Path(cache_dir)
    if not cache_dir.is_absolute():
        cache_dir = root / cache_dir
    problems: list[dict[str, Any]] = []
    damaged: dict[str, set[str]] = defaultdict(set)
    records = _records(root)
    hasher = _Hasher(root)
    n_clips = _check_manifests(root, problems, damaged)
    n_out, n_in = _check_records(root, records, hasher, problems, damaged)
    cache = _check_cache(root, cache_dir, problems, damaged)
    resting = _resting_on(records, damaged)
    result = {
        "verified_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "ok": not problems,
        "checked": {"clips": n_clips, "records": len(records), "outputs": n_out,
                    "inputs": n_in, "cache": cache},
        "problems": problems,
        "tables_resting_on_damage": resting,
    }
    if write:
        write_json_atomic(root / VERIFY_FILE, result)
    return result


def _configured_cache_dir(root: Path) -> Path:
    """cache_dir of the resolved config the records name (else `cache`)."""
    for rec_path in sorted((root / "results" / "tables").glob("*" + RECORD_SUFFIX)):
        try:
            cp = json.loads(rec_path.read_text(encoding="utf-8")).get("config_path")
        except (OSError, ValueError):
            continue
        if cp and (root / cp).exists():
            import yaml

            cfg = yaml.safe_load((root / cp).read_text(encoding="utf-8")) or {}
            return Path(cfg.get("cache_dir", "cache"))
    return Path("cache")


def describe(result: dict[str, Any], limit: int = 40) -> Iterable[str]:
    c = result["checked"]
    yield (f"verified {result['verified_utc']}: {c['clips']} clips, {c['outputs']} outputs "
           f"and {c['inputs']} inputs of {c['records']} provenance records, judge cache "
           + (f"{c['cache'].get('responses', 0)} responses, integrity "
              f"{'/'.join(c['cache'].get('integrity') or ['?'])}" if c["cache"].get("exists")
              else "absent"))
    if result["ok"]:
        yield "OK: every file matches the hash recorded when it was made"
        return
    yield f"{len(result['problems'])} problem(s):"
    for p in result["problems"][:limit]:
        extra = f" (input of {p['used_by']})" if p.get("used_by") else ""
        yield f"  {p['kind']}: {p['path']}: {p['problem']}{extra}"
    if len(result["problems"]) > limit:
        yield f"  ... {len(result['problems']) - limit} more in {VERIFY_FILE}"
    if result["tables_resting_on_damage"]:
        yield "tables and figures resting on a damaged file (re-run them: snakemake "
        yield "  --forcerun <rule> or delete the damaged file and run the workflow):"
        for out, bad in result["tables_resting_on_damage"].items():
            yield f"  {out} <- {', '.join(bad[:3])}" + (" ..." if len(bad) > 3 else "")


def last_verification(root: str | Path = ".") -> dict[str, Any] | None:
    """The last `verify` result of the run under `root`, for the report."""
    path = Path(root) / VERIFY_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None

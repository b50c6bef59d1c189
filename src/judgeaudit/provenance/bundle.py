"""Offline replay for reviewers: a response bundle of a finished study.

`export_responses` writes a folder with
- `responses.jsonl`: the cache rows (key, judge, record) behind every response row
  of `results/responses/**` (sorted by key: the same study gives the same bytes);
- `config.yaml`: the resolved config the study's tables were made with;
- `manifest.json`: sha256 and size of both files, responses per judge, and the
  requests that could not be bundled (errors are never cached, so a replay of them
  would have to call the judge: listed so a reviewer knows before running).

`import_responses` checks the manifest checksums and merges the rows into a cache
folder. Running the workflow with `judges.replay: true` (and the bundle's config)
then answers every request from the cache; a miss is an error naming the request,
never a call, so no API key and no network are needed.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from judgeaudit.io import read_jsonl, sha256_file, write_json_atomic, write_text_atomic
from judgeaudit.judges.cache import ResponseCache, cache_path
from judgeaudit.provenance import RECORD_SUFFIX

BUNDLE_FILES = ("responses.jsonl", "config.yaml")


class BundleError(ValueError):
    """A bundle that cannot be written or trusted (message names file and reason)."""


def _study_config(root: Path) -> Path:
    """The resolved config the tables of the study were made with (one, or an error
    naming the hashes when tables come from different configs)."""
    paths = set()
    for rec in sorted((root / "results" / "tables").glob("*.tsv" + RECORD_SUFFIX)):
        cp = json.loads(rec.read_text(encoding="utf-8")).get("config_path")
        if cp:
            paths.add(cp)
    if not paths:
        raise BundleError(f"{root}/results/tables: no table record names a resolved config "
                          "(run the workflow first)")
    if len(paths) > 1:
        raise BundleError(f"tables come from {len(paths)} configs {sorted(paths)}; re-run the "
                          "workflow so every table has the same config before exporting")
    path = root / paths.pop()
    if not path.exists():
        raise BundleError(f"{path}: resolved config named by the table records is missing")
    return path


def export_responses(out_dir: str | os.PathLike, root: str | os.PathLike = ".",
                     cache_dir: str | os.PathLike | None = None) -> dict[str, Any]:
    root, out = Path(root), Path(out_dir)
    config_src = _study_config(root)
    if cache_dir is None:
        import yaml

        cache_dir = (yaml.safe_load(config_src.read_text(encoding="utf-8")) or {}).get(
            "cache_dir", "cache")
    cache_dir = Path(cache_dir)
    if not cache_dir.is_absolute():
        cache_dir = root / cache_dir
    if not cache_path(cache_dir).exists():
        raise BundleError(f"{cache_path(cache_dir)}: no judge response cache to export")
    files = sorted((root / "results" / "responses").glob("**/*.jsonl"))
    if not files:
        raise BundleError(f"{root}/results/responses: no response files to export")
    wanted: dict[str, str] = {}
    statuses: Counter = Counter()
    for f in files:
        for r in read_jsonl(f):
            statuses[r.get("status")] += 1
            if r.get("status") != "unsupported":  # never called, needs no answer
                wanted[r["request_key"]] = r["judge"]
    with ResponseCache(cache_dir) as cache:
        rows = cache.get_many(wanted)
    missing = sorted(k for k in wanted if k not in rows)
    out.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"key": k, "judge": wanted[k], "record": rows[k]}, sort_keys=True,
                        ensure_ascii=False) for k in sorted(rows)]
    write_text_atomic(out / "responses.jsonl", "\n".join(lines) + ("\n" if lines else ""))
    shutil.copyfile(config_src, out / "config.yaml")
    per_judge = Counter(wanted[k] for k in rows)
    manifest = {
        "format": "judgeaudit-response-bundle/1",
        "config_sha256": config_src.stem,
        "files": {name: {"sha256": sha256_file(out / name), "bytes": (out / name).stat().st_size}
                  for name in BUNDLE_FILES},
        "responses": len(rows), "responses_per_judge": dict(sorted(per_judge.items())),
        "response_rows": sum(statuses.values()), "statuses": dict(sorted(statuses.items())),
        "not_bundled": [{"request_key": k, "judge": wanted[k]} for k in missing],
    }
    write_json_atomic(out / "manifest.json", manifest)
    return manifest


def read_bundle(bundle: str | os.PathLike) -> dict[str, Any]:
    """The manifest, after checking every file against it."""
    bundle = Path(bundle)
    mpath = bundle / "manifest.json"
    if not mpath.exists():
        raise BundleError(f"{mpath}: missing (not a response bundle?)")
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    for name, meta in manifest.get("files", {}).items():
        p = bundle / name
        if not p.exists():
            raise BundleError(f"{p}: listed in the manifest but missing")
        if sha256_file(p) != meta["sha256"]:
            raise BundleError(f"{p}: sha256 {sha256_file(p)} does not match the manifest "
                              f"({meta['sha256']}); the bundle was changed or truncated")
    return manifest


def import_responses(bundle: str | os.PathLike, cache_dir: str | os.PathLike = "cache"
                     ) -> dict[str, Any]:
    """Merge a checked bundle's responses into `<cache_dir>/judge/responses.sqlite`."""
    manifest = read_bundle(bundle)
    rows = [(r["key"], r["judge"], r["record"])
            for r in read_jsonl(Path(bundle) / "responses.jsonl")]
    with ResponseCache(cache_dir) as cache:
        stored = cache.put_many(rows)
    return {"imported": stored, "bundle_responses": manifest["responses"],
            "config": str(Path(bundle) / "config.yaml"),
            "not_bundled": len(manifest.get("not_bundled", []))}


__all__ = ["BundleError", "export_responses", "import_responses", "read_bundle"]

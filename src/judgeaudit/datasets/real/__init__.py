"""Real corpora: download (or locate), verify and ingest into the common manifest.

`REAL_DATASETS` lists the corpora. For each, `datasets.<name>.source` chooses
`synthetic` (the study uses the `synth_*` counterpart), `download` (fetch from
the official location into `<cache_dir>/downloads/<name>/`, verified) or
`local_dir` (a copy the user already has, in the official layout).

- `prepare_download(name, cfg, cache_dir)` -> folder in the official layout
  (resumable verified downloads, safe extraction; verified files are never fetched
  again).
- `ingest(name, root, out_dir, cfg, ...)` -> `manifest.tsv` (validated),
  `LICENSE_INFO.json` and the auxiliary tables in `out_dir`.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from judgeaudit.vocab.datasets import REAL_DATASETS, SYNTH_COUNTERPART

from . import bvcc, emocf, fleurs, od3, ravdess, voxceleb
from .archive import extract_once, stream_extract_tar
from .base import (
    ClipSpec,
    LabelError,
    build_manifest,
    duplicate_clips,
    split_table,
    write_outputs,
)
from .download import fetch

log = logging.getLogger("judgeaudit.datasets.real")

LICENSES = {"ravdess": ravdess.LICENSE, "fleurs": fleurs.LICENSE, "bvcc": bvcc.LICENSE,
            "voxceleb1": voxceleb.LICENSE, "emocf": emocf.LICENSE, "od3": od3.LICENSE}
ATTR_COLUMNS = {"ravdess": ravdess.ATTR_COLUMNS, "fleurs": fleurs.ATTR_COLUMNS,
                "bvcc": bvcc.ATTR_COLUMNS, "voxceleb1": voxceleb.ATTR_COLUMNS,
                "emocf": emocf.ATTR_COLUMNS, "od3": od3.ATTR_COLUMNS}


def _dl_kwargs(cfg: Mapping[str, Any], dl: Mapping[str, Any]) -> dict[str, Any]:
    return {"retries": int(dl.get("retries", 5)), "backoff_s": float(dl.get("backoff_s", 2.0)),
            "timeout_s": float(dl.get("timeout_s", 60.0))}


def prepare_download(name: str, cfg: Mapping[str, Any], cache_dir: str | os.PathLike,
                     download_cfg: Mapping[str, Any] | None = None,
                     pins: str | os.PathLike | None = None, seed: int = 0) -> dict[str, Any]:
    """Fetch and unpack `name`; return {"root": folder in the official layout, "files":
    receipts, ...}."""
    dl = dict(download_cfg or {})
    kw = _dl_kwargs(cfg, dl)
    base = Path(cache_dir) / "downloads" / name
    receipts = []

    def get(url: str, dest: Path, md5: str | None = None, sha256: str | None = None):
        rec = fetch(url, dest, md5=md5 or None, sha256=sha256 or None, pins=pins, **kw)
        receipts.append({k: rec.get(k) for k in ("url", "path", "bytes", "md5", "sha256",
                                                 "reused", "attempts", "resumed_from")})
        return dest

    if name == "ravdess":
        archive = get(cfg["url"], base / "Audio_Speech_Actors_01-24.zip", cfg.get("md5"),
                      cfg.get("sha256"))
        root = extract_once(archive, base / "extracted")
    elif name == "bvcc":
        archive = get(cfg["url"], base / "main.tar.gz", cfg.get("md5"), cfg.get("sha256"))
        root = extract_once(archive, base / "extracted")
        data = bvcc.find_root(root)
        if not (data / "wav").is_dir() or not any((data / "wav").glob("*.wav")):
            cmd = cfg.get("gather_command", "")
            if not cmd:
                raise LabelError(
                    f"{data}/wav is empty: BVCC audio must be gathered with the official "
                    "scripts of the package (set datasets.bvcc.gather_command, run inside "
                    f"{data.parent}) or point datasets.bvcc.local_dir at the prepared folder")
            log.info("running BVCC gather command in %s: %s", data.parent, cmd)
            subprocess.run(cmd, shell=True, cwd=data.parent, check=True)
    elif name == "fleurs":
        checks = cfg.get("sha256", {}) or {}
        for f in fleurs.remote_files(cfg):
            get(f["url"], base / f["dest"], sha256=checks.get(f["dest"]))
        root = base
    elif name == "emocf":
        checks = cfg.get("sha256", {}) or {}
        url = cfg.get("base_url", emocf.BASE_URL)
        index = get(f"{url}/{emocf.INDEX}", base / emocf.INDEX, sha256=checks.get(emocf.INDEX))
        # plan the items from the labels alone, then fetch only their audio
        clips, _, _ = emocf.plan(index.parent, cfg, seed)
        for clip in clips:
            rel = clip.source.relative_to(index.parent).as_posix()
            get(f"{url}/{rel}", base / rel, sha256=checks.get(rel))
        root = base
    elif name == "voxceleb1":
        for i, arc in enumerate(cfg.get("archives", [])):
            extract_once(Path(arc), base / f"extracted{i}")
        root = base / "extracted0" if cfg.get("archives") else None
        if root is None:
            raise LabelError("datasets.voxceleb1.source=download needs `archives` (the gated "
                             "VoxCeleb1 audio archives you downloaded yourself)")
        if len(cfg["archives"]) > 1:  # merge: later archives extend the first tree
            for extra in range(1, len(cfg["archives"])):
                _merge_tree(base / f"extracted{extra}", root)
        get(cfg.get("trial_list_url", voxceleb.TRIAL_LIST_URL), base / "veri_test2.txt",
            sha256=cfg.get("trial_list_sha256"))
    elif name == "od3":
        split = cfg.get("split", "test")
        url = cfg.get("base_url", od3.BASE_URL)
        get(f"{url}/od3_{split}.jsonl", base / f"od3_{split}.jsonl",
            sha256=(cfg.get("sha256", {}) or {}).get(f"od3_{split}.jsonl"))
        if not _od3_audio_present(base, cfg, seed):
            _od3_stream_audio(base, cfg, seed, url, kw["timeout_s"])
        root = base
    else:
        raise ValueError(f"unknown real dataset {name!r}")
    return {"dataset": name, "root": str(root), "files": receipts}


def _merge_tree(src: Path, dst: Path) -> None:
    for f in src.rglob("*"):
        if f.is_file():
            target = dst / f.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                os.link(f, target)


def _od3_audio_present(base: Path, cfg: Mapping[str, Any], seed: int) -> bool:
    clips, _, _ = od3.specs(base, cfg, seed)
    return all(c.source.is_file() for c in clips)


def _od3_stream_audio(base: Path, cfg: Mapping[str, Any], seed: int, url: str,
                      timeout: float):
    """Stream `audio.tar.gz` once and keep only the sampled dialogues' turn files."""
    clips, table, summary = od3.specs(base, cfg, seed)
    wanted = {f"audio/{c.source.relative_to(base / 'audio').as_posix()}" for c in clips}
    wanted |= {w[len("audio/"):] for w in wanted}  # archives with or without the audio/ prefix
    with httpx.stream("GET", f"{url}/audio.tar.gz", timeout=timeout,
                      follow_redirects=True) as resp:
        resp.raise_for_status()
        got = stream_extract_tar(_IterStream(resp.iter_bytes(1 << 20)), base / "_audio_stream",
                                 wanted, label=f"{url}/audio.tar.gz")
    for name in got:
        rel = name[len("audio/"):] if name.startswith("audio/") else name
        target = base / "audio" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(base / "_audio_stream" / name, target)
    missing = [c.source for c in clips if not c.source.is_file()]
    if missing:
        raise LabelError(f"OD3 audio.tar.gz lacked {len(missing)} sampled turn files, "
                         f"e.g. {missing[:3]}")
    return clips, table, summary


class _IterStream:
    """A minimal read()-able file object over an iterator of byte chunks."""

    def __init__(self, chunks):
        self._it, self._buf = iter(chunks), b""

    def read(self, n: int = -1) -> bytes:
        while n < 0 or len(self._buf) < n:
            try:
                self._buf += next(self._it)
            except StopIteration:
                break
        if n < 0:
            out, self._buf = self._buf, b""
        else:
            out, self._buf = self._buf[:n], self._buf[n:]
        return out


def resolve_root(name: str, cfg: Mapping[str, Any], receipt: str | os.PathLike | None) -> Path:
    if cfg.get("source") == "local_dir":
        root = Path(cfg.get("local_dir") or "")
        if not cfg.get("local_dir") or not root.is_dir():
            raise LabelError(f"datasets.{name}.local_dir: {str(root)!r} is not a folder")
        return root
    if receipt is None:
        raise LabelError(f"datasets.{name}.source={cfg.get('source')!r}: nothing to ingest")
    return Path(json.loads(Path(receipt).read_text(encoding="utf-8"))["root"])


def ingest(name: str, root: str | os.PathLike, out_dir: str | os.PathLike,
           cfg: Mapping[str, Any], *, seed: int, cache_dir: str | os.PathLike,
           threads: int = 1, workdir: str | os.PathLike = ".",
           validate_manifest: bool = True) -> dict[str, Path]:
    """Parse the official layout under `root` and write the dataset into `out_dir`."""
    root, out_dir = Path(root), Path(out_dir)
    tables: dict[str, Any] = {}
    if name == "ravdess":
        specs, summary = ravdess.specs(root, cfg, seed)
    elif name == "fleurs":
        specs, summary = fleurs.specs(root, cfg, seed, Path(cache_dir) / "extracted" / "fleurs")
    elif name == "bvcc":
        specs, summary = bvcc.specs(root, cfg, seed)
    elif name == "voxceleb1":
        trial_list = Path(cfg.get("trial_list") or root / "veri_test2.txt")
        specs, tables["trials.tsv"], summary = voxceleb.specs(root, trial_list, cfg, seed)
    elif name == "emocf":
        specs, tables["items.tsv"], summary = emocf.specs(root, cfg, seed)
    elif name == "od3":
        specs, tables["dialogues.tsv"], summary = od3.specs(root, cfg, seed)
    else:
        raise ValueError(f"unknown real dataset {name!r}")
    manifest = build_manifest(specs, out_dir, Path(cache_dir) / "audio16k", workdir=workdir,
                              threads=threads, attr_columns=ATTR_COLUMNS[name])
    if name == "bvcc":
        tables["pairs.tsv"] = bvcc.pairs(manifest, cfg, seed)
        summary["n_pairs"] = len(tables["pairs.tsv"])
    if name == "fleurs":
        lo, hi = float(cfg.get("min_duration_s", 3.0)), float(cfg.get("max_duration_s", 15.0))
        bad = manifest[(manifest.duration_s < lo - 0.05) | (manifest.duration_s > hi + 0.05)]
        if len(bad):
            r = bad.iloc[0]
            raise LabelError(f"{r.orig_path}: duration {r.duration_s:.2f}s disagrees with the "
                             f"TSV num_samples (outside {lo}-{hi}s)")
    summary["byte_identical_clips"] = duplicate_clips(manifest, name)
    summary.setdefault("split_policy", "none (evaluation only: every clip is test)")
    tables["splits.tsv"] = split_table(manifest, summary["split_policy"])
    summary["source"] = cfg.get("source")
    summary["root"] = str(root)
    return write_outputs(out_dir, manifest, LICENSES[name], tables=tables, summary=summary,
                         dataset=name, validate_manifest=validate_manifest,
                         workdir=workdir)


__all__ = ["ATTR_COLUMNS", "LICENSES", "REAL_DATASETS", "SYNTH_COUNTERPART", "ClipSpec",
           "ingest", "prepare_download", "resolve_root"]

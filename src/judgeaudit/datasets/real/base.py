"""Shared ingest machinery for the real corpora: per-clip rows in the common
manifest schema, the derived 16 kHz mono copies, licence files and writing.

A corpus module parses its official layout into `ClipSpec`s (source file, clip
id, speaker, split, attribute columns); `build_manifest` probes and hashes every
source file, makes (or reuses) the 16 kHz mono copy the study works on and
returns the manifest frame. Columns: the common ones (`path`, `sha256`,
`duration_s`, `sample_rate`, `channels` describe the derived copy), the
attribute columns, then `orig_path`, `orig_sha256`, `orig_format`,
`orig_sample_rate`, `orig_channels` describing the corpus file.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.io import sha256_file, write_json_atomic, write_tsv_atomic

from .audio import DERIVATION, AudioError, derive, probe

log = logging.getLogger("judgeaudit.datasets.real")

COMMON_COLUMNS = ["clip_id", "path", "sha256", "duration_s", "sample_rate", "channels",
                  "speaker", "split"]
ORIG_COLUMNS = ["orig_path", "orig_sha256", "orig_format", "orig_sample_rate", "orig_channels"]
EMOTIONS = ("neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised")


class LabelError(ValueError):
    """A label file (or filename) that cannot be parsed; names file and line."""


@dataclass
class ClipSpec:
    clip_id: str
    source: Path
    speaker: str
    split: str
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class License:
    name: str
    license: str
    url: str
    citation: str
    non_commercial: bool | None
    notes: str = ""

    def to_json(self) -> dict[str, Any]:
        flag = {True: "non-commercial use only", False: "commercial use permitted",
                None: "licence not verified: check before any commercial use"}
        return {
            "dataset": self.name, "license": self.license, "url": self.url,
            "citation": self.citation, "non_commercial": self.non_commercial,
            "commercial_use": flag[self.non_commercial], "notes": self.notes,
        }


def rel_or_abs(path: Path, root: Path) -> str:
    """`path` relative to the working directory when inside it, else absolute."""
    path = Path(os.path.abspath(path))
    try:
        return str(path.relative_to(Path(os.path.abspath(root))))
    except ValueError:
        return str(path)


def build_manifest(
    specs: Sequence[ClipSpec],
    out_dir: str | os.PathLike,
    cache_dir: str | os.PathLike,
    *,
    workdir: str | os.PathLike = ".",
    threads: int = 1,
    attr_columns: Sequence[str] = (),
) -> pd.DataFrame:
    """Probe, hash and derive every clip; `out_dir/audio16k/<clip_id>.wav` holds the
    16 kHz mono copies. Raises AudioError naming the first bad clip."""
    out_dir, workdir = Path(out_dir), Path(workdir)
    seen: dict[str, Path] = {}
    for s in specs:
        if s.clip_id in seen:
            raise LabelError(f"duplicate clip id {s.clip_id!r}: {seen[s.clip_id]} and {s.source}")
        seen[s.clip_id] = s.source
    cache = Path(cache_dir)

    def one(spec: ClipSpec) -> dict[str, Any]:
        info = probe(spec.source)  # raises AudioError naming the path
        src_sha = sha256_file(spec.source)
        try:
            d = derive(spec.source, src_sha, cache, out_dir / "audio16k" / f"{spec.clip_id}.wav")
        except AudioError:
            raise
        except Exception as exc:  # noqa: BLE001 - report which clip broke, then stop
            raise AudioError(f"{spec.source}: could not derive 16 kHz copy ({exc})") from exc
        row = {
            "clip_id": spec.clip_id,
            "path": rel_or_abs(d.path, workdir),
            "sha256": d.sha256,
            "duration_s": round(d.duration_s, 4),
            "sample_rate": 16000,
            "channels": 1,
            "speaker": spec.speaker,
            "split": spec.split,
        }
        row.update(spec.attrs)
        row.update({
            "orig_path": rel_or_abs(spec.source, workdir),
            "orig_sha256": src_sha,
            "orig_format": f"{info.format}/{info.subtype}",
            "orig_sample_rate": info.sample_rate,
            "orig_channels": info.channels,
        })
        return row

    if threads > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            rows = list(pool.map(one, specs))
    else:
        rows = [one(s) for s in specs]
    attrs = list(attr_columns) or sorted({k for s in specs for k in s.attrs})
    frame = pd.DataFrame(rows, columns=[*COMMON_COLUMNS, *attrs, *ORIG_COLUMNS])
    log.info("built %d manifest rows (derived copies: %s)", len(frame), DERIVATION)
    return frame


def validate(manifest_path: str | os.PathLike, dataset: str,
             root: str | os.PathLike | None = None) -> Any:
    """Validate with the common validator (`judgeaudit.datasets.validate`)."""
    from judgeaudit.datasets.validate import validate_manifest

    return validate_manifest(manifest_path, dataset=dataset, root=root)


def write_outputs(
    out_dir: str | os.PathLike,
    manifest: pd.DataFrame,
    license_info: License,
    *,
    tables: Mapping[str, pd.DataFrame] | None = None,
    summary: Mapping[str, Any] | None = None,
    dataset: str,
    validate_manifest: bool = True,
    workdir: str | os.PathLike = ".",
) -> dict[str, Path]:
    """Write `manifest.tsv`, `LICENSE_INFO.json` and auxiliary tables atomically, then
    validate the manifest; returns the written paths."""
    out_dir = Path(out_dir)
    written = {}
    for name, frame in (tables or {}).items():
        p = out_dir / name
        write_tsv_atomic(p, frame)
        written[name] = p
    lic = {**license_info.to_json(), **(summary or {}), "n_clips": int(len(manifest))}
    write_json_atomic(out_dir / "LICENSE_INFO.json", lic)
    written["LICENSE_INFO.json"] = out_dir / "LICENSE_INFO.json"
    mpath = out_dir / "manifest.tsv"
    write_tsv_atomic(mpath, manifest)
    written["manifest.tsv"] = mpath
    if validate_manifest:
        try:
            validate(mpath, dataset, root=workdir)
        except Exception:
            mpath.unlink(missing_ok=True)  # never leave an invalid manifest behind
            raise
    return written


def seeded_rng(seed: int, *names: str):
    """A numpy Generator derived from the master seed and a purpose string."""
    import hashlib

    import numpy as np

    digest = hashlib.sha256(":".join([str(seed), *names]).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def read_lines(path: Path) -> Iterable[tuple[int, str]]:
    if not path.is_file():
        raise LabelError(f"{path}: label file missing")
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.strip():
                yield lineno, line.rstrip("\n").rstrip("\r")

"""Shared ingest machinery for the real corpora: per-clip rows in the common
manifest schema, the derived 16 kHz mono copies, licence files and writing.

A corpus module parses its official layout into `ClipSpec`s (source file, clip
id, speaker, split, attribute columns); `build_manifest` probes and hashes every
source file, makes (or reuses) the 16 kHz mono copy the study works on and
returns the manifest frame. Columns: the common ones (`path`, `sha256`,
`duration_s`, `sample_rate`, `channels` describe the derived copy), the
attribute columns, then `orig_path`, `orig_sha256`, `orig_format`,
`orig_sample_rate`, `orig_channels` describing the corpus file.

Splits: every corpus records how its train/test split was made (`split_policy`:
`official` = the corpus's own split, `seeded_speaker_disjoint` = a seeded split
by speaker made at ingest) in LICENSE_INFO.json and `splits.tsv` (one row per
speaker); `check_speaker_disjoint` refuses a split that puts a speaker on both
sides, naming the speakers.
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

from judgeaudit.datasets.schema import COMMON_COLUMNS
from judgeaudit.io import sha256_file, write_json_atomic, write_tsv_atomic

from .audio import DERIVATION, AudioError, derive, probe

log = logging.getLogger("judgeaudit.datasets.real")

ORIG_COLUMNS = ["orig_path", "orig_sha256", "orig_format", "orig_sample_rate", "orig_channels"]


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


def duplicate_clips(manifest: pd.DataFrame, name: str) -> list[list[str]]:
    """Groups of clip ids whose corpus files are byte-identical (same `orig_sha256`),
    each logged as a WARNING naming the clips and files: a corpus may ship the same
    recording twice under two names (RAVDESS has one such pair), which then counts
    as two independent clips. The clips are kept (the corpus is ingested as
    published); the groups are recorded in LICENSE_INFO.json."""
    if manifest.empty or "orig_sha256" not in manifest.columns:
        return []
    groups = []
    for sha, g in manifest.groupby("orig_sha256", sort=True):
        if len(g) > 1:
            ids = sorted(g["clip_id"].astype(str))
            groups.append(ids)
            log.warning("%s: %d byte-identical clips (sha256 %s): %s (files %s); they are "
                        "kept as published but are one recording", name, len(ids), sha[:12],
                        ids, sorted(g["orig_path"].astype(str)))
    return groups


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


# ---- splits -------------------------------------------------------------------------
#: How a corpus's train/test split was made (recorded in LICENSE_INFO.json and splits.tsv).
SPLIT_POLICIES = ("official", "seeded_speaker_disjoint")


def seeded_speaker_split(speakers: Iterable[str], test_fraction: float, seed: int,
                         *names: str) -> dict[str, str]:
    """A seeded speaker-disjoint split: round(test_fraction * n) speakers (at least one,
    and at least one left for train when there are two or more) go to test."""
    spk = sorted(set(speakers))
    if not spk:
        return {}
    rng = seeded_rng(seed, *names, "speaker-split")
    n_test = int(round(len(spk) * test_fraction))
    n_test = min(max(n_test, 1), len(spk) - 1) if len(spk) > 1 else 1
    test = {spk[int(i)] for i in rng.permutation(len(spk))[:n_test]}
    return {s: "test" if s in test else "train" for s in spk}


def shared_speakers(specs: Iterable[ClipSpec]) -> list[str]:
    """Speakers that have clips in both the train and the test split."""
    by: dict[str, set[str]] = {}
    for s in specs:
        by.setdefault(s.speaker, set()).add(s.split)
    return sorted(k for k, v in by.items() if {"train", "test"} <= v)


def check_speaker_disjoint(specs: Sequence[ClipSpec], what: str) -> None:
    """LabelError naming the speakers found in both train and test."""
    both = shared_speakers(specs)
    if both:
        raise LabelError(
            f"{what}: {len(both)} speaker(s) have clips in both train and test, e.g. "
            f"{both[:10]}; the study needs speaker-disjoint splits (use "
            "split_policy: auto or seeded for a seeded speaker-disjoint split)")


def split_summary(specs: Sequence[ClipSpec], policy: str, **extra: Any) -> dict[str, Any]:
    """What goes into LICENSE_INFO.json about the split."""
    out: dict[str, Any] = {"split_policy": policy}
    for split in ("train", "test"):
        spk = sorted({s.speaker for s in specs if s.split == split})
        out[f"n_{split}_speakers"] = len(spk)
        out[f"n_{split}_clips"] = sum(1 for s in specs if s.split == split)
    out.update(extra)
    return out


def split_table(manifest: pd.DataFrame, policy: str) -> pd.DataFrame:
    """`splits.tsv`: one row per speaker with its split, clip count and the policy."""
    if manifest.empty:
        return pd.DataFrame(columns=["speaker", "split", "n_clips", "split_policy"])
    g = (manifest.groupby(["speaker", "split"], sort=True).size().rename("n_clips")
         .reset_index())
    g["split_policy"] = policy
    return g


def apply_split_policy(specs: list[ClipSpec], policy: str, test_fraction: float, seed: int,
                       name: str, *, test_only: bool = False
                       ) -> tuple[list[ClipSpec], dict[str, Any]]:
    """Give `specs` (carrying the corpus's official split, if any) their final split.

    policy `official`: keep the official split; a speaker on both sides is an error
    naming them. `seeded`: a seeded speaker-disjoint split (`test_fraction` of the
    speakers held out). `auto`: official when it is speaker-disjoint and has both
    train and test speakers, otherwise seeded -- with a WARNING saying why (the
    reason is recorded in the summary as `split_fallback`).

    `test_only`: the copy is configured without a train side (e.g. FLEURS
    `train_split: ""`, for a pretrained specialist such as Whisper LID that trains on
    nothing here): `official` and `auto` keep every clip in test, evaluated whole,
    instead of refusing the copy or moving clips into a train split nothing uses."""
    if policy not in ("auto", "official", "seeded"):
        raise LabelError(f"datasets.{name}.split_policy: {policy!r} is not one of "
                         "auto, official, seeded")
    reason = ""
    if policy == "official":
        check_speaker_disjoint(specs, f"{name} official split")
    elif policy == "auto":
        both = shared_speakers(specs)
        splits = {s.split for s in specs}
        if both:
            reason = (f"the official split puts {len(both)} speaker(s) on both sides "
                      f"(e.g. {both[:5]})")
        elif not {"train", "test"} <= splits and not (test_only and splits == {"test"}):
            reason = f"the official split has only {sorted(splits)} clips"
    if policy == "seeded" or reason:
        if reason:
            log.warning("%s: %s; using a seeded speaker-disjoint split instead "
                        "(test_fraction=%s)", name, reason, test_fraction)
        assign = seeded_speaker_split((s.speaker for s in specs), test_fraction, seed, name)
        for s in specs:
            s.split = assign[s.speaker]
        used = "seeded_speaker_disjoint"
    else:
        used = "official"
    check_speaker_disjoint(specs, f"{name} {used} split")  # holds by construction
    sides = {side: sorted({s.speaker for s in specs if s.split == side})
             for side in ("train", "test")}
    empty = [side for side, spk in sides.items() if not spk]
    if test_only and used == "official" and empty == ["train"]:
        log.info("%s: no train split configured: all %d clips are test (evaluation only, "
                 "for a pretrained specialist)", name, len(specs))
        return specs, split_summary(specs, used, test_only=True)
    if empty:
        every = sorted({s.speaker for s in specs})
        raise LabelError(
            f"{name} (split_policy: {policy}, applied: {used}): no {' and no '.join(empty)} "
            f"speakers ({len(sides['train'])} train, {len(sides['test'])} test of "
            f"{len(every)}: {every[:10]}{' ...' if len(every) > 10 else ''}); a specialist "
            "needs training speakers and the study needs held-out ones (add speakers or "
            "choose another split_policy)")
    return specs, split_summary(specs, used, **({"split_fallback": reason} if reason else {}))

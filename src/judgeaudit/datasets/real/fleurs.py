"""FLEURS (Conneau et al. 2022), Hugging Face `google/fleurs` file layout:

    data/<config>/<split>.tsv              id, file_name, raw_transcription,
                                           transcription, phonemes, num_samples, gender
    data/<config>/audio/<split>.tar.gz     <split>/<file_name> (16 kHz WAV)

`local_dir` may hold the archive or its extracted `audio/<split>/` folder. The
download fetches exactly these two files per configured language from
`<base_url>/data/<config>/...` (the hub's `resolve/main` URLs).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .archive import extract_once
from .base import ClipSpec, LabelError, License, read_lines, seeded_rng

LICENSE = License(
    name="FLEURS",
    license="CC BY 4.0",
    url="https://huggingface.co/datasets/google/fleurs",
    citation=(
        "Conneau A, Ma M, Khanuja S, Zhang Y, Axelrod V, Dalmia S, Riesa J, Rivera C, Bapna A "
        "(2022). FLEURS: Few-shot Learning Evaluation of Universal Representations of Speech. "
        "arXiv:2205.12446"
    ),
    non_commercial=False,
)
BASE_URL = "https://huggingface.co/datasets/google/fleurs/resolve/main"
N_FIELDS = 7


def remote_files(cfg: Mapping[str, Any]) -> list[dict[str, str]]:
    """Files to download: (url, relative destination) per configured language."""
    split = cfg.get("split", "test")
    out = []
    for _lang, conf in sorted(cfg["languages"].items()):
        for rel in (f"data/{conf}/{split}.tsv", f"data/{conf}/audio/{split}.tar.gz"):
            out.append({"url": f"{cfg.get('base_url', BASE_URL)}/{rel}", "dest": rel})
    return out


def parse_tsv(path: Path) -> list[dict[str, Any]]:
    """Rows of a FLEURS split TSV; LabelError names file and line."""
    rows = []
    for lineno, line in read_lines(path):
        fields = line.split("\t")
        if len(fields) != N_FIELDS:
            raise LabelError(
                f"{path}:{lineno}: expected {N_FIELDS} tab-separated fields (id, file_name, "
                f"raw_transcription, transcription, phonemes, num_samples, gender), "
                f"got {len(fields)}"
            )
        try:
            num_samples = int(fields[5])
        except ValueError:
            raise LabelError(f"{path}:{lineno}: num_samples {fields[5]!r} is not an integer") from None
        if not fields[1].strip():
            raise LabelError(f"{path}:{lineno}: empty file_name")
        rows.append({"id": fields[0], "file_name": fields[1], "raw_transcription": fields[2],
                     "num_samples": num_samples, "gender": fields[6].strip().lower()})
    return rows


def audio_dir(root: Path, conf: str, split: str, work: Path) -> Path:
    base = root / "data" / conf / "audio"
    extracted = base / split
    if extracted.is_dir():
        return extracted
    tar = base / f"{split}.tar.gz"
    if tar.is_file():
        return extract_once(tar, work / conf / split) / split
    raise LabelError(f"{base}: neither {split}/ nor {split}.tar.gz found (FLEURS layout)")


def specs(root: str | Path, cfg: Mapping[str, Any], seed: int, work: Path
          ) -> tuple[list[ClipSpec], dict]:
    root, split = Path(root), cfg.get("split", "test")
    lo, hi = float(cfg.get("min_duration_s", 3.0)), float(cfg.get("max_duration_s", 15.0))
    n_per = int(cfg.get("n_per_language", 0))
    sr = int(cfg.get("native_sample_rate", 16000))
    out, summary = [], {"per_language": {}}
    for lang, conf in sorted(cfg["languages"].items()):
        tsv = root / "data" / conf / f"{split}.tsv"
        rows = parse_tsv(tsv)
        adir = audio_dir(root, conf, split, work)
        keep = [r for r in rows if lo <= r["num_samples"] / sr <= hi]
        # One recording per file; a sentence id may have several speakers' recordings.
        keep = sorted({r["file_name"]: r for r in keep}.values(), key=lambda r: r["file_name"])
        if n_per and len(keep) > n_per:
            rng = seeded_rng(seed, "fleurs", lang)
            idx = sorted(rng.choice(len(keep), size=n_per, replace=False).tolist())
            keep = [keep[i] for i in idx]
        for r in keep:
            stem = Path(r["file_name"]).stem
            out.append(ClipSpec(
                clip_id=f"fleurs_{lang}_{stem}",
                source=adir / r["file_name"],
                # FLEURS publishes no speaker ids: one pseudo-speaker per recording.
                speaker=f"fleurs_{lang}_{stem}",
                split="test" if split == "test" else "train",
                attrs={"language": lang, "transcript": r["raw_transcription"],
                       "sentence_id": r["id"], "gender": r["gender"], "fleurs_config": conf},
            ))
        summary["per_language"][lang] = {"config": conf, "rows": len(rows), "kept": len(keep)}
    return out, summary


ATTR_COLUMNS = ["language", "transcript", "sentence_id", "gender", "fleurs_config"]

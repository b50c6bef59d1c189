"""FLEURS (Conneau et al. 2022), Hugging Face `google/fleurs` file layout:

    data/<config>/<split>.tsv              id, file_name, raw_transcription,
                                           transcription, phonemes, num_samples, gender
    data/<config>/audio/<split>.tar.gz     <split>/<file_name> (16 kHz WAV)

`local_dir` may hold the archive or its extracted `audio/<split>/` folder. The
download fetches exactly these two files per configured language and official
split from `<base_url>/data/<config>/...` (the hub's `resolve/main` URLs).

Splits: the official FLEURS split named by `split` (default test) becomes the
study's test split and the one named by `train_split` (default train; "" = none)
its train split (`split_policy: official`). FLEURS publishes no speaker ids, so
each recording is its own pseudo-speaker; the corpus authors built the official
splits speaker-disjoint, which is why they are used rather than a re-split (a
seeded split of pseudo-speakers could not keep a real speaker on one side).
`split_policy: seeded` re-splits the ingested recordings instead. A test-only copy
(`train_split: ""`, e.g. for the pretrained Whisper LID, which trains on nothing
here) is evaluated whole: every clip stays test under `official` and `auto`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .archive import extract_once
from .base import ClipSpec, LabelError, License, apply_split_policy, read_lines, seeded_rng

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


def official_splits(cfg: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(official FLEURS split, study split) pairs to ingest."""
    test = cfg.get("split", "test")
    train = cfg.get("train_split", "train")
    if train and train == test:
        raise LabelError(f"datasets.fleurs: train_split and split are both {test!r}; "
                         "they must name different official splits")
    return [(test, "test")] + ([(train, "train")] if train else [])


def remote_files(cfg: Mapping[str, Any]) -> list[dict[str, str]]:
    """Files to download: (url, relative destination) per language and official split."""
    out = []
    for _lang, conf in sorted(cfg["languages"].items()):
        for split, _ in official_splits(cfg):
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
    root = Path(root)
    lo, hi = float(cfg.get("min_duration_s", 3.0)), float(cfg.get("max_duration_s", 15.0))
    sr = int(cfg.get("native_sample_rate", 16000))
    out, summary = [], {"per_language": {}}
    for lang, conf in sorted(cfg["languages"].items()):
        per: dict[str, Any] = {"config": conf}
        for split, study_split in official_splits(cfg):
            n_per = int(cfg.get("n_per_language" if study_split == "test"
                                else "n_train_per_language", 0))
            tsv = root / "data" / conf / f"{split}.tsv"
            rows = parse_tsv(tsv)
            adir = audio_dir(root, conf, split, work)
            keep = [r for r in rows if lo <= r["num_samples"] / sr <= hi]
            # One recording per file; a sentence id may have several speakers' recordings.
            keep = sorted({r["file_name"]: r for r in keep}.values(),
                          key=lambda r: r["file_name"])
            if n_per and len(keep) > n_per:
                names = ("fleurs", lang) if study_split == "test" else ("fleurs", lang, split)
                rng = seeded_rng(seed, *names)
                idx = sorted(rng.choice(len(keep), size=n_per, replace=False).tolist())
                keep = [keep[i] for i in idx]
            for r in keep:
                stem = Path(r["file_name"]).stem
                out.append(ClipSpec(
                    clip_id=f"fleurs_{lang}_{stem}",
                    source=adir / r["file_name"],
                    # FLEURS publishes no speaker ids: one pseudo-speaker per recording.
                    speaker=f"fleurs_{lang}_{stem}",
                    split=study_split,
                    attrs={"language": lang, "transcript": r["raw_transcription"],
                           "sentence_id": r["id"], "gender": r["gender"],
                           "fleurs_config": conf},
                ))
            per[split] = {"rows": len(rows), "kept": len(keep), "study_split": study_split}
        summary["per_language"][lang] = per
    policy = cfg.get("split_policy", "auto")
    out, split_info = apply_split_policy(out, policy, float(cfg.get("test_fraction", 0.25)),
                                         seed, "fleurs",
                                         test_only=not cfg.get("train_split", "train"))
    summary.update(split_info)
    return out, summary


ATTR_COLUMNS = ["language", "transcript", "sentence_id", "gender", "fleurs_config"]

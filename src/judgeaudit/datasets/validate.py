"""Manifest validation: every row checked, errors name file, clip and reason.

    from judgeaudit.datasets.validate import validate_manifest
    validate_manifest("data/synth_emotion/manifest.tsv")      # raises ManifestError

or `python -m judgeaudit.datasets.validate data/*/manifest.tsv`.

Checks: required columns (common + the dataset's, `judgeaudit.datasets.schema`),
unique non-empty clip ids, every file exists (paths relative to `root`, by
default the folder that holds `data/`) and resolves, symlinks followed, inside
the project's data/ or results/ (or an extra root given: a configured corpus
folder; `audio_roots`), its sha256 matches, durations and
sample rates positive, labels inside their vocabularies, scores within 1-5,
splits speaker-disjoint, and auxiliary tables (pairs/trials/items/dialogues)
complete and referring to clips of the manifest.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from judgeaudit.datasets import schema
from judgeaudit.io import sha256_file

MAX_LISTED = 10


class ManifestError(ValueError):
    """A manifest (or its auxiliary table) that fails validation.

    Attributes: `path` (file), `clip_id` (offending row, None for file-level
    problems), `reason`, and `problems` (every (path, clip_id, reason) found)."""

    def __init__(self, problems: list[tuple[str, str | None, str]]):
        self.problems = problems
        self.path, self.clip_id, self.reason = problems[0]
        lines = [_fmt(p) for p in problems[:MAX_LISTED]]
        more = len(problems) - MAX_LISTED
        if more > 0:
            lines.append(f"... and {more} more problem(s)")
        super().__init__("invalid manifest:\n  " + "\n  ".join(lines))


def _fmt(problem: tuple[str, str | None, str]) -> str:
    path, clip, reason = problem
    return f"{path}: clip '{clip}': {reason}" if clip is not None else f"{path}: {reason}"


def _read_tsv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def _default_root(manifest: Path) -> Path:
    # manifests live at <root>/data/<dataset>/manifest.tsv
    parents = manifest.resolve().parents
    return parents[2] if len(parents) > 2 else Path.cwd()


def audio_roots(root: str | os.PathLike, extra: Iterable[str | os.PathLike] = ()) -> list[Path]:
    """The folders audio may live in: `<root>/data`, `<root>/results` and `extra`
    (configured corpus folders), each resolved (symlinks followed)."""
    base = Path(root)
    out = [base / "data", base / "results"] + [Path(e) for e in extra if str(e)]
    return [Path(os.path.realpath(p if p.is_absolute() else base / p)) for p in out]


def config_audio_roots(config: dict, root: str | os.PathLike = ".") -> list[Path]:
    """`audio_roots` of a run: data/, results/ and every corpus `local_dir` configured."""
    extra = [spec.get("local_dir") for spec in (config.get("datasets") or {}).values()
             if isinstance(spec, dict) and spec.get("local_dir")]
    return audio_roots(root, extra)


def outside_roots(file: str | os.PathLike, roots: Iterable[Path]) -> str | None:
    """None when `file` resolves (symlinks followed) inside one of `roots`, else the
    reason naming the path it resolves to and the roots."""
    real = Path(os.path.realpath(file))
    roots = list(roots)
    if any(real.is_relative_to(r) for r in roots):
        return None
    return (f"'{file}' resolves to {real}, outside the audio roots "
            f"{[str(r) for r in roots]} (audio must lie in the project's data/ or "
            f"results/ or a configured corpus folder)")


def _number(value: str) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def validate_manifest(
    path: str | os.PathLike,
    dataset: str | None = None,
    root: str | os.PathLike | None = None,
    check_hashes: bool = True,
    check_aux: bool = True,
    extra_roots: Iterable[str | os.PathLike] = (),
) -> pd.DataFrame:
    """Validate one manifest; return it (as strings) or raise ManifestError.

    `dataset` defaults to the name of the manifest's folder; `root` (what the
    `path` column is relative to) defaults to the folder above `data/`. Every
    audio file must resolve inside `audio_roots(root, extra_roots)`."""
    path = Path(path)
    where = str(path)
    if not path.is_file():
        raise ManifestError([(where, None, "manifest file does not exist")])
    dataset = dataset or path.parent.name
    root = Path(root) if root is not None else _default_root(path)
    roots = audio_roots(root, extra_roots)
    try:
        frame = _read_tsv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ManifestError([(where, None, f"not a readable TSV ({exc})")]) from exc

    required = schema.columns_for(dataset)
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ManifestError([(where, None, f"missing required column(s) {missing} "
                                           f"(dataset '{dataset}' needs {list(required)})")])
    if frame.empty:
        raise ManifestError([(where, None, "manifest has no rows")])

    problems: list[tuple[str, str | None, str]] = []
    seen: set[str] = set()
    for i, row in frame.iterrows():
        clip = row["clip_id"] or f"<row {i + 2}>"
        bad = problems.append
        if not row["clip_id"]:
            bad((where, clip, "empty clip_id"))
        elif row["clip_id"] in seen:
            bad((where, clip, "duplicate clip_id"))
        seen.add(row["clip_id"])
        file = Path(row["path"])
        file = file if file.is_absolute() else root / file
        outside = outside_roots(file, roots) if row["path"] else None
        if outside:
            bad((where, clip, f"audio file {outside}"))
        elif not row["path"] or not file.is_file():
            bad((where, clip, f"audio file '{row['path']}' does not exist (under {root})"))
        elif check_hashes and sha256_file(file) != row["sha256"]:
            bad((where, clip, f"sha256 mismatch for '{row['path']}' (manifest "
                              f"{row['sha256'][:12]}..., file {sha256_file(file)[:12]}...)"))
        dur = _number(row["duration_s"])
        if dur is None or dur <= 0:
            bad((where, clip, f"duration_s must be a positive number, got '{row['duration_s']}'"))
        sr = _number(row["sample_rate"])
        if sr is None or sr <= 0 or sr != int(sr):
            bad((where, clip, f"sample_rate must be a positive integer, got '{row['sample_rate']}'"))
        ch = _number(row["channels"])
        if ch is None or ch < 1 or ch != int(ch):
            bad((where, clip, f"channels must be an integer >= 1, got '{row['channels']}'"))
        if not row["speaker"]:
            bad((where, clip, "empty speaker"))
        for col, vocab in schema.VOCABULARIES.items():
            if col in frame.columns and row[col] not in vocab:
                shown = sorted(vocab) if len(vocab) <= 12 else f"{len(vocab)} codes"
                bad((where, clip, f"{col} '{row[col]}' not in vocabulary {shown}"))
        if "score" in frame.columns:
            s = _number(row["score"])
            lo, hi = schema.SCORE_RANGE
            if s is None or not lo <= s <= hi:
                bad((where, clip, f"score must be within {lo}-{hi}, got '{row['score']}'"))

    splits = frame.groupby("speaker")["split"].agg(lambda s: sorted(set(s)))
    for speaker, used in splits.items():
        if len(used) > 1:
            rows = frame[frame["speaker"] == speaker]
            counts = rows["split"].value_counts()
            minority = counts.idxmin()
            clip = rows.loc[rows["split"] == minority, "clip_id"].iloc[0]
            problems.append((where, clip, f"speaker '{speaker}' appears in splits {used} "
                                          "(splits must be speaker-disjoint)"))
    if "source_clip" in frame.columns:
        for clip, src in zip(frame["clip_id"], frame["source_clip"], strict=True):
            if src not in seen:
                problems.append((where, clip, f"source_clip '{src}' is not a clip of the "
                                              "manifest"))
    if check_aux and not problems:
        problems += _check_aux(path, dataset, frame, root, check_hashes, roots)
    if problems:
        raise ManifestError(problems)
    return frame


def _check_aux(path: Path, dataset: str, frame: pd.DataFrame, root: Path,
               check_hashes: bool, roots: list[Path]) -> list[tuple[str, str | None, str]]:
    problems = []
    clips = set(frame["clip_id"])
    for name, cols in schema.AUX_TABLES.get(dataset, {}).items():
        aux_path = path.parent / name
        where = str(aux_path)
        if not aux_path.is_file():
            problems.append((where, None, f"auxiliary table of '{dataset}' does not exist"))
            continue
        aux = _read_tsv(aux_path)
        missing = [c for c in cols if c not in aux.columns]
        if missing:
            problems.append((where, None, f"missing required column(s) {missing}"))
            continue
        key = cols[0]
        for _, row in aux.iterrows():
            for col in schema.AUX_CLIP_COLUMNS:
                if col in aux.columns and row[col] not in clips:
                    problems.append((where, row[col], f"{col} of {key} '{row[key]}' is not a "
                                                      "clip of the manifest"))
            if "path" in aux.columns and "sha256" in aux.columns:
                file = root / row["path"]
                outside = outside_roots(file, roots)
                if outside:
                    problems.append((where, row.get("clip_id"), f"audio file {outside}"))
                elif not file.is_file():
                    problems.append((where, row.get("clip_id"), f"audio file '{row['path']}' "
                                                                "does not exist"))
                elif check_hashes and sha256_file(file) != row["sha256"]:
                    problems.append((where, row.get("clip_id"), "sha256 mismatch for "
                                                                f"'{row['path']}'"))
    return problems


validate = validate_manifest


def main(argv: Iterable[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m judgeaudit.datasets.validate MANIFEST.tsv ...", file=sys.stderr)
        return 2
    status = 0
    for manifest in args:
        try:
            frame = validate_manifest(manifest)
        except ManifestError as exc:
            print(exc, file=sys.stderr)
            status = 1
        else:
            print(f"{manifest}: ok ({len(frame)} clips)")
    return status


if __name__ == "__main__":
    raise SystemExit(main())

"""Rendering selection: k candidates per key line, the clearest one kept.

For every key line (a user turn whose emotion differs between A0 and A1) and each
emotion it is spoken in, the renderer produces `k` candidates. Each candidate is
scored by the emotion specialist (its probability of the target emotion) and by
two acoustic checks against a plain neutral reading of the same line and voice:
- pitch: median F0 (YIN, voiced frames) moves in the direction the emotion
  implies (EXPECTED below; 0 = no requirement) by at least `margin`;
- rate: words per second moves in the implied direction by at least `margin`.
The kept candidate is the one passing the most checks, ties broken by the
specialist score. Every candidate (kept or not) is logged with its scores.
Non-key turns are rendered once (candidate 0) in their emotion.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from judgeaudit.datasets.audio import wav_bytes, write_wav

log = logging.getLogger("judgeaudit.study_b.rendering")

# emotion -> (pitch direction, rate direction) relative to a neutral reading
EXPECTED: dict[str, tuple[int, int]] = {
    "neutral": (0, 0), "calm": (-1, -1), "happy": (1, 0), "sad": (-1, -1),
    "angry": (0, 1), "fearful": (1, 1), "disgust": (-1, -1), "surprised": (1, 0),
}
Score = Callable[[bytes], dict[str, float]]


def median_f0(x: np.ndarray, sr: int) -> float:
    """Median F0 (Hz) over voiced frames (YIN; frames above -35 dB re peak RMS)."""
    from judgeaudit.librosa_safe import librosa as _librosa

    librosa = _librosa()

    if len(x) < sr // 10:
        return float("nan")
    frame, hop = 1024, 256
    f0 = librosa.yin(x.astype(np.float32), fmin=60, fmax=500, sr=sr, frame_length=frame,
                     hop_length=hop)
    rms = librosa.feature.rms(y=x, frame_length=frame, hop_length=hop)[0]
    n = min(len(f0), len(rms))
    voiced = rms[:n] > rms.max() * 10 ** (-35 / 20)
    return float(np.median(f0[:n][voiced])) if voiced.any() else float("nan")


def words_per_second(text: str, x: np.ndarray, sr: int) -> float:
    dur = len(x) / sr
    return len(text.split()) / dur if dur > 0 else float("nan")


def check(direction: int, ratio: float, margin: float) -> bool:
    if direction == 0:
        return True
    if not np.isfinite(ratio):
        return False
    return (ratio - 1.0) * direction >= margin


def render_items(items: Sequence[dict], renderer, score: Score, out_dir: str | Path,
                 k: int, margin: float = 0.03, root: str | Path = ".") -> tuple[list[dict],
                                                                                list[dict]]:
    """Render every user turn of every item; return (renderings rows, candidate log rows).

    renderings: item_id, rendering (0/1), turn, emotion, path, sha256, duration_s.
    candidates: item_id, turn, emotion, candidate, path, sha256, spec_score, spec_label,
    f0_hz, f0_ratio, wps, rate_ratio, pitch_ok, rate_ok, accepted."""
    out_dir = Path(out_dir)
    rows: list[dict] = []
    cands: list[dict] = []
    root = Path(root)

    def rel(p: Path) -> str:
        try:
            return p.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return p.as_posix()

    for item in items:
        iid = item["item_id"]
        chosen: dict[tuple[int, str], dict] = {}
        for t in item["turns"]:
            if t["role"] != "user":
                continue
            for emo in sorted(set(t["emotions"])):
                if (t["turn"], emo) in chosen:
                    continue
                key = f"{iid}|t{t['turn']}"
                is_key = t["turn"] in item["key_turns"]
                n = k if is_key else 1
                ref_f0 = ref_wps = float("nan")
                pdir, rdir = EXPECTED.get(emo, (0, 0))
                if is_key and (pdir or rdir):
                    ref = renderer.render(t["text"], "neutral", item["voice"], -1, key)
                    ref_f0 = median_f0(ref.samples, ref.sample_rate)
                    ref_wps = words_per_second(t["text"], ref.samples, ref.sample_rate)
                best = None
                group = []
                for c in range(n):
                    r = renderer.render(t["text"], emo, item["voice"], c, key)
                    data = wav_bytes(r.samples, r.sample_rate)
                    path = out_dir / f"{iid}__t{t['turn']}__{emo}__c{c}.wav"
                    info = write_wav(path, r.samples, r.sample_rate)
                    scores = score(data) if is_key else {}
                    f0 = median_f0(r.samples, r.sample_rate) if is_key else float("nan")
                    wps = words_per_second(t["text"], r.samples, r.sample_rate)
                    f0_ratio = f0 / ref_f0 if np.isfinite(ref_f0) and ref_f0 > 0 else float("nan")
                    rate_ratio = wps / ref_wps if np.isfinite(ref_wps) and ref_wps > 0 \
                        else float("nan")
                    row = {
                        "item_id": iid, "turn": t["turn"], "emotion": emo, "candidate": c,
                        "key_line": is_key, "path": rel(path), "sha256": info["sha256"],
                        "duration_s": info["duration_s"],
                        "spec_score": float(scores.get(emo, np.nan)) if is_key else np.nan,
                        "spec_label": max(scores, key=scores.get) if scores else "",
                        "f0_hz": f0, "f0_ratio": f0_ratio, "wps": wps, "rate_ratio": rate_ratio,
                        "pitch_ok": check(pdir, f0_ratio, margin) if is_key else True,
                        "rate_ok": check(rdir, rate_ratio, margin) if is_key else True,
                        "accepted": False, "backend": r.meta.get("backend", ""),
                        "voice": r.meta.get("voice", ""),
                    }
                    group.append(row)
                    rank = (int(row["pitch_ok"]) + int(row["rate_ok"]),
                            0.0 if not np.isfinite(row["spec_score"]) else row["spec_score"], -c)
                    if best is None or rank > best[0]:
                        best = (rank, row)
                best[1]["accepted"] = True
                chosen[(t["turn"], emo)] = best[1]
                cands.extend(group)
        for t in item["turns"]:
            if t["role"] != "user":
                continue
            for v in (0, 1):
                c = chosen[(t["turn"], t["emotions"][v])]
                rows.append({"item_id": iid, "rendering": v, "turn": t["turn"],
                             "emotion": t["emotions"][v], "path": c["path"],
                             "sha256": c["sha256"], "duration_s": c["duration_s"]})
        log.info("rendered %s", iid)
    return rows, cands


def audio_map(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, int, int], tuple[str, str]]:
    """(item_id, rendering, turn) -> (path, sha256) from renderings rows."""
    return {(str(r["item_id"]), int(r["rendering"]), int(r["turn"])): (str(r["path"]),
                                                                        str(r["sha256"]))
            for r in rows}


__all__ = ["EXPECTED", "audio_map", "check", "median_f0", "render_items", "words_per_second"]

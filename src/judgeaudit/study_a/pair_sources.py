"""Build Study A pairs from manifests (any corpus with the manifest schema):
naturalness (score gap), cleanness (clean clip vs a degraded copy), speaker
similarity (reference + same-speaker clip vs different-speaker clip) and emotion
(neutral vs an emotional rendering by the same speaker).

Each pair names its sampling unit in `meta` (`cluster`, `cluster_unit`): the clean
source clip (cleanness), the reference speaker (speaker similarity), the speaker
(emotion); naturalness pairs draw clips at random, so each pair is its own unit."""

from __future__ import annotations

import pandas as pd

from judgeaudit.conditions.common import rng_for
from judgeaudit.study_a.pairwise import Clip, Pair

CLEAN_VALUES = ("clean", "none", "")


def _need(frame: pd.DataFrame, cols: set[str], where: str) -> None:
    missing = cols - set(frame.columns)
    if missing:
        raise ValueError(f"{where}: manifest lacks columns {sorted(missing)} "
                         f"(has {sorted(frame.columns)})")


def _clip(row) -> Clip:
    return Clip(str(row["clip_id"]), str(row["path"]), str(row["sha256"]))


def _split(frame: pd.DataFrame, split: str | None) -> pd.DataFrame:
    if split and "split" in frame.columns and (frame["split"] == split).any():
        frame = frame[frame["split"] == split]
    return frame.sort_values("clip_id").reset_index(drop=True)


def naturalness_pairs(manifest: pd.DataFrame, n: int, seed: int, min_gap: float = 1.0,
                      split: str | None = "test") -> list[Pair]:
    """Random pairs of clips whose `score` differs by >= min_gap; the higher wins."""
    _need(manifest, {"clip_id", "path", "sha256", "score"}, "naturalness pairs")
    m = _split(manifest, split)
    rng = rng_for("naturalness-pairs", seed)
    pairs: list[Pair] = []
    used: set[tuple[str, str]] = set()
    for _ in range(50 * max(n, 1)):
        if len(pairs) >= n or len(m) < 2:
            break
        i, j = rng.choice(len(m), size=2, replace=False)
        a, b = m.iloc[int(i)], m.iloc[int(j)]
        if abs(float(a["score"]) - float(b["score"])) < min_gap:
            continue
        key = tuple(sorted((str(a["clip_id"]), str(b["clip_id"]))))
        if key in used:
            continue
        used.add(key)
        better, worse = (a, b) if float(a["score"]) > float(b["score"]) else (b, a)
        pairs.append(Pair(f"nat-{key[0]}-{key[1]}", "naturalness", _clip(better), _clip(worse),
                          meta=(("score_better", float(better["score"])),
                                ("score_worse", float(worse["score"])))))
    if len(pairs) < n:
        raise ValueError(f"naturalness pairs: found {len(pairs)} of {n} pairs with a score "
                         f"gap >= {min_gap}")
    return pairs


def cleanness_pairs(manifest: pd.DataFrame, n: int, seed: int, split: str | None = "test"
                    ) -> list[Pair]:
    """A clean clip vs one degraded copy of it (`source_clip` points at the clean clip)."""
    _need(manifest, {"clip_id", "path", "sha256", "degradation", "source_clip"},
          "cleanness pairs")
    m = _split(manifest, split)
    deg = m["degradation"].fillna("").astype(str)
    clean = m[deg.isin(CLEAN_VALUES)].set_index("clip_id", drop=False)
    degraded = m[~deg.isin(CLEAN_VALUES) & m["source_clip"].astype(str).isin(clean.index)]
    rng = rng_for("cleanness-pairs", seed)
    pools = []
    for src, grp in degraded.groupby("source_clip", sort=True):
        order = rng.permutation(len(grp))
        pools.append((src, [grp.iloc[int(i)] for i in order]))
    total = sum(len(rows) for _, rows in pools)
    if total < n:
        raise ValueError(f"cleanness pairs: found {total} clean/degraded pairs, need {n}")
    pairs: list[Pair] = []
    depth = 0
    while len(pairs) < n:  # round-robin over clean sources: spread pairs over sources
        for src, rows in pools:
            if depth < len(rows) and len(pairs) < n:
                row = rows[depth]
                pairs.append(Pair(f"clean-{src}-{row['clip_id']}", "cleanness",
                                  _clip(clean.loc[src]), _clip(row),
                                  meta=(("degradation", str(row["degradation"])),
                                        ("cluster", str(src)), ("cluster_unit", "source clip"))))
        depth += 1
    return pairs


def speaker_pairs(manifest: pd.DataFrame, n: int, seed: int, split: str | None = "test"
                  ) -> list[Pair]:
    """Reference clip R; the clip by R's speaker wins over a clip by another speaker."""
    _need(manifest, {"clip_id", "path", "sha256", "speaker"}, "speaker pairs")
    m = _split(manifest, split)
    speakers = sorted(m["speaker"].astype(str).unique())
    if len(speakers) < 2:
        raise ValueError("speaker pairs: need clips from at least two speakers")
    rng = rng_for("speaker-pairs", seed)
    by_spk = {s: m[m["speaker"].astype(str) == s] for s in speakers}
    eligible = [s for s in speakers if len(by_spk[s]) >= 2]
    if not eligible:
        raise ValueError("speaker pairs: no speaker has two clips")
    pairs = []
    for i in range(n):
        spk = eligible[i % len(eligible)]
        ref_i, same_i = rng.choice(len(by_spk[spk]), size=2, replace=False)
        other = speakers[int(rng.integers(0, len(speakers) - 1))]
        other = other if other != spk else speakers[-1]
        diff = by_spk[other].iloc[int(rng.integers(0, len(by_spk[other])))]
        ref, same = by_spk[spk].iloc[int(ref_i)], by_spk[spk].iloc[int(same_i)]
        pairs.append(Pair(f"spk-{ref['clip_id']}-{same['clip_id']}-{diff['clip_id']}",
                          "speaker", _clip(same), _clip(diff), reference=_clip(ref),
                          meta=(("speaker_same", spk), ("speaker_other", other),
                                ("cluster", spk), ("cluster_unit", "reference speaker"))))
    return pairs


def emotion_pairs(manifest: pd.DataFrame, n: int, seed: int, neutral: str = "neutral",
                  split: str | None = "test", targets: tuple[str, ...] | None = None
                  ) -> list[Pair]:
    """An emotional clip wins over a `neutral` clip by the same speaker (and the same
    sentence when a `transcript` column exists), asked as "which sounds more <emotion>?".
    Pairs are spread over the speakers (each draw comes from a least-used speaker), so
    the speaker-clustered lock interval rests on as many clusters as the split has."""
    _need(manifest, {"clip_id", "path", "sha256", "speaker", "emotion"}, "emotion pairs")
    m = _split(manifest, split)
    emotions = [e for e in (targets or sorted(m["emotion"].unique()))
                if e not in (neutral, "calm")]
    rng = rng_for("emotion-pairs", seed)
    same_cols = ["speaker"] + (["transcript"] if "transcript" in m.columns else [])
    pairs: list[Pair] = []
    candidates: dict[str, list] = {e: [] for e in emotions}
    for _, grp in m.groupby(same_cols, sort=True):
        neu = grp[grp["emotion"] == neutral]
        if neu.empty:
            continue
        for e in emotions:
            for _, row in grp[grp["emotion"] == e].iterrows():
                candidates[e].append((neu.iloc[int(rng.integers(0, len(neu)))], row))
    i = 0
    used: dict[str, int] = {}  # pairs per speaker: spread the pairs over the speakers
    while len(pairs) < n and any(candidates.values()):
        e = emotions[i % len(emotions)]
        i += 1
        if not candidates[e]:
            continue
        # a random candidate among the least-used speakers (the speaker is the cluster)
        load = [used.get(str(c[1]["speaker"]), 0) for c in candidates[e]]
        least = [j for j, v in enumerate(load) if v == min(load)]
        neu, emo = candidates[e].pop(least[int(rng.integers(0, len(least)))])
        used[str(emo["speaker"])] = used.get(str(emo["speaker"]), 0) + 1
        pairs.append(Pair(f"emo-{emo['clip_id']}-{neu['clip_id']}", "emotion", _clip(emo),
                          _clip(neu), emotion=e,
                          meta=(("cluster", str(emo["speaker"])), ("cluster_unit", "speaker"))))
    if len(pairs) < n:
        raise ValueError(f"emotion pairs: found {len(pairs)} neutral/emotional pairs, need {n}")
    return pairs

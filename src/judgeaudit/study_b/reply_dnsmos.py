"""DNSMOS of the spoken Study B replies, off the critical path (issue 36).

Every reply R0 / R1 of every item of every task is spoken by a neutral espeak voice
drawn per item (`reply_voice`); its DNSMOS (speechmos' SIG/BAK/OVRL model,
`judgeaudit.dnsmos_session.score`) is the costly part of the reply-balance table
(~0.2 s of CPU per 9.01 s window, 5-9 windows per positional reply). The work is
split in three steps, each a rule:

1. `plan_clips` (rule `study_b_reply_clips`): every reply of every task rendered once
   and keyed by its samples (sha256 of the float64 samples, as before), so a reply
   audio that recurs (a templated reply in the same voice, within one task or across
   tasks: single and conversation share a third of theirs on the default config) is
   one clip; each distinct clip is assigned to one of `n_shards` shards by its DNSMOS
   window count (longest first, to the least loaded shard), so the shards hold the
   same work.
2. `score_shard` (rule `study_b_reply_dnsmos`, one job per shard): the shard's clips
   rendered again (their sha256 checked against the plan) and scored.
3. `dnsmos_by_reply` (in rule `study_b_reply_quality`): each task's replies looked up
   in the shards' scores by their clip.

The scores are the numbers the one-job-per-task code computed, to the bit: the same
samples, the same `dnsmos_session.score`, stored as JSON floats (Python's shortest
round-trip repr). Repeated windows inside one clip (a short clip is doubled until it is
9.01 s long, then walked in 1 s hops) were counted on the default run: none of its 945
windows recurs, so there is nothing more to compute once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from judgeaudit.io import read_jsonl, sha256_json

PLAN_VERSION = 1
SR = 16000
#: DNSMOS input length (s), as `speechmos.dnsmos.INPUT_LENGTH`
INPUT_LENGTH = 9.01
COLUMNS = ("dnsmos_ovrl", "dnsmos_sig", "dnsmos_bak")


class ReplyDnsmosError(ValueError):
    """A plan or shard file that does not fit the items or the renderer."""


def n_windows(n_samples: int, sr: int = SR) -> int:
    """DNSMOS windows of a clip of `n_samples` samples: the clip doubled until it is
    one input long, then every 1 s hop whose window is whole (as
    `speechmos.dnsmos.DNSMOS.__call__` and `dnsmos_session.score` walk it)."""
    if n_samples <= 0:
        raise ReplyDnsmosError("DNSMOS: a clip needs at least one sample")
    length = int(n_samples)
    need = int(INPUT_LENGTH * sr)
    while length < need:
        length *= 2
    hops = int(np.floor(length / sr) - INPUT_LENGTH) + 1
    return sum(1 for idx in range(hops)
               if min(int((idx + INPUT_LENGTH) * sr), length) - int(idx * sr) >= need)


def clip_key(samples: np.ndarray) -> str:
    """The key of a reply audio: sha256 of its float64 samples."""
    return hashlib.sha256(np.asarray(samples).astype("float64").tobytes()).hexdigest()


def reply_voice(item_id: str, voices: Sequence[str], seed: int) -> str:
    """The voice one item's replies are spoken with: drawn per item (seeded hash), the
    same voice for R0 and R1, so voices are balanced across R0/R1 by construction."""
    h = int(sha256_json({"seed": seed, "item": item_id, "what": "reply-voice"})[:12], 16)
    return list(voices)[h % len(voices)]


def _renderer(seed: int, n_voices: int):
    from judgeaudit.study_b.tts import EspeakRenderer

    return EspeakRenderer(sample_rate=SR, seed=seed, n_voices=int(n_voices), jitter=False)


def _render(renderer, text: str, voice: str, key: str) -> np.ndarray:
    return renderer.render(text, "neutral", voice, -1, key).samples


def assign_shards(windows: Sequence[int], n_shards: int) -> list[int]:
    """Shard of each clip: longest first (ties: first seen), each to the shard with the
    fewest windows so far (ties: the lowest shard). Deterministic."""
    if n_shards < 1:
        raise ReplyDnsmosError(f"DNSMOS shards: need at least 1, got {n_shards}")
    load = [0] * n_shards
    out = [0] * len(windows)
    for i in sorted(range(len(windows)), key=lambda i: (-windows[i], i)):
        s = min(range(n_shards), key=lambda s: (load[s], s))
        out[i] = s
        load[s] += windows[i]
    return out


def plan_clips(items_by_task: Mapping[str, str | Path], seed: int, n_voices: int,
               n_shards: int) -> dict[str, Any]:
    """The plan: every reply's voice and clip key per task, and every distinct clip
    once (its text, voice, render key, length, DNSMOS windows and shard)."""

    renderer = _renderer(seed, n_voices)
    voices = renderer.voice_ids()
    clips: dict[str, dict[str, Any]] = {}
    replies: dict[str, list[list[Any]]] = {}
    for task, path in items_by_task.items():
        rows = replies[task] = []
        for it in read_jsonl(path):
            voice = reply_voice(it["item_id"], voices, seed)
            for r, text in enumerate(it["replies"]):
                key = f"reply|{it['item_id']}|{r}"
                x = _render(renderer, text, voice, key)
                sha = clip_key(x)
                if sha not in clips:
                    clips[sha] = {"sha256": sha, "text": text, "voice": voice, "key": key,
                                  "n_samples": int(len(x)), "n_windows": n_windows(len(x))}
                rows.append([it["item_id"], r, voice, sha])
    listed = list(clips.values())
    for clip, shard in zip(listed, assign_shards([c["n_windows"] for c in listed], n_shards),
                           strict=True):
        clip["shard"] = shard
    return {"v": PLAN_VERSION, "seed": int(seed), "n_voices": int(n_voices),
            "n_shards": int(n_shards), "clips": listed, "replies": replies}


def read_plan(path: str | Path) -> dict[str, Any]:
    try:
        plan = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReplyDnsmosError(f"{path}: cannot read the reply-clip plan ({exc})") from exc
    if not isinstance(plan, dict) or plan.get("v") != PLAN_VERSION:
        raise ReplyDnsmosError(f"{path}: not a reply-clip plan of version {PLAN_VERSION} "
                               f"(field 'v' is {plan.get('v') if isinstance(plan, dict) else plan!r})")
    return plan


def score_shard(plan: Mapping[str, Any], shard: int) -> dict[str, dict[str, float]]:
    """DNSMOS of the plan's clips of one shard: clip key -> dnsmos_ovrl / _sig / _bak."""
    from judgeaudit import dnsmos_session

    if not 0 <= int(shard) < int(plan["n_shards"]):
        raise ReplyDnsmosError(f"DNSMOS shard {shard}: the plan has shards 0..{plan['n_shards'] - 1}")
    renderer = _renderer(plan["seed"], plan["n_voices"])
    out: dict[str, dict[str, float]] = {}
    for clip in plan["clips"]:
        if clip["shard"] != int(shard):
            continue
        x = np.asarray(_render(renderer, clip["text"], clip["voice"], clip["key"])).astype("float64")
        if clip_key(x) != clip["sha256"]:
            raise ReplyDnsmosError(
                f"reply clip {clip['key']} ({clip['voice']}): rendered samples differ from "
                f"the plan's sha256 {clip['sha256'][:12]} (plan out of date with the renderer)")
        res = dnsmos_session.score(x, sr=SR)
        out[clip["sha256"]] = {"dnsmos_ovrl": float(res["ovrl_mos"]),
                               "dnsmos_sig": float(res["sig_mos"]),
                               "dnsmos_bak": float(res["bak_mos"])}
    return out


def dnsmos_by_reply(plan: Mapping[str, Any], shard_scores: Sequence[Mapping[str, Any]],
                    task: str) -> dict[tuple[str, int], dict[str, Any]]:
    """(item_id, reply) -> reply_voice and the DNSMOS columns, for one task."""
    if task not in plan["replies"]:
        raise ReplyDnsmosError(f"reply-clip plan: no task {task!r} (has "
                               f"{sorted(plan['replies'])})")
    scores: dict[str, Mapping[str, float]] = {}
    for s in shard_scores:
        scores.update(s)
    out = {}
    for item_id, r, voice, sha in plan["replies"][task]:
        if sha not in scores:
            raise ReplyDnsmosError(f"reply {item_id}|{r}: clip {sha[:12]} is in no DNSMOS "
                                   "shard's scores")
        out[(item_id, int(r))] = {"reply_voice": voice,
                                  **{c: scores[sha][c] for c in COLUMNS}}
    return out


__all__ = ["COLUMNS", "ReplyDnsmosError", "assign_shards", "clip_key", "dnsmos_by_reply",
           "n_windows", "plan_clips", "read_plan", "reply_voice", "score_shard"]

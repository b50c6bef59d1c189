"""Study B: tasks (item families), protocols, cues and probes.

Trial shards are `results/trials/B/<task>/<shard>.jsonl` with shard
`<protocol>-<cue>` or `probe-<probe>`."""

from __future__ import annotations

TASKS: tuple[str, ...] = ("single", "positional", "conversation")
PROTOCOLS: tuple[str, ...] = ("pointwise", "pairwise")
# the deployment protocol: its no-cue judgment is the J bit of the (P, O, J) states
DEPLOYMENT_PROTOCOL = PROTOCOLS[0]
# the cue of a shard that shows no cue (the baseline every cue is contrasted with)
NO_CUE = "none"
CUES: tuple[str, ...] = (NO_CUE, "soft", "hard", "transition")
# cues a task may use (config study_b.tasks.<task>.cues)
TASK_CUES: dict[str, tuple[str, ...]] = {
    "single": (NO_CUE, "soft", "hard"),
    "positional": (NO_CUE, "transition"),
    "conversation": (NO_CUE, "soft", "hard"),
}
# the cue condition without a cue, and the cues whose accuracy is contrasted with it
# (cue dependence = acc(cue) - acc(NO_CUE), paired over items; one row per contrasted
# cue a task runs). A new contrasted cue: add it to CUES, TASK_CUES and here.
CONTRASTED_CUES: tuple[str, ...] = ("hard", "transition")
PROBES: tuple[str, ...] = ("P", "O")
PROBE_PREFIX = "probe-"


def protocol_shard(protocol: str, cue: str) -> str:
    return f"{protocol}-{cue}"


def probe_shard(probe: str) -> str:
    return f"{PROBE_PREFIX}{probe}"


PROBE_SHARDS: tuple[str, ...] = tuple(probe_shard(p) for p in PROBES)


def shard_regex() -> str:
    """Regex of every Study B shard name."""
    return (f"({'|'.join(PROTOCOLS)})-({'|'.join(CUES)})|"
            + "|".join(PROBE_SHARDS))


__all__ = ["CONTRASTED_CUES", "CUES", "DEPLOYMENT_PROTOCOL", "NO_CUE", "PROBES", "PROBE_PREFIX", "PROBE_SHARDS",
           "PROTOCOLS", "TASKS", "TASK_CUES", "probe_shard", "protocol_shard", "shard_regex"]

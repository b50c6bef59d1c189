"""Study B: tasks (item families), protocols, cues and probes.

Trial shards are `results/trials/B/<task>/<shard>.jsonl` with shard
`<protocol>-<cue>` or `probe-<probe>`.

Protocols: `pointwise` (one recording, the native judgment J under cue `none`),
`pairwise` (both recordings) and `text` (the text-only baseline T: the pointwise
instruction, transcript and candidates with no audio). AUDIO_PROTOCOLS are the
paper's two protocols (the protocol gap and cue dependence families)."""

from __future__ import annotations

TASKS: tuple[str, ...] = ("single", "positional", "conversation")
PROTOCOLS: tuple[str, ...] = ("pointwise", "pairwise", "text")
# the paper's two protocols (the protocol gap and cue dependence families)
AUDIO_PROTOCOLS: tuple[str, ...] = ("pointwise", "pairwise")
# the text-only baseline T: the pointwise request with no audio
TEXT_PROTOCOL = "text"
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
# the (P, O, J) states of a rendering (perception, oracle, judgment bits), in the order
# every table and figure prints them
STATES: tuple[str, ...] = ("111", "110", "101", "100", "011", "010", "001", "000")


# the judge name of the uniform-chance rows the state table prints beside each judge's
CHANCE_JUDGE = "chance (uniform)"


def state_code(v: object) -> str:
    """A (P, O, J) state as its 3-character code, however a reader typed it (11,
    11.0 or "011" -> "011")."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).zfill(3) if str(v).isdigit() else str(v)
# reply writers of the template source (config study_b.replies.writer): the bank file
# under templates/study_b/ each reads; `templates_b` is the second family the
# writer-swap ablation re-writes the replies with
WRITER_BANKS: dict[str, str] = {"templates": "replies.yaml", "templates_b": "replies_b.yaml"}
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


__all__ = ["AUDIO_PROTOCOLS", "CHANCE_JUDGE", "CONTRASTED_CUES", "CUES", "DEPLOYMENT_PROTOCOL", "NO_CUE", "PROBES",
           "PROBE_PREFIX", "PROBE_SHARDS", "PROTOCOLS", "TASKS", "TASK_CUES", "TEXT_PROTOCOL",
           "STATES", "WRITER_BANKS", "probe_shard", "protocol_shard", "shard_regex",
           "state_code"]

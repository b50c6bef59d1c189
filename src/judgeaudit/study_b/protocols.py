"""Study B trials: protocols (Pointwise, Pairwise) under cues, and probes (P, O).

A trial shard is one (task, shard) pair; shard names:
- `pointwise-<cue>`: one rendering (A0 or A1) and both replies; gold = the slot of
  the reply right for that rendering. `pointwise-none` is the native judgment J.
- `text-<cue>`: the text-only baseline T: the pointwise request of each rendering
  (same system text, instruction template `pointwise.txt`, transcript, candidates
  and cue) with its audio parts removed; gold as in pointwise. Both renderings of
  an item share one request (the words are the same), so a judge answering the same
  request the same way scores exactly 1/2 per item: T above 1/2 measures what the
  transcript alone gives away.
- `pairwise-<cue>`: both renderings (Audio A / Audio B, in both orders) and both
  replies; the judge says which reply fits Audio A.
- `probe-P`: perception, audio only: the emotion of the recording (single), of
  every user turn (positional: the per-turn trajectory) or of the last turn
  (conversation).
- `probe-O`: oracle mapping, text only: transcript + a stated label + replies.
  One trial per rendering and candidate label: the trial stating the true label
  is the O probe; the one stating P's predicted label is the staging probe.

Requests follow the prompt contract `judgeaudit.prompts` (audio marks, `R1:`/`R2:`
lines, `Turn i:` lines, oracle statements), which the embedded judges read. Wording
comes from versioned template files; each trial records the sha256 of every
template and cue file it used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgeaudit.io import sha256_bytes, sha256_json
from judgeaudit.judges.request import AnswerSpec, AudioPart, Request, TextPart
from judgeaudit.prompts import (
    ORACLE_EMOTION_TEXT,
    ORACLE_SHIFT_TEXT,
    ORACLE_TURN_EMOTION_TEXT,
    REPLY_SLOTS,
    STUDY_B_ANSWER_KEY,
    TURN_SCOPE_TEXT,
    audio_mark,
    reply_line,
    turn_line,
)
from judgeaudit.study_b.items import gold_slot, slots
from judgeaudit.vocab.study_b import CUES, NO_CUE, PROBE_PREFIX, PROBES, PROTOCOLS

REPLY_ANSWER = AnswerSpec(key=STUDY_B_ANSWER_KEY, allowed=REPLY_SLOTS, reasoning=True)
TEMPLATE_FILES = {"system": "system.txt", "pointwise": "pointwise.txt",
                  "pairwise": "pairwise.txt", "text": "pointwise.txt", "P": "probe_perception.txt",
                  "O": "probe_oracle.txt"}


class TrialError(ValueError):
    pass


@dataclass(frozen=True)
class Template:
    name: str
    text: str
    sha256: str

    @classmethod
    def load(cls, path: str | Path) -> Template:
        p = Path(path)
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise TrialError(f"{p}: cannot read template ({exc.strerror})") from exc
        return cls(p.name, data.decode("utf-8").strip(), sha256_bytes(data))


def shard_kind(shard: str) -> tuple[str, str | None]:
    """`pointwise-hard` -> ("pointwise", "hard"); `probe-P` -> ("P", None)."""
    if shard.startswith(PROBE_PREFIX):
        probe = shard.removeprefix(PROBE_PREFIX)
        if probe not in PROBES:
            raise TrialError(f"unknown probe shard {shard!r} (expected probe-P or probe-O)")
        return probe, None
    proto, _, cue = shard.partition("-")
    if proto not in PROTOCOLS or cue not in CUES:
        raise TrialError(f"unknown shard {shard!r}: expected <{'|'.join(PROTOCOLS)}>-"
                         f"<{'|'.join(CUES)}> or probe-P / probe-O")
    return proto, cue


# Audio of one rendering: {turn: (path, sha256)} from the renderings table.
Audio = Mapping[tuple[str, int, int], tuple[str, str]]


def _audio(audio: Audio, item: dict, rendering: int, turn: int) -> AudioPart:
    try:
        path, sha = audio[(item["item_id"], rendering, turn)]
    except KeyError:
        raise TrialError(f"no rendering for item {item['item_id']} rendering {rendering} "
                         f"turn {turn} in renderings.tsv") from None
    return AudioPart(sha256=sha, format="wav", path=path)


def _user_turns(item: dict) -> list[int]:
    return [t["turn"] for t in item["turns"] if t["role"] == "user"]


def _audio_parts(item: dict, rendering: int, audio: Audio, slot: str | None) -> list:
    parts: list = []
    if item["family"] == "single":
        parts += [TextPart(audio_mark(slot)), _audio(audio, item, rendering, 1)]
        return parts
    for t in _user_turns(item):
        parts += [TextPart(audio_mark(slot, t)), _audio(audio, item, rendering, t)]
    return parts


def context_text(item: dict) -> str:
    if item["family"] == "single":
        return f'Transcript of the user\'s turn: "{item["turns"][0]["text"]}"'
    lines = [turn_line(t["turn"], t["role"], t["text"]) for t in item["turns"]]
    return "Transcript of the conversation:\n" + "\n".join(lines)


def replies_text(item: dict) -> str:
    s = slots(item)
    return "\n".join(reply_line(slot, s[slot]) for slot in REPLY_SLOTS)


def _cue_block(cue_text: str | None) -> str:
    return (cue_text.strip() + "\n\n") if cue_text else ""


def oracle_statement(item: dict, label: str) -> str:
    fam = item["family"]
    if fam == "single":
        return ORACLE_EMOTION_TEXT.format(label=label)
    if fam == "conversation":
        return ORACLE_TURN_EMOTION_TEXT.format(turn=_user_turns(item)[-1], label=label)
    return (ORACLE_SHIFT_TEXT.format(turn=label)
            + f" The user sounds {item['baseline_emotion']} "
            f"before that turn and {item['shift_emotion']} from that turn on.")


def oracle_labels(item: dict) -> list[str]:
    """Labels an O trial may state: the task's classes, or the candidate shift turns."""
    if item["family"] == "positional":
        return [str(t) for t in item["shift_turns"]]
    return list(item["classes"])


def trial_id(study: str, task: str, condition: str, facts: Mapping[str, Any]) -> str:
    return sha256_json({"study": study, "task": task, "condition": condition,
                        "facts": dict(facts)})[:16]


def _trial(task: str, condition: str, request: Request, gold: str, facts: dict) -> dict:
    return {"trial_id": trial_id("B", task, condition, facts), "study": "B", "task": task,
            "condition": condition, "request": request.to_json(), "gold": gold,
            "facts": facts}


def build_trials(items: Sequence[dict], audio: Audio, shard: str,
                 templates: Mapping[str, Template], cue: Template | None = None,
                 trajectory: str = "all") -> list[dict]:
    """All trials of one (task, shard). `templates` maps system/pointwise/pairwise/
    P/O to loaded templates; `cue` is the cue file (None for NO_CUE)."""
    kind, cue_name = shard_kind(shard)
    if cue_name not in (None, NO_CUE) and cue is None:
        raise TrialError(f"shard {shard}: cue file for {cue_name!r} not given")
    system = templates["system"]
    tmpl = templates[kind]
    base_facts = {"template_sha256": {"system": system.sha256, kind: tmpl.sha256}}
    if cue_name not in (None, NO_CUE):
        base_facts["cue_sha256"] = cue.sha256
    out = []
    for item in items:
        task = item["family"]
        common = {"item_id": item["item_id"], "family": task, **base_facts}
        ctx, reps = context_text(item), replies_text(item)
        if kind == "pointwise":
            for v in (0, 1):
                text = tmpl.text.format(context=ctx, replies=reps, cue=_cue_block(
                    cue.text if cue else None))
                req = Request(system.text, tuple(_audio_parts(item, v, audio, None)
                                                 + [TextPart(text)]), REPLY_ANSWER)
                facts = dict(common, protocol="pointwise", cue=cue_name, rendering=v,
                             label=item["labels"][v], swap=item["swap"])
                out.append(_trial(task, shard, req, gold_slot(item, v), facts))
        elif kind == "text":
            for v in (0, 1):
                text = tmpl.text.format(context=ctx, replies=reps, cue=_cue_block(
                    cue.text if cue else None))
                req = Request(system.text, (TextPart(text),), REPLY_ANSWER)
                facts = dict(common, protocol="text", cue=cue_name, rendering=v,
                             label=item["labels"][v], swap=item["swap"])
                out.append(_trial(task, shard, req, gold_slot(item, v), facts))
        elif kind == "pairwise":
            for order, a in (("AB", 0), ("BA", 1)):
                text = tmpl.text.format(context=ctx, replies=reps, cue=_cue_block(
                    cue.text if cue else None))
                parts = _audio_parts(item, a, audio, "A") + _audio_parts(item, 1 - a, audio, "B")
                req = Request(system.text, tuple(parts + [TextPart(text)]), REPLY_ANSWER)
                facts = dict(common, protocol="pairwise", cue=cue_name, order=order,
                             rendering_a=a, swap=item["swap"])
                out.append(_trial(task, shard, req, gold_slot(item, a), facts))
        elif kind == "P":
            classes = tuple(item["classes"])
            spec = AnswerSpec(key="pred", allowed=classes, reasoning=True)
            labels = ", ".join(classes)
            if task == "single":
                asks = [(1, "")]
            elif task == "conversation":
                last = _user_turns(item)[-1]
                asks = [(last, TURN_SCOPE_TEXT.format(turn=last))]
            else:
                turns = (_user_turns(item) if trajectory == "all"
                         else sorted({_user_turns(item)[0], *item["span_turns"]}))
                asks = [(t, TURN_SCOPE_TEXT.format(turn=t)) for t in turns]
            emo = {t["turn"]: t["emotions"] for t in item["turns"]}
            for v in (0, 1):
                for turn, scope in asks:
                    text = tmpl.text.format(scope=scope, labels=labels)
                    req = Request(system.text, tuple(_audio_parts(item, v, audio, None)
                                                     + [TextPart(text)]), spec)
                    facts = dict(common, probe="P", rendering=v, turn=turn,
                                 key_turn=turn in item.get("span_turns", item["key_turns"]))
                    out.append(_trial(task, shard, req, emo[turn][v], facts))
        elif kind == "O":
            for v in (0, 1):
                for label in oracle_labels(item):
                    text = tmpl.text.format(context=ctx, statement=oracle_statement(item, label),
                                            replies=reps)
                    req = Request(system.text, (TextPart(text),), REPLY_ANSWER)
                    facts = dict(common, probe="O", rendering=v, stated_label=label,
                                 true_label=item["labels"][v],
                                 oracle=label == item["labels"][v])
                    out.append(_trial(task, shard, req, gold_slot(item, v), facts))
    ids = [t["trial_id"] for t in out]
    if len(set(ids)) != len(ids):
        raise TrialError(f"shard {shard}: duplicate trial ids (items repeated?)")
    return out


__all__ = ["CUES", "PROBES", "PROTOCOLS", "REPLY_ANSWER", "TEMPLATE_FILES", "Template",
           "TrialError", "build_trials", "context_text", "oracle_labels", "oracle_statement",
           "replies_text", "shard_kind", "trial_id"]

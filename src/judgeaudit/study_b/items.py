"""Study B audit items E = (C, A0, A1, R0, R1).

Three families:
- `single`: one user turn C spoken in emotion e0 (A0) or e1 (A1); R0 fits e0,
  R1 fits e1 (from `synth_counterfactual` items or EmoCF pairs).
- `positional`: a dialogue whose transcript is identical in A0 and A1; the
  user's emotion shifts at turn p0 (A0) or p1 (A1); R0 responds to turn p0, R1 to
  turn p1 (from `synth_dialogue` or OD3 dialogues).
- `conversation`: a dialogue whose last user turn is spoken in e0 (A0) or e1
  (A1), all earlier turns identical; R0 fits e0, R1 fits e1.

An item is a plain dict (JSON-serialisable) so it can be stored in
`items.jsonl` and hashed:
  item_id, family, source_id, voice, turns [{turn, role, text, emotions: [e_A0, e_A1]}],
  key_turns (turns whose rendering differs), labels [label_A0, label_A1] (the
  paralinguistic fact: an emotion, or the shift turn as a string), classes
  (perception vocabulary), replies [R0, R1], swap (R0 shown as "R2" when true),
  frame, variant, shift_emotion / baseline_emotion (positional).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from judgeaudit.study_b.replies import ReplyBank
from judgeaudit.vocab.study_b import TASKS

FAMILIES = TASKS


class ItemError(ValueError):
    pass


def stable_hash(*parts: Any) -> int:
    d = hashlib.sha256("|".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(d[:8], "little")


def gold_slot(item: dict, rendering: int) -> str:
    """The reply slot ("R1"/"R2") holding the reply right for rendering 0/1."""
    return "R1" if (rendering == 1) == bool(item["swap"]) else "R2"


def slots(item: dict) -> dict[str, str]:
    r0, r1 = item["replies"]
    return {"R1": r1, "R2": r0} if item["swap"] else {"R1": r0, "R2": r1}


def _balance_swaps(items: list[dict], seed: int) -> list[dict]:
    """Exactly balanced reply order: sorted by a seeded hash, alternate swaps."""
    order = sorted(items, key=lambda it: stable_hash(seed, "swap", it["item_id"]))
    for i, it in enumerate(order):
        it["swap"] = bool(i % 2)
    return items


def assign_voices(items: list[dict], voices: Sequence[str], seed: int) -> list[dict]:
    """Each item its own voice when the roster has at least one voice per item (a
    seeded draw without replacement, sorted by a seeded hash of the item id): the
    item is then the voice's cluster too, so item-clustered intervals generalise over
    voices. A smaller roster (or the openai backend's few voices) leaves the items'
    seeded draws with replacement: items share voices, and their rates cluster on the
    voice where there are enough of them (`study_b.metrics.item_clusters`), else the
    captions say the intervals are conditional on them (`stats.corpus.voice_clause`)."""
    if len(voices) < len(items):
        return items
    order = sorted(items, key=lambda it: stable_hash(seed, "own-voice", it["item_id"]))
    ranked = sorted(voices, key=lambda v: stable_hash(seed, "own-voice-roster", v))
    for it, voice in zip(order, ranked, strict=False):
        it["voice"] = voice
    return items


def _pick(seq: Sequence, seed: int, *key: Any):
    return seq[stable_hash(seed, *key) % len(seq)]


def _require(frame: pd.DataFrame, cols: Iterable[str], what: str) -> None:
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise ItemError(f"{what}: missing column(s) {missing}; have {list(frame.columns)}")


# --------------------------------------------------------------------- single
def single_items(pairs: pd.DataFrame, bank: ReplyBank, voices: Sequence[str], seed: int,
                 n_items: int | None = None, what: str = "items.tsv") -> list[dict]:
    """Items from rows (item_id, transcript, emotion_a, emotion_b)."""
    _require(pairs, ("item_id", "transcript", "emotion_a", "emotion_b"), what)
    rows = pairs.sort_values("item_id", kind="stable")
    if n_items is not None:
        rows = rows.head(int(n_items))
    classes = sorted(set(rows["emotion_a"]) | set(rows["emotion_b"]))
    items = []
    for r in rows.itertuples(index=False):
        e0, e1 = str(r.emotion_a), str(r.emotion_b)
        if e0 == e1:
            raise ItemError(f"{what}: item {r.item_id} has the same emotion twice ({e0})")
        frame = stable_hash(seed, "frame", r.item_id) % len(bank.frames)
        variant = stable_hash(seed, "variant", r.item_id)
        r0, r1 = bank.emotion_pair(e0, e1, frame, variant)
        items.append({
            "item_id": f"single-{r.item_id}", "family": "single", "source_id": str(r.item_id),
            "voice": _pick(voices, seed, "voice", r.item_id),
            "turns": [{"turn": 1, "role": "user", "text": str(r.transcript),
                       "emotions": [e0, e1]}],
            "key_turns": [1], "labels": [e0, e1], "classes": classes,
            "replies": [r0, r1], "frame": frame, "variant": variant % 1000,
        })
    return _balance_swaps(items, seed)


# --------------------------------------------------------------------- dialogues
def _dialogue_turns(turns: pd.DataFrame) -> list[dict]:
    out = []
    for r in turns.sort_values("turn_index").itertuples(index=False):
        out.append({"turn": int(r.turn_index) + 1, "role": str(r.role), "text": str(r.transcript)})
    return out


def _variant_order(names: Sequence[str]) -> list[str]:
    names = sorted(set(names))
    if set(names) == {"early", "late"}:
        return ["early", "late"]
    return names


def positional_items(dialogues: pd.DataFrame, bank: ReplyBank, voices: Sequence[str],
                     seed: int, n_items: int | None = None,
                     what: str = "dialogue manifest") -> list[dict]:
    """Items from per-turn rows (dialogue_id, variant, turn_index, role, emotion,
    transcript), two variants per dialogue (`early`/`late`, or 0/1) that share the
    transcript and differ in the user turn where the emotion shifts away from the
    starting emotion (and stays shifted). A0 = the earlier shift at turn p0, A1 =
    the later one at p1; R0 responds to turn p0, R1 to turn p1."""
    _require(dialogues, ("dialogue_id", "variant", "turn_index", "role", "emotion",
                         "transcript"), what)
    items = []
    ids = sorted(dialogues["dialogue_id"].astype(str).unique())
    if n_items is not None:
        ids = ids[: int(n_items)]
    user_rows = dialogues[dialogues["role"].astype(str) == "user"]
    classes = sorted(set(user_rows["emotion"].astype(str)) - {"", "nan"})
    for did in ids:
        d = dialogues[dialogues["dialogue_id"].astype(str) == did]
        names = _variant_order(d["variant"].astype(str))
        if len(names) != 2:
            raise ItemError(f"{what}: dialogue {did} needs two variants, has {names}")
        vs = [d[d["variant"].astype(str) == n].sort_values("turn_index") for n in names]
        if list(vs[0]["transcript"]) != list(vs[1]["transcript"]):
            raise ItemError(f"{what}: dialogue {did}: variants differ in transcript; "
                            "a positional item needs an identical transcript")
        turns = _dialogue_turns(vs[0])
        user = [t["turn"] for t in turns if t["role"] == "user"]
        emos = [dict(zip(v["turn_index"].astype(int) + 1, v["emotion"].astype(str),
                         strict=True)) for v in vs]
        shifts = []
        for e in emos:
            start = e[user[0]]
            shifted = [t for t in user if e[t] != start]
            if not shifted:
                raise ItemError(f"{what}: dialogue {did}: a variant has no emotion shift")
            shifts.append((shifted[0], start, e[shifted[0]]))
        (p0, s0, tgt0), (p1, s1, tgt1) = shifts
        if p0 > p1:
            (p0, s0, tgt0), (p1, s1, tgt1) = (p1, s1, tgt1), (p0, s0, tgt0)
            emos = emos[::-1]
            names = names[::-1]
        if p0 == p1 or s0 != s1 or tgt0 != tgt1:
            raise ItemError(f"{what}: dialogue {did}: variants must shift from the same "
                            f"start to the same target at two different turns (got "
                            f"{s0}->{tgt0} at {p0}, {s1}->{tgt1} at {p1})")
        for t in turns:
            t["emotions"] = ([emos[0][t["turn"]], emos[1][t["turn"]]] if t["role"] == "user"
                             else [None, None])
        key = [t for t in user if emos[0][t] != emos[1][t]]
        text = {t["turn"]: t["text"] for t in turns}
        frame = stable_hash(seed, "frame", did) % len(bank.positional_frames)
        variant = stable_hash(seed, "variant", did)
        r0, r1 = bank.positional_pair(text[p0], text[p1], tgt0, frame, variant)
        if r0 == r1:
            raise ItemError(f"{what}: dialogue {did}: turns {p0} and {p1} start with the same "
                            "words; the replies would be identical")
        items.append({
            "item_id": f"positional-{did}", "family": "positional", "source_id": did,
            "source_variants": names,
            "voice": _pick(voices, seed, "voice", did), "turns": turns,
            "key_turns": key, "shift_turns": [p0, p1],
            "span_turns": [t for t in user if p0 <= t <= p1],
            "labels": [str(p0), str(p1)], "classes": classes, "shift_emotion": tgt0,
            "baseline_emotion": s0, "replies": [r0, r1], "frame": frame,
            "variant": variant % 1000,
        })
    return _balance_swaps(items, seed)


def conversation_items(dialogues: pd.DataFrame, bank: ReplyBank, voices: Sequence[str],
                       seed: int, classes: Sequence[str], n_items: int | None = None,
                       what: str = "dialogues.tsv") -> list[dict]:
    """Items whose last user turn is spoken in one of two emotions (from `classes`);
    every earlier user turn keeps the dialogue's prevailing (baseline) emotion."""
    _require(dialogues, ("dialogue_id", "variant", "turn_index", "role", "emotion",
                         "transcript"), what)
    classes = sorted(classes)
    if len(classes) < 2:
        raise ItemError("study_b.tasks.conversation.classes: need at least two emotions")
    items = []
    ids = sorted(dialogues["dialogue_id"].astype(str).unique())
    if n_items is not None:
        ids = ids[: int(n_items)]
    for did in ids:
        d = dialogues[dialogues["dialogue_id"].astype(str) == did]
        first = _variant_order(d["variant"].astype(str))[0]
        v0 = d[d["variant"].astype(str) == first]
        turns = _dialogue_turns(v0)
        user = [t for t in turns if t["role"] == "user"]
        if not user:
            raise ItemError(f"{what}: dialogue {did} has no user turn")
        base = str(v0.sort_values("turn_index").loc[v0["role"] == "user", "emotion"].iloc[0])
        h = stable_hash(seed, "conv", did)
        i0 = h % len(classes)
        i1 = (i0 + 1 + (h // 7) % (len(classes) - 1)) % len(classes)
        ea, eb = classes[i0], classes[i1]
        last = user[-1]["turn"]
        for t in turns:
            if t["role"] != "user":
                t["emotions"] = [None, None]
            elif t["turn"] == last:
                t["emotions"] = [ea, eb]
            else:
                t["emotions"] = [base, base]
        frame = stable_hash(seed, "frame", did) % len(bank.frames)
        variant = stable_hash(seed, "variant", did)
        r0, r1 = bank.emotion_pair(ea, eb, frame, variant)
        items.append({
            "item_id": f"conversation-{did}", "family": "conversation", "source_id": did,
            "voice": _pick(voices, seed, "voice", did), "turns": turns,
            "key_turns": [last], "labels": [ea, eb], "classes": list(classes),
            "baseline_emotion": base, "replies": [r0, r1], "frame": frame,
            "variant": variant % 1000,
        })
    return _balance_swaps(items, seed)


def check_item(item: dict) -> None:
    """Structural invariants of an audit item (raises ItemError)."""
    iid = item.get("item_id", "?")
    if item["family"] not in FAMILIES:
        raise ItemError(f"item {iid}: unknown family {item['family']!r}")
    if len(item["replies"]) != 2 or item["replies"][0] == item["replies"][1]:
        raise ItemError(f"item {iid}: needs two different replies")
    if len(item["labels"]) != 2 or item["labels"][0] == item["labels"][1]:
        raise ItemError(f"item {iid}: needs two different labels")
    for t in item["turns"]:
        if t["role"] == "user" and (t["turn"] in item["key_turns"]) != (
                t["emotions"][0] != t["emotions"][1]):
            raise ItemError(f"item {iid}: key_turns do not match where the renderings differ")


__all__ = ["FAMILIES", "ItemError", "assign_voices", "check_item", "conversation_items", "gold_slot",
           "positional_items", "single_items", "slots", "stable_hash"]

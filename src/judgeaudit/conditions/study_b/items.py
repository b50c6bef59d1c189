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

from judgeaudit.conditions.replies import ReplyBank

FAMILIES = ("single", "positional", "conversation")


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


def positional_items(dialogues: pd.DataFrame, bank: ReplyBank, voices: Sequence[str],
                     seed: int, n_items: int | None = None,
                     what: str = "dialogues.tsv") -> list[dict]:
    """Items from per-turn rows (dialogue_id, variant 0/1, turn_index, role, emotion,
    transcript): the two variants share the transcript and differ in where the
    user's emotion shifts."""
    _require(dialogues, ("dialogue_id", "variant", "turn_index", "role", "emotion",
                         "transcript"), what)
    items = []
    ids = sorted(dialogues["dialogue_id"].astype(str).unique())
    if n_items is not None:
        ids = ids[: int(n_items)]
    classes = sorted(set(dialogues["emotion"].astype(str)) - {"", "nan"})
    for did in ids:
        d = dialogues[dialogues["dialogue_id"].astype(str) == did]
        variants = sorted(d["variant"].astype(int).unique())
        if variants != [0, 1]:
            raise ItemError(f"{what}: dialogue {did} needs variants 0 and 1, has {variants}")
        v0 = d[d["variant"].astype(int) == 0].sort_values("turn_index")
        v1 = d[d["variant"].astype(int) == 1].sort_values("turn_index")
        if list(v0["transcript"]) != list(v1["transcript"]):
            raise ItemError(f"{what}: dialogue {did}: variants differ in transcript; "
                            "a positional item needs an identical transcript")
        turns = _dialogue_turns(v0)
        user = [t for t in turns if t["role"] == "user"]
        e0 = dict(zip(v0["turn_index"].astype(int) + 1, v0["emotion"].astype(str), strict=True))
        e1 = dict(zip(v1["turn_index"].astype(int) + 1, v1["emotion"].astype(str), strict=True))
        for t in turns:
            t["emotions"] = [e0[t["turn"]], e1[t["turn"]]] if t["role"] == "user" else [None, None]
        key = [t["turn"] for t in user if t["emotions"][0] != t["emotions"][1]]
        if len(key) != 2:
            raise ItemError(f"{what}: dialogue {did}: expected the two variants to differ at "
                            f"exactly two user turns, found {key}")
        p0 = next(t for t in key if e0[t] != _mode([e0[u["turn"]] for u in user]))
        p1 = next(t for t in key if t != p0)
        shift = e0[p0]
        base = e0[p1]
        if e1[p1] != shift or e1[p0] != base:
            raise ItemError(f"{what}: dialogue {did}: variant 1 must shift to {shift} at turn "
                            f"{p1} with {base} at turn {p0}")
        text = {t["turn"]: t["text"] for t in turns}
        frame = stable_hash(seed, "frame", did) % len(bank.positional_frames)
        variant = stable_hash(seed, "variant", did)
        r0, r1 = bank.positional_pair(text[p0], text[p1], shift, frame, variant)
        if r0 == r1:
            raise ItemError(f"{what}: dialogue {did}: turns {p0} and {p1} start with the same "
                            "words; the replies would be identical")
        items.append({
            "item_id": f"positional-{did}", "family": "positional", "source_id": did,
            "voice": _pick(voices, seed, "voice", did), "turns": turns,
            "key_turns": sorted([p0, p1]), "labels": [str(p0), str(p1)],
            "classes": classes, "shift_emotion": shift, "baseline_emotion": base,
            "replies": [r0, r1], "frame": frame, "variant": variant % 1000,
        })
    return _balance_swaps(items, seed)


def _mode(values: list[str]) -> str:
    return max(sorted(set(values)), key=values.count)


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
        v0 = dialogues[(dialogues["dialogue_id"].astype(str) == did)
                       & (dialogues["variant"].astype(int) == 0)]
        turns = _dialogue_turns(v0)
        user = [t for t in turns if t["role"] == "user"]
        if not user:
            raise ItemError(f"{what}: dialogue {did} has no user turn")
        base = _mode(list(v0.loc[v0["role"] == "user", "emotion"].astype(str)))
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


__all__ = ["FAMILIES", "ItemError", "check_item", "conversation_items", "gold_slot",
           "positional_items", "single_items", "slots", "stable_hash"]

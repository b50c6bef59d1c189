"""File-level Study B steps the rule scripts call (items, renderings, reply
quality, trial shards). Each reads its inputs, validates them with clear errors
and returns rows; the scripts write them atomically."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.io import read_jsonl
from judgeaudit.study_b import items as I
from judgeaudit.study_b import protocols as PR
from judgeaudit.study_b.renderings import audio_map, render_items
from judgeaudit.study_b.replies import ReplyBank, lexical_quality
from judgeaudit.study_b.reply_dnsmos import reply_voice

log = logging.getLogger("judgeaudit.study_b")
LEXICAL_METRICS = ("n_words", "n_chars", "flesch", "politeness")


def _read_tsv(path: str | Path, what: str) -> pd.DataFrame:
    try:
        return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    except OSError as exc:
        raise I.ItemError(f"{path}: cannot read {what} ({exc.strerror})") from exc


def voices_for(rendering_cfg: dict, seed: int) -> list[str]:
    if rendering_cfg.get("backend", "espeak") == "openai":
        return list(rendering_cfg.get("openai", {}).get("voices") or ["alloy"])
    from judgeaudit.study_b.tts import roster

    return sorted(v.speaker for v in roster(int(rendering_cfg.get("n_voices", 50)), seed))


def build_items(task: str, cfg: dict, seed: int, bank_path: str | Path,
                table_path: str | Path) -> list[dict]:
    """Items of one task from its source table: single = items.tsv (item_id,
    transcript, emotion_a, emotion_b); positional / conversation = the dialogue
    manifest (per-turn rows)."""
    bank = ReplyBank.load(bank_path)
    tcfg = cfg["tasks"][task]
    voices = voices_for(cfg["rendering"], seed)
    table = _read_tsv(table_path, f"{task} source table")
    if task == "single":
        items = I.single_items(table, bank, voices, seed, tcfg.get("n_items"), str(table_path))
    elif task == "positional":
        table["turn_index"] = table["turn_index"].astype(int)
        items = I.positional_items(table, bank, voices, seed, tcfg.get("n_items"),
                                   str(table_path))
    elif task == "conversation":
        table["turn_index"] = table["turn_index"].astype(int)
        items = I.conversation_items(table, bank, voices, seed, tcfg["classes"],
                                     tcfg.get("n_items"), str(table_path))
    else:
        raise I.ItemError(f"unknown Study B task {task!r}; expected one of {I.FAMILIES}")
    I.assign_voices(items, voices, seed)  # one voice per item when the roster allows
    if tcfg.get("n_items") and len(items) < int(tcfg["n_items"]):  # power report enforces
        logging.getLogger(__name__).warning(
            "study_b.tasks.%s.n_items=%s but %s yields only %d items", task, tcfg["n_items"],
            table_path, len(items))
    if cfg["replies"].get("source", "templates") == "llm":
        from judgeaudit.study_b.replies import LLMReplyWriter

        llm = cfg["replies"].get("llm", {})
        apply_llm_replies(items, LLMReplyWriter(llm.get("model", "gpt-4o-mini-2024-07-18"),
                                                llm.get("api_key_env", "OPENAI_API_KEY"),
                                                llm.get("base_url") or None))
    for it in items:
        I.check_item(it)
        it["reply_bank_sha256"] = bank.sha256
    if len(items) < 2:
        raise I.ItemError(f"{table_path}: only {len(items)} {task} item(s); need at least 2")
    return items


def llm_targets(item: dict) -> list[str]:
    """What each reply must fit, in words an LLM writer is given."""
    if item["family"] == "positional":
        text = {t["turn"]: t["text"] for t in item["turns"]}
        return [f"(their voice changed from {item['baseline_emotion']} to "
                f"{item['shift_emotion']} at the line \"{text[p]}\"; respond to that line)"
                for p in item["shift_turns"]]
    return [f"in a {e} tone of voice" for e in item["labels"]]


def apply_llm_replies(items: list[dict], writer) -> list[dict]:
    """Real mode: replace the template replies by LLM-written ones; the generated
    text, the model id and the targets are stored in the item."""
    for it in items:
        transcript = [f"{t['role']}: {t['text']}" for t in it["turns"]]
        outs = [writer.write(transcript, target) for target in llm_targets(it)]
        it["replies"] = [o["reply"] for o in outs]
        it["reply_source"] = {"kind": "llm", "model": outs[0]["model"],
                              "targets": [o["target"] for o in outs]}
    return items


def render_task(items_path: str | Path, cfg: dict, sample_rate: int, seed: int,
                specialist_path: str | Path, out_dir: str | Path
                ) -> tuple[pd.DataFrame, pd.DataFrame]:
    from judgeaudit import specialists
    from judgeaudit.study_b.tts import make_renderer

    items = read_jsonl(items_path)
    model = specialists.load("emotion", str(specialist_path))

    def score(data: bytes) -> dict[str, float]:
        return dict(model.predict_audio(data).scores)

    renderer = make_renderer(cfg["rendering"], sample_rate, seed)
    rows, cands = render_items(items, renderer, score, out_dir,
                               int(cfg["rendering"]["k_candidates"]),
                               float(cfg["rendering"]["margin"]))
    return pd.DataFrame(rows), pd.DataFrame(cands)


def reply_quality(items_path: str | Path, speak: bool, sample_rate: int, seed: int,
                  n_voices: int = 4, scorer: dict | None = None,
                  dnsmos: Mapping[tuple[str, int], Mapping[str, Any]] | None = None
                  ) -> pd.DataFrame:
    """Per item x reply (0/1): lexical measures; DNSMOS (speechmos) of the reply
    spoken by a neutral espeak voice drawn per item from `n_voices` (`reply_voice`;
    column `reply_voice`) when `speak`; and, when `scorer` is given ({judge, spec,
    cache_dir, template, replay, budget_usd}), the LLM scores of
    `study_b.quality` (llm_helpfulness, ...). `dnsmos`: (item_id, reply) ->
    reply_voice and the DNSMOS columns, already scored by the workflow's shards
    (`study_b.reply_dnsmos`); without it the replies are rendered and scored here,
    each distinct reply audio once (the same numbers)."""
    items = read_jsonl(items_path)
    if speak and dnsmos is None:
        from judgeaudit.study_b import reply_dnsmos as RD

        plan = RD.plan_clips({"_": items_path}, seed, n_voices, 1)
        dnsmos = RD.dnsmos_by_reply(plan, [RD.score_shard(plan, 0)], "_")
    rows = []
    for it in items:
        for r, text in enumerate(it["replies"]):
            row: dict[str, Any] = {"item_id": it["item_id"], "task": it["family"], "reply": r,
                                   "text": text, **lexical_quality(text)}
            if speak:
                got = dnsmos.get((it["item_id"], r))
                if got is None:
                    raise ValueError(f"{items_path}: reply {it['item_id']}|{r} has no DNSMOS "
                                     "score (the reply-clip plan is of other items)")
                row.update(got)
            rows.append(row)
    frame = pd.DataFrame(rows)
    if scorer:
        from judgeaudit.study_b.quality import llm_scores

        llm = llm_scores(items, scorer["judge"], scorer["spec"], scorer["cache_dir"],
                         PR.Template.load(scorer["template"]), replay=bool(scorer.get("replay")),
                         budget_usd=scorer.get("budget_usd"))
        frame = frame.merge(llm.drop(columns=["task"]), on=["item_id", "reply"], how="left",
                            validate="one_to_one")
    return frame


def trials_for(items_path: str | Path, renderings_path: str | Path, shard: str,
               template_paths: dict[str, str], cue_path: str | None,
               trajectory: str = "all") -> list[dict]:
    items = read_jsonl(items_path)
    rend = _read_tsv(renderings_path, "renderings table").to_dict("records")
    templates = {k: PR.Template.load(v) for k, v in template_paths.items()}
    cue = PR.Template.load(cue_path) if cue_path else None
    return PR.build_trials(items, audio_map(rend), shard, templates, cue, trajectory)


def items_by_task(paths: Sequence[str | Path]) -> list[dict]:
    out = []
    for p in paths:
        out.extend(read_jsonl(p))
    return out


def dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True)


__all__ = ["LEXICAL_METRICS", "build_items", "items_by_task", "render_task", "reply_quality",
           "reply_voice", "trials_for", "voices_for"]

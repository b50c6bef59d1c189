"""The writer swap: the same audit items with their replies re-written by a second
writer, and each judge's accuracy under both writers.

Offline the two writers are the two template families (`templates`:
templates/study_b/replies.yaml, `templates_b`: replies_b.yaml; vocab
`WRITER_BANKS`). `rewrite` keeps everything an item is (transcript, renderings,
labels, reply order, the frame and fill variant drawn for it) and replaces only
R0 / R1 with the second writer's, so the judge sees the same audio and the same
question; a change of accuracy is the writer's doing. The ablation judges the
native Pointwise question (`pointwise-none`) with every Study B judge through the
judging engine (cached like every judge call) and reports per judge x task x
writer the accuracy (clustered on items) and the paired difference second - run
writer over items (`study_b.metrics.paired_item_diff`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.study_b import items as I
from judgeaudit.study_b import protocols as PR
from judgeaudit.study_b.replies import ReplyBank

SHARD = "pointwise-none"


def rewrite(items: Sequence[dict], bank: ReplyBank, writer: str) -> list[dict]:
    """The items with R0 / R1 written from `bank` (same frame and variant index)."""
    out = []
    for it in items:
        new = copy.deepcopy(it)
        if it.get("reply_source", {}).get("kind") == "llm":
            raise I.ItemError(f"item {it['item_id']}: replies written by an LLM; the "
                              f"offline writer swap re-writes template items only")
        if it["family"] == "positional":
            text = {t["turn"]: t["text"] for t in it["turns"]}
            p0, p1 = it["shift_turns"]
            new["replies"] = list(bank.positional_pair(text[p0], text[p1], it["shift_emotion"],
                                                       it["frame"], it["variant"]))
        else:
            e0, e1 = it["labels"]
            new["replies"] = list(bank.emotion_pair(e0, e1, it["frame"], it["variant"]))
        new["reply_bank_sha256"] = bank.sha256
        new["reply_source"] = {"kind": "templates", "writer": writer, "bank": Path(bank.path).name}
        I.check_item(new)
        out.append(new)
    return out


def judge_trials(trials: Sequence[dict], judge: str, spec: dict[str, Any], cache_dir: str | Path,
                 audio_root: str | Path = ".", replay: bool = False,
                 budget_usd: float | None = None) -> list[dict]:
    """Responses of one judge to `trials` through the engine (no files written)."""
    from judgeaudit.judges.adapters import make_adapter
    from judgeaudit.judges.cache import ResponseCache
    from judgeaudit.judges.engine import RETRYABLE, Engine, EngineOptions
    from judgeaudit.judges.request import Request
    from judgeaudit.judges.shard import attempts_log_path

    adapter = make_adapter(judge, spec)
    if hasattr(adapter, "perception_store"):  # as judges.shard.run_shards
        adapter.perception_store = str(Path(cache_dir) / "perception.sqlite")
    cap = spec.get("budget_usd")
    opts = EngineOptions.from_spec(spec, audio_root=audio_root, progress=False, replay=replay,
                                   budget_usd=budget_usd,
                                   judge_cap_usd=None if cap is None else float(cap),
                                   attempts_log=attempts_log_path(cache_dir, judge))
    with ResponseCache(cache_dir) as cache:
        rows = Engine(adapter, cache, opts).run(
            [(t["trial_id"], Request.from_json(t["request"])) for t in trials])
    failed = [r for r in rows if r["status"] in RETRYABLE]
    if failed:
        raise RuntimeError(f"writer ablation: judge {judge}: {len(failed)} of {len(rows)} "
                           f"requests got no answer ({failed[0].get('error')}); answered ones "
                           f"are cached, rerun for the rest")
    return rows


def ablation_table(main: pd.DataFrame, alt: pd.DataFrame, main_writer: str, alt_writer: str,
                   n_boot: int = 0, seed: int = 0, clusters: dict | None = None
                   ) -> pd.DataFrame:
    """Per judge x task: accuracy under each writer and the paired difference (alt -
    main) over items. `main` / `alt`: scored pointwise-none trials (score_trials);
    `clusters`: the voice of each item where a task's items share voices
    (`study_b.metrics.item_clusters`), the unit those tasks' intervals cluster on."""
    from judgeaudit.study_b import metrics as SB

    rows = []
    for (judge, task), g in main.groupby(["judge", "task"]):
        a = alt[(alt["judge"] == judge) & (alt["task"] == task)]
        if a.empty:
            continue
        for writer, frame in ((main_writer, g), (alt_writer, a)):
            rows.append({"judge": judge, "task": task, "row": "accuracy", "writer": writer,
                         **SB.cell(frame, clusters)})
        diff = SB.paired_item_diff(a, g, n_boot, seed, clusters)
        rows.append({"judge": judge, "task": task, "row": "difference",
                     "writer": f"{alt_writer} - {main_writer}", **diff})
    return pd.DataFrame(rows)


def writer_ablation(tasks: Mapping[str, Mapping[str, str]], judges: Mapping[str, Mapping[str, dict]],
                    alt_bank: str | Path, alt_writer: str, main_writer: str,
                    templates: Mapping[str, str], cache_dir: str | Path, n_boot: int = 0,
                    seed: int = 0, replay: bool = False, budget_usd: float | None = None
                    ) -> pd.DataFrame:
    """`tasks`: task -> {items, renderings, scored: {judge: main pointwise-none TSV}};
    `judges`: judge -> task -> spec. Returns `ablation_table`."""
    from judgeaudit.io import read_jsonl
    from judgeaudit.study_b import metrics as SB
    from judgeaudit.study_b.build import _read_tsv
    from judgeaudit.study_b.renderings import audio_map

    bank = ReplyBank.load(alt_bank)
    tmpl = {k: PR.Template.load(v) for k, v in templates.items()}
    main_frames, alt_frames, all_items = [], [], []
    for task, paths in sorted(tasks.items()):
        items = rewrite(read_jsonl(paths["items"]), bank, alt_writer)
        all_items += items
        rend = _read_tsv(paths["renderings"], "renderings table").to_dict("records")
        trials = PR.build_trials(items, audio_map(rend), SHARD, tmpl)
        for judge, spec_by_task in sorted(judges.items()):
            resp = judge_trials(trials, judge, spec_by_task[task], cache_dir, replay=replay,
                                budget_usd=budget_usd)
            alt_frames.append(SB.score_trials(trials, resp, judge, SHARD,
                                              what=f"writer ablation {judge}/{task}"))
            main_frames.append(SB.read_scored(paths["scored"][judge]))
    return ablation_table(pd.concat(main_frames, ignore_index=True),
                          pd.concat(alt_frames, ignore_index=True), main_writer, alt_writer,
                          n_boot, seed, SB.item_clusters(all_items))


__all__ = ["SHARD", "ablation_table", "judge_trials", "rewrite", "writer_ablation"]

"""Judge one trial shard: `results/trials/<study>/<task>/<shard>.jsonl` ->
`results/responses/<judge>/<study>/<task>/<shard>.jsonl` (CONTRACTS sections 3-4).

Only each trial's `request` reaches the judge; gold and facts stay here. The output
is written atomically at the end; the cache is written as responses arrive.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from judgeaudit.io import read_jsonl, write_jsonl_atomic
from judgeaudit.judges.adapters.base import make_adapter
from judgeaudit.judges.cache import ResponseCache
from judgeaudit.judges.engine import Engine, EngineOptions
from judgeaudit.judges.request import Request

log = logging.getLogger("judgeaudit.judges")


def read_trials(path: str | Path) -> list[tuple[str, Request]]:
    items = []
    for i, row in enumerate(read_jsonl(path), 1):
        if "trial_id" not in row or "request" not in row:
            raise ValueError(f"{path}: trial {i} lacks 'trial_id' or 'request' (CONTRACTS section 3)")
        try:
            items.append((str(row["trial_id"]), Request.from_json(row["request"])))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: trial {row['trial_id']}: bad request ({exc})") from exc
    ids = [t for t, _ in items]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: duplicate trial_id values")
    return items


def run_shard(
    trials_path: str | Path,
    out_path: str | Path,
    judge_name: str,
    spec: dict[str, Any],
    cache_dir: str | Path,
    audio_root: str | Path = ".",
    progress: bool = True,
    **option_overrides: Any,
) -> dict[str, Any]:
    """Judge every trial of a shard and write its responses. Returns a summary."""
    items = read_trials(trials_path)
    adapter = make_adapter(judge_name, spec)
    if hasattr(adapter, "perception_store"):
        # specialist outputs shared across judges and shards (embedded judges only)
        adapter.perception_store = str(Path(cache_dir) / "perception.sqlite")
    options = EngineOptions.from_spec(spec, audio_root=audio_root, progress=progress,
                                      **option_overrides)
    with ResponseCache(cache_dir) as cache:
        engine = Engine(adapter, cache, options)
        rows = engine.run(items)
    write_jsonl_atomic(out_path, rows)
    st = engine.stats
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    summary = {"judge": judge_name, "fingerprint": engine.fingerprint, "trials": st.total,
               "cached": st.cached, "new": st.new, "sent": st.sent,
               "est_cost_usd": st.est_cost_usd, "status_counts": counts}
    log.info("shard %s -> %s: %s", trials_path, out_path, summary)
    return summary

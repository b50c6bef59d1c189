"""Judge one trial shard: `results/trials/<study>/<task>/<shard>.jsonl` ->
`results/responses/<judge>/<study>/<task>/<shard>.jsonl` (CONTRACTS sections 3-4).

Only each trial's `request` reaches the judge; gold and facts stay here. The output
is written atomically at the end; the cache is written as responses arrive.

A shard whose requests did not all get an answer (transport errors after the last
retry, missing or rejected credentials, budget reached) is NOT written: the job
fails after every answer is cached, naming the failures, so the next plain
`snakemake` re-runs exactly the unanswered requests (everything answered is
replayed from the cache). `accept_errors=True` (config `judges.accept_errors`)
writes such rows instead, with status `error`/`budget`, counted as `n_error`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from judgeaudit.io import read_jsonl, write_jsonl_atomic
from judgeaudit.judges.adapters import make_adapter
from judgeaudit.judges.cache import ResponseCache
from judgeaudit.judges.engine import RETRYABLE, Engine, EngineOptions
from judgeaudit.judges.request import Request

log = logging.getLogger("judgeaudit.judges")


def select_request(row: dict[str, Any], max_audio_inputs: int | None = None
                   ) -> tuple[Request, str | None]:
    """The request one judge gets for a trial row, and its layout (None when the
    trial offers no layout choice). A row may carry alternates `alt_requests`
    {layout: {"request", "facts"}} (Study A speaker `concat` under `reference_layout:
    auto`): the judge gets `request` when its audio-input limit takes it, else the
    alternate with the fewest audio parts that fits (ties by layout name); when none
    fits, `request` (then recorded `unsupported`)."""
    req = Request.from_json(row["request"])
    alts = row.get("alt_requests") or {}
    if not alts:
        return req, (row.get("facts") or {}).get("reference_layout")
    primary = (row.get("facts") or {}).get("reference_layout") or "separate"
    if max_audio_inputs is None or req.n_audio <= int(max_audio_inputs):
        return req, primary
    fits = []
    for name in sorted(alts):
        alt = Request.from_json(alts[name]["request"])
        if alt.n_audio <= int(max_audio_inputs):
            fits.append((alt.n_audio, name, alt))
    if not fits:
        return req, primary
    _, name, alt = min(fits, key=lambda f: (f[0], f[1]))
    return alt, name


def read_trial_requests(path: str | Path, max_audio_inputs: int | None = None
                        ) -> list[tuple[str, Request, str | None]]:
    """(trial_id, the request this judge gets, its layout) per trial (`select_request`)."""
    items = []
    for i, row in enumerate(read_jsonl(path), 1):
        if "trial_id" not in row or "request" not in row:
            raise ValueError(f"{path}: trial {i} lacks 'trial_id' or 'request' (CONTRACTS section 3)")
        try:
            req, layout = select_request(row, max_audio_inputs)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: trial {row['trial_id']}: bad request ({exc})") from exc
        items.append((str(row["trial_id"]), req, layout))
    ids = [t for t, _, _ in items]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: duplicate trial_id values")
    return items


class ShardIncomplete(RuntimeError):
    """Some requests of a shard have no answer yet; a rerun retries exactly those.
    `written`: the shards of the same call that were complete and written."""

    def __init__(self, message: str, written: Sequence[str | Path] = ()):
        super().__init__(message)
        self.written = [str(p) for p in written]


def kept_marker(log_path: str | Path) -> Path:
    """Where a grouped judge job that failed lists the shard files it finished."""
    return Path(str(log_path) + ".kept.json")


def write_kept(log_path: str | Path, written: Sequence[str | Path]) -> None:
    """List the finished shard files (with their sha256) of a failing grouped job, so
    Snakemake's clean-up of the failed job keeps them (`kept_outputs`)."""
    from judgeaudit.io import sha256_file, write_json_atomic

    write_json_atomic(kept_marker(log_path), {str(p): sha256_file(p) for p in written})


def kept_outputs(log_path: str | Path) -> set[str]:
    """The finished shard files a failed grouped job listed, each only while its bytes
    are still the ones listed; the list is consumed."""
    import json

    from judgeaudit.io import sha256_file

    marker = kept_marker(log_path)
    try:
        listed = json.loads(marker.read_text())
        marker.unlink()
    except (OSError, ValueError):
        return set()
    keep = set()
    for path, sha in listed.items():
        try:
            if sha256_file(path) == sha:
                keep.add(path)
        except OSError:
            pass
    return keep


def attempts_log_path(cache_dir: str | Path, judge_name: str) -> Path:
    return Path(cache_dir) / "judge" / "attempts" / f"{judge_name}.jsonl"


def run_shards(
    shards: Sequence[tuple[str | Path, str | Path]],
    judge_name: str,
    spec: dict[str, Any],
    cache_dir: str | Path,
    audio_root: str | Path = ".",
    progress: bool = True,
    budget_usd: float | None = None,
    accept_errors: bool = False,
    on_shard: Callable[[str, str, dict[str, Any]], None] | None = None,
    **option_overrides: Any,
) -> list[dict[str, Any]]:
    """Judge several trial shards (trials_path, out_path) with one judge in one
    process: the adapter (and any model it loads) and the cache are opened once.
    Each shard is judged, written atomically and handed to `on_shard(trials, out,
    summary)` (e.g. its provenance record) before the next starts; the cache is
    written as responses arrive. A shard whose requests did not all get an answer
    is not written; the others still run, then ShardIncomplete names every
    incomplete shard (a rerun replays everything answered from the cache)."""
    adapter = make_adapter(judge_name, spec)
    limit = adapter.max_audio_inputs
    # every shard validated first; each trial's request chosen for this judge's limit
    items = [(t, o, read_trial_requests(t, limit)) for t, o in shards]
    if hasattr(adapter, "perception_store"):
        # specialist outputs shared across judges and shards (embedded judges only)
        adapter.perception_store = str(Path(cache_dir) / "perception.sqlite")
    cap = spec.get("budget_usd")
    option_overrides.setdefault("budget_usd", budget_usd)
    option_overrides.setdefault("judge_cap_usd", None if cap is None else float(cap))
    option_overrides.setdefault("attempts_log", attempts_log_path(cache_dir, judge_name))
    options = EngineOptions.from_spec(spec, audio_root=audio_root, progress=progress,
                                      **option_overrides)
    summaries, problems, written = [], [], []
    with ResponseCache(cache_dir) as cache:
        for trials_path, out_path, shard_items in items:
            engine = Engine(adapter, cache, options)
            rows = engine.run([(t, r) for t, r, _ in shard_items])
            layouts = {t: lay for t, _, lay in shard_items if lay is not None}
            for r in rows:  # which layout this judge got (CONTRACTS section 4)
                if r["trial_id"] in layouts:
                    r["layout"] = layouts[r["trial_id"]]
            st = engine.stats
            counts: dict[str, int] = {}
            for r in rows:
                counts[r["status"]] = counts.get(r["status"], 0) + 1
            summary = {"judge": judge_name, "fingerprint": engine.fingerprint,
                       "trials": st.total, "cached": st.cached, "new": st.new,
                       "sent": st.sent, "reused_in_flight": st.reused_in_flight,
                       "est_cost_usd": st.est_cost_usd, "status_counts": counts}
            summaries.append(summary)
            failed = [r for r in rows if r["status"] in RETRYABLE
                      or r["request_key"] in engine.retry_keys]
            if failed and not accept_errors:
                log.error("shard %s: %s", trials_path, summary)
                problems.append(incomplete_message(trials_path, judge_name, rows, failed,
                                                   options.attempts_log))
                continue
            write_jsonl_atomic(out_path, rows)
            written.append(out_path)
            log.info("shard %s -> %s: %s", trials_path, out_path, summary)
            if on_shard is not None:
                on_shard(str(trials_path), str(out_path), summary)
    if problems:
        raise ShardIncomplete("\n".join(problems), written)
    return summaries


def incomplete_message(trials_path, judge_name: str, rows: list[dict], failed: list[dict],
                       attempts_log) -> str:
    reasons: dict[str, int] = {}
    for r in failed:
        why = f"{r['status']}: {(r.get('error') or '')[:160]}"
        reasons[why] = reasons.get(why, 0) + 1
    top = sorted(reasons.items(), key=lambda kv: -kv[1])[:5]
    lines = [f"judge {judge_name}, shard {trials_path}: {len(failed)} of {len(rows)} "
             f"requests have no answer (every answered request is cached; the shard "
             f"output is not written):"]
    lines += [f"  {n} x {why}" for why, n in top]
    if any(r["status"] == "budget" for r in failed):
        lines.append("  the budget was reached: raise judges.budget_usd (or the judge's "
                     "budget_usd) and rerun the same command; answered requests are not paid again")
    else:
        lines.append("  rerun the same command once the cause is fixed: exactly these "
                     "requests are sent again (set judges.accept_errors: true to keep them as "
                     "`error` rows instead)")
    lines.append(f"  every attempt is logged in {attempts_log}")
    return "\n".join(lines)

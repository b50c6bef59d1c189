"""The paper's reply-balance check with an LLM scorer: every reply R0 / R1 of every
item rated by a judge of the panel on helpfulness, relevance, specificity and
naturalness (1-5), through the judging engine (content-addressed cache, spend
ledger and budget, replay-only mode), so a rerun costs nothing and a replayed run
makes no call. The lexical counts (`study_b.replies.lexical_quality`) stay the
offline default (config study_b.replies.scorer: null).

One request per item x reply x criterion: the system text, the template
`templates/study_b/quality_scorer.txt` filled with the criterion, its definition,
the transcript (`protocols.context_text`) and the reply; answer key `score`, allowed
"1".."5". An answer that is not valid (refusal, invalid JSON, error) is left out
of that reply's score (the balance gap counts only items scored on both replies)
and counted in `llm_n_invalid`; a request with no answer at all (transport error,
budget reached) fails the step like an incomplete judge shard (`ScorerIncomplete`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.judges.request import AnswerSpec, Request, TextPart
from judgeaudit.study_b.protocols import Template, context_text

log = logging.getLogger("judgeaudit.study_b")

CRITERIA: dict[str, str] = {
    "helpfulness": "how much the reply helps the user with what they said",
    "relevance": "how closely the reply addresses what the user said",
    "specificity": "how concrete and specific to this user the reply is, rather than generic",
    "naturalness": "how natural and fluent the reply reads as something a person would say",
}
#: the paper's reported R0 / R1 gaps on the LLM scores (1-5 scales)
PAPER_GAPS: dict[str, float] = {"helpfulness": 0.41, "relevance": 0.74, "specificity": 0.51,
                                "naturalness": 0.69}
SCORE_ANSWER = AnswerSpec(key="score", allowed=("1", "2", "3", "4", "5"), reasoning=False)
SCORER_SYSTEM = ("You are a careful rater of assistant replies. Answer only with the JSON "
                 "object requested.")
LLM_METRICS = tuple(f"llm_{c}" for c in CRITERIA)


class ScorerIncomplete(RuntimeError):
    """Some scorer requests got no answer (error or budget); answered ones are cached."""


def metric_name(criterion: str) -> str:
    return f"llm_{criterion}"


def paper_gap(metric: str) -> float | None:
    """The paper's gap for an LLM-scorer metric (`llm_<criterion>`), else None."""
    return PAPER_GAPS.get(metric.removeprefix("llm_")) if metric.startswith("llm_") else None


def scorer_requests(items: Sequence[dict], template: Template
                    ) -> list[tuple[str, Request, dict[str, Any]]]:
    """(request id, Request, facts) per item x reply x criterion."""
    out = []
    for it in items:
        ctx = context_text(it)
        for r, text in enumerate(it["replies"]):
            for crit, definition in CRITERIA.items():
                prompt = template.text.format(criterion=crit, definition=definition,
                                              context=ctx, reply=text)
                req = Request(SCORER_SYSTEM, (TextPart(prompt),), SCORE_ANSWER)
                rid = f"{it['item_id']}|{r}|{crit}"
                out.append((rid, req, {"item_id": it["item_id"], "task": it["family"],
                                       "reply": r, "criterion": crit}))
    return out


def llm_scores(items: Sequence[dict], judge_name: str, spec: dict[str, Any],
               cache_dir: str | Path, template: Template, replay: bool = False,
               budget_usd: float | None = None, progress: bool = False) -> pd.DataFrame:
    """Per item x reply: llm_<criterion> (1-5, NaN when the answer was not valid),
    llm_n_invalid and llm_scorer (the judge name), from the judging engine."""
    from judgeaudit.judges.adapters import make_adapter
    from judgeaudit.judges.cache import ResponseCache
    from judgeaudit.judges.engine import RETRYABLE, Engine, EngineOptions
    from judgeaudit.judges.shard import attempts_log_path

    reqs = scorer_requests(items, template)
    adapter = make_adapter(judge_name, spec)
    cap = spec.get("budget_usd")
    opts = EngineOptions.from_spec(spec, progress=progress, replay=replay,
                                   budget_usd=budget_usd,
                                   judge_cap_usd=None if cap is None else float(cap),
                                   attempts_log=attempts_log_path(cache_dir, judge_name))
    with ResponseCache(cache_dir) as cache:
        eng = Engine(adapter, cache, opts)
        rows = eng.run([(rid, req) for rid, req, _ in reqs])
    failed = [r for r in rows if r["status"] in RETRYABLE]
    if failed:  # like a judge shard: everything answered is cached, a rerun pays the rest
        raise ScorerIncomplete(
            f"reply scorer {judge_name}: {len(failed)} of {len(rows)} requests got no answer "
            f"({sorted({r['status'] for r in failed})}; first: {failed[0].get('error')}); "
            f"the answered ones are cached, rerun to score the rest")
    by_id = {r["trial_id"]: r for r in rows}
    table: dict[tuple[str, int], dict[str, Any]] = {}
    for rid, _, f in reqs:
        key = (f["item_id"], f["reply"])
        row = table.setdefault(key, {"item_id": f["item_id"], "task": f["task"],
                                     "reply": f["reply"], "llm_n_invalid": 0,
                                     "llm_scorer": judge_name})
        res = by_id[rid]
        if res.get("status") == "valid":
            row[metric_name(f["criterion"])] = float(res["parsed"])
        else:
            row[metric_name(f["criterion"])] = float("nan")
            row["llm_n_invalid"] += 1
    st = eng.stats
    log.info("reply scorer %s: %d requests, %d cached, %d sent, est. cost %.4f USD",
             judge_name, st.total, st.cached, st.sent, st.est_cost_usd)
    return pd.DataFrame(list(table.values()))


__all__ = ["CRITERIA", "LLM_METRICS", "PAPER_GAPS", "SCORE_ANSWER", "ScorerIncomplete",
           "llm_scores",
           "metric_name", "paper_gap", "scorer_requests"]

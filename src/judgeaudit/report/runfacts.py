"""What this run is, said first: which judges are real models, which simulated or
embedded controls, which corpora synthetic or real, and how many trials each judge
answered (counted per judge from its response files, not assumed equal).

Each statement is computed by one function here from the run's own files and config;
the report only formats it, and tests re-derive it another way.
"""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgeaudit.io import read_jsonl
from judgeaudit.judges.adapters import providers
from judgeaudit.workflow import corpus_kind

_e = html.escape
STUDY_NAMES = {"A": "Study A", "B": "Study B"}


def judge_kind(spec: Mapping[str, Any]) -> str:
    """"simulated" (propensities planted in the config), "control" (an embedded judge
    of known behaviour), "embedded" (another built-in judge, no model called) or
    "model" (an API or open-weight model: a real measurement)."""
    prov = str(spec.get("provider", ""))
    if prov == "simulated":
        return "simulated"
    if prov in providers(control=True):
        return "control"
    if prov in providers(embedded=True):
        return "embedded"
    return "model"


@dataclass(frozen=True)
class Answered:
    """What the response files record, read in one pass: distinct trials answered per
    judge and study, and the model versions each judge's rows name (with counts)."""

    trials: dict[str, dict[str, int]]
    versions: dict[str, Counter]


def answered_per_judge(root: Path) -> Answered:
    """Read off results/responses/<judge>/<study>/<task>/<shard>.jsonl (a row per
    trial sent)."""
    seen: dict[tuple[str, str], set[str]] = defaultdict(set)
    versions: dict[str, Counter] = defaultdict(Counter)
    for f in sorted((Path(root) / "results" / "responses").glob("*/*/*/*.jsonl")):
        judge, study = f.parts[-4], f.parts[-3]
        ids = seen[(judge, study)]
        for r in read_jsonl(f):
            ids.add(str(r.get("trial_id")))
            versions[judge][str(r.get("model_version"))] += 1
    trials: dict[str, dict[str, int]] = defaultdict(dict)
    for (judge, study), ids in sorted(seen.items()):
        trials[judge][study] = len(ids)
    return Answered(dict(trials), dict(versions))


def _names(xs: Sequence[str]) -> str:
    xs = [f"<b>{_e(x)}</b>" for x in xs]
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def trials_sentence(per_judge: Mapping[str, Mapping[str, int]], active: Sequence[str]
                    ) -> str:
    """Trials per judge, grouped by identical counts (judges in different studies
    answer different numbers of trials)."""
    groups: dict[tuple, list[str]] = defaultdict(list)
    for j in active:
        by_study = per_judge.get(j, {})
        groups[tuple(sorted(by_study.items()))].append(j)
    parts = []
    for key, judges in sorted(groups.items(), key=lambda kv: -sum(n for _, n in kv[0])):
        total = sum(n for _, n in key)
        studies = " + ".join(f"{n} {STUDY_NAMES.get(s, s)}" for s, n in key) or "none"
        each = " each" if len(judges) > 1 else ""
        parts.append(f"{_names(judges)} answered {total} trials{each} ({studies})")
    return "; ".join(parts) + "." if parts else "No judge answered any trial."


def kinds_sentence(panel: Mapping[str, Any], active: Sequence[str],
                   corpora: Sequence[str], config: Mapping[str, Any]) -> str:
    """The first-screen statement: the kinds of judges and corpora that ran, and what
    the findings can mean given them."""
    by: dict[str, list[str]] = defaultdict(list)
    for j in active:
        by[judge_kind(panel.get(j) or {})].append(j)
    parts = []
    if by["model"]:
        parts.append(f"{_names(by['model'])} "
                     f"{'are real models' if len(by['model']) > 1 else 'is a real model'} "
                     "(API or open-weight: measured)")
    if by["simulated"]:
        parts.append(f"{_names(by['simulated'])} "
                     f"{'are' if len(by['simulated']) > 1 else 'is'} simulated, with "
                     "propensities planted in the config (not models)")
    if by["control"] or by["embedded"]:
        emb = by["control"] + by["embedded"]
        parts.append(f"{_names(emb)} {'are' if len(emb) > 1 else 'is an'} embedded "
                     f"control{'s' if len(emb) > 1 else ''} of known behaviour")
    ck: dict[str, list[str]] = defaultdict(list)
    for c in corpora:
        ck[corpus_kind(c)].append(c)
    cparts = []
    if ck["synthetic"]:
        cparts.append(f"{len(ck['synthetic'])} synthetic (speech made with espeak-ng by the "
                      f"workflow: {_e(', '.join(ck['synthetic']))})")
    if ck["real"]:
        cparts.append(f"{len(ck['real'])} real ({_e(', '.join(ck['real']))})")
    out = (f"<b>What this run is.</b> Of the {len(active)} judges, "
           + "; ".join(parts) + ". The corpora: " + (" and ".join(cparts) or "none") + ".")
    audited = by["model"] + by["simulated"]
    if audited and not by["model"]:
        out += (" Every audited judge is simulated: the findings below validate the audit "
                "(it recovers rates planted by design) and describe no real model.")
    elif by["model"] and not ck["real"]:
        out += (" The speech is synthetic: the findings describe these models on "
                "espeak-ng speech, not on real speech.")
    return out


__all__ = ["Answered", "answered_per_judge", "judge_kind", "kinds_sentence",
           "trials_sentence"]

"""Import listening-test answers (the TSVs the page downloads) into
`results/tables/human_validation.{tsv,md,tex}`.

Each answer is matched to its trial in `results/trials/<study>/<task>/<shard>.jsonl`
by trial id (gold comes from there, never from the page). Per study, task, shard and
condition the table gives
 - `gold`: the listeners' accuracy (answer == gold);
 - `judge <name>`: agreement of the listeners' answers with that judge's parsed
   answer on the same trials (`results/responses/<judge>/<study>/<task>/<shard>.jsonl`,
   valid answers only);
each a share with a cluster-robust interval from `stats.clustered.clustered_proportion`
clustered on the trial's sampling unit (Study B: the item; Study A: the speaker, or
the clip), so several raters answering one item, or the two renderings of an item,
are not counted as independent. Unanswered rows are counted, not scored.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.human.listening import TSV_COLUMNS, cluster_of, shard_path
from judgeaudit.io import read_jsonl
from judgeaudit.stats.clustered import clustered_proportion

TABLE = "human_validation"
TABLE_DIR = Path("results") / "tables"
CAPTION = ("Human listening check: listeners' accuracy against gold and agreement with "
           "each judge on the same trials (95% intervals clustered on the sampling unit).")
COLUMNS = ("study", "task", "shard", "condition", "comparison", "raters", "n_answers",
           "n_unanswered", "estimate", "ci_low", "ci_high", "n", "n_clusters",
           "cluster_unit", "method", "one_sided")


class ImportHumanError(ValueError):
    pass


def read_answers(paths: Sequence[str | Path]) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for p in paths:
        p = Path(p)
        try:
            with p.open(newline="", encoding="utf-8") as fh:
                reader = csv.DictReader(fh, delimiter="\t")
                missing = [c for c in TSV_COLUMNS if c not in (reader.fieldnames or [])]
                if missing:
                    raise ImportHumanError(f"{p}: not a listening-test TSV (missing column(s) "
                                           f"{', '.join(missing)})")
                for i, row in enumerate(reader, 2):
                    rows.append({**{k: (row.get(k) or "").strip() for k in TSV_COLUMNS},
                                 "_where": f"{p}:{i}"})
        except OSError as exc:
            raise ImportHumanError(f"{p}: cannot read ({exc.strerror})") from exc
    if not rows:
        raise ImportHumanError("no answers in " + ", ".join(str(p) for p in paths))
    return rows


def _judge_answers(root: Path, study: str, task: str, shard: str) -> dict[str, dict[str, str]]:
    """{judge: {trial_id: parsed}} over the valid answers of every judge with this shard."""
    out: dict[str, dict[str, str]] = {}
    for path in sorted((root / "results" / "responses").glob(f"*/{study}/{task}/{shard}.jsonl")):
        judge = path.relative_to(root / "results" / "responses").parts[0]
        out[judge] = {str(r["trial_id"]): str(r["parsed"]) for r in read_jsonl(path)
                      if r.get("status") == "valid" and r.get("parsed") is not None}
    return out


def _unit(trials: dict[str, dict]) -> str:
    units = {str((t.get("facts") or {}).get("cluster_unit") or
                 ("item" if (t.get("facts") or {}).get("item_id") else "trial"))
             for t in trials.values()}
    return "/".join(sorted(units))


def validation_table(root: str | Path, answer_paths: Sequence[str | Path]) -> pd.DataFrame:
    root = Path(root)
    answers = read_answers(answer_paths)
    groups: dict[tuple[str, str, str, str], list[dict[str, str]]] = {}
    for a in answers:
        groups.setdefault((a["study"], a["task"], a["shard"], a["condition"]), []).append(a)
    rows: list[dict[str, Any]] = []
    for (study, task, shard, condition), group in sorted(groups.items()):
        path = shard_path(root, study, task, shard)
        if not path.is_file():
            raise ImportHumanError(f"{group[0]['_where']}: trial shard {path} not found (the "
                                   f"answers name study {study}, task {task}, shard {shard})")
        trials = {str(t["trial_id"]): t for t in read_jsonl(path)}
        scored = []
        for a in group:
            trial = trials.get(a["trial_id"])
            if trial is None:
                raise ImportHumanError(f"{a['_where']}: trial_id {a['trial_id']!r} is not in {path}")
            if a["answer"]:
                allowed = tuple(trial["request"]["answer"]["allowed"])
                if a["answer"] not in allowed:
                    raise ImportHumanError(f"{a['_where']}: answer {a['answer']!r} not one of "
                                           f"{', '.join(allowed)}")
                scored.append((a, trial))
        n_unanswered = len(group) - len(scored)
        raters = len({a["rater"] for a in group})
        used = {a["trial_id"]: trials[a["trial_id"]] for a, _ in scored}
        base = {"study": study, "task": task, "shard": shard, "condition": condition,
                "raters": raters, "n_unanswered": n_unanswered, "cluster_unit": _unit(used)}
        comparisons = [("gold", {tid: str(t["gold"]) for tid, t in used.items()})]
        comparisons += [(f"judge {j}", ans)
                        for j, ans in _judge_answers(root, study, task, shard).items()]
        for name, ref in comparisons:
            pairs = [(a, t) for a, t in scored if a["trial_id"] in ref]
            est = clustered_proportion([float(a["answer"] == ref[a["trial_id"]]) for a, _ in pairs],
                                       [cluster_of(t) for _, t in pairs])
            rows.append({**base, "comparison": name, "n_answers": len(pairs), **est.row()})
    frame = pd.DataFrame(rows)
    return frame[[c for c in COLUMNS if c in frame.columns]]


def import_human(root: str | Path, answer_paths: Sequence[str | Path],
                 out_base: str | Path | None = None) -> dict[str, Any]:
    from judgeaudit.render.tables import write_table

    root = Path(root)
    frame = validation_table(root, answer_paths)
    base = Path(out_base) if out_base is not None else root / TABLE_DIR / TABLE
    base.parent.mkdir(parents=True, exist_ok=True)
    shown = frame.drop(columns=["one_sided"])
    paths = write_table(shown, base, CAPTION, digits=3, tsv_frame=frame)
    return {"paths": [str(p) for p in paths], "rows": len(frame),
            "answers": int(frame.loc[frame["comparison"] == "gold", "n_answers"].sum())}


def _fmt(x: Any) -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "?"
    return "nan" if math.isnan(v) else f"{v:.2f}"


def limitation_sentences(root: str | Path) -> list[str]:
    """The report's human-check limitation: the measured accuracy when
    `results/tables/human_validation.tsv` exists, else that no human check was made."""
    path = Path(root) / TABLE_DIR / f"{TABLE}.tsv"
    if not path.is_file():
        return ["No human listening check: whether a careful listener solves the items "
                "is not measured in this run (collect one with `judgeaudit listening-test` "
                "and `judgeaudit import-human`)."]
    frame = pd.read_csv(path, sep="\t", keep_default_na=False)
    gold = frame[frame["comparison"] == "gold"]
    parts = []
    for _, r in gold.iterrows():
        cond = f", {r['condition']}" if str(r["condition"]) else ""
        parts.append(f"Study {r['study']} {r['task']} ({r['shard']}{cond}): accuracy "
                     f"{_fmt(r['estimate'])} [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}] on "
                     f"{r['n']} answers to {r['n_clusters']} {r['cluster_unit']} cluster(s) "
                     f"from {r['raters']} listener(s)")
    return ["Human listening check (results/tables/human_validation; 95% intervals "
            "clustered on the sampling unit): " + "; ".join(parts) + ". Only these tasks "
            "were checked by listeners, and only on the trials the page sampled."]

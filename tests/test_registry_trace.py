"""The cell trace recomputes every traceable table through the outputs registry's own
recipe (the functions the metric rules' scripts call), and `judgeaudit trace` shows
what each trial showed the judge (the reference label of a reference-condition
trial), on the shared tiny run."""

from __future__ import annotations

import dataclasses
import functools
import json
import subprocess
import sys

import pandas as pd
import pytest

from judgeaudit import outputs as O
from judgeaudit.provenance import cells
from judgeaudit.registry import dotted
from judgeaudit.vocab.study_a import PLACEMENTS


@pytest.fixture(scope="module")
def root(tiny_run):
    return tiny_run.root


def _spy(monkeypatch, calls):
    """Wrap every recipe's compute function (the callable its registry entry holds, and
    its one-output form `compute_output`, which a trace calls when the recipe has it) to
    record calls; the wrapper keeps the function's name, so traces print the same."""
    for key, recipe in list(O.RECIPES.items()):
        real, one = recipe.compute, recipe.compute_output

        def wrapped(inputs, params, _real=real, _rule=recipe.rule):
            calls.append(_rule)
            return _real(inputs, params)

        def wrapped_one(inputs, params, name, _one=one, _rule=recipe.rule):
            calls.append(_rule)
            return _one(inputs, params, name)

        functools.update_wrapper(wrapped, real)
        spied = {"compute": wrapped}
        if one is not None:
            spied["compute_output"] = functools.update_wrapper(wrapped_one, one)
        monkeypatch.setitem(O.RECIPES, key, dataclasses.replace(recipe, **spied))


def test_every_table_trace_recomputes_with_the_registry_function(root, monkeypatch):
    calls: list[str] = []
    _spy(monkeypatch, calls)
    cells._MEMO.clear()
    traced = 0
    for name, entry in sorted(O.TABLES.items()):
        tsv = root / "results" / "tables" / f"{name}.tsv"
        if not entry.recomputed or not tsv.exists():
            continue
        frame = cells.read_table(tsv)
        rows = sorted({0, len(frame) // 2, len(frame) - 1}) if len(frame) else []
        for i in rows:
            before = len(calls)
            traces = cells.trace_row(f"results/tables/{name}.tsv", i, root=root)
            why = next((r.row_not_recomputed(frame.iloc[i].to_dict())
                        for r in O.RECIPES.values() if r.row_not_recomputed(
                            frame.iloc[i].to_dict())), "")
            if why:  # a row the recipe declares not recomputed says why, nothing else
                assert all(t.match is None and why in t.note for t in traces), name
                traced += 1
                continue
            checked = [t for t in traces if t.match is not None]
            assert checked, (name, i, [t.note for t in traces])
            assert all(t.match for t in checked), (name, i, [
                (t.column, t.value, t.recomputed, t.note) for t in checked if not t.match])
            est = next(t for t in traces if t.column == "estimate")
            assert est.match is True, (name, i, est.note)
            recipe = next(r for r in O.RECIPES.values() if dotted(r.compute) in est.recipe)
            assert est.trials and len(calls) >= before  # memoised rows share one call
            assert all(r["request_text"] and r["response_source"] and r["status"]
                       for r in est.trials), name
            assert recipe.rule in calls, (name, recipe.rule, calls)
            traced += 1
    # every study table the registry calls recomputable was traced
    assert traced >= 3 * len([t for t in O.TABLES.values() if t.study and t.recomputed
                              and (root / "results/tables" / f"{t.name}.tsv").exists()]) - 6
    assert {"study_a_metrics_judge", "study_b_accuracy", "study_b_states"} <= set(calls)


def test_not_recomputed_rows_say_why(root):
    """The state table's uniform-chance rows are computed, not observed: their trace
    says so (the judges' state rows are recomputed from their trials)."""
    from judgeaudit.vocab.study_b import CHANCE_JUDGE

    frame = cells.read_table(root / "results/tables/study_b_state_distribution.tsv")
    i = int(frame.index[frame["judge"] == CHANCE_JUDGE][0])
    t = cells.trace_row("results/tables/study_b_state_distribution.tsv", i, root=root)[0]
    assert t.match is None and "computed, not observed" in t.note


def _reference_row(root):
    frame = pd.read_csv(root / "results/tables/study_a_table3_reference.tsv", sep="\t")
    hit = frame[frame["condition"].isin(PLACEMENTS) & (frame["metric"] == "rf")]
    assert len(hit), "the tiny run has no reference-placement rows"
    return int(hit.index[0]), hit.iloc[0]


def test_trace_cli_shows_the_reference_label_of_each_trial(root, tiny_run):
    i, row = _reference_row(root)
    res = subprocess.run([sys.executable, "-m", "judgeaudit.cli", "trace",
                          "results/tables/study_a_table3_reference.tsv", "--row", str(i),
                          "--column", "estimate", "--json"], cwd=root, env=tiny_run.env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    t = json.loads(res.stdout)
    assert t["match"] is True, t["note"]
    trials = {x["trial_id"]: x for x in (json.loads(line) for f in
              (root / "results/trials/A" / row["task"]).glob("reference*.jsonl")
              for line in f.read_text().splitlines() if line.strip())}
    for r in t["trials"]:
        facts = trials[r["trial_id"]]["facts"]
        assert r["labels_shown"]["reference_label"] == facts["reference_label"]
        assert r["labels_shown"]["placement"] == row["condition"]
        assert r["audio"] and all((root / a).exists() for a in r["audio"])
        assert r["request_text"].count("[audio: ") == len(r["audio"])
        # the reference label is in the request as sent
        assert facts["reference_label"] in r["request_text"]
        line = (root / r["response_file"]).read_text().splitlines()[r["response_line"] - 1]
        assert json.loads(line)["trial_id"] == r["trial_id"]
    text = subprocess.run([sys.executable, "-m", "judgeaudit.cli", "trace",
                           "results/tables/study_a_table3_reference.tsv", "--row", str(i),
                           "--column", "estimate"], cwd=root, env=tiny_run.env,
                          capture_output=True, text=True, timeout=300).stdout
    first = t["trials"][0]
    assert f"reference_label={first['labels_shown']['reference_label']}" in text, text[:3000]
    assert f"response: {first['response_source']}" in text
    assert "[MATCH]" in text


def test_every_method_a_produced_table_names_is_registered_for_it(root):
    """Each table's method columns name only keys of the method registry, and only
    the keys its registry entry declares (method + extra_methods)."""
    from judgeaudit.stats.methods import method_keys

    seen = 0
    for name, entry in sorted(O.TABLES.items()):
        tsv = root / "results" / "tables" / f"{name}.tsv"
        if not tsv.exists():
            continue
        frame = pd.read_csv(tsv, sep="\t")
        for col in [c for c in frame.columns if "method" in c]:
            for value in frame[col].dropna().astype(str).unique():
                keys = set(method_keys(value))  # strict: an unknown method fails
                assert keys <= {entry.method, *entry.extra_methods}, (name, col, value)
                seen += 1
    assert seen >= 10

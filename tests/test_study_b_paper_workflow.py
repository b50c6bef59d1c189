"""Study B outputs of the tiny run carry the paper's missing pieces: the text-only
baseline T beside Pointwise and Pairwise for every task and cue, J - T with
item-clustered intervals, Holm-adjusted gap p-values, T and staging beside P, O
and J; and the writer-swap ablation target runs on a copy of the run (cheaply:
only the ablation rule and its table)."""

from __future__ import annotations

import pandas as pd
import pytest


def _tsv(root, name):
    return pd.read_csv(root / "results" / "tables" / f"{name}.tsv", sep="\t",
                       keep_default_na=False, na_values=[""])


@pytest.mark.slow
def test_tiny_run_study_b_tables_carry_text_baseline_and_holm(tiny_run):
    cfg = tiny_run.config["study_b"]
    tasks = {t: c["cues"] for t, c in cfg["tasks"].items() if c.get("enabled", True)}
    judges = set(cfg["judges"])
    acc = _tsv(tiny_run.root, "study_b_accuracy")
    for task, cues in tasks.items():
        for cue in cues:
            for proto in ("pointwise", "pairwise", "text"):
                cell = acc[(acc["task"] == task) & (acc["protocol"] == proto)
                           & (acc["cue"] == cue)]
                assert set(cell["judge"]) == judges, (task, proto, cue)
    md = (tiny_run.root / "results/tables/study_b_accuracy.md").read_text()
    assert "Single Text none" in md and "Positional Text transition" in md
    tg = _tsv(tiny_run.root, "study_b_text_gap")
    assert len(tg) == len(judges) * sum(len(c) for c in tasks.values())
    assert tg[["estimate", "ci_low", "ci_high", "pvalue", "p_holm"]].notna().all().all()
    assert (tg["ci_low"] <= tg["estimate"]).all() and (tg["estimate"] <= tg["ci_high"]).all()
    assert (tg["estimate"] - (tg["pointwise"] - tg["text"])).abs().max() < 1e-9  # complete items
    assert (tg["cluster_unit"] == "item").all()
    gap = _tsv(tiny_run.root, "study_b_protocol_gap")
    assert gap["p_holm"].notna().all() and (gap["p_holm"] >= gap["pvalue"] - 1e-12).all()
    assert set(gap["holm_family"]) == {f"protocol_gap|{j}" for j in judges}
    pot = _tsv(tiny_run.root, "study_b_potemkin")
    for metric in ("probe_P", "probe_O", "staging_accuracy", "probe_J", "probe_T",
                   "staged_potemkin", "j_no_listening"):
        assert metric in set(pot["metric"]), metric
    assert (tiny_run.root / "figures/study_b_text_gap.png").stat().st_size > 1000
    assert (tiny_run.root / "figures/study_b_probes.png").stat().st_size > 1000
    # issue 32: every Study B table states the voices its items are read in, counted
    # from the run's item files
    import json

    voices, own = {}, {}
    for task in tasks:
        rows = [json.loads(line) for line in (tiny_run.root / "results/conditions/B" / task
                                              / "items.jsonl").read_text().splitlines()]
        voices[task] = len({r["voice"] for r in rows})
        own[task] = voices[task] == len(rows)
    # the tiny tasks' 2 items each are within the 50-voice roster: each its own voice
    assert all(own.values()), (voices, own)
    for name in ("study_b_accuracy", "study_b_protocol_gap", "study_b_text_gap",
                 "study_b_potemkin", "study_b_state_distribution", "study_b_balance"):
        t = _tsv(tiny_run.root, name)
        got = t.dropna(subset=["n_voices"]).groupby("task")["n_voices"].first()
        assert {k: int(v) for k, v in got.items()} == voices, (name, voices)
        cap = (tiny_run.root / f"results/tables/{name}.md").read_text().split("\n")[0]
        assert set(t.dropna(subset=["voice_per_item"])["voice_per_item"]) == {True}, name
        want = "; ".join(f"{t}: {v} items, {v} voices" for t, v in sorted(voices.items()))
        assert f"Each item is rendered in its own voice ({want})" in cap, (name, cap)
        assert "conditional on the voices used" not in cap, (name, cap)


@pytest.mark.slow
def test_writer_ablation_target_runs_on_a_copy(tiny_run, tmp_path):
    run = tiny_run.clone(tmp_path / "run")
    over = tmp_path / "ablation.yaml"
    over.write_text("study_b:\n  writer_ablation: {writer: templates_b}\n")
    target = "results/tables/study_b_writer_ablation.tsv"
    dry = run.snakemake("-n", target, overlays=[over])
    ran = {line.split()[1].rstrip(":") for line in dry.splitlines()
           if line.startswith(("rule ", "localrule "))}
    assert ran == {"study_b_writer_ablation", "study_b_table"}, ran
    run.snakemake(target, overlays=[over])
    ab = _tsv(run.root, "study_b_writer_ablation")
    judges = set(run.config["study_b"]["judges"])
    acc = ab[ab["row"] == "accuracy"]
    assert set(acc["writer"]) == {"templates", "templates_b"}
    assert set(acc["judge"]) == judges
    diff = ab[ab["row"] == "difference"]
    assert set(diff["writer"]) == {"templates_b - templates"}
    assert diff[["estimate", "ci_low", "ci_high"]].notna().all().all()
    # the run writer's accuracy is the main table's Pointwise none
    main = _tsv(run.root, "study_b_accuracy")
    main = main[(main["protocol"] == "pointwise") & (main["cue"] == "none")]
    m = main.set_index(["judge", "task"])["estimate"]
    for r in acc[acc["writer"] == "templates"].itertuples():
        assert r.estimate == pytest.approx(m[(r.judge, r.task)])
    # the same writer twice is refused with the field named
    same = tmp_path / "same.yaml"
    same.write_text("study_b:\n  writer_ablation: {writer: templates}\n")
    res = run.run("-n", "-f", "results/metrics/B/writer_ablation.tsv", overlays=[same])
    assert res.returncode != 0 and "study_b.writer_ablation.writer" in res.stdout + res.stderr

"""The power report simulates the printed estimator at each cell's own design: the
cells take the clusters the printed interval uses, the test is the interval's own
(p-value dual to it), Holm is statsmodels' step-down, the simulation holds its size
under the null and its power moves with the clusters, not the trials."""

import math

import numpy as np
import pytest
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize

from judgeaudit.stats import power as PW
from judgeaudit.stats.clustered import clustered_proportion, proportion_pvalue
from judgeaudit.stats.contrasts import holm, holm_reject

CFG = {"alpha": 0.05, "power": 0.8, "icc": 0.2, "icc_source": "assumed for the test",
       "pilot_metrics": [], "replicates": 200, "mde_replicates": 40, "seed": 1,
       "shortfall": "error", "fail_on_mde": False,
       "targets": {"follow": {"baseline": 0.1, "mde": 0.2}, "lock": {"baseline": 0.5, "mde": 0.3},
                   "concat_vs_native": {"baseline": 0.5, "mde": 0.3},
                   "fallible_vs_wrong": {"baseline": 0.3, "mde": 0.2},
                   "protocol_gap": {"baseline": 0.6, "mde": 0.2}}}


def _cls_trial(i, clip, cond, spk, gold="a", task="language", seed=0):
    return {"trial_id": f"t{i}-{cond}", "study": "A", "task": task, "condition": cond,
            "gold": gold, "facts": {"family": "blueprint", "clip_id": clip, "seed": seed,
                                    "cluster": spk, "cluster_unit": "speaker"}}


def _pair_trial(i, pid, src, fmt="concat", order="AB"):
    return {"trial_id": f"p{i}-{fmt}-{order}", "study": "A", "task": "pair_cleanness",
            "condition": fmt, "gold": "A",
            "facts": {"family": "pairwise", "pair_id": pid, "format": fmt,
                      "cluster": src, "cluster_unit": "source clip"}}


def _gap_trial(i, item, proto, rep):
    return {"trial_id": f"b{i}-{proto}-{rep}", "study": "B", "task": "single",
            "condition": proto, "gold": "R1",
            "facts": {"protocol": proto, "cue": "none", "item_id": item}}


def test_proportion_pvalue_is_dual_to_the_printed_interval():
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(600):
        g = int(rng.integers(2, 25))
        n = int(rng.integers(g, 150))
        cl = rng.integers(0, g, n)
        y = (rng.random(n) < rng.choice([0.0, 0.1, 0.4, 0.95, 1.0])).astype(float)
        est = clustered_proportion(y, cl)
        p0 = float(rng.uniform(0.02, 0.98))
        if min(abs(p0 - est.lo), abs(p0 - est.hi)) < 1e-7:
            continue
        assert (proportion_pvalue(est, p0) < 0.05) == (p0 < est.lo or p0 > est.hi)
        checked += 1
    assert checked > 500
    with pytest.raises(ValueError, match="p0"):
        proportion_pvalue(est, 0.0)


def test_holm_reject_is_statsmodels_holm_row_by_row():
    rng = np.random.default_rng(0)
    p = rng.random((200, 6)) ** 3
    p[3, 1] = np.nan
    rej = holm_reject(p, 0.05)
    for i in range(200):
        assert list(rej[i]) == holm(list(p[i]), 0.05)[1]


def test_cells_take_the_printed_clusters():
    trials = [_cls_trial(i, f"c{i % 12}", "after", f"s{i % 4}") for i in range(36)]
    trials += [_cls_trial(i, f"c{i}", cond, f"s{i % 3}", seed=i % 2)
               for cond in ("wrong_with_audio", "wrong_with_audio_fallible") for i in range(12)]
    trials += [_cls_trial(i, f"c{i}", "audio_only", "s0") for i in range(5)]  # no test
    trials += [_pair_trial(i, f"p{i}", f"src{i // 2}", fmt, o) for i in range(6)
               for fmt in ("concat", "native") for o in ("AB", "BA")]
    trials += [_gap_trial(i, f"i{i}", proto, r) for i in range(5)
               for proto in ("pointwise", "pairwise") for r in range(2)]
    cells = {(c.test, c.cell): c for c in PW.trial_cells(trials)}
    after = cells[("follow_vs_null", "after")]
    assert (after.n_units, after.n_clusters, after.cluster_unit) == (36, 4, "speaker")
    assert ("follow_vs_null", "audio_only") not in cells
    fal = cells[("fallible_vs_wrong", "wrong_with_audio_fallible - wrong_with_audio")]
    assert (fal.n_units, fal.n_clusters) == (12, 3)
    lock = cells[("lock_vs_null", "concat")]
    assert (lock.n_units, lock.n_clusters, lock.cluster_unit) == (6, 3, "source clip")
    assert cells[("concat_vs_native_lock", "concat - native")].n_units == 6
    gap = cells[("protocol_gap", "gap-none")]
    assert (gap.n_clusters, gap.reps, gap.cluster_unit) == (5, (2, 2), "item")


def _cell(n_clusters, per_cluster, test="follow_vs_null"):
    codes = np.repeat(np.arange(n_clusters), per_cluster)
    return PW.Cell("A", "emotion", "after", test, "speaker", codes.size, codes)


def test_simulation_holds_its_size_under_the_null():
    c = _cell(24, 10)
    d = PW.draws(c, 400, 3)
    rate = float(np.mean(PW.pvalues(c, d, 0.1, 0.0, 0.2, 0.05) < 0.05))
    assert 0.01 <= rate <= 0.10
    p = _cell(24, 2, "concat_vs_native_lock")
    rate = float(np.mean(PW.pvalues(p, PW.draws(p, 400, 5), 0.5, 0.0, 0.2, 0.05) < 0.05))
    assert 0.01 <= rate <= 0.10


def test_power_follows_the_clusters_not_the_trials():
    few, many = _cell(6, 20), _cell(24, 5)  # 120 trials each
    pw = {}
    for name, c in (("few", few), ("many", many)):
        d = PW.draws(c, 300, 7)
        pw[name] = float(np.mean(PW.pvalues(c, d, 0.1, 0.15, 0.3, 0.05) < 0.05))
    assert pw["many"] > pw["few"] + 0.15
    # without clustering the simulation meets the closed form (one-sample Cohen's h)
    c = _cell(120, 1)
    sim = float(np.mean(PW.pvalues(c, PW.draws(c, 400, 9), 0.1, 0.1, 0.0, 0.05) < 0.05))
    h = abs(float(proportion_effectsize(0.2, 0.1)))
    closed = NormalIndPower().power(effect_size=h, nobs1=120, alpha=0.05, ratio=0)
    assert sim == pytest.approx(closed, abs=0.08)
    assert PW.closed_form_power(c, 0.1, 0.1, 0.0, 0.05) == pytest.approx(closed)


def test_holm_power_sits_between_bonferroni_and_unadjusted():
    c = _cell(24, 10)
    pv = {k: PW.pvalues(c, PW.draws(c, 300, 11 + k), 0.1, 0.12, 0.2, 0.05) for k in range(3)}
    ph = PW.holm_power(pv, 2, 0.05)
    for k in range(3):
        assert np.mean(pv[k] < 0.05 / 6) - 0.02 <= ph[k] <= np.mean(pv[k] < 0.05) + 1e-9


def test_report_rows_name_method_unit_family_and_flag_problems(tmp_path):
    from judgeaudit.render.power import power_table

    trials = [_cls_trial(i, f"c{i}", "after", f"s{i % 4}", gold="ab"[i % 2]) for i in range(16)]
    trials += [_pair_trial(i, f"p{i}", f"src{i}", fmt, o) for i in range(40)
               for fmt in ("concat", "native") for o in ("AB", "BA")]
    sizes = PW.delivered_sizes(trials, {"language": {"per_class": 20, "labels": ["a", "b"]},
                                        "pairwise": {"n_pairs": 40}}, None)
    frame = PW.report(trials, CFG, sizes, {"A": 1})
    assert list(frame.columns) == PW.COLUMNS
    after = frame[frame["cell"] == "after"].iloc[0]
    assert (after["n_clusters"], after["cluster_unit"]) == (4, "speaker")
    assert "clustered_proportion" in after["method"] and "Holm" in after["method"]
    assert after["variance_source"] == "configured icc"
    assert after["icc_source"] == "assumed for the test"
    lock = frame[frame["test"] == "lock_vs_null"]
    assert set(lock["family_size"]) == {2} and set(lock["n_clusters"]) == {40}
    assert (lock["power_at_target"] > 0.8).all()
    short, weak = PW.problems(frame)
    assert short == ["cell A/language: configured size 20 but the corpus delivered 8 (the "
                     "size is capped by the data)"]
    assert any("A/language/after" in w and "4 speaker clusters" in w for w in weak)
    show = power_table(frame, tmp_path / "power")
    checks = dict(zip(show["cell"], show["check"], strict=True))
    assert checks["after"] == "WARN SHORT 8/20" and checks["concat"] == "ok"
    md = (tmp_path / "power.md").read_text()
    assert "Holm" in md and "assumed for the test" in md and "lock_vs_null" in md


def test_pilot_deff_sets_the_icc_and_both_powers_are_shown():
    import pandas as pd

    pilot = pd.DataFrame([{"task": "language", "condition": "after", "metric": "rf",
                           "seed": "all", "n": 80, "n_clusters": 8, "deff": 4.6}])
    deff, rho = PW.pilot_icc(pilot, [("language", "after", "rf")])
    assert deff == pytest.approx(4.6) and rho == pytest.approx(3.6 / 9)
    trials = [_cls_trial(i, f"c{i}", "after", f"s{i % 8}") for i in range(80)]
    frame = PW.report(trials, CFG, {}, {"A": 1}, pilot)
    r = frame.iloc[0]
    assert r["variance_source"] == "pilot deff" and r["icc_used"] == pytest.approx(0.4)
    assert math.isfinite(r["power_pilot"]) and math.isfinite(r["power_configured"])
    assert r["power_pilot"] < r["power_configured"]


# ---------------------------------------------------------------- issue 32: the run's design
def _pair_cell(n_clusters=24, per=2):
    codes = np.repeat(np.arange(n_clusters), per)
    return PW.Cell("A", "pair_speaker", "concat - native", "concat_vs_native_lock", "speaker",
                   codes.size * 4, codes, pilot_keys=[("pair_speaker", "concat", "lock"),
                                                      ("pair_speaker", "native", "lock")])


def test_unmeasured_arms_are_independent_so_clustering_lowers_paired_power():
    # the old model gave both arms one cluster quantile, so more clustering RAISED paired
    # power (0.87 -> 0.96 at ICC 0 -> 0.3); with independent arms it falls
    c = _pair_cell()
    d = PW.draws(c, 600, 3)
    flat = float(np.mean(PW.pvalues(c, d, 0.5, 0.3, 0.0, 0.05) < 0.05))
    clustered = float(np.mean(PW.pvalues(c, d, 0.5, 0.3, 0.3, 0.05) < 0.05))
    assert clustered < flat - 0.03
    ya, yb = PW.arm_outcomes(c, d, 0.8, 0.5, 0.3)
    assert abs(PW.arm_correlation(c, ya, yb)) < 0.05


def test_latent_corr_reproduces_the_measured_arm_correlation():
    c = _pair_cell()
    d = PW.draws(c, 200, 5)
    for target in (-0.3, 0.15, 0.5):
        lc = PW.latent_corr(c, d, 0.8, 0.5, 0.05, target)
        got = PW.arm_correlation(c, *PW.arm_outcomes(c, d, 0.8, 0.5, 0.05, lc))
        assert got == pytest.approx(target, abs=0.01)
    # a positive correlation raises paired power, a negative one lowers it
    pw = {t: float(np.mean(PW.pvalues(c, PW.draws(c, 400, 9), 0.5, 0.3, 0.05, 0.05,
                                      PW.latent_corr(c, d, 0.8, 0.5, 0.05, t)) < 0.05))
          for t in (-0.3, 0.0, 0.4)}
    assert pw[-0.3] < pw[0.0] < pw[0.4]


def _pilot_frames(corr=-0.2, n=48, g=24, p_a=0.8, p_b=0.5, deff=1.1):
    import pandas as pd

    va, vb = deff * p_a * (1 - p_a) / n, deff * p_b * (1 - p_b) / n
    vd = va + vb - 2 * corr * math.sqrt(va * vb)
    est = p_a - p_b
    metrics = pd.DataFrame([{"judge": j, "task": "pair_speaker", "condition": fmt,
                             "metric": "lock", "seed": "all", "estimate": p, "n": n,
                             "n_clusters": g, "deff": deff}
                            for j in ("a", "b", "listener")
                            for fmt, p in (("concat", p_a), ("native", p_b))])
    contrasts = pd.DataFrame([{"family": "concat_vs_native_lock", "task": "pair_speaker",
                               "judge": j, "estimate": est, "statistic": est / math.sqrt(vd),
                               "role": role}
                              for j, role in (("a", "audited"), ("b", "audited"),
                                              ("listener", "control"))])
    return metrics, contrasts


def test_pilot_cell_measures_arm_correlation_and_panel_estimates():
    metrics, contrasts = _pilot_frames(corr=-0.2)
    pil = PW.Pilot(metrics, contrasts, source="a test pilot")
    assert pil.audited() == ["a", "b"]
    got = PW.pilot_cell(_pair_cell(), pil, 0.5)
    assert got["corr"] == pytest.approx(-0.2, abs=1e-9)
    assert got["estimates"] == pytest.approx([0.3, 0.3])
    rho = (1.1 - 1) / (48 / 24 - 1)
    assert got["rho"] == pytest.approx(rho)
    lock = PW.Cell("A", "pair_speaker", "concat", "lock_vs_null", "speaker", 96,
                   np.repeat(np.arange(24), 2), pilot_keys=[("pair_speaker", "concat", "lock")])
    assert PW.pilot_cell(lock, pil, 0.5)["estimates"] == pytest.approx([0.3, 0.3])


def test_headline_is_guaranteed_power_and_holm_states_its_configuration():
    trials = [_pair_trial(i, f"p{i}", f"src{i // 2}", fmt, o) for i in range(24)
              for fmt in ("concat", "native") for o in ("AB", "BA")]
    cfg = {**CFG, "replicates": 300}
    plain = PW.report(trials, cfg, {}, {"A": 3})
    assert (plain["power_at_target"] == plain["power_bonferroni"]).all()
    assert plain["meets_target"].tolist() == (plain["power_bonferroni"] >= 0.8).tolist()
    assert set(plain["holm_configuration"]) == {
        "every member at the target effect (Holm's most favourable case)"}
    weak = plain[~plain["meets_target"]]
    assert len(weak) and weak["power_note"].str.startswith("underpowered: guaranteed").all()
    short, msgs = PW.problems(plain)
    assert any("guaranteed power" in w and "concat - native" in w for w in msgs)
    # with a pilot whose panel sits at the null, Holm loses its favourable-case bonus
    import pandas as pd

    metrics, contrasts = _pilot_frames(corr=0.0, p_a=0.5, p_b=0.5)
    metrics = pd.concat([metrics.assign(task="pair_cleanness")], ignore_index=True)
    contrasts = contrasts.assign(task="pair_cleanness", estimate=0.0, statistic=math.nan)
    pil = PW.Pilot(metrics, contrasts, source="null panel")
    framed = PW.report(trials, cfg, {}, {"A": 3}, pil)
    row = framed[framed["test"] == "concat_vs_native_lock"].iloc[0]
    old = plain[plain["test"] == "concat_vs_native_lock"].iloc[0]
    assert "panel's estimates" in row["holm_configuration"] and row["n_panel_estimates"] == 2
    assert row["power_holm"] <= old["power_holm"]
    assert row["power_holm"] >= row["power_bonferroni"] - 0.02
    assert row["pilot_source"] == "null panel"


def test_one_unit_per_cluster_needs_no_icc_and_a_pilot_fallback_is_named():
    import pandas as pd

    trials = [_pair_trial(i, f"p{i}", f"src{i}", fmt, o) for i in range(12)
              for fmt in ("concat", "native") for o in ("AB", "BA")]
    trials += [_cls_trial(i, f"c{i}", "after", f"s{i % 4}") for i in range(16)]
    pilot = pd.DataFrame([{"task": "other", "condition": "after", "metric": "rf",
                           "seed": "all", "n": 80, "n_clusters": 8, "deff": 2.0}])
    frame = PW.report(trials, CFG, {}, {"A": 1}, pilot)
    lock = frame[frame["test"] == "lock_vs_null"].iloc[0]
    assert lock["variance_source"].startswith("one unit per cluster") and lock["icc_used"] == 0
    after = frame[frame["cell"] == "after"].iloc[0]
    assert after["variance_source"].startswith("configured icc (the pilot")
    assert PW.fallbacks(frame) == [
        "cell A/language/after (follow_vs_null): the pilot's design effect is not estimable "
        "here; the configured ICC 0.2 is used"]


def test_docs_summary_counts_come_from_the_table(tmp_path):
    from judgeaudit.render import power as RP

    trials = [_cls_trial(i, f"c{i}", cond, f"s{i % 6}") for i in range(36)
              for cond in ("after", "before", "system")]
    frame = PW.report(trials, CFG, {}, {"A": 3})
    text = RP.docs_summary(frame)
    assert "| `follow_vs_null` | 3 | 9 | 6-6 |" in text
    doc = tmp_path / "power.md"
    doc.write_text(f"intro\n{RP.DOCS_BEGIN}\nstale: 18 cells, family 54\n{RP.DOCS_END}\nend\n")
    RP.write_docs(frame, doc)
    assert RP.docs_block(doc) == text and "stale" not in doc.read_text()
    assert doc.read_text().startswith("intro\n") and doc.read_text().endswith("end\n")
    (tmp_path / "x.md").write_text("no markers")
    with pytest.raises(ValueError, match="x.md: no generated power-summary block"):
        RP.write_docs(frame, tmp_path / "x.md")

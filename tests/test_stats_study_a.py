"""Study A metrics on trials from the real builders and scripted responses."""

import numpy as np
import pandas as pd
import pytest

from judgeaudit.study_a import metrics as sa
from judgeaudit.study_a.classification import (
    ClipSet,
    blueprint_trials,
    conflict_trials,
    reference_trials,
)
from judgeaudit.study_a.pairwise import Clip, Pair, pair_trials
from judgeaudit.vocab.study_a import PLACEMENTS

LANGS = ("en", "es", "fr", "de")


class BP:
    template_sha256 = "0" * 64

    def skeleton(self):
        return "Acoustic description."

    def description(self, clip_id):
        return "Acoustic description: loud."

    def block(self, label, framed):
        return f"A classifier labelled this clip as {label}." if framed else f"Label: {label}."

    def fallible(self):
        return "Labels are fallible."


def clipset(per_class=10):
    rows = [{"clip_id": f"{lab}{i}", "path": "x.wav", "sha256": f"{lab}{i}", "label": lab,
             "pred": lab} for lab in LANGS for i in range(per_class)]
    return ClipSet("language", LANGS, pd.DataFrame(rows))


def respond(trials, fn):
    out = []
    for t in trials:
        parsed, status = fn(t)
        out.append({"trial_id": t["trial_id"], "parsed": parsed, "status": status})
    return out


def trials_all():
    cs = clipset()
    return (blueprint_trials(cs, BP(), [1, 2, 3]) + reference_trials(cs, [1, 2, 3])
            + conflict_trials(cs, BP(), [1, 2]))


def metric(m, cond, name, seed="all"):
    row = m[(m["condition"] == cond) & (m["metric"] == name) & (m["seed"] == seed)]
    assert len(row) == 1, (cond, name, seed)
    return row.iloc[0]


def test_label_reader_like_judge_follows_everything():
    trials = trials_all()

    def reader(t):
        f = t["facts"]
        lab = f.get("reference_label") or f.get("block_label")
        return (lab or "en", "valid")

    df = sa.join(trials, respond(trials, reader), "reader")
    m = sa.metrics(df, n_boot=200)
    for cond in ("wrong_block", "wrong_with_audio", "system", "after"):
        r = metric(m, cond, "rf")
        assert r["estimate"] == 1.0 and r["n"] == 120 and r["n_invalid"] == 0
        assert metric(m, cond, "rf_norm")["estimate"] == 1.0
    assert metric(m, "conflict", "follow_reference")["estimate"] == 1.0
    assert metric(m, "conflict", "follow_block")["estimate"] == 0.0
    assert metric(m, "wrong_block", "accuracy", seed="2")["n"] == 40


def test_listener_like_judge_and_invalids():
    trials = trials_all()
    rng = np.random.default_rng(0)

    def listener(t):
        if rng.random() < 0.1:
            return (None, "invalid_json")
        return (t["gold"], "valid")

    df = sa.join(trials, respond(trials, listener), "listener")
    m = sa.metrics(df, n_boot=200)
    r = metric(m, "before", "rf")
    assert r["estimate"] == 0.0 and r["n"] + r["n_invalid"] == 120 and r["n_invalid"] > 0
    # invalid answers as all-not-follow / all-follow
    assert r["invalid_low"] == 0.0 and r["invalid_high"] == pytest.approx(r["n_invalid"] / 120)
    # RF~ unclipped: (0 - 1/3) / (2/3) = -0.5 (below chance), never a zero-width interval
    norm = metric(m, "before", "rf_norm")
    assert norm["estimate"] == pytest.approx(-0.5) and norm["ci_high"] > norm["ci_low"]
    assert norm["one_sided"] == "upper" and r["one_sided"] == "upper"
    acc = metric(m, "audio_only", "accuracy")
    assert acc["estimate"] == 1.0 and acc["ci_low"] < 1.0 and acc["one_sided"] == "lower"
    # repeated measures over seeds: clustered on the clip (no speaker in these clips)
    rf = metric(m, "wrong_block", "accuracy")
    assert rf["n_clusters"] == 40 and rf["cluster_unit"] == "clip"


def test_random_follow_gives_rf_near_chance_and_norm_zero():
    trials = trials_all()
    rng = np.random.default_rng(1)

    def random_wrong(t):
        wrong = [x for x in LANGS if x != t["gold"]]
        return (wrong[int(rng.integers(0, 3))], "valid")

    big = clipset(per_class=100)
    trials = reference_trials(big, [1, 2, 3])
    m = sa.metrics(sa.join(trials, respond(trials, random_wrong), "rnd"), n_boot=200)
    r = metric(m, "system", "rf")
    assert r["ci_low"] < 1 / 3 < r["ci_high"]
    norm = metric(m, "system", "rf_norm")
    assert norm["ci_low"] < 0.0 < norm["ci_high"]


def test_missing_response_is_an_error():
    trials = trials_all()[:5]
    with pytest.raises(ValueError, match="no response"):
        sa.join(trials, [], "x")


def _pairs(tmp_path, n=20):
    import soundfile as sf

    from judgeaudit.io import sha256_file
    clips = []
    for i in range(2):
        p = tmp_path / f"c{i}.wav"
        sf.write(p, np.zeros(1600) + 0.01 * i, 16000, subtype="PCM_16")
        clips.append(Clip(f"c{i}", str(p), sha256_file(p)))
    return [Pair(f"p{i}", "naturalness", clips[0], clips[1]) for i in range(n)]


def test_pairwise_first_slot_and_oracle(tmp_path):
    pairs = _pairs(tmp_path)
    trials = (pair_trials("pair_naturalness", pairs, "native", 1)
              + pair_trials("pair_naturalness", pairs, "concat", 1, concat_dir=tmp_path / "cc"))
    m = sa.metrics(sa.join(trials, respond(trials, lambda t: ("A", "valid")), "first"), 200)
    lock = metric(m, "concat", "lock")
    assert lock["estimate"] == 1.0 and lock["n"] == 20
    g = metric(m, "native", "g")
    assert g["estimate"] == 0.5 and g["n"] == 40 and g["n_clusters"] == 20
    assert metric(m, "native", "locked_first")["estimate"] == 1.0
    m2 = sa.metrics(sa.join(trials, respond(trials, lambda t: (t["gold"], "valid")), "o"), 200)
    assert metric(m2, "concat", "lock")["estimate"] == 0.0
    assert metric(m2, "concat", "consistent_correct")["estimate"] == 1.0
    assert metric(m2, "native", "g")["estimate"] == 1.0


def test_contrasts_and_holm(tmp_path):
    trials = trials_all()
    pairs = _pairs(tmp_path)
    trials += pair_trials("pair_naturalness", pairs, "native", 1)
    trials += pair_trials("pair_naturalness", pairs, "concat", 1, concat_dir=tmp_path / "cc")

    def judge(t):  # follows blocks only with audio absent; follows only 'system' refs
        f = t["facts"]
        if t["condition"] in ("wrong_with_audio",):
            return (f["wrong_label"], "valid")
        if t["condition"] == "system":
            return (f["wrong_label"], "valid")
        if f.get("family") == "pairwise":
            return ("A", "valid") if t["condition"] == "concat" else (t["gold"], "valid")
        return (t["gold"], "valid")

    rows = sa.contrast_rows(sa.join(trials, respond(trials, judge), "j"))
    table = sa.contrasts_table(rows + [dict(r, judge="j2") for r in rows]
                               + [dict(r, judge="listener") for r in rows],
                               controls=["listener"])
    fam = set(table["family"])
    # pre-specified families only (no "most vs least" chosen from the data)
    assert fam == {"wrong_with_audio_vs_audio_only", "fallible_vs_wrong_with_audio",
                   "placement_vs_match", "concat_vs_native_lock", "fallible_vs_plain_block",
                   "fallible_vs_plain_reference", "fallible_vs_plain_conflict",
                   "placement_rf", "placement_rf_fallible"}
    # the falsifier per protocol: this judge follows the plain system reference and
    # never a fallible one; the wrong block with audio likewise
    fr = table[(table["family"] == "fallible_vs_plain_reference") & (table["judge"] == "j")]
    assert len(fr) == len(PLACEMENTS)
    sysf = fr[fr["contrast"] == "rf(system_fallible) - rf(system)"].iloc[0]
    assert sysf["estimate"] == -1.0 and sysf["p_a"] == 0.0 and sysf["p_b"] == 1.0
    fb = table[(table["family"] == "fallible_vs_plain_block") & (table["judge"] == "j")]
    assert set(fb["contrast"]) == {"rf(wrong_block_fallible) - rf(wrong_block)",
                                   "rf(wrong_with_audio_fallible) - rf(wrong_with_audio)"}
    wa = fb[fb["contrast"].str.contains("with_audio")].iloc[0]
    assert wa["estimate"] == -1.0
    fc = table[(table["family"] == "fallible_vs_plain_conflict") & (table["judge"] == "j")]
    assert set(fc["contrast"]) == {
        "follow_block(conflict_fallible) - follow_block(conflict)",
        "follow_reference(conflict_fallible) - follow_reference(conflict)"}
    # a deterministic judge: the cluster covariance is degenerate, no Wald p-value
    pw = table[(table["family"] == "placement_rf") & (table["judge"] == "j")].iloc[0]
    assert pw["estimate"] == 1.0 and np.isnan(pw["pvalue"])
    assert pw["method"].endswith(":rank_deficient")
    r = table[(table["family"] == "wrong_with_audio_vs_audio_only") & (table["judge"] == "j")]
    r = r.iloc[0]
    # every clip x seed (40 x 3) paired with the clip's audio-only answer, 40 clusters
    assert (r["n"], r["n_clusters"], r["estimate"]) == (120, 40, -1.0)
    assert r["ci_low"] == -1.0 and r["ci_high"] > -1.0 and r["one_sided"] == "upper"
    assert r["pvalue"] == pytest.approx(2 * 0.5 ** 40)  # sign test over 40 clusters
    pl = table[(table["family"] == "placement_vs_match") & (table["judge"] == "j")]
    assert sorted(pl["contrast"]) == sorted(f"accuracy({p}) - accuracy(match)"
                                            for p in PLACEMENTS)
    sysrow = pl[pl["contrast"].str.startswith("accuracy(system)")].iloc[0]
    assert sysrow["estimate"] == -1.0 and sysrow["n"] == 120
    other = pl[~pl["contrast"].str.startswith("accuracy(system)")]
    assert (other["estimate"] == 0).all() and (other["pvalue"] == 1).all()
    assert (other["ci_high"] > other["ci_low"]).all()  # never zero width
    lock = table[(table["family"] == "concat_vs_native_lock") & (table["judge"] == "j")].iloc[0]
    assert (lock["estimate"], lock["n"], lock["p_a"], lock["p_b"]) == (1.0, 20, 1.0, 0.0)
    # Holm within family over the audited judges only: two equal p-values -> doubled
    fam_rows = table[table["family"] == "concat_vs_native_lock"]
    audited = fam_rows[fam_rows["role"] == "audited"]
    assert sorted(audited["judge"]) == ["j", "j2"]
    assert audited["p_holm"].tolist() == pytest.approx([min(1, 2 * audited["pvalue"].iloc[0])] * 2)
    ctrl = table[table["judge"] == "listener"]
    assert (ctrl["role"] == "control").all() and ctrl["p_holm"].isna().all()
    assert not ctrl["reject_holm"].any()


def _placement_frame(rates, n_clusters=12, clips=10, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(n_clusters):
        for c in range(clips):
            u = rng.normal(0, 0.8)  # a clip effect shared by its placements
            for cond, r in rates.items():
                p = 1 / (1 + np.exp(-(np.log(r / (1 - r)) + u)))
                rows.append({"cluster": f"s{g}", "clip_id": f"s{g}c{c}", "seed": "1",
                             "condition": cond, "wrong_label": "x",
                             "parsed": "x" if rng.random() < p else "y"})
    return pd.DataFrame(rows)


def test_placement_wald_detects_placement_dependence():
    diff = _placement_frame({"system": 0.2, "rubric": 0.7, "before": 0.2, "after": 0.2},
                            clips=20)
    r = sa.placement_wald(diff, "placement_rf", "emotion", "speaker", PLACEMENTS)
    assert r["method"] == sa.METHOD_PLACEMENT_WALD and r["n_clusters"] == 12
    assert r["pvalue"] < 0.01 and r["statistic"] > 5
    same = [sa.placement_wald(_placement_frame(dict.fromkeys(PLACEMENTS, 0.4), seed=s),
                              "placement_rf", "emotion", "speaker", PLACEMENTS)["pvalue"]
            for s in range(40)]
    # under H0 the F(3, G-1) test rejects at about its level (40 replicates: <= 6 of 40)
    assert sum(p < 0.05 for p in same) <= 6 and min(same) >= 0 and max(same) <= 1
    few = sa.placement_wald(_placement_frame(dict.fromkeys(PLACEMENTS, 0.4), n_clusters=3),
                            "placement_rf", "emotion", "speaker", PLACEMENTS)
    assert np.isnan(few["pvalue"]) and few["method"].endswith("too_few_clusters")


def test_rf_adj_excludes_clips_where_wrong_label_is_heard():
    cs = clipset(per_class=20)
    trials = blueprint_trials(cs, BP(), [1, 2]) + reference_trials(cs, [1, 2])

    def judge(t):
        f = t["facts"]
        heard = "en" if f["clip_id"].endswith("0") else t["gold"]  # mishears some clips
        if t["condition"] == "audio_only":
            return (heard, "valid")
        if t["condition"] == "before" and f["clip_id"][-1] in "12345":
            return (f["wrong_label"], "valid")  # follows on half the clips
        return (heard, "valid")

    m = sa.metrics(sa.join(trials, respond(trials, judge), "j"), n_boot=100)
    adj = metric(m, "before", "rf_adj")
    # clips ending in 0 hear "en"; when the wrong label is "en" they are excluded
    assert adj["n"] < 160
    assert adj["estimate"] == pytest.approx(
        len([1 for t in trials if t["condition"] == "before" and t["facts"]["clip_id"][-1] in "12345"])
        / adj["n"])


def test_planted_table_uses_the_printed_clustered_ci():
    m = pd.DataFrame([
        {"judge": "s", "task": "emotion", "family": "blueprint", "condition": "wrong_block",
         "seed": "all", "metric": "rf", "estimate": 0.5, "ci_low": 0.38, "ci_high": 0.62,
         "n": 400, "n_invalid": 0, "method": "wilson_cr1_deff", "n_clusters": 8},
        {"judge": "s", "task": "pair_x", "family": "pairwise", "condition": "concat",
         "seed": "all", "metric": "locked_first", "estimate": 0.3, "ci_low": 0.2,
         "ci_high": 0.42, "n": 40, "n_invalid": 0, "method": "wilson_cr1_deff",
         "n_clusters": 40},
    ])
    spec = {"follow_block": {"framed": 0.6}, "lock": {"concat": {"first": 0.5}}}
    t = sa.planted_table(m, {"s": spec})
    assert list(t["knob"]) == ["follow_block.framed", "lock.concat.first"]
    assert list(t["ci_method"]) == ["wilson_cr1_deff"] * 2
    assert list(t["n_clusters"]) == [8, 40]
    assert list(t["inside"]) == [True, False]


def test_speaker_clusters_widen_the_printed_interval():
    """Clips from 8 speakers; a judge that follows the wrong reference for every clip
    of half the speakers and never for the others: the interval is clustered on
    speakers (n_clusters 8) and much wider than the trial-level Wilson interval."""
    from judgeaudit.stats.ci import wilson

    rows = [{"clip_id": f"{lab}{i}", "path": "x.wav", "sha256": f"{lab}{i}", "label": lab,
             "pred": lab, "speaker": f"v{i % 8}"} for lab in LANGS for i in range(16)]
    cs = ClipSet("language", LANGS, pd.DataFrame(rows))
    trials = reference_trials(cs, [1, 2, 3])
    spk = dict(zip(cs.clips["clip_id"], cs.clips["speaker"], strict=True))

    def judge(t):
        f = t["facts"]
        follows = int(spk[f["clip_id"]][1:]) % 2 == 0 and t["condition"] != "match"
        return (f["wrong_label"] if follows else t["gold"], "valid")

    m = sa.metrics(sa.join(trials, respond(trials, judge), "j"))
    r = metric(m, "system", "rf")
    assert (r["n"], r["n_clusters"], r["cluster_unit"]) == (192, 8, "speaker")
    lo, hi = wilson(96, 192)
    assert r["estimate"] == 0.5 and (r["ci_high"] - r["ci_low"]) > 3 * (hi - lo)


def test_planted_rate_zero_rows_are_reported_apart():
    m = pd.DataFrame([
        {"judge": "s", "task": "emotion", "family": "blueprint", "condition": c,
         "seed": "all", "metric": "rf", "estimate": 0.0 if c == "wrong_no_frame" else 0.5,
         "ci_low": 0.0 if c == "wrong_no_frame" else 0.4,
         "ci_high": 0.1 if c == "wrong_no_frame" else 0.6, "n": 100, "n_invalid": 0,
         "method": "wilson_cr1_deff", "n_clusters": 8}
        for c in ("wrong_block", "wrong_no_frame")])
    t = sa.planted_table(m, {"s": {"follow_block": {"framed": 0.5, "unframed": 0.0}}})
    assert list(t["counted"]) == [True, False]          # counted rows first
    assert list(t["planted"]) == [0.5, 0.0] and t["inside"].all()


def test_planted_targets_per_attribute_fallible_and_implied_text_rf():
    spec = {"follow_block": {"framed": 0.5, "with_audio": 0.6},
            "follow_reference": {"before": 0.4, "after_fallible": 0.1},
            "precedence": "reference",
            "attributes": {"language": {"follow_block": {"framed": 0.0}}}}
    emo = {(k, c, m): v for k, c, m, v, _ in sa.planted_targets(spec, "emotion", 8)}
    assert emo[("follow_block.framed", "wrong_block", "rf")] == pytest.approx(0.5 + 0.5 / 8)
    # unset fallible knobs plant the plain rate (the instruction changes nothing)
    assert emo[("follow_block.framed_fallible", "wrong_block_fallible", "rf")] == \
        pytest.approx(0.5 + 0.5 / 8)
    assert emo[("follow_reference.after_fallible", "after_fallible", "rf_adj")] == 0.1
    assert emo[("follow_reference.before_fallible", "before_fallible", "rf_adj")] == 0.4
    # reference weighed first in the conflict: reference 0.4, block (1 - 0.4) * 0.6
    assert emo[("conflict.follow_reference", "conflict", "follow_reference")] == 0.4
    assert emo[("conflict.follow_block", "conflict", "follow_block")] == pytest.approx(0.36)
    assert emo[("conflict_fallible.follow_block", "conflict_fallible", "follow_block")] == \
        pytest.approx(0.36)
    lang = {(k, c, m): v for k, c, m, v, _ in sa.planted_targets(spec, "language", 4)}
    # a non-following judge without audio: chance 1/K
    assert lang[("follow_block.framed", "wrong_block", "rf")] == pytest.approx(0.25)


def test_capability_test_reads_the_panel_honestly():
    def cap(pairs):
        return pd.DataFrame([{"judge": f"j{i // 2}", "task": ("emotion", "language")[i % 2],
                              "audio_norm": a, "rf_norm": r, "role": "audited"}
                             for i, (a, r) in enumerate(pairs)])
    # copying falls as audio-only accuracy rises: tau = -1, exact one-sided p = 1/6!
    row = sa.capability_test(cap([(0.1 * i, 1 - 0.1 * i) for i in range(6)]))
    assert row["estimate"] == pytest.approx(-1.0) and row["n"] == 6 and row["n_clusters"] == 3
    assert row["pvalue"] == pytest.approx(1 / 720) and row["method"] == "kendall_tau_exact_less"
    # the opposite pattern is no evidence for the paper's reading
    assert sa.capability_test(cap([(0.1 * i, 0.1 * i) for i in range(6)]))["pvalue"] > 0.99
    small = sa.capability_test(cap([(0.1, 0.9), (0.9, 0.1)]))
    assert np.isnan(small["pvalue"]) and small["method"].endswith("too_few_cells")


def test_planted_targets_read_the_config_not_the_simulator(repo_root):
    """The planted table derives each simulated judge's knobs from the config on its own
    (no call into judges/embedded/judges.py); on every simulated judge shipped it agrees
    with the simulator's merge, and a per-attribute override reaches only its attribute."""
    import glob

    import yaml

    from judgeaudit.judges.embedded.judges import SimKnobs
    from judgeaudit.study_a import metrics as SA

    src = (repo_root / "src" / "judgeaudit" / "study_a" / "metrics.py").read_text()
    assert "judges.embedded" not in src
    n = 0
    for f in ["config.yaml", *sorted(glob.glob(str(repo_root / "configs" / "*.yaml")))]:
        panel = (yaml.safe_load(open(repo_root / f)).get("judges") or {}).get("panel") or {}
        for spec in panel.values():
            sim = (spec or {}).get("simulated")
            for task in ("emotion", "language", "pair_speaker", "pair_naturalness") if sim else ():
                k = SimKnobs.from_spec(sim).for_attribute(task.removeprefix("pair_"))
                assert SA.effective_knobs(sim, task) == {
                    "audio_accuracy": k.audio_accuracy, "follow_block": dict(k.follow_block),
                    "follow_reference": dict(k.follow_reference), "lock": k.lock,
                    "precedence": k.precedence}
                n += 1
    assert n >= 40
    spec = {"follow_block": {"framed": 0.5}, "attributes": {"language": {"follow_block":
                                                                         {"framed": 0.1}}}}
    assert SA.effective_knobs(spec, "emotion")["follow_block"]["framed"] == 0.5
    assert SA.effective_knobs(spec, "language")["follow_block"]["framed"] == 0.1


def test_twoway_rates_where_clips_cross_eight_sentences():
    """Issue 32: accuracy and RF with the two-way (speaker x sentence) interval, only for
    tasks whose clips cross at least 8 sentences with the sampling unit."""
    from judgeaudit.stats.clustered import twoway_proportion

    rng = np.random.default_rng(2)
    rows = []
    for spk in range(10):
        for clip in range(8):
            cid = f"s{spk}c{clip}"
            for cond, wrong in (("audio_only", None), ("wrong_with_audio", "b")):
                rows.append({"judge": "j", "task": "emotion", "family": "blueprint",
                             "condition": cond, "clip_id": cid, "cluster": f"spk{spk}",
                             "gold": "a", "wrong_label": wrong, "valid": True,
                             "parsed": "a" if rng.random() < 0.6 + 0.04 * clip else "b"})
    df = pd.DataFrame(rows)
    eight = {f"s{s}c{c}": f"sent{c}" for s in range(10) for c in range(8)}
    out = sa.twoway_rates(df, eight)
    assert [(r["condition"], r["metric"]) for r in out] == [
        ("audio_only", "accuracy"), ("wrong_with_audio", "accuracy"), ("wrong_with_audio", "rf")]
    sub = df[df["condition"] == "wrong_with_audio"]
    ref = twoway_proportion((sub["parsed"] == "b").to_numpy(float), sub["cluster"].to_numpy(),
                            sub["clip_id"].map(eight).to_numpy())
    rf = out[2]
    assert rf["method"] == "wilson_cgm_twoway" and rf["n_sentences"] == 8
    assert (rf["estimate"], rf["ci_low"], rf["ci_high"]) == (ref.estimate, ref.lo, ref.hi)
    seven = {k: f"sent{int(v[-1]) % 7}" for k, v in eight.items()}
    assert sa.twoway_rates(df, seven) == []


def test_read_in_two_clusters_is_the_groupby_nunique_check():
    """twoway_rates' crossing check (`_read_in_two_clusters`) answers what
    `groupby(sentences)["cluster"].nunique().max() >= 2` answered, missing clusters
    and single-cluster sentences included."""
    rng = np.random.default_rng(32)
    for trial in range(300):
        n = int(rng.integers(1, 40))
        sent = np.array([f"sent{i}" for i in rng.integers(0, int(rng.integers(1, 9)), n)],
                        dtype=object)
        clusters = np.array([f"spk{i}" for i in rng.integers(0, int(rng.integers(1, 6)), n)],
                            dtype=object)
        if trial % 3 == 0:
            clusters[rng.random(n) < 0.3] = None
        frame = pd.DataFrame({"cluster": clusters})
        expected = frame.groupby(sent)["cluster"].nunique().max() >= 2
        assert sa._read_in_two_clusters(sent, clusters) == bool(expected), trial


def _crossed_records(n_speakers=12, n_sentences=8, seed=32):
    """Trials / responses / manifest of one judge on an emotion task whose speakers all
    read the same `n_sentences` sentences (a sentence effect and a speaker effect)."""
    rng = np.random.default_rng(seed)
    sent_eff = rng.normal(0, 0.8, n_sentences)
    spk_eff = rng.normal(0, 0.8, n_speakers)
    trials, responses, man = [], [], []
    for spk in range(n_speakers):
        for s in range(n_sentences):
            cid = f"emo_v{spk:02d}_s{s}"
            man.append({"clip_id": cid, "sentence_id": str(s), "transcript": f"text {s}"})
            for cond, wrong in (("audio_only", None), ("wrong_with_audio", "sad")):
                tid = f"{cid}-{cond}"
                facts = {"family": "blueprint", "clip_id": cid, "k": 4, "cluster": f"v{spk}",
                         "cluster_unit": "speaker", "corpus": "synth_emotion",
                         "wrong_label": wrong, "seed": 1 if wrong else None}
                trials.append({"trial_id": tid, "task": "emotion", "condition": cond,
                               "gold": "happy", "facts": facts})
                p_hit = 1 / (1 + np.exp(-(0.3 + sent_eff[s] + spk_eff[spk])))
                answer = "happy" if rng.random() < p_hit else ("sad" if rng.random() < 0.7
                                                              else "angry")
                responses.append({"trial_id": tid, "parsed": answer, "status": "valid"})
    return trials, responses, {"synth_emotion": pd.DataFrame(man)}


def _cgm_wilson_by_hand(y, speakers, sentences):
    """Independent recomputation: Cameron-Gelbach-Miller two-way variance of a mean,
    V = sum over (speaker, sentence, speaker x sentence) of +-G/(G-1) sum_g e_g^2 / n^2,
    then the Wilson score interval at m = p(1-p)/V with t on min(G) - 1 df."""
    from scipy.stats import t as student_t

    y = np.asarray(y, float)
    n, p = y.size, y.mean()
    e = y - p

    def term(labels):
        labels = np.asarray(labels)
        groups = sorted(set(labels))
        tot = np.array([e[labels == g].sum() for g in groups])
        g = len(groups)
        return g / (g - 1) * (tot ** 2).sum() / n ** 2

    cells = np.array([f"{a}|{b}" for a, b in zip(speakers, sentences, strict=True)])
    v = term(speakers) + term(sentences) - term(cells)
    assert v > 0
    m = p * (1 - p) / v
    crit = student_t.ppf(0.975, min(len(set(speakers)), len(set(sentences))) - 1)
    centre = (p + crit ** 2 / (2 * m)) / (1 + crit ** 2 / m)
    half = crit / (1 + crit ** 2 / m) * np.sqrt(p * (1 - p) / m + crit ** 2 / (4 * m ** 2))
    return p, centre - half, centre + half


def test_twoway_row_of_the_recipe_is_cgm_by_hand(tmp_path):
    """Issue 32: the two-way row the Study A recipe writes (each clip's sentence from
    the corpus manifest) equals an explicit CGM + Wilson computation, and the tables
    print it beside the speaker-clustered interval, the accuracy table's caption
    pointing the task to it."""
    from judgeaudit.study_a import compute
    from judgeaudit.study_a import outputs as A
    from judgeaudit.study_a import render as RA

    trials, responses, manifests = _crossed_records()
    inputs = compute.join_inputs(trials, responses, {"judge": "j"}, manifests=manifests)
    out = compute.judge_metrics(inputs, {"judge": "j", "n_boot": 0})
    two = out["twoway"]
    assert list(two.columns) == sa.TWOWAY_COLUMNS
    assert sorted(zip(two["condition"], two["metric"], strict=True)) == [
        ("audio_only", "accuracy"), ("wrong_with_audio", "accuracy"),
        ("wrong_with_audio", "rf")]
    row = two[(two["condition"] == "wrong_with_audio") & (two["metric"] == "rf")].iloc[0]
    ww = [t for t in trials if t["condition"] == "wrong_with_audio"]
    parsed = {r["trial_id"]: r["parsed"] for r in responses}
    y = [parsed[t["trial_id"]] == "sad" for t in ww]
    spk = [t["facts"]["cluster"] for t in ww]
    sent = [t["facts"]["clip_id"].rsplit("_s", 1)[1] for t in ww]
    p, lo, hi = _cgm_wilson_by_hand(y, spk, sent)
    assert row["estimate"] == pytest.approx(p, abs=1e-12)
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(lo, abs=1e-10),
                                               pytest.approx(hi, abs=1e-10))
    assert (row["n_speakers"], row["n_sentences"], row["n_clusters"]) == (12, 8, 8)
    assert row["method"] == "wilson_cgm_twoway"
    # the sentence effect is real: the two-way interval is wider than the speaker one
    metrics = out["metrics"].assign(corpus="synth_emotion", n_sentences=8)
    one = metrics[(metrics["condition"] == "wrong_with_audio") & (metrics["metric"] == "rf")
                  & (metrics["seed"] == "all")].iloc[0]
    assert row["ci_high"] - row["ci_low"] > one["ci_high"] - one["ci_low"]

    # a corpus that declares no single sentence per clip (only transcripts): no row
    bare = {"synth_emotion": manifests["synth_emotion"].drop(columns="sentence_id")}
    none = compute.judge_metrics(compute.join_inputs(trials, responses, {"judge": "j"},
                                                     manifests=bare), {"judge": "j"})
    assert none["twoway"].empty
    # the trace's cell selection keeps the clips' sentences: the cell's row is the same
    cell, ids, _ = compute.select_cell(inputs, dict(row))
    again = compute.judge_metrics(cell, {"judge": "j"})["twoway"]
    hit = again[(again["condition"] == "wrong_with_audio") & (again["metric"] == "rf")]
    assert float(hit["ci_high"].iloc[0]) == row["ci_high"] and len(ids) == len(ww)

    entry = A.REGISTRY.table("study_a_twoway")
    twoway = two.assign(corpus="synth_emotion")
    entry.render(twoway=twoway, metrics=metrics, base=tmp_path / entry.name, entry=entry)
    md = (tmp_path / f"{entry.name}.md").read_text()
    assert f"| {row['estimate']:.2f} [{row['ci_low']:.2f}, {row['ci_high']:.2f}] | " \
           f"{one['estimate']:.2f} [{one['ci_low']:.2f}, {one['ci_high']:.2f}] |" in md
    assert "Cameron, Gelbach & Miller" in md  # the method registry's text
    blue = A.REGISTRY.table("study_a_table2_blueprint")
    with RA.twoway_tasks(twoway, "Table A.S7 (study_a_twoway)"):
        blue.render(metrics=metrics, base=tmp_path / "t2", entry=blue)
    cap = (tmp_path / "t2.md").read_text()
    assert ("emotion: conditional on the 8 sentences used; the two-way speaker x sentence "
            "interval, which generalises over sentences as well as speakers, is in Table "
            "A.S7 (study_a_twoway)") in cap
    blue.render(metrics=metrics, base=tmp_path / "t3", entry=blue)  # no two-way rows
    cap = (tmp_path / "t3.md").read_text()
    assert "emotion: conditional on the 8 sentences used" in cap and "A.S7" not in cap
    # no task crossed with >= 8 sentences: the table says so, with each task's count
    entry.render(twoway=twoway.iloc[0:0], metrics=metrics.assign(n_sentences=2),
                 base=tmp_path / "empty", entry=entry)
    assert "(emotion: 2 sentences)" in (tmp_path / "empty.md").read_text()


def test_each_output_alone_is_the_frame_judge_metrics_gives():
    """The trace recomputes only the output its table reads (Recipe.compute_output):
    `judge_output` alone must be the very frame of `judge_metrics`, bit for bit."""
    from judgeaudit.study_a import compute
    from judgeaudit.study_a.recipes import RECIPE

    trials, responses, manifests = _crossed_records()
    inputs = compute.join_inputs(trials, responses, {"judge": "j"}, manifests=manifests)
    params = {"judge": "j", "n_boot": 50}
    whole = compute.judge_metrics(inputs, params)
    assert list(whole) == list(compute.JUDGE_OUTPUTS) == list(RECIPE.outputs)
    assert RECIPE.compute_output is compute.judge_output
    for name in compute.JUDGE_OUTPUTS:
        alone = compute.judge_output(inputs, params, name)
        assert list(alone) == [name]
        pd.testing.assert_frame_equal(alone[name], whole[name], check_exact=True)
    with pytest.raises(KeyError, match="no output 'planted'"):
        compute.judge_output(inputs, params, "planted")


def _old_join(trials, responses, judge):
    """study_a.metrics.join as written before it built rows as lists (a dict per row)."""
    import math

    resp = {r["trial_id"]: r for r in responses}
    rows = []
    for t in trials:
        r = resp[t["trial_id"]]
        f = t.get("facts", {})
        row = {"judge": judge, "trial_id": t["trial_id"], "task": t["task"],
               "condition": t["condition"], "gold": t["gold"],
               "parsed": r.get("parsed"), "status": r.get("status"), "error": r.get("error")}
        row.update({c: f.get(c) for c in sa.FACT_COLUMNS})
        row["layout"] = r.get("layout") or f.get("reference_layout")
        if row["cluster"] is None:
            unit = "pair" if f.get("pair_id") is not None else "clip"
            row["cluster"] = f.get("pair_id") if unit == "pair" else f.get("clip_id")
            row["cluster_unit"] = unit
        rows.append(row)
    df = pd.DataFrame(rows, columns=list(rows[0])) if rows else pd.DataFrame(rows)
    if not df.empty:
        df["valid"] = df["status"] == "valid"
        df["seed"] = df["seed"].map(lambda s: sa.POOLED if s is None or
                                    (isinstance(s, float) and math.isnan(s)) else str(int(s)))
        df["cluster"] = df["cluster"].astype(str)
    return df


def test_join_is_the_frame_the_dict_rows_gave():
    """join builds its rows as lists: the frame (values, dtypes, column order) is the
    one the dict-per-row construction gave, over classification and pair trials with
    and without a cluster fact, seeds, layouts, missing answers and errors."""
    rng = np.random.default_rng(36)
    trials, responses = [], []
    for i in range(300):
        kind = i % 3
        facts = {"family": "blueprint" if kind < 2 else "pairwise", "k": 4,
                 "seed": int(rng.integers(1, 4)) if kind == 1 else None,
                 "clip_id": f"clip{i % 17}", "wrong_label": "b" if kind == 1 else None}
        if kind == 2:
            facts.update({"pair_id": f"pair{i % 11}", "order": "AB" if i % 2 else "BA",
                          "better_slot_ab": "A", "reference_layout": "concat"})
        if i % 5:
            facts.update({"cluster": f"spk{i % 7}", "cluster_unit": "speaker"})
        trials.append({"trial_id": f"t{i}", "task": "emotion", "condition":
                       ("audio_only", "wrong_with_audio", "concat")[kind], "gold": "a",
                       "facts": facts})
        status = ("valid", "refusal", "error")[int(rng.integers(0, 3))]
        responses.append({"trial_id": f"t{i}", "status": status,
                          "parsed": "a" if status == "valid" else None,
                          "error": "timeout" if status == "error" else None,
                          **({"layout": "split"} if i % 13 == 0 else {})})
    new, old = sa.join(trials, responses, "j"), _old_join(trials, responses, "j")
    pd.testing.assert_frame_equal(new, old, check_dtype=True, check_exact=True)
    assert list(new.dtypes) == list(old.dtypes)
    assert sa.join([], [], "j").empty

"""Study B core: reply bank vs judge lexicon, items, trials, embedded answers, metrics
on tiny fake data (no corpus, no specialists: a fake perception keyed by audio)."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from judgeaudit.judges.embedded import lexicon as L
from judgeaudit.judges.request import LoadedRequest, Request
from judgeaudit.study_b import items as I
from judgeaudit.study_b import metrics as SB
from judgeaudit.study_b import protocols as PR
from judgeaudit.study_b.replies import ReplyBank, lexical_quality, politeness

EMOS = ("neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised")


@pytest.fixture(scope="module")
def bank(repo_root):
    return ReplyBank.load(repo_root / "templates/study_b/replies.yaml")


@pytest.fixture(scope="module")
def templates(repo_root):
    d = repo_root / "templates/study_b"
    t = {k: PR.Template.load(d / v) for k, v in PR.TEMPLATE_FILES.items()}
    cues = {c: PR.Template.load(d / "cues" / f"{c}.txt") for c in ("soft", "hard", "transition")}
    return t, cues


def test_bank_agrees_with_judge_lexicon(bank):
    """Each emotion reply is read by the judge's lexicon as that emotion, for every
    frame and fill variant, and never as the other emotion of a pair."""
    for e0 in EMOS:
        for e1 in EMOS:
            if e0 == e1:
                continue
            for frame in range(len(bank.frames)):
                for var in range(2):
                    r0, r1 = bank.emotion_pair(e0, e1, frame, var)
                    assert L.reply_emotion(r0) == e0, r0
                    assert L.reply_emotion(r1) == e1, r1
                    assert L.reply_for_emotion(e0, {"R1": r0, "R2": r1}) == "R1"


def test_bank_lexically_balanced(bank):
    """Within a pair, the replies share frame and politeness; lengths within 5 words."""
    for e0 in EMOS:
        for e1 in EMOS:
            for frame in range(len(bank.frames)):
                r0, r1 = bank.emotion_pair(e0, e1, frame, 0)
                q0, q1 = lexical_quality(r0), lexical_quality(r1)
                assert abs(q0["n_words"] - q1["n_words"]) <= 5
                assert q0["politeness"] == q1["politeness"]
    assert politeness("Thank you, please wait.") == 2


def _pairs(n=8):
    emos = ["angry", "sad", "happy", "neutral"]
    return pd.DataFrame([{"item_id": f"cf{i:02d}", "transcript": f"sentence number {i} is here",
                          "emotion_a": emos[i % 4], "emotion_b": emos[(i + 1) % 4]}
                         for i in range(n)])


def _dialogues(n=4, turns=10, shifts=(2, 6)):
    """synth_dialogue layout: user on even turns; the user shifts from neutral to
    angry at shifts[0] (early) or shifts[1] (late) and stays shifted."""
    rows = []
    for d in range(n):
        for variant, shift in zip(("early", "late"), shifts, strict=True):
            for t in range(turns):
                role = "user" if t % 2 == 0 else "assistant"
                emo = "neutral" if role == "assistant" or t < shift else "angry"
                rows.append({"dialogue_id": f"d{d}", "variant": variant, "turn_index": t,
                             "role": role, "emotion": emo,
                             "transcript": f"dialogue {d} turn {t} words alpha{t} beta{d}"})
    return pd.DataFrame(rows)


def _fake_audio(items):
    """Audio map + truth: each (item, rendering, turn) gets distinct bytes whose
    emotion the fake perception knows (like a perfect specialist)."""
    audio, truth = {}, {}
    for it in items:
        for t in it["turns"]:
            if t["role"] != "user":
                continue
            for v in (0, 1):
                emo = t["emotions"][v]
                data = f"{it['item_id']}|{t['turn']}|{emo}".encode()
                sha = hashlib.sha256(data).hexdigest()
                audio[(it["item_id"], v, t["turn"])] = (f"fake/{sha}.wav", sha)
                truth[sha] = (emo, data)
    return audio, truth


class FakePerception:
    def __init__(self, truth, wrong=()):
        self.by_bytes = {data: emo for emo, data in truth.values()}
        self.wrong = set(wrong)

    def emotion_scores(self, wav):
        emo = self.by_bytes[wav]
        if wav in self.wrong:  # perceives another emotion of the task's classes
            emo = {"angry": "sad", "sad": "angry", "happy": "neutral", "neutral": "happy"}[emo]
        return {e: (0.9 if e == emo else 0.1 / 7) for e in EMOS}


def _loaded(trial, truth):
    req = Request.from_json(trial["request"])
    audio = {p.sha256: truth[p.sha256][1] for p in req.audio_parts}
    return LoadedRequest(req, audio)


def _responses(trials, truth, fn):
    out = []
    for t in trials:
        ans = fn(_loaded(t, truth))
        out.append({"trial_id": t["trial_id"], "status": "valid", "parsed": ans})
    return out


def _all_trials(items, audio, templates, family):
    t, cues = templates
    shards = ["pointwise-none", "pointwise-hard", "pairwise-none", "pairwise-hard",
              "probe-P", "probe-O"]
    out = {}
    for s in shards:
        kind, cue = PR.shard_kind(s)
        out[s] = PR.build_trials(items, audio, s, t, cues.get(cue))
    return out


def test_items_and_trials_structure(bank, templates):
    items = I.single_items(_pairs(), bank, ["v0", "v1"], seed=1)
    for it in items:
        I.check_item(it)
    assert sum(it["swap"] for it in items) == len(items) // 2
    audio, truth = _fake_audio(items)
    trials = _all_trials(items, audio, templates, "single")
    pw = trials["pointwise-none"]
    assert len(pw) == 2 * len(items)
    # the two renderings of an item send identical text and differ only in audio
    by_item = {}
    for t in pw:
        by_item.setdefault(t["facts"]["item_id"], []).append(t)
    for a, b in by_item.values():
        ta = [p for p in a["request"]["parts"] if p["kind"] == "text"]
        tb = [p for p in b["request"]["parts"] if p["kind"] == "text"]
        assert ta == tb and a["gold"] != b["gold"]
    assert {t["gold"] for t in pw} == {"R1", "R2"}
    hard = trials["pointwise-hard"][0]["request"]["parts"][-1]["text"]
    assert "prosody" in hard and "prosody" not in pw[0]["request"]["parts"][-1]["text"]
    assert all(t["facts"]["cue_sha256"] for t in trials["pointwise-hard"])
    o = trials["probe-O"]
    assert all(not any(p["kind"] == "audio" for p in t["request"]["parts"]) for t in o)
    with pytest.raises(PR.TrialError):
        PR.shard_kind("pointwise-loud")


def _score(items, trials, truth, fn, judge):
    frames = [SB.score_trials(ts, _responses(ts, truth, fn), judge, s) for s, ts in trials.items()]
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("family", ["single", "positional", "conversation"])
def test_control_judges_behave(bank, templates, family):
    if family == "single":
        items = I.single_items(_pairs(12), bank, ["v0"], seed=3)
    elif family == "positional":
        items = I.positional_items(_dialogues(8), bank, ["v0"], seed=3)
    else:
        items = I.conversation_items(_dialogues(8), bank, ["v0"], seed=3,
                                     classes=["angry", "sad", "happy", "neutral"])
    audio, truth = _fake_audio(items)
    trials = _all_trials(items, audio, templates, family)
    perc = FakePerception(truth)
    listener = _score(items, trials, truth, lambda ld: L.listener_answer(ld, perc), "listener")
    reader = _score(items, trials, truth, L.label_reader_answer, "label-reader")
    acc_l = SB.accuracy(listener).set_index(["protocol", "cue"])["estimate"]
    acc_r = SB.accuracy(reader).set_index(["protocol", "cue"])["estimate"]
    assert acc_l[("pointwise", "none")] == 1.0 and acc_l[("pairwise", "none")] == 1.0
    assert acc_l[("probe_P", "")] == 1.0 and acc_l[("probe_O", "")] == 1.0
    # text only: exactly chance on both protocols (identical text for both renderings)
    assert acc_r[("pointwise", "none")] == 0.5 and acc_r[("pairwise", "none")] == 0.5
    assert acc_r[("probe_O", "")] == 1.0
    st = SB.states(listener, items)
    assert set(st["state"]) == {"111"}
    st_r = SB.states(reader, items)
    assert (st_r["O"] == 1).all() and set(st_r["state"]) <= {"010", "011", "110", "111"}


def test_planted_potemkin_recovered(bank, templates):
    items = I.single_items(_pairs(60), bank, ["v0"], seed=5)
    audio, truth = _fake_audio(items)
    trials = _all_trials(items, audio, templates, "single")
    perc = FakePerception(truth)
    planted = 0.3
    sim = _score(items, trials, truth,
                 lambda ld: L.simulated_answer(ld, perc, seed=2, potemkin=planted), "sim")
    pot = SB.potemkin(SB.states(sim, items)).set_index("metric").loc["conditional_potemkin"]
    assert pot["ci_low"] <= planted <= pot["ci_high"]
    assert pot["n"] == 120
    # O and P are untouched by the integration failure
    acc = SB.accuracy(sim).set_index(["protocol", "cue"])["estimate"]
    assert acc[("probe_P", "")] == 1.0 and acc[("probe_O", "")] == 1.0


def test_perception_errors_give_bottleneck_states(bank, templates):
    items = I.single_items(_pairs(8), bank, ["v0"], seed=5)
    audio, truth = _fake_audio(items)
    trials = _all_trials(items, audio, templates, "single")
    wrong = {data for emo, data in list(truth.values())[::2]}
    perc = FakePerception(truth, wrong)
    sc = _score(items, trials, truth, lambda ld: L.listener_answer(ld, perc), "listener")
    st = SB.states(sc, items)
    assert "111" in set(st["state"]) and set(st["state"]) <= {"111", "010", "011"}
    dist = SB.state_distribution(st)
    assert dist.groupby(["judge", "task"])["estimate"].sum().round(9).eq(1.0).all()


def test_invalid_counted_not_wrong(bank, templates):
    items = I.single_items(_pairs(4), bank, ["v0"], seed=5)
    audio, truth = _fake_audio(items)
    t, _ = templates
    trials = PR.build_trials(items, audio, "pointwise-none", t)
    resp = [{"trial_id": x["trial_id"], "status": "invalid_json", "parsed": None}
            if i == 0 else {"trial_id": x["trial_id"], "status": "valid", "parsed": x["gold"]}
            for i, x in enumerate(trials)]
    acc = SB.accuracy(SB.score_trials(trials, resp, "j", "pointwise-none")).iloc[0]
    assert acc["estimate"] == 1.0 and acc["n"] == len(trials) - 1 and acc["n_invalid"] == 1
    with pytest.raises(ValueError, match="no response"):
        SB.score_trials(trials, resp[1:], "j", "pointwise-none")


def test_protocol_gap_and_cue_dependence():
    rows = []
    for i in range(40):
        for proto, acc in (("pointwise", 0.5), ("pairwise", 1.0)):
            for cue in ("none", "hard"):
                for v in (0, 1):
                    ok = acc == 1.0 or v == 0 or cue == "hard"
                    rows.append({"judge": "j", "task": "single", "protocol": proto, "cue": cue,
                                 "item_id": f"i{i}", "rendering": v, "valid": True,
                                 "correct": float(ok), "probe": "", "oracle": None})
    sc = pd.DataFrame(rows)
    gap = SB.protocol_gap(sc, n_boot=500).set_index("cue").loc["none"]
    assert gap["estimate"] == pytest.approx(0.5) and gap["n_items"] == 40
    cd = SB.cue_dependence(sc, n_boot=500).set_index("protocol")
    assert cd.loc["pointwise", "estimate"] == pytest.approx(0.5)
    assert cd.loc["pairwise", "estimate"] == pytest.approx(0.0)
    # one row per contrasted cue the group ran (vocab.study_b.CONTRASTED_CUES), each vs none
    soft = sc[sc["cue"] == "hard"].assign(cue="soft", correct=0.0)
    both = SB.cue_dependence(pd.concat([sc, soft]), cues=("hard", "soft"), n_boot=0)
    got = both.set_index(["protocol", "cue"])["estimate"]
    assert got[("pointwise", "hard")] == pytest.approx(0.5)
    assert got[("pointwise", "soft")] == pytest.approx(-0.5)
    assert set(SB.cue_dependence(pd.concat([sc, soft]), n_boot=0)["cue"]) == {"hard"}


def test_positional_items_validate(bank):
    d = _dialogues(2)
    bad = d.copy()
    bad.loc[(bad["variant"] == "late") & (bad["turn_index"] == 0), "transcript"] = "changed"
    with pytest.raises(I.ItemError, match="identical transcript"):
        I.positional_items(bad, bank, ["v0"], seed=1)
    items = I.positional_items(d, bank, ["v0"], seed=1)
    it = items[0]
    turns = {t["turn"]: t["text"] for t in it["turns"]}
    assert [L.quoted_turn(r, turns) for r in it["replies"]] == [int(x) for x in it["labels"]]
    assert it["shift_turns"] == [3, 7] and it["key_turns"] == [3, 5]
    assert it["span_turns"] == [3, 5, 7]


def test_states_figure_reads_states_from_tsv(tmp_path):
    """States written to TSV come back as integers ("010" -> 10); the figure must
    still stack every state."""
    from judgeaudit.study_b import render as R

    dist = pd.DataFrame([{"judge": "j", "task": "single", "state": s, "estimate": e}
                         for s, e in (("111", 0.5), ("010", 0.25), ("011", 0.25))])
    dist.to_csv(tmp_path / "d.tsv", sep="\t", index=False)
    back = pd.read_csv(tmp_path / "d.tsv", sep="\t")
    heights = R.states_figure(back, tmp_path / "fig")
    assert heights.loc["j", "single"] == pytest.approx(1.0)
    assert (tmp_path / "fig.png").exists() and (tmp_path / "fig.pdf").exists()


def test_balance_gap_is_the_item_paired_t_interval():
    """The reply-balance gap R1 - R0 is item-clustered like every Study B number: rows
    of one item and reply are averaged, and the interval is the paired t interval over
    items (scipy.stats.ttest_rel), not a percentile bootstrap."""
    import numpy as np
    from scipy import stats as sps

    rng = np.random.default_rng(4)
    rows = []
    for i in range(25):
        base = rng.normal(20, 4)
        for reply in (0, 1):
            # two rows per item and reply (e.g. two renderings): averaged per item first
            for _ in range(2):
                rows.append({"item_id": f"i{i}", "task": "single", "reply": reply,
                             "n_words": base + 0.8 * reply + rng.normal(0, 1)})
    bal = SB.balance(rows, ["n_words"], n_boot=300).iloc[0]
    f = pd.DataFrame(rows).groupby(["item_id", "reply"])["n_words"].mean().unstack()
    res = sps.ttest_rel(f[1], f[0])
    ci = res.confidence_interval(0.95)
    assert bal["gap"] == pytest.approx(float((f[1] - f[0]).mean()))
    assert (bal["gap_ci_low"], bal["gap_ci_high"]) == pytest.approx((ci.low, ci.high), rel=1e-9)
    assert bal["gap_pvalue"] == pytest.approx(res.pvalue, rel=1e-8)
    assert bal["n_items"] == bal["n_clusters"] == 25 and bal["cluster_unit"] == "item"
    assert bal["method"] == "paired_t_cr2_bm"
    absd = (f[1] - f[0]).abs()
    half = sps.t.ppf(0.975, 24) * absd.std(ddof=1) / np.sqrt(25)
    assert bal["abs_gap"] == pytest.approx(absd.mean())
    assert bal["abs_gap_ci_high"] == pytest.approx(absd.mean() + half, rel=1e-9)
    assert bal["abs_gap_ci_low"] == pytest.approx(max(0.0, absd.mean() - half), rel=1e-9)
    assert bal["boot_low"] < bal["gap"] < bal["boot_high"]


# ------------------------------------------------------------ text-only baseline T
def test_text_only_baseline_is_the_pointwise_request_without_audio(bank, templates):
    """T (shard text-<cue>): the same system text, instruction, transcript, candidates
    and cue as Pointwise, no audio part; the embedded judges answer it from the text
    alone, so a listener's J - T is its listening gain and T sits at 1/2."""
    items = I.single_items(_pairs(12), bank, ["v0"], seed=3)
    audio, truth = _fake_audio(items)
    t, cues = templates
    trials = _all_trials(items, audio, templates, "single")
    for cue in ("none", "hard"):
        trials[f"text-{cue}"] = PR.build_trials(items, audio, f"text-{cue}", t, cues.get(cue))
    tx, pt = trials["text-hard"], trials["pointwise-hard"]
    assert len(tx) == len(pt) == 2 * len(items)
    for a, b in zip(tx, pt, strict=True):
        assert not any(p["kind"] == "audio" for p in a["request"]["parts"])
        assert a["request"]["system"] == b["request"]["system"]
        assert a["request"]["parts"][-1]["text"] == b["request"]["parts"][-1]["text"]
        assert a["gold"] == b["gold"] and a["facts"]["protocol"] == "text"
    perc = FakePerception(truth)
    view = L.read_request(Request.from_json(tx[0]["request"]))
    assert view.kind == "text" and view.oracle_emotion is None
    listener = _score(items, trials, truth, lambda ld: L.listener_answer(ld, perc), "listener")
    sim = _score(items, trials, truth,
                 lambda ld: L.simulated_answer(ld, perc, seed=2, potemkin=0.3), "sim")
    both = pd.concat([listener, sim], ignore_index=True)
    acc = SB.accuracy(both).set_index(["judge", "protocol", "cue"])["estimate"]
    for judge in ("listener", "sim"):
        assert acc[(judge, "text", "none")] == 0.5 and acc[(judge, "text", "hard")] == 0.5
    assert set(listener.loc[listener["protocol"] == "text", "probe"]) == {"T"}
    tg = SB.text_gap(both, n_boot=200).set_index(["judge", "cue"])
    assert tg.loc[("listener", "none"), "estimate"] == pytest.approx(0.5)
    assert tg.loc[("listener", "none"), "n_items"] == len(items)
    assert tg.loc[("listener", "none"), "pointwise"] == 1.0
    assert tg.loc[("listener", "none"), "text"] == 0.5
    assert tg.loc[("listener", "none"), "ci_low"] > 0
    # Holm: one family per judge (its cues here)
    assert (tg.loc["listener", "holm_m"] == 2).all()
    assert (tg["p_holm"] >= tg["pvalue"] - 1e-12).all()
    # states: T beside P, O, J; every J success of the listener needs listening half
    # the time (T right on one rendering of each item)
    st = SB.states(listener, items)
    assert st["T"].notna().all() and st.groupby("item_id")["T"].sum().eq(1).all()
    pot = SB.potemkin(st).set_index("metric")
    assert pot.loc["probe_T", "estimate"] == 0.5
    assert pot.loc["j_no_listening", "estimate"] == 0.5
    assert pot.loc["staging_accuracy", "estimate"] == 1.0
    assert pot.loc["staged_potemkin", "estimate"] == 0.0
    dist = SB.state_distribution(st).set_index("state")
    assert dist.loc["111", "t_right"] == 0.5 and dist.loc["111", "t_n"] == len(st)


def _gap_scored(protocols=("pointwise", "pairwise")) -> pd.DataFrame:
    """Scored rows of two judges x two tasks x 30 items (judge a: Pairwise lifted)."""
    rng = __import__("numpy").random.default_rng(3)
    rows = []
    for judge, lift in (("a", 0.3), ("b", 0.0)):
        for task in ("single", "positional"):
            for i in range(30):
                for proto in protocols:
                    for cue in ("none", "hard"):
                        for v in (0, 1):
                            p = 0.5 + (lift if proto == "pairwise" else 0.0)
                            rows.append({"judge": judge, "task": task, "protocol": proto,
                                         "cue": cue, "item_id": f"{task}{i}", "rendering": v,
                                         "valid": True, "correct": float(rng.random() < p),
                                         "probe": "", "oracle": None,
                                         "trial_id": f"{judge}|{task}|{i}|{proto}|{cue}|{v}"})
    return pd.DataFrame(rows)


def test_protocol_gap_and_cue_dependence_are_holm_adjusted_per_judge():
    from statsmodels.stats.multitest import multipletests

    sc = _gap_scored()
    gap = SB.protocol_gap(sc, n_boot=0)
    for judge, g in gap.groupby("judge"):
        assert len(g) == 4 and (g["holm_m"] == 4).all()
        assert g["p_holm"].to_numpy() == pytest.approx(
            multipletests(g["pvalue"], method="holm")[1])
        assert set(g["holm_family"]) == {f"protocol_gap|{judge}"}
    cd = SB.cue_dependence(sc, n_boot=0)
    assert set(cd["holm_family"]) == {"cue_dependence|a", "cue_dependence|b"}
    assert (cd["p_holm"] >= cd["pvalue"] - 1e-12).all()


def test_holm_recipes_select_the_judges_family_and_the_rows_trials():
    """The registry's cell selection of a Holm table (study_b.compute) hands compute
    the judge's whole family, so the recomputed row has the table's p_holm; the
    cell's trials are the row's own."""
    from judgeaudit.study_b.recipes import metric_recipe

    sc = _gap_scored(("pointwise", "pairwise", "text"))
    for metric in ("protocol_gap", "text_gap", "cue_dependence"):
        recipe = metric_recipe(metric)
        table = recipe.compute({"scored": sc}, {"n_boot": 0})[metric]
        row = table[(table["judge"] == "a") & (table["task"] == "positional")].iloc[0]
        cell_inputs, ids, _ = recipe.select({"scored": sc}, row.to_dict())
        assert set(cell_inputs["scored"]["judge"]) == {"a"}
        assert set(cell_inputs["scored"]["task"]) == {"single", "positional"}
        mine = sc[sc["trial_id"].isin(ids)]
        assert set(mine["task"]) == {"positional"} and set(mine["judge"]) == {"a"}
        assert set(mine["cue"]) <= {row["cue"], "none"}
        again = recipe.compute(cell_inputs, {"n_boot": 0})[metric]
        keys = [k for k in ("task", "cue", "protocol") if k in table.columns]
        hit = again.set_index(keys).loc[tuple(row[k] for k in keys)]
        assert hit["p_holm"] == pytest.approx(row["p_holm"]) and row["holm_m"] > 1, metric
        assert hit["estimate"] == pytest.approx(row["estimate"]), metric


def test_positional_p_bit_scores_the_whole_trajectory(bank, templates):
    """The paper's P probe: every user turn right. A perception error on a user turn
    after the later candidate shift breaks P under the default scope and not under
    the lenient `span` scope (a named option)."""
    items = I.positional_items(_dialogues(4), bank, ["v0"], seed=3)
    audio, truth = _fake_audio(items)
    trials = _all_trials(items, audio, templates, "positional")
    last_user = {it["item_id"]: max(t["turn"] for t in it["turns"] if t["role"] == "user")
                 for it in items}
    assert all(last_user[it["item_id"]] > max(it["span_turns"]) for it in items)
    wrong = {data for sha, (emo, data) in truth.items()
             if any(data.startswith(f"{iid}|{t}|".encode()) for iid, t in last_user.items())}

    class LateSlip(FakePerception):  # hears the last user turn as the starting emotion
        def emotion_scores(self, wav):
            if wav in self.wrong:
                return {e: (0.9 if e == "neutral" else 0.1 / 7) for e in EMOS}
            return super().emotion_scores(wav)

    perc = LateSlip(truth, wrong)
    sc = _score(items, trials, truth, lambda ld: L.listener_answer(ld, perc), "listener")
    full = SB.states(sc, items)
    lenient = SB.states(sc, items, p_scope="span")
    assert (full["P"] == 0).all() and (lenient["P"] == 1).all()
    assert SB.p_turns(items[0]) == [t["turn"] for t in items[0]["turns"] if t["role"] == "user"]
    with pytest.raises(ValueError, match="P-bit scope"):
        SB.p_turns(items[0], "some")
    # span-only probes cannot be scored on the whole trajectory: a clear error
    t, _ = templates
    span_p = PR.build_trials(items, audio, "probe-P", t, trajectory="span")
    trials_span = dict(trials, **{"probe-P": span_p})
    sc2 = _score(items, trials_span, truth, lambda ld: L.listener_answer(ld, perc), "l")
    with pytest.raises(ValueError, match="no P trial for turn"):
        SB.states(sc2, items)
    assert (SB.states(sc2, items, p_scope="span")["P"] == 1).all()


# ------------------------------------------------------------ writer swap
@pytest.fixture(scope="module")
def bank_b(repo_root):
    return ReplyBank.load(repo_root / "templates/study_b/replies_b.yaml")


def test_second_writer_bank_agrees_with_the_lexicon_and_is_balanced(bank_b):
    test_bank_agrees_with_judge_lexicon(bank_b)
    test_bank_lexically_balanced(bank_b)


@pytest.mark.parametrize("family", ["single", "positional"])
def test_writer_swap_rewrites_only_the_replies(bank, bank_b, templates, family):
    from judgeaudit.study_b import writers as WR

    if family == "single":
        items = I.single_items(_pairs(12), bank, ["v0"], seed=3)
    else:
        items = I.positional_items(_dialogues(6), bank, ["v0"], seed=3)
    alt = WR.rewrite(items, bank_b, "templates_b")
    for a, b in zip(items, alt, strict=True):
        assert a["replies"] != b["replies"]
        assert {k: v for k, v in a.items() if k not in ("replies", "reply_bank_sha256",
                                                         "reply_source")} == \
            {k: v for k, v in b.items() if k not in ("replies", "reply_bank_sha256",
                                                     "reply_source")}
        assert b["reply_source"]["writer"] == "templates_b"
    # the same audio and question: the listener is as right under both writers
    audio, truth = _fake_audio(items)
    t, _ = templates
    perc = FakePerception(truth)
    frames = {}
    for name, its in (("templates", items), ("templates_b", alt)):
        tr = PR.build_trials(its, audio, WR.SHARD, t)
        frames[name] = SB.score_trials(tr, _responses(tr, truth, lambda ld: L.listener_answer(
            ld, perc)), "listener", WR.SHARD)
    table = WR.ablation_table(frames["templates"], frames["templates_b"], "templates",
                              "templates_b")
    acc = table[table["row"] == "accuracy"].set_index("writer")["estimate"]
    assert acc["templates"] == acc["templates_b"] == 1.0
    diff = table[table["row"] == "difference"].iloc[0]
    assert diff["writer"] == "templates_b - templates" and diff["estimate"] == 0.0
    assert diff["n_items"] == len(items)


def test_each_item_gets_its_own_voice_when_the_roster_allows():
    """Issue 32: with at least one roster voice per item, every item of a task is
    rendered in its own voice (so the item cluster is the voice cluster); a smaller
    roster leaves the seeded draws with replacement. The roster's first four voices are
    the old 4-voice roster's (the reply roster, replies.dnsmos_voices, is unchanged)."""
    import pytest

    from judgeaudit.datasets.synth.common import make_voices
    from judgeaudit.study_b.items import assign_voices
    from judgeaudit.study_b.tts import roster

    old = make_voices("sb", 4, ["m3", "f2", "m1", "f4"], [0, 8], 7, "study_b")
    assert roster(4, 7) == old
    full = roster(72, 7)
    assert len({v.variant for v in full}) == 12
    assert len({v.speaker for v in full}) == 72
    with pytest.raises(ValueError, match="n_voices=73 exceeds"):
        roster(73, 7)
    voices = sorted(v.speaker for v in roster(50, 7))
    items = [{"item_id": f"it{i:02d}", "voice": voices[0]} for i in range(50)]
    assign_voices(items, voices, 7)
    assert len({it["voice"] for it in items}) == 50  # without replacement
    again = [{"item_id": f"it{i:02d}", "voice": voices[0]} for i in range(50)]
    assert [it["voice"] for it in assign_voices(again, voices, 7)] == \
        [it["voice"] for it in items]  # seeded: the same run, the same voices
    other = [{"item_id": f"it{i:02d}", "voice": voices[0]} for i in range(50)]
    assert [it["voice"] for it in assign_voices(other, voices, 8)] != \
        [it["voice"] for it in items]
    few = [{"item_id": f"it{i:02d}", "voice": "kept"} for i in range(5)]
    assert {it["voice"] for it in assign_voices(few, voices[:4], 7)} == {"kept"}

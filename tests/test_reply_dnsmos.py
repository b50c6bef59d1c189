"""The Study B reply DNSMOS split into a clip plan and shards (issue 36): the same
numbers as scoring every reply in one job, each distinct reply audio scored once."""

import json

import numpy as np
import pytest

from judgeaudit import dnsmos_session
from judgeaudit.study_b import reply_dnsmos as RD
from judgeaudit.study_b.build import reply_quality, reply_voice
from judgeaudit.study_b.tts import EspeakRenderer

SEED = 7


def _items(path, item_ids, replies, family):
    with open(path, "w") as fh:
        for iid, pair in zip(item_ids, replies, strict=True):
            fh.write(json.dumps({"item_id": iid, "family": family, "replies": pair}) + "\n")
    return path


@pytest.mark.parametrize("seconds", [0.5, 4.505, 9.01, 11.2])
def test_n_windows_counts_the_windows_score_runs(seconds, monkeypatch):
    n = int(seconds * 16000)
    calls = []
    sess = dnsmos_session.model().onnx_sess

    class Counting:
        def run(self, *a, **k):
            calls.append(1)
            return sess.run(*a, **k)

    monkeypatch.setattr(dnsmos_session.model(), "onnx_sess", Counting())
    x = 0.1 * np.sin(np.arange(n) / 7.0)
    dnsmos_session.score(x, 16000)
    assert RD.n_windows(n) == len(calls)


def test_assign_shards_balances_windows_longest_first():
    assert RD.assign_shards([5, 1, 1, 4, 3, 2], 2) == [0, 0, 1, 1, 1, 0]  # 8 and 8
    assert RD.assign_shards([3, 3], 5) == [0, 1]
    with pytest.raises(RD.ReplyDnsmosError, match="at least 1"):
        RD.assign_shards([1], 0)


@pytest.fixture
def fake_score(monkeypatch):
    """`dnsmos_session.score` as a cheap function of the samples (the real model costs
    ~0.2 s a window; tests/test_dnsmos_session.py pins the real one): the calls kept."""
    calls = []

    def score(samples, sr=16000):
        x = np.asarray(samples)
        calls.append(x.tobytes())
        return {"ovrl_mos": np.float64(x.sum()), "sig_mos": np.float64(np.abs(x).mean()),
                "bak_mos": np.float64(len(x) / 3.0)}

    monkeypatch.setattr(dnsmos_session, "score", score)
    return calls


def test_plan_scores_each_distinct_clip_once_across_tasks_and_matches_direct_scoring(
        tmp_path, fake_score):
    shared = "Thank you. That sounds hard; let us take it slowly."
    a = _items(tmp_path / "a.jsonl", ["a1", "a2"],
               [[shared, "Here is a short summary."], [shared, "Good news today."]], "single")
    b = _items(tmp_path / "b.jsonl", ["b1"], [["Good news today.", shared]], "conversation")
    plan = RD.plan_clips({"single": a, "conversation": b}, SEED, 4, 3)
    rows = [row for task in ("single", "conversation") for row in plan["replies"][task]]
    assert len(rows) == 6
    # each distinct (text, voice) is one clip; every reply points at its clip
    distinct = {(c["text"], c["voice"]) for c in plan["clips"]}
    assert len(plan["clips"]) == len(distinct) == len({r[3] for r in rows})
    assert len(plan["clips"]) < 6 or len({r[2] for r in rows}) == 3
    shards = [RD.score_shard(plan, s) for s in range(3)]
    assert sum(len(s) for s in shards) == len(plan["clips"])  # no clip scored twice
    assert len(fake_score) == len(set(fake_score)) == len(plan["clips"])
    one = RD.plan_clips({"single": a, "conversation": b}, SEED, 4, 1)
    assert RD.dnsmos_by_reply(plan, shards, "single") == RD.dnsmos_by_reply(
        one, [RD.score_shard(one, 0)], "single")
    # the numbers of rendering and scoring each reply directly, to the bit
    renderer = EspeakRenderer(sample_rate=16000, seed=SEED, n_voices=4, jitter=False)
    got = RD.dnsmos_by_reply(plan, json.loads(json.dumps(shards)), "conversation")
    voice = reply_voice("b1", renderer.voice_ids(), SEED)
    for r, text in enumerate(["Good news today.", shared]):
        x = renderer.render(text, "neutral", voice, -1, f"reply|b1|{r}").samples
        ref = dnsmos_session.score(x.astype("float64"), 16000)
        assert got[("b1", r)] == {"reply_voice": voice, "dnsmos_ovrl": float(ref["ovrl_mos"]),
                                  "dnsmos_sig": float(ref["sig_mos"]),
                                  "dnsmos_bak": float(ref["bak_mos"])}
    # the table from the shards is the table scored in one job
    sharded = reply_quality(b, True, 16000, SEED, 4, dnsmos=got)
    inline = reply_quality(b, True, 16000, SEED, 4)
    assert sharded.to_csv(sep="\t") == inline.to_csv(sep="\t")


def test_a_plan_out_of_date_with_the_renderer_or_the_items_is_an_error(tmp_path):
    a = _items(tmp_path / "a.jsonl", ["a1"], [["One reply.", "Another reply."]], "single")
    plan = RD.plan_clips({"single": a}, SEED, 4, 1)
    plan["clips"][0]["text"] = "Edited since."
    with pytest.raises(RD.ReplyDnsmosError, match=r"reply\|a1\|0 .*plan out of date"):
        RD.score_shard(plan, 0)
    with pytest.raises(RD.ReplyDnsmosError, match="plan has shards 0..0"):
        RD.score_shard(plan, 1)
    with pytest.raises(RD.ReplyDnsmosError, match="in no DNSMOS shard"):
        RD.dnsmos_by_reply(plan, [{}], "single")
    with pytest.raises(RD.ReplyDnsmosError, match="no task 'positional'"):
        RD.dnsmos_by_reply(plan, [{}], "positional")
    (tmp_path / "bad.json").write_text('{"v": 0}')
    with pytest.raises(RD.ReplyDnsmosError, match="bad.json.*field 'v' is 0"):
        RD.read_plan(tmp_path / "bad.json")

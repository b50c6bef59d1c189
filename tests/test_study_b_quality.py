"""The paper's balance check: the LLM reply scorer through the judging engine over
real HTTP (the loopback fake of the OpenAI API), cached, replayable and budgeted;
the balance table flags a gap above the paper's; the DNSMOS reply voice is drawn
per item and shared by R0 and R1."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from judgeaudit.judges.cache import ResponseCache
from judgeaudit.judges.engine import ReplayMiss
from judgeaudit.study_b import metrics as SB
from judgeaudit.study_b import quality as Q
from judgeaudit.study_b.build import reply_voice
from judgeaudit.study_b.protocols import Template
from judgeaudit.testing.fakeserver import FakeProvider

ITEMS = [{"item_id": f"cf{i}", "family": "single",
          "turns": [{"turn": 1, "role": "user", "text": f"I got the results number {i}."}],
          "replies": [f"Noted, here are the details {i}.", f"That is wonderful news {i}!"]}
         for i in range(6)]


def _scores(text: str) -> str:
    """The fake rater: R1-like replies ('wonderful') rate 5 on relevance, else 3."""
    reply = re.search(r'Assistant reply: "([^"]+)"', text).group(1)
    crit = re.search(r"reply of a spoken-dialogue assistant on (\w+)", text).group(1)
    score = 5 if ("wonderful" in reply and crit == "relevance") else 3
    return json.dumps({"score": str(score)})


@pytest.fixture()
def template(repo_root):
    return Template.load(repo_root / "templates/study_b/quality_scorer.txt")


def _spec(srv, **kw):
    return {"provider": "openai", "model": "gpt-4o-mini-2024-07-18", "base_url": srv.url + "/v1",
            "concurrency": 4, "max_attempts": 2, "backoff_base_s": 0.01, "backoff_cap_s": 0.02,
            "timeout_s": 5, **kw}


def test_llm_scorer_over_http_cached_and_replayed(tmp_path, monkeypatch, template):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-scorer")
    with FakeProvider() as srv:
        srv.reply_fn = _scores
        spec = _spec(srv)
        frame = Q.llm_scores(ITEMS, "rater", spec, tmp_path / "cache", template)
        assert srv.violations == []
        n = len(ITEMS) * 2 * len(Q.CRITERIA)
        assert srv.answered == n
        # every request is text only: system + one text part naming the criterion
        assert all([k for k, _ in t["parts"]] == ["text"] for t in srv.traces)
        assert {re.search(r"assistant on (\w+)", t["parts"][0][1]).group(1)
                for t in srv.traces} == set(Q.CRITERIA)
        assert len(frame) == len(ITEMS) * 2 and set(Q.LLM_METRICS) <= set(frame.columns)
        r1 = frame[frame["reply"] == 1]
        assert (r1["llm_relevance"] == 5).all() and (r1["llm_helpfulness"] == 3).all()
        assert (frame["llm_n_invalid"] == 0).all()
        # a rerun pays nothing (the cache answers), and the key never reaches the cache
        again = Q.llm_scores(ITEMS, "rater", spec, tmp_path / "cache", template)
        assert srv.answered == n
        pd.testing.assert_frame_equal(frame, again)
        replayed = Q.llm_scores(ITEMS, "rater", spec, tmp_path / "cache", template, replay=True)
        pd.testing.assert_frame_equal(frame, replayed)
        with ResponseCache(tmp_path / "cache") as cache:
            assert len(cache) == n
        stored = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
        assert stored and not any(b"sk-test-scorer" in p.read_bytes() for p in stored)
    # replay-only on an empty cache: no call, a clear miss
    with pytest.raises((ReplayMiss, Q.ScorerIncomplete)):
        Q.llm_scores(ITEMS, "rater", spec, tmp_path / "empty", template, replay=True)
    # the balance of these scores: relevance |gap| 2.0 > the paper's 0.74 is flagged
    bal = SB.balance(frame.assign(task="single").to_dict("records"), list(Q.LLM_METRICS),
                     n_boot=0, paper_gaps={m: Q.paper_gap(m) for m in Q.LLM_METRICS})
    b = bal.set_index("metric")
    assert b.loc["llm_relevance", "abs_gap"] == pytest.approx(2.0)
    assert bool(b.loc["llm_relevance", "exceeds_paper"]) is True
    assert b.loc["llm_relevance", "paper_gap"] == 0.74
    assert bool(b.loc["llm_helpfulness", "exceeds_paper"]) is False


def test_llm_scorer_budget_stops_and_invalid_answers_are_counted(tmp_path, monkeypatch,
                                                                  template):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-scorer")
    with FakeProvider() as srv:
        srv.reply_fn = lambda text: json.dumps({"score": "9"})  # not on the 1-5 scale
        frame = Q.llm_scores(ITEMS[:1], "rater", _spec(srv), tmp_path / "c1", template)
        assert frame["llm_n_invalid"].tolist() == [4, 4] and frame["llm_relevance"].isna().all()
        srv.reply_fn = _scores
        # 100 + 8 fake tokens per call at 100 USD / Mtok = 0.0108 USD: 0.03 pays 2 or 3
        spec = _spec(srv, concurrency=1, price_in_per_mtok=100.0, price_out_per_mtok=100.0)
        with pytest.raises(Q.ScorerIncomplete, match="budget"):
            Q.llm_scores(ITEMS, "rater", spec, tmp_path / "c2", template, budget_usd=0.03)
        assert srv.answered <= 8 + 3


def test_reply_voice_is_drawn_per_item_and_shared_by_both_replies():
    voices = ["v0", "v1", "v2", "v3"]
    drawn = [reply_voice(f"cf{i}", voices, seed=7) for i in range(200)]
    assert set(drawn) == set(voices)  # several voices in use
    assert drawn == [reply_voice(f"cf{i}", voices, seed=7) for i in range(200)]  # seeded
    counts = pd.Series(drawn).value_counts()
    assert counts.min() > 25  # roughly uniform over the roster


def test_reply_quality_merges_the_scorer_and_the_table_flags_the_paper(tmp_path, monkeypatch,
                                                                       repo_root):
    from judgeaudit.io import write_jsonl_atomic
    from judgeaudit.study_b import render as R
    from judgeaudit.study_b.build import reply_quality

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-scorer")
    path = tmp_path / "items.jsonl"
    write_jsonl_atomic(path, ITEMS)
    with FakeProvider() as srv:
        srv.reply_fn = _scores
        scorer = {"judge": "rater", "spec": _spec(srv), "cache_dir": tmp_path / "cache",
                  "template": repo_root / "templates/study_b/quality_scorer.txt"}
        frame = reply_quality(path, speak=False, sample_rate=16000, seed=1, scorer=scorer)
    assert len(frame) == 2 * len(ITEMS)
    assert {"n_words", "politeness", *Q.LLM_METRICS, "llm_scorer"} <= set(frame.columns)
    bal = SB.balance(frame.to_dict("records"), ["n_words", *Q.LLM_METRICS], n_boot=0,
                     paper_gaps={m: Q.paper_gap(m) for m in Q.LLM_METRICS})
    shown = R.balance_table(bal, tmp_path / "bal").set_index("metric")
    assert shown.loc["llm_relevance", "above paper"] == "yes"
    assert shown.loc["llm_helpfulness", "above paper"] == "no"
    assert shown.loc["n_words", "above paper"] == "-"
    assert "0.41 / 0.74 / 0.51 / 0.69" in (tmp_path / "bal.md").read_text()

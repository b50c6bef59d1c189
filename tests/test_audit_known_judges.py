"""The judge card on judges it never saw (issue 31): `provider: python` judges of
known behaviour and an `openai` judge whose loopback server never answers, audited
end to end on a clone of the shared tiny run.

- `raises`: raises on every call; `mute`: an openai judge whose server never answers
  in time (every call times out). Both: no verdict (`undecided`), the invalid/error
  counts on card.html and in the CLI summary, and a non-zero exit of
  `judgeaudit audit`.
- `gold-flaky`: the gold answer, but 10% of calls raise and 10% return unparseable
  text: not `shortcut` on any protocol (units are scored on valid answers only).
- `copy-before`: copies a reference label only when it comes before the audio, else
  the gold answer; with --no-early-stop not `shortcut` at system, rubric or after
  (the control at each placement is the true reference at that placement), and
  `shortcut` at before, where it does copy.
- the `--out` copy holds everything its links point to, checked in Chromium.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from judgeaudit.testing.fakeserver import FakeProvider

KNOWN = '''
"""Judges of known behaviour for tests/test_audit_known_judges.py."""
import glob
import hashlib
import json

from judgeaudit.judges.request import AudioPart, Request, TextPart

_GOLD = {}
_AUDIO = {}


def _load():
    if _GOLD:
        return
    for path in glob.glob("results/trials/*/*/*.jsonl"):
        with open(path) as fh:
            for line in fh:
                t = json.loads(line)
                req = Request.from_json(t["request"])
                _GOLD[req.content_hash()] = t["gold"]
                audio = [p.sha256 for p in req.parts if isinstance(p, AudioPart)]
                if t["study"] == "A" and len(audio) == 1 and t["request"]["answer"]["key"] == "label":
                    _AUDIO[audio[0]] = t["gold"]


def gold(req):
    """The trial's gold answer (a matched control built by the audit: its clip's)."""
    _load()
    h = req.content_hash()
    if h in _GOLD:
        return _GOLD[h]
    audio = [p.sha256 for p in req.parts if isinstance(p, AudioPart)]
    return _AUDIO[audio[0]]


def _reply(req, answer):
    body = {req.answer.key: answer}
    if req.answer.reasoning:
        body = {"reasoning": "known", **body}
    return json.dumps(body)


def _bucket(req):
    return int(hashlib.sha256(req.content_hash().encode()).hexdigest()[:8], 16) % 10


def raises(loaded):
    raise RuntimeError("this judge always fails")


def gold_flaky(loaded):
    req = loaded.request
    b = _bucket(req)
    if b == 0:
        raise RuntimeError("flaky judge: failed call")
    if b == 1:
        return "I would rather not say."
    return _reply(req, gold(req))


def copy_before(loaded):
    req = loaded.request
    seen_audio = False
    for p in req.parts:
        if isinstance(p, AudioPart):
            seen_audio = True
        elif not seen_audio and p.text.startswith("Reference label: "):
            label = p.text[len("Reference label: "):].rstrip(".")
            if label in req.answer.allowed:
                return _reply(req, label)
    return _reply(req, gold(req))
'''

PY_JUDGES = {"raises": "raises", "gold-flaky": "gold_flaky", "copy-before": "copy_before"}


@pytest.fixture(scope="module")
def audited(tiny_run, tmp_path_factory):
    work = tiny_run.clone(tmp_path_factory.mktemp("known") / "run")
    (work.root / "known_judges.py").write_text(KNOWN)
    env = dict(work.env, OPENAI_API_KEY="sk-test",
               PYTHONPATH=os.pathsep.join([str(work.root / "src"), str(work.root)]))
    # the server sleeps 30 s before any reply; the judge gives up after 0.3 s
    with FakeProvider(latency_s=30.0) as srv:
        panel = {name: {"provider": "python", "model": f"{name}-v1",
                        "function": f"known_judges:{fn}"} for name, fn in PY_JUDGES.items()}
        panel["mute"] = {"provider": "openai", "model": "gpt-audio-2025-08-28",
                         "base_url": srv.url + "/v1", "concurrency": 8, "max_attempts": 1,
                         "timeout_s": 0.3, "price_in_per_mtok": 40.0,
                         "price_out_per_mtok": 80.0}
        overlay = work.root / "known.yaml"
        overlay.write_text(yaml.safe_dump({
            # as in test_audit_workflow: the language task, three derangement seeds
            "audit": {"effect": 0.35, "stages": 3, "task": "language"},
            "study_a": {"seeds": [1, 2, 3], "reference_seeds": [1, 2, 3],
                        "language": {"per_class": 2}},
            "judges": {"panel": panel}}))
        judges = ["raises", "gold-flaky", "mute"]
        res = work.run(*[f"results/audit/{j}/card.json" for j in judges], overlays=[overlay],
                       env=env, timeout=1500)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-6000:]
        # copy-before with --no-early-stop: every probe to its fixed-design size
        fixed = work.root / "fixed.yaml"
        fixed.write_text(yaml.safe_dump({"audit": {"early_stop": False, "reference_panel": []}}))
        res2 = work.run("results/audit/copy-before/card.json", overlays=[overlay, fixed],
                        env=env, timeout=1500)
        assert res2.returncode == 0, res2.stdout[-3000:] + res2.stderr[-6000:]
        mute_requests = len(srv.traces)
        clis = {}
        for j in ("raises", "mute", "gold-flaky"):
            clis[j] = subprocess.run(
                [sys.executable, "-m", "judgeaudit.cli", "audit", "--judge", j, "--configfile",
                 "config.yaml", "tests/tiny_config.yaml", str(overlay), "--cores", "1",
                 "--out", str(work.root / "out" / j)],
                cwd=work.root, env=env, capture_output=True, text=True, timeout=600)
    cards = {j: json.loads((work.root / f"results/audit/{j}/card.json").read_text())
             for j in [*judges, "copy-before"]}
    return work, cards, clis, mute_requests, env, overlay


def _line(cards):
    return "\n".join(
        f"{j} {p} {v['verdict']} {v.get('answers')}: " + "; ".join(
            f"{c['name']} {c['verdict']} {c.get('estimate')} [{c.get('ci_low')}, "
            f"{c.get('ci_high')}] {c.get('reason', '')}" for c in v["contrasts"])
        for j, card in cards.items() for p, v in card["protocols"].items())


@pytest.mark.parametrize("judge", ["raises", "mute"])
def test_no_answer_no_verdict(audited, judge):
    work, cards, clis, mute_requests, *_ = audited
    card = cards[judge]
    print(_line(cards))
    assert not card["decided"]
    for p, v in card["protocols"].items():
        assert v["verdict"] == "undecided", (p, v["verdict"])
        assert "too many invalid answers" in v["statement"]
        assert v["answers"].get("valid", 0) == 0 and v["answers"].get("error", 0) > 0
    # the CLI: a non-zero exit and the counts in its summary
    cli = clis[judge]
    assert cli.returncode == 3, cli.stdout[-2000:] + cli.stderr[-3000:]
    assert re.search(r"blueprint\s+undecided", cli.stdout)
    assert re.search(r"answers: error \d+", cli.stdout)
    assert "no verdict" in cli.stderr
    html = (work.root / "results/audit" / judge / "card.html").read_text()
    assert "No verdict" in html and re.search(r"error \d+", html)
    if judge == "mute":
        # every call went out and timed out; the card counts what was sent
        assert mute_requests > 0 and card["requests_sent"] == mute_requests
        # an undecidable protocol stops at its first look: not the fixed design
        assert card["calls"] < card["fixed_design_calls"]


def test_invalid_answers_make_no_shortcut(audited):
    _, cards, clis, *_ = audited
    card = cards["gold-flaky"]
    print(_line(cards))
    counted: dict[str, int] = {}
    for p, v in card["protocols"].items():
        assert v["verdict"] not in ("shortcut", "protocol-dependent"), (p, v)
        assert 0 < v["answers"].get("valid", 0) < v["calls"]
        for status, n in v["answers"].items():
            counted[status] = counted.get(status, 0) + n
    # failed calls (error) and unparseable replies (invalid_json) are both counted; per
    # protocol a small one may hold only one kind (about 10% each by request hash: the
    # paralinguistic probe's 8 calls miss one kind in ~4 of 10 corpora)
    assert counted.get("error", 0) > 0 and counted.get("invalid_json", 0) > 0, counted
    # the gold judge is right whenever it answers: accuracy 1 with the audio alone
    acc = card["protocols"]["blueprint"]["accuracy"]["audio only"]
    assert acc["estimate"] == 1.0 and acc["chance"] < 0.5
    assert clis["gold-flaky"].returncode in (0, 3)


def test_reference_controls_matched_by_placement(audited):
    _, cards, *_ = audited
    ref = {c["name"]: c for c in cards["copy-before"]["protocols"]["reference"]["contrasts"]}
    print(_line({"copy-before": cards["copy-before"]}))
    for p in ("system", "rubric", "after"):
        assert ref[p]["verdict"] != "shortcut", ref[p]
        assert ref[p]["estimate"] == 0.0  # it ignores references there: no excess
        assert ref[p]["units"] == ref[p]["n_max"]  # --no-early-stop: the fixed design
    assert ref["before"]["verdict"] == "shortcut" and ref["before"]["estimate"] == 1.0
    assert cards["copy-before"]["reference_panel"] == {}


def test_card_copy_travels_in_chromium(audited, tmp_path):
    from browser import check_page, chromium, dump_dom

    work, cards, clis, *_ = audited
    out = work.root / "out" / "gold-flaky"
    html = (out / "card.html").read_text()
    hrefs = re.findall(r"href='([^']+)'", html)
    assert len(hrefs) >= 3 and any(h.startswith("trials/") for h in hrefs)
    for h in hrefs:
        assert (out / h).exists(), h  # every link resolves inside the copy
    # the page states the counts, the bound and the judge's accuracy
    assert "no excess above the bound 0.35" in html and "audio only" in html
    assert re.search(r"error \d+", html) and re.search(r"invalid_json \d+", html)
    if chromium() is None:
        pytest.skip("Debian's `chromium` is not installed (the file checks above ran)")
    res = check_page(out / "card.html", tmp_path)
    assert res["bad_links"] == [] and res["bad_images"] == [] and res["links"] >= 3, res
    dom = dump_dom(out / "card.html")
    assert "judge accuracy" in dom and "no excess above the bound 0.35" in dom
    # as the browser shows them: the invalid counts and the accuracy itself
    assert re.search(r"error \d+", dom) and re.search(r"invalid_json \d+", dom)
    assert "audio only: +1.000" in dom

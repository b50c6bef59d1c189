"""The human listening test: the page built from trial shards, answered in headless
Chromium over the DevTools protocol (clicks, audio playback, the real download), the
downloaded TSV imported into the human-validation table, and the report's limitation."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pandas as pd
import pytest
from browser import DevTools, chromium

from judgeaudit.cli import main as cli
from judgeaudit.human.listening import write_listening_test
from judgeaudit.human.validation import ImportHumanError, import_human, limitation_sentences
from judgeaudit.io import sha256_bytes, write_jsonl_atomic
from judgeaudit.judges.request import AnswerSpec, AudioPart, Request, TextPart
from judgeaudit.testing.fakeserver import tone_wav

EMOTIONS = ("angry", "happy", "neutral", "sad")


def _clip(root: Path, rel: str, freq: float) -> AudioPart:
    data = tone_wav(freq, 0.3)
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return AudioPart(sha256_bytes(data), "wav", rel)


def _build_run(root: Path) -> dict:
    """A run directory with a Study B single-turn pointwise shard (12 items x 2
    renderings), a Study A emotion blueprint shard (8 clips of 4 speakers, two
    conditions) and two judges' responses to the Study B shard."""
    b_trials, gold = [], {}
    spec = AnswerSpec("choice", ("R1", "R2"), reasoning=True)
    for i in range(12):
        for v in (0, 1):
            audio = _clip(root, f"results/conditions/B/single/i{i:02d}_v{v}.wav", 200 + 37 * i + 11 * v)
            text = (f'Transcript of the user\'s turn: "I got the results, item {i}."\n'
                    "R1: That is wonderful news!\nR2: I am so sorry to hear that.\n"
                    'Which reply fits how the user sounds? Reply as {"reasoning": ..., "choice": "R1" or "R2"}.')
            req = Request("You judge replies to a spoken turn.",
                          (TextPart("[Audio: the user's turn]"), audio, TextPart(text)), spec)
            tid = f"b{i:02d}{v}"
            gold[tid] = "R1" if (i + v) % 2 == 0 else "R2"
            b_trials.append({"trial_id": tid, "study": "B", "task": "single",
                             "condition": "pointwise-none", "request": req.to_json(),
                             "gold": gold[tid], "facts": {"item_id": f"item{i:02d}", "rendering": v}})
    write_jsonl_atomic(root / "results/trials/B/single/pointwise-none.jsonl", b_trials)
    for judge, answer in (("listener", lambda t: gold[t]), ("first-slot", lambda t: "R1")):
        write_jsonl_atomic(root / f"results/responses/{judge}/B/single/pointwise-none.jsonl",
                           [{"trial_id": t["trial_id"], "parsed": answer(t["trial_id"]),
                             "status": "valid"} for t in b_trials])
    a_trials = []
    for c in range(8):
        audio = _clip(root, f"data/synth/emotion/c{c}.wav", 300 + 50 * c)
        label = EMOTIONS[c % 4]
        for cond in ("audio_only", "skeleton"):
            parts = [TextPart("Question: which emotion does the speaker express? Allowed labels: "
                              + ", ".join(EMOTIONS) + "."), TextPart("Rubric: judge by the voice.")]
            if cond == "audio_only":
                parts.append(audio)
            req = Request("You are an expert judge of speech recordings.", tuple(parts),
                          AnswerSpec("label", EMOTIONS))
            tid = f"a{c}{cond[:2]}"
            gold[tid] = label
            a_trials.append({"trial_id": tid, "study": "A", "task": "emotion", "condition": cond,
                             "request": req.to_json(), "gold": label,
                             "facts": {"clip_id": f"c{c}", "cluster": f"spk{c // 2}",
                                       "cluster_unit": "speaker"}})
    write_jsonl_atomic(root / "results/trials/A/emotion/blueprint.jsonl", a_trials)
    return gold


@pytest.fixture()
def run(tmp_path):
    root = tmp_path / "run"
    root.mkdir()
    return root, _build_run(root)


def _page_trials(page: Path) -> list[str]:
    import re

    return re.findall(r"data-trial='([^']+)'", page.read_text())


def test_page_holds_requests_not_gold(run):
    root, gold = run
    s = write_listening_test(root, "B", "single", 10, seed=3)
    page = Path(s["path"])
    assert page == root / "results/human/listening_B_single.html"
    text = page.read_text()
    tids = _page_trials(page)
    assert len(tids) == 10 == len(set(tids)) and s["n_items"] == 10  # one trial per item
    assert '"gold"' not in text and "item_id" not in text and "rendering" not in text
    assert text.count("<audio ") == 10 and "data:audio/wav;base64," in text
    # exactly the judge's request text, escaped, and one radio per allowed answer
    assert "R1: That is wonderful news!" in text and "You judge replies" in text
    assert text.count("type='radio'") == 20
    # deterministic for a seed; a different seed samples differently
    assert _page_trials(Path(write_listening_test(root, "B", "single", 10, seed=3)["path"])) == tids
    other = root / "other.html"
    write_listening_test(root, "B", "single", 10, seed=4, out=other)
    assert _page_trials(other) != tids
    # n above the items: second renderings come in, still no more than the shard holds
    assert len(set(_page_trials(Path(write_listening_test(root, "B", "single", 24,
                                                           out=other)["path"])))) == 24
    assert cli(["listening-test", "--study", "B", "--task", "single", "--n", "25",
                "--root", str(root), "--out", str(other)]) == 2


def test_out_path_is_an_html_page_or_refused(run, capsys):
    """`--out lt` writes lt.html (a browser shows a page without the suffix as source
    text); a path with another suffix is refused before anything is written."""
    root, _ = run
    args = ["listening-test", "--study", "B", "--task", "single", "--n", "3", "--root",
            str(root), "--out"]
    assert cli([*args, str(root / "lt")]) == 0
    assert (root / "lt.html").is_file() and not (root / "lt").exists()
    assert str(root / "lt.html") in capsys.readouterr().out
    assert cli([*args, str(root / "page.HTML")]) == 0 and (root / "page.HTML").is_file()
    assert cli([*args, str(root / "lt.txt")]) == 2
    err = capsys.readouterr().err
    assert "lt.txt" in err and "ending in .html" in err and not (root / "lt.txt").exists()


def test_import_rejects_bad_answers(run, tmp_path):
    root, _ = run
    bad = tmp_path / "bad.tsv"
    cols = ["page_id", "rater", "study", "task", "shard", "condition", "item", "trial_id",
            "answer", "plays", "answered_at"]
    bad.write_text("\t".join(cols) + "\n" + "\t".join(
        ["p", "x", "B", "single", "pointwise-none", "", "1", "nope", "R1", "1", ""]) + "\n")
    with pytest.raises(ImportHumanError, match="trial_id 'nope' is not in"):
        import_human(root, [bad])
    bad.write_text("\t".join(cols) + "\n" + "\t".join(
        ["p", "x", "B", "single", "pointwise-none", "", "1", "b000", "R3", "1", ""]) + "\n")
    with pytest.raises(ImportHumanError, match="answer 'R3' not one of R1, R2"):
        import_human(root, [bad])
    bad.write_text("rater\tanswer\nx\tR1\n")
    with pytest.raises(ImportHumanError, match="not a listening-test TSV"):
        import_human(root, [bad])
    assert "No human listening check" in limitation_sentences(root)[0]


ANSWER_JS = """(async function (plan, rater) {
  var items = Array.prototype.slice.call(document.querySelectorAll('li.item'));
  var durations = [];
  for (var li of items) {
    for (var a of li.querySelectorAll('audio')) {
      if (!(a.readyState >= 1)) await new Promise(function (ok, bad) {
        a.addEventListener('loadedmetadata', ok); a.addEventListener('error', bad); });
      durations.push(a.duration);
      a.muted = true; await a.play(); a.pause();
    }
    var want = plan[li.dataset.trial];
    if (want) li.querySelector("input[value='" + want + "']").click();
  }
  document.getElementById('rater').value = rater;
  return {items: items.length, durations: durations,
          status: document.getElementById('status').textContent};
})(%s, %s)"""


async def _answer(page: Path, plan: dict, rater: str, downloads: Path) -> tuple[dict, Path]:
    async with DevTools(downloads) as dt:
        await dt.goto(page.resolve().as_uri())
        info = await dt.js(ANSWER_JS % (json.dumps(plan), json.dumps(rater)))
        tsv = await dt.download("document.getElementById('download').click()")
    return info, tsv


@pytest.mark.skipif(chromium() is None, reason="chromium not installed (apt-get install chromium)")
def test_browser_answers_download_import_and_report(run, tmp_path):
    root, gold = run
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    # Study B, single-turn: 10 items; 7 answered right, 3 wrong
    page_b = Path(write_listening_test(root, "B", "single", 10, seed=1)["path"])
    tids = _page_trials(page_b)
    flip = {"R1": "R2", "R2": "R1"}
    plan_b = {t: (gold[t] if k < 7 else flip[gold[t]]) for k, t in enumerate(sorted(tids))}
    info, tsv_b = asyncio.run(_answer(page_b, plan_b, "rater one", downloads))
    assert info["items"] == 10 and info["status"] == "10 of 10 answered"
    assert len(info["durations"]) == 10 and all(abs(d - 0.3) < 0.02 for d in info["durations"])
    assert tsv_b.name == "listening_B_single_rater_one.tsv"
    rows = list(csv.DictReader(tsv_b.open(), delimiter="\t"))
    assert {r["trial_id"]: r["answer"] for r in rows} == plan_b
    assert all(r["rater"] == "rater one" and int(r["plays"]) >= 1 and r["answered_at"] for r in rows)
    # Study A, emotion (audio_only by default): 6 clips, one wrong, one left unanswered
    page_a = Path(write_listening_test(root, "A", "emotion", 6, seed=2)["path"])
    ta = sorted(_page_trials(page_a))
    assert all(t.endswith("au") for t in ta)  # only the audio_only condition
    plan_a = {t: gold[t] for t in ta[:4]}
    plan_a[ta[4]] = next(e for e in EMOTIONS if e != gold[ta[4]])
    info_a, tsv_a = asyncio.run(_answer(page_a, plan_a, "r2", downloads))
    assert info_a["status"] == "5 of 6 answered"

    assert cli(["import-human", str(tsv_b), str(tsv_a), "--root", str(root)]) == 0
    table = pd.read_csv(root / "results/tables/human_validation.tsv", sep="\t",
                        keep_default_na=False)
    g = table.set_index(["study", "comparison"])
    b = g.loc[("B", "gold")]
    assert (b["estimate"], b["n"], b["n_clusters"], b["cluster_unit"]) == (0.7, 10, 10, "item")
    assert b["ci_low"] < 0.7 < b["ci_high"] and b["method"]
    assert g.loc[("B", "judge listener")]["estimate"] == 0.7  # the listener judge is always right
    assert g.loc[("B", "judge first-slot")]["estimate"] == pytest.approx(
        sum(a == "R1" for a in plan_b.values()) / 10)
    a = g.loc[("A", "gold")]
    assert (a["estimate"], a["n"], a["n_unanswered"], a["cluster_unit"]) == (0.8, 5, 1, "speaker")
    assert a["n_clusters"] == len({f"spk{int(t[1]) // 2}" for t in ta[:5]})
    assert (root / "results/tables/human_validation.md").read_text().startswith("**Human")
    # the report's limitation now states the measured check
    lim = limitation_sentences(root)[0]
    assert "Study B single (pointwise-none): accuracy 0.70 [" in lim
    assert "Study A emotion (blueprint, audio_only): accuracy 0.80 [" in lim
    # ... and the report shows it under Limitations
    from judgeaudit.report.paper import build_paper

    cfg = {"judges": {"active": ["listener"], "panel": {"listener": {"provider": "listener"}}}}
    summary = build_paper([], [], cfg, root=root, trace=False)
    page = (root / "results/report/index.html").read_text()
    assert lim in summary["limitations"]
    assert "Study B single (pointwise-none): accuracy 0.70 [" in page.split("id='limitations'")[1]

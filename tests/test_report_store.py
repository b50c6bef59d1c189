"""The report's trial store (report/cellpages.py): every trial and response once per
task, column-coded, rows referring to them by index runs. Checked from both ends: the
Python codecs undo themselves, and the page's own script (run in headless Chromium)
rebuilds from the written files, for every stored response, exactly the trace record
`provenance.cells.trial_row` made: the request text byte for byte, the audio and its
link, every label shown, the parsed answer, the raw text and the response file, line
and link; every row's references resolve to the row's own trials."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from browser import chromium, eval_js

from judgeaudit.provenance.cells import CellTrace, request_text, trial_row
from judgeaudit.report.cellpages import (
    CELL_JS,
    Store,
    TableData,
    decode_column,
    encode_column,
    expand_strides,
    strides,
)


def test_columns_and_strides_round_trip():
    rng = random.Random(7)
    cases = [[], [5], [3, 3, 3, 3], list(range(100)), [0, 2, 4, 6, 1, 1, 1],
             ["a", "a", "b"], [True, 1, 1.0, 1], [-1, -1, 4, 5, 6, -1],
             [rng.randrange(50) for _ in range(500)]]
    for values in cases:
        enc = encode_column(values)
        got = decode_column(enc)
        assert got == values and [type(v) for v in got] == [type(v) for v in values], values
    assert encode_column(list(range(1000))) == {"d": [0, 1, 1, 999]}
    assert encode_column(["x"] * 50) == {"r": ["x", 50]}
    for ix in ([], [4], [9, 3], list(range(10, 40, 3)) + [7, 7, 100],
               [rng.randrange(300) for _ in range(400)]):
        flat = strides(ix)
        assert expand_strides(flat) == sorted(ix)
        assert len(flat) % 3 == 0
    # a seed's every-third trials and a contrast's interleaved conditions are a few runs
    assert strides(range(0, 3000, 3)) == [0, 1000, 3]
    assert len(strides([*range(100, 200), *range(0, 100)])) == 3


def _trial(i: int, kind: str) -> dict:
    """A trial record as the trial rules write it (kinds: classification with a
    reference label, pairwise with two clips, a text-only Study B probe)."""
    parts = [{"kind": "text", "text": "Which emotion does the speaker express? Reply as "
                                      "{\"label\": \"<answer>\"}."}]
    facts: dict = {"corpus": "synth_emotion", "seed": 12292430019025074367, "k": 8}
    if kind == "reference":
        label = ["angry", "sad", "calm"][i % 3]
        parts += [{"kind": "text", "text": f"Reference label: {label}.\n(åäö – “quoted”)"},
                  {"kind": "audio", "format": "wav", "sha256": "ab" * 32,
                   "path": f"data/synth_emotion/clips/c{i % 4}.wav"}]
        facts.update(reference_label=label, placement="before", block_label=None,
                     wrong_label="", clip_id=f"c{i % 4}")
    elif kind == "pair":
        parts += [{"kind": "text", "text": "Clip A:"},
                  {"kind": "audio", "path": f"data/x/a{i}.wav", "sha256": "cd" * 32},
                  {"kind": "text", "text": "Clip B:"},
                  {"kind": "audio", "path": f"/abs/elsewhere/b{i}.wav", "sha256": None},
                  {"kind": "text", "text": ""}]
        facts.update(order="AB" if i % 2 else "BA", swap=bool(i % 2), rendering_a=0)
    else:
        facts.update(stated_label="angry", cue="none", probe="O")
    system = None if kind == "probe" else ("You are an expert judge.\r\nReply with JSON."
                                           if i % 5 else "")
    return {"trial_id": f"{kind}{i:04d}", "task": "emotion" if kind != "probe" else
            "conversation", "condition": kind, "gold": "angry", "facts": facts,
            "request": {"system": system, "parts": parts}}


def _response(t: dict, judge: str, line: int) -> dict:
    return {"judge": judge, "status": "valid" if line % 7 else "invalid",
            "parsed": None if line % 7 == 0 else "sad", "raw_text":
            "{\"label\": \"sad\"}\n<b>&</b>" if line % 3 else None,
            "model_version": "m-1", "_file": f"results/responses/{judge}/{t['task']}.jsonl",
            "_line": line}


def _rows():
    trials = ([_trial(i, "reference") for i in range(30)] + [_trial(i, "pair")
              for i in range(12)] + [_trial(i, "probe") for i in range(9)])
    rows = []
    by_id = {t["trial_id"]: t for t in trials}
    for j, judge in enumerate(("j-a", "j-b")):
        rows += [trial_row(t, _response(t, judge, 1 + n + 100 * j))
                 for n, t in enumerate(trials)]
    return rows, by_id


def _trace(trials: list[dict]) -> CellTrace:
    chain = [{"output": "results/tables/t.tsv", "rule": "r1", "code": {"git_commit": "a" * 40},
              "params": {"p": 1}, "inputs": [{"followed": True, "path": "results/m.tsv",
                                              "sha256": "e" * 64}]}]
    return CellTrace(table="t", row_index=0, row_key="k", column="estimate", value=0.5,
                     row={}, chain=chain, config={"config_sha256": "f" * 64, "config_path":
                                                  "c.yaml", "params": {"r1": {"p": 1}}},
                     recipe="mod:fn", trials=trials)


@pytest.mark.skipif(chromium() is None, reason="Debian's `chromium` is not installed")
def test_the_page_script_rebuilds_every_trace_record_from_the_store(tmp_path):
    root = tmp_path / "run"
    out = root / "results" / "report"
    (out / "cells").mkdir(parents=True)
    rows, by_id = _rows()
    store = Store(root, out)
    data = TableData(store)
    rng = random.Random(3)
    picks = [rows, rows[::-1], rng.sample(rows, 40), rows[5:9] + rows[60:70]]
    for i, trials in enumerate(picks):
        data.add_row(i, [_trace(trials)])
    data.add_row(len(picks), None, error="trace failed: boom")
    store.write()
    (out / "cells" / "t.data.js").write_text(data.to_js("t"), encoding="utf-8")
    files = sorted((out / "cells" / "store").glob("*.js"))
    assert {f.stem for f in files} == {"emotion", "conversation", "_rules"}
    got = eval_js(tmp_path, "(function () { var out = {}; Object.keys(STORE).forEach("
                  "function (t) { out[t] = []; for (var k = 0; k < STORE[t].n_responses; "
                  "k++) out[t].push(CELLS.record(t, k)); }); out.rows = {}; "
                  "Object.keys(CELL_DATA.rows).forEach(function (i) { var r = "
                  "CELL_DATA.rows[i]; out.rows[i] = r.error ? r.error : CELLS.refs(r); });"
                  "return out; })()",
                  [*files, out / "cells" / "t.data.js"], inline=CELL_JS)
    cells = out / "cells"
    records = {}
    for r in rows:
        task = r["task"]
        rec = next(x for x in got[task] if x["trial_id"] == r["trial_id"]
                   and x["judge"] == r["judge"])
        records[(r["judge"], r["trial_id"])] = rec
        # the request as sent, byte for byte
        assert rec["request_text"] == request_text(by_id[r["trial_id"]]["request"])
        assert rec["request_text"] == r["request_text"]
        assert rec["audio"] == r["audio"]
        for path, link in zip(rec["audio"], rec["audio_links"], strict=True):
            want = Path(path) if os.path.isabs(path) else root / path
            assert os.path.normpath(cells / link) == os.path.normpath(want), (path, link)
        assert rec["labels_shown"] == r["labels_shown"]
        assert rec["facts"] == {k: json.dumps(v, ensure_ascii=False)
                                for k, v in r["facts"].items()}
        assert rec["parsed"] == ("" if r["parsed"] is None else r["parsed"])
        assert rec["raw_text"] == (r["raw_text"] or "")
        assert (rec["status"], rec["model_version"], rec["gold"], rec["condition"]) == (
            r["status"], r["model_version"], r["gold"], r["condition"])
        assert (rec["response_file"], rec["response_line"]) == (r["response_file"],
                                                                r["response_line"])
        assert os.path.normpath(cells / rec["response_link"]) == os.path.normpath(
            root / r["response_file"])
    # the labels a reviewer needs are there: reference label, slot order
    assert any(x["labels_shown"].get("reference_label") == "calm" for x in got["emotion"])
    assert {x["labels_shown"].get("order") for x in got["emotion"]} >= {"AB", "BA"}
    assert len(got["emotion"]) + len(got["conversation"]) == len(rows)  # each once
    # every row's references resolve to exactly that row's trials
    for i, trials in enumerate(picks):
        refs = got["rows"][str(i)]
        assert len(refs) == len(trials)
        seen = sorted((got[t][k]["judge"], got[t][k]["trial_id"]) for t, k in refs)
        assert seen == sorted((r["judge"], r["trial_id"]) for r in trials)
    assert got["rows"][str(len(picks))] == "trace failed: boom"

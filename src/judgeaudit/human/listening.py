"""A browser listening test over the trials the judges get.

`write_listening_test(root, study, task, n)` samples `n` trials of one shard
(`results/trials/<study>/<task>/<shard>.jsonl`; Study B defaults to the native
pointwise shard `pointwise-none`, Study A to the `blueprint` shard's `audio_only`
condition) and writes ONE self-contained HTML page: every item shows, in order,
exactly the parts of the judge's request (its system text, its text parts, its
audio as an embedded WAV player) and one radio button per allowed answer; the
listener's answers download as a TSV (`judgeaudit import-human` reads it back).

Gold answers, trial facts and the shard's other trials are never written into the
page: only trial ids (hashes) and requests. Sampling takes one trial per item first
(items in a seeded random order), a second trial of an item only when `n` exceeds
the number of items, so answers are spread over as many sampling units as possible.
"""

from __future__ import annotations

import base64
import html
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judgeaudit.io import read_jsonl, sha256_file, write_text_atomic
from judgeaudit.judges.request import Request, load_request_audio

DEFAULT_SHARD = {"A": ("blueprint", "audio_only"), "B": ("pointwise-none", None)}
TSV_COLUMNS = ("page_id", "rater", "study", "task", "shard", "condition", "item",
               "trial_id", "answer", "plays", "answered_at")


class ListeningTestError(ValueError):
    pass


def shard_path(root: str | Path, study: str, task: str, shard: str) -> Path:
    return Path(root) / "results" / "trials" / study / task / f"{shard}.jsonl"


def cluster_of(trial: dict) -> str:
    """The trial's sampling unit: Study A's `facts.cluster` (speaker or clip), Study
    B's `facts.item_id` (the counterfactual item), else the trial itself."""
    facts = trial.get("facts") or {}
    for key in ("cluster", "item_id", "clip_id"):
        if facts.get(key) not in (None, ""):
            return str(facts[key])
    return str(trial["trial_id"])


def _item_key(trial: dict) -> str:
    facts = trial.get("facts") or {}
    return str(facts.get("item_id") or facts.get("clip_id") or trial["trial_id"])


def select_trials(trials: Sequence[dict], n: int, seed: int) -> list[dict]:
    """`n` trials, one per item first (seeded), presented in a seeded random order."""
    rng = random.Random(seed)
    by_item: dict[str, list[dict]] = {}
    for t in sorted(trials, key=lambda t: str(t["trial_id"])):
        by_item.setdefault(_item_key(t), []).append(t)
    items = sorted(by_item)
    rng.shuffle(items)
    for key in items:
        rng.shuffle(by_item[key])
    chosen: list[dict] = []
    depth = 0
    while len(chosen) < n:
        took = False
        for key in items:
            if depth < len(by_item[key]) and len(chosen) < n:
                chosen.append(by_item[key][depth])
                took = True
        if not took:
            break
        depth += 1
    rng.shuffle(chosen)
    return chosen


def load_shard(root: str | Path, study: str, task: str, shard: str,
               condition: str | None) -> tuple[Path, list[dict]]:
    path = shard_path(root, study, task, shard)
    if not path.is_file():
        raise ListeningTestError(f"{path}: no such trial shard (build the study's trials "
                                 f"first, e.g. `snakemake study_{study.lower()}`)")
    rows = read_jsonl(path)
    if condition is not None:
        rows = [r for r in rows if r.get("condition") == condition]
        if not rows:
            raise ListeningTestError(f"{path}: no trial with condition {condition!r}")
    return path, rows


def _part_html(part, loaded) -> str:
    if part.kind == "text":
        return f"<pre class='text'>{html.escape(part.text)}</pre>"
    data = base64.b64encode(loaded.audio_bytes(part)).decode("ascii")
    mime = {"wav": "audio/wav", "mp3": "audio/mpeg", "flac": "audio/flac"}.get(
        part.format, f"audio/{part.format}")
    return f"<audio controls preload='auto' src='data:{mime};base64,{data}'></audio>"


def _item_html(no: int, trial: dict, request: Request, root: Path) -> str:
    try:
        loaded = load_request_audio(request, root)
    except ValueError as exc:
        raise ListeningTestError(f"trial {trial['trial_id']}: {exc}") from exc
    out = [f"<li class='item' id='q{no}' data-trial='{html.escape(str(trial['trial_id']))}' "
           f"data-item='{no}'>"]
    if request.system:
        out.append("<details><summary>Instructions the judge is given (system text)"
                   f"</summary><pre class='system'>{html.escape(request.system)}</pre></details>")
    out += [_part_html(p, loaded) for p in request.parts]
    out.append(f"<fieldset><legend>Your answer ({html.escape(request.answer.key)})</legend>")
    for value in request.answer.allowed:
        v = html.escape(value)
        out.append(f"<label><input type='radio' name='a{no}' value='{v}'> {v}</label>")
    out.append("</fieldset></li>")
    return "\n".join(out)


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Listening test: Study %(study)s, %(task)s</title>
<style>
body{font-family:sans-serif;max-width:58em;margin:2em auto;padding:0 1em;line-height:1.4}
li.item{border:1px solid #ccc;border-radius:6px;padding:.8em;margin:1em 0}
pre{white-space:pre-wrap;background:#f6f6f6;padding:.5em;margin:.4em 0}
audio{display:block;margin:.4em 0;width:100%%}
fieldset{border:0;padding:0} label{margin-right:1.5em}
#bar{position:sticky;bottom:0;background:#fff;border-top:1px solid #ccc;padding:.6em 0}
</style></head><body>
<h1>Listening test: Study %(study)s, task %(task)s</h1>
<p>Each item below is exactly what an audio-language-model judge was given: the
instructions (folded), the text, and the recording(s). Listen to every recording and
pick the answer you think is right. When you have answered every item, press
<b>Download answers</b> and send the downloaded file back. Nothing is sent anywhere
by this page.</p>
<p><label>Your name or code: <input id="rater" autocomplete="off"></label></p>
<script type="application/json" id="manifest">%(manifest)s</script>
<ol id="items">
%(items)s
</ol>
<div id="bar"><button id="download" type="button">Download answers (TSV)</button>
<span id="status"></span></div>
<script>
(function () {
  var M = JSON.parse(document.getElementById("manifest").textContent);
  var items = Array.prototype.slice.call(document.querySelectorAll("li.item"));
  var state = {};
  items.forEach(function (li) {
    var s = state[li.dataset.item] = {plays: 0, answer: "", at: ""};
    li.querySelectorAll("audio").forEach(function (a) {
      a.addEventListener("play", function () { s.plays += 1; });
    });
    li.querySelectorAll("input[type=radio]").forEach(function (r) {
      r.addEventListener("change", function () {
        s.answer = r.value; s.at = new Date().toISOString(); status();
      });
    });
  });
  function answered() {
    return items.filter(function (li) { return state[li.dataset.item].answer; }).length;
  }
  function status() {
    document.getElementById("status").textContent =
      answered() + " of " + items.length + " answered";
  }
  function clean(v) { return String(v).replace(/[\\t\\r\\n]+/g, " "); }
  document.getElementById("download").addEventListener("click", function () {
    var rater = clean(document.getElementById("rater").value.trim() || "anonymous");
    var cols = %(columns)s;
    var lines = [cols.join("\\t")];
    items.forEach(function (li) {
      var s = state[li.dataset.item];
      lines.push([M.page_id, rater, M.study, M.task, M.shard, M.condition || "",
                  li.dataset.item, li.dataset.trial, s.answer, s.plays, s.at]
                 .map(clean).join("\\t"));
    });
    var blob = new Blob([lines.join("\\n") + "\\n"], {type: "text/tab-separated-values"});
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = "listening_" + M.study + "_" + M.task + "_" +
      rater.replace(/[^A-Za-z0-9_-]+/g, "_") + ".tsv";
    document.body.appendChild(a); a.click(); a.remove();
    status();
  });
  status();
})();
</script>
</body></html>
"""


def page_path(root: str | Path, study: str, task: str, out: str | Path | None) -> Path:
    """Where the page goes: `out` as given when it ends in `.html`, `out` + `.html` when
    it has no suffix (a browser shows a page without the suffix as source text), the
    default `results/human/listening_<study>_<task>.html` when None; any other suffix
    is refused."""
    if out is None:
        return Path(root) / "results" / "human" / f"listening_{study}_{task}.html"
    out = Path(out)
    if out.suffix.lower() == ".html":
        return out
    if out.suffix == "" and out.name not in ("", ".", ".."):
        return out.with_name(out.name + ".html")
    raise ListeningTestError(f"--out {out}: the listening test is an HTML page; give a path "
                             f"ending in .html (e.g. {out.with_suffix('.html')})")


def write_listening_test(root: str | Path, study: str, task: str, n: int,
                         out: str | Path | None = None, shard: str | None = None,
                         condition: str | None = None, seed: int = 0) -> dict[str, Any]:
    """Write the page; returns {"path", "n", "n_items", "shard", "condition", "page_id"}."""
    root = Path(root)
    if study not in DEFAULT_SHARD:
        raise ListeningTestError(f"study must be A or B, not {study!r}")
    if n < 1:
        raise ListeningTestError(f"--n must be at least 1, not {n}")
    out = page_path(root, study, task, out)
    d_shard, d_cond = DEFAULT_SHARD[study]
    if shard is None:
        shard, condition = d_shard, (condition if condition is not None else d_cond)
    path, rows = load_shard(root, study, task, shard, condition)
    if n > len(rows):
        raise ListeningTestError(f"{path}: --n {n} but the shard has only {len(rows)} "
                                 f"trial(s){f' of condition {condition}' if condition else ''}")
    chosen = select_trials(rows, n, seed)
    shard_sha = sha256_file(path)
    page_id = f"{study}-{task}-{shard}-{shard_sha[:12]}-s{seed}-n{n}"
    manifest = {"page_id": page_id, "study": study, "task": task, "shard": shard,
                "condition": condition, "seed": seed, "n": n, "shard_sha256": shard_sha}
    items = []
    for no, trial in enumerate(chosen, 1):
        try:
            request = Request.from_json(trial["request"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ListeningTestError(f"{path}: trial {trial.get('trial_id')}: bad request "
                                     f"({exc})") from exc
        items.append(_item_html(no, trial, request, root))
    text = PAGE % {"study": html.escape(study), "task": html.escape(task),
                   "manifest": json.dumps(manifest, sort_keys=True).replace("</", "<\\/"),
                   "items": "\n".join(items), "columns": json.dumps(list(TSV_COLUMNS))}
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, text)
    return {"path": str(out), "n": n, "n_items": len({_item_key(t) for t in chosen}),
            "shard": shard, "condition": condition, "page_id": page_id}

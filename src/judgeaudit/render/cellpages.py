"""Trace pages of the report, one per table (never one file per row).

`cells/<table>.html` is a static page listing every row of the table with each number,
its recomputation and the check (ids `r<row>` and `r<row>.<column>`, so a link
`cells/<table>.html#r12.estimate` lands on the number); `cells/<table>.data.js` holds
what is behind each row once: the rule chains and config params (deduplicated), the
trials (their request as sent, the labels shown, the gold answer) and the judges'
responses (parsed answer, raw text, the response file and line). The page's script
shows the selected row's trials from that file, so the page stays small however many
trials a table has.
"""

from __future__ import annotations

import html
import json
import math
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.io import read_jsonl, write_text_atomic
from judgeaudit.provenance.cells import (
    CellError,
    key_columns,
    row_key,
    trace_row,
    value_columns,
)
from judgeaudit.render.layout import states_as_text

# trial facts that are labels shown to the judge (or its slot order)
LABEL_FACTS = ("reference_label", "block_label", "wrong_label", "placement", "order",
               "better_slot_ab", "slot_order", "reply_order", "cue", "protocol", "probe")
AUDIO_SUFFIXES = (".wav", ".flac", ".mp3", ".ogg")


def _e(x: Any) -> str:
    return html.escape(str(x))


def _num(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e9:
            return str(int(v))
        return f"{v:.4g}" if abs(v) < 1e-3 else f"{v:.4f}"
    return str(v)


class TrialIndex:
    """trial_id -> the trial record as written by the trial rules (request messages,
    audio references, facts), read once from `results/trials/**.jsonl`."""

    def __init__(self, root: Path):
        self.root = root
        self._by_id: dict[str, tuple[dict, str]] | None = None

    def get(self, trial_id: str) -> tuple[dict, str] | None:
        if self._by_id is None:
            self._by_id = {}
            for f in sorted((self.root / "results" / "trials").rglob("*.jsonl")):
                rel = f.relative_to(self.root).as_posix()
                for line, t in enumerate(read_jsonl(f), 1):
                    self._by_id.setdefault(t["trial_id"], (t, f"{rel}:{line}"))
        return self._by_id.get(trial_id)


def request_text(trial: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The request as sent (the trial's `request`: the system text, then every part in
    order, an audio part as `[audio: <path>]`), and the audio paths it sends."""
    req = trial.get("request") or {}
    lines: list[str] = []
    audio: list[str] = []
    if req.get("system"):
        lines += ["[system]", str(req["system"]), "[user]"]
    for p in req.get("parts") or []:
        if p.get("kind") == "audio":
            path = str(p.get("path") or p.get("sha256") or "?")
            audio.append(path)
            lines.append(f"[audio: {path}]")
        else:
            lines.append(str(p.get("text", "")))
    ans = req.get("answer") or {}
    if ans:
        lines.append(f"[answer: JSON key {ans.get('key')!r}, one of {ans.get('allowed')}"
                     f"{', with reasoning' if ans.get('reasoning') else ''}]")
    return "\n".join(lines), audio


def _labels(facts: Mapping[str, Any]) -> dict[str, Any]:
    return {k: facts[k] for k in LABEL_FACTS if k in facts and facts[k] not in (None, "")}


class TableData:
    """Everything behind one table's rows, deduplicated (written as <table>.data.js)."""

    def __init__(self, root: Path, out: Path, trials: TrialIndex):
        self.root, self.out, self.index = root, out, trials
        self.chains: dict[str, int] = {}
        self.chain_list: list[Any] = []
        self.texts: dict[str, int] = {}
        self.text_list: list[str] = []
        self.trials: dict[str, dict] = {}
        self.responses: dict[str, dict] = {}
        self.rows: dict[int, dict] = {}

    def _intern(self, table: dict, lst: list, obj: Any) -> int:
        key = json.dumps(obj, sort_keys=True, default=str)
        if key not in table:
            table[key] = len(lst)
            lst.append(obj)
        return table[key]

    def _text(self, s: str) -> int:
        return self._intern(self.texts, self.text_list, s)

    def _rel(self, path: str) -> str:
        """A repo-relative path as a link from the cell pages (in <out>/cells/)."""
        return os.path.relpath(self.root / path, self.out / "cells")

    def add_trial(self, r: Mapping[str, Any]) -> str:
        """The trial once per table: its request as sent, the audio sent, the labels
        shown, the gold answer (from the trace's fields: request_text, audio,
        labels_shown; else from the trial shard itself)."""
        tid = str(r["trial_id"])
        if tid not in self.trials:
            facts = dict(r.get("facts") or {})
            req = r.get("request_text") if isinstance(r.get("request_text"), str) else None
            audio = [str(a.get("path") if isinstance(a, Mapping) else a)
                     for a in (r.get("audio") or [])]
            where = ""
            if req is None:  # an older trace: read the trial shard
                rec = self.index.get(tid)
                if rec:
                    trial, where = rec
                    facts = facts or dict(trial.get("facts") or {})
                    req, more = request_text(trial)
                    audio += [a for a in more if a not in audio]
            labels = dict(r.get("labels_shown") or _labels(facts))
            path = where.rsplit(":", 1)[0] if where else ""
            self.trials[tid] = {
                "task": r.get("task"), "condition": r.get("condition"),
                "gold": r.get("gold"), "labels": labels,
                "facts": self._text(json.dumps(facts, sort_keys=True, default=str)),
                "request": self._text(req) if req else None,
                "audio": [[a, self._rel(a)] for a in audio],
                "file": [where, self._rel(path) if path else ""]}
        return tid

    def add_response(self, r: Mapping[str, Any]) -> str:
        tid = self.add_trial(r)
        key = f"{r.get('judge')}|{tid}"
        if key not in self.responses:
            src = str(r.get("response_source") or "")
            path = str(r.get("response_file") or (src.rsplit(":", 1)[0] if src else ""))
            self.responses[key] = {
                "trial": tid, "judge": r.get("judge"), "status": r.get("status"),
                "parsed": r.get("parsed"), "raw": self._text(str(r.get("raw_text") or "")),
                "request_key": r.get("request_key"), "model_version": r.get("model_version"),
                "source": [src, self._rel(path) if path else ""]}
        return key

    def add_row(self, index: int, key: str, traces: Sequence[Any] | None, error: str = "",
                stats: Counter | None = None) -> None:
        if not traces:
            self.rows[index] = {"key": key, "error": error}
            return
        t0 = traces[0]
        for t in traces:
            if stats is not None:
                stats["numbers"] += 1
                stats["matched" if t.match else "mismatched" if t.match is False
                      else "not_recomputed"] += 1
        self.rows[index] = {
            "key": key, "recipe": t0.recipe,
            "chain": self._intern(self.chains, self.chain_list,
                                  {"chain": t0.chain, "config": t0.config}),
            "cells": [[t.column, t.value, t.recomputed, t.match, t.note] for t in traces],
            "trials": [self.add_response(r) for r in t0.trials]}

    def to_js(self, stem: str) -> str:
        data = {"table": stem, "chains": self.chain_list, "texts": self.text_list,
                "trials": self.trials, "responses": self.responses,
                "rows": {str(k): v for k, v in self.rows.items()}}
        return ("window.CELL_DATA = " + json.dumps(data, sort_keys=True, default=str,
                                                   separators=(",", ":")) + ";\n")


def _check(match: Any) -> str:
    return ("<span class='ok'>match</span>" if match is True else
            "<span class='bad'>MISMATCH</span>" if match is False else "not recomputed")


def write_table_pages(stem: str, tsv: str, frame: pd.DataFrame, root: Path, out: Path,
                      trials: TrialIndex, stats: Counter, style: str, back: str,
                      trace: bool = True) -> str:
    """Write `cells/<stem>.html` and `cells/<stem>.data.js`; return the page path
    relative to `out`."""
    cell_dir = out / "cells"
    data = TableData(root, out, trials)
    keys = key_columns(frame)
    shown = states_as_text(frame)
    rows_html = []
    for i in range(len(frame)):
        key = row_key(shown, i, keys)
        traces = None
        if trace:
            try:
                traces = trace_row(tsv, i, root=root, frame=frame)
            except (CellError, KeyError, ValueError, StopIteration) as exc:
                stats["trace_errors"] += 1
                data.add_row(i, key, None, error=f"trace failed: {exc}")
        if traces:
            data.add_row(i, key, traces, stats=stats)
            nums = "".join(
                f"<tr id='r{i}.{_e(t.column)}'><td class='k'>{_e(t.column)}</td>"
                f"<td>{_e(_num(t.value))}</td><td>{_e(_num(t.recomputed))}</td>"
                f"<td class='k'>{_check(t.match)}{(' ' + _e(t.note)) if t.note else ''}"
                f"</td></tr>" for t in traces)
            n_trials = len(traces[0].trials)
        else:
            err = data.rows.get(i, {}).get("error", "not traced")
            nums = "".join(f"<tr id='r{i}.{_e(c)}'><td class='k'>{_e(c)}</td>"
                           f"<td>{_e(_num(frame.at[i, c]))}</td><td>-</td>"
                           f"<td class='k bad'>{_e(err)}</td></tr>"
                           for c in value_columns(frame))
            if not trace:
                data.add_row(i, key, None, error="not traced")
            n_trials = 0
        rows_html.append(
            f"<section class='row' id='r{i}'><h3>row {i}: <code>{_e(key)}</code> "
            f"<a class='show' href='#r{i}'>show its {n_trials} trials</a></h3>"
            f"<table class='nums'><tr><th class='k'>column</th><th>value</th>"
            f"<th>recomputed</th><th class='k'>check</th></tr>{nums}</table>"
            f"<div class='detail' data-row='{i}'></div></section>")
    write_text_atomic(cell_dir / f"{stem}.data.js", data.to_js(stem))
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>trace: {_e(stem)}"
            f"</title><style>{style}{CELL_STYLE}</style></head><body>"
            f"<p class='meta'><a href='{_e(back)}'>back to the report</a> · table "
            f"<a href='{_e(os.path.relpath(root / tsv, cell_dir))}'><code>{_e(tsv)}</code></a>"
            f" · from the shell: <code>judgeaudit trace {_e(tsv)} --row &lt;row&gt; --column "
            "&lt;column&gt;</code></p>"
            f"<h1>Trace of {_e(stem)} ({len(frame)} rows)</h1>"
            "<p>Each row lists its numbers and their recomputation from the raw judge "
            "responses. Open a row (or follow a link from the report) to see its rule "
            "chain, the config values that shaped it and, per trial, the request as sent, "
            "the audio, every label shown to the judge, the gold answer, the parsed answer "
            "and the raw response with its file and line.</p>"
            + "\n".join(rows_html)
            + f"<script src='{_e(stem)}.data.js'></script><script>{CELL_JS}</script>"
            "</body></html>\n")
    write_text_atomic(cell_dir / f"{stem}.html", page)
    return f"cells/{stem}.html"


CELL_STYLE = """
section.row{border-top:1px solid #ddd;padding:.2em 0} section.row h3{margin:.4em 0}
section.row.sel{background:#fffbe6} tr.sel td{background:#ffe9a8}
a.show{font:12px system-ui,sans-serif;margin-left:1em}
.trial{border:1px solid #e4e4e4;margin:.4em 0;padding:.3em .6em;font:12px system-ui,sans-serif}
.trial pre{white-space:pre-wrap;max-height:none}
.trial dl{display:grid;grid-template-columns:10em 1fr;margin:.2em 0}
.trial dt{color:#666} .trial dd{margin:0}
"""

CELL_JS = r"""
(function () {
  var D = window.CELL_DATA || {rows: {}};
  function esc(s) { return String(s === null || s === undefined ? "" : s)
    .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); }
  function link(pair) { return pair && pair[1] ? "<a href='" + esc(pair[1]) + "'>" +
    esc(pair[0]) + "</a>" : esc(pair ? pair[0] : ""); }
  function trialHtml(key) {
    var r = D.responses[key], t = D.trials[r.trial], h = "<div class='trial'><dl>";
    function row(k, v) { h += "<dt>" + esc(k) + "</dt><dd>" + v + "</dd>"; }
    row("trial", esc(r.trial) + " (" + esc(t.task) + " / " + esc(t.condition) + ")");
    row("judge", esc(r.judge) + (r.model_version ? " · " + esc(r.model_version) : ""));
    row("gold", esc(t.gold));
    var labs = Object.keys(t.labels || {});
    row("labels shown", labs.length ? labs.map(function (k) {
      return esc(k) + " = <b>" + esc(t.labels[k]) + "</b>"; }).join(" · ") : "none");
    row("parsed answer", "<b>" + esc(r.parsed) + "</b> (" + esc(r.status) + ")");
    row("audio", (t.audio || []).map(function (a) { return link(a); }).join("<br>") || "none");
    row("raw response", "<code>" + esc(D.texts[r.raw]) + "</code>");
    row("response line", link(r.source) + " · cache key <code>" + esc(r.request_key) +
        "</code>");
    if (t.file && t.file[0]) row("trial line", link(t.file));
    h += "</dl>";
    if (t.request !== null && t.request !== undefined)
      h += "<details open><summary>request as sent</summary><pre>" +
           esc(D.texts[t.request]) + "</pre></details>";
    h += "<details><summary>all trial facts</summary><pre>" + esc(D.texts[t.facts]) +
         "</pre></details></div>";
    return h;
  }
  function show(i, col) {
    var row = D.rows[i], box = document.querySelector(".detail[data-row='" + i + "']");
    if (!row || !box) return;
    document.querySelectorAll(".sel").forEach(function (e) { e.classList.remove("sel"); });
    box.parentNode.classList.add("sel");
    if (col) { var c = document.getElementById("r" + i + "." + col);
               if (c) c.classList.add("sel"); }
    if (box.dataset.done) return;
    box.dataset.done = "1";
    var h = "";
    if (row.error) { box.innerHTML = "<p class='bad'>" + esc(row.error) + "</p>"; return; }
    var ch = D.chains[row.chain];
    if (row.recipe) h += "<p>Recomputed with <code>" + esc(row.recipe) + "</code> from the " +
                        row.trials.length + " trials and responses below.</p>";
    h += "<details><summary>rule chain and config</summary><pre>";
    ch.chain.forEach(function (n) {
      h += esc(n.output + " <- rule " + n.rule + " (commit " +
               String(n.code.git_commit).slice(0, 10) + (n.code.git_dirty ? " dirty" : "") +
               ")") + "\n";
      n.inputs.forEach(function (x) { h += esc("    " + (x.followed ? ">" : " ") + " " +
                                               x.path + "  sha256 " +
                                               String(x.sha256 || "").slice(0, 16)) + "\n"; });
    });
    h += "\nconfig " + esc(ch.config.config_sha256) + " (" + esc(ch.config.config_path) +
         ")\n";
    Object.keys(ch.config.params || {}).forEach(function (k) {
      h += esc(k + ": " + JSON.stringify(ch.config.params[k])) + "\n"; });
    h += "</pre></details>";
    var shown = row.trials.slice(0, 200);
    h += "<h4>Trials and responses (" + row.trials.length + ")</h4>";
    shown.forEach(function (k) { h += trialHtml(k); });
    if (row.trials.length > shown.length) {
      h += "<p><button class='more'>show the other " + (row.trials.length - shown.length) +
           "</button></p>";
    }
    box.innerHTML = h;
    var more = box.querySelector("button.more");
    if (more) more.onclick = function () {
      more.parentNode.outerHTML = row.trials.slice(200).map(trialHtml).join(""); };
  }
  function route() {
    var m = /^#r(\d+)(?:\.(.+))?$/.exec(decodeURIComponent(location.hash));
    if (m) { show(m[1], m[2]);
             var el = document.getElementById(location.hash.slice(1));
             if (el) el.scrollIntoView(); }
  }
  window.addEventListener("hashchange", route);
  route();
})();
"""

__all__ = ["TrialIndex", "request_text", "write_table_pages"]

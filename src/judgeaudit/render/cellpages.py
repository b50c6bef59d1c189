"""Trace pages of the report, one per table (never one file per row).

`cells/<table>.html` is a static page listing every row of the table with each number,
its recomputation and the check (ids `r<row>` and `r<row>.<column>`, so a link
`cells/<table>.html#r12.estimate` lands on the number); `cells/<table>.data.js` holds
what is behind each row: its rule chain (nodes shared by the rows stored once) and
config params, and which responses it was computed from. The trials and responses
themselves are stored once for the whole report, one file per study task
(`cells/store/<task>.js`: the request as sent, its parts interned so a text
shared by many trials is stored once, the audio sent, the labels shown, the gold
answer; per judge the parsed answer, the raw text and the response file and line),
and loaded by the page's script when a row is opened.
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


def number_text(v: Any, digits: int = 4) -> str:
    """A table value as printed: '-' for missing, integers bare, else `digits` places."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e9:
            return str(int(v))
        return f"{v:.{digits}g}" if abs(v) < 1e-3 else f"{v:.{digits}f}"
    return str(v)


def _num(v: Any) -> str:
    return number_text(v, 4)


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


def _intern(index: dict, items: list, obj: Any) -> int:
    key = json.dumps(obj, sort_keys=True, default=str) if not isinstance(obj, str) else obj
    got = index.get(key)
    if got is None:
        got = index[key] = len(items)
        items.append(obj)
    return got


class _TaskStore:
    """One study task's trials and responses, with interned strings."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._texts: dict[str, int] = {}
        self.trials: list[list[Any]] = []
        self._trials: dict[str, int] = {}
        self.responses: list[list[Any]] = []
        self._responses: dict[str, int] = {}

    def t(self, s: Any) -> int:
        return _intern(self._texts, self.texts, "" if s is None else str(s))


class Store:
    """Every trial and response the report's traces show, once, split per study task."""

    def __init__(self, root: Path, out: Path, trials: TrialIndex):
        self.root, self.out, self.index = root, out, trials
        self.tasks: dict[str, _TaskStore] = {}

    def _rel(self, path: str) -> str:
        return os.path.relpath(self.root / path, self.out / "cells")

    def _task(self, r: Mapping[str, Any]) -> tuple[str, _TaskStore]:
        name = str(r.get("task") or "other").replace("/", "_")  # tasks name their study
        return name, self.tasks.setdefault(name, _TaskStore())

    def _trial(self, ts: _TaskStore, r: Mapping[str, Any]) -> int:
        tid = str(r["trial_id"])
        if tid in ts._trials:
            return ts._trials[tid]
        facts = dict(r.get("facts") or {})
        parts = r.get("request_parts")
        system = r.get("request_system")
        audio = [str(a.get("path") if isinstance(a, Mapping) else a)
                 for a in (r.get("audio") or [])]
        if parts is None:  # a trace without the request: read the trial shard
            rec = self.index.get(tid)
            req = (rec[0].get("request") or {}) if rec else {}
            parts, system = req.get("parts") or [], req.get("system")
            facts = facts or dict((rec[0] if rec else {}).get("facts") or {})
        enc = []
        for p in parts:
            if p.get("kind") == "audio":
                path = str(p.get("path") or p.get("sha256") or "?")
                if path not in audio:
                    audio.append(path)
                enc.append([1, ts.t(path)])
            else:
                enc.append([0, ts.t(p.get("text", ""))])
        labels = dict(r.get("labels_shown") or _labels(facts))
        ts._trials[tid] = len(ts.trials)
        ts.trials.append([
            ts.t(tid), ts.t(r.get("condition")), ts.t(r.get("gold")),
            [[ts.t(k), ts.t(v)] for k, v in sorted(labels.items())],
            None if system is None else ts.t(system), enc,
            [[ts.t(a), ts.t(self._rel(a))] for a in audio],
            [[ts.t(k), ts.t(json.dumps(v, default=str))] for k, v in sorted(facts.items())]])
        return ts._trials[tid]

    def add(self, r: Mapping[str, Any]) -> list[Any]:
        """Store one trace trial row; returns its reference [task, response index]."""
        name, ts = self._task(r)
        key = f"{r.get('judge')}|{r['trial_id']}"
        if key not in ts._responses:
            trial = self._trial(ts, r)
            src = str(r.get("response_source") or "")
            path = str(r.get("response_file") or (src.rsplit(":", 1)[0] if src else ""))
            line = r.get("response_line") or (src.rsplit(":", 1)[1] if ":" in src else "")
            ts._responses[key] = len(ts.responses)
            ts.responses.append([trial, ts.t(r.get("judge")), ts.t(r.get("status")),
                                 ts.t(r.get("parsed")), ts.t(r.get("raw_text")),
                                 ts.t(path), ts.t(self._rel(path) if path else ""),
                                 line, ts.t(r.get("model_version"))])
        return [name, ts._responses[key]]

    def write(self) -> int:
        """Write cells/store/<task>.js; returns the bytes written."""
        total = 0
        for name, ts in sorted(self.tasks.items()):
            text = (f"(window.STORE = window.STORE || {{}})[{json.dumps(name)}] = "
                    + json.dumps({"texts": ts.texts, "trials": ts.trials,
                                  "responses": ts.responses}, separators=(",", ":"),
                                 default=str) + ";\n")
            write_text_atomic(self.out / "cells" / "store" / f"{name}.js", text)
            total += len(text.encode("utf-8"))
        return total


def _runs(refs: Sequence[list[Any]]) -> list[list[Any]]:
    """[[task, i], ...] as [[task, [[start, length], ...]], ...] (runs of consecutive
    response indices, in order): a row's thousands of references in a few numbers."""
    out: list[list[Any]] = []
    for task, i in refs:
        if not out or out[-1][0] != task:
            out.append([task, []])
        runs = out[-1][1]
        if runs and runs[-1][0] + runs[-1][1] == i:
            runs[-1][1] += 1
        else:
            runs.append([i, 1])
    return out


class TableData:
    """What is behind one table's rows (written as <table>.data.js): rule chains as
    lists of shared nodes, and per row its cells and response references."""

    def __init__(self, store: Store):
        self.store = store
        self.nodes: list[Any] = []
        self._nodes: dict[str, int] = {}
        self.configs: list[Any] = []
        self._configs: dict[str, int] = {}
        self.notes: list[str] = []
        self._notes: dict[str, int] = {}
        self.rows: dict[int, dict] = {}

    def add_row(self, index: int, key: str, traces: Sequence[Any] | None, error: str = "",
                stats: Counter | None = None) -> None:
        if not traces:
            self.rows[index] = {"key": key, "error": error}
            return
        t0 = traces[0]
        if stats is not None:
            for t in traces:
                stats["numbers"] += 1
                stats["matched" if t.match else "mismatched" if t.match is False
                      else "not_recomputed"] += 1
        self.rows[index] = {
            "key": key, "recipe": t0.recipe,
            "chain": [_intern(self._nodes, self.nodes, n) for n in t0.chain],
            "config": _intern(self._configs, self.configs, t0.config),
            "trials": _runs([self.store.add(r) for r in t0.trials])}

    def to_js(self, stem: str) -> str:
        data = {"table": stem, "nodes": self.nodes, "configs": self.configs,
                "rows": {str(k): v for k, v in self.rows.items()}}
        return ("window.CELL_DATA = " + json.dumps(data, sort_keys=True, default=str,
                                                   separators=(",", ":")) + ";\n")


def _check(match: Any) -> str:
    return ("<td class=ok>match" if match is True else
            "<td class=bad>MISMATCH" if match is False else "<td>not recomputed")


def write_table_pages(stem: str, tsv: str, frame: pd.DataFrame, root: Path, out: Path,
                      store: Store, stats: Counter, style: str, back: str,
                      trace: bool = True, banner: str = "") -> str:
    """Write `cells/<stem>.html` and `cells/<stem>.data.js` (its trials go to `store`);
    return the page path relative to `out`. `banner`: a notice printed under the title
    (e.g. that rows are a SIMULATION OF THE PUBLISHED FIGURES)."""
    cell_dir = out / "cells"
    data = TableData(store)
    keys = key_columns(frame)
    shown = states_as_text(frame)
    rows_html = []
    for i in range(len(frame)):
        key = row_key(shown, i, keys)
        traces = None
        if trace:
            try:
                traces = trace_row(tsv, i, root=root, frame=frame)
            except (CellError, KeyError, ValueError, StopIteration, OSError) as exc:
                stats["trace_errors"] += 1
                data.add_row(i, key, None, error=f"trace failed: {exc}")
        if traces:
            data.add_row(i, key, traces, stats=stats)
            notes = sorted({t.note for t in traces if t.note})
            nums = "".join(
                f"<tr id='r{i}.{_e(t.column)}'><td class=k>{_e(t.column)}<td>"
                f"{_e(_num(t.value))}<td>{_e(_num(t.recomputed))}{_check(t.match)}</tr>"
                for t in traces)
            note = "".join(f"<p class=meta>{_e(n)}</p>" for n in notes)
            n_trials = len(traces[0].trials)
        else:
            err = data.rows.get(i, {}).get("error", "not traced")
            if not trace:
                data.add_row(i, key, None, error="not traced")
            nums = "".join(f"<tr id='r{i}.{_e(c)}'><td class=k>{_e(c)}<td>"
                           f"{_e(_num(frame.at[i, c]))}<td>-<td class=bad>not traced</tr>"
                           for c in value_columns(frame))
            note = f"<p class=bad>{_e(err)}</p>"
            n_trials = 0
        show = (f" <a class=show href='#r{i}'>show its {n_trials} trials</a>" if n_trials
                else "")
        rows_html.append(
            f"<section class=row id='r{i}'><h3>row {i}: <code>{_e(key)}</code>{show}</h3>"
            f"{note}<table class=nums><tr><th class=k>column<th>value<th>recomputed"
            f"<th class=k>check</tr>{nums}</table><div class=detail data-row='{i}'></div>"
            "</section>")
    write_text_atomic(cell_dir / f"{stem}.data.js", data.to_js(stem))
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>trace: {_e(stem)}"
            f"</title><style>{style}{CELL_STYLE}</style></head><body>"
            f"<p class='meta'><a href='{_e(back)}'>back to the report</a> · table "
            f"<a href='{_e(os.path.relpath(root / tsv, cell_dir))}'><code>{_e(tsv)}</code></a>"
            f" · from the shell: <code>judgeaudit trace {_e(tsv)} --row &lt;row&gt; --column "
            "&lt;column&gt;</code></p>"
            f"<h1>Trace of {_e(stem)} ({len(frame)} rows)</h1>"
            + (f"<p class='bad'><b>{_e(banner)}.</b></p>" if banner else "")
            + "<p>Each row lists its numbers and their recomputation from the raw judge "
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
  window.STORE = window.STORE || {};
  function esc(s) { return String(s === null || s === undefined ? "" : s)
    .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); }
  function need(tasks, done) {
    var todo = tasks.filter(function (t) { return !window.STORE[t]; });
    if (!todo.length) { done(); return; }
    var left = todo.length;
    todo.forEach(function (t) {
      var s = document.createElement("script");
      s.src = "store/" + t + ".js";
      s.onload = s.onerror = function () { if (--left === 0) done(); };
      document.head.appendChild(s);
    });
  }
  function requestText(S, t) {
    var out = [];
    if (t[4] !== null) { out.push("[system]"); out.push(S.texts[t[4]]); out.push("[user]"); }
    t[5].forEach(function (p) {
      out.push(p[0] ? "[audio: " + S.texts[p[1]] + "]" : S.texts[p[1]]); });
    return out.join("\n");
  }
  function trialHtml(ref) {
    var S = window.STORE[ref[0]];
    if (!S) return "<p class='bad'>trial store " + esc(ref[0]) + " not found</p>";
    var r = S.responses[ref[1]], t = S.trials[r[0]], T = S.texts, h = "<div class='trial'><dl>";
    function row(k, v) { h += "<dt>" + esc(k) + "</dt><dd>" + v + "</dd>"; }
    function link(a, b) { return b ? "<a href='" + esc(T[b]) + "'>" + esc(T[a]) + "</a>"
                                   : esc(T[a]); }
    row("trial", esc(T[t[0]]) + " (" + esc(ref[0]) + " / " + esc(T[t[1]]) + ")");
    row("judge", esc(T[r[1]]) + (T[r[8]] ? " · " + esc(T[r[8]]) : ""));
    row("gold", esc(T[t[2]]));
    row("labels shown", t[3].length ? t[3].map(function (kv) {
      return esc(T[kv[0]]) + " = <b>" + esc(T[kv[1]]) + "</b>"; }).join(" · ") : "none");
    row("parsed answer", "<b>" + esc(T[r[3]]) + "</b> (" + esc(T[r[2]]) + ")");
    row("audio sent", t[6].map(function (a) { return link(a[0], a[1]); }).join("<br>") ||
        "none");
    row("raw response", "<code>" + esc(T[r[4]]) + "</code>");
    row("response line", link(r[5], r[6]) + (r[7] !== "" ? ", line " + esc(r[7]) : ""));
    h += "</dl><details open><summary>request as sent</summary><pre>" +
         esc(requestText(S, t)) + "</pre></details>";
    h += "<details><summary>all trial facts</summary><pre>" + t[7].map(function (kv) {
      return esc(T[kv[0]] + ": " + T[kv[1]]); }).join("\n") + "</pre></details></div>";
    return h;
  }
  function refs(row) {
    if (row._refs) return row._refs;
    var out = [];
    row.trials.forEach(function (g) {
      g[1].forEach(function (run) {
        for (var k = 0; k < run[1]; k++) out.push([g[0], run[0] + k]); });
    });
    row._refs = out;
    return out;
  }
  function render(i, box) {
    var row = D.rows[i], h = "", all = refs(row);
    if (row.recipe) h += "<p>Recomputed with <code>" + esc(row.recipe) + "</code> from the " +
                        all.length + " trials and responses below.</p>";
    h += "<details><summary>rule chain and config</summary><pre>";
    row.chain.forEach(function (k) {
      var n = D.nodes[k];
      h += esc(n.output + " <- rule " + n.rule + " (commit " +
               String((n.code || {}).git_commit).slice(0, 10) +
               ((n.code || {}).git_dirty ? " dirty" : "") + ")") + "\n";
      (n.inputs || []).forEach(function (x) {
        h += esc("    " + (x.followed ? ">" : " ") + " " + x.path + "  sha256 " +
                 String(x.sha256 || "").slice(0, 16)) + "\n"; });
    });
    var cfg = D.configs[row.config] || {};
    h += "\nconfig " + esc(cfg.config_sha256) + " (" + esc(cfg.config_path) + ")\n";
    Object.keys(cfg.params || {}).forEach(function (k) {
      h += esc(k + ": " + JSON.stringify(cfg.params[k])) + "\n"; });
    h += "</pre></details>";
    var shown = all.slice(0, 200);
    h += "<h4>Trials and responses (" + all.length + ")</h4>";
    shown.forEach(function (k) { h += trialHtml(k); });
    if (all.length > shown.length)
      h += "<p><button class='more'>show the other " + (all.length - shown.length) +
           "</button></p>";
    box.innerHTML = h;
    var more = box.querySelector("button.more");
    if (more) more.onclick = function () {
      more.parentNode.outerHTML = all.slice(200).map(trialHtml).join(""); };
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
    if (row.error) { box.innerHTML = "<p class='bad'>" + esc(row.error) + "</p>"; return; }
    var tasks = {};
    row.trials.forEach(function (g) { tasks[g[0]] = 1; });
    need(Object.keys(tasks), function () { render(i, box); });
  }
  function route() {
    var m = /^#r(\d+)(?:\.(.+))?$/.exec(decodeURIComponent(location.hash));
    if (m) { show(m[1], m[2]);
             var el = document.getElementById("r" + m[1]);  // the row's heading first
             if (el) el.scrollIntoView(); }
  }
  window.addEventListener("hashchange", route);
  route();
})();
"""

__all__ = ["Store", "TrialIndex", "request_text", "write_table_pages"]

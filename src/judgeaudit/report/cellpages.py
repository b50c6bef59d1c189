"""Trace pages of the report, one per table (never one file per row).

`cells/<table>.html` is a static page: one grid row per table row (id `r<row>`), one
cell per number (id `r<row>.<column>`, so a link `cells/<table>.html#r12.estimate`
lands on the number), coloured by its check against the recomputation from the raw
trials and responses. `cells/<table>.data.js` holds what is behind each row: its
recipe, its rule chain and config (indices into `cells/store/_rules.js`, where every
rule node, config and params block of the report is stored once), and which
responses it was computed from (indices into the trial store, as arithmetic runs).

The trials and responses themselves are stored once for the whole report, one file
per study task (`cells/store/<task>.js`), column-wise: every distinct string (a
prompt part, an audio path, a label, a raw answer) once in `texts`, each column
either a plain list or run-length coded (of its values or of their differences).
Per trial: its id, condition, gold answer, the system text and the user parts in
order (a text part by its text's index, an audio part by its path's index, negated
and minus one), its facts (one column per fact name); the labels shown are the facts
named in `label_keys`. Per response: its trial, judge, model version, status, the
parsed answer, the raw text and the response file and line. The page's script
rebuilds each trial's request text exactly as `provenance.cells.request_text` writes
it (tests/test_report_store.py checks it byte for byte in Chromium) and links the
audio clips and the response file relative to `root` (the workflow directory, as
seen from `cells/`).
"""

from __future__ import annotations

import html
import json
import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.io import write_text_atomic
from judgeaudit.provenance import RECORD_SUFFIX, tracestore
from judgeaudit.provenance.cells import (
    LABEL_FACTS,
    CellError,
    key_columns,
    read_table,
    trace_row,
    value_columns,
)
from judgeaudit.report.audio import AudioCopies
from judgeaudit.report.layout import STATE_COLUMNS, state_text, states_as_text

RULES_FILE = "_rules"  # cells/store/_rules.js: the rule nodes and configs, once
JSON_SEP = (",", ":")


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
    s = number_text(v, 4)
    return s if s != "" else "-"


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=JSON_SEP, ensure_ascii=False, default=str)


# ------------------------------------------------------------------ column codec
def _rle(values: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if out and out[-2] == v and type(out[-2]) is type(v):
            out[-1] += 1
        else:
            out += [v, 1]
    return out


def encode_column(values: Sequence[Any]) -> Any:
    """The shortest of: the plain list, {"r": run-length pairs of the values} and (for
    integers) {"d": run-length pairs of the differences, the first from 0}, flat as
    [value, count, value, count, ...]. `decode_column` (and the page's `col`) undo it."""
    values = list(values)
    best, size = values, len(_dumps(values))
    cands = [{"r": _rle(values)}]
    if values and all(type(v) is int for v in values):
        cands.append({"d": _rle([b - a for a, b in zip([0, *values[:-1]], values, strict=True)])})
    for c in cands:
        n = len(_dumps(c))
        if n < size:
            best, size = c, n
    return best


def decode_column(c: Any) -> list[Any]:
    if isinstance(c, list):
        return c
    flat, out, acc = c.get("r", c.get("d")), [], 0
    for v, n in zip(flat[::2], flat[1::2], strict=True):
        for _ in range(n):
            if "d" in c:
                acc += v
                out.append(acc)
            else:
                out.append(v)
    return out


def strides(indices: Iterable[int]) -> list[int]:
    """Sorted indices as flat arithmetic runs [start, count, step, ...]: a row's
    thousands of references in a few numbers (`expand_strides` undoes it)."""
    out: list[int] = []
    for i in sorted(indices):
        if out:
            start, count, step = out[-3:]
            if count == 1:
                out[-2:] = [2, i - start]
                continue
            if i == start + count * step:
                out[-2] += 1
                continue
        out += [i, 1, 1]
    return out


def expand_strides(flat: Sequence[int]) -> list[int]:
    return [s + k * st for s, n, st in zip(flat[::3], flat[1::3], flat[2::3],
                                                      strict=True)
            for k in range(n)]


# ------------------------------------------------------------------ the trial store
class _TaskStore:
    """One study task's trials and responses, column-wise, strings interned."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._texts: dict[str, int] = {}
        self.links: dict[str, str] = {}
        self.play: dict[str, str] = {}  # audio path's text index -> its copy in the report
        self.trials: dict[str, list[Any]] = {k: [] for k in (
            "id", "condition", "gold", "system", "parts")}
        self.facts: list[dict[str, int]] = []
        self._trials: dict[str, int] = {}
        self.responses: dict[str, list[Any]] = {k: [] for k in (
            "trial", "judge", "model", "status", "parsed", "raw", "file", "line")}
        self._responses: dict[str, int] = {}

    def t(self, s: Any) -> int:
        s = "" if s is None else str(s)
        got = self._texts.get(s)
        if got is None:
            got = self._texts[s] = len(self.texts)
            self.texts.append(s)
        return got

    def to_json(self, root_rel: str) -> dict[str, Any]:
        keys = sorted({k for f in self.facts for k in f})
        trials = {k: encode_column(v) for k, v in self.trials.items() if k != "parts"}
        trials["parts"] = self.trials["parts"]
        trials["facts"] = [encode_column([f.get(k, -1) for f in self.facts]) for k in keys]
        return {"v": 2, "root": root_rel, "links": self.links, "play": self.play,
                "texts": self.texts,
                "label_keys": list(LABEL_FACTS), "fact_keys": keys,
                "n_trials": len(self.facts), "trials": trials,
                "n_responses": len(self.responses["trial"]),
                "responses": {k: encode_column(v) for k, v in self.responses.items()}}


class Rules:
    """Every rule node and config behind the report's rows, once (cells/store/_rules.js):
    a node's code block and a config's per-rule params are interned in `objs`."""

    def __init__(self, root: Path, cell_dir: Path):
        self.root, self.cell_dir = root, cell_dir
        self.objs: list[Any] = []
        self._objs: dict[str, int] = {}
        self.nodes: list[Any] = []
        self._nodes: dict[str, int] = {}
        self.configs: list[Any] = []
        self._configs: dict[str, int] = {}

    def _obj(self, obj: Any) -> int:
        return _intern(self._objs, self.objs, obj)

    def node(self, n: Mapping[str, Any]) -> int:
        key = json.dumps(n, sort_keys=True, default=str)
        got = self._nodes.get(key)
        if got is None:
            out = str(n.get("output") or "")
            rec = Path(out + RECORD_SUFFIX)
            got = self._nodes[key] = len(self.nodes)
            self.nodes.append({
                "output": out, "rule": n.get("rule"), "code": self._obj(n.get("code") or {}),
                "params": self._obj(n.get("params") or {}),
                "prov": (rec.as_posix() if (self.root / rec).is_file() else ""),
                "inputs": [[1 if i.get("followed") else 0, i.get("path"), i.get("sha256")]
                           for i in n.get("inputs") or []]})
        return got

    def config(self, c: Mapping[str, Any]) -> int:
        key = json.dumps(c, sort_keys=True, default=str)
        got = self._configs.get(key)
        if got is None:
            got = self._configs[key] = len(self.configs)
            self.configs.append({
                "config_path": c.get("config_path"), "config_sha256": c.get("config_sha256"),
                "params": {k: self._obj(v) for k, v in sorted((c.get("params") or {}).items())}})
        return got

    def to_js(self) -> str:
        return ("window.RULES = " + _dumps({"objs": self.objs, "nodes": self.nodes,
                                            "configs": self.configs}) + ";\n")


def _intern(index: dict, items: list, obj: Any) -> int:
    key = json.dumps(obj, sort_keys=True, default=str)
    got = index.get(key)
    if got is None:
        got = index[key] = len(items)
        items.append(obj)
    return got


class Store:
    """Every trial and response the report's traces show, once, split per study task
    (`provenance.cells.trial_row` records in), and the rule nodes behind them."""

    def __init__(self, root: Path, out: Path):
        self.root, self.out = Path(root), Path(out)
        self.cell_dir = self.out / "cells"
        self.root_rel = Path(os.path.relpath(os.path.abspath(self.root),
                                             os.path.abspath(self.cell_dir))).as_posix()
        self.tasks: dict[str, _TaskStore] = {}
        self.rules = Rules(self.root, self.cell_dir)
        self._linked: dict[str, str | None] = {}
        self.audio = AudioCopies(self.root, self.out)
        self.audio_stats: dict[str, Any] = {}

    def _link(self, ts: _TaskStore, path: str) -> int:
        """Intern `path`; record its link when `root/path` does not give it."""
        i = ts.t(path)
        if path not in self._linked:
            target = Path(path) if os.path.isabs(path) else self.root / path
            rel = Path(os.path.relpath(os.path.abspath(target), os.path.abspath(self.cell_dir))).as_posix()
            self._linked[path] = None if rel == f"{self.root_rel}/{path}" else rel
        if self._linked[path] is not None:
            ts.links[str(i)] = self._linked[path]
        return i

    def _trial(self, ts: _TaskStore, r: Mapping[str, Any]) -> int:
        tid = str(r["trial_id"])
        # a judge limited in audio inputs got the trial's alternate layout (its own
        # request and facts): one stored trial per (trial, layout) sent
        key = f"{tid}|{r.get('layout') or ''}"
        got = ts._trials.get(key)
        if got is not None:
            return got
        enc = []
        for p in r.get("request_parts") or []:
            if p.get("kind") == "audio":
                i = self._link(ts, str(p.get("path")))
                copy = self.audio.add(str(p.get("path")), p.get("sha256"))
                if copy:
                    ts.play[str(i)] = f"../{copy}"  # as seen from cells/
                enc.append(-1 - i)
            else:
                enc.append(ts.t(p.get("text", "")))
        system = r.get("request_system")
        got = ts._trials[key] = len(ts.facts)
        T = ts.trials
        T["id"].append(tid)
        T["condition"].append(ts.t(r.get("condition")))
        T["gold"].append(ts.t(r.get("gold")))
        T["system"].append(ts.t(system) if system else -1)
        T["parts"].append(enc)
        ts.facts.append({str(k): ts.t(json.dumps(v, default=str, ensure_ascii=False))
                         for k, v in (r.get("facts") or {}).items()})
        return got

    def add(self, r: Mapping[str, Any]) -> tuple[str, int]:
        """Store one trace trial row (`provenance.cells.trial_row`); returns its
        reference (task, response index)."""
        name = str(r.get("task") or "other").replace("/", "_")  # tasks name their study
        ts = self.tasks.setdefault(name, _TaskStore())
        key = f"{r.get('judge')}|{r['trial_id']}"
        got = ts._responses.get(key)
        if got is None:
            R = ts.responses
            got = ts._responses[key] = len(R["trial"])
            R["trial"].append(self._trial(ts, r))
            R["judge"].append(ts.t(r.get("judge")))
            R["model"].append(ts.t(r.get("model_version")))
            R["status"].append(ts.t(r.get("status")))
            R["parsed"].append(ts.t(r.get("parsed")))
            R["raw"].append(ts.t(r.get("raw_text")))
            path = r.get("response_file")
            R["file"].append(self._link(ts, str(path)) if path else -1)
            R["line"].append(int(r.get("response_line") or 0))
        return name, got

    def write(self) -> int:
        """Write cells/store/<task>.js and cells/store/_rules.js; returns the bytes."""
        total = 0
        files = {name: (f"(window.STORE = window.STORE || {{}})[{json.dumps(name)}] = "
                        + _dumps(ts.to_json(self.root_rel)) + ";\n")
                 for name, ts in sorted(self.tasks.items())}
        files[RULES_FILE] = self.rules.to_js()
        for name, text in files.items():
            write_text_atomic(self.cell_dir / "store" / f"{name}.js", text)
            total += len(text.encode("utf-8"))
        self.audio_stats = self.audio.write()
        return total + self.audio_stats["bytes"]


# ------------------------------------------------------------------ one table
class TableData:
    """What is behind one table's rows (written as <table>.data.js): per row its
    recipe, rule chain and config (indices into the report's `Rules`) and its
    responses (per task, flat arithmetic runs of response indices)."""

    def __init__(self, store: Store):
        self.store = store
        self.recipes: list[Any] = []
        self._recipes: dict[str, int] = {}
        self.chains: list[Any] = []
        self._chains: dict[str, int] = {}
        self.rows: dict[int, dict] = {}

    def add_row(self, index: int, traces: Sequence[Any] | None, error: str = "") -> None:
        if not traces:
            self.rows[index] = {"error": error}
            return
        t0 = traces[0]
        rules = self.store.rules
        refs: dict[str, list[int]] = {}
        for r in t0.trials:
            task, i = self.store.add(r)
            refs.setdefault(task, []).append(i)
        self.rows[index] = {
            "recipe": _intern(self._recipes, self.recipes, t0.recipe),
            "chain": _intern(self._chains, self.chains, [rules.node(n) for n in t0.chain]),
            "config": rules.config(t0.config),
            "trials": [[task, strides(ix)] for task, ix in refs.items()]}

    def to_js(self, stem: str) -> str:
        data = {"table": stem, "recipes": self.recipes, "chains": self.chains,
                "rows": {str(k): v for k, v in self.rows.items()}}
        return "window.CELL_DATA = " + _dumps(data) + ";\n"


# what a row's trace may fail with (the row's page says so; the report goes on)
TRACE_ERRORS = (CellError, KeyError, ValueError, StopIteration, OSError)


class TraceFailed(str):
    """A row whose trace failed: the error's text (str(exc))."""


def trace_table(tsv: str, root: Path) -> list:
    """Every row's cell traces of one table, in row order (a row whose trace fails:
    a TraceFailed with the error's text). The work of `write_table_pages`, run apart
    from it so each table is traced in its own job (rule `report_trace`,
    `write_traces`); the pages written from it are the same bytes."""
    frame = read_table(root / tsv)
    out: list = []
    for i in range(len(frame)):
        try:
            out.append(trace_row(tsv, i, root=root, frame=frame))
        except TRACE_ERRORS as exc:
            out.append(TraceFailed(str(exc)))
    return out


def write_traces(tsv: str, path: str | os.PathLike, root: Path = Path(".")) -> list:
    """`trace_table(tsv, root)` written to `path` (compact: each distinct value once,
    compressed; `provenance.tracestore`), atomically: the input of `read_traces` in
    the report job."""
    traces = trace_table(tsv, root)
    tracestore.write(path, traces)
    return traces


def encode_cited_audio(traces: Sequence[Any], root: Path = Path("."), order: str = "") -> int:
    """Encode into the report's audio store every clip the pages of `traces` will
    play (the first trace's trials of each row, as `_TableData.add_row` reads them);
    returns how many were encoded (0 when the store holds them all). `order`: the
    job's own walking order (its table), see `AudioCopies.fill_store`."""
    copies = AudioCopies(root, root)
    walked: set[int] = set()
    for row in traces:
        if isinstance(row, TraceFailed) or not row:
            continue
        # rows of one selection hold the same trials list (shared by the trace's memo
        # and tracestore's interning): its clips are added once
        if id(row[0].trials) in walked:
            continue
        walked.add(id(row[0].trials))
        for r in row[0].trials:
            for p in r.get("request_parts") or []:
                if p.get("kind") == "audio":
                    copies.add(str(p.get("path")), p.get("sha256"))
    return copies.fill_store(order)


def read_traces(path: str | os.PathLike) -> list:
    """A table's traces as `write_traces` wrote them (the report's own workflow output,
    so unpickling it runs no foreign code)."""
    return tracestore.read(path)


_CHECK = {False: "bad", None: "nr"}


def _cell(i: int, column: str, t: Any, frame: pd.DataFrame) -> str:
    """One number of the grid: the printed value, coloured by its check; the
    recomputed value beside it wherever it prints differently."""
    ident = f"id='r{i}.{_e(column)}'"
    text = state_text if column in STATE_COLUMNS else _num  # states keep leading zeros
    if t is None:
        return f"<td {ident} class=nt>{_e(text(frame.at[i, column]))}"
    v, r = text(t.value), text(t.recomputed)
    cls = f" class={_CHECK[t.match]}" if t.match is not True else ""  # a match: plain
    if t.match is None or r == v:
        return f"<td {ident}{cls}>{_e(v)}"
    sep = " &ne; " if t.match is False else " ~ "
    return f"<td {ident}{cls}>{_e(v)}{sep}{_e(r)}"


def write_table_pages(stem: str, tsv: str, frame: pd.DataFrame, root: Path, out: Path,
                      store: Store, stats: Counter, style: str, back: str,
                      trace: bool = True, traced: Sequence[Any] | None = None,
                      banner: str = "") -> str:
    """Write `cells/<stem>.html` and `cells/<stem>.data.js` (its trials go to `store`);
    return the page path relative to `out`. `traced`: the table's row traces already
    computed by `trace_table` (else each row is traced here). `banner`: a notice printed
    under the title (e.g. that rows are a SIMULATION OF THE PUBLISHED FIGURES)."""
    cell_dir = out / "cells"
    data = TableData(store)
    keys = key_columns(frame)
    shown = states_as_text(frame)
    columns = value_columns(frame)
    notes: dict[str, int] = {}
    body = []
    for i in range(len(frame)):
        traces, err = None, "not traced"
        if trace:
            try:
                if traced is None:
                    traces = trace_row(tsv, i, root=root, frame=frame)
                elif isinstance(traced[i], TraceFailed):
                    raise CellError(str(traced[i]))
                else:
                    traces = traced[i]
            except TRACE_ERRORS as exc:
                stats["trace_errors"] += 1
                err = f"trace failed: {exc}"
        data.add_row(i, traces, error=err)
        by_col = {t.column: t for t in traces or []}
        for t in traces or []:
            stats["numbers"] += 1
            stats["matched" if t.match else "mismatched" if t.match is False
                  else "not_recomputed"] += 1
        cells = [f"<td>{i}"] + [f"<td class=k>{_e(shown.at[i, k])}" for k in keys]
        cells += [_cell(i, c, by_col.get(c), frame) for c in columns]
        row_notes = sorted({t.note for t in traces if t.note}) if traces else [err]
        refs = [notes.setdefault(n, len(notes) + 1) for n in row_notes]
        cells.append("<td class=k>" + " ".join(f"<a href='#n{k}'>[{k}]</a>" for k in refs))
        n_trials = len(traces[0].trials) if traces else 0
        cells.append(f"<td><a class=show href='#r{i}'>{n_trials}</a>" if n_trials
                     else "<td>0")
        body.append(f"<tr id='r{i}'>" + "".join(cells) + "</tr>")
    write_text_atomic(cell_dir / f"{stem}.data.js", data.to_js(stem))
    head = ("<tr><th>row" + "".join(f"<th class=k>{_e(k)}" for k in keys)
            + "".join(f"<th>{_e(c)}" for c in columns) + "<th class=k>notes<th>trials</tr>")
    note_list = "".join(f"<li id='n{k}'>{_e(n)}</li>" for n, k in notes.items())
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>trace: {_e(stem)}"
            f"</title><style>{style}{CELL_STYLE}</style></head><body>"
            f"<p class='meta'><a href='{_e(back)}'>back to the report</a> · table "
            f"<a href='{_e(os.path.relpath(root / tsv, cell_dir))}'><code>{_e(tsv)}</code></a>"
            f" · from the shell: <code>judgeaudit trace {_e(tsv)} --row &lt;row&gt; --column "
            "&lt;column&gt;</code></p>"
            f"<h1>Trace of {_e(stem)} ({len(frame)} rows)</h1>"
            + (f"<p class='bad'><b>{_e(banner)}.</b></p>" if banner else "")
            + "<p>One line per table row, one cell per number. Each number was recomputed "
            "from the raw judge responses with the row's recipe: <span class=ok>green</span>"
            " it matches (the recomputed value is printed beside it, after ~, only where "
            "it prints differently), <span class=bad>red</span> it does not (printed value "
            "&ne; recomputed), <span class=nr>grey</span> it was not recomputed (see the "
            "row's note), <span class=nt>white</span> not traced. Open a row (its trial "
            "count, or a link from the report) to see its recipe, rule chain, the config "
            "values that shaped it and, per trial, the request as sent, the audio, every "
            "label shown to the judge, the gold answer, the parsed answer and the raw "
            "response with a link to its file and line. Each clip plays from the report's "
            "own folder (<code>audio/</code>: one Ogg Opus copy per distinct clip, named by "
            "the sha256 of the WAV the judge was sent, which is linked by its path in the "
            "run directory), so a copy of the report folder alone plays it.</p>"
            + (f"<ol class=notes>{note_list}</ol>" if note_list else "")
            + f"<div class=wide><table class=grid>{head}" + "\n".join(body)
            + "</table></div>"
            + f"<script src='{_e(stem)}.data.js'></script><script>{CELL_JS}</script>"
            "</body></html>\n")
    write_text_atomic(cell_dir / f"{stem}.html", page)
    return f"cells/{stem}.html"


CELL_STYLE = """
table.grid td[id]{background:#eef8ee} table.grid td.bad{background:#fbe3e3}
table.grid td.nt{background:#fff}
table.grid td.nr{color:#777;background:#f4f4f4} span.nr{color:#777}
table.grid tr.sel td{background:#fffbe6} table.grid td.sel{outline:2px solid #e0a800}
tr.detail>td{text-align:left;background:#fff}
a.show{font:12px system-ui,sans-serif}
ol.notes{font:12px system-ui,sans-serif;color:#555}
.trial{border:1px solid #e4e4e4;margin:.4em 0;padding:.3em .6em;font:12px system-ui,sans-serif}
.trial pre{white-space:pre-wrap;max-height:none}
.trial dl{display:grid;grid-template-columns:10em 1fr;margin:.2em 0}
.trial dt{color:#666} .trial dd{margin:0}
"""

# The page's script. `CELLS.record(task, i)` is the whole trace record of response i of
# a task's store (the fields of provenance.cells.trial_row a reviewer sees), rebuilt
# from the store's columns; tests/test_report_store.py runs it in Chromium.
CELL_JS = r"""
(function () {
  var D = window.CELL_DATA || {rows: {}};
  window.STORE = window.STORE || {};
  function esc(s) { return String(s === null || s === undefined ? "" : s)
    .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/'/g, "&#39;"); }
  function need(names, done) {
    var todo = names.filter(function (t) {
      return t === "_rules" ? !window.RULES : !window.STORE[t]; });
    if (!todo.length) { done(); return; }
    var left = todo.length;
    todo.forEach(function (t) {
      var s = document.createElement("script");
      s.src = "store/" + t + ".js";
      s.onload = s.onerror = function () { if (--left === 0) done(); };
      document.head.appendChild(s);
    });
  }
  function col(c) {  // a column: a plain list, or run-length coded values ("r") or differences ("d")
    if (Array.isArray(c)) return c;
    var a = c.r || c.d, out = [], acc = 0, k;
    for (var i = 0; i < a.length; i += 2)
      for (k = 0; k < a[i + 1]; k++) {
        if (c.d) { acc += a[i]; out.push(acc); } else out.push(a[i]); }
    return out;
  }
  function strides(flat) {
    var out = [];
    for (var i = 0; i < flat.length; i += 3)
      for (var k = 0; k < flat[i + 1]; k++) out.push(flat[i] + k * flat[i + 2]);
    return out;
  }
  function prep(S) {
    if (S._cols) return S._cols;
    var T = S.trials, R = S.responses, C = {facts: T.facts.map(col), parts: T.parts};
    ["id", "condition", "gold", "system"].forEach(function (k) { C[k] = col(T[k]); });
    ["trial", "judge", "model", "status", "parsed", "raw", "file", "line"].forEach(
      function (k) { C["r_" + k] = col(R[k]); });
    S._cols = C;
    return C;
  }
  function href(S, i) { return S.links[i] || S.root + "/" + S.texts[i]; }
  function record(task, k) {
    var S = window.STORE[task], C = prep(S), X = S.texts, t = C.r_trial[k];
    var facts = {}, labels = {}, lines = [], audio = [], links = [], play = [];
    S.fact_keys.forEach(function (name, j) {
      var v = C.facts[j][t]; if (v >= 0) facts[name] = X[v]; });
    S.label_keys.forEach(function (name) {
      if (!(name in facts)) return;
      var v = JSON.parse(facts[name]);
      if (v !== null && v !== "") labels[name] = v; });
    if (C.system[t] >= 0) lines.push("[system]\n" + X[C.system[t]]);
    lines.push("[user]");
    C.parts[t].forEach(function (p) {
      if (p < 0) { audio.push(X[-1 - p]); links.push(href(S, -1 - p));
                   play.push((S.play || {})[-1 - p] || "");
                   lines.push("[audio: " + X[-1 - p] + "]"); }
      else lines.push(X[p]); });
    var f = C.r_file[k];
    return {task: task, trial_id: C.id[t], condition: X[C.condition[t]], gold: X[C.gold[t]],
            facts: facts, labels_shown: labels, request_text: lines.join("\n"),
            audio: audio, audio_links: links, audio_play: play, judge: X[C.r_judge[k]],
            model_version: X[C.r_model[k]], status: X[C.r_status[k]],
            parsed: X[C.r_parsed[k]], raw_text: X[C.r_raw[k]],
            response_file: f >= 0 ? X[f] : "", response_link: f >= 0 ? href(S, f) : "",
            response_line: C.r_line[k]};
  }
  function trialHtml(ref) {
    if (!window.STORE[ref[0]])
      return "<p class='bad'>trial store " + esc(ref[0]) + " not found</p>";
    var r = record(ref[0], ref[1]), h = "<div class='trial'><dl>";
    function row(k, v) { h += "<dt>" + esc(k) + "</dt><dd>" + v + "</dd>"; }
    function link(text, url) { return url ? "<a href='" + esc(url) + "'>" + esc(text) + "</a>"
                                          : esc(text); }
    row("trial", esc(r.trial_id) + " (" + esc(r.task) + " / " + esc(r.condition) + ")");
    row("judge", esc(r.judge) + (r.model_version ? " · " + esc(r.model_version) : ""));
    row("gold", esc(r.gold));
    var ls = Object.keys(r.labels_shown);
    row("labels shown", ls.length ? ls.map(function (k) {
      return esc(k) + " = <b>" + esc(r.labels_shown[k]) + "</b>"; }).join(" · ") : "none");
    row("parsed answer", "<b>" + esc(r.parsed) + "</b> (" + esc(r.status) + ")");
    row("audio sent", r.audio.map(function (a, i) {
      return (r.audio_play[i] ? "<audio controls preload='none' src='" + esc(r.audio_play[i]) +
              "'></audio> " : "<span class='bad'>(not in the report folder)</span> ") +
             link(a, r.audio_links[i]); }).join("<br>") || "none");
    row("raw response", "<code>" + esc(r.raw_text) + "</code>");
    row("response line", r.response_file ? link(r.response_file, r.response_link) +
        ", line " + esc(r.response_line) : "none");
    h += "</dl><details open><summary>request as sent</summary><pre>" +
         esc(r.request_text) + "</pre></details>";
    h += "<details><summary>all trial facts</summary><pre>" + Object.keys(r.facts).map(
      function (k) { return esc(k + ": " + r.facts[k]); }).join("\n") +
      "</pre></details></div>";
    return h;
  }
  function refs(row) {
    if (row._refs) return row._refs;
    var out = [];
    row.trials.forEach(function (g) {
      strides(g[1]).forEach(function (i) { out.push([g[0], i]); }); });
    row._refs = out;
    return out;
  }
  function render(i, box) {
    var row = D.rows[i], R = window.RULES || {nodes: [], configs: [], objs: []};
    var h = "", all = refs(row), root = "";
    all.slice(0, 1).forEach(function (r) {
      if (window.STORE[r[0]]) root = window.STORE[r[0]].root; });
    if (all.length)
      h += "<p>Recomputed with <code>" + esc(D.recipes[row.recipe]) + "</code> from the " +
           all.length + " trials and responses below.</p>";
    else
      h += "<p class='nr'>Not recomputed from trials: this row's numbers are traced to " +
           "their rule chain and config only (the row's note says why and where its " +
           "trials are traced).</p>";
    h += "<details><summary>rule chain and config</summary><pre>";
    D.chains[row.chain].forEach(function (k) {
      var n = R.nodes[k], code = R.objs[n.code] || {};
      h += (n.prov && root ? "<a href='" + esc(root + "/" + n.prov) + "'>" + esc(n.output) +
            "</a>" : esc(n.output)) + esc(" <- rule " + n.rule + " (commit " +
            String(code.git_commit).slice(0, 10) + (code.git_dirty ? " dirty" : "") + ")") +
            "\n";
      n.inputs.forEach(function (x) {
        h += esc("    " + (x[0] ? ">" : " ") + " " + x[1] + "  sha256 " +
                 String(x[2] || "").slice(0, 16)) + "\n"; });
    });
    var cfg = R.configs[row.config] || {params: {}};
    h += "\nconfig " + esc(cfg.config_sha256) + " (" + esc(cfg.config_path) + ")\n";
    Object.keys(cfg.params).forEach(function (k) {
      h += esc(k + ": " + JSON.stringify(R.objs[cfg.params[k]])) + "\n"; });
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
    var row = D.rows[i], tr = document.getElementById("r" + i);
    if (!row || !tr) return;
    document.querySelectorAll(".sel").forEach(function (e) { e.classList.remove("sel"); });
    tr.classList.add("sel");
    if (col) { var c = document.getElementById("r" + i + "." + col);
               if (c) c.classList.add("sel"); }
    var next = tr.nextElementSibling;
    if (next && next.classList.contains("detail")) return;
    var d = document.createElement("tr");
    d.className = "detail";
    d.innerHTML = "<td colspan='" + tr.children.length + "'><div class='detail'></div></td>";
    tr.parentNode.insertBefore(d, next);
    var box = d.querySelector("div.detail");
    if (row.error) { box.innerHTML = "<p class='bad'>" + esc(row.error) + "</p>"; return; }
    var names = ["_rules"];
    row.trials.forEach(function (g) { names.push(g[0]); });
    need(names, function () { render(i, box); });
  }
  function route() {
    var m = /^#r(\d+)(?:\.(.+))?$/.exec(decodeURIComponent(location.hash));
    if (m) { show(m[1], m[2]);
             var el = document.getElementById("r" + m[1]);
             if (el) el.scrollIntoView(); }
  }
  window.CELLS = {record: record, refs: refs, strides: strides, col: col, need: need};
  window.addEventListener("hashchange", route);
  route();
})();
"""

__all__ = ["Rules", "Store", "decode_column", "encode_column", "expand_strides", "strides",
           "write_table_pages"]

"""The paper a reviewer opens: `results/report/index.html` with relative assets.

Title and summary; methods generated from the resolved config and the run's files
(corpora with sizes, sources and checksums; specialists with their measured
accuracy; judges with provider, model and version; conditions, prompt templates,
sample sizes and the tests used); results per research question, each table
captioned with its figure beside it; estimator validation and power; limitations
generated from what the run could not do. Every number links to a static trace page
(`cells/<table>/<row>.html#<column>`) showing the rule chain, the config values, the
exact trials and raw responses behind it and its recomputation from them.

Generic over tables: any TSV is rendered column by column; captions come from a
small registry (missing tables are simply skipped), else from the table's Markdown
sibling, else from its name.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import math
import os
import shutil
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit import outputs as output_registry
from judgeaudit.io import read_jsonl, sha256_file, write_text_atomic
from judgeaudit.judges.adapters import providers
from judgeaudit.provenance import CONFIG_STORE, record_path, save_resolved_config
from judgeaudit.provenance.cells import (
    CellError,
    key_columns,
    read_table,
    row_key,
    trace_row,
    value_columns,
)
from judgeaudit.stats.methods import describe, method_keys

# --- from the outputs and method registries (judgeaudit.outputs, stats.methods) ---
# section id -> heading, one-line description
SECTIONS: list[tuple[str, str, str]] = [(s.id, s.heading, s.description)
                                        for s in output_registry.SECTIONS]
# table stem -> (section, fallback caption, figures shown beside it)
TABLES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    name: (t.section, t.caption, t.figures) for name, t in output_registry.TABLES.items()}


def method_glossary(value: str) -> str:
    """The method registry's description(s) of a table's method value."""
    keys = method_keys(value, strict=False)
    return "; ".join(describe(k).sentence() for k in keys) or "not in the method registry"


# --- end of the registry-derived values ---
STYLE = """
body{font-family:Georgia,serif;margin:2em auto;max-width:1100px;color:#222;line-height:1.45}
h1{font-size:1.7em} h2{border-bottom:1px solid #ccc;margin-top:2em} h3{font-size:1.05em}
table{border-collapse:collapse;font:12px system-ui,sans-serif;margin:.4em 0}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:right;vertical-align:top}
th{background:#f3f3f3} td.k,th.k{text-align:left}
td a{color:#0645ad;text-decoration:none} td a:hover{text-decoration:underline}
.scroll{max-height:420px;overflow:auto;border:1px solid #eee}
.pair{display:flex;gap:1em;align-items:flex-start}
.pair>div:first-child{flex:1 1 58%;min-width:0} .pair>div:last-child{flex:0 0 40%}
figure{margin:0} figure img{max-width:100%;border:1px solid #eee}
figcaption,.cap{font-size:.9em;color:#444} .meta{color:#666;font:12px system-ui,sans-serif}
pre{font-size:11px;background:#f8f8f8;padding:.5em;overflow-x:auto}
.bad{color:#b00} .ok{color:#070}
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _num(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e9:
            return str(int(v))
        return f"{v:.3g}" if abs(v) < 1e-3 else f"{v:.3f}"
    return str(v)


def _caption(tsv: Path, stem: str) -> str:
    md = tsv.with_suffix(".md")
    if md.exists():
        first = md.read_text(encoding="utf-8").splitlines()[:1]
        if first and first[0].startswith("**") and first[0].endswith("**"):
            return first[0].strip("*")
    return TABLES.get(stem, ("other", stem.replace("_", " "), ()))[1]


# ------------------------------------------------------------------ trace pages
def _cell_page(stem: str, traces: list, back: str) -> str:
    t0 = traces[0]
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>trace {_e(stem)} "
             f"row {t0.row_index}</title><style>{STYLE}</style></head><body>",
             f"<p class='meta'><a href='{back}'>back to the report</a></p>",
             f"<h1>{_e(stem)}: row {t0.row_index}</h1>",
             f"<p><code>{_e(t0.row_key)}</code> in <code>{_e(t0.table)}</code></p>",
             "<p class='meta'>From the shell: <code>judgeaudit trace "
             f"{_e(t0.table)} --row {_e(t0.row_index)} --column &lt;column&gt;</code></p>",
             "<h2>Numbers and their recomputation</h2><table><tr><th class='k'>column</th>"
             "<th>value</th><th>recomputed</th><th class='k'>check</th></tr>"]
    for t in traces:
        check = ("<span class='ok'>match</span>" if t.match else
                 "<span class='bad'>MISMATCH</span>" if t.match is False else "not recomputed")
        parts.append(f"<tr id='{_e(t.column)}'><td class='k'>{_e(t.column)}</td>"
                     f"<td>{_e(_num(t.value))}</td><td>{_e(_num(t.recomputed))}</td>"
                     f"<td class='k'>{check}</td></tr>")
    parts.append("</table>")
    if t0.recipe:
        parts.append(f"<p>Recomputed with <code>{_e(t0.recipe)}</code> from the "
                     f"{len(t0.trials)} trials and responses listed below.</p>")
    notes = sorted({t.note for t in traces if t.note})
    parts += [f"<p class='bad'>{_e(n)}</p>" for n in notes]
    parts.append("<h2>Rule chain</h2><pre>")
    for n in t0.chain:
        code = n["code"]
        parts.append(_e(f"{n['output']} <- rule {n['rule']} (commit "
                        f"{str(code.get('git_commit'))[:10]}"
                        f"{' dirty' if code.get('git_dirty') else ''})"))
        for i in n["inputs"]:
            parts.append(_e(f"    {'>' if i['followed'] else ' '} {i['path']}  sha256 "
                            f"{(i['sha256'] or '')[:16]}"))
    parts.append("</pre><h2>Config values that shaped it</h2>")
    cfg = t0.config
    parts.append(f"<p>config <code>{_e(cfg['config_sha256'])}</code> "
                 f"(resolved config: <code>{_e(cfg['config_path'])}</code>)</p><pre>")
    for rule, params in cfg["params"].items():
        parts.append(_e(f"{rule}: {json.dumps(params, sort_keys=True)}"))
    parts.append("</pre>")
    if t0.trials:
        parts.append(f"<h2>Trials and raw responses ({len(t0.trials)})</h2>"
                     "<div class='scroll'><table><tr><th class='k'>trial_id</th>"
                     "<th class='k'>condition</th><th class='k'>gold</th>"
                     "<th class='k'>status</th><th class='k'>parsed</th>"
                     "<th class='k'>request_key (cache key)</th><th class='k'>response</th>"
                     "<th class='k'>raw text</th><th class='k'>facts</th></tr>")
        for r in t0.trials:
            raw = (r.get("raw_text") or "")[:300]
            parts.append(
                f"<tr><td class='k'>{_e(r['trial_id'])}</td><td class='k'>"
                f"{_e(r['condition'])}</td><td class='k'>{_e(r['gold'])}</td>"
                f"<td class='k'>{_e(r['status'])}</td><td class='k'>{_e(r['parsed'])}</td>"
                f"<td class='k'>{_e(str(r['request_key'])[:24])}</td>"
                f"<td class='k'>{_e(r['response_source'])}</td><td class='k'>{_e(raw)}</td>"
                f"<td class='k'><code>{_e(json.dumps(r.get('facts') or {}, sort_keys=True)[:300])}"
                f"</code></td></tr>")
        parts.append("</table></div>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _table_html(stem: str, frame: pd.DataFrame, stats: Counter, cell_dir: Path,
                root: Path, tsv: str, trace: bool) -> str:
    nums = set(value_columns(frame))
    keys = key_columns(frame)
    out = ["<div class='scroll'><table><tr>" + "".join(
        f"<th class='{'' if c in nums else 'k'}'>{_e(c)}</th>" for c in frame.columns)
        + "</tr>"]
    for i in range(len(frame)):
        href = f"cells/{stem}/{i}.html"
        if trace:
            try:
                traces = trace_row(tsv, i, root=root, frame=frame)
            except (CellError, KeyError, ValueError, StopIteration) as exc:
                traces = None
                stats["trace_errors"] += 1
                write_text_atomic(cell_dir / stem / f"{i}.html",
                                  f"<!doctype html><html><body><p>trace of {_e(tsv)} row {i} "
                                  f"failed: {_e(exc)}</p><p><a href='../../index.html'>back"
                                  f"</a></p></body></html>\n")
            if traces:
                for t in traces:
                    stats["numbers"] += 1
                    stats["matched" if t.match else "mismatched" if t.match is False
                          else "not_recomputed"] += 1
                write_text_atomic(cell_dir / stem / f"{i}.html",
                                  _cell_page(stem, traces, f"../../index.html#{stem}"))
        cells = []
        for c in frame.columns:
            v = frame.at[i, c]
            if c in nums:
                cells.append(f"<td><a href='{href}#{_e(c)}' title='trace "
                             f"{_e(row_key(frame, i, keys))} / {_e(c)}'>{_e(_num(v))}</a></td>")
            else:
                cells.append(f"<td class='k'>{_e(v)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table></div>")
    return "\n".join(out)


# ------------------------------------------------------------------ methods
def _manifests(root: Path) -> list[Path]:
    return sorted((root / "data").glob("*/manifest.tsv"))


def _corpora(root: Path, config: Mapping[str, Any], used: Mapping[str, str]) -> tuple[str, list]:
    rows, facts = [], []
    by_ds = defaultdict(list)
    for attr, ds in used.items():
        by_ds[ds].append(attr)
    for man in _manifests(root):
        name = man.parent.name
        m = pd.read_csv(man, sep="\t")
        cfg = (config.get("datasets") or {}).get(name, {}) or {}
        source = cfg.get("source") or ("synthetic (espeak-ng, made by the workflow)"
                                       if name.startswith("synth_") else "?")
        lic = man.parent / "LICENSE_INFO.json"
        licence = json.loads(lic.read_text(encoding="utf-8")).get("license", "?") \
            if lic.exists() else ("generated; no licence restrictions"
                                  if name.startswith("synth_") else "not recorded")
        splits = m["split"].value_counts().to_dict() if "split" in m else {}
        dur = float(m["duration_s"].sum()) if "duration_s" in m else float("nan")
        spk = m["speaker"].nunique() if "speaker" in m else 0
        facts.append({"name": name, "n": len(m), "synthetic": name.startswith("synth_")})
        rows.append(
            f"<tr><td class='k'><b>{_e(name)}</b></td><td class='k'>"
            f"{_e(', '.join(sorted(by_ds.get(name, []))) or '-')}</td><td>{len(m)}</td>"
            f"<td>{spk}</td><td class='k'>{_e(', '.join(f'{k} {v}' for k, v in sorted(splits.items())))}</td>"
            f"<td>{dur / 60:.1f}</td><td class='k'>{_e(source)}</td><td class='k'>{_e(licence)}</td>"
            f"<td class='k'><code>{sha256_file(man)[:16]}</code></td></tr>")
    if not rows:
        return "<p>No corpus manifests found under data/.</p>", facts
    head = ("<table><tr><th class='k'>corpus</th><th class='k'>used for</th><th>clips</th>"
            "<th>speakers</th><th class='k'>splits</th><th>minutes</th><th class='k'>source</th>"
            "<th class='k'>licence</th><th class='k'>manifest sha256</th></tr>")
    return head + "\n".join(rows) + "</table>", facts


def _judges(root: Path, config: Mapping[str, Any], active: Sequence[str]) -> tuple[str, list]:
    panel = (config.get("judges") or {}).get("panel") or {}
    seen_versions: dict[str, Counter] = defaultdict(Counter)
    for f in (root / "results" / "responses").glob("*/*/*/*.jsonl"):
        judge = f.parts[-4]
        for r in read_jsonl(f):
            seen_versions[judge][str(r.get("model_version"))] += 1
    rows, facts = [], []
    for name in active:
        spec = panel.get(name, {})
        prov = spec.get("provider", "?")
        versions = ", ".join(f"{v} ({n})" for v, n in seen_versions[name].most_common())
        extra = ""
        if prov == "simulated":
            extra = json.dumps({k: v for k, v in (spec.get("simulated") or {}).items()
                                if k != "seed"}, sort_keys=True)
        facts.append({"name": name, "provider": prov, "embedded": prov in providers(paid=False),
                      "model": spec.get("model")})
        rows.append(f"<tr><td class='k'><b>{_e(name)}</b></td><td class='k'>{_e(prov)}</td>"
                    f"<td class='k'>{_e(spec.get('model') or '(embedded)')}</td>"
                    f"<td class='k'>{_e(versions or '-')}</td>"
                    f"<td class='k'><code>{_e(extra)}</code></td></tr>")
    head = ("<table><tr><th class='k'>judge</th><th class='k'>provider</th>"
            "<th class='k'>model</th><th class='k'>model version seen in responses (n)</th>"
            "<th class='k'>planted propensities</th></tr>")
    return head + "\n".join(rows) + "</table>", facts


def _samples(root: Path) -> tuple[str, list, list]:
    """Trials per study x task x condition (+ distinct units), and the templates the
    trial rules read (from their provenance records)."""
    counts: dict[tuple, dict] = {}
    templates: dict[str, str] = {}
    for f in sorted((root / "results" / "trials").glob("*/*/*.jsonl")):
        for t in read_jsonl(f):
            key = (t.get("study"), t.get("task"), t.get("condition"))
            c = counts.setdefault(key, {"n": 0, "units": set()})
            c["n"] += 1
            facts = t.get("facts", {})
            c["units"].add(facts.get("clip_id") or facts.get("pair_id")
                           or facts.get("item_id") or t["trial_id"])
        rec = record_path(f)
        if rec.exists():
            for i in json.loads(rec.read_text(encoding="utf-8")).get("inputs", []):
                if "templates/" in i["path"]:
                    rel = i["path"][i["path"].index("templates/"):]
                    templates[rel] = i.get("sha256") or ""
    rows = [f"<tr><td class='k'>{_e(s)}</td><td class='k'>{_e(t)}</td><td class='k'>{_e(c)}</td>"
            f"<td>{v['n']}</td><td>{len(v['units'])}</td></tr>"
            for (s, t, c), v in sorted(counts.items(), key=lambda kv: tuple(map(str, kv[0])))]
    facts = [{"study": s, "task": t, "condition": c, "n": v["n"], "units": len(v["units"])}
             for (s, t, c), v in counts.items()]
    html_rows = ("<div class='scroll'><table><tr><th class='k'>study</th><th class='k'>task</th>"
                 "<th class='k'>condition</th><th>trials per judge</th>"
                 "<th>distinct clips / pairs / items</th></tr>" + "\n".join(rows)
                 + "</table></div>")
    tmpl = sorted(templates.items())
    return html_rows, facts, tmpl


def _methods_used(frames: Mapping[str, pd.DataFrame]) -> list[str]:
    found = set()
    for f in frames.values():
        for col in ("method", "ci_method"):
            if col in f.columns:
                found |= {str(v) for v in f[col].dropna().unique() if str(v)}
    return sorted(found)


# ------------------------------------------------------------------ limitations
def _limitations(corpora: list, judges: list, frames: Mapping[str, pd.DataFrame],
                 config: Mapping[str, Any], stats: Counter, min_n: int) -> list[str]:
    out = []
    synth = [c["name"] for c in corpora if c["synthetic"]]
    if synth:
        out.append(f"Synthetic corpora ({', '.join(synth)}): speech made with espeak-ng by "
                   "the workflow. Results show the audit machinery works; they say nothing "
                   "about how judges behave on real speech.")
    emb = [j["name"] for j in judges if j["embedded"]]
    if emb:
        out.append(f"Embedded judges ({', '.join(emb)}): judges of known behaviour, not "
                   "audio-language models. No API or open-weight model was called in this run.")
    spec = frames.get("specialist_accuracy")
    targets = {k: v.get("target") for k, v in (config.get("specialists") or {}).items()
               if isinstance(v, Mapping) and v.get("target") is not None}
    if spec is not None and "meets_target" in spec.columns:  # the table's own verdict
        kcol = next((c for c in ("specialist", "kind", "attribute") if c in spec.columns),
                    None)
        for _, r in spec[spec["meets_target"].astype(str).str.lower() == "false"].iterrows():
            out.append(f"Specialist target not met: {r[kcol] if kcol else '?'} "
                       f"{r.get('metric', '')} {_num(r.get('estimate'))} vs target "
                       f"{_num(r.get('target'))} ({r.get('dataset', '')}).")
    elif spec is not None and targets:
        kcol = next((c for c in ("kind", "specialist", "attribute") if c in spec.columns), None)
        for _, r in spec.iterrows():
            kind = str(r[kcol]) if kcol else ""
            tgt = targets.get(kind)
            est = r.get("estimate", r.get("accuracy"))
            metric = str(r.get("metric", "accuracy"))
            if tgt is None or est is None or metric not in ("accuracy", "") or \
                    (isinstance(est, float) and math.isnan(est)):
                continue
            if float(est) < float(tgt):
                out.append(f"Specialist target not met: {kind} {metric} {float(est):.3f} < "
                           f"target {float(tgt):.2f} (config specialists.{kind}.target).")
    small, invalid = [], 0
    for stem, f in frames.items():
        if "n" in f.columns:
            n = pd.to_numeric(f["n"], errors="coerce")
            k = int(((n < min_n) & (n >= 0)).sum())
            if k:
                small.append(f"{stem} {k}/{len(f)}")
        for col in ("n_invalid", "n_error", "n_refused"):
            if col in f.columns:
                invalid += int(pd.to_numeric(f[col], errors="coerce").fillna(0).sum())
    if small:
        out.append(f"Under-powered cells: rows with fewer than {min_n} valid observations "
                   f"({'; '.join(small)}); their intervals are wide and differences between "
                   "them are not claims.")
    power = frames.get("power")
    if power is not None:
        pcol = next((c for c in power.columns if c.lower() in ("power", "achieved_power")), None)
        if pcol:
            low = int((pd.to_numeric(power[pcol], errors="coerce") < 0.8).sum())
            if low:
                out.append(f"{low} of {len(power)} design cells in the power table have power "
                           "below 0.8.")
    if invalid:
        out.append(f"{invalid} invalid/refused/errored responses (summed over table cells) are "
                   "excluded from estimates and counted per cell.")
    if stats["mismatched"] or stats["trace_errors"]:
        out.append(f"Trace check: {stats['mismatched']} numbers did not recompute and "
                   f"{stats['trace_errors']} rows could not be traced (see their pages).")
    if stats["not_recomputed"]:
        out.append(f"{stats['not_recomputed']} numbers (e.g. contrasts, planted, specialist "
                   "tables) link to their rule chain and config but are not recomputed from "
                   "raw responses by the trace.")
    return out


# ------------------------------------------------------------------ the report
def build_paper(tables: Sequence[str], figures: Sequence[str], config: Mapping[str, Any],
                out_dir: str | os.PathLike = "results/report", root: str | os.PathLike = ".",
                datasets_used: Mapping[str, str] | None = None, trace: bool = True,
                min_n: int = 30, title: str = "Auditing audio-language-model judges of "
                "speech") -> dict[str, Any]:
    """Write `<out_dir>/index.html`, `cells/**` and `figures/*`; return a summary."""
    root = Path(root)
    out = root / out_dir
    out.mkdir(parents=True, exist_ok=True)
    cell_dir = out / "cells"
    if cell_dir.exists():
        shutil.rmtree(cell_dir)
    cell_dir.mkdir()
    fig_dir = out / "figures"
    fig_dir.mkdir(exist_ok=True)
    frames = {Path(t).stem: read_table(root / t) for t in tables}
    paths = {Path(t).stem: t for t in tables}
    figs = {Path(f).stem: f for f in figures}
    stats: Counter = Counter()
    active = list((config.get("judges") or {}).get("active") or
                  sorted((config.get("judges") or {}).get("panel") or {}))

    # results (built first: the trace statistics feed the summary and limitations)
    placed_figs: set[str] = set()
    section_html: dict[str, list[str]] = defaultdict(list)
    n_table = 0
    for stem in sorted(frames, key=lambda s: ([x[0] for x in SECTIONS].index(
            TABLES.get(s, ("other",))[0]), s)):
        section, _, fig_stems = TABLES.get(stem, ("other", "", ()))
        n_table += 1
        tsv = root / paths[stem]
        links = " · ".join(
            f"<a href='{os.path.relpath(tsv.with_suffix(ext), out)}'>{ext[1:]}</a>"
            for ext in (".tsv", ".md", ".tex") if tsv.with_suffix(ext).exists())
        prov = record_path(tsv)
        links += (f" · <a href='{os.path.relpath(prov, out)}'>provenance record</a>"
                  if prov.exists() else "")
        body = _table_html(stem, frames[stem], stats, cell_dir, root, paths[stem], trace)
        fig_html = ""
        for fs in fig_stems:
            if fs in figs:
                placed_figs.add(fs)
                fig_html += _figure_html(fs, root / figs[fs], fig_dir, out)
        cap = (f"<p class='cap' id='{_e(stem)}'><b>Table {n_table}.</b> "
               f"{_e(_caption(tsv, stem))} <span class='meta'>({_e(paths[stem])}; "
               f"{len(frames[stem])} rows; {links}; click a number for its trace)</span></p>")
        block = cap + (f"<div class='pair'><div>{body}</div><div>{fig_html}</div></div>"
                       if fig_html else body)
        section_html[section].append(block)
    for fs, f in sorted(figs.items()):
        if fs not in placed_figs:
            section_html["other"].append(_figure_html(fs, root / f, fig_dir, out))

    used = dict(datasets_used or {})
    corpora_html, corpora = _corpora(root, config, used)
    judges_html, judges = _judges(root, config, active)
    samples_html, samples, templates = _samples(root)
    methods = _methods_used(frames)
    digest, cfg_src = save_resolved_config(config, store=root / CONFIG_STORE)
    shutil.copyfile(cfg_src, out / "config.yaml")
    cfg_link = " (<a href='config.yaml'>resolved config</a>)"
    commits = set()
    for t in tables:
        rp = record_path(root / t)
        if rp.exists():
            code = json.loads(rp.read_text(encoding="utf-8")).get("code", {})
            commits.add(f"{str(code.get('git_commit'))[:10]}"
                        f"{' (dirty)' if code.get('git_dirty') else ''}")
    lims = _limitations(corpora, judges, frames, config, stats, min_n)
    # --- human listening check (h-bedrock, issue 22): one hook, kept separate ---
    from judgeaudit.human.validation import limitation_sentences

    lims += limitation_sentences(root)

    n_trials = sum(s["n"] for s in samples)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)}</title>"
             f"<style>{STYLE}</style></head><body>", f"<h1>{_e(title)}</h1>",
             "<p class='meta'>judge-audit report, generated "
             f"{_dt.datetime.now(_dt.UTC).strftime('%Y-%m-%d %H:%M UTC')} · config "
             f"<code>{digest[:12]}</code>{cfg_link} · code {_e(', '.join(sorted(commits)))}</p>",
             "<h2 id='summary'>Summary</h2>",
             f"<p>This run audits {len(active)} judge(s) ({_e(', '.join(active))}) on "
             f"{len(corpora)} corpora with {n_trials} trials per judge across "
             f"{len({(s['study'], s['task']) for s in samples})} study tasks, and reports "
             f"{n_table} tables. {stats['numbers']} numbers link to a trace page; "
             f"{stats['matched']} of them were recomputed from the raw judge responses and "
             f"matched the table, {stats['mismatched']} did not"
             f"{', ' + str(stats['not_recomputed']) + ' are traced to their rules and config only' if stats['not_recomputed'] else ''}.</p>",
             "<h2 id='methods'>Methods</h2>",
             "<h3>Corpora</h3>", corpora_html,
             "<h3>Judges</h3>", judges_html,
             "<h3>Specialists</h3>", _specialists_html(config, frames),
             "<h3>Conditions and sample sizes</h3>",
             "<p>Each judge answers every trial once (cached by request); the same trial set "
             "is sent to each judge.</p>", samples_html,
             "<h3>Prompt templates</h3>",
             ("<ul>" + "".join(f"<li><code>{_e(p)}</code> sha256 <code>{_e(h[:16])}</code></li>"
                               for p, h in templates) + "</ul>") if templates
             else "<p>No template files recorded.</p>",
             "<h3>Statistics</h3>", _stats_html(config, methods),
             "<h2 id='results'>Results</h2>"]
    for sid, heading, desc in SECTIONS:
        if section_html.get(sid):
            parts.append(f"<h2 id='{sid}'>{_e(heading)}</h2>")
            if desc:
                parts.append(f"<p>{_e(desc)}</p>")
            parts += section_html[sid]
    parts.append("<h2 id='limitations'>Limitations</h2><ul>"
                 + "".join(f"<li>{_e(x)}</li>" for x in lims) + "</ul>")
    parts.append("</body></html>\n")
    write_text_atomic(out / "index.html", "\n".join(parts))
    return {"numbers": stats["numbers"], "matched": stats["matched"],
            "mismatched": stats["mismatched"], "not_recomputed": stats["not_recomputed"],
            "trace_errors": stats["trace_errors"], "tables": n_table,
            "figures": len(figs), "limitations": lims, "judges": active,
            "corpora": [c["name"] for c in corpora], "trials_per_judge": n_trials}


def _figure_html(stem: str, png: Path, fig_dir: Path, out: Path) -> str:
    if not png.exists():
        return f"<p class='bad'>figure {_e(stem)} missing ({_e(png)})</p>"
    shutil.copyfile(png, fig_dir / png.name)
    pdf = png.with_suffix(".pdf")
    pdf_link = ""
    if pdf.exists():
        shutil.copyfile(pdf, fig_dir / pdf.name)
        pdf_link = f" · <a href='figures/{_e(pdf.name)}'>pdf</a>"
    prov = record_path(png)
    prov_link = (f" · <a href='{os.path.relpath(prov, out)}'>provenance record</a>"
                 if prov.exists() else "")
    return (f"<figure id='fig-{_e(stem)}'><img src='figures/{_e(png.name)}' "
            f"alt='{_e(stem)}'><figcaption>Figure: {_e(stem.replace('_', ' '))}"
            f"{pdf_link}{prov_link}</figcaption></figure>")


def _specialists_html(config: Mapping[str, Any], frames: Mapping[str, pd.DataFrame]) -> str:
    spec = config.get("specialists") or {}
    rows = []
    for kind, cfg in sorted(spec.items()):
        if not isinstance(cfg, Mapping):
            continue
        show = {k: cfg.get(k) for k in ("backend", "model", "feature_set", "dataset", "target")
                if cfg.get(k) not in (None, "")}
        measured = ""
        acc = frames.get("specialist_accuracy")
        kcol = next((c for c in ("specialist", "kind") if acc is not None and c in acc.columns),
                    None)
        if kcol:
            for _, r in acc[acc[kcol] == kind].iterrows():
                measured += (f"; measured {r.get('metric', '')} {_num(r.get('estimate'))} "
                             f"[{_num(r.get('ci_low'))}, {_num(r.get('ci_high'))}] on "
                             f"{r.get('dataset', '?')} {r.get('split', '')} "
                             f"(n={_num(r.get('n'))})")
        rows.append(f"<li><b>{_e(kind)}</b>: {_e(json.dumps(show, sort_keys=True))}"
                    f"{_e(measured)}</li>")
    acc = ("<p>Measured accuracy: <a href='#specialist_accuracy'>Table "
           "(specialist_accuracy)</a>.</p>" if "specialist_accuracy" in frames else
           "<p>No specialist accuracy table in this run.</p>")
    return ("<ul>" + "".join(rows) + "</ul>" if rows else "") + acc


def _stats_html(config: Mapping[str, Any], methods: Sequence[str]) -> str:
    sa = config.get("study_a") or {}
    sb = config.get("study_b") or {}
    items = [f"<li><code>{_e(m)}</code>: {_e(method_glossary(m))}</li>" for m in methods]
    boot = []
    if sa.get("bootstrap"):
        boot.append(f"Study A bootstrap: {json.dumps(sa['bootstrap'], sort_keys=True)}")
    if "bootstrap" in sb:
        boot.append(f"Study B bootstrap resamples: {sb['bootstrap']}")
    if "seed" in config:
        boot.append(f"seed {config['seed']}")
    return ("<p>Methods named in the tables:</p><ul>" + "".join(items) + "</ul>"
            + (f"<p>{_e('; '.join(boot))}.</p>" if boot else ""))


def write_redirect(path: str | os.PathLike, target: str) -> None:
    """The old single-page report location, redirecting to the new report."""
    write_text_atomic(path, "<!doctype html><html><head><meta charset='utf-8'>"
                      f"<meta http-equiv='refresh' content='0; url={target}'>"
                      "<title>judge-audit report</title></head><body>"
                      f"<p>The report moved to <a href='{target}'>{target}</a>.</p>"
                      "</body></html>\n")


__all__ = ["SECTIONS", "TABLES", "build_paper", "write_redirect"]

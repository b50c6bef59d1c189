"""Every claim the report states, re-derived by this test's own pandas code.

The claim evaluator (`judgeaudit.report.claims`) and the declarations
(`judgeaudit.study_a.claims`, `judgeaudit.study_b.claims`) are the product; the
`expected` function below is written independently from the issue's wording of each
finding (sorting and filtering, no shared helper), on two sets of tables: the default
run's (a fixture under tests/data/default_run/, copied from a default run) and the
shared tiny run's. A mutated declaration (the conflict finding read from
`conflict_fallible`, RQ1 ranked by accuracy level instead of drop) must be caught.
"""

from __future__ import annotations

import dataclasses
import re
from html import unescape
from pathlib import Path

import pandas as pd
import pytest
import yaml

from judgeaudit.report import claims as C
from judgeaudit.report.abstract import abstract
from judgeaudit.report.published import PUBLISHED, comparable

FIXTURE = Path(__file__).parent / "data" / "default_run" / "tables"
# the control providers as the config names them (not read from the adapter registry)
CONTROL = {"listener", "label_reader", "first_slot"}


def _frames(tables: Path) -> dict[str, pd.DataFrame]:
    return {p.stem: pd.read_csv(p, sep="\t", dtype={"state": str})
            for p in sorted(tables.glob("*.tsv"))}


def _panel(*configs: Path) -> dict:
    panel: dict = {}
    for c in configs:
        j = (yaml.safe_load(c.read_text()) or {}).get("judges") or {}
        panel.update(j.get("panel") or {})
    return panel


def _audited(f: pd.DataFrame, panel: dict) -> pd.DataFrame:
    keep = [str(panel.get(j, {}).get("provider")) not in CONTROL for j in f["judge"]]
    return f[keep]


def _listener(f: pd.DataFrame, panel: dict) -> pd.DataFrame:
    return f[[panel.get(j, {}).get("provider") == "listener" for j in f["judge"]]]


def _eq(f: pd.DataFrame, **kw) -> pd.DataFrame:
    for k, v in kw.items():
        vals = v if isinstance(v, tuple) else (v,)
        f = f[f[k].astype(str).isin([str(x) for x in vals])]
    return f


def _num(f: pd.DataFrame) -> pd.DataFrame:
    return f[pd.to_numeric(f["estimate"], errors="coerce").notna()]


def _first_task(f: pd.DataFrame, order: tuple[str, ...]) -> str:
    have = set(f["task"].astype(str))
    return next(t for t in order if t in have)


def _top(f: pd.DataFrame, ascending: bool, key=None) -> int:
    """The first row (table order) with the extreme value: a stable sort."""
    v = pd.to_numeric(f["estimate"])
    if key is not None:
        v = key(v)
    return int(v.sort_values(ascending=ascending, kind="stable").index[0]) if ascending \
        else int(v[v == v.max()].index[0])


def _side(row: pd.Series, null: float) -> str:
    lo, hi = float(row["ci_low"]), float(row["ci_high"])
    return "above" if lo > null else "below" if hi < null else "includes"


def expected(fr: dict[str, pd.DataFrame], panel: dict) -> dict[str, tuple]:
    """{claim id: (table, long-table row, verdict)} from the findings' definitions."""
    out: dict[str, tuple] = {}
    c = fr.get("study_a_contrasts")
    if c is not None:
        fam = _num(_audited(_eq(c, family="wrong_with_audio_vs_audio_only"), panel))
        task = _first_task(fam, ("emotion", "language"))
        fam = fam[fam["task"] == task]
        # the largest drop = the most negative paired difference
        i = _top(fam, ascending=True)
        judge = c.at[i, "judge"]
        out["rq1.drop"] = ("study_a_contrasts", i, _side(c.loc[i], 0))
        t2 = fr["study_a_table2_blueprint"]
        for cid, cond in (("rq1.wrong", "wrong_with_audio"), ("rq1.audio", "audio_only")):
            r = _eq(t2, seed="all", metric="accuracy", condition=cond, judge=judge, task=task)
            assert len(r) == 1
            out[cid] = ("study_a_table2_blueprint", int(r.index[0]), "")
        lis = _listener(_eq(t2, seed="all", metric="accuracy", condition="wrong_with_audio",
                            task=task), panel)
        if len(lis):
            out["rq1.listener"] = ("study_a_table2_blueprint", int(lis.index[0]), "")
    t3 = fr.get("study_a_table3_reference")
    if t3 is not None:
        rf = _num(_audited(_eq(t3, seed="all", metric="rf",
                               condition=("system", "rubric", "before", "after")), panel))
        task = _first_task(rf, ("emotion", "language"))
        i = _top(rf[rf["task"] == task], ascending=False)
        out["rq2.rf"] = ("study_a_table3_reference", i, "")
        j, place = t3.at[i, "judge"], t3.at[i, "condition"]
        n = _eq(t3, seed="all", metric="rf_norm", judge=j, task=task, condition=place)
        out["rq2.rf_norm"] = ("study_a_table3_reference", int(n.index[0]),
                              _side(n.iloc[0], 0))
        lis = _listener(_eq(t3, seed="all", metric="rf", task=task, condition=place), panel)
        if len(lis):
            out["rq2.listener"] = ("study_a_table3_reference", int(lis.index[0]), "")
    t4 = fr.get("study_a_table4_conflict")
    if t4 is not None:
        plain = _num(_audited(_eq(t4, seed="all", condition="conflict"), panel))
        task = _first_task(plain, ("emotion", "language"))
        plain = plain[plain["task"] == task]
        b = plain[plain["metric"] == "follow_block"]
        i = _top(b, ascending=False)
        j = t4.at[i, "judge"]
        k = int(plain[(plain["metric"] == "follow_reference") & (plain["judge"] == j)].index[0])
        out["conflict.block"] = ("study_a_table4_conflict", i, "")
        out["conflict.reference"] = ("study_a_table4_conflict", k, "")
        win = ("a" if t4.at[i, "ci_low"] > t4.at[k, "ci_high"] else
               "b" if t4.at[k, "ci_low"] > t4.at[i, "ci_high"] else "overlap")
        out["conflict.winner"] = ("", -1, win)
    t5 = fr.get("study_a_table5_pairwise")
    if t5 is not None:
        lk = _num(_audited(_eq(t5, metric="lock", format="concat"), panel))
        i = _top(lk, ascending=False)
        j, task = t5.at[i, "judge"], t5.at[i, "task"]
        out["rq3.lock"] = ("study_a_table5_pairwise", i, _side(t5.loc[i], 0.5))
        g = _eq(t5, metric="g", format="concat", judge=j, task=task)
        out["rq3.g"] = ("study_a_table5_pairwise", int(g.index[0]), _side(g.iloc[0], 0.5))
        if c is not None:
            cc = _eq(c, family="concat_vs_native_lock", judge=j, task=task)
            out["rq3.format"] = ("study_a_contrasts", int(cc.index[0]), _side(cc.iloc[0], 0))
    pl = fr.get("study_a_planted")
    if pl is not None and len(pl):
        counted = pl[pl["counted"].astype(str) == "True"]
        out["validation.planted"] = ("study_a_planted", len(counted),
                                     int((counted["inside"].astype(str) == "True").sum()))
    gap = fr.get("study_b_protocol_gap")
    if gap is not None:
        g = _num(_audited(gap, panel))
        task = _first_task(g, ("single", "positional", "conversation"))
        i = _top(g[g["task"] == task], ascending=False, key=abs)
        out["b_gap.gap"] = ("study_b_protocol_gap", i, _side(gap.loc[i], 0))
        acc = fr["study_b_accuracy"]
        for proto in ("pointwise", "pairwise"):
            r = _eq(acc, judge=gap.at[i, "judge"], task=task, cue=gap.at[i, "cue"],
                    protocol=proto)
            out[f"b_gap.{proto}"] = ("study_b_accuracy", int(r.index[0]), _side(r.iloc[0], .5))
        pos = _num(_audited(_eq(acc, task="positional", protocol="pointwise"), panel))
        if len(pos):
            k = _top(pos, ascending=False)
            out["b_gap.positional"] = ("study_b_accuracy", k, _side(acc.loc[k], 0.5))
    st = fr.get("study_b_state_distribution")
    if st is not None:
        s = _num(_audited(st, panel))
        task = _first_task(s, ("single", "positional", "conversation"))
        i = _top(s[s["task"] == task], ascending=False)
        out["b_states.top"] = ("study_b_state_distribution", i, "")
        pm = _eq(st, judge=st.at[i, "judge"], task=task, state="110")
        out["b_states.potemkin"] = ("study_b_state_distribution", int(pm.index[0]), "")
        pot = fr.get("study_b_potemkin")
        if pot is not None:
            cp = _eq(pot, metric="conditional_potemkin", task=task, judge=st.at[i, "judge"])
            assert len(cp) == 1
            k = int(cp.index[0])
            v = "" if pd.isna(pot.at[k, "ci_low"]) else _side(pot.loc[k], 0)
            out["b_states.conditional"] = ("study_b_potemkin", k, v)
    return out


def disagreements(fr: dict[str, pd.DataFrame], panel: dict, declared=None) -> list[str]:
    """Where the product's evaluated claims differ from `expected` (empty = agree)."""
    ev = C.evaluate_all(C.declared() if declared is None else declared, fr, panel)
    want = expected(fr, panel)
    bad = []
    for cid, (table, row, verdict) in want.items():
        if cid in ev.outcomes:
            got = ("", -1, ev.outcomes[cid].winner)
        elif cid in ev.tallies:
            t = ev.tallies[cid]
            got = (t.count.table, t.m, t.k)
        elif cid in ev.results:
            r = ev.results[cid]
            got = (r.table, r.row, r.verdict)
        else:
            got = None
        if got != (table, row, verdict):
            bad.append(f"{cid}: product {got}, re-derived {(table, row, verdict)}")
    missing = sorted((set(ev.results) | set(ev.outcomes) | set(ev.tallies)) - set(want))
    bad += [f"{cid}: evaluated but not re-derived by the test" for cid in missing]
    return bad


def _fmt(v) -> str:
    return f"{float(v):.2f}"


def sentence_mismatches(fr: dict[str, pd.DataFrame], panel: dict) -> list[str]:
    """Each re-derived row's judge and estimate [ci] are in the abstract's text."""
    findings, _ = abstract(fr, panel, lambda s, i, c: f"#{s}-{i}-{c}")
    text = unescape(re.sub(r"<[^>]+>", "", " ".join(s for _, s in findings)))
    html = " ".join(s for _, s in findings)
    bad = []
    for cid, (table, row, _) in expected(fr, panel).items():
        if table == "" or cid == "validation.planted":
            continue
        r = fr[table].loc[row]
        if pd.isna(r["estimate"]):  # not reported: the sentence gives the reason
            if str(r.get("reason", "")) not in text:
                bad.append(f"{cid}: the reason it is not reported is not in the abstract")
            continue
        triple = f"{_fmt(r['estimate'])} [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]"
        if triple not in text:
            bad.append(f"{cid}: {triple} not in the abstract")
        if f"#{table}-{row}-estimate" not in html:
            bad.append(f"{cid}: no link to {table} row {row}")
        if str(r["judge"]) not in text:
            bad.append(f"{cid}: judge {r['judge']} not named")
    want = expected(fr, panel)
    if "conflict.winner" in want:
        w = want["conflict.winner"][2]
        phrase = {"a": "the block wins", "b": "the reference wins",
                  "overlap": "which cue wins is not settled"}[w]
        if phrase not in text:
            bad.append(f"conflict.winner: '{phrase}' not in the abstract")
    if "validation.planted" in want:
        _, m, k = want["validation.planted"]
        if f"{k} of {m} counted planted rates" not in text:
            bad.append(f"validation.planted: '{k} of {m}' not in the abstract")
    return bad


def _test_href(s, i, c) -> str:
    return f"cells/{s}/{i}.html#{c}"


def claim_list_mismatches(html: str, fr: dict[str, pd.DataFrame], panel: dict,
                          href=_test_href) -> list[str]:
    """The report's claim list (Appendix: claims) against `expected`: one row per
    re-derived claim, naming its table, linking the re-derived row and printing that
    row's estimate [ci] and the interval's side; a count's k of m; a comparison's
    winner."""
    rows = {}
    for tr in re.findall(r"<tr><td><code>(.*?)</code></td>(.*?)</tr>", html, flags=re.S):
        rows[unescape(tr[0])] = tr[1]
    want = expected(fr, panel)
    # the Limitations' claims (limits.*) are re-derived by tests/test_report_limits.py
    bad = [f"{cid}: listed but not re-derived" for cid in sorted(set(rows) - set(want))
           if not cid.startswith("limits.")]
    for cid, (table, row, verdict) in want.items():
        got = rows.get(cid)
        if got is None:
            bad.append(f"{cid}: not in the claim list")
            continue
        text = unescape(re.sub(r"<[^>]+>", "", got))
        if cid == "conflict.winner":
            a, b = ("conflict.block", "conflict.reference")
            phrase = {"a": f"{a} wins", "b": f"{b} wins", "overlap": "neither wins"}[verdict]
            if phrase not in text:
                bad.append(f"{cid}: '{phrase}' not listed ({text})")
            continue
        if table and f"<code>{table}</code>" not in got:
            bad.append(f"{cid}: table {table} not named")
        if cid == "validation.planted":
            if f"{verdict} of {row} rows" not in text:
                bad.append(f"{cid}: '{verdict} of {row}' not listed ({text})")
            continue
        r = fr[table].loc[row]
        if f"href='{href(table, row, 'estimate')}'" not in got:
            bad.append(f"{cid}: no link to {table} row {row}")
        if pd.notna(r["estimate"]):
            triple = f"{_fmt(r['estimate'])} [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]"
            if triple not in text:
                bad.append(f"{cid}: {triple} not listed ({text})")
        if verdict and f"interval {verdict}" not in text:
            bad.append(f"{cid}: verdict '{verdict}' not listed ({text})")
    return bad


def _claim_list(fr, panel, claims=None) -> str:
    from judgeaudit.report.abstract import claim_list_html

    _, ev = abstract(fr, panel, _test_href, claims)
    return claim_list_html(ev, _test_href)


# ------------------------------------------------------------------ the default run
@pytest.fixture(scope="module")
def default_tables():
    if not FIXTURE.exists():
        pytest.fail(f"{FIXTURE} is missing: copy it from a default run "
                    "(tests/data/default_run/README.md)")
    return _frames(FIXTURE), _panel(Path(__file__).parents[1] / "config.yaml")


def test_default_run_claims_rederive(default_tables):
    fr, panel = default_tables
    assert disagreements(fr, panel) == []
    # every finding of both studies is stated on the default run
    ids = set(expected(fr, panel))
    assert {"rq1.drop", "rq2.rf", "conflict.block", "conflict.winner", "rq3.lock",
            "validation.planted", "b_gap.gap", "b_states.top"} <= ids


def test_default_run_sentences_state_the_rederived_rows(default_tables):
    fr, panel = default_tables
    assert sentence_mismatches(fr, panel) == []


def test_default_run_claim_list_states_the_rederived_rows(default_tables):
    """Issue 30: the report lists its claims as data (Appendix: claims): every claim
    with the row and value this test re-derives; a mutated declaration shows up there."""
    fr, panel = default_tables
    html = _claim_list(fr, panel)
    assert claim_list_mismatches(html, fr, panel) == []
    decl = list(C.declared())
    k = next(i for i, c in enumerate(decl) if c.id == "conflict.block")
    mutated = decl.copy()  # the false finding: read from the fallible condition
    mutated[k] = dataclasses.replace(decl[k], select={**decl[k].select,
                                                      "condition": "conflict_fallible"})
    assert claim_list_mismatches(_claim_list(fr, panel, mutated), fr, panel), \
        "the block rate read from conflict_fallible went unnoticed in the claim list"


def test_default_run_findings_are_the_true_ones(default_tables):
    """The issue's three false sentences, read off the default run's tables."""
    fr, panel = default_tables
    ev = C.evaluate_all(C.declared(), fr, panel)
    t4 = fr["study_a_table4_conflict"]
    assert t4.at[ev["conflict.block"].row, "condition"] == "conflict"
    # sim-follower's -0.72 drop, not sim-mixed's lowest level
    assert ev["rq1.drop"]["judge"] == "sim-follower"
    assert float(ev["rq1.drop"]["estimate"]) < -0.5


def test_mutated_claims_fail_the_check(default_tables):
    fr, panel = default_tables
    decl = list(C.declared())
    k = next(i for i, c in enumerate(decl) if c.id == "conflict.block")
    swapped = decl.copy()
    swapped[k] = dataclasses.replace(decl[k], select={**decl[k].select,
                                                      "condition": "conflict_fallible"})
    r = next(i for i, c in enumerate(swapped) if c.id == "conflict.reference")
    swapped[r] = dataclasses.replace(decl[r], select={**decl[r].select,
                                                      "condition": "conflict_fallible"})
    assert disagreements(fr, panel, swapped), "reading the fallible rows went unnoticed"
    level = decl.copy()
    d = next(i for i, c in enumerate(decl) if c.id == "rq1.drop")
    level[d] = C.Claim("rq1.drop", "study_a_table2_blueprint",
                       select={"seed": "all", "metric": "accuracy",
                               "condition": "wrong_with_audio"},
                       prefer={"task": ("emotion", "language")}, among="audited",
                       rank="min", null=0.0)
    assert disagreements(fr, panel, level), "ranking by level instead of drop went unnoticed"


def test_published_entries_have_one_comparable_judge(default_tables):
    fr, panel = default_tables
    ev = C.evaluate_all(C.declared(), fr, panel)
    for p in PUBLISHED:
        if p.stem not in fr:
            continue
        rows, note = comparable(p, fr[p.stem], ev, panel)
        if p.not_comparable:
            assert rows == [] and note.startswith("not comparable")
            continue
        assert rows, f"{p.where} / {p.quantity}: {note}"
        judges = set(fr[p.stem].loc[rows, "judge"])
        assert len(judges) == 1, (p.quantity, judges)
        # every row matches the entry's own selector
        sub = fr[p.stem].loc[rows]
        for col, v in p.select.items():
            vals = {str(x) for x in (v if isinstance(v, tuple) else (v,))}
            assert set(sub[col].astype(str)) <= vals


# ------------------------------------------------------------------ evaluator errors
def _toy() -> pd.DataFrame:
    return pd.DataFrame({"judge": ["a", "b", "ctl"], "task": ["emotion"] * 3,
                         "metric": ["rf"] * 3, "estimate": [0.2, 0.7, 0.9],
                         "ci_low": [0.1, 0.6, 0.8], "ci_high": [0.3, 0.8, 1.0]})


PANEL = {"a": {"provider": "simulated"}, "b": {"provider": "simulated"},
         "ctl": {"provider": "listener"}}


def test_claim_matching_no_row_is_an_error():
    c = C.Claim("x.y", "t", select={"metric": "lock"})
    with pytest.raises(C.ClaimError, match="no row of t"):
        C.evaluate(c, _toy(), PANEL, {})


def test_claim_matching_more_rows_than_declared_is_an_error():
    c = C.Claim("x.y", "t", select={"metric": "rf"}, among="audited")
    with pytest.raises(C.ClaimError, match="2 rows of t match"):
        C.evaluate(c, _toy(), PANEL, {})


def test_claim_on_a_missing_column_names_it():
    c = C.Claim("x.y", "t", select={"format": "concat"})
    with pytest.raises(C.ClaimError, match="no column 'format'"):
        C.evaluate(c, _toy(), PANEL, {})


def test_rank_and_scope():
    top = C.evaluate(C.Claim("x.y", "t", among="audited", rank="max", null=0.5), _toy(),
                     PANEL, {})
    assert (top.row, top.verdict) == (1, "above")
    lis = C.evaluate(C.Claim("x.z", "t", among="listener"), _toy(), PANEL, {})
    assert lis.row == 2


def test_count_of_no_rows_is_an_error():
    with pytest.raises(C.ClaimError):
        C.tally(C.Count("v.p", "t", select={"metric": "lock"}, of={"judge": "a"}), _toy())


# ------------------------------------------------------------------ the tiny run
def _tiny(tiny_run):
    root = tiny_run.root
    return (_frames(root / "results" / "tables"),
            _panel(root / "config.yaml", root / "tests" / "tiny_config.yaml"), root)


def test_tiny_run_claims_rederive(tiny_run):
    fr, panel, root = _tiny(tiny_run)
    assert disagreements(fr, panel) == []
    assert sentence_mismatches(fr, panel) == []
    # the built report lists the same claims with the same rows (Appendix: claims)
    page = (root / "results" / "report" / "index.html").read_text()
    listed = page[page.index("<h2 id='claims'>"):page.index("<h2 id='appendix'>")]
    assert "href='#claims'" in page[:page.index("<h2 id='methods'>")]  # in the contents
    assert claim_list_mismatches(listed, fr, panel,
                                 lambda s, i, c: f"cells/{s}.html#r{i}.{c}") == []


def _jsonl_rows(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def test_tiny_run_first_screen_says_what_ran(tiny_run):
    """Above the first table: the judges' and corpora's kinds, and trials per judge
    as counted from the trial files and the config's study membership."""
    _, _, root = _tiny(tiny_run)
    page = (root / "results" / "report" / "index.html").read_text()
    head = re.sub(r"<[^>]+>", "", page[:page.index("<table")])
    cfg = [yaml.safe_load((root / p).read_text()) for p in ("config.yaml",
                                                            "tests/tiny_config.yaml")]
    active = cfg[1]["judges"]["active"]
    b_judges = cfg[1]["study_b"]["judges"]
    for word in ("simulated", "planted", "embedded control", "synthetic", "espeak-ng",
                 "validate the audit"):
        assert word in head, word
    n = {s: sum(_jsonl_rows(f) for f in (root / "results" / "trials" / s).glob("*/*.jsonl"))
         for s in ("A", "B")}
    for j in active:
        total = n["A"] + (n["B"] if j in b_judges else 0)
        assert re.search(rf"{re.escape(j)}\b[^;.]*answered {total} trials", head), (j, total)
    assert "the same trial set is sent to each judge" not in page
    # every published entry has its comparable cell, except those marked by design
    tables = {p.stem for p in PUBLISHED} & set(_frames(root / "results" / "tables"))
    by_design = [p for p in PUBLISHED if p.not_comparable and p.stem in tables]
    assert page.count("not comparable: ") == len(by_design)
    assert "no matching cell" not in page


# ------------------------------------------------------------------ what the run is
def test_kinds_sentence_names_real_models_and_real_corpora():
    from judgeaudit.report.runfacts import kinds_sentence

    panel = {"gpt": {"provider": "openai", "model": "gpt-audio"},
             "listener": {"provider": "listener"}, "sim": {"provider": "simulated"}}
    s = unescape(re.sub(r"<[^>]+>", "", kinds_sentence(
        panel, ["gpt", "listener", "sim"], ["ravdess", "synth_language"], {})))
    assert "gpt is a real model" in s and "sim is simulated" in s
    assert "listener is an embedded control" in s
    assert "1 real (ravdess)" in s and "1 synthetic" in s
    assert "describe no real model" not in s  # a real model was audited
    only_sim = kinds_sentence({"sim": {"provider": "simulated"}}, ["sim"], ["synth_x"], {})
    assert "validate the audit" in only_sim
    synth_model = kinds_sentence({"g": {"provider": "gemini"}}, ["g"], ["synth_x"], {})
    assert "not on real speech" in synth_model


def test_trials_sentence_groups_judges_by_their_own_counts():
    from judgeaudit.report.runfacts import trials_sentence

    s = unescape(re.sub(r"<[^>]+>", "", trials_sentence(
        {"a": {"A": 10, "B": 5}, "b": {"A": 10}, "c": {"A": 10, "B": 5}}, ["a", "b", "c"])))
    assert s == ("a and c answered 15 trials each (10 Study A + 5 Study B); b answered 10 "
                 "trials (10 Study A).")


def test_tiny_run_state_rows_trace_to_their_trials(tiny_run):
    """The abstract's state numbers link to rows recomputed from their trials, a
    leading-zero state (011, read by pandas as 11) included; the uniform-chance rows
    say why they have none."""
    from judgeaudit.provenance.cells import trace_row
    from judgeaudit.vocab.study_b import CHANCE_JUDGE

    root = tiny_run.root
    table = "results/tables/study_b_state_distribution.tsv"
    f = pd.read_csv(root / table, sep="\t", dtype={"state": str})
    judged = f[(f["judge"] != CHANCE_JUDGE) & f["estimate"].notna()]
    lead = judged[judged["state"].str.startswith("0")]
    for i in (int(judged.index[0]), int(lead.index[0])):
        c = trace_row(table, i, ["estimate"], root=root)[0]
        assert c.trials and c.match is True, (i, c.note)
    chance = int(f.index[f["judge"] == CHANCE_JUDGE][0])
    c = trace_row(table, chance, ["estimate"], root=root)[0]
    assert not c.trials and c.note.startswith("not recomputed: the distribution expected")

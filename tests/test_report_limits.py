"""The Limitations' statements of number, re-derived by this test's own pandas code.

The declarations (`judgeaudit.report.limits.LIMIT_CLAIMS`) and their evaluator
(`judgeaudit.report.claims`) are the product; `expected` below reads the tables
directly (filters and sums written here, from the sentences' wording), on the default
run's tables (tests/data/default_run/) and on the shared tiny run's. A mutated
declaration (power read from the configured `power` column, the cell-size bound
moved, the interval rule dropped) must be caught.
"""

from __future__ import annotations

import dataclasses
import re
from html import unescape
from pathlib import Path

import pandas as pd
import pytest

from judgeaudit.report import claims as C
from judgeaudit.report import limits as L

FIXTURE = Path(__file__).parent / "data" / "default_run" / "tables"


def _frames(tables: Path) -> dict[str, pd.DataFrame]:
    return {p.stem: pd.read_csv(p, sep="\t", dtype={"state": str})
            for p in sorted(tables.glob("*.tsv"))}


def expected(fr: dict[str, pd.DataFrame]) -> dict:
    """What the Limitations must say, from the sentences' wording alone."""
    want: dict = {}
    p = fr.get("power")
    if p is not None:
        weak = p[p["power_at_target"].astype(float) < 0.8]
        want["power"] = (len(weak), len(p), [
            f"{r.study}/{r.task}/{r.cell} {float(r.power_at_target):.3f}"
            for r in weak.itertuples()])
    s = fr.get("specialist_accuracy")
    if s is not None:
        verdict = s["meets_target"].astype(str).str.lower()
        want["missed"] = list(s.loc[verdict == "false", "specialist"])
        inside = (s["ci_low"].astype(float) < s["target"].astype(float)) & (
            s["target"].astype(float) < s["ci_high"].astype(float))
        want["interval"] = list(s.loc[(verdict == "true") & inside, "specialist"])
    small = []
    for stem in sorted(fr):
        if "n" in fr[stem].columns:
            n = pd.to_numeric(fr[stem]["n"], errors="coerce")
            if (n < 30).sum():
                small.append(f"{stem} {int((n < 30).sum())}/{len(n)}")
    want["small"] = small
    want["invalid"] = int(sum(pd.to_numeric(f[c], errors="coerce").fillna(0).sum()
                              for f in fr.values()
                              for c in ("n_invalid", "n_error", "n_refused") if c in f))
    return want


def disagreements(fr: dict[str, pd.DataFrame], claims=L.LIMIT_CLAIMS) -> list[str]:
    said = L.sentences(C.evaluate_all(claims, fr, {}), fr)
    text = "\n".join(said)
    want, bad = expected(fr), []
    if "power" in want:
        k, m, names = want["power"]
        got = re.search(r"(\d+) of (\d+) design cells in the power table have guaranteed "
                        r"power below 0\.8 at the target effect: (.*)\.", text)
        if k == 0:
            if got:
                bad.append(f"power: a shortfall is stated where none is ({got.group(0)})")
        elif not got or (int(got.group(1)), int(got.group(2))) != (k, m):
            bad.append(f"power: want {k} of {m}, said {got and got.group(0)}")
        elif got.group(3).split("; ") != names:
            bad.append(f"power: cells named {got.group(3)!r}, want {names}")
    for key, lead in (("missed", "Specialist target not met: "),
                      ("interval", "Specialist target met by the estimate only: ")):
        named = [x[len(lead):].split(" ")[0] for x in said if x.startswith(lead)]
        if named != want.get(key, []):
            bad.append(f"{key}: said {named}, want {want.get(key, [])}")
    got = re.search(r"Under-powered cells: rows with fewer than 30 valid observations "
                    r"\((.*?)\)", text)
    if (got.group(1).split("; ") if got else []) != want["small"]:
        bad.append(f"small cells: said {got and got.group(1)}, want {want['small']}")
    got = re.search(r"(\d+) invalid/refused/errored responses", text)
    if (int(got.group(1)) if got else 0) != want["invalid"]:
        bad.append(f"invalid: said {got and got.group(1)}, want {want['invalid']}")
    return bad


@pytest.fixture(scope="module")
def default_tables():
    return _frames(FIXTURE)


def test_default_run_limitations_rederive(default_tables):
    assert disagreements(default_tables) == []
    want = expected(default_tables)
    # the default run does state each kind of shortfall (the check is not vacuous)
    assert want["power"][0] > 0 and want["small"] and want["interval"]


def test_tiny_run_limitations_rederive(tiny_run):
    assert disagreements(_frames(tiny_run.root / "results" / "tables")) == []


def test_report_states_the_limitations_sentences(tiny_run):
    page = (tiny_run.root / "results" / "report" / "index.html").read_text()
    fr = _frames(tiny_run.root / "results" / "tables")
    from html import escape
    for s in L.sentences(C.evaluate_all(L.LIMIT_CLAIMS, fr, {}), fr):
        assert escape(s, quote=False) in page or escape(s) in page, s[:80]


def _replace(cid: str, **kw):
    return tuple(dataclasses.replace(c, **kw) if c.id == cid else c for c in L.LIMIT_CLAIMS)


@pytest.mark.parametrize("cid, change", [
    ("limits.power", {"below": {"power_holm": 0.8}}),        # the Holm column, not guaranteed
    ("limits.power", {"below": {"power_at_target": 0.85}}),  # the wrong bound
    ("limits.small", {"below": {"n": 10}}),
    ("limits.specialist_interval", {"straddles": ""}),      # every met target flagged
    ("limits.invalid", {"columns": ("n_invalid",)}),
])
def test_mutated_limitations_fail_the_check(default_tables, cid, change):
    fr = dict(default_tables)
    if cid == "limits.invalid":  # the default run has none: give it some of each kind
        f = fr["study_a_table2_blueprint"].copy()
        for col, v in (("n_invalid", 3), ("n_error", 2), ("n_refused", 1)):
            f[col] = v
        fr["study_a_table2_blueprint"] = f
        assert disagreements(fr) == []
    assert disagreements(fr, _replace(cid, **change)), f"{cid} {change} went unnoticed"


def test_a_count_on_a_missing_column_names_it(default_tables):
    with pytest.raises(C.ClaimError, match="has no column 'power_typo'"):
        C.evaluate_all(_replace("limits.power", below={"power_typo": 0.8}), default_tables,
                       {})


def limit_list_mismatches(html: str, fr: dict[str, pd.DataFrame]) -> list[str]:
    """The claim list's Limitations rows (Appendix: claims) against `expected`."""
    rows = {unescape(cid): unescape(re.sub(r"<[^>]+>", "", rest)) for cid, rest in
            re.findall(r"<tr><td><code>(limits\.[a-z_]+)</code></td>(.*?)</tr>", html,
                       flags=re.S)}
    want, bad = expected(fr), []
    if "power" in want:
        k, m, _ = want["power"]
        if f"{k} of {m} rows" not in rows.get("limits.power", ""):
            bad.append(f"limits.power: want {k} of {m}, listed {rows.get('limits.power')}")
    s = fr.get("specialist_accuracy")
    if s is not None:
        for cid, key in (("limits.specialist_missed", "missed"),
                         ("limits.specialist_interval", "interval")):
            k, m = len(want[key]), len(s)  # k of every specialist row
            if f"{k} of {m} rows" not in rows.get(cid, ""):
                bad.append(f"{cid}: want {k} of {m}, listed {rows.get(cid)}")
    small = rows.get("limits.small", "")
    n_small = sum(int(x.rsplit(" ", 1)[1].split("/")[0]) for x in want["small"])
    if f"{n_small} rows in {len(want['small'])} tables" not in small:
        bad.append(f"limits.small: want {n_small} rows in {len(want['small'])} tables, "
                   f"listed {small}")
    for entry in want["small"]:
        if entry not in small:
            bad.append(f"limits.small: {entry} not listed")
    if f"{want['invalid']} summed" not in rows.get("limits.invalid", ""):
        bad.append(f"limits.invalid: want {want['invalid']}, listed {rows.get('limits.invalid')}")
    return bad


def _limit_list(fr, claims=L.LIMIT_CLAIMS) -> str:
    from judgeaudit.report.abstract import claim_list_html

    return claim_list_html(C.Evaluated(), lambda s, i, c: f"#{s}-{i}-{c}",
                           C.evaluate_all(claims, fr, {}), declarations=claims)


def test_default_run_claim_list_names_the_limitations(default_tables):
    """Issue 30: the report's claim list (Appendix: claims) lists the Limitations'
    claims with the counts this test re-derives; a mutated count shows up there."""
    assert limit_list_mismatches(_limit_list(default_tables), default_tables) == []
    mutated = _replace("limits.power", below={"power_at_target": 0.7})
    assert limit_list_mismatches(_limit_list(default_tables, mutated), default_tables)


def test_tiny_report_lists_the_limitations_claims(tiny_run):
    page = (tiny_run.root / "results" / "report" / "index.html").read_text()
    listed = page[page.index("<h2 id='claims'>"):page.index("<h2 id='appendix'>")]
    assert limit_list_mismatches(listed, _frames(tiny_run.root / "results" / "tables")) == []


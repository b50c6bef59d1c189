"""The settings table of docs/specialists.md, generated from the config schema and
configs/real.yaml (`python -m judgeaudit.specialists schema-table`), so the doc's
fractions, targets, back-ends and fold counts are the ones the workflow uses;
`tests/test_specialists_schema_doc.py` checks the doc's block equals this output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

BEGIN = "<!-- schema-table:begin (generated: python -m judgeaudit.specialists schema-table) -->"
END = "<!-- schema-table:end -->"
KINDS = ("emotion", "language", "speaker", "naturalness")
METRIC = {"emotion": "accuracy >=", "language": "accuracy >=", "speaker": "HTER <=",
          "naturalness": "Spearman rho >="}


def _real(spec: dict[str, Any], key: str) -> Any:
    v = (spec.get("real") or {}).get(key)
    return spec.get(key) if v is None else v


def _fmt(v: Any) -> str:
    if v is None or v == "":
        return "-"
    return f"{v:g}" if isinstance(v, float) else str(v)


def table(repo: str | Path = ".") -> str:
    """The Markdown block (between BEGIN and END) for the schema defaults and the
    configs/real.yaml overlay."""
    from judgeaudit.config import load_config, validate_config

    repo = Path(repo)
    default = validate_config({})
    real = load_config(repo / "config.yaml", repo / "configs" / "real.yaml")
    lines = [BEGIN, "",
             "| kind | metric | synthetic: backend, target | real corpus (schema "
             "default): backend, target, crossfit_folds | `configs/real.yaml`: backend, "
             "target, crossfit_folds |", "|---|---|---|---|---|"]
    for kind in KINDS:
        d, r = default["specialists"][kind], real["specialists"][kind]
        lines.append(
            f"| {kind} | {METRIC[kind]} | {_fmt(d.get('backend'))}, {_fmt(d.get('target'))} "
            f"| {_fmt(_real(d, 'backend'))}, {_fmt(_real(d, 'target'))}, "
            f"{_fmt(_real(d, 'crossfit_folds'))} "
            f"| {_fmt(_real(r, 'backend'))}, {_fmt(_real(r, 'target'))}, "
            f"{_fmt(_real(r, 'crossfit_folds'))} |")
    rd, rr = default["datasets"]["ravdess"], real["datasets"]["ravdess"]
    lines += ["", "| RAVDESS setting | schema default | `configs/real.yaml` |", "|---|---|---|"]
    for key in ("test_fraction", "subset_split", "subset_per_class"):
        lines.append(f"| `datasets.ravdess.{key}` | {_fmt(rd[key])} | {_fmt(rr[key])} |")
    n = 24
    frac = float(rd["test_fraction"])
    held = 2 * int(round(n / 2 * frac))
    lines += ["", f"With the schema default `test_fraction: {frac:g}` a single RAVDESS "
              f"specialist trains on {n - held} of the {n} actors and the study draws from "
              f"the other {held}; with `crossfit_folds: "
              f"{_fmt(_real(real['specialists']['emotion'], 'crossfit_folds'))}` "
              "(configs/real.yaml) every actor is a study actor and each fold model trains "
              "on the other folds' actors.", "", END]
    return "\n".join(lines)


def doc_block(text: str) -> str:
    """The generated block as it stands in a doc (BEGIN..END), or '' if absent."""
    if BEGIN not in text or END not in text:
        return ""
    return text[text.index(BEGIN): text.index(END) + len(END)]

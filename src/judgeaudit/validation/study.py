"""The estimator-validation study: replicate each scenario, apply the audit's
estimators (through `validation.estimators`), and summarise bias, RMSE and 95% CI
coverage with Monte Carlo errors against the population truth.

Summary columns per scenario x estimand x interval method:
  truth, truth_se        population value of the estimand (`simulate.population_truth`)
                         and its Monte Carlo error
  planted                the behavioural knob the estimand is read against (or empty)
  n_reps, n_undefined    replicates with / without a defined estimate and interval
  mean_estimate, bias, bias_mcse, bias_vs_planted, rmse
  coverage, coverage_mcse = sqrt(cov (1 - cov) / n_reps)
  mean_width, zero_width  mean interval width and share of zero-width intervals
  se_ratio               empirical SD of the estimates / mean SE the interval is
                         built on (the CR2 SE for the CR2 Wilson interval; otherwise
                         width / (2 c), c the interval's own critical value: t on G - 1
                         df for the CR2 t intervals, z for the rest): > 1 means the
                         variance is underestimated
  counted                the row enters the coverage check: the scenario is meant for
                         the estimand, the interval is the one the tables print, and the
                         planted rate is not 0 (planted-rate-0 rows are reported apart)
  verdict, reason        pass / pass (within MC error) / under-covers / over-covers,
                         with the measured cause; "pass (within MC error)" when the
                         coverage is outside the band by at most 2 Monte Carlo SE of a
                         calibrated interval, sqrt(.95 x .05 / n_reps), n_reps >= 100. A
                         cluster bootstrap row resting on fewer than BOOT_MIN_CLUSTERS
                         clusters is labelled as failing there (its BCa interval is known
                         to under-cover with so few clusters)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.validation import estimators as est
from judgeaudit.validation import simulate as sim

BAND = (0.93, 0.97)
BOOT_MIN_CLUSTERS = 12  # below this the BCa cluster bootstrap cross-check is not valid
PASSES = ("pass", "pass (within MC error)")
MC_MIN_REPS = 100  # fewer replicates: no Monte Carlo allowance (the verdict is too noisy)
REPLICATE_COLUMNS = ["scenario", "kind", "rep", "estimand", "method", "primary", "estimate",
                     "ci_low", "ci_high", "n", "n_clusters", "deff", "one_sided"]
SUMMARY_COLUMNS = ["scenario", "kind", "estimand", "method", "primary", "truth", "truth_se",
                   "planted", "n_reps", "n_undefined", "mean_estimate", "bias", "bias_mcse",
                   "bias_vs_planted", "rmse", "coverage", "coverage_mcse", "mean_width",
                   "zero_width", "se_ratio", "cov_narrow", "cov_wide", "mean_deff",
                   "deff_floor", "one_sided_share", "mean_n", "mean_clusters", "meant_for",
                   "counted", "verdict", "reason"]


def run_scenario(sc: sim.Scenario, n_seeds: int, n_boot: int, seed: int) -> pd.DataFrame:
    """Replicate-level intervals: one row per replicate x estimand x method."""
    if n_seeds < 1:
        raise ValueError(f"validation: n_seeds must be >= 1, got {n_seeds}")
    rows: list[dict[str, Any]] = []
    for rep in range(n_seeds):
        rng = np.random.default_rng(sim.stable_seed(seed, sc.name, rep))
        data = sim.simulate(sc, rng)
        for r in est.estimate(sc.kind, data, n_boot=n_boot, seed=rep):
            rows.append({"scenario": sc.name, "kind": sc.kind, "rep": rep, **r})
    return pd.DataFrame(rows, columns=REPLICATE_COLUMNS)


def _reason(row: dict[str, Any], sc_kind: str) -> str:
    """The measured cause of a coverage miss (never a guess without a number)."""
    bits = []
    if row["zero_width"] > 0:
        bits.append(f"{row['zero_width']:.0%} of intervals have zero width")
    if row["verdict"] == "under-covers" and np.isfinite(row["se_ratio"]) and row["se_ratio"] > 1.1:
        cause = ""
        m = row["method"]
        g = row["mean_clusters"]
        if m == "wilson" and sc_kind == "classification":
            cause = " (Wilson over trials ignores clip and speaker clustering)"
        elif m == "wilson" and sc_kind == "pairwise":
            cause = " (Wilson over pairs ignores source and speaker clustering)"
        elif m == "wilson" and sc_kind == "study_b":
            cause = " (Wilson over renderings ignores that 2 renderings share an item)"
        elif "(clip)" in m:
            cause = " (resamples clips, not speakers)"
        elif "(pair)" in m:
            cause = " (resamples pairs, not sources or speakers)"
        elif "bootstrap" in m:
            cause = f" (bootstrap over ~{g:.0f} clusters: too few for its interval)"
        elif sc_kind == "pairwise":
            cause = (f" (clusters on ~{g:.0f} source clips; speaker effects that span "
                     "sources are not in the variance)")
        bits.append(f"interval too narrow: empirical SD = {row['se_ratio']:.2f} x implied SE"
                    + cause)
    sd = row["rmse"] ** 2 - row["bias"] ** 2
    sd = math.sqrt(sd) if sd > 0 else 0.0
    significant = np.isfinite(row["bias_mcse"]) and abs(row["bias"]) > 2 * row["bias_mcse"]
    if sd > 0 and significant and abs(row["bias"]) > 0.25 * sd:
        bits.append(f"bias {row['bias']:+.3f} = {row['bias'] / sd:+.2f} SD")
    if "rf_norm" in row["estimand"] and row["zero_width"] > 0:
        bits.append("RF~ clipped at 0 (max(0, .)) collapses the interval to [0, 0]")
    g = row["mean_clusters"]
    small_t = any(tok in row["method"] for tok in ("cr1", "cr2"))
    if row["verdict"] == "under-covers" and not (np.isfinite(row["se_ratio"])
                                                 and row["se_ratio"] > 1.1):
        bits.append(f"average width adequate (empirical SD = {row['se_ratio']:.2f} x implied "
                    f"SE) but the variance estimate from ~{g:.0f} clusters is noisy: coverage "
                    f"{row['cov_narrow']:.2f} on the narrower half of intervals vs "
                    f"{row['cov_wide']:.2f} on the wider half")
    if row["verdict"] == "over-covers" and np.isfinite(row["se_ratio"]) and row["se_ratio"] < 0.95:
        bits.append(f"interval wider than needed: empirical SD = {row['se_ratio']:.2f} x "
                    "implied SE")
        if np.isfinite(row["deff_floor"]) and row["deff_floor"] > 0.2:
            bits.append(f"design effect set to 1 in {row['deff_floor']:.0%} of replicates "
                        "(no variance estimable: estimate at 0 or 1, or equal cluster means)")
        if small_t and np.isfinite(g) and g > 1:
            bits.append(f"t(G-1) critical value = {_t_factor(g):.2f} x z at G~{g:.0f}")
        t, n = row["truth"], row["mean_n"]
        if (np.isfinite(t) and np.isfinite(n) and 0 <= t <= 1 and "wilson" in row["method"]
                and n * min(t, 1 - t) < 10):
            bits.append(f"few events: on average {n * min(t, 1 - t):.1f} of {n:.0f} units "
                        "on the minority side, where the Wilson score interval's coverage "
                        "moves with the binomial lattice and is conservative on average "
                        "(discreteness)")
    if row["one_sided_share"] and row["one_sided_share"] > 0.2:
        bits.append(f"{row['one_sided_share']:.0%} of intervals one-sided (estimate at 0 or 1)")
    if not bits and row["verdict"] in ("under-covers", "over-covers"):
        tail = ("check against the validation_full target's Monte Carlo error"
                if row["n_reps"] < 1000 else
                f"at {row['n_reps']} replicates the Monte Carlo error does not explain it")
        bits.append(f"no systematic cause measured (empirical SD = {row['se_ratio']:.2f} x "
                    f"implied SE, bias {row['bias']:+.3f}): {tail}")
    return "; ".join(bits)


def _implied_se(ok: pd.DataFrame) -> np.ndarray:
    """Per replicate, the SE its interval is built on: for the CR2 Wilson interval the
    CR2 SE sqrt(p (1 - p) deff / n) (its width is not 2 c SE: the Wilson score interval
    shrinks at small n_eff); for every other interval half its width over its own
    critical value (`_critical`)."""
    methods = ok["method"].astype(str).to_numpy()
    width = ok["ci_high"].to_numpy(float) - ok["ci_low"].to_numpy(float)
    out = width / (2 * _critical(methods, ok["n_clusters"].to_numpy(float)))
    p = ok["estimate"].to_numpy(float)
    deff = ok["deff"].to_numpy(float) if "deff" in ok else np.full(len(ok), np.nan)
    n = ok["n"].to_numpy(float)
    wil = (np.array([m.startswith(("wilson_cr2", est.TWOWAY_METHOD)) for m in methods], dtype=bool)
           & np.isfinite(deff) & (p > 0) & (p < 1) & (n > 0))
    out[wil] = np.sqrt(p[wil] * (1 - p[wil]) * deff[wil] / n[wil])
    return out


def _critical(methods: np.ndarray, n_clusters: np.ndarray) -> np.ndarray:
    """Per replicate, the critical value its interval uses: Student t on G - 1 df for
    the CR2 / Bell-McCaffrey intervals (the df they use for equal cluster sizes; close
    to it otherwise), the normal z for every other interval."""
    from scipy.stats import t as student

    g = np.asarray(n_clusters, dtype=float)
    cr2 = np.array(["cr2" in m for m in methods], dtype=bool) & (g >= 2)
    out = np.full(g.shape, 1.959964)
    if cr2.any():
        out[cr2] = student.ppf(0.975, g[cr2] - 1)
    return out


def _t_factor(g: float) -> float:
    from scipy.stats import t as student

    return float(student.ppf(0.975, max(1.0, round(g) - 1)) / 1.959964)


def summarise(reps: pd.DataFrame, sc: sim.Scenario, truth: dict[str, dict[str, float]],
              band: Sequence[float] = BAND) -> pd.DataFrame:
    planted = sim.planted(sc.kind, sc.params)
    out = []
    # one row per estimand x interval (printed / secondary) over ALL replicates: an
    # estimator that switches method on some replicates (e.g. plain Wilson when fewer
    # than 2 clusters) is judged on what it prints, not on a selected subset
    # the two-way (speaker x sentence) rows are a third kind of interval beside the
    # printed and the bootstrap one; in a crossed scenario with NEW sentences in the
    # population (sentences random, not fixed) they are the counted interval
    crossed_random = (sc.kind == "classification" and getattr(sc.params, "n_sentences", 0) > 0
                      and getattr(sc.params, "sentence_seed", 0) == 0)
    reps = reps.assign(_twoway=reps["method"].astype(str) == est.TWOWAY_METHOD)
    for (estimand, _primary, twoway), g in reps.groupby(["estimand", "primary", "_twoway"],
                                                        sort=False):
        counts = g["method"].astype(str).value_counts()
        method = counts.index[0] + "".join(f" (+{m} in {c} reps)"
                                           for m, c in counts.iloc[1:].items())
        t = truth[estimand]["value"]
        ok = g[np.isfinite(g["estimate"]) & np.isfinite(g["ci_low"]) & np.isfinite(g["ci_high"])]
        n = len(ok)
        e = ok["estimate"].to_numpy(float)
        lo, hi = ok["ci_low"].to_numpy(float), ok["ci_high"].to_numpy(float)
        inside = (lo - 1e-12 <= t) & (t <= hi + 1e-12)
        cov = float(np.mean(inside)) if n else math.nan
        width = hi - lo
        narrow = width <= np.median(width) if n else np.zeros(0, bool)
        deff = ok["deff"].to_numpy(float) if "deff" in ok else np.full(n, math.nan)
        fin = np.isfinite(deff)
        sided = ok["one_sided"].fillna("").astype(str) if "one_sided" in ok else pd.Series([""] * n)
        sd = float(np.std(e, ddof=1)) if n > 1 else math.nan
        implied = float(np.mean(_implied_se(ok))) if n else math.nan
        pl = planted.get(estimand)
        primary = bool(g["primary"].iloc[0])
        counted = (estimand in sc.meant_for and pl != 0
                   and (bool(twoway) if crossed_random else primary))
        row = {
            "scenario": sc.name, "kind": sc.kind, "estimand": estimand, "method": method,
            "primary": primary, "truth": t, "truth_se": truth[estimand]["se"],
            "planted": math.nan if pl is None else float(pl), "n_reps": n,
            "n_undefined": int(len(g) - n),
            "mean_estimate": float(e.mean()) if n else math.nan,
            "bias": float(e.mean() - t) if n else math.nan,
            "bias_mcse": sd / math.sqrt(n) if n > 1 else math.nan,
            "bias_vs_planted": (float(e.mean() - pl) if (n and pl is not None) else math.nan),
            "rmse": float(np.sqrt(np.mean((e - t) ** 2))) if n else math.nan,
            "coverage": cov,
            "coverage_mcse": math.sqrt(cov * (1 - cov) / n) if n else math.nan,
            "mean_width": float(width.mean()) if n else math.nan,
            "zero_width": float(np.mean(width <= 1e-12)) if n else math.nan,
            "se_ratio": sd / implied if (n > 1 and implied > 0) else math.nan,
            "cov_narrow": float(inside[narrow].mean()) if narrow.any() else math.nan,
            "cov_wide": float(inside[~narrow].mean()) if (~narrow).any() else math.nan,
            "mean_deff": float(deff[fin].mean()) if fin.any() else math.nan,
            # share of replicates whose design effect is exactly 1: not estimable (estimate
            # at 0 or 1, equal cluster means) or, for older CR1 rows, floored at 1
            "deff_floor": float(np.mean(np.abs(deff[fin] - 1) <= 1e-9)) if fin.any()
            else math.nan,
            "one_sided_share": float(np.mean(sided != "")) if n else math.nan,
            "mean_n": float(ok["n"].mean()) if n else math.nan,
            "mean_clusters": float(ok["n_clusters"].mean()) if n else math.nan,
            "meant_for": estimand in sc.meant_for, "counted": counted,
        }
        if not n:
            verdict = "undefined"
        elif band[0] <= cov <= band[1]:
            verdict = "pass"
        else:
            verdict = "under-covers" if cov < band[0] else "over-covers"
        row["verdict"] = verdict
        row["reason"] = _reason(row, sc.kind) if verdict != "pass" else ""
        # Monte Carlo error of an exactly calibrated interval's coverage at n replicates
        mcse = math.sqrt(0.95 * 0.05 / n) if n else math.nan
        if verdict in ("under-covers", "over-covers") and n >= MC_MIN_REPS:
            edge = band[0] if verdict == "under-covers" else band[1]
            if abs(cov - edge) <= 2 * mcse:
                row["verdict"] = "pass (within MC error)"
                row["reason"] = "; ".join(filter(None, [
                    row["reason"], f"{verdict}: coverage {cov:.3f} within 2 Monte Carlo SE "
                    f"({mcse:.3f}) of the band edge {edge:.2f} at {n} replicates"]))
        g_mean = row["mean_clusters"]
        if "bootstrap" in method and np.isfinite(g_mean) and g_mean < BOOT_MIN_CLUSTERS:
            row["verdict"] = "fails (< 12 clusters)"
            row["reason"] = "; ".join(filter(None, [
                f"cluster bootstrap on ~{g_mean:.0f} clusters (< {BOOT_MIN_CLUSTERS}): not a "
                "valid cross-check there, labelled failing whatever its coverage",
                row["reason"]]))
        if pl == 0:
            row["reason"] = ("planted rate 0: reported apart, not counted"
                             + (f"; {row['reason']}" if row["reason"] else ""))
        out.append(row)
    return pd.DataFrame(out, columns=SUMMARY_COLUMNS)


def closing_note(summary: pd.DataFrame, n_seeds: int, band: Sequence[float] = BAND) -> str:
    counted = summary[summary["counted"]]
    fails = counted[~counted["verdict"].isin(PASSES)]
    n_mc = int((counted["verdict"] == "pass (within MC error)").sum())
    lines = [f"{len(counted) - len(fails)} of {len(counted)} counted estimator x scenario rows "
             f"cover within [{band[0]:.2f}, {band[1]:.2f}] over {n_seeds} replicates or "
             f"within 2 Monte Carlo SE of it ({len(counted) - len(fails) - n_mc} inside the "
             f"band, {n_mc} outside it by at most 2 Monte Carlo SE) (printed interval; "
             "planted-rate-0 rows and secondary intervals not counted)."]
    if n_seeds < 1000:
        lines.append(f"{n_seeds} replicates: a smoke check; the verdict is the "
                     "validation_full run (1000 replicates).")
    # what Monte Carlo error alone does to the count: an exactly calibrated (0.95)
    # interval's observed coverage has SD sqrt(.95 * .05 / n_seeds)
    mc = math.sqrt(0.95 * 0.05 / max(n_seeds, 1))
    half = min(0.95 - band[0], band[1] - 0.95)
    p_in = math.erf(half / mc / math.sqrt(2)) if half > 0 else 0.0
    lines.append(f"Monte Carlo error alone: at {n_seeds} replicates an exactly calibrated "
                 f"interval's coverage has SD {mc:.3f} and lands inside the band with "
                 f"probability {p_in:.2f} (about {p_in * len(counted):.0f} of "
                 f"{len(counted)} rows).")
    for r in fails.itertuples(index=False):
        lines.append(f"- FAILS: {r.estimand} in {r.scenario} ({r.method}): coverage "
                     f"{r.coverage:.3f} +- {r.coverage_mcse:.3f}; {r.reason}")
    return "\n".join(lines)


# ------------------------------------------------------------------ rendering
def display_frame(summary: pd.DataFrame) -> pd.DataFrame:
    d = summary.copy()
    d["interval"] = np.where(d["primary"], "printed", "secondary")
    return d[["scenario", "estimand", "method", "interval", "truth", "planted", "bias",
              "bias_mcse", "rmse", "coverage", "coverage_mcse", "mean_width", "se_ratio",
              "n_reps", "verdict"]]


def write_outputs(summary: pd.DataFrame, base: str | Path, figure_base: str | Path,
                  n_seeds: int, band: Sequence[float] = BAND) -> None:
    from judgeaudit.io import write_text_atomic, write_tsv_atomic
    from judgeaudit.render.tables import to_latex, to_markdown

    base = Path(base)
    caption = (f"Estimator validation: {n_seeds} simulated replicates per scenario from an "
               "independent simulator (judgeaudit.validation.simulate); truth = population "
               "value of each estimand; coverage of the 95% interval with its Monte Carlo SE. "
               "Counted rows: printed interval, scenario meant for the estimand, planted rate "
               "not 0.")
    write_tsv_atomic(base.with_name(base.name + ".tsv"), summary)
    note = closing_note(summary, n_seeds, band)
    zero = summary[summary["planted"] == 0]
    rest = summary[summary["planted"] != 0]
    md = [f"**{caption}**", "", "## Counted and secondary rows", "",
          to_markdown(display_frame(rest), 3), "", "## Planted rate 0 (reported apart, not counted)",
          "", to_markdown(display_frame(zero), 3) if len(zero) else "(none)\n", "",
          "## Closing note", "", note, ""]
    write_text_atomic(base.with_name(base.name + ".md"), "\n".join(md))
    tex = to_latex(display_frame(summary), caption, f"tab:{base.name}", 3)
    write_text_atomic(base.with_name(base.name + ".tex"), tex)
    coverage_figure(summary, figure_base, band)


def coverage_figure(summary: pd.DataFrame, base: str | Path, band: Sequence[float] = BAND):
    from judgeaudit.render.figures import pyplot, save_figure

    d = summary[summary["n_reps"] > 0].copy()
    d["label"] = d["scenario"] + " | " + d["estimand"]
    labels = list(dict.fromkeys(d["label"]))
    y = {lab: i for i, lab in enumerate(labels)}
    fig, ax = pyplot().subplots(figsize=(7.5, 0.22 * len(labels) + 1.2))
    ax.axvspan(band[0], band[1], color="0.9", zorder=0, label=f"[{band[0]}, {band[1]}]")
    ax.axvline(0.95, color="0.5", lw=0.8, ls="--")
    styles = {(True, False): ("o", "C0", "printed"), (False, False): ("s", "C1", "secondary"),
              (True, True): ("o", "C3", "printed, planted 0"),
              (False, True): ("s", "C3", "secondary, planted 0")}
    for (primary, zero), g in d.groupby([d["primary"], d["planted"] == 0]):
        marker, color, lab = styles[(bool(primary), bool(zero))]
        off = 0.0 if primary else 0.3
        ax.errorbar(g["coverage"], [y[v] + off for v in g["label"]],
                    xerr=1.96 * g["coverage_mcse"].fillna(0), fmt=marker, color=color,
                    mfc=color if primary else "white", ms=4, lw=1, label=lab)
    ax.set_yticks(range(len(labels)), labels, fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("coverage of the 95% interval (bars: +-1.96 Monte Carlo SE)")
    ax.set_xlim(max(0.0, float(np.nanmin(d["coverage"])) - 0.05) if len(d) else 0, 1.005)
    ax.legend(fontsize=6, loc="lower left")
    return save_figure(fig, base)


def run(scenario_names: Sequence[str], n_seeds: int, n_boot: int, seed: int,
        truth_clusters: int = 20000, overrides: dict[str, dict] | None = None
        ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run scenarios in-process: (replicates, summary). The workflow runs one job per
    scenario instead (`scenario_outputs`), then `summarise` on the combined rows."""
    reps, summ = [], []
    for name in scenario_names:
        sc = sim.scenario(name, (overrides or {}).get(name))
        r = run_scenario(sc, n_seeds, n_boot, seed)
        truth = sim.population_truth(sc, truth_clusters, seed)
        reps.append(r)
        summ.append(summarise(r, sc, truth))
    return pd.concat(reps, ignore_index=True), pd.concat(summ, ignore_index=True)

"""The method registry: one description per interval, test, correction or power
method that a table's `method` / `ci_method` / `gate_method` column names.

Table captions and the report's methods section are both made from these entries, so
they cannot disagree. Each entry says what is computed, by which function of this
package, which statsmodels / SciPy call (or closed form) does the work, how the
observations are clustered and which critical value is used.

`describe(key)` returns the entry of a key (a clear error for an unknown key);
`method_keys(value)` finds the registry keys a table's free-text method value names
(`"wilson_cr2_bm+chance_normalised"` -> both keys; `"cluster_bootstrap_bca(item)"`;
the specialist table's sentences); `caption_text(values)` is the one sentence a
caption prints for the method values of its rows.

Pure data and string functions; imports nothing heavy (no SciPy, no pandas).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


class UnknownMethod(KeyError):
    """A method key (or a table's method value) the registry does not describe."""

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Method:
    """One statistical method.

    key: the token the tables write (`method` column) or, for methods a table names
      in another column (Holm: `p_holm`), the registry's own name.
    label: a few words for a legend or a table header.
    description: the one true description (what a caption and the methods section
      print).
    function: the function of this package that computes it.
    library: the statsmodels / SciPy call doing the work ("closed form" when none).
    clustering: what the resampling / variance treats as independent.
    critical_value: the reference distribution of the interval or test.
    kind: interval | test | correction | transform | power.
    patterns: regular expressions recognising the method inside a free-text method
      value (the specialist and power tables write sentences, not keys).
    """

    key: str
    label: str
    description: str
    function: str
    library: str
    clustering: str
    critical_value: str
    kind: str = "interval"
    patterns: tuple[str, ...] = ()

    def sentence(self) -> str:
        """`label: description` (for a methods list)."""
        return f"{self.label}: {self.description}"


_CLUSTERED = ("the sampling unit named in the row's cluster_unit column (Study A: speaker "
              "for classification tasks, source clip / reference speaker / pair for pair "
              "tasks; Study B: the item, whose two renderings or two orders are one cluster)")

METHODS: dict[str, Method] = {m.key: m for m in (
    Method(
        "wilson_cr2_bm", "clustered Wilson (CR2, Bell-McCaffrey t)",
        "share of valid trials with the outcome (ratio of sums); Wilson score interval at "
        "the effective sample size n/deff, where deff is the bias-reduced cluster-robust "
        "(CR2, Bell-McCaffrey 2002) variance over the binomial variance (not floored at 1), "
        "with the critical value of Student's t on the Bell-McCaffrey Satterthwaite degrees "
        "of freedom (about G-1 for G clusters); where the estimate is exactly 0 or 1 the "
        "one-sided 95% Wilson bound at n with the one-sided t critical value",
        "judgeaudit.stats.clustered.clustered_proportion",
        "closed form (CR2 variance and Wilson bounds in numpy); critical value "
        "scipy.stats.t.ppf(0.975, df_BM) (0.95 one-sided)",
        _CLUSTERED, "Student t on the Bell-McCaffrey df"),
    Method(
        "wilson_cgm_twoway", "two-way clustered Wilson (speaker x sentence, CGM)",
        "share of valid trials with the outcome (ratio of sums); Wilson score interval at "
        "the effective sample size p(1-p)/V, V the two-way cluster-robust variance of "
        "Cameron, Gelbach & Miller (2011) over speakers and the sentences they read, V = "
        "V_speaker + V_sentence - V_speaker x sentence, each term with the small-sample "
        "factor G/(G-1) (the intersection term left out when V is not positive), and the "
        "critical value of Student's t on min(G_speaker, G_sentence) - 1 degrees of "
        "freedom; it generalises over sentences as well as speakers (the speaker-clustered "
        "interval is conditional on the sentences used); printed where a task's clips "
        "cross at least 8 sentences with speakers",
        "judgeaudit.stats.clustered.twoway_proportion",
        "closed form (numpy; statsmodels cov_cluster_2groups computes the same variance); "
        "scipy.special.stdtrit on min(G) - 1 df",
        "speaker and sentence (crossed), two-way",
        "Student t on min(G_speaker, G_sentence) - 1 df"),
    Method(
        "wilson", "Wilson score (not clustered)",
        "Wilson score interval for a proportion with the normal critical value, every "
        "observation independent: statsmodels proportion_confint(method='wilson') in "
        "stats.ci and the unclustered specialist rows; clustered_proportion falls back to "
        "the same formula (scipy.stats.norm.ppf) when a cell has fewer than 2 clusters, and "
        "says so with this key",
        "judgeaudit.stats.ci.wilson; judgeaudit.stats.clustered.clustered_proportion "
        "(fewer than 2 clusters)",
        "statsmodels.stats.proportion.proportion_confint(method='wilson'); "
        "scipy.stats.norm.ppf(0.975)",
        "none (each trial independent)", "standard normal z"),
    Method(
        "t_cr2_bm", "clustered mean (CR2, Bell-McCaffrey t)",
        "pooled mean of real-valued observations with the bias-reduced cluster-robust (CR2) "
        "standard error and a t interval on the Bell-McCaffrey degrees of freedom",
        "judgeaudit.stats.clustered.clustered_mean",
        "closed form (numpy); scipy.stats.t.ppf / t.sf on df_BM",
        _CLUSTERED, "Student t on the Bell-McCaffrey df"),
    Method(
        "paired_t_cr2_bm", "paired CR2 t test",
        "paired difference mean(a - b) over units valid under both conditions, with the "
        "bias-reduced cluster-robust (CR2) standard error, a t interval and the two-sided "
        "Wald t test on the Bell-McCaffrey degrees of freedom over G clusters (with one unit "
        "per cluster, e.g. Study B items, exactly the paired t test); rate differences are "
        "cut to [-1, 1]; when every difference is identical (zero variance) the p-value is "
        "the exact sign test over clusters and the interval the one-sided Wilson bound on "
        "the share of units that differ",
        "judgeaudit.stats.clustered.clustered_difference",
        "closed form (numpy); scipy.stats.t.ppf / t.sf on df_BM",
        _CLUSTERED, "Student t on the Bell-McCaffrey df", kind="test"),
    Method(
        "sign_test_exact", "exact sign test over clusters",
        "two-sided exact sign test 2 * 0.5^G over the G clusters, used by the paired CR2 "
        "t test when every paired difference is identical (its rows keep the key "
        "paired_t_cr2_bm and have se = 0)",
        "judgeaudit.stats.clustered.clustered_difference (zero-variance branch)",
        "closed form", _CLUSTERED, "exact binomial(G, 1/2)", kind="test"),
    Method(
        "cluster_bootstrap_bca", "cluster bootstrap (BCa)",
        "ratio-of-sums mean with a bias-corrected and accelerated (BCa) 95% interval from "
        "resampling whole clusters (cluster sums and sizes drawn together), n_resamples from "
        "the config (study_a.bootstrap.n_boot, study_b.bootstrap), seeded; a cross-check "
        "printed as boot_low / boot_high, never the primary interval",
        "judgeaudit.stats.clustered.cluster_bootstrap_bca",
        "scipy.stats.bootstrap(paired=True, vectorized=True, method='BCa')",
        _CLUSTERED, "bootstrap quantiles (BCa)"),
    Method(
        "cluster_bootstrap_percentile", "cluster bootstrap (percentile)",
        "ratio-of-sums mean with the percentile 95% interval from resampling whole clusters "
        "(cluster sums and sizes drawn together), used where the BCa interval is undefined "
        "(degenerate replicates)",
        "judgeaudit.stats.clustered.cluster_bootstrap_bca (fallback)",
        "scipy.stats.bootstrap(paired=True, vectorized=True, method='percentile')",
        _CLUSTERED, "bootstrap quantiles (percentile)"),
    Method(
        "chance_normalised", "chance-normalised RF~",
        "RF~ = (RF - c)/(1 - c), c = 1/(K-1) for K classes, unclipped (negative = below "
        "chance; the paper clips at 0); its interval, invalid bounds and bootstrap columns "
        "are RF's mapped through the same increasing linear map",
        "judgeaudit.stats.clustered.chance_normalised", "closed form",
        "as the RF row it maps", "as the RF row it maps", kind="transform"),
    Method(
        "ols_within_cr2_wcr", "across-placement Wald (CR2, wild cluster bootstrap)",
        "linear-probability OLS of the follow indicator 1[answer = wrong label] on placement "
        "dummies with clip x seed fixed effects (absorbed by demeaning), the bias-reduced "
        "CR2 cluster-robust covariance on the sampling unit (Pustejovsky & Tipton 2018, "
        "fixed effects nested in clusters), Wald statistic W of equal RF across the four "
        "placements (statistic column W/q, q = 3) with its p-value from the wild cluster "
        "restricted bootstrap (WCR: H0 imposed, restricted residuals times one weight per "
        "cluster, refitted with the same CR2 adjustments; Cameron, Gelbach & Miller 2008), "
        "Webb's six-point weights below 12 clusters (Webb 2023; MacKinnon & Webb 2017), "
        "Rademacher weights from 12 on, 9,999 seeded draws or all distinct draws "
        "enumerated when there are fewer (at 5 clusters; 12-14 clusters) (null size "
        "0.04-0.06 at G = 8-24 by an independent simulation: "
        "benchmarks/placement_wald_size.py); estimate = max - min placement RF (p_a / p_b "
        "= the highest / lowest placement RF), no interval; not computed with fewer than 5 "
        "clusters (method value ols_within_cr2_wcr:too_few_clusters) or a rank-deficient "
        "cluster covariance (:rank_deficient)",
        "judgeaudit.study_a.metrics.placement_wald",
        "judgeaudit.stats.wald.cluster_wald_f (numpy CR2 and bootstrap)",
        _CLUSTERED, "wild cluster restricted bootstrap of W (Webb / Rademacher weights)",
        kind="test"),
    Method(
        "kendall_tau_exact_less", "Kendall tau, one-sided (capability)",
        "Kendall's tau over audited judge x task cells between the chance-normalised "
        "audio-only accuracy (acc - 1/K)/(1 - 1/K) and RF~ under wrong_with_audio, one-sided "
        "H1 tau < 0 (copying strongest near chance), exact null distribution when neither "
        "variable has ties (scipy.stats.kendalltau(method='exact')), the asymptotic tau-b "
        "null when one has (method value kendall_tau_b_asymptotic_less); cells of one judge "
        "are not independent, so the p-value is descriptive for a small panel; not "
        "computed with fewer than 5 cells (:too_few_cells) or a constant variable "
        "(:constant)",
        "judgeaudit.study_a.metrics.capability_test",
        "scipy.stats.kendalltau(alternative='less', method='exact' | 'asymptotic')",
        "none (each judge x task cell counted once; cells of one judge are not independent)",
        "exact permutation distribution of tau (asymptotic normal with ties)", kind="test",
        patterns=(r"\bkendall_tau_b_asymptotic_less\b",)),
    Method(
        "holm", "Holm step-down",
        "Holm's step-down adjustment of the p-values within each contrast family, over the "
        "audited judges only (control judges are reported with role 'control' and left out "
        "of the family); reject_holm at alpha = 0.05",
        "judgeaudit.stats.contrasts.holm (via study_a.metrics.contrasts_table)",
        "statsmodels.stats.multitest.multipletests(method='holm')",
        "none (a correction over the family's p-values)", "alpha = 0.05 family-wise",
        kind="correction"),
    Method(
        "holm_per_judge", "Holm step-down per judge",
        "Holm's step-down adjustment of the p-values over one family per judge: that "
        "judge's rows of the table (every task x cue of the protocol gap and the text "
        "gap, every task x protocol x contrasted cue of the cue dependence); p_holm, "
        "reject_holm at alpha = 0.05, holm_m the family's number of finite p-values",
        "judgeaudit.study_b.metrics.add_holm (judgeaudit.stats.contrasts.holm)",
        "statsmodels.stats.multitest.multipletests(method='holm')",
        "none (a correction over the family's p-values)", "alpha = 0.05 family-wise",
        kind="correction",
        patterns=(r"holm \(statsmodels multipletests\), family = one judge's rows of the "
                  r"table",)),
    Method(
        "binomial_gate", "chance gate (exact binomial)",
        "the conditional Potemkin rate is reported only when P is above chance: one-sided "
        "exact binomial test of the P successes over renderings against max(uniform chance, "
        "best constant answer), alternative='greater', alpha from study_b.potemkin_gate, and "
        "when its denominator n(111) + n(110) reaches min_n",
        "judgeaudit.study_b.chance.gate_potemkin",
        "scipy.stats.binomtest(k, n, p, alternative='greater')",
        "none (renderings treated as independent; conservative against the mean chance)",
        "exact binomial", kind="test",
        patterns=(r"one-sided exact binomial \(scipy binomtest\)(?![^;]*effective sample "
                  r"size)[^;]*",)),
    Method(
        "binomial_gate_clustered", "chance gate (exact binomial, item-clustered)",
        "the conditional Potemkin rate is reported only when P is above chance and its "
        "denominator n(111) + n(110) reaches min_n (both from study_b.potemkin_gate): "
        "one-sided exact binomial test (alternative='greater') of the P rate against "
        "max(uniform chance, best constant answer) at the effective sample size over "
        "items, n_eff = floor(n / deff) renderings with k_eff = round(rate * n_eff) "
        "successes, deff the CR2 design effect of the P bits clustered on items floored at "
        "1 (the largest cluster size when the rate is 0 or 1); against the mean chance "
        "where chance differs across renderings (conservative)",
        "judgeaudit.study_b.chance.clustered_binomtest (via study_b.chance.gate_potemkin)",
        "scipy.stats.binomtest(k_eff, n_eff, p, alternative='greater'); deff from "
        "judgeaudit.stats.clustered.clustered_proportion",
        "the item (its two renderings are one cluster)", "exact binomial at n_eff",
        kind="test",
        patterns=(r"one-sided exact binomial \(scipy binomtest\)[^;]*effective sample "
                  r"size[^;]*",)),
    Method(
        "wilson_deff", "Wilson at n/DEFF (ANOVA ICC)",
        "Wilson score interval (statsmodels) at the effective size n/DEFF with the "
        "model-based design effect DEFF = 1 + (m - 1) ICC, m the mean cluster size and ICC "
        "the one-way ANOVA estimate (floored at 0), normal critical value; used by the "
        "specialist accuracy table only",
        "judgeaudit.stats.clustered.clustered_wilson",
        "statsmodels.stats.proportion.proportion_confint(method='wilson')",
        "speaker (the specialist's test speakers)", "standard normal z",
        patterns=(r"wilson on n_eff = n / DEFF(\s*\([^)]*\))?", r"\bwilson_deff\b")),
    Method(
        "cluster_bootstrap_stat", "cluster bootstrap of a statistic",
        "95% interval of an arbitrary statistic (specialist EER, Spearman rho) by resampling "
        "whole clusters (speakers or source clips) with replacement, BCa (percentile when "
        "BCa is undefined, as the method value then says)",
        "judgeaudit.stats.clustered.cluster_bootstrap_ci",
        "scipy.stats.bootstrap(vectorized=False, method='BCa')",
        "speaker or source clip (named in the method value)", "bootstrap quantiles",
        patterns=(r"cluster_bootstrap_[A-Za-z]+( \([^)]*undefined\)| over the \d+ of \d+ "
                  r"resamples where the statistic is defined)? \(scipy\.stats\.bootstrap"
                  r"[^)]*\)", r"cluster_bootstrap \(fewer than 2 clusters: no interval\)")),
    Method(
        "fisher_z", "Fisher z (Spearman rho)",
        "Spearman rank correlation (scipy.stats.spearmanr) with the Fisher z interval "
        "tanh(atanh(rho) +/- 1.96/sqrt(n - 3)), every clip independent; used when no "
        "cluster column exists",
        "judgeaudit.specialists.evaluate.naturalness",
        "scipy.stats.spearmanr; closed-form Fisher z", "none", "standard normal z",
        patterns=(r"spearman\+fisher_z",)),
    Method(
        "power_sim_proportion", "power: simulation of the printed proportion",
        "power and minimum detectable effect by simulation at the cell's own design (its "
        "clusters, cluster sizes and trials; between-cluster variance from a pilot's "
        "measured design effect or the configured ICC, source stated): each replicate is "
        "run through clustered_proportion (wilson_cr2_bm), rejecting when the null lies "
        "outside its interval, with Holm over the cell's family (power_holm; Bonferroni "
        "and unadjusted beside it)",
        "judgeaudit.stats.power.report", "statsmodels.stats.multitest.multipletests "
        "(method='holm'), vectorised; the CR2 estimator of judgeaudit.stats.clustered",
        "the printed interval's cluster unit", "Student t on the Bell-McCaffrey df",
        kind="power",
        patterns=(re.escape("simulation of wilson_cr2_bm (clustered_proportion)"),)),
    Method(
        "power_sim_difference", "power: simulation of the printed paired difference",
        "power by simulation at the cell's own design, each replicate run through "
        "clustered_difference (paired_t_cr2_bm: CR2 paired t over the clusters), with Holm "
        "over the cell's family (Bonferroni and unadjusted beside it)",
        "judgeaudit.stats.power.report", "statsmodels.stats.multitest.multipletests "
        "(method='holm'), vectorised; the CR2 estimator of judgeaudit.stats.clustered",
        "the printed interval's cluster unit (item for Study B)",
        "Student t on the Bell-McCaffrey df", kind="power",
        patterns=(re.escape("simulation of paired_t_cr2_bm (clustered_difference)"),)),
)}

_TOKEN = re.compile(r"[A-Za-z0-9_]+")


def describe(method_key: str) -> Method:
    """The registry entry of `method_key`; UnknownMethod (naming the known keys) else."""
    try:
        return METHODS[method_key]
    except KeyError:
        raise UnknownMethod(f"unknown method key {method_key!r}: the method registry "
                            f"(judgeaudit.stats.methods.METHODS) knows "
                            f"{sorted(METHODS)}") from None


def method_keys(value: str, strict: bool = True) -> tuple[str, ...]:
    """Registry keys a table's method value names, in order of appearance.

    Free-text patterns are matched first (their span is removed), then the rest is
    split into word tokens and every token that is a key counts. `strict`: an
    UnknownMethod when a non-empty value names no key at all."""
    text = str(value or "").strip()
    if not text:
        return ()
    if text in METHODS:
        return (text,)
    found: list[tuple[int, str]] = []
    for m in METHODS.values():
        for pat in m.patterns:
            for hit in re.finditer(pat, text):
                found.append((hit.start(), m.key))
                text = text[:hit.start()] + " " * (hit.end() - hit.start()) + text[hit.end():]
    for hit in _TOKEN.finditer(text):
        tok = hit.group(0)
        if tok in METHODS:
            found.append((hit.start(), tok))
        elif tok.lower() in METHODS:
            found.append((hit.start(), tok.lower()))
    keys = tuple(dict.fromkeys(k for _, k in sorted(found)))
    if strict and not keys:
        raise UnknownMethod(f"method value {value!r} names no key of the method registry "
                            f"(judgeaudit.stats.methods.METHODS: {sorted(METHODS)})")
    return keys


def keys_of(values: Iterable[str], strict: bool = True) -> tuple[str, ...]:
    """Sorted union of `method_keys` over several method values (NaN/empty skipped)."""
    out: set[str] = set()
    for v in values:
        if v is None or (isinstance(v, float) and v != v) or not str(v).strip():
            continue
        out |= set(method_keys(str(v), strict=strict))
    return tuple(sorted(out))


def caption_text(values: Iterable[str], strict: bool = True) -> str:
    """`95% CI: <description>; <description>` for the method values of a table's rows
    (the text a caption prints); "no estimates" when there are none."""
    keys = keys_of(values, strict=strict)
    if not keys:
        return "no estimates"
    return "; ".join(f"{describe(k).label}: {describe(k).description}" for k in keys)


__all__ = ["METHODS", "Method", "UnknownMethod", "caption_text", "describe", "keys_of",
           "method_keys"]

"""Generic figures: grouped bars / points with CI whiskers and an x-y scatter with
error bars, saved as PNG and PDF with fixed metadata (reproducible bytes)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgeaudit.io import atomic_path

_META_PNG = {"Software": "judgeaudit"}
_META_PDF = {"Creator": "judgeaudit", "Producer": "judgeaudit", "CreationDate": None,
             "ModDate": None}


@functools.cache
def pyplot():
    """matplotlib.pyplot on the Agg backend with this project's rcParams, imported on
    first use: the outputs registries import the renderers, and a workflow parse or a
    metrics job that draws nothing need not pay for pyplot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "judgeaudit", "font.size": 9})
    return plt


def save_figure(fig, base: str | Path) -> list[Path]:
    """Write `<base>.png` and `<base>.pdf` atomically; closes the figure."""
    base = Path(base)
    paths = []
    for suffix, meta in ((".png", _META_PNG), (".pdf", _META_PDF)):
        path = base.with_name(base.name + suffix)
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=suffix[1:], dpi=150, bbox_inches="tight", metadata=meta)
        paths.append(path)
    pyplot().close(fig)
    return paths


def _err(df: pd.DataFrame, est: str, lo: str, hi: str) -> np.ndarray:
    e = df[est].to_numpy(float)
    return np.vstack([np.clip(e - df[lo].to_numpy(float), 0, None),
                      np.clip(df[hi].to_numpy(float) - e, 0, None)])


def grouped_bars(df: pd.DataFrame, x: str, hue: str, panel: str | None = None,
                 est: str = "estimate", lo: str = "ci_low", hi: str = "ci_high",
                 x_order: Sequence[str] | None = None, ylabel: str = "", title: str = "",
                 ylim: tuple[float, float] = (0, 1.05), ncols: int = 1):
    """Bars of `est` by `x`, one bar per `hue`, whiskers lo..hi; one panel per `panel`,
    `ncols` panels per row (default one: panels stacked, so the figure keeps a
    readable aspect when shown full width)."""
    panels = sorted(df[panel].unique()) if panel else [None]
    hues = sorted(df[hue].unique())
    xs = list(x_order) if x_order else sorted(df[x].unique())
    xs = [v for v in xs if v in set(df[x])]
    ncols = max(1, min(ncols, len(panels)))
    nrows = -(-len(panels) // ncols)
    plt = pyplot()
    fig, grid = plt.subplots(nrows, ncols, figsize=(max(7.0, 0.9 * len(xs) + 3) * ncols,
                                                    3.4 * nrows),
                             squeeze=False, sharey=True)
    axes = [list(grid.ravel())]
    for ax in axes[0][len(panels):]:
        ax.set_visible(False)
    width = 0.8 / max(1, len(hues))
    for ax, pv in zip(axes[0], panels, strict=False):
        sub = df if pv is None else df[df[panel] == pv]
        for i, h in enumerate(hues):
            d = sub[sub[hue] == h].set_index(x).reindex(xs)
            pos = np.arange(len(xs)) + (i - (len(hues) - 1) / 2) * width
            ax.bar(pos, d[est].to_numpy(float), width, label=str(h),
                   yerr=_err(d.reset_index(), est, lo, hi), capsize=2)
        ax.set_xticks(np.arange(len(xs)), xs, rotation=30, ha="right")
        ax.set_ylim(*ylim)
        ax.set_title(f"{title} {pv}".strip() if pv is not None else title)
        ax.grid(axis="y", alpha=0.3)
    for ax in axes[0][:len(panels)]:
        ax.set_ylabel(ylabel)
    axes[0][0].legend(fontsize=7, frameon=False, bbox_to_anchor=(1.0, 1.0), loc="upper left")
    fig.tight_layout()
    return fig


def xy_errorbars(df: pd.DataFrame, x: str, y: str, label: str, marker_by: str,
                 xlabel: str = "", ylabel: str = "", title: str = "",
                 lims: tuple[float, float] = (-0.02, 1.02), hline: float | None = None):
    """Scatter of columns `x` vs `y` (each with `<col>_low/_high` whiskers), colour by
    `label`, marker by `marker_by`."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5.5))
    markers = dict(zip(sorted(df[marker_by].unique()), "osD^v<>p*", strict=False))
    labels = sorted(df[label].unique())
    colours = dict(zip(labels, plt.cm.tab10(np.linspace(0, 1, 10)), strict=False))
    for _, r in df.iterrows():
        ax.errorbar(r[x], r[y],
                    xerr=[[max(0, r[x] - r[f"{x}_low"])], [max(0, r[f"{x}_high"] - r[x])]],
                    yerr=[[max(0, r[y] - r[f"{y}_low"])], [max(0, r[f"{y}_high"] - r[y])]],
                    fmt=markers[r[marker_by]], color=colours[r[label]], capsize=2, ms=5)
    for lab in labels:
        ax.plot([], [], "o", color=colours[lab], label=str(lab))
    for m, mk in markers.items():
        ax.plot([], [], mk, color="grey", label=str(m))
    if hline is not None:
        ax.axhline(hline, color="grey", lw=0.8, ls="--")
    ax.set_xlim(*lims)
    ax.set_ylim(*lims)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, frameon=False, bbox_to_anchor=(1.0, 1.0), loc="upper left")
    fig.tight_layout()
    return fig

"""Test helper (not a test module): checks that a rendered Markdown table prints every
rate with its clustered interval, n and number of clusters."""

import re

RATE_CELL = re.compile(r"^-?\d+\.\d+ \[-?\d+\.\d+, -?\d+\.\d+\]")


def check_rate_cells(md_path):
    """Every cell holding a rate prints its interval with n and G (or the table has n
    and n_clusters columns), and the caption names the cluster-robust method."""
    lines = md_path.read_text().splitlines()
    caption = lines[0]
    header = [c.strip() for c in lines[2].strip("|").split("|")]
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[4:] if ln.startswith("|")]
    per_table = {"n", "n_clusters"} <= set(header)
    n_cells = 0
    for row in rows:
        for col, cell in zip(header, row, strict=True):
            if RATE_CELL.match(cell):
                n_cells += 1
                assert per_table or (" n=" in cell and " G=" in cell), (md_path.name, col, cell)
                lo, hi = (float(x) for x in cell.split("[")[1].split("]")[0].split(", "))
                assert hi > lo, (md_path.name, col, cell)  # never a zero-width interval
    if n_cells:
        assert "cluster-robust" in caption and "clusters" in caption, (md_path.name, caption)
    return n_cells

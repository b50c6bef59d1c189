"""Walk provenance records from an output back to its sources."""

from __future__ import annotations

import os

from judgeaudit.provenance import read_record, record_path


def trace(output: str | os.PathLike, depth: int = 0, max_depth: int = 20,
          seen: set | None = None, root: str | os.PathLike = ".") -> list[str]:
    """Indented lines: each output with its rule, commit and config hash, then the
    inputs that have records (recursively) and the source files (with sha256).
    Package-code inputs are skipped (the code version is on every line)."""
    seen = set() if seen is None else seen
    pad = "  " * depth
    path = os.path.join(root, output)
    if not record_path(path).exists():
        return [f"{pad}{output}  (no provenance record: source file or not made by a rule)"]
    rec = read_record(path)
    code = rec.get("code", {})
    lines = [
        f"{pad}{output}  <- rule {rec['rule']} | commit {str(code.get('git_commit'))[:10]}"
        f"{' (dirty)' if code.get('git_dirty') else ''} | config {rec['config_sha256'][:12]}"
    ]
    if str(output) in seen or depth >= max_depth:
        return lines
    seen.add(str(output))
    for inp in rec.get("inputs", []):
        if inp.get("role") == "code":
            continue
        if record_path(os.path.join(root, inp["path"])).exists():
            lines.extend(trace(inp["path"], depth + 1, max_depth, seen, root))
        else:
            lines.append(f"{pad}  {inp['path']}  sha256 {(inp.get('sha256') or '')[:12]}")
    return lines

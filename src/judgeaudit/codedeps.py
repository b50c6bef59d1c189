"""Import closure of a workflow script within the `judgeaudit` package.

Snakemake does not track the modules a rule's script imports, so every rule
declares them as inputs (rules/common.smk `package_code(script)`): a change to
any file the script can execute re-runs the rule, and a change to any other file
does not. This module computes that set from the source, never from a hand-kept
list: an AST walk over every `import x` / `from x import y` statement (module
level and inside functions alike, since lazy imports run too; imports guarded by
`if TYPE_CHECKING:` are skipped, they never run), relative imports resolved
against the importing module, each imported module's parent packages'
`__init__.py` included (Python executes them), followed transitively.

What the AST cannot see is a module imported by a computed string
(`importlib.import_module(f"...{name}")`); package code that dispatches by name
therefore imports its candidates with plain (lazy) import statements, e.g.
`judgeaudit.judges.adapters.registry` and
`judgeaudit.datasets.synth._module`; a module run as a file (not imported) is
named in a module-level literal `__code_deps__ = ("judgeaudit.x.y", ...)` of the
module that runs it. `judgeaudit.testing` (test fakes) is
reachable only through such computed strings in a test's config, so it lies
outside every closure by construction.

The package never imports snakemake; this module only reads files.
"""

from __future__ import annotations

import ast
import functools
import json
import os
from pathlib import Path

PACKAGE = "judgeaudit"


@functools.cache
def _module_file(pkg_root: Path, module: str) -> Path | None:
    """src/judgeaudit/a/b.py or src/judgeaudit/a/b/__init__.py for `judgeaudit.a.b`."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    base = pkg_root.joinpath(*parts[1:])
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    py = base.with_suffix(".py") if len(parts) > 1 else None
    return py if py is not None and py.is_file() else None


def _module_name(pkg_root: Path, path: Path) -> str | None:
    """`judgeaudit.a.b` for a file of the package (None for a script)."""
    try:
        rel = path.relative_to(pkg_root)
    except ValueError:
        return None
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([PACKAGE, *parts])


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST):
    """Every Import/ImportFrom node except those under `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _with_parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


@functools.cache
def _direct(path_str: str, pkg_root_str: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    """Modules of the package that one file imports (cached per file version)."""
    path, pkg_root = Path(path_str), Path(pkg_root_str)
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=path_str)
    except SyntaxError as exc:
        raise ValueError(f"{path}: cannot parse for its imports: {exc}") from None
    this = _module_name(pkg_root, path)
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in getattr(tree, "body", []):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "__code_deps__"):
            try:
                declared = ast.literal_eval(node.value)
            except ValueError:
                raise ValueError(f"{path}: __code_deps__ must be a literal tuple of "
                                 "module names") from None
            found.update(m for name in declared for m in _with_parents(str(name)))
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
            found.update(m for n in names for m in _with_parents(n))
            continue
        if node.level:  # relative import
            if this is None:
                raise ValueError(f"{path}: relative import outside the package")
            base = this.split(".") if is_pkg else this.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            mod = ".".join(base + ([node.module] if node.module else []))
        else:
            mod = node.module or ""
        found.update(_with_parents(mod))
        for alias in node.names:  # `from pkg import submodule`
            if alias.name != "*":
                found.add(f"{mod}.{alias.name}")
    return tuple(sorted(m for m in found if m.split(".")[0] == PACKAGE))


def _direct_files(path: Path, pkg_root: Path, disk: dict | None = None) -> list[Path]:
    st = os.stat(path)
    key, stamp = str(path), [st.st_mtime_ns, st.st_size]
    memo = (path, st.st_mtime_ns, st.st_size)
    if memo in _FILES:
        return _FILES[memo]
    if disk is not None and disk.get(key, {}).get("stamp") == stamp:
        modules = disk[key]["modules"]
    else:
        modules = _direct(str(path), str(pkg_root), *stamp)
        if disk is not None:
            disk[key] = {"stamp": stamp, "modules": list(modules)}
            _DIRTY.add(id(disk))
    out = []
    for module in modules:
        f = _module_file(pkg_root, module)
        if f is not None:
            out.append(f)
    _FILES[memo] = out
    return out


def closure(script: str | os.PathLike, pkg_root: str | os.PathLike,
            cache_file: str | os.PathLike | None = None) -> list[Path]:
    """Sorted package files (`pkg_root` = .../src/judgeaudit) that running `script`
    can execute: its transitive imports within the package.

    `cache_file` (optional, JSON) keeps each file's direct imports keyed by its
    mtime and size, so a workflow parse re-reads only the files that changed; a
    missing or unreadable cache is rebuilt, never trusted blindly."""
    script, pkg_root = Path(script).resolve(), Path(pkg_root).resolve()
    if not script.is_file():
        raise FileNotFoundError(f"{script}: no such script")
    disk = _load_cache(cache_file) if cache_file else None
    seen: set[Path] = set()
    todo = list(_direct_files(script, pkg_root, disk))
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        todo.extend(_direct_files(f, pkg_root, disk))
    seen.discard(script)
    if disk is not None and id(disk) in _DIRTY:
        _save_cache(cache_file, disk)
        _DIRTY.discard(id(disk))
    return sorted(seen)




_MEMO: dict[str, dict] = {}
_DIRTY: set[int] = set()
# per process: a workflow parse computes ~30 closures over the same files
_FILES: dict[tuple[Path, int, int], list[Path]] = {}


def _load_cache(path: str | os.PathLike) -> dict:
    """The cache as one in-process dict per file (loaded once per process)."""
    key = str(path)
    if key not in _MEMO:
        try:
            data = json.loads(Path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        _MEMO[key] = data if isinstance(data, dict) else {}
    return _MEMO[key]


def _save_cache(path: str | os.PathLike, data: dict) -> None:
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a cache only: an unwritable location costs time, not correctness

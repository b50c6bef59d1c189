"""Provenance records: one JSON file beside every rule output.

Each record names the rule, its inputs with sha256, params, the config hash,
the code version (git commit, dirty flag, package version, a hash of the
package source) and the versions of the libraries that shape results. The
report and `judgeaudit trace` are built on these records.
"""

from __future__ import annotations

import datetime as _dt
import functools
import importlib.metadata as _md
import os
import platform
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from judgeaudit import __version__
from judgeaudit.io import (
    RECORD_SUFFIX,
    hash_path,
    sha256_bytes,
    sha256_file,
    sha256_json,
    write_json_atomic,
    write_text_atomic,
)

# Resolved (merged, defaults-filled) configs, one file per config hash, relative to
# the workflow's working directory; every record of a Snakemake job points to one.
CONFIG_STORE = Path("results") / "config"
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
TRACKED_LIBRARIES = (
    "numpy", "scipy", "pandas", "scikit-learn", "statsmodels", "matplotlib", "soundfile",
    "librosa", "espeakng-loader", "opensmile", "speechmos", "resemblyzer", "torch",
    "snakemake", "httpx", "openai", "google-genai",
)


def record_path(output: str | os.PathLike) -> Path:
    """Where the record of `output` lives: `<output>.prov.json` (folders too)."""
    out = Path(output)
    return out.parent / (out.name.rstrip("/") + RECORD_SUFFIX)


def git_state(root: str | os.PathLike) -> dict[str, Any]:
    """Commit and dirty flag of the git checkout holding `root` (None when `root`
    is not in a checkout or git is missing). Dirty means a tracked file differs
    from HEAD (staged or not); untracked and ignored files (workflow outputs,
    caches, logs) never make a checkout dirty."""
    def git(*args: str) -> str | None:
        try:
            return subprocess.run(
                ["git", *args], cwd=root, capture_output=True, text=True,
                timeout=10, check=True,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    status = git("status", "--porcelain", "--untracked-files=no")
    return {"git_commit": git("rev-parse", "HEAD"),
            "git_dirty": bool(status) if status is not None else None}


@functools.lru_cache(maxsize=1)
def code_version() -> dict[str, Any]:
    sources = sorted(PACKAGE_ROOT.rglob("*.py"))
    source_hash = sha256_json(
        [(str(f.relative_to(PACKAGE_ROOT)), sha256_file(f)) for f in sources]
    )
    return {
        "package": "judgeaudit",
        "package_version": __version__,
        "package_source_sha256": source_hash,
        **git_state(PACKAGE_ROOT),
    }


@functools.lru_cache(maxsize=1)
def library_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in TRACKED_LIBRARIES:
        try:
            versions[name] = _md.version(name)
        except _md.PackageNotFoundError:
            versions[name] = None
    return versions


def _flatten(files: Any) -> list[str]:
    if files is None:
        return []
    if isinstance(files, str | os.PathLike):
        return [str(files)]
    if isinstance(files, Mapping):
        return [f for v in files.values() for f in _flatten(v)]
    return [str(f) for item in files for f in _flatten(item)]


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def config_hash(config: Mapping[str, Any] | None) -> str:
    """The hash every record carries as `config_sha256`."""
    return sha256_json(_jsonable(dict(config or {})))


def save_resolved_config(config: Mapping[str, Any],
                         store: str | os.PathLike = CONFIG_STORE) -> tuple[str, Path]:
    """Write the resolved config as `<store>/<hash>.yaml` (once; atomically) and
    return (hash, path). The YAML loads back to a config with the same hash."""
    import yaml

    cfg = _jsonable(dict(config))
    digest = sha256_json(cfg)
    path = Path(store) / f"{digest}.yaml"
    if not path.exists():
        text = (f"# resolved judge-audit config (merged, defaults filled)\n"
                f"# config_sha256: {digest}\n"
                + yaml.safe_dump(cfg, sort_keys=True, allow_unicode=True))
        write_text_atomic(path, text)
    return digest, path


def find_resolved_config(digest: str, store: str | os.PathLike = CONFIG_STORE
                         ) -> tuple[Path, dict[str, Any]]:
    """The stored config whose hash is `digest` (a unique prefix of at least 6 hex
    digits will do). Raises FileNotFoundError / ValueError naming what is wrong,
    including a stored file whose content no longer has its hash."""
    import yaml

    store = Path(store)
    digest = digest.strip().lower()
    if len(digest) < 6:
        raise ValueError(f"config hash {digest!r}: give at least 6 hex digits")
    hits = sorted(store.glob(f"{digest}*.yaml")) if store.is_dir() else []
    if not hits:
        known = sorted(p.stem[:12] for p in store.glob("*.yaml")) if store.is_dir() else []
        raise FileNotFoundError(f"no resolved config {digest!r} in {store}/ "
                                f"(stored: {known or 'none'})")
    if len(hits) > 1:
        raise ValueError(f"config hash prefix {digest!r} is ambiguous: "
                         f"{[p.stem for p in hits]}")
    cfg = yaml.safe_load(hits[0].read_text(encoding="utf-8")) or {}
    if sha256_json(cfg) != hits[0].stem:
        raise ValueError(f"{hits[0]}: content hash {sha256_json(cfg)} does not match its "
                         f"name (edited after the run?)")
    return hits[0], cfg


def build_record(
    rule: str,
    inputs: Mapping[str, Any] | Iterable[str],
    params: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    config_path: str | os.PathLike | None = None,
) -> dict[str, Any]:
    if isinstance(inputs, Mapping):
        named = {k: _flatten(v) for k, v in inputs.items()}
    else:
        named = {"": _flatten(inputs)}
    input_records = [
        dict(hash_path(f), role=role) for role, files in named.items() for f in files
    ]
    return {
        "rule": rule,
        "created_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "inputs": input_records,
        "params": _jsonable(dict(params or {})),
        "config_sha256": config_hash(config),
        "config_path": str(config_path) if config_path else None,
        "code": code_version(),
        "libraries": library_versions(),
        "extra": _jsonable(dict(extra or {})),
    }


def write_records(
    rule: str,
    outputs: Iterable[str] | Mapping[str, Any],
    inputs: Mapping[str, Any] | Iterable[str] = (),
    params: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    config_path: str | os.PathLike | None = None,
) -> list[Path]:
    """Write one record beside each output (call after the outputs exist)."""
    base = build_record(rule, inputs, params, config, extra, config_path)
    written = []
    for out in _flatten(outputs):
        rec = dict(base, output=hash_path(out))
        path = record_path(out)
        write_json_atomic(path, rec)
        written.append(path)
    return written


def _named_items(namedlist: Any) -> dict[str, Any]:
    """Snakemake Namedlist -> {name: files}; unnamed entries under ''."""
    named = dict(namedlist.items()) if hasattr(namedlist, "items") else {}
    covered = {str(f) for f in _flatten(named)}
    rest = [f for f in _flatten(list(namedlist)) if f not in covered]
    if rest:
        named[""] = rest
    return named


def record_snakemake_job(smk: Any, extra: Mapping[str, Any] | None = None,
                         outputs: Iterable[str] | None = None,
                         inputs: Mapping[str, Any] | None = None,
                         wildcards: Mapping[str, Any] | None = None) -> list[Path]:
    """Provenance for the `snakemake` object a rule script receives (duck-typed:
    the package never imports Snakemake). A job writing several shards records
    each shard on its own: `outputs`, `inputs` and `wildcards` then name just that
    shard's output, the inputs it was made from and its (study, task, shard)."""
    params = dict(smk.params.items()) if hasattr(smk.params, "items") else {}
    _, config_path = save_resolved_config(smk.config)
    wc = dict(smk.wildcards.items()) if wildcards is None else dict(wildcards)
    return write_records(
        rule=smk.rule,
        outputs=list(smk.output) if outputs is None else list(outputs),
        inputs=_named_items(smk.input) if inputs is None else dict(inputs),
        params=params,
        config=smk.config,
        extra=dict(extra or {}, wildcards=wc, log=list(smk.log)),
        config_path=config_path,
    )


def read_record(output: str | os.PathLike) -> dict[str, Any]:
    import json

    return json.loads(record_path(output).read_text(encoding="utf-8"))


__all__ = [
    "CONFIG_STORE", "RECORD_SUFFIX", "build_record", "code_version", "config_hash",
    "find_resolved_config", "git_state", "hash_path", "library_versions", "read_record",
    "save_resolved_config", "record_path", "record_snakemake_job", "sha256_bytes", "write_records",
]

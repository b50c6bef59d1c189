"""Small I/O helpers shared by every stage: atomic writes, hashing, TSV/JSONL."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

CHUNK = 1 << 20
# a provenance record stands beside each output as <output>.prov.json
# (judgeaudit.provenance); a folder's hash leaves records inside it out
RECORD_SUFFIX = ".prov.json"
_UMASK = os.umask(0)
os.umask(_UMASK)


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


#: id(bytes object) -> (that object, its sha256): a clip's bytes are hashed once however
#: many times a judge job asks (request check, perception memo keys, fallible draws).
#: The entry holds a reference to the object, so its id cannot be reused while it is
#: in the memo, and `bytes` is immutable: a hit is exactly the digest of those bytes.
#: Bounded by the bytes it keeps alive (oldest entries leave first).
_SHA_MEMO: dict[int, tuple[bytes, str]] = {}
_SHA_MEMO_BUDGET = 32 << 20
_SHA_MEMO_MIN = 4096  # small payloads hash faster than a memo lookup pays off
_sha_memo_held = 0


def sha256_bytes(data: bytes) -> str:
    global _sha_memo_held
    if type(data) is not bytes or len(data) < _SHA_MEMO_MIN:
        return hashlib.sha256(data).hexdigest()
    hit = _SHA_MEMO.get(id(data))
    if hit is not None and hit[0] is data:
        return hit[1]
    digest = hashlib.sha256(data).hexdigest()
    if len(data) <= _SHA_MEMO_BUDGET // 4:
        while _SHA_MEMO and _sha_memo_held + len(data) > _SHA_MEMO_BUDGET:
            old = _SHA_MEMO.pop(next(iter(_SHA_MEMO)))  # oldest (dicts keep insertion order)
            _sha_memo_held -= len(old[0])
        _SHA_MEMO[id(data)] = (data, digest)
        _sha_memo_held += len(data)
    return digest


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: the form every hash is taken over."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_json(obj: Any) -> str:
    return sha256_bytes(canonical_json(obj).encode("utf-8"))


def hash_path(path: str | os.PathLike) -> dict[str, Any]:
    """sha256 of a file, or of the sorted (relative path, sha256) list of a folder."""
    p = Path(path)
    if p.is_dir():
        entries = sorted(
            (str(f.relative_to(p)), sha256_file(f))
            for f in p.rglob("*")
            if f.is_file() and not f.name.endswith(RECORD_SUFFIX)
            # Snakemake drops .snakemake_timestamp into a directory output after the
            # job (after its record was written): not part of the content
            and f.name != ".snakemake_timestamp"
        )
        return {"path": str(path), "kind": "dir", "n_files": len(entries),
                "sha256": sha256_json(entries)}
    if p.is_file():
        return {"path": str(path), "kind": "file", "bytes": p.stat().st_size,
                "sha256": sha256_file(p)}
    return {"path": str(path), "kind": "missing", "sha256": None}


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temp path beside `path`; rename it over `path` only on success.

    A crashed job therefore never leaves a half-written output that a later
    run could mistake for a finished one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=suffix or path.suffix or ".tmp", dir=path.parent
    )
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # mkstemp creates 0600 files; give outputs the usual umask-derived mode
        os.chmod(tmp_path, 0o666 & ~_UMASK)
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_json_atomic(path: str | os.PathLike, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def write_jsonl_atomic(path: str | os.PathLike, rows: Iterable[dict]) -> None:
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(canonical_json(row) + "\n")


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
    return rows


def write_tsv_atomic(path: str | os.PathLike, frame) -> None:
    """Write a pandas DataFrame as TSV atomically (no index, stable float format)."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, sep="\t", index=False, lineterminator="\n")

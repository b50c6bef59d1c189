"""Resumable, verified HTTP downloads.

`download(url, dest, md5=..., sha256=...)`:
- resumes from `<dest>.part` with an HTTP `Range` request (falls back to a full
  download when the server ignores the range),
- retries transient failures (connection drops, timeouts, 429/5xx, a body shorter
  than announced) with exponential backoff,
- verifies md5 and/or sha256 of the finished file; on a mismatch the partial file
  is deleted and `ChecksumMismatch` names the file, the expected and the actual hash,
- moves the verified file into place atomically (`os.replace`) and writes a receipt
  `<dest>.verified.json`, so a verified file is never downloaded (or re-hashed) again.

When no checksum is published, `fetch(..., pins=...)` records the sha256 of the
first verified download in a pin file (trust on first use); later downloads must
match it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from judgeaudit.io import write_json_atomic

log = logging.getLogger("judgeaudit.datasets.download")

CHUNK = 1 << 20
RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504}
RECEIPT_SUFFIX = ".verified.json"


class DownloadError(RuntimeError):
    """A download that cannot complete (permanent HTTP error, retries exhausted)."""


class ChecksumMismatch(DownloadError):
    """The finished file does not have the expected hash (partial file deleted)."""


class _Transient(Exception):
    """Internal: a failure worth retrying."""


def hash_file(path: str | os.PathLike) -> dict[str, str]:
    """md5 and sha256 of a file in one pass."""
    md5, sha = hashlib.md5(usedforsecurity=False), hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            md5.update(block)
            sha.update(block)
    return {"md5": md5.hexdigest(), "sha256": sha.hexdigest()}


def _expected(md5: str | None, sha256: str | None) -> dict[str, str]:
    exp = {}
    if md5:
        exp["md5"] = md5.strip().lower()
    if sha256:
        exp["sha256"] = sha256.strip().lower()
    return exp


def verify(path: str | os.PathLike, md5: str | None = None, sha256: str | None = None,
           *, delete_on_mismatch: bool = False, label: str | None = None) -> dict[str, str]:
    """Hash `path` and compare with the expected md5/sha256; raise ChecksumMismatch
    naming expected vs actual (deleting the file first if asked)."""
    actual = hash_file(path)
    for algo, want in _expected(md5, sha256).items():
        if actual[algo] != want:
            if delete_on_mismatch:
                Path(path).unlink(missing_ok=True)
            raise ChecksumMismatch(
                f"checksum mismatch for {label or path}: expected {algo} {want}, "
                f"got {actual[algo]}"
                + ("; the partial file was deleted" if delete_on_mismatch else "")
            )
    return actual


def receipt_path(dest: str | os.PathLike) -> Path:
    dest = Path(dest)
    return dest.with_name(dest.name + RECEIPT_SUFFIX)


def _read_receipt(dest: Path) -> dict[str, Any] | None:
    rp = receipt_path(dest)
    if not (dest.is_file() and rp.is_file()):
        return None
    try:
        rec = json.loads(rp.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    st = dest.stat()
    if rec.get("bytes") != st.st_size or rec.get("mtime_ns") != st.st_mtime_ns:
        return None
    return rec


def _receipt_matches(rec: Mapping[str, Any], exp: Mapping[str, str]) -> bool:
    return all(rec.get(algo) == want for algo, want in exp.items())


@dataclass
class _Progress:
    offset: int
    total: int | None


def _parse_content_range(value: str | None) -> tuple[int, int | None] | None:
    # "bytes 100-199/1000" or "bytes 100-199/*"
    if not value or not value.startswith("bytes "):
        return None
    try:
        span, _, total = value[6:].partition("/")
        start = int(span.split("-")[0])
        return start, (None if total.strip() == "*" else int(total))
    except ValueError:
        return None


def _attempt(client: httpx.Client, url: str, part: Path, timeout: float) -> _Progress:
    offset = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={offset}-"} if offset else {}
    try:
        with client.stream("GET", url, headers=headers, timeout=timeout) as resp:
            status = resp.status_code
            if status == 416 and offset:
                # Range not satisfiable: the partial file already holds every byte
                # (or more); verification decides.
                return _Progress(offset, offset)
            if status in RETRY_STATUS:
                raise _Transient(f"HTTP {status}")
            if status >= 400:
                raise DownloadError(
                    f"{url}: HTTP {status} {resp.reason_phrase}; not retrying "
                    "(check the URL, or whether the dataset needs a manual download)"
                )
            if status == 206:
                cr = _parse_content_range(resp.headers.get("content-range"))
                if cr is None or cr[0] != offset:
                    raise _Transient(f"bad Content-Range {resp.headers.get('content-range')!r}")
                total = cr[1]
                mode = "ab"
            else:  # 200: the server ignored Range (or there was none): start over
                if offset:
                    log.info("%s: server ignored the Range request; restarting", url)
                offset = 0
                length = resp.headers.get("content-length")
                total = int(length) if length and length.isdigit() else None
                mode = "wb"
            with open(part, mode) as fh:
                for block in resp.iter_bytes():  # as received: a drop keeps what arrived
                    fh.write(block)
    except httpx.TransportError as exc:  # connection drop, timeout, protocol error
        raise _Transient(f"{type(exc).__name__}: {exc}") from exc
    size = part.stat().st_size
    if total is not None and size < total:
        raise _Transient(f"connection closed at byte {size} of {total}")
    return _Progress(size, total)


def download(
    url: str,
    dest: str | os.PathLike,
    *,
    md5: str | None = None,
    sha256: str | None = None,
    retries: int = 5,
    backoff_s: float = 1.0,
    timeout_s: float = 60.0,
    client: httpx.Client | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Fetch `url` to `dest`, resuming, retrying and verifying; return the receipt
    (url, bytes, md5, sha256, attempts, resumed_from, reused)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    exp = _expected(md5, sha256)
    rec = _read_receipt(dest)
    if rec is not None and _receipt_matches(rec, exp):
        log.info("%s: already downloaded and verified; not fetching again", dest)
        return dict(rec, reused=True)
    if dest.exists():
        # A finished file without a matching receipt: verify it instead of refetching.
        try:
            hashes = verify(dest, md5, sha256, label=str(dest))
        except ChecksumMismatch as exc:
            log.warning("%s; fetching again", exc)
            dest.unlink()
        else:
            return _write_receipt(dest, url, hashes, attempts=0, resumed_from=0, reused=True)

    part = dest.with_name(dest.name + ".part")
    resumed_from = part.stat().st_size if part.exists() else 0
    own_client = client is None
    client = client or httpx.Client(follow_redirects=True)
    attempts = 0
    try:
        while True:
            attempts += 1
            try:
                _attempt(client, url, part, timeout_s)
                break
            except _Transient as exc:
                if attempts > retries:
                    raise DownloadError(
                        f"{url}: giving up after {attempts} attempts ({exc}); the partial "
                        f"file {part} is kept so the next run resumes"
                    ) from None
                wait = backoff_s * 2 ** (attempts - 1)
                log.warning("%s: %s; retry %d/%d in %.1fs", url, exc, attempts, retries, wait)
                sleep(wait)
    finally:
        if own_client:
            client.close()
    hashes = verify(part, md5, sha256, delete_on_mismatch=True, label=f"{dest.name} from {url}")
    os.replace(part, dest)
    return _write_receipt(dest, url, hashes, attempts=attempts, resumed_from=resumed_from,
                          reused=False)


def _write_receipt(dest: Path, url: str, hashes: Mapping[str, str], **info: Any) -> dict:
    st = dest.stat()
    rec = {"url": url, "path": str(dest), "bytes": st.st_size, "mtime_ns": st.st_mtime_ns,
           **hashes}
    write_json_atomic(receipt_path(dest), rec)
    return dict(rec, **info)


# ---- pins: trust-on-first-use sha256 for files without a published checksum ----

def load_pins(path: str | os.PathLike | None) -> dict[str, str]:
    if not path or not Path(path).is_file():
        return {}
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object mapping URL -> sha256")
    return {str(k): str(v) for k, v in data.items()}


def fetch(
    url: str,
    dest: str | os.PathLike,
    *,
    md5: str | None = None,
    sha256: str | None = None,
    pins: str | os.PathLike | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """`download` plus the pin file: without a published checksum, the sha256 pinned
    for `url` is enforced, and a first download records its sha256 there."""
    pinned = load_pins(pins).get(url)
    if not md5 and not sha256 and pinned:
        sha256 = pinned
    rec = download(url, dest, md5=md5, sha256=sha256, **kwargs)
    if pins and not pinned:
        table = load_pins(pins)
        table[url] = rec["sha256"]
        write_json_atomic(pins, dict(sorted(table.items())))
        log.info("pinned sha256 %s for %s in %s", rec["sha256"], url, pins)
    return rec

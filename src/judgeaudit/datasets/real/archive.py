"""Safe extraction of zip and tar archives.

Every member is checked before anything is written: absolute paths, `..`
components, links whose target lies outside the destination, and device /
FIFO members are refused with `UnsafeArchiveError` naming the member. The
archive is extracted into a temporary folder beside the destination and moved
into place only when every member was written.
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath


class UnsafeArchiveError(ValueError):
    """An archive member that would escape the target or is not a plain file/dir."""


class ArchiveError(ValueError):
    """An archive that cannot be read (unknown format, truncated, corrupt)."""


def _check_name(archive: Path, name: str) -> PurePosixPath:
    norm = name.replace("\\", "/")
    if norm.startswith("/") or (len(norm) > 1 and norm[1] == ":"):
        raise UnsafeArchiveError(f"{archive}: member {name!r} has an absolute path; refused")
    parts = PurePosixPath(norm).parts
    if ".." in parts:
        raise UnsafeArchiveError(f"{archive}: member {name!r} contains '..'; refused")
    return PurePosixPath(*[p for p in parts if p not in ("", ".")])


def _check_link(archive: Path, name: str, rel: PurePosixPath, target: str, hard: bool) -> None:
    if target.startswith("/") or (len(target) > 1 and target[1] == ":"):
        raise UnsafeArchiveError(
            f"{archive}: member {name!r} is a link to the absolute path {target!r}; refused"
        )
    # Hard links in tar are relative to the archive root; symlinks to the link's folder.
    base = "" if hard else str(rel.parent)
    resolved = posixpath.normpath(posixpath.join(base, target))
    if resolved == ".." or resolved.startswith("../"):
        raise UnsafeArchiveError(
            f"{archive}: member {name!r} links to {target!r}, outside the target folder; refused"
        )


def check_members(archive: str | os.PathLike) -> list[str]:
    """Names of the members of `archive`, after checking every one (raises on the first
    unsafe member)."""
    archive = Path(archive)
    names = []
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                rel = _check_name(archive, info.filename)
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    target = zf.read(info).decode("utf-8", "replace")
                    _check_link(archive, info.filename, rel, target, hard=False)
                elif stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                    raise UnsafeArchiveError(
                        f"{archive}: member {info.filename!r} is a special file; refused"
                    )
                names.append(info.filename)
        return names
    with _open_tar(archive) as tf:
        for m in tf.getmembers():
            names.append(_check_tar_member(archive, m))
    return names


def _open_tar(archive: Path) -> tarfile.TarFile:
    try:
        return tarfile.open(archive, "r:*")
    except (tarfile.TarError, OSError) as exc:
        raise ArchiveError(f"{archive}: not a readable zip or tar archive ({exc})") from exc


def _check_tar_member(archive: Path, m: tarfile.TarInfo) -> str:
    rel = _check_name(archive, m.name)
    if m.ischr() or m.isblk() or m.isfifo() or m.isdev():
        raise UnsafeArchiveError(f"{archive}: member {m.name!r} is a device or FIFO; refused")
    if m.issym() or m.islnk():
        _check_link(archive, m.name, rel, m.linkname, hard=m.islnk())
    elif not (m.isfile() or m.isdir()):
        raise UnsafeArchiveError(f"{archive}: member {m.name!r} has an unsupported type; refused")
    return m.name


def stream_extract_tar(fileobj, dest: str | os.PathLike, wanted: set[str],
                       label: str = "<stream>") -> set[str]:
    """Extract only the members named in `wanted` from a (possibly compressed) tar read
    as a stream (`fileobj`, e.g. an HTTP body), checking each member as it passes; the
    rest is skipped without being written. Returns the names extracted."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    got = set()
    try:
        with tarfile.open(fileobj=fileobj, mode="r|*") as tf:
            for m in tf:
                norm = str(_check_name(Path(label), m.name))
                if norm not in wanted:
                    continue
                _check_tar_member(Path(label), m)
                if m.isfile():
                    tf.extract(m, dest, filter="data")
                    got.add(norm)
                if got == wanted:
                    break
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ArchiveError(f"{label}: streamed extraction failed ({exc})") from exc
    return got


def safe_extract(
    archive: str | os.PathLike,
    dest: str | os.PathLike,
    *,
    select: Callable[[str], bool] | None = None,
) -> Path:
    """Extract `archive` (zip or any tar compression) into `dest` after checking every
    member; `select(name)` keeps only some members. `dest` is replaced atomically."""
    archive, dest = Path(archive), Path(dest)
    if not archive.is_file():
        raise ArchiveError(f"{archive}: archive not found")
    check_members(archive)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    if select is None or select(info.filename):
                        try:
                            zf.extract(info, tmp)
                        except (zipfile.BadZipFile, OSError) as exc:
                            raise ArchiveError(
                                f"{archive}: member {info.filename!r} could not be read ({exc})"
                            ) from exc
        else:
            with _open_tar(archive) as tf:
                members = [m for m in tf.getmembers() if select is None or select(m.name)]
                try:
                    tf.extractall(tmp, members=members, filter="data")
                except (tarfile.TarError, OSError, EOFError) as exc:
                    raise ArchiveError(f"{archive}: extraction failed ({exc})") from exc
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def extract_once(archive: str | os.PathLike, dest: str | os.PathLike) -> Path:
    """`safe_extract` unless a marker beside `dest` says this exact archive (by sha256)
    was already extracted there."""
    from judgeaudit.io import sha256_file, write_json_atomic

    archive, dest = Path(archive), Path(dest)
    marker = dest.with_name(dest.name + ".extracted.json")
    digest = sha256_file(archive)
    if dest.is_dir() and marker.is_file():
        try:
            if json.loads(marker.read_text(encoding="utf-8"))["archive_sha256"] == digest:
                return dest
        except (KeyError, json.JSONDecodeError):
            pass
    safe_extract(archive, dest)
    write_json_atomic(marker, {"archive": str(archive), "archive_sha256": digest})
    return dest

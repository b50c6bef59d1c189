"""Safe extraction: unsafe members are refused with the member named; good
archives (zip and tar.gz in the corpora's layouts) extract completely."""

import io
import tarfile
import zipfile

import pytest

from judgeaudit.datasets.real.archive import (
    ArchiveError,
    UnsafeArchiveError,
    safe_extract,
    stream_extract_tar,
)
from judgeaudit.testing.real_fixtures import ravdess_tree, tar_dir, zip_dir


def _zip(path, members):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members:
            zf.writestr(name, data)
    return path


def _tar(path, members):
    with tarfile.open(path, "w:gz") as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _info(name, *, type_=tarfile.REGTYPE, size=0, linkname=""):
    ti = tarfile.TarInfo(name)
    ti.type, ti.size, ti.linkname = type_, size, linkname
    return ti


def test_zip_slip_is_refused_and_nothing_is_written(tmp_path):
    arc = _zip(tmp_path / "evil.zip", [("Actor_01/ok.wav", b"x"), ("../../evil.sh", b"rm")])
    with pytest.raises(UnsafeArchiveError, match=r"member '../../evil.sh' contains '..'"):
        safe_extract(arc, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not (tmp_path.parent / "evil.sh").exists()


def test_absolute_member_is_refused(tmp_path):
    arc = _zip(tmp_path / "abs.zip", [("/etc/passwd", b"x")])
    with pytest.raises(UnsafeArchiveError, match="member '/etc/passwd' has an absolute path"):
        safe_extract(arc, tmp_path / "out")


def test_tar_symlink_escaping_target_is_refused(tmp_path):
    arc = _tar(tmp_path / "link.tar.gz", [
        (_info("data/link", type_=tarfile.SYMTYPE, linkname="../../outside"), None)])
    with pytest.raises(UnsafeArchiveError, match="member 'data/link' links to '../../outside'"):
        safe_extract(arc, tmp_path / "out")


def test_tar_symlink_to_absolute_path_is_refused(tmp_path):
    arc = _tar(tmp_path / "abs.tar.gz", [
        (_info("data/passwd", type_=tarfile.SYMTYPE, linkname="/etc/passwd"), None)])
    with pytest.raises(UnsafeArchiveError, match="member 'data/passwd' is a link to the absolute"):
        safe_extract(arc, tmp_path / "out")


def test_tar_hardlink_escaping_is_refused(tmp_path):
    arc = _tar(tmp_path / "hard.tar.gz", [
        (_info("a/b", type_=tarfile.LNKTYPE, linkname="../secret"), None)])
    with pytest.raises(UnsafeArchiveError, match="member 'a/b' links to '../secret'"):
        safe_extract(arc, tmp_path / "out")


@pytest.mark.parametrize("type_", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_tar_device_files_are_refused(tmp_path, type_):
    arc = _tar(tmp_path / "dev.tar.gz", [(_info("dev/sda", type_=type_), None)])
    with pytest.raises(UnsafeArchiveError, match="member 'dev/sda' is a device or FIFO"):
        safe_extract(arc, tmp_path / "out")


def test_internal_symlink_is_allowed(tmp_path):
    arc = _tar(tmp_path / "ok.tar.gz", [
        (_info("d/real.txt", size=2), b"hi"),
        (_info("d/alias.txt", type_=tarfile.SYMTYPE, linkname="real.txt"), None)])
    out = safe_extract(arc, tmp_path / "out")
    assert (out / "d" / "alias.txt").read_text() == "hi"


def test_ravdess_zip_and_tar_extract_completely(tmp_path):
    src = ravdess_tree(tmp_path / "src", actors=(1,), emotions=(1, 2))
    files = sorted(p.relative_to(src) for p in src.rglob("*.wav"))
    for arc in (zip_dir(src, tmp_path / "r.zip"), tar_dir(src, tmp_path / "r.tar.gz")):
        out = safe_extract(arc, tmp_path / f"out_{arc.suffix}")
        assert sorted(p.relative_to(out) for p in out.rglob("*.wav")) == files


def test_not_an_archive_is_a_clear_error(tmp_path):
    bad = tmp_path / "x.zip"
    bad.write_bytes(b"this is not an archive")
    with pytest.raises(ArchiveError, match="not a readable zip or tar archive"):
        safe_extract(bad, tmp_path / "out")


def test_stream_extract_keeps_only_wanted_members(tmp_path):
    arc = _tar(tmp_path / "a.tar.gz", [
        (_info("audio/test/a.wav", size=1), b"a"), (_info("audio/test/b.wav", size=1), b"b")])
    with open(arc, "rb") as fh:
        got = stream_extract_tar(fh, tmp_path / "out", {"audio/test/b.wav"})
    assert got == {"audio/test/b.wav"}
    assert (tmp_path / "out/audio/test/b.wav").read_bytes() == b"b"
    assert not (tmp_path / "out/audio/test/a.wav").exists()


def test_stream_extract_refuses_unsafe_member(tmp_path):
    arc = _tar(tmp_path / "a.tar.gz", [(_info("../x.wav", size=1), b"a")])
    with open(arc, "rb") as fh, pytest.raises(UnsafeArchiveError, match="'../x.wav'"):
        stream_extract_tar(fh, tmp_path / "out", {"x.wav"})


def test_zip_symlink_escaping_target_is_refused(tmp_path):
    import stat

    info = zipfile.ZipInfo("Actor_01/link.wav")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    arc = tmp_path / "link.zip"
    with zipfile.ZipFile(arc, "w") as zf:
        zf.writestr(info, "../../../etc/passwd")
    with pytest.raises(UnsafeArchiveError, match="member 'Actor_01/link.wav' links to"):
        safe_extract(arc, tmp_path / "out")

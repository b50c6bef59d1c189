"""Resumable, verified downloads against a loopback HTTP server (Range support,
injected connection drops and HTTP errors)."""

import hashlib
import json

import pytest

from judgeaudit.datasets.real.download import (
    ChecksumMismatch,
    DownloadError,
    download,
    fetch,
    receipt_path,
)
from judgeaudit.testing.real_fixtures import serve

PAYLOAD = bytes(range(256)) * 4000  # ~1 MB, not repetitive within a chunk boundary
MD5 = hashlib.md5(PAYLOAD).hexdigest()
SHA = hashlib.sha256(PAYLOAD).hexdigest()


def no_sleep(_):
    return None


def test_clean_download_verifies_and_writes_receipt(tmp_path):
    with serve() as (url, st):
        st.files["/a.zip"] = PAYLOAD
        rec = download(f"{url}/a.zip", tmp_path / "a.zip", md5=MD5, sleep=no_sleep)
    assert (tmp_path / "a.zip").read_bytes() == PAYLOAD
    assert rec["md5"] == MD5 and rec["sha256"] == SHA and rec["attempts"] == 1
    assert not (tmp_path / "a.zip.part").exists()
    assert json.loads(receipt_path(tmp_path / "a.zip").read_text())["sha256"] == SHA
    assert st.requests == [("/a.zip", None)]


def test_dropped_connection_is_resumed_with_range(tmp_path):
    with serve() as (url, st):
        st.files["/a.zip"] = PAYLOAD
        st.drop_after["/a.zip"] = 300_000  # first response dies after 300 kB
        rec = download(f"{url}/a.zip", tmp_path / "a.zip", sha256=SHA, sleep=no_sleep)
    assert (tmp_path / "a.zip").read_bytes() == PAYLOAD
    assert rec["attempts"] == 2
    assert st.requests[0] == ("/a.zip", None)
    path, rng = st.requests[1]
    assert rng is not None and rng.startswith("bytes=") and int(rng[6:-1]) >= 300_000 - 65536


def test_partial_file_from_an_earlier_run_is_resumed(tmp_path):
    (tmp_path / "a.zip.part").write_bytes(PAYLOAD[:123_456])
    with serve() as (url, st):
        st.files["/a.zip"] = PAYLOAD
        rec = download(f"{url}/a.zip", tmp_path / "a.zip", md5=MD5, sleep=no_sleep)
    assert st.requests == [("/a.zip", "bytes=123456-")]
    assert rec["resumed_from"] == 123_456
    assert (tmp_path / "a.zip").read_bytes() == PAYLOAD


def test_server_ignoring_range_restarts_from_zero(tmp_path):
    (tmp_path / "a.zip.part").write_bytes(b"garbage-that-would-corrupt")
    with serve() as (url, st):
        st.files["/a.zip"] = PAYLOAD
        st.ignore_range = True
        download(f"{url}/a.zip", tmp_path / "a.zip", sha256=SHA, sleep=no_sleep)
    assert (tmp_path / "a.zip").read_bytes() == PAYLOAD


def test_checksum_mismatch_deletes_partial_and_names_both_hashes(tmp_path):
    wrong = "0" * 32
    with serve() as (url, st):
        st.files["/a.zip"] = PAYLOAD
        with pytest.raises(ChecksumMismatch) as err:
            download(f"{url}/a.zip", tmp_path / "a.zip", md5=wrong, sleep=no_sleep)
    msg = str(err.value)
    assert f"expected md5 {wrong}" in msg and f"got {MD5}" in msg and "a.zip" in msg
    assert not (tmp_path / "a.zip.part").exists()
    assert not (tmp_path / "a.zip").exists()


def test_transient_errors_are_retried_with_backoff(tmp_path):
    waits = []
    with serve() as (url, st):
        st.files["/a.zip"] = PAYLOAD
        st.fail_status["/a.zip"] = [503, 502]
        rec = download(f"{url}/a.zip", tmp_path / "a.zip", md5=MD5, backoff_s=0.5,
                       sleep=waits.append)
    assert rec["attempts"] == 3 and waits == [0.5, 1.0]


def test_permanent_error_is_not_retried(tmp_path):
    with serve() as (url, st), pytest.raises(DownloadError, match="HTTP 404"):
        download(f"{url}/missing.zip", tmp_path / "m.zip", sleep=no_sleep)
    assert len(st.requests) == 1


def test_retries_exhausted_keeps_partial_for_next_run(tmp_path):
    with serve() as (url, st):
        st.files["/a.zip"] = PAYLOAD
        st.fail_status["/a.zip"] = [500, 500, 500]
        with pytest.raises(DownloadError, match="giving up after 3 attempts"):
            download(f"{url}/a.zip", tmp_path / "a.zip", retries=2, sleep=no_sleep)


def test_verified_file_is_never_fetched_again(tmp_path):
    with serve() as (url, st):
        st.files["/a.zip"] = PAYLOAD
        download(f"{url}/a.zip", tmp_path / "a.zip", md5=MD5, sleep=no_sleep)
        rec = download(f"{url}/a.zip", tmp_path / "a.zip", md5=MD5, sleep=no_sleep)
    assert rec["reused"] is True
    assert len(st.requests) == 1


def test_pin_file_records_first_sha256_and_enforces_it(tmp_path):
    pins = tmp_path / "pins.json"
    with serve() as (url, st):
        st.files["/idx.jsonl"] = PAYLOAD
        fetch(f"{url}/idx.jsonl", tmp_path / "one" / "idx.jsonl", pins=pins, sleep=no_sleep)
        assert json.loads(pins.read_text()) == {f"{url}/idx.jsonl": SHA}
        st.files["/idx.jsonl"] = PAYLOAD[:-1] + b"X"  # upstream changed silently
        with pytest.raises(ChecksumMismatch, match=f"expected sha256 {SHA}"):
            fetch(f"{url}/idx.jsonl", tmp_path / "two" / "idx.jsonl", pins=pins,
                  sleep=no_sleep)

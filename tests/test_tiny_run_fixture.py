"""The shared tiny run is built at most once per session, and a failed, interrupted or
dead build fails every waiting test at once with its error (tests/conftest.py
`build_once`): no rebuild loop, no wait on a lock nobody holds."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import build_once
from filelock import FileLock

HERE = Path(__file__).resolve().parent


def _never_called():
    raise AssertionError("built a second time")


def _lock_is_free(base: Path) -> None:
    with FileLock(str(base / "tiny_run.lock"), timeout=10):
        pass


def test_a_finished_build_is_reused(tmp_path):
    assert build_once(tmp_path, lambda: {"ok": True, "root": "r"}) == {"ok": True, "root": "r"}
    assert build_once(tmp_path, _never_called) == {"ok": True, "root": "r"}


def test_a_failed_build_is_reported_to_every_waiter_and_not_rebuilt(tmp_path):
    def fails():
        raise RuntimeError("the tiny run failed: rule x segfaulted")

    first = build_once(tmp_path, fails)
    assert first["ok"] is False and "rule x segfaulted" in first["error"]
    assert build_once(tmp_path, _never_called) == first


def test_an_interrupted_build_is_recorded_then_raised(tmp_path):
    def interrupted():
        raise KeyboardInterrupt("Timeout (>1200.0s) from pytest-timeout")

    with pytest.raises(KeyboardInterrupt):
        build_once(tmp_path, interrupted)
    _lock_is_free(tmp_path)
    info = build_once(tmp_path, _never_called)
    assert info["ok"] is False and "KeyboardInterrupt" in info["error"], info


def test_a_worker_dying_mid_build_fails_the_next_waiter_at_once(tmp_path):
    (tmp_path / "tiny_run.log").write_text("rule synth_speaker:\n... the last lines\n")
    code = ("import os, sys; from pathlib import Path; from conftest import build_once; "
            "build_once(Path(sys.argv[1]), lambda: os._exit(9))")
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=HERE,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                             [str(HERE), os.environ.get("PYTHONPATH", "")])),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 9, res.stderr  # died holding the lock, no result written
    assert not (tmp_path / "tiny_run.json").exists()
    _lock_is_free(tmp_path)  # the OS released it
    info = build_once(tmp_path, _never_called)
    assert info["ok"] is False, info
    assert "died" in info["error"] and "not built again" in info["error"], info
    assert "the last lines" in info["error"]  # the log's tail
    assert build_once(tmp_path, _never_called) == info

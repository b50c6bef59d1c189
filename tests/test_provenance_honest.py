"""Honest provenance: `git_dirty` is true only when tracked files differ from HEAD,
and a workflow run on a clean checkout writes nothing outside ignored folders, so
its records say `git_dirty: False`."""

import shutil
import subprocess

import pytest

from judgeaudit.provenance import git_state


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def repo(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    r = tmp_path / "r"
    r.mkdir()
    _git(r, "init", "-q")
    (r / ".gitignore").write_text("/results/\n")
    (r / "tracked.txt").write_text("a\n")
    _git(r, "add", "-A")
    _git(r, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    return r


def test_untracked_and_ignored_files_do_not_make_a_checkout_dirty(repo):
    assert git_state(repo)["git_dirty"] is False
    (repo / "results").mkdir()
    (repo / "results" / "out.tsv").write_text("x\n")  # ignored
    (repo / "benchmarks_new.tsv").write_text("x\n")  # untracked
    state = git_state(repo)
    assert state["git_dirty"] is False
    assert len(state["git_commit"]) == 40


def test_a_changed_tracked_file_makes_it_dirty(repo):
    (repo / "tracked.txt").write_text("b\n")
    assert git_state(repo)["git_dirty"] is True
    _git(repo, "add", "tracked.txt")  # staged counts too
    assert git_state(repo)["git_dirty"] is True


def test_outside_a_checkout_is_unknown(tmp_path):
    assert git_state(tmp_path)["git_dirty"] in (None, False)  # no checkout: None
    assert git_state(tmp_path / "missing")["git_commit"] is None


def test_no_rule_writes_into_a_tracked_folder(repo_root):
    """Every path a rule declares (output/log/benchmark) starts in a folder the
    project ignores (data/ results/ figures/ logs/ cache/)."""
    import re

    allowed = ("data/", "results/", "figures/", "logs/", "cache/", "{")
    bad = []
    for smk in sorted((repo_root / "rules").glob("*.smk")):
        text = smk.read_text()
        for m in re.finditer(r"^\s+(benchmark|log):\s*\n\s+f?\"([^\"]+)\"", text, re.M):
            if not m.group(2).startswith(allowed):
                bad.append((smk.name, m.group(1), m.group(2)))
    assert not bad, bad

# The run on a clean clone (records say git_dirty False, `git status` stays empty) is
# tests/test_report_paper.py::test_records_on_a_clean_clone_say_not_dirty.

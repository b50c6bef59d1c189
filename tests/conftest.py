import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def snakemake_exe() -> str:
    exe = VENV_BIN / "snakemake"
    return str(exe) if exe.exists() else "snakemake"


@pytest.fixture(autouse=True)
def _no_display(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    yield


os.environ.setdefault("MPLBACKEND", "Agg")


def _find_emodb() -> Path | None:
    """The real EmoDB development copy (never part of the default workflow).

    Looked up from $JUDGEAUDIT_EMODB, then beside the checkout (../shared/dev-data,
    a path relative to the repository). Tests that need real speech skip, naming
    the reason, when no copy is present."""
    candidates = [os.environ.get("JUDGEAUDIT_EMODB"),
                  REPO.parent / "shared" / "dev-data" / "emodb"]
    for cand in candidates:
        if cand and (Path(cand) / "labels.tsv").is_file():
            return Path(cand)
    return None


@pytest.fixture(scope="session")
def emodb_dir() -> Path:
    """Path to the EmoDB dev copy (labels.tsv + wav/); skips when absent."""
    found = _find_emodb()
    if found is None:
        pytest.skip("EmoDB dev copy not found (set JUDGEAUDIT_EMODB)")
    return found


# --------------------------------------------------------------------------------------
# The shared tiny run: one whole-workflow run on tests/tiny_config.yaml per test session
# (per machine under pytest-xdist: a file lock lets the first worker build it and the
# others wait for it). Workflow tests read it; tests that change code, config or outputs
# `.clone()` it and run only what differs.

TINY_CONFIG = Path(__file__).with_name("tiny_config.yaml")
TINY_BUILD_TIMEOUT_S = 3600
# Never copied into the run: environments, caches and outputs of the checkout itself.
_NOT_COPIED = {".git", ".venv", ".snakemake", ".pytest_cache", ".ruff_cache", "__pycache__",
               "data", "results", "figures", "cache", "logs", ".installed"}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def _copy_source(dest: Path) -> bool:
    """Copy this checkout's workflow source (its working tree: tracked and untracked
    files git does not ignore, so uncommitted edits are what is tested) to `dest` and
    commit it there, so provenance records say git_dirty False. Without git, a plain
    copy (returns False: tests that need a git checkout skip)."""
    if shutil.which("git") and (REPO / ".git").exists():
        files = _git(REPO, "ls-files", "-z", "--cached", "--others",
                     "--exclude-standard").split("\0")
        for rel in filter(None, files):
            src = REPO / rel
            if src.is_file():  # deleted-but-tracked files are skipped
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / rel)
        _git(dest, "init", "-q")
        _git(dest, "add", "-A")
        _git(dest, "-c", "user.name=tests", "-c", "user.email=tests@localhost",
             "-c", "commit.gpgsign=false", "commit", "-q", "-m", "tiny run source")
        return True
    shutil.copytree(REPO, dest, symlinks=True, dirs_exist_ok=True,
                    ignore=lambda d, names: [n for n in names if n in _NOT_COPIED])
    return False


class TinyRun:
    """A finished workflow run on the tiny config in a self-contained copy of the source.

    `root` holds Snakefile, rules/, scripts/, schemas/, src/, ... and the outputs; jobs run
    with PYTHONPATH=<root>/src, so code edited inside a clone is the code that runs."""

    def __init__(self, root: Path, is_git: bool, build_seconds: float | None = None):
        self.root = Path(root)
        self.is_git = is_git
        self.build_seconds = build_seconds

    @property
    def config(self) -> dict:
        """The tiny overlay (tests/tiny_config.yaml of the copy) as a dict."""
        import yaml

        return yaml.safe_load((self.root / "tests" / "tiny_config.yaml").read_text())

    @property
    def env(self) -> dict:
        return dict(os.environ, PYTHONPATH=str(self.root / "src"), MPLBACKEND="Agg")

    def configfiles(self, *overlays: Path) -> list[str]:
        return [str(self.root / "config.yaml"), str(self.root / "tests" / "tiny_config.yaml"),
                *map(str, overlays)]

    def command(self, *args: str, overlays=(), cores: int = 2) -> list[str]:
        """The `snakemake` command line `run` executes."""
        return [_snakemake_exe(), "-s", str(self.root / "Snakefile"), "--directory",
                str(self.root), "--cores", str(cores), *args,
                "--configfile", *self.configfiles(*overlays)]

    def run(self, *args: str, overlays=(), cores: int = 2, env=None,
            timeout: float = 1800) -> subprocess.CompletedProcess:
        """`snakemake` in root with config.yaml + the tiny overlay (+ `overlays`, later
        files win); returns the CompletedProcess."""
        return subprocess.run(self.command(*args, overlays=overlays, cores=cores), cwd=self.root, env=self.env if env is None else env,
                              capture_output=True, text=True, timeout=timeout)

    def snakemake(self, *args: str, check: bool = True, **kw) -> str:
        """Like `run`; returns stdout+stderr, asserting exit code 0 when `check`."""
        res = self.run(*args, **kw)
        if check:
            assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-6000:]
        return res.stdout + res.stderr

    def cli(self, *args: str, cwd: Path | None = None, env=None,
            timeout: float = 300) -> subprocess.CompletedProcess:
        """`judgeaudit <args>` with this copy's package, in root."""
        return subprocess.run([sys.executable, "-m", "judgeaudit.cli", *args],
                              cwd=cwd or self.root, env=self.env if env is None else env,
                              capture_output=True, text=True, timeout=timeout)

    def clone(self, dest: Path) -> "TinyRun":
        """A full copy (source, .git, .snakemake/, data/, results/, cache/, logs/) to
        modify freely; timestamps are kept and Snakemake's metadata is moved with it, so
        nothing in it is out of date."""
        dest = Path(dest)
        shutil.copytree(self.root, dest, symlinks=True)
        # Snakemake's metadata names each job's inputs by absolute path (the declared
        # code files live under root/src); point them at the copy, as if it had run there,
        # or every job would rerun for "Set of input files has changed".
        old, new = str(self.root), str(dest)
        for meta in (dest / ".snakemake" / "metadata").glob("*"):
            text = meta.read_text()
            if old in text:
                meta.write_text(text.replace(old, new))
        return TinyRun(dest, self.is_git)


def _snakemake_exe() -> str:
    exe = VENV_BIN / "snakemake"
    return str(exe) if exe.exists() else "snakemake"


def _build_tiny_run(base: Path) -> TinyRun:
    import resource
    import time

    root = base / "tiny_run"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    is_git = _copy_source(root)
    run = TinyRun(root, is_git)
    cmd = run.command()
    log = base / "tiny_run.log"
    t0, cpu0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    # the log is written as the build goes, so a build that dies or hangs leaves it
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=root, env=run.env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            code = proc.wait(timeout=TINY_BUILD_TIMEOUT_S)
        finally:
            if proc.poll() is None:  # timeout, pytest-timeout's signal, Ctrl-C
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    run.build_seconds = time.monotonic() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU of snakemake and every job (what an idle 2-core machine needs about half of)
    run.build_cpu_seconds = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    if code != 0:
        raise RuntimeError(f"the tiny run failed (snakemake exit {code}; full log {log}):\n"
                           + _tail(log))
    return run


def _tail(path: Path, n: int = 10000) -> str:
    return path.read_text(errors="replace")[-n:] if path.exists() else ""


def _tiny_run_info(run: TinyRun) -> dict:
    return {"ok": True, "root": str(run.root), "git": run.is_git,
            "build_seconds": round(run.build_seconds, 1),
            "build_cpu_seconds": round(run.build_cpu_seconds, 1)}


def build_once(base: Path, build) -> dict:
    """Run `build()` (returning a JSON-able dict with "ok": True) at most once for every
    process sharing `base`, and return its result -- or {"ok": False, "error": ...}:
    the exception it raised (an interrupt is recorded, then raised on), or, when a
    process died while building (its tiny_run.building marker is there, no result),
    that it died, with the tail of base/tiny_run.log. Never builds twice."""
    import json
    import time

    from filelock import FileLock

    state, marker = base / "tiny_run.json", base / "tiny_run.building"
    with FileLock(str(base / "tiny_run.lock")):  # released by the OS if its holder dies
        if not state.exists() and marker.exists():
            started = json.loads(marker.read_text())
            state.write_text(json.dumps({"ok": False, "error": (
                f"the tiny run's build (worker {started['worker']}, pid {started['pid']}) "
                f"died {time.time() - started['t']:.0f} s after it started, without a "
                f"result; not built again. Its log ({base / 'tiny_run.log'}) ends:\n"
                + _tail(base / "tiny_run.log", 6000))}))
        if not state.exists():
            marker.write_text(json.dumps({"worker": os.environ.get("PYTEST_XDIST_WORKER",
                                                                   "main"),
                                          "pid": os.getpid(), "t": time.time()}))
            try:
                info = build()
            except BaseException as exc:  # reported to every waiting worker
                state.write_text(json.dumps({
                    "ok": False,
                    "error": f"{type(exc).__name__} while building the tiny run: {exc}"}))
                if not isinstance(exc, Exception):
                    raise  # an interrupt or pytest-timeout's failure goes on as it was
            else:
                state.write_text(json.dumps(info))
        return json.loads(state.read_text())


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> TinyRun:
    """The whole workflow run once on tests/tiny_config.yaml (see TinyRun). Read only:
    tests that modify anything use `tiny_run.clone(tmp_path / ...)`. While developing a
    test, JUDGEAUDIT_TINY_RUN=<a finished tiny_run folder> reuses an earlier build.

    Built once per session whatever happens: the first worker to take the lock builds
    and writes tiny_run.json (ok, or the build's error); if the build is interrupted
    (pytest-timeout, Ctrl-C) the error is written before the interrupt goes on; if the
    building worker dies outright (the lock is released by the OS), the next worker finds
    its tiny_run.building marker without a result and records that instead of building
    again. Every tiny_run test then fails at once with that error."""
    reuse = os.environ.get("JUDGEAUDIT_TINY_RUN")
    if reuse:  # development only: a finished run from an earlier session, as is
        return TinyRun(Path(reuse), (Path(reuse) / ".git").exists())
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # shared by every worker of this session
    info = build_once(base, lambda: _tiny_run_info(_build_tiny_run(base)))
    if not info["ok"]:
        pytest.fail(info["error"], pytrace=False)
    return TinyRun(Path(info["root"]), info["git"], info["build_seconds"])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Name the tiny run's build time (the largest single cost of the suite)."""
    import json

    factory = getattr(config, "_tmp_path_factory", None)
    if factory is None or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    try:
        state = factory.getbasetemp() / "tiny_run.json"
    except Exception:  # noqa: BLE001
        return
    if state.exists():
        info = json.loads(state.read_text())
        if info.get("ok"):
            terminalreporter.write_line(
                f"tiny run (tests/tiny_config.yaml): built in {info['build_seconds']} s "
                f"wall, {info['build_cpu_seconds']} s CPU, at {info['root']}")


def pytest_collection_modifyitems(session, config, items):
    """Module order for `make test` (pytest-xdist `--dist loadscope --no-loadscope-reorder`,
    whole modules per worker, in this order): the smoke test first, so one worker starts
    building the tiny run at once; then every module that does not use the tiny run, so
    the other worker's unit tests overlap the build; then the other tiny-run modules,
    which either worker picks up once the run exists. Within each group the modules of
    LONGEST go first (longest-first balances the two workers' tails: a long module
    started last would leave the other worker idle); the rest keep their order, and
    the order within a module is kept."""
    uses = {item.nodeid.split("::")[0] for item in items if "tiny_run" in item.fixturenames}

    def rank(item) -> tuple[int, int]:
        module = item.nodeid.split("::")[0]
        if module.endswith("test_workflow_smoke.py"):
            return (0, 0)
        name = module.rsplit("/", 1)[-1]
        first = LONGEST.index(name) if name in LONGEST else len(LONGEST)
        return (2 if module in uses else 1, first)

    items.sort(key=rank)  # stable


# The longest modules, longest first (measured wall seconds on 2 workers, 2026-11-30:
# tiny-run modules: report_paper ~250, corpus_workflow ~190, slurm_cluster ~180,
# judges_paid_workflow ~130, power_workflow ~50; the others: librosa_safe ~80,
# ingest_snakemake ~80, study_b_workflow ~70, validation ~65, study_b_chance ~50,
# datasets_synth ~48, ingest_real ~42, leakage ~39). Only an order: a module missing
# here or renamed still runs, in its group's alphabetical place.
LONGEST = ("test_report_paper.py", "test_corpus_workflow.py", "test_slurm_cluster.py",
           "test_judges_paid_workflow.py", "test_power_workflow.py",
           "test_librosa_safe.py", "test_ingest_snakemake.py", "test_study_b_workflow.py",
           "test_validation.py", "test_study_b_chance.py", "test_datasets_synth.py",
           "test_ingest_real.py", "test_leakage.py")


# --------------------------------------------------------------------------------------
# JUDGEAUDIT_TEST_TIMELINE=<file>: one line per test (xdist worker, start and end in epoch
# seconds, setup+call+teardown included, nodeid) appended to <file>, to see what each
# worker did when (the suite's critical path).

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    path = os.environ.get("JUDGEAUDIT_TEST_TIMELINE")
    if not path:
        yield
        return
    import time

    t0 = time.time()
    yield
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(path, "a") as fh:
        fh.write(f"{worker}\t{t0:.2f}\t{time.time():.2f}\t{item.nodeid}\n")

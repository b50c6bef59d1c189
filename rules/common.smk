# Helpers and input functions shared by the stage files. Stage files hold rules only.
import json
from pathlib import Path

from snakemake.exceptions import WorkflowError

from judgeaudit.config import ConfigError, validate_config

REPO = Path(workflow.basedir).resolve()
PKG = REPO / "src" / "judgeaudit"

# Validate before any job starts; the error names the offending field.
try:
    _validated = validate_config(config, root=Path.cwd())
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None
config.clear()
config.update(_validated)


def package_code(*stages):
    """Package source files a rule's script imports, declared as inputs so that a
    code change re-runs the rule (Snakemake does not track imported modules).

    Always includes the shared core modules; `stages` are subpackages
    (e.g. "datasets", "judges") or single modules (e.g. "stats/ci.py")."""
    files = {PKG / name for name in ("__init__.py", "io.py", "logs.py", "config.py")}
    files |= set((PKG / "provenance").rglob("*.py"))
    for stage in stages:
        target = PKG / stage
        files |= set(target.rglob("*.py")) if target.is_dir() else {target}
    return sorted(str(f) for f in files)


def as_param(obj):
    """A config sub-tree as a canonical JSON string: a scalar param that changes
    only when the content does (dict ordering never causes a rerun)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def dataset_cfg(name):
    return config["datasets"][name]


# ---- stage target functions: each stage registers what `rule all` needs ----
TARGETS = {}


def all_targets():
    return sorted({t for stage in sorted(TARGETS) for t in TARGETS[stage]()})


# ---- datasets (owned by the datasets stage) ----
SYNTH_DATASETS = [
    "synth_emotion",
    "synth_language",
    "synth_speaker",
    "synth_naturalness",
    "synth_counterfactual",
    "synth_dialogue",
]
# >>> datasets helpers
# <<< datasets helpers

# >>> download helpers
# <<< download helpers

# >>> features helpers
# <<< features helpers

# >>> specialists helpers
# <<< specialists helpers

# >>> judges helpers
# <<< judges helpers

# >>> study_a helpers
# <<< study_a helpers

# >>> study_b helpers
# <<< study_b helpers

# Helpers and input functions of the stage and study files (rules/<stage>.smk,
# rules/study_a.smk, rules/study_b.smk), which hold rules only. The input functions are
# judgeaudit.workflow.Plan's (pure, unit-tested, config passed in); this file keeps
# config validation, the global wildcard constraints, TARGETS, package_code and the one
# input-function layer the rules call: thin wrappers and aliases of the Plan `W` (they
# read wildcards and turn a PlanError into a WorkflowError). Rules never call `W.`.
import os
import sys
import uuid
from pathlib import Path

from snakemake.exceptions import WorkflowError

# Every job process inherits this: an idle OpenBLAS worker thread sleeps after 2^4
# cycles instead of spinning (sched_yield) for 2^28 (~0.1 s) after each BLAS call.
# The spinning counted as CPU time: on a busy 2-core machine it took the emotion
# specialist's fit from ~5 s to 20-40 s of CPU. Only idle waiting changes, never how
# work is split across the (Snakemake-set OPENBLAS_NUM_THREADS) threads, so every
# value is bit-identical. A value set in the environment is kept.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

from judgeaudit.audit import plan as _audit_plan
from judgeaudit.config import ConfigError, check_duplicate_keys, validate_config
from judgeaudit.datasets.validate import config_audio_roots
from judgeaudit.judges.adapters import providers
from judgeaudit.judges.budget import budget_scope, missing_keys
from judgeaudit.locks import clear_stale_locks, register_owner
from judgeaudit.vocab import alternation
from judgeaudit.vocab import study_a as vocab_a
from judgeaudit.vocab import study_b as vocab_b
from judgeaudit.vocab.datasets import (
    ATTRIBUTE_DATASETS,
    DERIVED_DATASETS,
    REAL_DATASETS,
    SYNTH_DATASETS,
)
from judgeaudit.vocab.datasets import aux_table_files
from judgeaudit.vocab.specialists import SPECIALIST_KINDS
from judgeaudit.study_a import outputs as study_a_outputs
from judgeaudit.study_b import outputs as study_b_outputs
from judgeaudit.workflow import (
    JUDGE_COST_FIELDS,
    JUDGE_PREFLIGHT,
    STUDY_A_FIGURES,
    STUDY_A_TABLES,
    VALIDATION_RUNS,
    Plan,
    PlanError,
    as_param,
    validation_run,
)
from judgeaudit.workflow import study_b_kind
from judgeaudit.workflow import figures as figure_files
from judgeaudit.workflow import tables as table_files

REPO = Path(workflow.basedir).resolve()
PKG = REPO / "src" / "judgeaudit"
# The source as rules see it: relative to the working directory when it lies inside
# it (the usual run folder holding its own source), so the paths in inputs and params
# (templates, code) read the same after the folder is copied or moved, and nothing
# reruns for it; absolute when the source lives elsewhere (`--directory`).
_HERE = Path.cwd().resolve()
SOURCE = REPO.relative_to(_HERE) if REPO.is_relative_to(_HERE) else REPO

# A crashed run (SIGKILL, OOM) leaves .snakemake/locks behind; remove them only when
# their owner is provably gone (judgeaudit/locks.py: owner records with host, boot id,
# PID namespace and pid, and no live Snakemake process here works in this directory),
# so a plain rerun needs no --unlock and a live run's locks always stand. The main
# process then records itself as an owner (removed when it exits).
_removed_locks, _why = clear_stale_locks(Path.cwd())
if _removed_locks or (workflow.is_main_process and _why.startswith("locks held")):
    print(f"judgeaudit: {_why}", file=sys.stderr)
if workflow.is_main_process:
    try:
        register_owner(Path.cwd())
    except OSError as exc:
        print(
            f"judgeaudit: cannot write the lock owner record ({exc})", file=sys.stderr
        )

# Validate before any job starts; the error names the offending field.
try:
    # Snakemake's YAML loader keeps the last of duplicated keys silently: re-read
    # the config files strictly so a duplicate is an error naming file, key and lines.
    check_duplicate_keys(workflow.configfiles)
    _validated = validate_config(config, root=Path.cwd())
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None
config.clear()
config.update(_validated)
# Every judge call of the run (judge jobs, Study B writers, audits) sends only audio
# that resolves inside these folders (judgeaudit.judges.request.load_request_audio).
os.environ.update(
    JUDGEAUDIT_AUDIO_ROOTS=os.pathsep.join(
        str(p) for p in config_audio_roots(config, Path.cwd())
    )
)


from judgeaudit.codedeps import closure as _code_closure

# Software environment of each job under `snakemake --use-conda` (ignored otherwise):
# the package with the exact pins of pyproject.toml (envs/judgeaudit.yaml). Per rule:
# Snakemake 9's global `conda:` directive instead injects an environment into the
# Snakemake process itself. The default route, `make run`, is the Makefile's .venv.
CONDA_ENV = str(REPO / "envs" / "judgeaudit.yaml")


def package_code(script):
    """Package source files `scripts/<script>` can execute, declared as a rule's
    `code=` input so a code change re-runs exactly the rules whose scripts import
    it (Snakemake does not track imported modules). Computed from the script's
    import closure within judgeaudit (judgeaudit.codedeps: AST walk, lazy imports
    included; cached in .snakemake/), never hand-kept; tests/test_codedeps.py checks
    each script-running rule declares its own script's closure."""
    files = _code_closure(
        REPO / "scripts" / script,
        PKG,
        cache_file=Path(".snakemake") / "judgeaudit-codedeps.json",
    )
    # relative to the working directory when the source lies inside it (see SOURCE)
    return [
        str(f.relative_to(_HERE)) if f.is_relative_to(_HERE) else str(f) for f in files
    ]


# One Plan per workflow load: every input function below is one of its methods.
W = Plan(config, SOURCE)

# One global set of wildcard constraints, built from the vocabularies: a wildcard name
# means the same set in every rule (`task`/`shard` are any study's; Study A's
# classification rule uses `cls_task`/`family` so it never matches a pair shard).
STUDY_A_TASKS = [
    *vocab_a.CLS_TASKS,
    *(vocab_a.pair_task(c) for c in vocab_a.PAIR_CRITERIA),
]


wildcard_constraints:
    study="A|B",
    task=alternation([*STUDY_A_TASKS, *vocab_b.TASKS]),
    shard="|".join(
        [
            alternation([*vocab_a.CLS_SHARDS, *vocab_a.PAIR_FORMATS]),
            vocab_b.shard_regex(),
        ]
    ),
    cls_task=alternation(vocab_a.CLS_TASKS),
    family=alternation(vocab_a.CLS_SHARDS),
    criterion=alternation(vocab_a.PAIR_CRITERIA),
    cue=alternation(vocab_b.CUES),
    kind=alternation(SPECIALIST_KINDS),
    dataset="[A-Za-z0-9_]+",
    judge="[A-Za-z0-9_-]+",
    protocols="[a-z]+(\\+[a-z]+)*",
    run=alternation(VALIDATION_RUNS),
    scenario="[a-z_]+",
    name=alternation(VALIDATION_RUNS.values()),


def _planned(fn):
    """A Plan method as a Snakemake-time call: a PlanError becomes a WorkflowError."""

    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except PlanError as exc:
            raise WorkflowError(str(exc)) from None

    call.__doc__ = fn.__doc__
    return call


# ---- stage target functions: each stage registers what `rule all` needs ----
TARGETS = {}


def all_targets():
    return sorted({t for stage in sorted(TARGETS) for t in TARGETS[stage]()})


# >>> datasets helpers
dataset_cfg = W.dataset_cfg
# Auxiliary tables each synthetic corpus writes beside its manifest
SYNTH_AUX_TABLES = {d: aux_table_files(d) for d in SYNTH_DATASETS}
TARGETS["datasets"] = W.synth_targets
# <<< datasets helpers

# >>> download helpers
# Real corpora (issue 3). A real dataset gets data/<name>/manifest.tsv only when
# config datasets.<name>.source is `download` or `local_dir`; otherwise the study
# uses its synthetic counterpart (judgeaudit.vocab.datasets.ATTRIBUTE_DATASETS).
REAL_AUX_TABLES = {d: aux_table_files(d) for d in (*REAL_DATASETS, *DERIVED_DATASETS)}
derived_params = W.derived_params


def derived_input(name):
    """Input of <name> (a derived real corpus): its base corpus's manifest."""
    return lambda wildcards: _planned(W.derived_input)(name)


dataset_for = _planned(W.dataset_for)
corpus_sources_param = W.corpus_sources_param


def real_ingest_input(name):
    """Input of ingest_<name>: the download receipt or the user's folder."""
    return lambda wildcards: _planned(W.real_ingest_input)(name)


def real_download_input(name):
    return lambda wildcards: W.real_download_input(name)


TARGETS["corpus_sources"] = lambda: [
    "results/tables/corpus_sources.tsv",
    "results/tables/corpus_sources.md",
]
TARGETS["download"] = W.real_targets
# <<< download helpers

# >>> features helpers
TARGETS["features"] = W.features_targets
# <<< features helpers

# >>> specialists helpers
specialist_cfg = W.specialist_cfg
specialist_model = W.specialist_model
specialist_accuracy_param = W.specialist_accuracy_param


def specialist_train_input(wildcards):
    return W.specialist_train_input(wildcards.kind, wildcards.dataset)


def specialist_whisper_eval_input(wildcards):
    return W.specialist_whisper_eval_input(wildcards.dataset)


def specialist_accuracy_input(wildcards):
    return W.specialist_accuracy_input()


TARGETS["specialists"] = W.specialists_targets
# <<< specialists helpers

# >>> judges helpers
# One id per Snakemake invocation, inherited by every job process it starts: the
# spend ledger sums judges.budget_usd over all judge jobs of this run. (setdefault:
# job processes that re-read this file keep their parent's id.)
os.environ.setdefault("JUDGEAUDIT_RUN_ID", f"run-{uuid.uuid4().hex[:12]}")
# The study's budget scope: judges.budget_usd bounds the spend the cache's ledger holds
# for it over every run: judges.budget_scope when set, else derived by the pre-flight
# from the API judges and their requests (judgeaudit.judges.budget.paid_scope) and
# handed to the judge jobs in its output.
if budget_scope(config):
    os.environ.setdefault("JUDGEAUDIT_BUDGET_SCOPE", budget_scope(config))

judge_param = _planned(W.judge_param)
judge_model_inputs = _planned(W.judge_model_inputs)
paid_judge = _planned(W.paid_judge)
paid_judge_jobs = _planned(W.paid_judge_jobs)


def judge_slots(wildcards):
    """`judge_slots` resource of one judge shard: 1 for a paid/remote provider (the
    profile caps how many run at once), 0 for an embedded CPU judge (bounded by
    --cores only)."""
    return 1 if paid_judge(wildcards.judge) else 0


def judge_preflight_gate(wildcards):
    """API judges' shards wait for the workflow-wide cost pre-flight (a temp file,
    rebuilt only when some API shard must run). Not ancient(): Snakemake 9 drops a
    job with missing output whose only updated input is ancient and rebuilt. When
    the gate is rebuilt, finished API shards of the run re-run too, replayed from
    the cache at no cost."""
    return _planned(W.judge_preflight_gate)(wildcards.judge)


def _keep_finished_judge_shards():
    """A grouped judge job (judge_shards_*) that fails on one shard keeps every other
    shard's finished response file: Snakemake removes all outputs of a failed job, so
    its clean-up skips the files the job listed as finished (judge_shard.py writes
    the list, with their sha256, beside its log; judgeaudit.judges.shard.kept_outputs).
    The next run re-runs the job for the missing shard (answers come from the cache).
    """
    import inspect

    from snakemake.jobs import Job

    from judgeaudit.judges.shard import kept_outputs

    orig = Job.cleanup
    if getattr(orig, "judgeaudit_keeps_shards", False):
        return
    if "skip_outputs" not in inspect.signature(orig).parameters:
        print(
            "judgeaudit: this Snakemake's Job.cleanup takes no skip_outputs: a failed "
            "grouped judge job removes its finished shards (they replay from the cache)",
            file=sys.stderr,
        )
        return

    async def cleanup(self, skip_outputs):
        if self.rule.name.startswith("judge_shards_") and len(self.log):
            keep = kept_outputs(self.log[0])
            skip_outputs = [*skip_outputs, *(f for f in self.output if str(f) in keep)]
        return await orig(self, skip_outputs)

    cleanup.judgeaudit_keeps_shards = True
    Job.cleanup = cleanup


_keep_finished_judge_shards()


def judges_onstart_check():
    """Before any job: every API judge with a shard to run has its key variable set."""
    pending = sorted(
        {
            job.wildcards["judge"]
            for job in workflow.dag.needrun_jobs()
            if job.rule.name in judge_group_rules()
        }
    )
    missing = missing_keys(
        config["judges"]["panel"], [j for j in pending if paid_judge(j)]
    )
    if missing:
        raise WorkflowError(
            "API key missing for judge(s) with shards to run (keys are read from the "
            "environment only): " + "; ".join(missing) + ". Nothing was started."
        )


TARGETS["judges"] = lambda: []  # responses are pulled in by the study stages


# Grouped judge jobs (issue 15): one job judges every shard of a group in one
# interpreter with one adapter (a few jobs per judge, not one per shard), writing
# each shard's responses and provenance record on its own. A group is the unit
# one edit re-runs anyway: Study A one task (its consumer, study_a_metrics_judge,
# reads all of a judge's shards); Study B the protocol shards of one cue (editing
# a cue file changes exactly those) or the two probes. Changing one shard's trials
# re-runs its group for each judge; the group's other shards are replayed from
# the judge cache (nothing paid twice).
def judge_group_rules():
    """rule name -> (study, task pattern, shard patterns, log tag)."""
    protocols = sorted(config["study_b"]["protocols"])
    return {
        "judge_shards_a_cls": ("A", "{cls_task}", vocab_a.CLS_SHARDS, "{cls_task}"),
        "judge_shards_a_pair": (
            "A",
            vocab_a.pair_task("{criterion}"),
            vocab_a.PAIR_FORMATS,
            vocab_a.pair_task("{criterion}"),
        ),
        "judge_shards_b_cue": (
            "B",
            "{task}",
            [vocab_b.protocol_shard(p, "{cue}") for p in protocols],
            "{task}/cue-{cue}",
        ),
        "judge_shards_b_probes": ("B", "{task}", vocab_b.PROBE_SHARDS, "{task}/probes"),
    }


def judge_group_task(wildcards):
    """The trial task of a grouped job (Study A pairwise groups name the criterion)."""
    wc = dict(wildcards.items())
    if "criterion" in wc:
        return vocab_a.pair_task(wc["criterion"])
    return wc["cls_task"] if "cls_task" in wc else wc["task"]


def judge_group_models(study):
    return lambda wc: judge_model_inputs(wc.judge, study, judge_group_task(wc))


def judge_group_spec(study):
    return lambda wc: judge_param(wc.judge, study, judge_group_task(wc))


# <<< judges helpers

# >>> study_a helpers
# Study A (issue 6). Trial shards: results/trials/A/<task>/<shard>.jsonl (tasks, shard
# families, criteria and formats: judgeaudit.vocab.study_a). Responses follow the
# judges stage's path results/responses/<judge>/A/<task>/<shard>.jsonl.
study_a_dataset = _planned(W.study_a_dataset)


def study_a_cls_manifests(wildcards=None):
    """Manifests of the classification tasks' corpora (sentences per clip)."""
    return _planned(W.study_a_cls_manifests)()


study_a_trial_files = _planned(W.study_a_trial_files)
study_a_judges = _planned(W.study_a_judges)
study_a_responses = _planned(W.study_a_responses)
study_a_planted_specs = _planned(W.study_a_planted_specs)
study_a_design = _planned(W.study_a_design)
study_a_control_judges = _planned(W.study_a_control_judges)
study_a_pair_params = lambda wildcards: W.study_a_pair_params()
study_a_cls_specialist = W.study_a_cls_specialist
study_a_pair_specialist_name = W.study_a_pair_specialist_name


def study_a_cls_inputs(wildcards):
    return W.study_a_cls_inputs(wildcards.cls_task, wildcards.family)


def study_a_cls_params(wildcards):
    """Only the config a shard depends on, so a change re-runs only that shard."""
    return W.study_a_cls_params(wildcards.cls_task, wildcards.family)


def study_a_pair_manifest(wildcards):
    return W.study_a_pair_manifest(wildcards.criterion)


def study_a_pair_outputs(fmt):
    """{role: path} of the pairwise trials of one format (one such job per format and
    criterion): the shard, and for the concat format the joined WAVs beside it."""
    out = {"trials": f"results/trials/A/pair_{{criterion}}/{fmt}.jsonl"}
    if fmt == "concat":
        out["audio"] = directory("results/trials/A/pair_{criterion}/concat_audio")
    return out


def study_a_pair_specialist(wildcards):
    """model.json of the specialist grounding a pair criterion (the leakage check
    reads its training speakers)."""
    return W.study_a_pair_specialist(wildcards.criterion)


TARGETS["study_a"] = W.study_a_targets
# Study A tables and figures (rules study_a_tables / study_a_figures): the metric
# tables they read, from the study's outputs registry (judgeaudit.study_a.outputs).
STUDY_A_TABLE_INPUTS = study_a_outputs.table_inputs()
STUDY_A_FIGURE_INPUTS = study_a_outputs.figure_inputs()
# <<< study_a helpers

# >>> study_b helpers
# Study B (issue 7). Items/renderings: results/conditions/B/<task>/; trial shards
# results/trials/B/<task>/<shard>.jsonl with shard = <protocol>-<cue> or probe-P /
# probe-O (judgeaudit.vocab.study_b). Every shard depends only on the template files it
# uses and on its own cue file (templates/study_b/cues/<cue>.txt), so editing one cue
# re-runs only the shards, responses and outputs that use that cue.
STUDY_B_TEMPLATES = W.study_b_templates
study_b_specialist = W.study_b_specialist
study_b_tasks = W.study_b_tasks
study_b_corpus = _planned(W.study_b_corpus)
study_b_task_param = W.study_b_task_param
study_b_scored = _planned(W.study_b_scored)
study_b_judges = _planned(W.study_b_judges)


study_b_alt_writer = _planned(W.study_b_alt_writer)
study_b_reply_shards = W.study_b_reply_shards


def study_b_reply_dnsmos_files():
    """The reply-clip plan, then every DNSMOS shard's scores (none when the replies
    are not spoken)."""
    if not config["study_b"]["replies"]["speak"]:
        return []
    return ["results/conditions/B/reply_dnsmos/clips.json"] + [
        f"results/conditions/B/reply_dnsmos/shard_{s}.json"
        for s in range(study_b_reply_shards())
    ]


def study_b_reply_bank(writer=None):
    """The reply template bank of a writer (default: study_b.replies.writer)."""
    writer = writer or config["study_b"]["replies"]["writer"]
    return str(STUDY_B_TEMPLATES / vocab_b.WRITER_BANKS[writer])


def study_b_table(wildcards):
    """Source table of a task: items.tsv (single) or the dialogue manifest."""
    return W.study_b_table(wildcards.task)


def study_b_manifest(wildcards):
    return W.study_b_manifest(wildcards.task)


def study_b_template(wildcards):
    return W.study_b_template(wildcards.shard)


def study_b_cue(wildcards):
    """The cue file a shard uses ([] for cue none and the probes)."""
    return W.study_b_cue(wildcards.shard)


# Study B tables and figures (rules study_b_table / study_b_figure): name -> the
# metric tables it renders (named as the rendering script reads them), from the
# study's outputs registry (judgeaudit.study_b.outputs).
STUDY_B_TABLE_INPUTS = study_b_outputs.table_inputs()
STUDY_B_FIGURE_INPUTS = study_b_outputs.figure_inputs()


def study_b_metric_outputs(rule):
    """{role: file} of a Study B metric rule's output (judgeaudit.study_b.outputs)."""
    return study_b_outputs.rule_outputs(rule)


def study_b_metric_inputs(recipe):
    """{role: files} a Study B metric rule reads (its recipe's rule_inputs)."""
    return _planned(W.study_b_metric_inputs)(recipe.rule_inputs)


def study_b_metric_params(recipe):
    """{param: value} a Study B metric rule passes from the config (its recipe's
    rule_params), beyond its metric, seed and bootstrap size."""
    return _planned(W.study_b_metric_params)(recipe.rule_params)


def study_b_table_inputs(wildcards):
    return STUDY_B_TABLE_INPUTS[wildcards.table]


def study_b_figure_inputs(wildcards):
    return STUDY_B_FIGURE_INPUTS[wildcards.figure]


def study_b_score_rules():
    """Grouped Study B scoring, the same groups as the judge jobs: rule name ->
    (shard patterns, log tag)."""
    protocols = sorted(config["study_b"]["protocols"])
    return {
        "study_b_score": (
            [vocab_b.protocol_shard(p, "{cue}") for p in protocols],
            "{task}/cue-{cue}",
        ),
        "study_b_score_probes": (list(vocab_b.PROBE_SHARDS), "{task}/probes"),
    }


TARGETS["study_b"] = _planned(W.study_b_targets)
# <<< study_b helpers


# Threads of the rules that run a process pool over clips (features, specialists).
# A job of N threads starts only once N cores are free at the same moment, so on a
# small machine it waits behind the one-thread jobs that keep filling the cores (on
# 2 cores a 2-thread features job was started 7 minutes late, and its chain became
# the run's tail), while it uses the pool only part of the time. A quarter of the
# machine's cores (1 below 8 cores, at most 8; profiles/slurm sets its own with
# set-threads) keeps the pools on large machines; the per-clip features are the same
# bytes at any pool size (synth_language's table compared: 1 vs 2 workers), and the
# fits and predictions run on a fixed 2 BLAS threads whatever `threads:` says
# (judgeaudit.blas), so the models are the same bytes too.
def pool_threads():
    cores = workflow._cores  # None when no --cores was given (e.g. --lint)
    return max(1, min(8, cores // 4)) if isinstance(cores, int) else 2


# >>> report helpers
def report_inputs(ext):
    """Every table (`.tsv` under results/tables) or figure (`.png`) other stages
    deliver to `rule all`."""
    stages = [s for s in sorted(TARGETS) if s != "report"]
    return sorted(
        {
            t
            for s in stages
            for t in TARGETS[s]()
            if t.endswith(ext)
            and (t.startswith("results/tables/") or t.startswith("figures/"))
        }
    )


def report_traces():
    """One `report_trace` output per report table, in `report_inputs(".tsv")` order."""
    return [
        f"results/report_traces/{Path(t).stem}.pickle" for t in report_inputs(".tsv")
    ]


# Files the report reads when they exist: the human listening check (written by
# `judgeaudit import-human`) and the last `judgeaudit verify` result. Optional inputs,
# so the default run builds without them; once one appears (or changes) the report is
# out of date and the next run rebuilds it (a new input file, or a newer one).
REPORT_OPTIONAL_INPUTS = {
    "human": "results/tables/human_validation.tsv",
    "verify": "results/verify.json",
}


def report_optional_inputs(wildcards=None):
    """The optional report inputs that exist now ({role: path})."""
    return {
        role: path
        for role, path in REPORT_OPTIONAL_INPUTS.items()
        if Path(path).is_file()
    }


TARGETS["report"] = lambda: ["results/report/index.html", "results/report.html"]
# <<< report helpers

# Loud at DAG time too: in a real-mode run every attribute served by a synthetic
# corpus is printed as a WARNING.
for _line in W.real_mode_fallbacks():
    print(_line, file=sys.stderr)

# >>> power helpers
power_sizes_cfg = W.power_sizes_cfg


def power_trial_files(wildcards=None):
    """Trial shards the power report sizes (Study A shards, Study B protocol shards)."""
    return W.power_trial_files()


def power_audited():
    """Audited (non-control) judges per study: the Holm families' judge copies."""
    panel = config["judges"]["panel"]
    study_b = [
        n
        for n in W.study_b_judges()
        if panel.get(n, {}).get("provider") not in providers(control=True)
    ]
    return {
        "A": len(W.study_a_judges()) - len(W.study_a_control_judges()),
        "B": len(study_b),
    }


power_audited_names = W.power_audited_names
power_run_pilot = W.power_run_pilot

TARGETS["power"] = _planned(W.power_targets)
# <<< power helpers
# >>> validation helpers
# Independent estimator validation (issue 11): one job per scenario and run
# (`default` = validation.n_seeds, in `rule all`; `full` = validation.full_n_seeds,
# the separate target `validation_full`), then one table + figure per run.
validation_seeds = W.validation_seeds
validation_scenario_files = W.validation_scenario_files
validation_outputs = W.validation_outputs


def validation_params(wildcards):
    return W.validation_params(wildcards.run, wildcards.scenario)


TARGETS["validation"] = W.validation_targets
# <<< validation helpers
# >>> audit helpers
# One-command judge audit (issue 23): results/audit/<judge>/card.json (the full protocol
# set) or results/audit/<judge>/protocols/<set>/card.json (any other set: the set is
# the path's, so sets never overwrite each other), requested per judge by `judgeaudit
# audit`, never by the default target; plan functions in judgeaudit.audit.plan.


def _audit_set(wildcards):
    return _planned(_audit_plan.set_of)(getattr(wildcards, "protocols", None))


def audit_trial_inputs(wildcards):
    return _planned(_audit_plan.trial_inputs)(W, _audit_set(wildcards))


def audit_judge_models(wildcards):
    return _planned(_audit_plan.judge_models)(W, wildcards.judge, _audit_set(wildcards))


def audit_specs_param(wildcards):
    return _planned(_audit_plan.judge_specs_param)(
        W, wildcards.judge, _audit_set(wildcards)
    )


def audit_panel_inputs(wildcards):
    return _planned(_audit_plan.reference_verdicts)(
        W, wildcards.judge, _audit_set(wildcards)
    )


def audit_cfg_param(wildcards):
    return _planned(_audit_plan.cfg_param)(W, _audit_set(wildcards))


def audit_files_param(wildcards):
    return as_param(_planned(_audit_plan.protocol_files)(W, _audit_set(wildcards)))


def audit_icc(wildcards):
    icc = config["audit"]["icc"]
    return float(config["power"]["icc"] if icc is None else icc)


TARGETS["audit"] = lambda: []
# <<< audit helpers

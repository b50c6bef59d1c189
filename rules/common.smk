# Helpers and input functions shared by the stage files. Stage files hold rules only.
import json
from pathlib import Path

from snakemake.exceptions import WorkflowError

from judgeaudit.config import ConfigError, check_duplicate_keys, validate_config

REPO = Path(workflow.basedir).resolve()
PKG = REPO / "src" / "judgeaudit"

# A crashed run (SIGKILL, OOM) leaves .snakemake/locks behind; remove them when no
# live Snakemake process other than this one works in this directory (see
# judgeaudit/locks.py for why that is safe), so a plain rerun needs no --unlock.
from judgeaudit.locks import clear_stale_locks

_removed_locks, _why = clear_stale_locks(Path.cwd())
if _removed_locks:
    import sys

    print(f"judgeaudit: {_why}", file=sys.stderr)

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
    # relative to the working directory when the source lies inside it (a run folder
    # holding its own source), so a copied or moved run folder stays up to date
    here = Path.cwd().resolve()
    return [
        str(f.relative_to(here)) if f.is_relative_to(here) else str(f) for f in files
    ]


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
# Auxiliary tables each synthetic corpus writes beside its manifest (the schema of
# every table is in judgeaudit.datasets.schema.AUX_TABLES).
SYNTH_AUX_TABLES = {
    "synth_emotion": [],
    "synth_language": [],
    "synth_speaker": ["trials.tsv"],
    "synth_naturalness": ["pairs.tsv"],
    "synth_counterfactual": ["items.tsv"],
    "synth_dialogue": ["dialogues.tsv"],
}

TARGETS["datasets"] = lambda: [f"data/{d}/manifest.tsv" for d in SYNTH_DATASETS]
# <<< datasets helpers

# >>> download helpers
# Real corpora (issue 3). A real dataset gets data/<name>/manifest.tsv only when
# config datasets.<name>.source is `download` or `local_dir`; otherwise the study
# uses its synthetic counterpart. Study stages pick their manifest with
# manifest_for(attribute) / dataset_for(attribute).
import os as _os

REAL_DATASETS = ["ravdess", "fleurs", "bvcc", "voxceleb1", "emocf", "od3"]
# study attribute -> (real corpus or None, synthetic counterpart)
ATTRIBUTE_DATASETS = {
    "emotion": ("ravdess", "synth_emotion"),
    "language": ("fleurs", "synth_language"),
    "naturalness": ("bvcc", "synth_naturalness"),
    "cleanness": (None, "synth_naturalness"),
    "speaker": ("voxceleb1", "synth_speaker"),
    "counterfactual": ("emocf", "synth_counterfactual"),
    "dialogue": ("od3", "synth_dialogue"),
}
# auxiliary tables each real corpus writes beside its manifest
REAL_AUX_TABLES = {
    "ravdess": [],
    "fleurs": [],
    "bvcc": ["pairs.tsv"],
    "voxceleb1": ["trials.tsv"],
    "emocf": ["items.tsv"],
    "od3": ["dialogues.tsv"],
}


def real_source(name):
    return config["datasets"][name]["source"]


def real_enabled(name):
    """True when datasets.<name>.source is download or local_dir."""
    return real_source(name) != "synthetic"


def dataset_for(attribute):
    """Dataset name the study uses for `attribute` (emotion, language, naturalness,
    cleanness, speaker, counterfactual, dialogue): the real corpus when its source is
    configured, else the synthetic counterpart."""
    if attribute not in ATTRIBUTE_DATASETS:
        raise WorkflowError(
            f"manifest_for: unknown attribute {attribute!r}; one of {sorted(ATTRIBUTE_DATASETS)}"
        )
    real, synth = ATTRIBUTE_DATASETS[attribute]
    return real if real and real_enabled(real) else synth


def manifest_for(attribute):
    """`data/<dataset>/manifest.tsv` the study stages read for `attribute`."""
    return f"data/{dataset_for(attribute)}/manifest.tsv"


def aux_table_for(attribute, table):
    """An auxiliary table (pairs.tsv, trials.tsv, items.tsv, dialogues.tsv) beside
    the manifest that manifest_for(attribute) returns."""
    return f"data/{dataset_for(attribute)}/{table}"


def real_ingest_input(name):
    """Input of ingest_<name>: the download receipt or the user's folder."""

    def inputs(wildcards):
        src = real_source(name)
        if src == "download":
            return {"receipt": f"data/{name}/download.json"}
        if src == "local_dir":
            out = {"local_dir": _os.path.abspath(config["datasets"][name]["local_dir"])}
            trial_list = config["datasets"][name].get("trial_list")
            if trial_list:
                out["trial_list"] = _os.path.abspath(trial_list)
            return out
        raise WorkflowError(
            f"data/{name}/manifest.tsv is only built when datasets.{name}.source is "
            f"'download' or 'local_dir' (it is 'synthetic'; the study then uses "
            f"{[s for r, s in ATTRIBUTE_DATASETS.values() if r == name][0]})"
        )

    return inputs


def real_download_input(name):
    def inputs(wildcards):
        cfg = config["datasets"][name]
        archives = [_os.path.abspath(a) for a in cfg.get("archives", [])]
        return {"archives": archives} if archives else {}

    return inputs


def attribute_corpus(attribute):
    """The corpus the studies use for `attribute` (Study A overrides included)."""
    if attribute in ("emotion", "language", "naturalness", "cleanness", "speaker"):
        return study_a_dataset(attribute)
    return dataset_for(attribute)


def corpus_sources_param():
    return as_param(
        {
            "attributes": {a: list(v) for a, v in ATTRIBUTE_DATASETS.items()},
            "sources": {n: real_source(n) for n in REAL_DATASETS},
            "used": {a: attribute_corpus(a) for a in ATTRIBUTE_DATASETS},
        }
    )


def warn_real_mode_fallbacks():
    """Loud at DAG time too: in a real-mode run (some datasets.<real>.source is not
    synthetic) every attribute served by a synthetic corpus is printed as a WARNING."""
    import sys

    if not any(real_enabled(n) for n in REAL_DATASETS):
        return
    for attribute in sorted(ATTRIBUTE_DATASETS):
        corpus = attribute_corpus(attribute)
        if corpus.startswith("synth_"):
            print(
                f"WARNING: REAL-MODE FALLBACK: attribute {attribute!r} uses the SYNTHETIC "
                f"corpus {corpus} (see results/tables/corpus_sources.tsv)",
                file=sys.stderr,
            )


TARGETS["corpus_sources"] = lambda: [
    "results/tables/corpus_sources.tsv",
    "results/tables/corpus_sources.md",
]

TARGETS["download"] = lambda: [
    f"data/{name}/manifest.tsv" for name in REAL_DATASETS if real_enabled(name)
]
# <<< download helpers


# >>> features helpers
def features_datasets():
    """Datasets that get results/features/<dataset>.tsv: each configured attribute's
    dataset (dataset_for) plus features.datasets."""
    cfg = config["features"]
    names = [dataset_for(a) for a in cfg["attributes"]] + list(cfg["datasets"])
    return sorted(set(names))


def features_table_for(attribute):
    """The eGeMAPS table of the dataset the study uses for `attribute` (blueprints)."""
    return f"results/features/{dataset_for(attribute)}.tsv"


TARGETS["features"] = lambda: (
    [f"results/features/{d}.tsv" for d in features_datasets()]
    if config["features"]["enabled"]
    else []
)
# <<< features helpers

# >>> specialists helpers
import os

SPECIALIST_KINDS = ["emotion", "language", "speaker", "naturalness"]
SPECIALIST_KIND_RE = "|".join(SPECIALIST_KINDS)
# Study A pair criterion -> the specialist kind the listener judges it with
CRITERION_KIND = {
    "naturalness": "naturalness",
    "cleanness": "naturalness",
    "speaker": "speaker",
    "emotion": "emotion",
}


def corpus_kind(dataset):
    """`synthetic` for the workflow's espeak corpora (synth_*), else `real`
    (same rule as judgeaudit.specialists.corpus.corpus_kind)."""
    return "synthetic" if dataset.startswith("synth_") else "real"


def specialist_cfg(kind, dataset=None):
    """Settings of the `kind` specialist fitted on `dataset`: specialists.<kind>,
    overlaid with specialists.<kind>.real (non-null fields) on a real corpus."""
    cfg = {k: v for k, v in config["specialists"][kind].items() if k != "real"}
    if dataset and corpus_kind(dataset) == "real":
        cfg.update(
            {
                k: v
                for k, v in config["specialists"][kind].get("real", {}).items()
                if v is not None
            }
        )
    return cfg


def specialist_dataset(kind):
    """The corpus the studies use for `kind` (its specialist is fitted on it)."""
    return dataset_for(kind)


def specialist_uses():
    """Every (kind, corpus) whose specialist the workflow fits: each study corpus
    gets its own specialist, trained on its own train speakers (or a pretrained
    model used as is), never one fitted on another corpus."""
    uses = {(k, dataset_for(k)) for k in SPECIALIST_KINDS}
    sa = config["study_a"]
    if sa["enabled"]:
        uses |= {(sa[t]["specialist"], study_a_dataset(t)) for t in STUDY_A_CLS_TASKS}
        uses |= {
            (CRITERION_KIND[c], study_a_dataset(c)) for c in sa["pairwise"]["criteria"]
        }
    if config["study_b"]["enabled"]:
        uses.add(("emotion", study_b_specialist_corpus()))
    uses |= {
        (k, config["specialists"][k]["dataset"])
        for k in SPECIALIST_KINDS
        if config["specialists"][k]["dataset"]
    }
    return sorted(uses)


def specialist_model(kind, dataset):
    """model.json of the `kind` specialist fitted on `dataset` (what
    judgeaudit.specialists.load takes)."""
    return f"results/specialists/{kind}/{dataset}/model.json"


def specialist_predictions(kind, dataset):
    """Per-clip predictions on `dataset` of the specialist fitted on `dataset`."""
    return f"results/specialists/{kind}/{dataset}.tsv"


def _whisper_model_dir():
    return "results/specialists/language/whisper-base"


def specialist_train_input(wildcards):
    kind, dataset = wildcards.kind, wildcards.dataset
    cfg = specialist_cfg(kind, dataset)
    out = {
        "manifest": f"data/{dataset}/manifest.tsv",
    }
    if kind == "speaker" and cfg["backend"] == "resemblyzer":
        out["trials"] = f"data/{dataset}/trials.tsv"
    if kind == "language" and cfg["backend"] == "whisper" and not cfg["model_path"]:
        out["whisper"] = _whisper_model_dir()
    if (
        kind == "emotion"
        and cfg["backend"] == "whisper_embed"
        and not cfg["model_path"]
    ):
        out["whisper"] = _whisper_model_dir()
    if cfg.get("model_path"):
        out["model_path"] = os.path.abspath(cfg["model_path"])
    return out


def specialist_whisper_eval_input(wildcards):
    lang = specialist_cfg("language", wildcards.dataset)
    return {
        "manifest": f"data/{wildcards.dataset}/manifest.tsv",
        "whisper": (
            os.path.abspath(lang["model_path"])
            if lang["backend"] == "whisper" and lang["model_path"]
            else _whisper_model_dir()
        ),
    }


def _use_key(kind, dataset):
    return f"{kind}__{dataset}"


def specialist_accuracy_input(wildcards):
    out = {}
    for kind, dataset in specialist_uses():
        key = _use_key(kind, dataset)
        out[f"{key}__pred"] = specialist_predictions(kind, dataset)
        out[f"{key}__manifest"] = f"data/{dataset}/manifest.tsv"
        out[f"{key}__model"] = specialist_model(kind, dataset)
        if kind == "speaker":
            out[f"{key}__trials"] = f"data/{dataset}/trials.tsv"
        if kind == "language" and specialist_cfg("language", dataset)["whisper_eval"]:
            out[f"{key}__whisper"] = (
                f"results/specialists/language/whisper_{dataset}.tsv"
            )
    return out


def specialist_accuracy_param():
    """(kind, corpus, corpus kind, that specialist's settings with its own target)."""
    return as_param(
        [
            {
                "kind": k,
                "dataset": d,
                "corpus_kind": corpus_kind(d),
                "key": _use_key(k, d),
                "cfg": specialist_cfg(k, d),
            }
            for k, d in specialist_uses()
        ]
    )


TARGETS["specialists"] = lambda: (
    [specialist_model(k, d) for k, d in specialist_uses()]
    + [
        "results/tables/specialist_accuracy.tsv",
        "results/tables/specialist_accuracy.md",
        "figures/specialist_confusion.png",
        "figures/specialist_confusion.pdf",
    ]
    if config["specialists"]["enabled"]
    else []
)
# <<< specialists helpers

# >>> judges helpers
import os
import uuid

from judgeaudit.judges.budget import PAID_PROVIDERS, missing_keys

# One id per Snakemake invocation, inherited by every job process it starts: the
# spend ledger sums judges.budget_usd over all judge jobs of this run. (setdefault:
# job processes that re-read this file keep their parent's id.)
os.environ.setdefault("JUDGEAUDIT_RUN_ID", f"run-{uuid.uuid4().hex[:12]}")

EMBEDDED_PERCEIVING = ("listener", "simulated")


def judge_names():
    """Active judges (config judges.active, else every judge in judges.panel)."""
    jcfg = config["judges"]
    if not jcfg.get("enabled", True):
        return []
    names = jcfg.get("active") or sorted(jcfg["panel"])
    missing = [n for n in names if n not in jcfg["panel"]]
    if missing:
        raise WorkflowError(
            f"config judges.active names unknown judges {missing}; "
            f"panel has {sorted(jcfg['panel'])}"
        )
    return list(names)


def judge_spec(name):
    try:
        return config["judges"]["panel"][name]
    except KeyError:
        raise WorkflowError(f"no judge {name!r} in config judges.panel") from None


# Settings used only for the cost estimate and the budget: left out of the shard
# params (the script reads them from the config) so a price or budget edit never
# re-runs a finished shard.
JUDGE_COST_FIELDS = (
    "audio_tokens_per_s",
    "budget_usd",
    "expected_output_tokens",
    "price_in_per_mtok",
    "price_out_per_mtok",
)


def judge_param(name, study=None, task=None):
    """The judge's settings as one canonical JSON scalar: changing one judge's
    settings re-runs only that judge's shards (and the cache still serves every
    call whose fingerprint did not change). With study/task, `auto` perception
    models are resolved for that shard (judge_spec_for)."""
    spec = judge_spec_for(name, study, task) if study else judge_spec(name)
    return as_param({k: v for k, v in spec.items() if k not in JUDGE_COST_FIELDS})


def paid_judge(name):
    return judge_spec(name)["provider"] in PAID_PROVIDERS


def paid_judge_jobs():
    """(judge, trials file) of every shard an API judge judges in this workflow."""
    jobs = set()
    if config["study_a"]["enabled"]:
        for j in study_a_judges():
            if paid_judge(j):
                jobs |= {(j, f) for f in study_a_trial_files()}
    if config["study_b"]["enabled"]:
        for j in study_b_judges():
            if paid_judge(j):
                jobs |= {
                    (j, f"results/trials/B/{t}/{s}.jsonl")
                    for t in study_b_tasks()
                    for s in study_b_shards(t)
                }
    return sorted(jobs)


JUDGE_PREFLIGHT = "results/judges/preflight.json"


def judge_preflight_gate(wildcards):
    """API judges' shards wait for the workflow-wide cost pre-flight (a temp file,
    rebuilt only when some API shard must run). Not ancient(): Snakemake 9 drops a
    job with missing output whose only updated input is ancient and rebuilt. When
    the gate is rebuilt, finished API shards of the run re-run too, replayed from
    the cache at no cost."""
    return [JUDGE_PREFLIGHT] if paid_judge(wildcards.judge) else []


def judges_onstart_check():
    """Before any job: every API judge with a shard to run has its key variable set."""
    pending = sorted(
        {
            job.wildcards["judge"]
            for job in workflow.dag.needrun_jobs()
            if job.rule.name == "judge_shard"
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


def perception_corpora(study, task):
    """kind -> corpus whose own specialist an embedded judge perceives with on one
    trial shard: Study A perceives each task's corpus with that corpus's specialist;
    Study B always with its own emotion specialist (study_b_specialist_corpus), so
    a real corpus enabled for Study A never changes what Study B's listener hears."""
    if study == "B":
        return {"emotion": study_b_specialist_corpus()}
    if task in STUDY_A_CLS_TASKS:
        return {task: study_a_dataset(task)}
    if task.startswith("pair_") and task[5:] in CRITERION_KIND:
        return {CRITERION_KIND[task[5:]]: study_a_dataset(task[5:])}
    return {}


def judge_spec_for(name, study, task):
    """judge_spec with perception models `auto` replaced by the specialist of the
    shard's corpus (other kinds: null, the shard never needs them)."""
    import copy

    spec = copy.deepcopy(judge_spec(name))
    perception = spec.get("perception") or {}
    if (
        spec["provider"] not in EMBEDDED_PERCEIVING
        or perception.get("kind", "specialists") != "specialists"
    ):
        return spec
    corpora = perception_corpora(study, task)
    models = dict(perception.get("models") or {})
    for kind, path in models.items():
        if path == "auto":
            models[kind] = (
                specialist_model(kind, corpora[kind]) if kind in corpora else None
            )
    perception["models"] = models
    spec["perception"] = perception
    return spec


def judge_model_inputs(name, study=None, task=None):
    """Specialist model files an embedded perceiving judge reads (built upstream)."""
    spec = judge_spec_for(name, study, task) if study else judge_spec(name)
    if spec["provider"] not in EMBEDDED_PERCEIVING:
        return []
    perception = spec.get("perception") or {}
    if perception.get("kind", "specialists") != "specialists":
        return []
    return sorted(
        p for p in (perception.get("models") or {}).values() if p and p != "auto"
    )


def judge_slots(wildcards):
    """`judge_slots` resource of one judge shard: 1 for a paid/remote provider (the
    profile caps how many run at once), 0 for an embedded CPU judge (bounded by
    --cores only)."""
    return 1 if paid_judge(wildcards.judge) else 0


def responses_for(study, task, shard):
    """Response shards of every active judge for one trial shard (for study stages)."""
    return [
        f"results/responses/{j}/{study}/{task}/{shard}.jsonl" for j in judge_names()
    ]


TARGETS["judges"] = lambda: []  # responses are pulled in by the study stages
# <<< judges helpers

# >>> study_a helpers
# Study A (issue 6). Trial shards: results/trials/A/<task>/<shard>.jsonl with
# task in emotion|language (shards blueprint|reference|conflict) and
# pair_<criterion> (shards concat|native). Responses follow the judges stage's
# path results/responses/<judge>/A/<task>/<shard>.jsonl.
STUDY_A_CLS_TASKS = ["emotion", "language"]
STUDY_A_CLS_SHARDS = ["blueprint", "reference", "conflict"]
STUDY_A_PAIR_FORMATS = ["concat", "native"]
STUDY_A_TABLES = [
    "study_a_table2_blueprint",
    "study_a_follow_blueprint",
    "study_a_table3_reference",
    "study_a_table4_conflict",
    "study_a_table5_pairwise",
    "study_a_contrasts",
    "study_a_planted",
]
STUDY_A_FIGURES = [
    "study_a_follow_by_placement",
    "study_a_lock_vs_g",
    "study_a_accuracy_by_blueprint",
]


def study_a_dataset(attribute):
    """Dataset Study A reads for `attribute`: the config override or dataset_for()."""
    sa = config["study_a"]
    if attribute in STUDY_A_CLS_TASKS:
        name = sa[attribute]["dataset"]
    else:
        name = sa["pairwise"][f"{attribute}_dataset"]
    return name or dataset_for(attribute)


def study_a_shards():
    """(task, shard) of every Study A trial shard."""
    out = [(t, s) for t in STUDY_A_CLS_TASKS for s in STUDY_A_CLS_SHARDS]
    out += [
        (f"pair_{c}", f)
        for c in config["study_a"]["pairwise"]["criteria"]
        for f in STUDY_A_PAIR_FORMATS
    ]
    return out


def study_a_trial_files():
    return [f"results/trials/A/{t}/{s}.jsonl" for t, s in study_a_shards()]


def study_a_judges():
    """Judges Study A queries: study_a.judges, else every judge the judges stage declares."""
    names = list(config["study_a"]["judges"])
    if not names:
        declared = globals().get("judge_names")
        names = list(declared()) if declared else []
    if not names:
        raise WorkflowError("study_a: no judges (set study_a.judges or declare judges)")
    return names


def study_a_responses(judge):
    return [f"results/responses/{judge}/A/{t}/{s}.jsonl" for t, s in study_a_shards()]


def study_a_cls_inputs(wildcards):
    cfg = config["study_a"][wildcards.task]
    ds = study_a_dataset(wildcards.task)
    out = {
        "manifest": f"data/{ds}/manifest.tsv",
        "predictions": f"results/specialists/{cfg['specialist']}/{ds}.tsv",
        "specialist_model": specialist_model(cfg["specialist"], ds),
    }
    if wildcards.shard in ("blueprint", "conflict"):
        out["features"] = f"results/features/{ds}.tsv"
        out["templates"] = sorted(
            str(p) for p in (REPO / "templates" / "blueprint").glob("*.txt")
        )
    return out


def study_a_cls_params(wildcards):
    """Only the config a shard depends on, so a change re-runs only that shard."""
    sa = config["study_a"]
    keep = {
        "blueprint": ["seeds"],
        "reference": ["reference_seeds", "match_placement"],
        "conflict": ["conflict_seeds", "conflict_placement"],
    }[wildcards.shard]
    return as_param(
        {
            "task_cfg": sa[wildcards.task],
            **{k: sa[k] for k in keep},
            "seed": config["seed"],
        }
    )


def study_a_pair_manifest(wildcards):
    return f"data/{study_a_dataset(wildcards.criterion)}/manifest.tsv"


def study_a_pair_specialist(wildcards):
    """model.json of the specialist grounding a pair criterion on its corpus (the
    leakage check reads its training speakers)."""
    return specialist_model(
        CRITERION_KIND[wildcards.criterion], study_a_dataset(wildcards.criterion)
    )


def study_a_pair_params(wildcards):
    pw = config["study_a"]["pairwise"]
    keep = {k: pw[k] for k in ("n_pairs", "split", "min_score_gap")}
    return as_param({"pairwise": keep, "seed": config["seed"]})


def study_a_planted_specs():
    """Planted propensities (judges.panel.<name>.simulated) of the simulated judges
    Study A queries; the planted-vs-estimated table compares them with estimates."""
    out = {}
    for name in study_a_judges():
        spec = config["judges"]["panel"].get(name, {})
        if spec.get("provider") == "simulated":
            out[name] = spec.get("simulated") or {}
    return out


def study_a_control_judges():
    """Study A judges whose behaviour is known by construction (listener, label-reader,
    first-slot providers): reported, but left out of the contrasts' Holm families."""
    controls = ("listener", "label_reader", "first_slot")
    return sorted(
        n
        for n in study_a_judges()
        if config["judges"]["panel"].get(n, {}).get("provider") in controls
    )


TARGETS["study_a"] = lambda: (
    (
        [
            f"results/tables/{t}.{ext}"
            for t in STUDY_A_TABLES
            for ext in ("tsv", "md", "tex")
        ]
        + [f"figures/{f}.{ext}" for f in STUDY_A_FIGURES for ext in ("png", "pdf")]
    )
    if config["study_a"]["enabled"]
    else []
)
# <<< study_a helpers

# >>> study_b helpers
# Study B (issue 7). Items/renderings: results/conditions/B/<task>/; trial shards
# results/trials/B/<task>/<shard>.jsonl with shard = <pointwise|pairwise>-<cue> or
# probe-P / probe-O. Every shard depends only on the template files it uses and on
# its own cue file (templates/study_b/cues/<cue>.txt), so editing one cue re-runs
# only the shards, responses and outputs that use that cue.
STUDY_B_TASKS = ["single", "positional", "conversation"]
STUDY_B_TEMPLATES = REPO / "templates" / "study_b"
STUDY_B_TABLES = [
    "study_b_accuracy",
    "study_b_protocol_gap",
    "study_b_balance",
    "study_b_potemkin",
    "study_b_state_distribution",
]
STUDY_B_FIGURES = ["study_b_states", "study_b_heatmap"]


def study_b_specialist_corpus():
    """Corpus Study B's own emotion specialist is fitted on (its rendering filter and
    its embedded listener): study_b.rendering.specialist_corpus, independent of the
    corpus Study A's emotion specialist uses."""
    return config["study_b"]["rendering"]["specialist_corpus"]


def study_b_specialist():
    """model.json Study B's TTS filter scores candidates with."""
    path = config["study_b"]["rendering"]["specialist"]
    return (
        specialist_model("emotion", study_b_specialist_corpus())
        if path == "auto"
        else path
    )


def study_b_tasks():
    sb = config["study_b"]
    return [t for t in STUDY_B_TASKS if sb["tasks"][t]["enabled"]]


def study_b_shards(task):
    sb = config["study_b"]
    cues = sb["tasks"][task]["cues"]
    return [f"{p}-{c}" for p in sb["protocols"] for c in cues] + ["probe-P", "probe-O"]


def study_b_judges():
    names = list(config["study_b"]["judges"]) or judge_names()
    if not names:
        raise WorkflowError("study_b: no judges (set study_b.judges or judges.active)")
    return names


def study_b_corpus(task):
    """Corpus a Study B task's items come from (named on every table row)."""
    return dataset_for("counterfactual" if task == "single" else "dialogue")


def study_b_table(wildcards):
    """Source table of a task: items.tsv (single) or the dialogue manifest."""
    if wildcards.task == "single":
        return aux_table_for("counterfactual", "items.tsv")
    return manifest_for("dialogue")


def study_b_manifest(wildcards):
    """The manifest beside the source table (so the corpus audio exists)."""
    return manifest_for("counterfactual" if wildcards.task == "single" else "dialogue")


def study_b_kind(shard):
    return (
        shard.split("-", 1)[1] if shard.startswith("probe-") else shard.split("-", 1)[0]
    )


def study_b_template(wildcards):
    name = {
        "pointwise": "pointwise.txt",
        "pairwise": "pairwise.txt",
        "P": "probe_perception.txt",
        "O": "probe_oracle.txt",
    }[study_b_kind(wildcards.shard)]
    return str(STUDY_B_TEMPLATES / name)


def study_b_cue(wildcards):
    """The cue file a shard uses ([] for cue none and the probes)."""
    if wildcards.shard.startswith("probe-"):
        return []
    cue = wildcards.shard.split("-", 1)[1]
    return [] if cue == "none" else [str(STUDY_B_TEMPLATES / "cues" / f"{cue}.txt")]


def study_b_task_param(task):
    """Only the config a task's items/renderings depend on."""
    sb = config["study_b"]
    return as_param(
        {
            "tasks": {task: sb["tasks"][task]},
            "rendering": sb["rendering"],
            "replies": sb["replies"],
        }
    )


def study_b_scored(shards_of=None):
    """Scored shard tables of every judge x task (optionally a subset of shards)."""
    out = []
    for task in study_b_tasks():
        for shard in study_b_shards(task):
            if shards_of is None or shards_of(shard):
                out += [
                    f"results/metrics/B/scored/{j}/{task}/{shard}.tsv"
                    for j in study_b_judges()
                ]
    return out


def _sb_is_protocol(shard):
    return not shard.startswith("probe-")


def _sb_is_cue_contrast(shard):
    return shard.split("-", 1)[-1] in (
        "none",
        "hard",
        "transition",
    ) and _sb_is_protocol(shard)


def _sb_is_state_input(shard):
    return shard in ("probe-P", "probe-O", "pointwise-none")


# Study B tables and figures (rules study_b_table / study_b_figure): name -> the
# metric tables it renders (named as the rendering script reads them).
STUDY_B_TABLE_INPUTS = {
    "accuracy": {"accuracy": "results/metrics/B/accuracy.tsv"},
    "protocol_gap": {"gap": "results/metrics/B/protocol_gap.tsv"},
    "balance": {"balance": "results/metrics/B/balance.tsv"},
    "potemkin": {"potemkin": "results/metrics/B/potemkin.tsv"},
    "state_distribution": {
        "distribution": "results/metrics/B/state_distribution.tsv",
        "chance": "results/metrics/B/state_chance.tsv",
    },
}
STUDY_B_FIGURE_INPUTS = {
    "states": {
        "distribution": "results/metrics/B/state_distribution.tsv",
        "chance": "results/metrics/B/state_chance.tsv",
    },
    "heatmap": {
        "potemkin": "results/metrics/B/potemkin.tsv",
        "gap": "results/metrics/B/protocol_gap.tsv",
        "cue": "results/metrics/B/cue_dependence.tsv",
    },
}


def study_b_table_inputs(wildcards):
    return STUDY_B_TABLE_INPUTS[wildcards.table]


def study_b_figure_inputs(wildcards):
    return STUDY_B_FIGURE_INPUTS[wildcards.figure]


TARGETS["study_b"] = lambda: (
    (
        [
            f"results/tables/{t}.{ext}"
            for t in STUDY_B_TABLES
            for ext in ("tsv", "md", "tex")
        ]
        + [f"figures/{f}.{ext}" for f in STUDY_B_FIGURES for ext in ("png", "pdf")]
    )
    if config["study_b"]["enabled"] and study_b_tasks()
    else []
)
# <<< study_b helpers


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


TARGETS["report"] = lambda: ["results/report/index.html", "results/report.html"]
# <<< report helpers

warn_real_mode_fallbacks()


# >>> power helpers
def power_trial_files(wildcards=None):
    """Trial shards the power report sizes: every Study A shard and the Study B
    protocol shards (the probes carry no planned test)."""
    files = study_a_trial_files() if config["study_a"]["enabled"] else []
    if config["study_b"]["enabled"]:
        files += [
            f"results/trials/B/{t}/{s}.jsonl"
            for t in study_b_tasks()
            for s in study_b_shards(t)
            if _sb_is_protocol(s)
        ]
    return files


def power_sizes_cfg(study):
    """Only the configured sizes the shortfall check compares with the trials."""
    if study == "study_a":
        sa = config["study_a"]
        return {
            **{
                t: {"per_class": sa[t]["per_class"], "labels": sa[t]["labels"]}
                for t in STUDY_A_CLS_TASKS
            },
            "pairwise": {"n_pairs": sa["pairwise"]["n_pairs"]},
        }
    return {
        "tasks": {
            t: {"n_items": c.get("n_items")}
            for t, c in config["study_b"]["tasks"].items()
        }
    }


TARGETS["power"] = lambda: (
    [f"results/tables/power.{ext}" for ext in ("tsv", "md", "tex")]
    if config["power"]["enabled"] and power_trial_files()
    else []
)
# <<< power helpers
# >>> validation helpers
# Independent estimator validation (issue 11): one job per scenario and run
# (`default` = validation.n_seeds, in `rule all`; `full` = validation.full_n_seeds,
# the separate target `validation_full`), then one table + figure per run.
VALIDATION_RUNS = {
    "default": "estimator_validation",
    "full": "estimator_validation_full",
}


def validation_run(table_name):
    """`default` or `full` from the table name."""
    return {v: k for k, v in VALIDATION_RUNS.items()}[table_name]


def validation_seeds(run):
    v = config["validation"]
    return v["n_seeds"] if run == "default" else v["full_n_seeds"]


def validation_params(wildcards):
    v = config["validation"]
    return as_param(
        {
            "scenario": wildcards.scenario,
            "n_seeds": validation_seeds(wildcards.run),
            "n_boot": v["n_boot"],
            "truth_clusters": v["truth_clusters"],
            "overrides": v["overrides"].get(wildcards.scenario, {}),
            "seed": config["seed"],
        }
    )


def validation_scenario_files(run):
    return [
        f"results/validation/{run}/{s}.reps.tsv"
        for s in sorted(config["validation"]["scenarios"])
    ]


def validation_outputs(run):
    name = VALIDATION_RUNS[run]
    return [f"results/tables/{name}.{ext}" for ext in ("tsv", "md", "tex")] + [
        f"figures/{name}.{ext}" for ext in ("png", "pdf")
    ]


TARGETS["validation"] = lambda: (
    validation_outputs("default") if config["validation"]["enabled"] else []
)
# <<< validation helpers

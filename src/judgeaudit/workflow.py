"""The workflow's pure input functions: target lists, shard lists, corpora, judge
jobs and rule params computed from a validated config.

`Plan(config, repo)` takes the validated config explicitly (and the workflow's
source folder, for template files); nothing here imports Snakemake, reads
wildcards or touches files other than listing templates. `rules/common.smk`
builds one Plan and wraps its methods as input functions; the tests call them
directly on small configs.

Vocabularies (datasets, specialist kinds, Study A/B tasks, shards, cues...) come
from `judgeaudit.vocab`; adding a placement, criterion or cue changes what these
functions return without editing them.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from judgeaudit.judges.adapters import is_paid, providers
from judgeaudit.study_a import outputs as study_a_outputs
from judgeaudit.study_b import outputs as study_b_outputs
from judgeaudit.vocab import datasets as vocab_d
from judgeaudit.vocab import study_a as vocab_a
from judgeaudit.vocab import study_b as vocab_b
from judgeaudit.vocab.specialists import SPECIALIST_KINDS

# Settings used only for the cost estimate and the budget: left out of the shard
# params (the script reads them from the config) so a price or budget edit never
# re-runs a finished shard.
JUDGE_COST_FIELDS = ("audio_tokens_per_s", "budget_usd", "expected_output_tokens",
                     "price_in_per_mtok", "price_out_per_mtok")
JUDGE_PREFLIGHT = "results/judges/preflight.json"
WHISPER_MODEL_DIR = "results/specialists/language/whisper-base"
# validation run -> table name
VALIDATION_RUNS = {"default": "estimator_validation", "full": "estimator_validation_full"}
# the studies' tables and figures: from their outputs registries
STUDY_A_TABLES = study_a_outputs.TABLE_NAMES
STUDY_A_FIGURES = study_a_outputs.FIGURE_NAMES
STUDY_B_TABLES = study_b_outputs.TABLE_NAMES
STUDY_B_FIGURES = study_b_outputs.FIGURE_NAMES
STUDY_B_TEMPLATE_FILES = {"pointwise": "pointwise.txt", "pairwise": "pairwise.txt",
                          "text": "pointwise.txt",  # T: the pointwise request, no audio
                          "P": "probe_perception.txt", "O": "probe_oracle.txt"}
TABLE_EXTS = ("tsv", "md", "tex")
FIGURE_EXTS = ("png", "pdf")


class PlanError(ValueError):
    """A config the workflow cannot plan from; the message names the field."""


def as_param(obj: Any) -> str:
    """A config sub-tree as a canonical JSON string: a scalar param that changes
    only when the content does (dict ordering never causes a rerun)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def corpus_kind(dataset: str) -> str:
    """`synthetic` for the workflow's espeak corpora (synth_*), else `real`
    (same rule as judgeaudit.specialists.corpus.corpus_kind)."""
    return "synthetic" if vocab_d.is_synthetic(dataset) else "real"


def tables(names, exts=TABLE_EXTS) -> list[str]:
    return [f"results/tables/{t}.{ext}" for t in names for ext in exts]


def figures(names, exts=FIGURE_EXTS) -> list[str]:
    return [f"figures/{f}.{ext}" for f in names for ext in exts]


def study_b_kind(shard: str) -> str:
    """`pointwise`/`pairwise` of a protocol shard, `P`/`O` of a probe shard."""
    if shard.startswith(vocab_b.PROBE_PREFIX):
        return shard.removeprefix(vocab_b.PROBE_PREFIX)
    return shard.split("-", 1)[0]


def study_b_is_protocol(shard: str) -> bool:
    return not shard.startswith(vocab_b.PROBE_PREFIX)


def study_b_is_cue_contrast(shard: str) -> bool:
    """A shard of the cue-dependence contrast: an audio protocol (not the text-only
    baseline T) under no cue or a contrasted cue."""
    return (study_b_is_protocol(shard) and study_b_kind(shard) in vocab_b.AUDIO_PROTOCOLS
            and shard.split("-", 1)[-1] in (vocab_b.NO_CUE, *vocab_b.CONTRASTED_CUES))


def study_b_is_state_input(shard: str) -> bool:
    """The probes, the no-cue pointwise judgments (the J of the states) and the no-cue
    text-only judgments (T, beside the states)."""
    return shard in (*vocab_b.PROBE_SHARDS,
                     *(vocab_b.protocol_shard(p, vocab_b.NO_CUE)
                       for p in (vocab_b.DEPLOYMENT_PROTOCOL, vocab_b.TEXT_PROTOCOL)))


# the shard sets a Study B metrics rule reads (its recipe's rule_inputs["scored"]) and
# the per-task condition files (any other role)
STUDY_B_SHARD_SETS: dict[str, Callable[[str], bool] | None] = {
    "all": None, "protocol": study_b_is_protocol, "cue_contrast": study_b_is_cue_contrast,
    "state_input": study_b_is_state_input}
STUDY_B_TASK_FILES = {"items": "items.jsonl", "reply_quality": "reply_quality.tsv"}


def validation_run(table_name: str) -> str:
    """`default` or `full` from the table name."""
    return {v: k for k, v in VALIDATION_RUNS.items()}[table_name]


def use_key(kind: str, dataset: str) -> str:
    return f"{kind}__{dataset}"


class Plan:
    """Everything the rules compute from one validated config."""

    def __init__(self, config: Mapping[str, Any], repo: str | os.PathLike = "."):
        self.config = config
        self.repo = Path(repo)
        self.study_b_templates = self.repo / "templates" / "study_b"

    # ---------------------------------------------------------------- datasets
    def dataset_cfg(self, name: str) -> dict:
        return self.config["datasets"][name]

    def real_source(self, name: str) -> str:
        return self.config["datasets"][name]["source"]

    def real_enabled(self, name: str) -> bool:
        """True when datasets.<name>.source is download or local_dir."""
        return self.real_source(name) != "synthetic"

    def dataset_for(self, attribute: str) -> str:
        """Dataset name the study uses for `attribute`: the real corpus when its source
        is configured, else the synthetic counterpart."""
        if attribute not in vocab_d.ATTRIBUTE_DATASETS:
            raise PlanError(f"manifest_for: unknown attribute {attribute!r}; one of "
                            f"{sorted(vocab_d.ATTRIBUTE_DATASETS)}")
        real, synth = vocab_d.ATTRIBUTE_DATASETS[attribute]
        return real if real and self.real_enabled(real) else synth

    def manifest_for(self, attribute: str) -> str:
        """`data/<dataset>/manifest.tsv` the study stages read for `attribute`."""
        return f"data/{self.dataset_for(attribute)}/manifest.tsv"

    def aux_table_for(self, attribute: str, table: str) -> str:
        """An auxiliary table beside the manifest that manifest_for(attribute) returns."""
        return f"data/{self.dataset_for(attribute)}/{table}"

    def real_ingest_input(self, name: str) -> dict[str, str]:
        """Input of ingest_<name>: the download receipt or the user's folder."""
        src = self.real_source(name)
        if src == "download":
            return {"receipt": f"data/{name}/download.json"}
        if src == "local_dir":
            cfg = self.config["datasets"][name]
            out = {"local_dir": os.path.abspath(cfg["local_dir"])}
            if cfg.get("trial_list"):
                out["trial_list"] = os.path.abspath(cfg["trial_list"])
            return out
        raise PlanError(
            f"data/{name}/manifest.tsv is only built when datasets.{name}.source is "
            f"'download' or 'local_dir' (it is 'synthetic'; the study then uses "
            f"{vocab_d.SYNTH_COUNTERPART[name]})")

    def real_download_input(self, name: str) -> dict[str, list[str]]:
        archives = [os.path.abspath(a) for a in self.config["datasets"][name].get("archives", [])]
        return {"archives": archives} if archives else {}

    def attribute_corpus(self, attribute: str) -> str:
        """The corpus the studies use for `attribute` (Study A overrides included)."""
        if attribute in (*vocab_a.CLS_TASKS, *vocab_a.PAIR_CRITERIA):
            return self.study_a_dataset(attribute)
        return self.dataset_for(attribute)

    def corpus_sources_param(self) -> str:
        return as_param({
            "attributes": {a: list(v) for a, v in vocab_d.ATTRIBUTE_DATASETS.items()},
            "sources": {n: self.real_source(n)
                        for n in (*vocab_d.REAL_DATASETS, *vocab_d.DERIVED_DATASETS)},
            "used": {a: self.attribute_corpus(a) for a in vocab_d.ATTRIBUTE_DATASETS},
        })

    def real_mode_fallbacks(self) -> list[str]:
        """In a real-mode run (some datasets.<real>.source is not synthetic): one
        WARNING line per attribute served by a synthetic corpus."""
        if not any(self.real_enabled(n) for n in vocab_d.REAL_DATASETS):
            return []
        out = []
        for attribute in sorted(vocab_d.ATTRIBUTE_DATASETS):
            corpus = self.attribute_corpus(attribute)
            if vocab_d.is_synthetic(corpus):
                out.append(f"WARNING: REAL-MODE FALLBACK: attribute {attribute!r} uses the "
                           f"SYNTHETIC corpus {corpus} (see results/tables/corpus_sources.tsv)")
        return out

    def synth_targets(self) -> list[str]:
        return [f"data/{d}/manifest.tsv" for d in vocab_d.SYNTH_DATASETS]

    def real_targets(self) -> list[str]:
        names = (*vocab_d.REAL_DATASETS, *vocab_d.DERIVED_DATASETS)
        return [f"data/{n}/manifest.tsv" for n in names if self.real_enabled(n)]

    def derived_input(self, name: str) -> dict[str, str]:
        """Input of the rule building a derived real corpus (real_degraded): the
        manifest of its base corpus, which must itself be real."""
        base = self.config["datasets"][name]["base"]
        if not self.real_enabled(name):
            raise PlanError(f"data/{name}/manifest.tsv is only built when "
                            f"datasets.{name}.source is 'derived'")
        if not self.real_enabled(base):
            raise PlanError(f"datasets.{name}.source is 'derived' from datasets.{name}.base "
                            f"= {base!r}, but datasets.{base}.source is 'synthetic': set it "
                            f"to download or local_dir, or datasets.{name}.source: synthetic")
        return {"base": f"data/{base}/manifest.tsv"}

    def derived_params(self, name: str) -> str:
        """Params of the derived corpus rule: its config, with empty `degradations`
        resolved to the synthetic naturalness corpus's (so they cannot drift apart)."""
        cfg = dict(self.config["datasets"][name])
        cfg["degradations"] = dict(cfg.get("degradations") or
                                   self.config["datasets"]["synth_naturalness"]["degradations"])
        return as_param(cfg)

    # ---------------------------------------------------------------- features
    def features_datasets(self) -> list[str]:
        """Datasets that get results/features/<dataset>.tsv: each configured
        attribute's dataset (dataset_for) plus features.datasets."""
        cfg = self.config["features"]
        names = [self.dataset_for(a) for a in cfg["attributes"]] + list(cfg["datasets"])
        return sorted(set(names))

    def features_targets(self) -> list[str]:
        if not self.config["features"]["enabled"]:
            return []
        return [f"results/features/{d}.tsv" for d in self.features_datasets()]

    # ---------------------------------------------------------------- specialists
    def specialist_cfg(self, kind: str, dataset: str | None = None) -> dict:
        """Settings of the `kind` specialist fitted on `dataset`: specialists.<kind>,
        overlaid with specialists.<kind>.real (non-null fields) on a real corpus."""
        spec = self.config["specialists"][kind]
        cfg = {k: v for k, v in spec.items() if k != "real"}
        if dataset and corpus_kind(dataset) == "real":
            cfg.update({k: v for k, v in spec.get("real", {}).items() if v is not None})
        return cfg

    def specialist_uses(self) -> list[tuple[str, str]]:
        """Every (kind, corpus) whose specialist the workflow fits: each study corpus
        gets its own specialist, never one fitted on another corpus."""
        uses = {(k, self.dataset_for(k)) for k in SPECIALIST_KINDS}
        sa = self.config["study_a"]
        if sa["enabled"]:
            uses |= {(sa[t]["specialist"], self.study_a_dataset(t)) for t in vocab_a.CLS_TASKS}
            uses |= {(vocab_a.CRITERION_KIND[c], self.study_a_dataset(c))
                     for c in sa["pairwise"]["criteria"]}
        if self.config["study_b"]["enabled"]:
            uses.add(("emotion", self.study_b_specialist_corpus()))
        spec = self.config["specialists"]
        uses |= {(k, spec[k]["dataset"]) for k in SPECIALIST_KINDS if spec[k]["dataset"]}
        return sorted(uses)

    @staticmethod
    def specialist_model(kind: str, dataset: str) -> str:
        """model.json of the `kind` specialist fitted on `dataset`."""
        return f"results/specialists/{kind}/{dataset}/model.json"

    @staticmethod
    def specialist_predictions(kind: str, dataset: str) -> str:
        """Per-clip predictions on `dataset` of the specialist fitted on `dataset`."""
        return f"results/specialists/{kind}/{dataset}.tsv"

    def specialist_train_input(self, kind: str, dataset: str) -> dict[str, str]:
        """Data inputs of specialists_train (code inputs are the rule's)."""
        cfg = self.specialist_cfg(kind, dataset)
        out = {"manifest": f"data/{dataset}/manifest.tsv"}
        if kind == "speaker" and cfg["backend"] == "resemblyzer":
            out["trials"] = f"data/{dataset}/trials.tsv"
        if kind == "language" and cfg["backend"] == "whisper" and not cfg["model_path"]:
            out["whisper"] = WHISPER_MODEL_DIR
        if kind == "emotion" and cfg["backend"] == "whisper_embed" and not cfg["model_path"]:
            out["whisper"] = WHISPER_MODEL_DIR
        if kind == "naturalness" and cfg["backend"] == "whisper_ridge" and not cfg["model_path"]:
            out["whisper"] = WHISPER_MODEL_DIR
        if cfg.get("model_path"):
            out["model_path"] = os.path.abspath(cfg["model_path"])
        return out

    def specialist_whisper_eval_input(self, dataset: str) -> dict[str, str]:
        lang = self.specialist_cfg("language", dataset)
        return {
            "manifest": f"data/{dataset}/manifest.tsv",
            "whisper": (os.path.abspath(lang["model_path"])
                        if lang["backend"] == "whisper" and lang["model_path"]
                        else WHISPER_MODEL_DIR),
        }

    def specialist_accuracy_input(self) -> dict[str, str]:
        out = {}
        for kind, dataset in self.specialist_uses():
            key = use_key(kind, dataset)
            out[f"{key}__pred"] = self.specialist_predictions(kind, dataset)
            out[f"{key}__manifest"] = f"data/{dataset}/manifest.tsv"
            out[f"{key}__model"] = self.specialist_model(kind, dataset)
            if kind == "speaker":
                out[f"{key}__trials"] = f"data/{dataset}/trials.tsv"
            if kind == "language" and self.specialist_cfg("language", dataset)["whisper_eval"]:
                out[f"{key}__whisper"] = f"results/specialists/language/whisper_{dataset}.tsv"
        return out

    def specialist_accuracy_param(self) -> str:
        """(kind, corpus, corpus kind, that specialist's settings with its own target)."""
        return as_param([{"kind": k, "dataset": d, "corpus_kind": corpus_kind(d),
                          "key": use_key(k, d), "cfg": self.specialist_cfg(k, d)}
                         for k, d in self.specialist_uses()])

    def specialists_targets(self) -> list[str]:
        if not self.config["specialists"]["enabled"]:
            return []
        return ([self.specialist_model(k, d) for k, d in self.specialist_uses()]
                + ["results/tables/specialist_accuracy.tsv",
                   "results/tables/specialist_accuracy.md",
                   "figures/specialist_confusion.png", "figures/specialist_confusion.pdf"])

    # ---------------------------------------------------------------- judges
    def judge_names(self) -> list[str]:
        """Active judges (config judges.active, else every judge in judges.panel)."""
        jcfg = self.config["judges"]
        if not jcfg.get("enabled", True):
            return []
        names = jcfg.get("active") or sorted(jcfg["panel"])
        missing = [n for n in names if n not in jcfg["panel"]]
        if missing:
            raise PlanError(f"config judges.active names unknown judges {missing}; "
                            f"panel has {sorted(jcfg['panel'])}")
        return list(names)

    def judge_spec(self, name: str) -> dict:
        try:
            return self.config["judges"]["panel"][name]
        except KeyError:
            raise PlanError(f"no judge {name!r} in config judges.panel") from None

    def perception_corpora(self, study: str, task: str) -> dict[str, str]:
        """kind -> corpus whose own specialist an embedded judge perceives with on one
        trial shard: Study A perceives each task's corpus with that corpus's
        specialist; Study B always with its own emotion specialist."""
        if study == "B":
            return {"emotion": self.study_b_specialist_corpus()}
        if task in vocab_a.CLS_TASKS:
            return {task: self.study_a_dataset(task)}
        criterion = vocab_a.pair_criterion(task)
        if criterion is not None:
            return {vocab_a.CRITERION_KIND[criterion]: self.study_a_dataset(criterion)}
        return {}

    def judge_spec_for(self, name: str, study: str, task: str) -> dict:
        """judge_spec with perception models `auto` replaced by the specialist of the
        shard's corpus (other kinds: null, the shard never needs them)."""
        spec = copy.deepcopy(self.judge_spec(name))
        perception = spec.get("perception") or {}
        if spec["provider"] not in providers(perceives=True):
            return spec
        corpora = self.perception_corpora(study, task)
        models = dict(perception.get("models") or {})
        for kind, path in models.items():
            if path == "auto":
                models[kind] = (self.specialist_model(kind, corpora[kind])
                                if kind in corpora else None)
        perception["models"] = models
        spec["perception"] = perception
        return spec

    def judge_param(self, name: str, study: str | None = None, task: str | None = None) -> str:
        """The judge's settings as one canonical JSON scalar (cost fields left out).
        With study/task, `auto` perception models are resolved for that shard."""
        spec = self.judge_spec_for(name, study, task) if study else self.judge_spec(name)
        return as_param({k: v for k, v in spec.items() if k not in JUDGE_COST_FIELDS})

    def judge_model_inputs(self, name: str, study: str | None = None,
                           task: str | None = None) -> list[str]:
        """Specialist model files an embedded perceiving judge reads (built upstream)."""
        spec = self.judge_spec_for(name, study, task) if study else self.judge_spec(name)
        if spec["provider"] not in providers(perceives=True):
            return []
        perception = spec.get("perception") or {}
        return sorted(p for p in (perception.get("models") or {}).values() if p and p != "auto")

    def paid_judge(self, name: str) -> bool:
        return is_paid(self.judge_spec(name))

    def paid_judge_jobs(self) -> list[tuple[str, str]]:
        """(judge, trials file) of every shard an API judge judges in this workflow."""
        jobs = set()
        if self.config["study_a"]["enabled"]:
            for j in self.study_a_judges():
                if self.paid_judge(j):
                    jobs |= {(j, f) for f in self.study_a_trial_files()}
        if self.config["study_b"]["enabled"]:
            for j in self.study_b_judges():
                if self.paid_judge(j):
                    jobs |= {(j, f) for f in self.study_b_trial_files()}
        return sorted(jobs)

    def judge_preflight_gate(self, judge: str) -> list[str]:
        return [JUDGE_PREFLIGHT] if self.paid_judge(judge) else []

    # ---------------------------------------------------------------- Study A
    def study_a_dataset(self, attribute: str) -> str:
        """Dataset Study A reads for `attribute`: the config override or dataset_for()."""
        sa = self.config["study_a"]
        if attribute in vocab_a.CLS_TASKS:
            name = sa[attribute]["dataset"]
        else:
            name = sa["pairwise"][f"{attribute}_dataset"]
        return name or self.dataset_for(attribute)

    def study_a_cls_manifests(self) -> list[str]:
        """Manifests of the classification tasks' corpora (the sentences each clip reads,
        for the tables' "conditional on the k sentences used")."""
        return sorted({f"data/{self.study_a_dataset(t)}/manifest.tsv"
                       for t in vocab_a.CLS_TASKS})

    def study_a_shards(self) -> list[tuple[str, str]]:
        """(task, shard) of every Study A trial shard."""
        out = [(t, s) for t in vocab_a.CLS_TASKS for s in vocab_a.CLS_SHARDS]
        out += [(vocab_a.pair_task(c), f) for c in self.config["study_a"]["pairwise"]["criteria"]
                for f in vocab_a.PAIR_FORMATS]
        return out

    def study_a_trial_files(self) -> list[str]:
        return [f"results/trials/A/{t}/{s}.jsonl" for t, s in self.study_a_shards()]

    def study_a_judges(self) -> list[str]:
        """Judges Study A queries: study_a.judges, else every judge the judges stage declares."""
        names = list(self.config["study_a"]["judges"]) or self.judge_names()
        if not names:
            raise PlanError("study_a: no judges (set study_a.judges or declare judges)")
        return names

    def study_a_responses(self, judge: str) -> list[str]:
        return [f"results/responses/{judge}/A/{t}/{s}.jsonl" for t, s in self.study_a_shards()]

    def study_a_cls_inputs(self, task: str, shard: str) -> dict[str, Any]:
        cfg = self.config["study_a"][task]
        ds = self.study_a_dataset(task)
        out: dict[str, Any] = {
            "manifest": f"data/{ds}/manifest.tsv",
            "predictions": self.specialist_predictions(cfg["specialist"], ds),
            "specialist_model": self.specialist_model(cfg["specialist"], ds)}
        if shard in ("blueprint", "conflict"):
            out["features"] = f"results/features/{ds}.tsv"
            out["templates"] = sorted(str(p) for p in
                                      (self.repo / "templates" / "blueprint").glob("*.txt"))
        return out

    def study_a_cls_params(self, task: str, shard: str) -> str:
        """Only the config a shard depends on, so a change re-runs only that shard."""
        sa = self.config["study_a"]
        keep = {"blueprint": ["seeds"], "reference": ["reference_seeds", "match_placement"],
                "conflict": ["conflict_seeds", "conflict_placement"]}[shard]
        keep = [*keep, "fallible_variants"]
        return as_param({"task_cfg": sa[task], **{k: sa[k] for k in keep},
                         "seed": self.config["seed"]})

    def study_a_cls_specialist(self, task: str) -> str:
        return f"{self.config['study_a'][task]['specialist']}@{self.study_a_dataset(task)}"

    def study_a_pair_manifest(self, criterion: str) -> str:
        return f"data/{self.study_a_dataset(criterion)}/manifest.tsv"

    def study_a_pair_specialist(self, criterion: str) -> str:
        """model.json of the specialist grounding a pair criterion on its corpus."""
        return self.specialist_model(vocab_a.CRITERION_KIND[criterion],
                                     self.study_a_dataset(criterion))

    def study_a_pair_specialist_name(self, criterion: str) -> str:
        return f"{vocab_a.CRITERION_KIND[criterion]}@{self.study_a_dataset(criterion)}"

    def study_a_pair_params(self) -> str:
        pw = self.config["study_a"]["pairwise"]
        keep = {k: pw[k] for k in ("n_pairs", "split", "min_score_gap")}
        if pw.get("reference_layout", "auto") != "auto":  # default: params unchanged
            keep["reference_layout"] = pw["reference_layout"]
        return as_param({"pairwise": keep, "seed": self.config["seed"]})

    def study_a_planted_specs(self) -> dict[str, dict]:
        """Planted propensities of the simulated judges Study A queries."""
        out = {}
        for name in self.study_a_judges():
            spec = self.config["judges"]["panel"].get(name, {})
            if spec.get("provider") == "simulated":
                out[name] = spec.get("simulated") or {}
        return out

    def study_a_design(self) -> dict[str, Any]:
        """What the planted-vs-estimated table needs of the design: K per
        classification task and the cue-conflict placement."""
        sa = self.config["study_a"]
        return {"k": {t: len(sa[t]["labels"]) for t in vocab_a.CLS_TASKS},
                "conflict_placement": sa["conflict_placement"]}

    def study_a_control_judges(self) -> list[str]:
        """Study A judges whose behaviour is known by construction: reported, but left
        out of the contrasts' Holm families."""
        panel = self.config["judges"]["panel"]
        return sorted(n for n in self.study_a_judges()
                      if panel.get(n, {}).get("provider") in providers(control=True))

    def study_a_targets(self) -> list[str]:
        if not self.config["study_a"]["enabled"]:
            return []
        return tables(STUDY_A_TABLES) + figures(STUDY_A_FIGURES)

    # ---------------------------------------------------------------- Study B
    def study_b_specialist_corpus(self) -> str:
        """Corpus Study B's own emotion specialist is fitted on."""
        return self.config["study_b"]["rendering"]["specialist_corpus"]

    def study_b_specialist(self) -> str:
        """model.json Study B's TTS filter scores candidates with."""
        path = self.config["study_b"]["rendering"]["specialist"]
        if path == "auto":
            return self.specialist_model("emotion", self.study_b_specialist_corpus())
        return path

    def study_b_tasks(self) -> list[str]:
        tasks = self.config["study_b"]["tasks"]
        return [t for t in vocab_b.TASKS if tasks[t]["enabled"]]

    def study_b_shards(self, task: str) -> list[str]:
        sb = self.config["study_b"]
        cues = sb["tasks"][task]["cues"]
        return ([vocab_b.protocol_shard(p, c) for p in sb["protocols"] for c in cues]
                + list(vocab_b.PROBE_SHARDS))

    def study_b_trial_files(self, shards_of: Callable[[str], bool] | None = None) -> list[str]:
        return [f"results/trials/B/{t}/{s}.jsonl" for t in self.study_b_tasks()
                for s in self.study_b_shards(t) if shards_of is None or shards_of(s)]

    def study_b_judges(self) -> list[str]:
        names = list(self.config["study_b"]["judges"]) or self.judge_names()
        if not names:
            raise PlanError("study_b: no judges (set study_b.judges or judges.active)")
        return names

    def study_b_corpus(self, task: str) -> str:
        """Corpus a Study B task's items come from (named on every table row)."""
        return self.dataset_for("counterfactual" if task == "single" else "dialogue")

    def study_b_table(self, task: str) -> str:
        """Source table of a task: items.tsv (single) or the dialogue manifest."""
        if task == "single":
            return self.aux_table_for("counterfactual", "items.tsv")
        return self.manifest_for("dialogue")

    def study_b_manifest(self, task: str) -> str:
        """The manifest beside the source table (so the corpus audio exists)."""
        return self.manifest_for("counterfactual" if task == "single" else "dialogue")

    def study_b_template(self, shard: str) -> str:
        return str(self.study_b_templates / STUDY_B_TEMPLATE_FILES[study_b_kind(shard)])

    def study_b_cue(self, shard: str) -> list[str]:
        """The cue file a shard uses ([] for cue none and the probes)."""
        if not study_b_is_protocol(shard):
            return []
        cue = shard.split("-", 1)[1]
        return [] if cue == vocab_b.NO_CUE else [str(self.study_b_templates / "cues" / f"{cue}.txt")]

    #: replies per DNSMOS shard (rule study_b_reply_dnsmos): ~16 s of CPU per shard on
    #: the default config on a 2-core machine of calibration 0.57 s (run_profile.py)
    REPLIES_PER_DNSMOS_SHARD = 32

    def study_b_reply_shards(self) -> int:
        """DNSMOS shards of the Study B replies: one per REPLIES_PER_DNSMOS_SHARD
        replies (R0 and R1 of every item of every task), at least one."""
        tasks = self.config["study_b"]["tasks"]
        n = sum(2 * int(tasks[t]["n_items"]) for t in self.study_b_tasks())
        return max(1, -(-n // self.REPLIES_PER_DNSMOS_SHARD))

    def study_b_task_param(self, task: str) -> str:
        """Only the config a task's items/renderings depend on."""
        sb = self.config["study_b"]
        # the reply-quality settings (DNSMOS voices, LLM scorer) never touch items
        replies = {k: v for k, v in sb["replies"].items() if k not in ("dnsmos_voices", "scorer")}
        return as_param({"tasks": {task: sb["tasks"][task]}, "rendering": sb["rendering"],
                         "replies": replies})

    def study_b_alt_writer(self) -> str:
        """The writer-swap ablation's second writer (never the run's own writer)."""
        sb = self.config["study_b"]
        alt = sb["writer_ablation"]["writer"]
        if alt == sb["replies"]["writer"]:
            raise PlanError(f"study_b.writer_ablation.writer = {alt!r} is the run's own writer "
                            f"(study_b.replies.writer); choose the other template family")
        return alt

    def study_b_scored(self, shards_of: Callable[[str], bool] | None = None) -> list[str]:
        """Scored shard tables of every judge x task (optionally a subset of shards)."""
        out = []
        for task in self.study_b_tasks():
            for shard in self.study_b_shards(task):
                if shards_of is None or shards_of(shard):
                    out += [f"results/metrics/B/scored/{j}/{task}/{shard}.tsv"
                            for j in self.study_b_judges()]
        return out

    def study_b_metric_inputs(self, reads: Mapping[str, str]) -> dict[str, list[str]]:
        """The input files of a Study B metrics rule, role -> files, from its recipe's
        `rule_inputs` (judgeaudit.study_b.recipes): `scored` names a set of shards
        (STUDY_B_SHARD_SETS), any other role a file every task's conditions hold
        (STUDY_B_TASK_FILES)."""
        out: dict[str, list[str]] = {}
        for role, what in reads.items():
            if role == "scored" and what in STUDY_B_SHARD_SETS:
                out[role] = self.study_b_scored(STUDY_B_SHARD_SETS[what])
            elif role != "scored" and what in STUDY_B_TASK_FILES:
                out[role] = [f"results/conditions/B/{t}/{STUDY_B_TASK_FILES[what]}"
                             for t in self.study_b_tasks()]
            else:
                known = STUDY_B_SHARD_SETS if role == "scored" else STUDY_B_TASK_FILES
                raise PlanError(f"a Study B recipe reads {role}={what!r}; known for "
                                f"{role}: {sorted(known)}")
        return out

    def study_b_metric_params(self, names: Sequence[str]) -> dict[str, str]:
        """The config-derived params a Study B metrics rule passes beyond its metric,
        seed and bootstrap size (its recipe's `rule_params`)."""
        sb = self.config["study_b"]
        known = {
            "gate": lambda: as_param(sb["potemkin_gate"]),
            "p_scope": lambda: sb["tasks"]["positional"]["p_bit"],
            "corpora": lambda: as_param({t: self.study_b_corpus(t)
                                         for t in self.study_b_tasks()}),
        }
        unknown = sorted(set(names) - set(known))
        if unknown:
            raise PlanError(f"Study B recipe params {unknown} are unknown; known: "
                            f"{sorted(known)}")
        return {n: known[n]() for n in names}

    def study_b_targets(self) -> list[str]:
        if not (self.config["study_b"]["enabled"] and self.study_b_tasks()):
            return []
        # a table the config switches off (the registry's enabled_by) is built on demand
        on = [t.name for t in study_b_outputs.TABLES if t.enabled(self.config)]
        return tables(on) + figures(STUDY_B_FIGURES)

    # ---------------------------------------------------------------- power
    def power_trial_files(self) -> list[str]:
        """Trial shards the power report sizes: every Study A shard and the Study B
        protocol shards (the probes carry no planned test)."""
        files = self.study_a_trial_files() if self.config["study_a"]["enabled"] else []
        if self.config["study_b"]["enabled"]:
            files += self.study_b_trial_files(study_b_is_protocol)
        return files

    def power_sizes_cfg(self, study: str) -> dict:
        """Only the configured sizes the shortfall check compares with the trials."""
        if study == "study_a":
            sa = self.config["study_a"]
            return {**{t: {"per_class": sa[t]["per_class"], "labels": sa[t]["labels"]}
                       for t in vocab_a.CLS_TASKS},
                    "pairwise": {"n_pairs": sa["pairwise"]["n_pairs"]}}
        return {"tasks": {t: {"n_items": c.get("n_items")}
                          for t, c in self.config["study_b"]["tasks"].items()}}

    def power_audited_names(self) -> list[str]:
        """Audited (non-control) judges of either study: whose estimates configure the
        Holm families of the power table's second pass."""
        panel = self.config["judges"]["panel"]
        names = []
        if self.config["study_a"]["enabled"]:
            names += [n for n in self.study_a_judges() if n not in self.study_a_control_judges()]
        if self.config["study_b"]["enabled"]:
            names += [n for n in self.study_b_judges()
                      if panel.get(n, {}).get("provider") not in providers(control=True)]
        return sorted(set(names))

    def power_run_pilot(self) -> dict[str, list[str]]:
        """The run's own measurements the power table's second pass re-reads
        (`power.pilot: run`): Study A metrics and contrasts, Study B scored protocol
        shards; nothing when `power.pilot` is `configured`."""
        out: dict[str, list[str]] = {"metrics": [], "contrasts": [], "scored": []}
        if self.config["power"].get("pilot", "run") != "run":
            return out
        if self.config["study_a"]["enabled"]:
            out["metrics"] = ["results/metrics/A/metrics.tsv"]
            out["contrasts"] = ["results/metrics/A/contrasts.tsv"]
        if self.config["study_b"]["enabled"] and self.study_b_tasks():
            out["scored"] = self.study_b_scored(study_b_is_protocol)
        return out

    def power_targets(self) -> list[str]:
        if not (self.config["power"]["enabled"] and self.power_trial_files()):
            return []
        return [f"results/tables/power.{ext}" for ext in TABLE_EXTS]

    # ---------------------------------------------------------------- validation
    def validation_seeds(self, run: str) -> int:
        v = self.config["validation"]
        return v["n_seeds"] if run == "default" else v["full_n_seeds"]

    def validation_params(self, run: str, scenario: str) -> str:
        v = self.config["validation"]
        return as_param({"scenario": scenario, "n_seeds": self.validation_seeds(run),
                         "n_boot": v["n_boot"], "truth_clusters": v["truth_clusters"],
                         "overrides": v["overrides"].get(scenario, {}),
                         "seed": self.config["seed"]})

    def validation_scenario_files(self, run: str) -> list[str]:
        return [f"results/validation/{run}/{s}.reps.tsv"
                for s in sorted(self.config["validation"]["scenarios"])]

    @staticmethod
    def validation_outputs(run: str) -> list[str]:
        name = VALIDATION_RUNS[run]
        return tables([name]) + figures([name])

    def validation_targets(self) -> list[str]:
        return self.validation_outputs("default") if self.config["validation"]["enabled"] else []


__all__ = ["JUDGE_COST_FIELDS", "JUDGE_PREFLIGHT",
           "STUDY_A_FIGURES", "STUDY_A_TABLES", "STUDY_B_FIGURES",
           "STUDY_B_TABLES", "VALIDATION_RUNS", "Plan", "PlanError", "as_param", "corpus_kind",
           "figures", "study_b_is_cue_contrast", "study_b_is_protocol",
           "study_b_is_state_input", "study_b_kind", "tables", "use_key", "validation_run"]

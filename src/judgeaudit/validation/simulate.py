"""An independent simulator of judge behaviour, written from the study's definitions
(SPEC sections 2-3), for validating the audit's estimators.

It deliberately shares NO code with the estimators or the embedded judges: it
imports only NumPy and pandas (a test inspects its imports). It generates
trial-level data with cluster ids (speaker, clip, source, pair, item) and the
confounders a real judge would bring:

- chance-level guessing when the judge does not follow a label it cannot check
  (so the follow rate RF is NOT the planted follow propensity by construction);
- perception errors that are correlated with the shown wrong label: a clip is
  misheard preferably as its "neighbour" class (the label the first cyclic
  derangement shows), and on a trial with a shown label a flickering percept is
  pulled towards that label (suggestion), which the judge's audio-only answer
  cannot reveal;
- position bias that depends on the content of the pair (harder pairs, with a
  smaller quality gap, lock more often) plus a source-clip random effect;
- refusals that are more likely under a wrong label;
- clustered speaker (classification, pairs) and item (Study B) random effects on
  perception and on follow propensity.

Each scenario's estimands are computed from their definitions on a very large
population drawn from the same generative model (`population_truth`), never by
calling an estimator; a few have closed forms (`analytic_truth`) which the tests
compare with the population values.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np
import pandas as pd

KINDS = ("classification", "pairwise", "study_b")


def expit(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


def logit(p: float) -> float:
    p = min(max(float(p), 1e-9), 1 - 1e-9)
    return math.log(p / (1.0 - p))


def stable_seed(*material: Any) -> int:
    """A 63-bit seed from its material (independent of PYTHONHASHSEED)."""
    h = hashlib.sha256("\x1f".join(map(str, material)).encode("utf-8")).digest()
    return int.from_bytes(h[:8], "big") >> 1


# ------------------------------------------------------------------ scenarios
@dataclass(frozen=True)
class Classification:
    """Study A classification (RQ1 wrong block with / without audio, audio only).

    Trials per clip: `audio_only` (1), `wrong_with_audio` (one per derangement
    d = 1..n_derangements, wrong label = (gold + d) mod K) and `wrong_block`
    (no audio, same wrong labels)."""

    k: int = 8
    n_speakers: int = 8
    clips_per_speaker: int = 30
    n_derangements: int = 3
    perceive: float = 0.8           # median-speaker probability of hearing the clip right
    perceive_sd: float = 0.6        # speaker random effect on logit(perceive)
    confuse_neighbour: float = 0.5  # P(a misperception lands on class gold+1)
    flicker: float = 0.1            # P(a trial re-draws its percept instead of the clip's)
    suggestion: float = 0.5         # P(a flickering percept becomes the shown label)
    follow_audio: float = 0.6       # median-speaker P(follow | shown label != percept), audio
    follow_block: float = 0.8       # median-speaker P(follow), no audio (else chance guess)
    follow_sd: float = 0.5          # speaker random effect on logit(follow)
    refuse_base: float = 0.02       # P(refusal) without a shown label
    refuse_wrong: float = 0.06      # P(refusal) with a wrong label shown
    n_sentences: int = 0            # > 0: clip j of every speaker reads sentence j mod S
    sentence_sd: float = 0.0        # sentence random effect on logit(perceive), crossed
    unequal: float = 0.0            # speakers' clip counts cycle c (1 - u), c, c (1 + u)
    sentence_seed: int = 0          # > 0: the SAME S sentence effects in every replicate and
    #                                 the population (drawn once from this seed): the
    #                                 estimand conditional on the sentences used
    sentences_per_speaker: int = 0  # > 0 (random sentences only): speaker v's clip j reads
    #                                 sentence (v + j mod m) mod S, m consecutive ones per
    #                                 speaker (the default synth_emotion design:
    #                                 datasets.synth.emotion.voice_sentences)


@dataclass(frozen=True)
class Pairwise:
    """Study A pairwise A/B: each pair judged in AB and BA order (one format)."""

    n_speakers: int = 6
    sources_per_speaker: int = 2
    pairs_per_source: int = 2       # e.g. degraded copies of one clean source clip
    lock: float = 0.5               # median P(lock a slot for this pair) at gap 0.5
    lock_gap_slope: float = 3.0     # logit(lock) += slope * (0.5 - gap): hard pairs lock more
    lock_first: float = 0.75        # P(locked slot is the first)
    source_sd: float = 0.5          # source-clip random effect on logit(lock)
    discriminate: float = 0.0       # logit P(pick better) intercept when not locked
    discriminate_gap: float = 3.0   # ... + slope * gap (gap ~ U(0.1, 1))
    speaker_sd: float = 0.5         # speaker random effect on logit P(pick better)
    refuse: float = 0.03            # P(invalid answer) per single judgment


@dataclass(frozen=True)
class StudyB:
    """Study B single-turn items: 2 renderings, probes P and O, pointwise J (cue
    none) per rendering, Pairwise judgment per order (AB, BA)."""

    n_items: int = 16
    perceive: float = 0.8           # median-item P(P probe right)
    item_sd: float = 0.8            # item random effect (perception and pairwise)
    oracle: float = 0.9             # P(O probe right)
    potemkin: float = 0.3           # P(J wrong | P right, O right)
    pairwise: float = 0.85          # median-item P(Pairwise judgment right)
    refuse: float = 0.03            # P(invalid) per probe / judgment
    n_voices: int = 0               # > 0: items nested in voices, item i read by voice i mod V
    voice_sd: float = 0.0           # voice random effect (perception and pairwise)


PARAMS = {"classification": Classification, "pairwise": Pairwise, "study_b": StudyB}

# estimand -> the planted knob it is read against (None: not a planted rate)
ESTIMANDS = {
    "classification": ("accuracy_audio_only", "accuracy_wrong_with_audio", "rf_wrong_with_audio",
                       "rf_norm_wrong_with_audio", "rf_adj_wrong_with_audio", "rf_wrong_block",
                       "rf_norm_wrong_block"),
    "pairwise": ("lock", "g", "consistent_correct", "consistent_wrong", "locked_first",
                 "locked_second"),
    "study_b": ("potemkin_share", "conditional_potemkin", "protocol_gap"),
}


def planted(kind: str, p) -> dict[str, float | None]:
    """The planted behavioural knob each estimand is read against (for the
    planted-rate-0 split and the bias-vs-planted column)."""
    if kind == "classification":
        return {"accuracy_audio_only": None, "accuracy_wrong_with_audio": None,
                "rf_wrong_with_audio": p.follow_audio, "rf_norm_wrong_with_audio": p.follow_audio,
                "rf_adj_wrong_with_audio": p.follow_audio, "rf_wrong_block": p.follow_block,
                "rf_norm_wrong_block": p.follow_block}
    if kind == "pairwise":
        return {"lock": p.lock, "g": None, "consistent_correct": None, "consistent_wrong": None,
                "locked_first": p.lock * p.lock_first, "locked_second": p.lock * (1 - p.lock_first)}
    return {"potemkin_share": p.potemkin, "conditional_potemkin": p.potemkin,
            "protocol_gap": None}


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str
    params: Any
    meant_for: tuple[str, ...]      # estimands whose coverage this scenario is meant to test
    note: str = ""

    def with_params(self, **overrides) -> Scenario:
        return replace(self, params=replace(self.params, **overrides))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "params": asdict(self.params),
                "meant_for": list(self.meant_for), "note": self.note}


_CLS_ALL = ESTIMANDS["classification"]
_PAIR_ALL = ESTIMANDS["pairwise"]

PRESETS: dict[str, Scenario] = {s.name: s for s in (
    Scenario("emotion_follower", "classification", Classification(),
             _CLS_ALL, "K=8, 8 speakers x 30 clips, 3 derangements, follows a wrong block"),
    Scenario("language_resister", "classification",
             Classification(k=4, n_speakers=6, clips_per_speaker=16, perceive=0.97,
                            perceive_sd=0.5, follow_audio=0.1, follow_block=0.5),
             _CLS_ALL,
             "K=4, near-perfect perception, rarely follows (RF~ with audio below chance)"),
    Scenario("emotion_crossed", "classification",
             Classification(n_speakers=24, clips_per_speaker=10, n_sentences=8,
                            sentence_sd=0.5, unequal=0.5),
             ("accuracy_audio_only", "accuracy_wrong_with_audio", "rf_wrong_with_audio",
              "rf_wrong_block"),
             "crossed, unequal clusters: 24 speakers with 5, 10 or 15 clips each, every "
             "speaker reading the same 8 sentences (sentence effect sd 0.5 on perception), "
             "the truth the mean over NEW sentences: counted is the two-way (speaker x "
             "sentence) interval (wilson_cgm_twoway), the one that generalises over "
             "sentences; the speaker-clustered interval does not claim to (the tables "
             "state it is conditional on the sentences used), so it is shown, not counted "
             "(issue 32)"),
    Scenario("emotion_crossed_chain", "classification",
             Classification(n_speakers=24, clips_per_speaker=10, n_sentences=8,
                            sentences_per_speaker=2, sentence_sd=0.5, unequal=0.5),
             ("accuracy_audio_only", "accuracy_wrong_with_audio", "rf_wrong_with_audio",
              "rf_wrong_block"),
             "crossed as the default synth_emotion corpus: 24 speakers with 5, 10 or 15 "
             "clips, 8 sentences, speaker v reading sentences v and v+1 (mod 8) "
             "(sentence effect sd 0.5 on perception), the truth the mean over NEW "
             "sentences: counted is the two-way (speaker x sentence) interval (issue 32)"),
    Scenario("emotion_crossed_fixed", "classification",
             Classification(n_speakers=24, clips_per_speaker=10, n_sentences=8,
                            sentence_sd=0.5, unequal=0.5, sentence_seed=32),
             _CLS_ALL,
             "crossed speaker x sentence, conditional on the sentences used: 24 speakers "
             "with 5, 10 or 15 clips each reading the same 8 sentences (effects sd 0.5, "
             "fixed across replicates and population); the printed speaker-clustered "
             "interval's estimand"),
    Scenario("emotion_crossed_two", "classification",
             Classification(n_speakers=24, clips_per_speaker=10, n_sentences=2,
                            sentence_sd=0.5, unequal=0.5, sentence_seed=33),
             _CLS_ALL,
             "crossed as the default emotion task: 24 speakers x the same 2 sentences "
             "(fixed), conditional on them"),
    Scenario("emotion_listener", "classification",
             Classification(follow_audio=0.0, follow_block=0.0, follow_sd=0.0),
             ("accuracy_audio_only", "accuracy_wrong_with_audio"),
             "planted follow 0: every RF row is a planted-rate-0 row"),
    Scenario("pairs_locker", "pairwise", Pairwise(), _PAIR_ALL,
             "lock 0.5 at median gap, more on hard pairs; 24 pairs from 12 sources of 6 speakers"),
    Scenario("pairs_listener", "pairwise",
             Pairwise(lock=0.0, lock_gap_slope=0.0, source_sd=0.0, discriminate=1.0),
             ("g", "consistent_correct", "consistent_wrong"),
             "planted lock 0 (inconsistent choices still look locked)"),
    Scenario("pairs_locker_six", "pairwise", Pairwise(n_speakers=3), _PAIR_ALL,
             "as pairs_locker on 6 source clusters (3 speakers x 2 sources, 12 pairs): the "
             "fewest clusters a printed pair cell has had"),
    Scenario("pairs_locker_eight", "pairwise", Pairwise(n_speakers=4), _PAIR_ALL,
             "as pairs_locker on 8 source clusters (4 speakers x 2 sources, 16 pairs)"),
    Scenario("studyb_single", "study_b", StudyB(), ESTIMANDS["study_b"],
             "16 items x 2 renderings, potemkin 0.3"),
    Scenario("studyb_no_potemkin", "study_b", StudyB(potemkin=0.0, n_items=24),
             ("protocol_gap",), "planted potemkin 0"),
    Scenario("studyb_positional", "study_b",
             StudyB(n_items=12, perceive=0.15, item_sd=0.8, pairwise=0.55),
             ("protocol_gap",),
             "12 items, P rarely right (positional): conditional Potemkin rests on a few "
             "renderings (shown, not counted)"),
    Scenario("studyb_conversation", "study_b", StudyB(n_items=50, pairwise=0.8),
             ("protocol_gap", "potemkin_share"),
             "the default conversation task's size: 50 items x 2 renderings"),
    Scenario("studyb_voices", "study_b",
             StudyB(n_items=50, pairwise=0.8, n_voices=22, voice_sd=0.5),
             ("protocol_gap", "potemkin_share"),
             "items nested in voices: 50 items read by 22 voices (voice effect sd 0.5 on "
             "perception and pairwise); the printed interval clusters on the voice "
             "(study_b.metrics.item_clusters: 8 or more shared voices), truth over new "
             "voices"),
    Scenario("studyb_voices_few", "study_b",
             StudyB(n_items=50, pairwise=0.8, n_voices=8, voice_sd=0.5),
             ("protocol_gap", "potemkin_share"),
             "items nested in voices: 50 items over 8 voices (about 6 items each), the "
             "fewest the product clusters on the voice; truth over new voices"),
    Scenario("studyb_voices_four", "study_b",
             StudyB(n_items=50, pairwise=0.8, n_voices=4, voice_sd=0.5),
             ("protocol_gap", "potemkin_share"),
             "items nested in voices: 50 items over 4 voices (9-17 items each; the "
             "roster before each item had its own voice), voice effect sd 0.5; under 8 "
             "voices the printed interval clusters on the item (its caption: conditional "
             "on the voices used), the truth is over new voices (issue 32)"),
    Scenario("studyb_voice_per_item", "study_b",
             StudyB(n_items=50, pairwise=0.8, n_voices=50, voice_sd=0.5),
             ("protocol_gap", "potemkin_share"),
             "each item read in its own voice, as the default run renders them "
             "(study_b.rendering.n_voices 50 >= 50 items): 50 items, 50 voices, voice "
             "effect sd 0.5 on perception and pairwise; the item-clustered interval, "
             "truth over new items and voices"),
)}

DEFAULT_SCENARIOS = tuple(PRESETS)


def scenario(name: str, overrides: dict[str, Any] | None = None) -> Scenario:
    if name not in PRESETS:
        raise ValueError(f"validation: unknown scenario {name!r}; presets are {sorted(PRESETS)}")
    sc = PRESETS[name]
    if overrides:
        known = {f.name for f in fields(sc.params)}
        bad = sorted(set(overrides) - known)
        if bad:
            raise ValueError(f"validation.overrides.{name}: unknown parameter(s) {bad}; "
                             f"expected some of {sorted(known)}")
        typed = {}
        for key, value in overrides.items():
            default = getattr(sc.params, key)
            if isinstance(default, int) and float(value) != int(value):
                raise ValueError(f"validation.overrides.{name}.{key}: expected an integer, "
                                 f"got {value!r}")
            typed[key] = int(value) if isinstance(default, int) else float(value)
        sc = sc.with_params(**typed)
    return sc


# ------------------------------------------------------------------ classification
def _mishear(rng, gold: np.ndarray, k: int, q: float) -> np.ndarray:
    """A wrong class for each gold: gold+1 with probability q, else uniform over
    the other K-2 wrong classes."""
    n = gold.size
    neighbour = (gold + 1) % k
    if k <= 2:
        return neighbour
    other = (gold + 2 + rng.integers(0, k - 2, size=n)) % k  # one of gold+2..gold+K-1
    return np.where(rng.random(n) < q, neighbour, other)


def _percept(rng, gold, p_right, k, q):
    right = rng.random(gold.size) < p_right
    return np.where(right, gold, _mishear(rng, gold, k, q))


def balanced_labels(rng: np.random.Generator, within: np.ndarray, ends: np.ndarray,
                    k: int) -> np.ndarray:
    """Balanced gold labels within each speaker: speaker s's clips (rows ends[s-1] to
    ends[s]) get 0, 1, .., K-1, 0, .. in a random order. One in-place shuffle per
    speaker of a slice of one array: the draws of `rng.permutation(np.arange(c) % k)`
    per speaker, concatenated (tests/test_validation.py)."""
    gold = within % k
    shuffle = rng.shuffle
    for a, b in zip((ends - np.diff(ends, prepend=0)).tolist(), ends.tolist(), strict=True):
        shuffle(gold[a:b])
    return gold


def simulate_classification(p: Classification, rng: np.random.Generator,
                            n_speakers: int | None = None) -> pd.DataFrame:
    """One trial per row: speaker, clip, condition, derangement, gold, shown (or -1),
    answer (-1 when refused), valid. Labels are class indices 0..K-1."""
    if not 1 <= p.n_derangements <= p.k - 1:
        raise ValueError(f"classification: need 1 <= n_derangements <= K-1, got "
                         f"{p.n_derangements} with K={p.k}")
    s_n = n_speakers or p.n_speakers
    k = p.k
    factors = (1.0 - p.unequal, 1.0, 1.0 + p.unequal)
    # round half to even, as Python's round()
    sizes = np.maximum(1, np.rint(p.clips_per_speaker * np.array(factors)[np.arange(s_n) % 3])
                       .astype(np.int64))
    n_clips = int(sizes.sum())
    speaker = np.repeat(np.arange(s_n), sizes)
    ends = np.cumsum(sizes)
    within = np.arange(n_clips) - np.repeat(ends - sizes, sizes)  # clip index within speaker
    u = rng.normal(0.0, p.perceive_sd, s_n)
    v = rng.normal(0.0, p.follow_sd, s_n)
    gold = balanced_labels(rng, within, ends, k)
    eta = logit(p.perceive) + u[speaker]
    sentence = None  # the sentence each clip reads (crossed designs only)
    if p.n_sentences > 0 and p.sentence_seed > 0:
        # crossed with the speakers, the sentences FIXED: the same S effects in every
        # replicate and in the population (new speakers read the same sentences)
        sentence = within % p.n_sentences
        eta = eta + fixed_sentence_effects(p)[sentence]
    elif p.n_sentences > 0:
        # crossed with the speakers: every speaker reads the same sentences; the
        # population (scale > 1) gets proportionally more sentences
        n_sent = p.n_sentences * max(1, s_n // p.n_speakers)
        w = rng.normal(0.0, p.sentence_sd, n_sent)
        if p.sentences_per_speaker > 0:  # a chain: each speaker reads m neighbours
            sentence = (speaker + within % p.sentences_per_speaker) % n_sent
        else:
            sentence = ((within + speaker * 7) % n_sent if n_sent > p.n_sentences
                        else within % n_sent)
        eta = eta + w[sentence]
    p_right = expit(eta)
    f_audio = expit(logit(p.follow_audio) + v[speaker]) if p.follow_audio > 0 else np.zeros(n_clips)
    f_block = expit(logit(p.follow_block) + v[speaker]) if p.follow_block > 0 else np.zeros(n_clips)
    clip_percept = _percept(rng, gold, p_right, k, p.confuse_neighbour)

    frames = []
    # audio only: the clip's percept, re-drawn on a flicker
    flick = rng.random(n_clips) < p.flicker
    ans = np.where(flick, _percept(rng, gold, p_right, k, p.confuse_neighbour), clip_percept)
    frames.append(dict(clip=np.arange(n_clips), condition="audio_only", derangement=0,
                       shown=np.full(n_clips, -1), answer=ans,
                       refused=rng.random(n_clips) < p.refuse_base))
    for d in range(1, p.n_derangements + 1):
        shown = (gold + d) % k
        # with audio: percept (flicker pulled towards the shown label), follow if it conflicts
        flick = rng.random(n_clips) < p.flicker
        drift = np.where(rng.random(n_clips) < p.suggestion, shown,
                         _percept(rng, gold, p_right, k, p.confuse_neighbour))
        perc = np.where(flick, drift, clip_percept)
        follow = (perc != shown) & (rng.random(n_clips) < f_audio)
        frames.append(dict(clip=np.arange(n_clips), condition="wrong_with_audio", derangement=d,
                           shown=shown, answer=np.where(follow, shown, perc),
                           refused=rng.random(n_clips) < p.refuse_wrong))
        # no audio: follow, else a chance-level guess over all K labels
        follow = rng.random(n_clips) < f_block
        guess = rng.integers(0, k, n_clips)
        frames.append(dict(clip=np.arange(n_clips), condition="wrong_block", derangement=d,
                           shown=shown, answer=np.where(follow, shown, guess),
                           refused=rng.random(n_clips) < p.refuse_wrong))
    # the frames stacked (one frame built, not one per condition and then concatenated)
    clip = np.concatenate([f["clip"] for f in frames])
    refused = np.concatenate([f["refused"] for f in frames])
    answer = np.concatenate([f["answer"] for f in frames])
    answer[refused] = -1
    out = pd.DataFrame({
        "clip": clip,
        "condition": np.repeat(np.array([f["condition"] for f in frames], dtype=object),
                               n_clips),
        "derangement": np.repeat(np.array([f["derangement"] for f in frames], dtype=np.int64),
                                 n_clips),
        "shown": np.concatenate([f["shown"] for f in frames]), "answer": answer,
        "speaker": speaker[clip], "gold": gold[clip], "valid": ~refused, "k": k})
    if sentence is not None:  # crossed designs: which sentence each trial's clip reads
        out["sentence"] = sentence[clip]
    return out


def fixed_sentence_effects(p: Classification) -> np.ndarray:
    """The S sentence effects of a fixed-sentence scenario (drawn once from its
    `sentence_seed`, the same in every replicate and in the population)."""
    return np.random.default_rng(p.sentence_seed).normal(0.0, p.sentence_sd, p.n_sentences)


def classification_estimands(df: pd.DataFrame, k: int) -> dict[str, float]:
    """The estimands from their definitions (SPEC 2): accuracy = P(answer = gold);
    RF = P(answer = shown wrong label); RF~ = (RF - c)/(1 - c), c = 1/(K-1), the
    chance normalisation before the paper's clip at 0 (issue 11: the audit reports
    it unclipped so its interval never collapses to [0, 0]; the clipped value is
    max(0, RF~));
    rf_adj = P(answer = shown | shown != the judge's own valid audio-only answer
    for the clip). All over valid answers, pooled over derangements."""
    # shares of 0/1 events: counts over counts (pandas' mean of a boolean Series is its
    # exact count over n too), read from arrays, not from filtered frames
    valid = df["valid"].to_numpy(bool)
    answer = df["answer"].to_numpy()
    gold = df["gold"].to_numpy()
    shown = df["shown"].to_numpy()
    c = 1.0 / (k - 1)

    def share(hit: np.ndarray, among: np.ndarray) -> float:
        n = int(np.count_nonzero(among))
        return float(np.count_nonzero(hit & among)) / n if n else math.nan

    out = {}
    rows = {}
    for cond in ("audio_only", "wrong_with_audio", "wrong_block"):
        sub = valid & (df["condition"] == cond).to_numpy(bool)
        rows[cond] = sub
        if cond in ("audio_only", "wrong_with_audio"):
            out[f"accuracy_{cond}"] = share(answer == gold, sub)
        if cond != "audio_only":
            rf = share(answer == shown, sub)
            out[f"rf_{cond}"] = rf
            out[f"rf_norm_{cond}"] = (rf - c) / (1.0 - c)
    # the judge's own valid audio-only answer per clip (one audio-only trial per clip)
    clip = df["clip"].to_numpy()
    own = rows["audio_only"]
    heard = np.full(int(clip.max()) + 1 if clip.size else 0, -1, dtype=np.int64)
    has = np.zeros(heard.size, dtype=bool)
    heard[clip[own]] = answer[own]
    has[clip[own]] = True
    w = rows["wrong_with_audio"]
    elig = w & has[clip] & (heard[clip] != shown)
    out["rf_adj_wrong_with_audio"] = share(answer == shown, elig)
    return out


# ------------------------------------------------------------------ pairwise
def simulate_pairwise(p: Pairwise, rng: np.random.Generator,
                      n_speakers: int | None = None) -> pd.DataFrame:
    """One single judgment per row: pair, source, speaker, order (AB/BA), better
    slot in AB order, choice (A/B, or '' when invalid), valid, gap."""
    s_n = n_speakers or p.n_speakers
    n_src = s_n * p.sources_per_speaker
    n_pairs = n_src * p.pairs_per_source
    source = np.repeat(np.arange(n_src), p.pairs_per_source)
    speaker = source // p.sources_per_speaker
    w_src = rng.normal(0.0, p.source_sd, n_src)
    u_spk = rng.normal(0.0, p.speaker_sd, s_n)
    gap = rng.uniform(0.1, 1.0, n_pairs)
    better_ab = np.where(rng.random(n_pairs) < 0.5, "A", "B")
    if p.lock > 0:
        lam = expit(logit(p.lock) + p.lock_gap_slope * (0.5 - gap) + w_src[source])
    else:
        lam = np.zeros(n_pairs)
    locked = rng.random(n_pairs) < lam
    side = np.where(rng.random(n_pairs) < p.lock_first, "A", "B")
    p_better = expit(p.discriminate + p.discriminate_gap * gap + u_spk[speaker])
    cols: dict[str, list] = {"better": [], "choice": [], "valid": []}
    for order in ("AB", "BA"):
        better = better_ab if order == "AB" else np.where(better_ab == "A", "B", "A")
        worse = np.where(better == "A", "B", "A")
        pick = np.where(rng.random(n_pairs) < p_better, better, worse)
        choice = np.where(locked, side, pick)
        valid = rng.random(n_pairs) >= p.refuse
        cols["better"].append(better)
        cols["choice"].append(np.where(valid, choice, ""))
        cols["valid"].append(valid)
    # the two orders stacked (one frame built, not one per order and then concatenated)
    return pd.DataFrame({"pair": np.tile(np.arange(n_pairs), 2), "source": np.tile(source, 2),
                         "speaker": np.tile(speaker, 2),
                         "order": np.repeat(np.array(["AB", "BA"], dtype=object), n_pairs),
                         "better_ab": np.tile(better_ab, 2),
                         "better": np.concatenate(cols["better"]),
                         "choice": np.concatenate(cols["choice"]),
                         "valid": np.concatenate(cols["valid"]), "gap": np.tile(gap, 2)})


def pairwise_estimands(df: pd.DataFrame) -> dict[str, float]:
    """SPEC 2 RQ3: per pair over both orders (both valid), lock = same slot in both
    orders; the four modes; g = share of valid single judgments choosing the
    better clip."""
    v = df[df["valid"]]
    g = float((v["choice"] == v["better"]).mean())
    ab = df[df["order"] == "AB"].set_index("pair")
    ba = df[df["order"] == "BA"].set_index("pair")
    both = ab["valid"] & ba["valid"].reindex(ab.index)
    a, b, best = ab.loc[both, "choice"], ba.loc[both, "choice"], ab.loc[both, "better_ab"]
    same = a == b
    out = {"lock": float(same.mean()), "g": g,
           "consistent_correct": float(((~same) & (a == best)).mean()),
           "consistent_wrong": float(((~same) & (a != best)).mean()),
           "locked_first": float((same & (a == "A")).mean()),
           "locked_second": float((same & (a == "B")).mean())}
    return out


# ------------------------------------------------------------------ study B
def simulate_study_b(p: StudyB, rng: np.random.Generator,
                     n_items: int | None = None) -> dict[str, pd.DataFrame]:
    """`renderings`: item, rendering, P, O, J bits (NaN when that probe's answer
    was invalid), voice (the voice the item is read in); `pairwise`: item, order,
    correct (NaN when invalid)."""
    n = n_items or p.n_items
    u = rng.normal(0.0, p.item_sd, n)
    voice = np.arange(n)  # no voice level: each item its own
    if p.n_voices > 0:
        # items nested in voices: item i read by voice i mod V (the population, with
        # more items, gets proportionally more voices)
        n_v = p.n_voices * max(1, n // p.n_items)
        voice = np.arange(n) % n_v
        u = u + rng.normal(0.0, p.voice_sd, n_v)[voice]
    item = np.repeat(np.arange(n), 2)
    rendering = np.tile([0, 1], n)
    m = 2 * n
    pb = rng.random(m) < expit(logit(p.perceive) + u[item])
    ob = rng.random(m) < p.oracle
    jb = np.where(pb & ob, rng.random(m) >= p.potemkin, rng.random(m) < 0.5)  # chance

    def masked(bits):
        b = bits.astype(float)
        b[rng.random(m) < p.refuse] = np.nan
        return b

    rend = pd.DataFrame({"item": item, "rendering": rendering, "P": masked(pb), "O": masked(ob),
                         "J": masked(jb), "voice": voice[item]})
    pw = rng.random(m) < expit(logit(p.pairwise) + u[item])
    pair = pd.DataFrame({"item": item, "order": np.where(rendering == 0, "AB", "BA"),
                         "correct": masked(pw)})
    return {"renderings": rend, "pairwise": pair}


def study_b_estimands(data: dict[str, pd.DataFrame]) -> dict[str, float]:
    """SPEC 3: state PO J per rendering (all three probes valid); Potemkin share =
    P(state 110); conditional Potemkin = P(J=0 | P=1, O=1); protocol gap = mean
    over items of Pairwise accuracy minus mean over items of Pointwise (J)
    accuracy (item means over valid answers)."""
    r = data["renderings"]
    d = r.dropna(subset=["P", "O", "J"])
    po = d[(d["P"] == 1) & (d["O"] == 1)]
    pw = data["pairwise"].dropna().groupby("item")["correct"].mean()
    pt = r.dropna(subset=["J"]).groupby("item")["J"].mean()
    common = pw.index.intersection(pt.index)
    return {"potemkin_share": float(((d["P"] == 1) & (d["O"] == 1) & (d["J"] == 0)).mean()),
            "conditional_potemkin": float((po["J"] == 0).mean()),
            "protocol_gap": float(pw.loc[common].mean() - pt.loc[common].mean())}


# ------------------------------------------------------------------ dispatch
def simulate(sc: Scenario, rng: np.random.Generator, scale: int = 1):
    """One replicate of a scenario; `scale` multiplies its number of top-level
    clusters (speakers / items): the population for the truth."""
    p = sc.params
    if sc.kind == "classification":
        return simulate_classification(p, rng, p.n_speakers * scale)
    if sc.kind == "pairwise":
        return simulate_pairwise(p, rng, p.n_speakers * scale)
    if sc.kind == "study_b":
        return simulate_study_b(p, rng, p.n_items * scale)
    raise ValueError(f"unknown scenario kind {sc.kind!r}; expected one of {KINDS}")


def estimands(sc: Scenario, data) -> dict[str, float]:
    if sc.kind == "classification":
        return classification_estimands(data, sc.params.k)
    if sc.kind == "pairwise":
        return pairwise_estimands(data)
    return study_b_estimands(data)


def population_truth(sc: Scenario, n_clusters: int = 20000, seed: int = 0,
                     n_batches: int = 4) -> dict[str, dict[str, float]]:
    """Each estimand on a very large population (about `n_clusters` speakers or
    items in `n_batches` independent batches): {estimand: {value, se}}. The value
    is the pooled (ratio-of-totals) estimand; RF~ is the normalisation of the
    population RF. `se` is the Monte Carlo error across batches."""
    base = sc.params.n_items if sc.kind == "study_b" else sc.params.n_speakers
    scale = max(1, n_clusters // (base * n_batches))
    batches = [estimands(sc, simulate(sc, np.random.default_rng(
        stable_seed("truth", sc.name, seed, b)), scale)) for b in range(n_batches)]
    out = {}
    for key in ESTIMANDS[sc.kind]:
        vals = np.array([b[key] for b in batches], dtype=float)
        out[key] = {"value": float(vals.mean()), "se": float(vals.std(ddof=1) / math.sqrt(len(vals)))}
    return out


# ------------------------------------------------------------------ closed forms
def _normal_mean(fn, sd: float, n: int = 80) -> float:
    """E[fn(Z)] for Z ~ N(0, sd^2) by Gauss-Hermite quadrature."""
    if sd == 0:
        return float(fn(np.zeros(1))[0])
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return float(np.sum(w * fn(sd * x)) / np.sum(w))


def analytic_truth(sc: Scenario) -> dict[str, float]:
    """Closed forms for the estimands that have one (used by the tests to check the
    population truth): classification accuracy without a label, RF without audio;
    Study B conditional Potemkin and protocol gap."""
    p = sc.params
    if sc.kind == "classification":
        if p.n_sentences > 0 and p.sentence_seed > 0:
            # the fixed sentences weighted by how many clips read each
            factors = (1.0 - p.unequal, 1.0, 1.0 + p.unequal)
            sizes = np.maximum(1, np.rint(p.clips_per_speaker * np.array(factors)[
                np.arange(p.n_speakers) % 3]).astype(np.int64))
            counts = sum(np.bincount(np.arange(c) % p.n_sentences, minlength=p.n_sentences)
                         for c in sizes)
            w = fixed_sentence_effects(p)
            acc = float(np.sum(counts * np.array([
                _normal_mean(lambda z, ws=ws: expit(logit(p.perceive) + ws + z), p.perceive_sd)
                for ws in w])) / np.sum(counts))
        else:
            sd = math.hypot(p.perceive_sd, p.sentence_sd if p.n_sentences > 0 else 0.0)
            acc = _normal_mean(lambda z: expit(logit(p.perceive) + z), sd)
        fb = (_normal_mean(lambda z: expit(logit(p.follow_block) + z), p.follow_sd)
              if p.follow_block > 0 else 0.0)
        rf_block = fb + (1 - fb) / p.k
        c = 1.0 / (p.k - 1)
        return {"accuracy_audio_only": acc, "rf_wrong_block": rf_block,
                "rf_norm_wrong_block": (rf_block - c) / (1 - c)}
    if sc.kind == "study_b":
        sd = math.hypot(p.item_sd, p.voice_sd if p.n_voices > 0 else 0.0)
        pp = _normal_mean(lambda z: expit(logit(p.perceive) + z), sd)
        pw = _normal_mean(lambda z: expit(logit(p.pairwise) + z), sd)
        pj = pp * p.oracle * (1 - p.potemkin) + (1 - pp * p.oracle) * 0.5
        return {"conditional_potemkin": p.potemkin, "protocol_gap": pw - pj,
                "potemkin_share": pp * p.oracle * p.potemkin}
    if sc.kind == "pairwise" and p.lock == 0:
        # no lock: the two orders are independent picks; g = E[p_better]
        def g_of(z):
            gaps = np.linspace(0.1, 1.0, 401)
            return np.array([np.mean(expit(p.discriminate + p.discriminate_gap * gaps + zi))
                             for zi in np.atleast_1d(z)])
        return {"g": _normal_mean(g_of, p.speaker_sd, 40)}
    return {}


__all__ = ["DEFAULT_SCENARIOS", "ESTIMANDS", "KINDS", "PRESETS", "Classification", "Pairwise",
           "Scenario", "StudyB", "analytic_truth", "balanced_labels", "estimands", "planted",
           "population_truth", "scenario", "simulate", "stable_seed"]

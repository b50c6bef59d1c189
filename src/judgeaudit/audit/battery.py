"""The matched probe battery: per protocol, the smallest set of contrasts that
answers its question, built from the existing trial shards (the Study A condition
builders and the Study B protocol builders), never from new prompts.

A probe unit is one matched set of trials; its value is a paired difference in
[-1, 1], sum_j w_j * [answer(t_j) == target_j] + offset. A unit is scored on valid
answers only: a matched pair (blueprint, reference, pairwise) only when every one
of its trials has a valid answer, an item (paralinguistic) only when each protocol
has at least one valid answer, averaged over those (`Unit.value` returns None
otherwise, and the unit is left out of the estimate and counted as invalid):

- blueprint (Study A RQ1, unit = clip x derangement seed, cluster = speaker):
  `with_audio`   [wrong_with_audio names the wrong label] - [audio_only names it]
  `fallible`     [wrong_with_audio_fallible names it]     - [audio_only names it]
- reference (RQ2, same units): per placement p in system/rubric/before/after
  [wrong reference at p names the wrong label] - [true reference (`match`) control
  names that wrong label]
- pairwise (RQ3, unit = pair of any criterion, cluster = the pair's sampling unit):
  per format concat / native: [slot A chosen in AB] + [slot A chosen in BA] - 1
  = locked-first - locked-second (two-sided: a lock on either slot is a shortcut);
  a format the judge does not take (audio inputs) is left out, said so in the card
- paralinguistic (Study B, unit = item, cluster = item): `protocol_gap`
  accuracy(pairwise-none) - accuracy(pointwise-none) over the item's two orders /
  two renderings (two-sided).
"""

from __future__ import annotations

import dataclasses
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from judgeaudit.conditions.common import make_trial
from judgeaudit.io import read_jsonl
from judgeaudit.judges.request import Request, TextPart
from judgeaudit.prompts import REFERENCE_LABEL_TEXT
from judgeaudit.vocab import study_a as vocab_a

PROTOCOLS = ("blueprint", "reference", "pairwise", "paralinguistic")
# what each protocol's verdict is about (shown in the card)
QUESTIONS = {
    "blueprint": "Does a wrong specialist label shown with the audio move the answer to that label?",
    "reference": "Does a wrong reference label move the answer to that label (any placement)?",
    "pairwise": "Does the judge prefer a slot (A or B) regardless of which clip is there?",
    "paralinguistic": "Does the protocol (pointwise vs pairwise) change the judge's accuracy on paralinguistic evidence?",
}


@dataclass(frozen=True)
class Unit:
    uid: str
    cluster: str
    terms: tuple[tuple[str, str, float], ...]  # (trial_id, target answer, weight)
    offset: float = 0.0
    # "all": every trial must be answered validly; "arms": the positive- and
    # negative-weight trials are each averaged over their valid answers
    mode: str = "all"

    @property
    def trial_ids(self) -> tuple[str, ...]:
        return tuple(t for t, _, _ in self.terms)

    def value(self, answers: Mapping[str, str | None]) -> float | None:
        """The unit's difference on valid answers (a missing or None answer is no
        answer), or None when the unit has too few valid answers to be scored."""
        if self.mode == "arms":
            total = self.offset
            for sign in (1.0, -1.0):
                arm = [(t, target, w) for t, target, w in self.terms if w * sign > 0]
                ok = [(t, target) for t, target, _ in arm if answers.get(t) is not None]
                if arm and not ok:
                    return None
                if arm:
                    total += sign * sum(float(answers[t] == target) for t, target in ok) / len(ok)
            return total
        if any(answers.get(t) is None for t in self.trial_ids):
            return None
        return self.offset + sum(w * float(answers[t] == target) for t, target, w in self.terms)


@dataclass
class Contrast:
    protocol: str
    name: str
    description: str
    sided: str  # greater | two
    units: list[Unit] = field(default_factory=list)


def _by_condition(trials: Sequence[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for t in trials:
        out[t["condition"]].append(t)
    return out


def _cluster(t: dict) -> str:
    f = t.get("facts", {})
    return str(f.get("cluster") or f.get("pair_id") or f.get("item_id") or f.get("clip_id")
               or t["trial_id"])


def blueprint_contrasts(trials: Sequence[dict]) -> list[Contrast]:
    by = _by_condition(trials)
    own = {t["facts"]["clip_id"]: t for t in by.get("audio_only", [])}
    out = []
    for name, cond, desc in (
            ("with_audio", "wrong_with_audio",
             "follow rate of a wrong specialist label shown with the audio, minus the rate "
             "the judge names that label from the audio alone"),
            ("fallible", "wrong_with_audio_fallible",
             "the same with the instruction that labels are fallible")):
        out.append(_paired(Contrast("blueprint", name, desc, "greater"),
                           by.get(cond, []), own))
    return out


def _paired(c: Contrast, trials: Sequence[dict], base_of: Mapping[str, dict]) -> Contrast:
    """Units of `c`: each trial naming its wrong label (+1) against the same clip's
    control trial naming that label (-1); clips without a control are left out."""
    for t in trials:
        f = t["facts"]
        base = base_of.get(f["clip_id"])
        if base is None:
            continue
        c.units.append(Unit(f"{f['clip_id']}:{f.get('seed')}", _cluster(t),
                            ((t["trial_id"], f["wrong_label"], 1.0),
                             (base["trial_id"], f["wrong_label"], -1.0))))
    return c


MATCHED_CONTROL = "match_at_{placement}"


def matched_control(wrong: dict) -> dict:
    """The true-reference control of a wrong-reference trial at the same placement:
    its request with the reference sentence naming the gold label instead of the
    wrong one (everything else, audio and order included, unchanged). Seed-free
    facts, so the wrong references of every seed share one control per clip and
    placement."""
    f = wrong["facts"]
    gold = str(wrong["gold"])
    old = REFERENCE_LABEL_TEXT.format(label=f["wrong_label"])
    new = REFERENCE_LABEL_TEXT.format(label=gold)
    req = Request.from_json(wrong["request"])
    hits = (req.system or "").count(old) + sum(
        p.text.count(old) for p in req.parts if isinstance(p, TextPart))
    if hits != 1:
        raise ValueError(f"audit reference: trial {wrong['trial_id']} holds its reference "
                         f"sentence {old!r} {hits} times (expected once)")
    req = dataclasses.replace(
        req, system=None if req.system is None else req.system.replace(old, new),
        parts=tuple(TextPart(p.text.replace(old, new)) if isinstance(p, TextPart) else p
                    for p in req.parts))
    facts = {k: v for k, v in f.items() if k not in ("seed", "wrong_label", "request_sha256")}
    facts.update(reference_label=gold, matched_control=True)
    return make_trial(wrong["study"], wrong["task"],
                      MATCHED_CONTROL.format(placement=f["placement"]), req, gold, facts)


def reference_contrasts(trials: Sequence[dict]) -> tuple[list[Contrast], list[dict]]:
    """The four placement contrasts and the matched controls they use (new trials,
    except at the shard's own `match` placement, where the shard's control is used)."""
    by = _by_condition(trials)
    match = {t["facts"]["clip_id"]: t for t in by.get(vocab_a.MATCH_CONDITION, [])}
    out, controls = [], {}
    for p in vocab_a.PLACEMENTS:
        c = Contrast("reference", p, f"follow rate of a wrong reference placed `{p}`, minus "
                     f"the rate the judge names that label with the true reference at `{p}`",
                     "greater")
        base_of: dict[str, dict] = {}
        for t in by.get(p, []):
            clip = t["facts"]["clip_id"]
            if clip in base_of:
                continue
            ctl = matched_control(t)
            own = match.get(clip)
            if own is not None and own["facts"].get("request_sha256") == ctl["facts"]["request_sha256"]:
                ctl = own  # the shard's own control: same request, same cache entry
            else:
                controls[ctl["trial_id"]] = ctl
            base_of[clip] = ctl
        out.append(_paired(c, by.get(p, []), base_of))
    return out, list(controls.values())


def pairwise_contrasts(trials_by_format: Mapping[str, Sequence[dict]]) -> list[Contrast]:
    out = []
    for fmt in vocab_a.PAIR_FORMATS:
        c = Contrast("pairwise", fmt, f"locked-first minus locked-second share of pairs "
                     f"({fmt} format; AB and BA order of each pair)", "two")
        pairs: dict[tuple[str, str], dict[str, dict]] = defaultdict(dict)
        for t in trials_by_format.get(fmt, []):
            f = t["facts"]
            pairs[(t["task"], str(f["pair_id"]))][f["order"]] = t
        for (task, pid), orders in sorted(pairs.items()):
            if set(orders) != {"AB", "BA"}:
                continue
            c.units.append(Unit(f"{task}:{pid}", _cluster(orders["AB"]),
                                ((orders["AB"]["trial_id"], "A", 1.0),
                                 (orders["BA"]["trial_id"], "A", 1.0)), -1.0))
        if trials_by_format.get(fmt):
            out.append(c)
    return out


def paralinguistic_contrasts(pointwise: Sequence[dict], pairwise: Sequence[dict]) -> list[Contrast]:
    c = Contrast("paralinguistic", "protocol_gap", "accuracy under the Pairwise protocol "
                 "minus accuracy under Pointwise (cue none), per item", "two")
    pw: dict[str, list[dict]] = defaultdict(list)
    pt: dict[str, list[dict]] = defaultdict(list)
    for t in pointwise:
        pt[str(t["facts"]["item_id"])].append(t)
    for t in pairwise:
        pw[str(t["facts"]["item_id"])].append(t)
    for item in sorted(set(pw) & set(pt)):
        terms = [(t["trial_id"], t["gold"], 1.0 / len(pw[item])) for t in pw[item]]
        terms += [(t["trial_id"], t["gold"], -1.0 / len(pt[item])) for t in pt[item]]
        c.units.append(Unit(item, item, tuple(terms), mode="arms"))
    return [c]


def interleave(units: Sequence[Unit], seed: int) -> list[Unit]:
    """Seeded sampling order balanced across clusters: shuffle within each cluster,
    shuffle the clusters, then take one unit of each cluster in turn, so every stage
    spans as many clusters as it can."""
    rng = random.Random(seed)
    groups: dict[str, list[Unit]] = defaultdict(list)
    for u in sorted(units, key=lambda u: u.uid):
        groups[u.cluster].append(u)
    keys = sorted(groups)
    rng.shuffle(keys)
    for k in keys:
        rng.shuffle(groups[k])
    out: list[Unit] = []
    while any(groups[k] for k in keys):
        for k in keys:
            if groups[k]:
                out.append(groups[k].pop())
    return out


def build(protocol: str, files: Mapping[str, Sequence[str]]) -> tuple[list[Contrast], dict[str, dict]]:
    """Contrasts of one protocol from its trial shards (`files`: role -> paths) and
    every trial they use (trial_id -> trial row)."""
    rows: dict[str, list[dict]] = {role: [r for p in paths for r in read_jsonl(p)]
                                   for role, paths in files.items()}
    if protocol == "blueprint":
        contrasts = blueprint_contrasts(rows["trials"])
    elif protocol == "reference":
        contrasts, controls = reference_contrasts(rows["trials"])
        rows["matched_controls"] = controls
    elif protocol == "pairwise":
        contrasts = pairwise_contrasts({f: rows.get(f, []) for f in vocab_a.PAIR_FORMATS})
    elif protocol == "paralinguistic":
        contrasts = paralinguistic_contrasts(rows["pointwise"], rows["pairwise"])
    else:
        raise ValueError(f"unknown audit protocol {protocol!r}; known: {PROTOCOLS}")
    trials = {r["trial_id"]: r for rs in rows.values() for r in rs}
    for c in contrasts:
        if not c.units:
            raise ValueError(f"audit {protocol}/{c.name}: no probe units in "
                             f"{sorted(p for ps in files.values() for p in ps)}")
    return contrasts, trials

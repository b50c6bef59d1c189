"""Study A trial builders on tiny fake manifests."""

import io
from collections import Counter

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from judgeaudit.conditions.common import derangement, derangements, trial_id
from judgeaudit.judges.request import AudioPart, Request, TextPart
from judgeaudit.prompts import CONFLICT_FALLIBLE_TEXT, REFERENCE_FALLIBLE_TEXT
from judgeaudit.study_a import pair_sources
from judgeaudit.study_a.classification import (
    RQ1_CONDITIONS,
    ClipSet,
    blueprint_trials,
    conflict_trials,
    reference_trials,
)
from judgeaudit.study_a.pairwise import (
    SEPARATOR_SILENCE_S,
    SEPARATOR_TONE_S,
    Clip,
    Pair,
    concat_wav,
    pair_trials,
    split_concat,
)
from judgeaudit.vocab.labels import EMOTIONS
from judgeaudit.vocab.study_a import PLACEMENTS


class FakeBlueprint:
    template_sha256 = "f" * 64

    def skeleton(self):
        return "Acoustic description: pitch level <value>."

    def description(self, clip_id):
        return f"Acoustic description: pitch level {len(clip_id) * 10} Hz."

    def block(self, label, framed):
        return f"A classifier labelled this clip as {label}." if framed else f"Label: {label}."

    def fallible(self):
        return "Classifier labels are fallible; ignore them when they conflict with the audio."


def clipset(per_class=2, labels=EMOTIONS):
    rows = []
    for lab in labels:
        for i in range(per_class):
            cid = f"{lab}_{i}"
            rows.append({"clip_id": cid, "path": f"data/x/{cid}.wav", "sha256": f"{cid:0>64}"[-64:],
                         "label": lab, "pred": lab if i else labels[0]})
    return ClipSet("emotion", tuple(labels), pd.DataFrame(rows))


def texts(req: Request):
    return [p.text for p in req.parts if isinstance(p, TextPart)]


def test_derangement_has_no_fixed_point_and_is_seeded():
    for seed in range(20):
        d = derangement(EMOTIONS, seed)
        assert sorted(d.values()) == sorted(EMOTIONS)
        assert all(k != v for k, v in d.items())
    assert derangement(EMOTIONS, 3) == derangement(EMOTIONS, 3)
    # seeds 1..K-1 give K-1 distinct mappings that differ at every label
    maps = [derangement(EMOTIONS, s) for s in range(1, len(EMOTIONS))]
    for i, a in enumerate(maps):
        for b in maps[i + 1:]:
            assert all(a[x] != b[x] for x in EMOTIONS)
    # balanced over the sweep: every class meets every wrong label exactly once
    for x in EMOTIONS:
        assert sorted(m[x] for m in maps) == sorted(set(EMOTIONS) - {x})
    d1 = derangement(("en", "es", "fr", "de"), 1)
    assert d1 == {"en": "es", "es": "fr", "fr": "de", "de": "en"}  # cyclic shift 1
    d2 = derangement(("en", "es", "fr", "de"), 1, avoid=d1)
    assert all(d2[x] not in (x, d1[x]) for x in d1)


def test_seed_list_repeating_a_mapping_is_refused():
    langs = ("en", "es", "fr", "de")  # K = 4: three distinct shifts
    assert len(derangements(langs, [1, 2, 3])) == 3
    # seeds 1 and 4 (and 2 and 5) select the same cyclic shift: refused, naming them
    with pytest.raises(ValueError, match=r"seeds 1, 4 all give cyclic shift 1.*seeds 2, 5"):
        derangements(langs, [1, 2, 3, 4, 5], "language blueprint")
    cs = clipset()
    with pytest.raises(ValueError, match="study_a.seeds.*seeds 3, 10"):
        blueprint_trials(cs, FakeBlueprint(), [3, 10])  # K = 8: 10 -> shift 3
    with pytest.raises(ValueError, match="study_a.reference_seeds"):
        reference_trials(cs, [2, 9])
    with pytest.raises(ValueError, match="study_a.conflict_seeds"):
        conflict_trials(cs, FakeBlueprint(), [1, 8])


def test_blueprint_trials_conditions_and_balance():
    cs = clipset()
    seeds = [1, 2, 3, 4, 5]
    trials = blueprint_trials(cs, FakeBlueprint(), seeds)
    counts = Counter(t["condition"] for t in trials)
    assert set(counts) == set(RQ1_CONDITIONS)
    assert counts["audio_only"] == 16 and counts["wrong_block"] == 16 * 5
    for t in trials:
        req = Request.from_json(t["request"])
        has_audio = req.n_audio == 1
        assert has_audio == (t["condition"] in ("audio_only", "wrong_with_audio",
                                                "wrong_with_audio_fallible"))
        assert req.answer.allowed == EMOTIONS
        joined = " ".join(texts(req))
        if t["condition"].startswith("wrong"):
            w = t["facts"]["wrong_label"]
            assert w != t["gold"]
            framed = t["condition"] != "wrong_no_frame"
            assert (f"A classifier labelled this clip as {w}." in joined) == framed
            assert (f"Label: {w}." in joined) == (not framed)
            assert ("fallible" in joined) == t["condition"].endswith("_fallible")
        if t["condition"] == "skeleton":
            assert "<value>" in joined and "classifier" not in joined
        if t["condition"] == "true_block":
            assert t["facts"]["block_label"] == cs.clips.set_index("clip_id").loc[
                t["facts"]["clip_id"], "pred"]
        # the gold label never appears in the request of a wrong-label condition
        if t["condition"] in ("wrong_block", "wrong_with_audio"):
            assert f"as {t['gold']}." not in joined
    # wrong labels balanced over true labels within a seed: each wrong label used equally
    wb = [t for t in trials if t["condition"] == "wrong_block" and t["facts"]["seed"] == 1]
    assert set(Counter(t["facts"]["wrong_label"] for t in wb).values()) == {2}


def test_trial_ids_stable_and_content_derived():
    a = blueprint_trials(clipset(), FakeBlueprint(), [1, 2])
    b = blueprint_trials(clipset(), FakeBlueprint(), [1, 2])
    assert [t["trial_id"] for t in a] == [t["trial_id"] for t in b]
    assert len({t["trial_id"] for t in a}) == len(a)
    t = a[0]
    assert t["trial_id"] == trial_id("A", t["task"], t["condition"], t["facts"])
    other = clipset()
    other.clips.loc[0, "sha256"] = "e" * 64
    c = blueprint_trials(other, FakeBlueprint(), [1, 2])
    assert c[0]["trial_id"] != a[0]["trial_id"]


def test_reference_placements():
    cs = clipset(per_class=1)
    trials = reference_trials(cs, [1, 2], match_placement="before")
    by = Counter(t["condition"] for t in trials)
    assert by == {"match": 8, **{p: 16 for p in PLACEMENTS},
                  **{f"{p}_fallible": 16 for p in PLACEMENTS}}
    plain_parts = {}
    for t in trials:
        req = Request.from_json(t["request"])
        ref = f"Reference label: {t['facts']['reference_label']}."
        audio_at = next(i for i, p in enumerate(req.parts) if isinstance(p, AudioPart))
        where = [i for i, p in enumerate(req.parts) if isinstance(p, TextPart) and ref in p.text]
        in_system = ref in (req.system or "")
        fallible = t["condition"].endswith("_fallible")
        cond = t["facts"]["placement"] if fallible else t["condition"]
        has_instruction = REFERENCE_FALLIBLE_TEXT in [p.text for p in req.parts
                                                      if isinstance(p, TextPart)]
        assert has_instruction == fallible
        key = (t["facts"]["clip_id"], t["facts"].get("seed"), cond)
        if t["condition"] != "match":
            plain_parts.setdefault(key, {})[fallible] = [
                p.text if isinstance(p, TextPart) else "<audio>" for p in req.parts]
        if cond == "system":
            assert in_system and not where
        else:
            assert not in_system and len(where) == 1
            part = req.parts[where[0]].text
            if cond == "rubric":
                assert part.startswith("Grading rubric:")
            elif cond in ("before", "match"):
                assert where[0] < audio_at and part == ref
            else:
                assert where[0] > audio_at and part == ref
        if cond == "match":
            assert t["facts"]["reference_label"] == t["gold"]
        else:
            assert t["facts"]["reference_label"] != t["gold"]
    # the fallible variant is the plain request plus the instruction (after the audio,
    # before a reference placed after it), nothing else
    for variants in plain_parts.values():
        plain, fall = variants[False], variants[True]
        assert [x for x in fall if x != REFERENCE_FALLIBLE_TEXT] == plain
        assert fall.index(REFERENCE_FALLIBLE_TEXT) > fall.index("<audio>")
    assert len(reference_trials(cs, [1, 2], fallible_variants=False)) == 8 + 16 * 4


def test_conflict_names_two_different_wrong_labels():
    cs = clipset(per_class=1, labels=("en", "es", "fr", "de"))
    cs = ClipSet("language", cs.labels, cs.clips)
    trials = conflict_trials(cs, FakeBlueprint(), [1, 2, 3], placement="after")
    assert Counter(t["condition"] for t in trials) == {"conflict": 12, "conflict_fallible": 12}
    for t in trials:
        f = t["facts"]
        assert len({f["block_label"], f["reference_label"], t["gold"]}) == 3
        joined = " ".join(texts(Request.from_json(t["request"])))
        assert f"labelled this clip as {f['block_label']}." in joined
        assert f"Reference label: {f['reference_label']}." in joined
        assert (CONFLICT_FALLIBLE_TEXT in joined) == (t["condition"] == "conflict_fallible")
    assert len(conflict_trials(cs, FakeBlueprint(), [1], fallible_variants=False)) == 4


def test_clipset_rejects_unknown_label():
    cs = clipset(per_class=1)
    with pytest.raises(ValueError, match="not in vocabulary"):
        ClipSet("emotion", EMOTIONS[:-1], cs.clips)


def _wav(path, seconds, freq, sr=16000):
    t = np.arange(int(seconds * sr)) / sr
    x = 0.2 * np.sin(2 * np.pi * freq * t) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))
    x += 0.02 * np.random.default_rng(int(freq)).normal(size=x.size)
    sf.write(path, x, sr, subtype="PCM_16")
    return path


def test_concat_and_split_roundtrip(tmp_path):
    a = _wav(tmp_path / "a.wav", 1.3, 220).read_bytes()
    b = _wav(tmp_path / "b.wav", 0.7, 330).read_bytes()
    joined = concat_wav(a, b)
    y, sr = sf.read(io.BytesIO(joined), dtype="int16")
    assert len(y) == pytest.approx(sr * (1.3 + 0.7 + 2 * SEPARATOR_SILENCE_S + SEPARATOR_TONE_S), abs=2)
    xa, xb = split_concat(y, sr)
    assert len(xa) == pytest.approx(1.3 * sr, abs=0.02 * sr)
    assert len(xb) == pytest.approx(0.7 * sr, abs=0.02 * sr)
    with pytest.raises(ValueError, match="separator"):
        split_concat(sf.read(io.BytesIO(a), dtype="int16")[0], sr)


def test_pair_trials_orders_formats(tmp_path):
    clips = [Clip(f"c{i}", str(_wav(tmp_path / f"c{i}.wav", 0.5, 200 + 50 * i)),
                  "") for i in range(5)]
    from judgeaudit.io import sha256_file
    clips = [Clip(c.clip_id, c.path, sha256_file(c.path)) for c in clips]
    pairs = [Pair(f"p{i}", "speaker", clips[i], clips[i + 1], reference=clips[4])
             for i in range(3)]
    native = pair_trials("pair_speaker", pairs, "native", seed=1)
    concat = pair_trials("pair_speaker", pairs, "concat", seed=1, concat_dir=tmp_path / "cc")
    assert len(native) == len(concat) == 6
    for t in native:
        req = Request.from_json(t["request"])
        assert req.n_audio == 3 and req.answer.allowed == ("A", "B")
        audio = [p.sha256 for p in req.audio_parts]
        assert audio[0] == clips[4].sha256
        better = next(c for c in clips if c.clip_id == t["facts"]["better_clip"])
        assert audio[1 if t["gold"] == "A" else 2] == better.sha256
    for pid in ("p0", "p1", "p2"):
        ab, ba = (t for t in native if t["facts"]["pair_id"] == pid)
        assert {ab["gold"], ba["gold"]} == {"A", "B"}
        assert ab["facts"]["better_slot_ab"] == ba["facts"]["better_slot_ab"] == ab["gold"]
    for t in concat:
        req = Request.from_json(t["request"])
        assert req.n_audio == 2
        joined = req.audio_parts[1]
        y, sr = sf.read(joined.path, dtype="int16")
        a, b = split_concat(y, sr)
        assert len(a) == pytest.approx(0.5 * sr, abs=0.02 * sr)
    # gold balanced over slots in AB order across many pairs
    many = [Pair(f"q{i}", "naturalness", clips[0], clips[1]) for i in range(200)]
    ab = [t for t in pair_trials("pair_naturalness", many, "native", 7)
          if t["facts"]["order"] == "AB"]
    assert 70 < sum(t["gold"] == "A" for t in ab) < 130


def test_pair_sources_from_fake_manifests():
    rows = []
    for spk in ("s1", "s2", "s3"):
        for emo in ("neutral", "happy", "sad"):
            for rep in range(2):
                cid = f"{spk}_{emo}_{rep}"
                rows.append({"clip_id": cid, "path": f"{cid}.wav", "sha256": cid, "speaker": spk,
                             "emotion": emo, "split": "test", "transcript": "t"})
    m = pd.DataFrame(rows)
    emo = pair_sources.emotion_pairs(m, 6, seed=1)
    assert len(emo) == 6 and Counter(p.emotion for p in emo) == {"happy": 3, "sad": 3}
    for p in emo:
        assert p.better.clip_id.split("_")[0] == p.worse.clip_id.split("_")[0]
        assert "_neutral_" in p.worse.clip_id
        assert dict(p.meta)["cluster"] == p.better.clip_id.split("_")[0]  # the speaker
    spk = pair_sources.speaker_pairs(m, 5, seed=2)
    for p in spk:
        assert dict(p.meta)["cluster"] == p.reference.clip_id[:2]  # the reference speaker
        assert p.reference.clip_id != p.better.clip_id
        assert p.reference.clip_id[:2] == p.better.clip_id[:2] != p.worse.clip_id[:2]
    nat = pd.DataFrame({"clip_id": [f"n{i}" for i in range(10)], "path": "x", "sha256": "y",
                        "score": np.linspace(1, 5, 10)})
    for p in pair_sources.naturalness_pairs(nat, 5, seed=3, min_gap=1.0, split=None):
        s = dict(p.meta)
        assert s["score_better"] - s["score_worse"] >= 1.0
    deg = pd.DataFrame({"clip_id": ["a", "a_noise", "a_clip", "b", "b_noise"], "path": "x",
                        "sha256": "y", "degradation": ["clean", "noise", "clip", "clean", "noise"],
                        "source_clip": ["a", "a", "a", "b", "b"]})
    cp = pair_sources.cleanness_pairs(deg, 2, seed=1, split=None)
    assert {p.better.clip_id for p in cp} == {"a", "b"}
    assert all(dict(p.meta)["cluster"] == p.better.clip_id for p in cp)  # the source clip
    with pytest.raises(ValueError, match="lacks columns"):
        pair_sources.cleanness_pairs(nat, 1, seed=1)


def test_trials_name_their_sampling_unit():
    cs = clipset()
    no_spk = blueprint_trials(cs, FakeBlueprint(), [1])
    assert {t["facts"]["cluster_unit"] for t in no_spk} == {"clip"}
    assert all(t["facts"]["cluster"] == t["facts"]["clip_id"] for t in no_spk)
    clips = cs.clips.assign(speaker=[f"v{i % 3}" for i in range(len(cs.clips))])
    with_spk = reference_trials(ClipSet(cs.task, cs.labels, clips), [1])
    spk = dict(zip(clips["clip_id"], clips["speaker"], strict=True))
    assert {t["facts"]["cluster_unit"] for t in with_spk} == {"speaker"}
    assert all(t["facts"]["cluster"] == spk[t["facts"]["clip_id"]] for t in with_spk)


def test_speaker_layouts_for_judges_limited_to_one_or_two_audio_inputs(tmp_path):
    """Two-input judges: the speaker `concat` layout has <= 2 audio parts (reference +
    joined pair). One-input judges: the joined layout puts reference, A and B in one
    audio part, each announced by a real espeak-ng cue at the recorded offsets, the text
    naming the cues; the embedded reader recovers the reference and both slots. Under
    `auto` (default) each trial carries the joined request as its alternate and a judge
    gets the layout its audio-input limit takes."""
    from judgeaudit.io import sha256_file
    from judgeaudit.judges.embedded.audio import decode_wav
    from judgeaudit.judges.embedded.reader import read_request
    from judgeaudit.judges.request import load_request_audio
    from judgeaudit.judges.shard import select_request
    from judgeaudit.prompts import JOINED_CUES, REFERENCE_JOINED_TEXT
    from judgeaudit.study_a.pairwise import spoken_cue
    clips = [Clip(f"c{i}", str(_wav(tmp_path / f"c{i}.wav", 0.4 + 0.1 * i, 200 + 50 * i)), "")
             for i in range(3)]
    clips = [Clip(c.clip_id, c.path, sha256_file(c.path)) for c in clips]
    pairs = [Pair("p0", "speaker", clips[0], clips[1], reference=clips[2])]
    two = pair_trials("pair_speaker", pairs, "concat", 1, concat_dir=tmp_path / "c2",
                      reference_layout="separate")
    one = pair_trials("pair_speaker", pairs, "concat", 1, concat_dir=tmp_path / "c1",
                      reference_layout="joined")
    auto = pair_trials("pair_speaker", pairs, "concat", 1, concat_dir=tmp_path / "ca")
    assert all(Request.from_json(t["request"]).n_audio == 2 for t in two)
    assert all("alt_requests" not in t for t in two + one)
    for cue in JOINED_CUES.values():  # the prompt names every spoken cue
        assert f'"{cue}"' in REFERENCE_JOINED_TEXT
    cue_pcm = {slot: spoken_cue(slot, 16000) for slot in JOINED_CUES}
    assert all(len(x) > 0.3 * 16000 and np.abs(x).max() > 3000 for x in cue_pcm.values())
    assert not np.array_equal(cue_pcm["A"], cue_pcm["B"])  # "Clip A" vs "Clip B"
    for t in one:
        req = Request.from_json(t["request"])
        assert req.n_audio == 1 and t["facts"]["reference_layout"] == "joined"
        assert REFERENCE_JOINED_TEXT in texts(req)
        wav, _ = sf.read(next(p.path for p in req.parts if isinstance(p, AudioPart)),
                         dtype="int16")
        segs = {name: (a, b) for name, a, b in t["facts"]["joined_segments"]}
        assert list(segs) == ["cue_reference", "reference", "cue_A", "A", "cue_B", "B"]
        for slot in JOINED_CUES:  # the espeak cue samples sit at the recorded offsets
            a, b = segs[f"cue_{slot}"]
            assert np.array_equal(wav[a:b], cue_pcm[slot])
        slot_a = clips[0] if t["facts"]["clip_a"] == "c0" else clips[1]
        a, b = segs["A"]
        assert np.array_equal(wav[a:b], sf.read(slot_a.path, dtype="int16")[0])
        view = read_request(load_request_audio(req))
        assert view.audio_format == "concat" and len(view.clips) == 2
        ref_pcm, _ = decode_wav(view.reference_clip.wav)
        want, _ = sf.read(clips[2].path, dtype="int16")
        assert np.array_equal(ref_pcm, want)  # the reference, not a cue or slot A
        a_pcm, _ = decode_wav(view.clips[0].wav)
        assert np.array_equal(a_pcm, sf.read(slot_a.path, dtype="int16")[0])
    # `auto`: the separate request (same trial ids as `separate`) plus the joined
    # alternate; a judge gets what its limit takes, and the layout is named
    assert [t["trial_id"] for t in auto] == [t["trial_id"] for t in two]
    for t, j in zip(auto, one, strict=True):
        assert Request.from_json(t["alt_requests"]["joined"]["request"]).content_hash() == \
            Request.from_json(j["request"]).content_hash()
        assert t["alt_requests"]["joined"]["facts"]["joined_segments"] == \
            j["facts"]["joined_segments"]
        for limit, n_audio, layout in ((None, 2, "separate"), (2, 2, "separate"),
                                       (1, 1, "joined")):
            req, got = select_request(t, limit)
            assert (req.n_audio, got) == (n_audio, layout)
        assert select_request(t, 0)[0].n_audio == 2  # nothing fits: recorded unsupported
    # native speaker stays three inputs in every layout; non-speaker pairs get no layout
    native = pair_trials("pair_speaker", pairs, "native", 1)
    assert all(Request.from_json(t["request"]).n_audio == 3 and "alt_requests" not in t
               for t in native)
    assert select_request(native[0], 1)[1] is None
    with pytest.raises(ValueError, match="reference_layout"):
        pair_trials("pair_speaker", pairs, "concat", 1, concat_dir=tmp_path, reference_layout="x")

"""Embedded judges: the request reader, the control judges and the simulated
judge's planted propensities (with a tiny fake perception on pure tones)."""

from __future__ import annotations

import io
import json
import wave

import numpy as np
import pytest
from scipy.stats import binomtest

from judgeaudit import prompts as C
from judgeaudit.io import read_jsonl, sha256_bytes
from judgeaudit.judges.embedded.reader import read_request
from judgeaudit.judges.request import AnswerSpec, AudioPart, LoadedRequest, Request, TextPart
from judgeaudit.judges.shard import run_shards
from judgeaudit.testing.perception import ToneFakePerception, tone_adapter
from judgeaudit.vocab.labels import EMOTIONS

EMO = EMOTIONS
SR = 16000
# exact perception (accuracy 1.0): these tests pin the judges' decision logic; the
# fallible listener has its own tests (tests/test_fallible_listener.py)
FAKE = {"accuracy": 1.0}


def pcm_tone(freq: float, amp: float = 0.3, seconds: float = 0.25, phase: float = 0.0) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    return np.round(amp * 32767 * np.sin(2 * np.pi * freq * t + phase)).astype(np.int16)


def wav(pcm: np.ndarray) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(pcm.astype("<i2").tobytes())
    return buf.getvalue()


def emo_clip(label: str, variant: int = 0) -> bytes:
    return wav(pcm_tone(100.0 * (EMO.index(label) + 2), phase=0.01 * variant))


def loaded(parts, allowed, system=None, key="label") -> LoadedRequest:
    audio = {}
    out = []
    for p in parts:
        if isinstance(p, bytes):
            sha = sha256_bytes(p)
            audio[sha] = p
            out.append(AudioPart(sha, "wav"))
        else:
            out.append(TextPart(p))
    return LoadedRequest(Request(system, tuple(out), AnswerSpec(key, tuple(allowed))), audio)


def answer(provider: str, lr: LoadedRequest, **spec) -> str:
    adapter = tone_adapter("j", {"provider": provider, "perception": FAKE, **spec})
    return json.loads(adapter.complete_sync(lr).raw_text)[lr.request.answer.key]


QUESTION = "Question: which emotion does the speaker express? Answer with one of: " + ", ".join(EMO) + "."


def test_reader_finds_labels_placement_framing_and_fallible():
    lr = loaded([QUESTION, "Grading rubric: judge the voice. " + C.REFERENCE_LABEL_TEXT.format(label="sad"),
                 emo_clip("happy"), C.FRAMED_BLOCK.format(label="angry"),
                 C.UNFRAMED_BLOCK.format(label="calm"), C.FALLIBLE_INSTRUCTION],
                EMO, system="You judge speech.\n" + C.REFERENCE_LABEL_TEXT.format(label="fearful"))
    view = read_request(lr)
    assert (view.task, view.attribute, view.audio_format) == ("classify", "emotion", "single")
    got = [(lab.kind, lab.label, lab.placement, lab.framed) for lab in view.labels]
    assert got == [("reference", "fearful", "system", False), ("reference", "sad", "rubric", False),
                   ("block", "angry", "after", True), ("block", "calm", "after", False)]
    assert view.fallible
    # the vocabulary list in the question is not a cue
    assert not read_request(loaded([QUESTION, emo_clip("sad")], EMO)).labels


def test_control_judges_on_classification():
    lr = loaded([QUESTION, emo_clip("happy"), C.FRAMED_BLOCK.format(label="angry")], EMO)
    assert answer("listener", lr) == "happy"  # audio, ignores the block
    assert answer("label_reader", lr) == "angry"  # copies the block
    assert answer("first_slot", lr) == "neutral"
    ref = loaded([C.REFERENCE_LABEL_TEXT.format(label="sad"), emo_clip("happy"), QUESTION], EMO)
    assert answer("listener", ref) == "happy" and answer("label_reader", ref) == "sad"
    # label-reader without any label: a fixed text-only answer, whatever the audio
    a = answer("label_reader", loaded([QUESTION, emo_clip("happy")], EMO))
    b = answer("label_reader", loaded([QUESTION, emo_clip("sad")], EMO))
    assert a == b


def test_concat_split_and_listener_has_no_lock():
    loud, soft = pcm_tone(400, 0.5), pcm_tone(400, 0.1)
    q = "Question: which clip is cleaner (less degraded)? Answer A or B."
    for a, b, want in ((loud, soft, "A"), (soft, loud, "B")):
        cat = wav(C.concat_pcm(a, b, SR))
        pieces = C.split_pcm(np.frombuffer(cat[44:], "<i2"), SR)
        assert len(pieces) == 2 and np.array_equal(pieces[0], a) and np.array_equal(pieces[1], b)
        lr = loaded([q, "Clips A and B in one recording:", cat], ("A", "B"), key="choice")
        view = read_request(lr)
        assert view.audio_format == "concat" and view.attribute == "cleanness"
        assert answer("listener", lr) == want
        native = loaded([q, "Clip A:", wav(a), "Clip B:", wav(b)], ("A", "B"), key="choice")
        assert read_request(native).audio_format == "native"
        assert answer("listener", native) == want
        assert answer("first_slot", native) == "A"


def test_requests_of_one_recording_share_its_clips_and_its_hash():
    """The reader splits a recording once per job (memo keyed by its sha256): a second
    request carrying equal bytes gets the same, equal Clip objects, and the bytes
    object is hashed once (judgeaudit.io memo keyed on object identity)."""
    import hashlib

    from judgeaudit import io as jio

    a, b = pcm_tone(400, 0.5), pcm_tone(500, 0.2)
    q = "Question: which clip is cleaner (less degraded)? Answer A or B."
    cat = wav(C.concat_pcm(a, b, SR))
    first = read_request(loaded([q, "Clips A and B in one recording:", cat], ("A", "B"),
                                key="choice"))
    again = read_request(loaded([q, "Clips A and B in one recording:", bytes(bytearray(cat))],
                                ("A", "B"), key="choice"))
    assert again.clips == first.clips and all(
        x is y for x, y in zip(again.clips, first.clips, strict=True))
    assert [c.wav for c in first.clips] == [wav(a), wav(b)]
    one = wav(a)
    assert jio.sha256_bytes(one) == hashlib.sha256(one).hexdigest()
    assert jio._SHA_MEMO[id(one)][0] is one
    assert jio.sha256_bytes(one) == hashlib.sha256(one).hexdigest()  # the memo's answer
    mutable = bytearray(one)
    mutable[100] ^= 1  # a mutable buffer is hashed every time, never memoised
    assert jio.sha256_bytes(mutable) == hashlib.sha256(mutable).hexdigest()


def test_speaker_reference_clip():
    ref, same, other = wav(pcm_tone(300)), wav(pcm_tone(300, 0.2)), wav(pcm_tone(700))
    q = "Question: which clip is spoken by the same speaker as the reference clip?"
    lr = loaded([q, "Reference clip:", ref, "Clip A:", other, "Clip B:", same], ("A", "B"), key="choice")
    view = read_request(lr)
    assert view.attribute == "speaker" and view.reference_clip is not None
    assert answer("listener", lr) == "B"


def _pair_requests(i: int, fmt: str):
    a, b = pcm_tone(300 + i, 0.2 + 0.001 * i), pcm_tone(500 + i, 0.4)
    q = "Question: which clip sounds more natural?"
    out = []
    for x, y in ((a, b), (b, a)):
        if fmt == "concat":
            out.append(loaded([q, "Clips A and B in one recording:", wav(C.concat_pcm(x, y, SR))],
                              ("A", "B"), key="choice"))
        else:
            out.append(loaded([q, "Clip A:", wav(x), "Clip B:", wav(y)], ("A", "B"), key="choice"))
    return out


@pytest.mark.parametrize("fmt", ["concat", "native"])
def test_simulated_lock_is_shared_by_both_orders_and_recovers_rate(fmt):
    lock = {"concat": {"first": 0.5, "second": 0.2}, "native": {"first": 0.1, "second": 0.3}}
    sim = tone_adapter("s", {"provider": "simulated", "perception": FAKE,
                             "simulated": {"seed": 7, "lock": lock}})
    n, first, second = 150, 0, 0
    for i in range(n):
        ab, ba = (json.loads(sim.complete_sync(r).raw_text)["choice"] for r in _pair_requests(i, fmt))
        if ab == ba == "A":
            first += 1
        elif ab == ba == "B":
            second += 1
        else:
            assert (ab, ba) == ("B", "A")  # unlocked pairs answer from perception (b is better)
    for k, planted in (("first", first), ("second", second)):
        ci = binomtest(planted, n).proportion_ci(0.99, method="wilson")
        assert ci.low <= lock[fmt][k] <= ci.high, (fmt, k, planted)


def test_simulated_follow_rates_and_determinism():
    knobs = {"seed": 3, "follow_block": {"framed": 0.7, "unframed": 0.2, "with_audio": 0.4,
                                         "with_audio_fallible": 0.1},
             "follow_reference": {"system": 0.0, "after": 0.9}}
    sim = tone_adapter("s", {"provider": "simulated", "perception": FAKE, "simulated": knobs})
    n = 200
    counts = {"framed": 0, "unframed": 0, "with_audio": 0, "with_audio_fallible": 0, "after": 0, "system": 0}
    for i in range(n):
        q = f"{QUESTION} (item {i})"
        reqs = {
            "framed": loaded([q, "Acoustic description: ...", C.FRAMED_BLOCK.format(label="angry")], EMO),
            "unframed": loaded([q, "Acoustic description: ...", C.UNFRAMED_BLOCK.format(label="angry")], EMO),
            "with_audio": loaded([q, emo_clip("happy", i), C.FRAMED_BLOCK.format(label="angry")], EMO),
            "with_audio_fallible": loaded([q, emo_clip("happy", i), C.FRAMED_BLOCK.format(label="angry"),
                                           C.FALLIBLE_INSTRUCTION], EMO),
            "after": loaded([q, emo_clip("happy", i), C.REFERENCE_LABEL_TEXT.format(label="angry")], EMO),
            "system": loaded([q, emo_clip("happy", i)], EMO, system=C.REFERENCE_LABEL_TEXT.format(label="angry")),
        }
        for cond, lr in reqs.items():
            got = json.loads(sim.complete_sync(lr).raw_text)["label"]
            assert got == json.loads(sim.complete_sync(lr).raw_text)["label"]  # deterministic
            counts[cond] += got == "angry"
            if cond != "framed" and cond != "unframed":
                assert got in ("angry", "happy")
    planted = {**knobs["follow_block"], "after": 0.9, "system": 0.0}
    # without audio a judge that does not follow guesses over ALL K labels: RF = p + (1-p)/K
    for cond in ("framed", "unframed"):
        planted[cond] += (1 - planted[cond]) / len(EMO)
    for cond, k in counts.items():
        ci = binomtest(k, n).proportion_ci(0.99, method="wilson")
        assert ci.low <= planted[cond] <= ci.high, (cond, k)


def _rate(sim, make, n=240, target="angry"):
    hits = 0
    for i in range(n):
        got = json.loads(sim.complete_sync(make(i)).raw_text)["label"]
        hits += got == target
    return hits, n


def _inside(k, n, p):
    ci = binomtest(k, n).proportion_ci(0.99, method="wilson")
    return ci.low <= p <= ci.high


def test_simulated_non_following_non_hearing_judge_scores_chance_on_true_block():
    # sim-locker-like: no follow knobs. Without audio, the true block (label = gold) is
    # answered at chance 1/K, not 0 (the old guess excluded shown labels)
    sim = tone_adapter("s", {"provider": "simulated", "perception": FAKE,
                             "simulated": {"seed": 5}})
    k, n = _rate(sim, lambda i: loaded([f"{QUESTION} (item {i})", "Acoustic description: ...",
                                        C.FRAMED_BLOCK.format(label="angry")], EMO))
    assert _inside(k, n, 1 / len(EMO)) and k > 0


def test_simulated_per_attribute_precedence_and_fallible_knobs():
    knobs = {"seed": 9, "precedence": "block",
             "follow_block": {"with_audio": 0.6, "framed": 0.5, "framed_fallible": 0.1},
             "follow_reference": {"before": 0.5, "before_fallible": 0.05},
             "attributes": {"language": {"follow_block": {"with_audio": 0.0}}}}
    sim = tone_adapter("s", {"provider": "simulated", "perception": FAKE, "simulated": knobs})
    q = QUESTION

    def conflict(fallible):
        def make(i):
            parts = [f"{q} (item {i})", C.REFERENCE_LABEL_TEXT.format(label="sad"),
                     emo_clip("happy", i), C.FRAMED_BLOCK.format(label="angry")]
            return loaded(parts + ([C.CONFLICT_FALLIBLE_TEXT] if fallible else []), EMO)
        return make
    # block first: follow_block = 0.6, follow_reference = 0.4 * 0.5
    kb, n = _rate(sim, conflict(False))
    kr, _ = _rate(sim, conflict(False), target="sad")
    assert _inside(kb, n, 0.6) and _inside(kr, n, 0.4 * 0.5)
    # with the instruction the fallible knobs apply (with_audio_fallible unset = 0.6)
    kr, _ = _rate(sim, conflict(True), target="sad")
    assert _inside(kr, n, 0.4 * 0.05)
    ref_first = tone_adapter("s", {"provider": "simulated", "perception": FAKE,
                                   "simulated": {**knobs, "precedence": "reference"}})
    kb, n = _rate(ref_first, conflict(False))
    assert _inside(kb, n, 0.5 * 0.6)
    # framed_fallible (no audio): RF = p + (1-p)/K
    k, n = _rate(sim, lambda i: loaded([f"{q} (item {i})", C.FRAMED_BLOCK.format(label="angry"),
                                        C.FALLIBLE_INSTRUCTION], EMO))
    assert _inside(k, n, 0.1 + 0.9 / len(EMO))
    # the reference with the fallible instruction
    k, n = _rate(sim, lambda i: loaded([f"{q} (item {i})", C.REFERENCE_LABEL_TEXT.format(label="angry"),
                                        emo_clip("happy", i), C.REFERENCE_FALLIBLE_TEXT], EMO))
    assert _inside(k, n, 0.05)
    from judgeaudit.judges.embedded.judges import SimKnobs
    kn = SimKnobs.from_spec(knobs)
    assert kn.for_attribute("language").follow_block["with_audio"] == 0.0
    assert kn.for_attribute("emotion").follow_block["with_audio"] == 0.6
    assert kn.follow_block["with_audio"] == 0.6  # the override did not leak


def test_embedded_judge_through_engine_and_cache(tmp_path, monkeypatch):
    # the shard runner builds its adapter from the spec: it perceives through the fake
    from judgeaudit.judges.embedded import adapters as embedded

    monkeypatch.setattr(embedded, "make_perception", lambda spec, store=None: ToneFakePerception())
    clip = emo_clip("sad")
    path = tmp_path / "c.wav"
    path.write_bytes(clip)
    trials = tmp_path / "trials.jsonl"
    with open(trials, "w") as fh:
        for i, label in enumerate(("angry", "happy", "sad")):
            req = Request(None, (TextPart(QUESTION), AudioPart(sha256_bytes(clip), "wav", str(path)),
                                 TextPart(C.FRAMED_BLOCK.format(label=label))), AnswerSpec("label", EMO))
            fh.write(json.dumps({"trial_id": f"t{i}", "request": req.to_json(), "gold": "sad"}) + "\n")
    spec = {"provider": "listener", "perception": FAKE}
    out = tmp_path / "out.jsonl"
    (s1,) = run_shards([(trials, out)], "listener", spec, tmp_path / "cache", progress=False)
    rows = read_jsonl(out)
    assert [r["parsed"] for r in rows] == ["sad"] * 3 and s1["sent"] == 3
    (s2,) = run_shards([(trials, out)], "listener", spec, tmp_path / "cache", progress=False)
    assert s2["sent"] == 0 and all(r["cache_hit"] for r in read_jsonl(out))
    # another judge setting = another fingerprint = no stale replay
    (s3,) = run_shards([(trials, out)], "sim", {
        "provider": "simulated", "perception": FAKE,
        "simulated": {"follow_block": {"with_audio": 1.0}}}, tmp_path / "cache", progress=False)
    assert s3["sent"] == 3
    assert [r["parsed"] for r in read_jsonl(out)] == ["angry", "happy", "sad"]


def test_provider_roles_are_read_off_the_adapter_classes():
    from judgeaudit.judges.adapters import providers, registry

    assert providers(paid=True) == ("bedrock", "gemini", "openai", "openai_compatible")
    assert providers(paid=False) == ("first_slot", "label_reader", "listener", "python",
                                     "simulated")
    assert providers(perceives=True) == ("listener", "simulated")
    assert providers(control=True) == ("first_slot", "label_reader", "listener")
    # embedded = the built-in judges of known behaviour; `python` (the user's own code) is
    # neither paid nor embedded, perceives nothing and is no control
    assert providers(embedded=True) == ("first_slot", "label_reader", "listener", "simulated")
    assert set(providers(paid=False)) - set(providers(embedded=True)) == {"python"}
    assert all(registry()[p].paid for p in providers(paid=True))
    with pytest.raises(ValueError, match="unknown adapter roles"):
        providers(free=True)


def test_request_audio_read_memo_never_serves_a_changed_file(tmp_path, monkeypatch):
    """load_request_audio reads a settled clip once per job, and still catches a file
    rewritten since (a just-written file is never kept: its stat could survive a
    rewrite within the timestamp granularity)."""
    from judgeaudit.judges import request as R

    clip = wav(pcm_tone(300))
    path = tmp_path / "c.wav"
    path.write_bytes(clip)
    req = Request(None, (AudioPart(sha256_bytes(clip), "wav", "c.wav"),),
                  AnswerSpec("label", EMO))
    first = R.load_request_audio(req, tmp_path)
    tampered = bytearray(clip)
    tampered[-1] ^= 1
    path.write_bytes(bytes(tampered))  # same size, same inode, within one tick
    with pytest.raises(R.AudioIntegrityError, match="sha256 mismatch"):
        R.load_request_audio(req, tmp_path)
    path.write_bytes(clip)
    monkeypatch.setattr(R, "_SETTLED_NS", -(10**18))  # every file counts as settled
    a = R.load_request_audio(req, tmp_path).audio[sha256_bytes(clip)]
    b = R.load_request_audio(req, tmp_path).audio[sha256_bytes(clip)]
    assert a is b and a == first.audio[sha256_bytes(clip)]  # read once
    import os

    os.utime(path, ns=(0, 0))  # a changed stat (mtime and ctime) is a miss
    c = R.load_request_audio(req, tmp_path).audio[sha256_bytes(clip)]
    assert c == a and c is not a

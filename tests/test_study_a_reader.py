"""Study A requests as the embedded judges read them (the judges see only the request):
placements, framing, fallible flag, pair formats, reference clip, concat split."""

import numpy as np
import pandas as pd
import soundfile as sf

from judgeaudit.io import sha256_file
from judgeaudit.judges.embedded import judges as J
from judgeaudit.judges.embedded.reader import read_request
from judgeaudit.judges.request import Request, load_request_audio
from judgeaudit.study_a.classification import (
    ClipSet,
    blueprint_trials,
    conflict_trials,
    reference_trials,
)
from judgeaudit.study_a.pairwise import Clip, Pair, pair_trials
from judgeaudit.vocab.study_a import PLACEMENTS

LANGS = ("en", "es", "fr", "de")


class BP:
    template_sha256 = "0" * 64

    def skeleton(self):
        return "Acoustic description of the recording: pitch [value] Hz."

    def description(self, clip_id):
        return "Acoustic description of the recording: pitch 180 Hz, average loudness."

    def block(self, label, framed):
        return f"A classifier labelled this clip as {label}." if framed else f"Label: {label}."

    def fallible(self):
        return ("Classifier labels can be wrong. If a label conflicts with what you hear, "
                "ignore the label and answer from the audio.")


def _wav(path, seconds, freq, sr=16000):
    t = np.arange(int(seconds * sr)) / sr
    x = 0.2 * np.sin(2 * np.pi * freq * t)
    sf.write(path, x, sr, subtype="PCM_16")
    return Clip(path.stem, str(path), sha256_file(path))


def _clipset(tmp_path):
    rows = []
    for i, lab in enumerate(LANGS):
        c = _wav(tmp_path / f"{lab}.wav", 0.4, 200 + 40 * i)
        rows.append({"clip_id": c.clip_id, "path": c.path, "sha256": c.sha256, "label": lab,
                     "pred": lab})
    return ClipSet("language", LANGS, pd.DataFrame(rows))


def _view(trial):
    return read_request(load_request_audio(Request.from_json(trial["request"])))


def test_classification_requests_read_as_built(tmp_path):
    cs = _clipset(tmp_path)
    trials = (blueprint_trials(cs, BP(), [1]) + reference_trials(cs, [1])
              + conflict_trials(cs, BP(), [1]))
    for t in trials:
        v = _view(t)
        f = t["facts"]
        assert v.task == "classify" and v.attribute == "language"
        refs, blocks = v.labels_of("reference"), v.labels_of("block")
        cond = t["condition"]
        fallible = cond.endswith("_fallible")
        assert v.fallible == fallible  # every fallible variant carries the instruction
        if cond != "wrong_with_audio_fallible":
            cond = cond.removesuffix("_fallible")
        if cond in (*PLACEMENTS, "match"):
            assert [(r.label, r.placement) for r in refs] == [(f["reference_label"], f["placement"])]
            assert not blocks
        elif cond == "conflict":
            assert [r.label for r in refs] == [f["reference_label"]]
            assert [b.label for b in blocks] == [f["block_label"]]
        elif cond in ("wrong_block", "wrong_no_frame", "wrong_with_audio",
                      "wrong_with_audio_fallible", "true_block"):
            assert [b.label for b in blocks] == [f["block_label"]] and not refs
            assert blocks[0].framed == (cond != "wrong_no_frame")
        else:
            assert not refs and not blocks, (cond, v.labels)
        assert v.has_audio == (cond not in ("skeleton", "acoustic_description", "true_block",
                                            "wrong_block", "wrong_no_frame"))
        # the label reader copies what the request states; first-slot picks allowed[0]
        if cond in ("wrong_block", "system", "after"):
            assert J.label_reader(v) == f["wrong_label"]
        assert J.first_slot(v) == "en"


def test_pair_requests_read_as_built(tmp_path):
    clips = [_wav(tmp_path / f"c{i}.wav", 0.3 + 0.1 * i, 150 + 60 * i) for i in range(4)]
    plain = [Pair("p0", "naturalness", clips[0], clips[1]),
             Pair("p1", "emotion", clips[1], clips[2], emotion="sad"),
             Pair("p2", "cleanness", clips[2], clips[0])]
    spk = [Pair("p3", "speaker", clips[0], clips[1], reference=clips[3])]
    expect = {"naturalness": "naturalness", "emotion": "emotion", "cleanness": "cleanness",
              "speaker": "speaker"}
    for fmt in ("native", "concat"):
        trials = (pair_trials("pair_x", plain, fmt, 1, concat_dir=tmp_path / "cc")
                  + pair_trials("pair_speaker", spk, fmt, 1, concat_dir=tmp_path / "cc"))
        for t in trials:
            v = _view(t)
            assert v.task == "pairwise" and v.audio_format == fmt
            assert v.attribute == expect[t["facts"]["criterion"]]
            assert len(v.clips) == 2
            lengths = [len(sf.read(__import__("io").BytesIO(c.wav))[0]) for c in v.clips]
            by_id = {c.clip_id: c for c in clips}
            want = [len(sf.read(by_id[t["facts"][k]].path)[0]) for k in ("clip_a", "clip_b")]
            assert lengths == want
            if t["facts"]["criterion"] == "speaker":
                assert v.reference_clip is not None
            else:
                assert v.reference_clip is None
            assert J.first_slot(v) == "A"

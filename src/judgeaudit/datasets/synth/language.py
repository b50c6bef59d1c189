"""`synth_language`: spoken-language identification corpus (FLEURS counterpart).

For each language code, `n_voices` voices (espeak language voice + variant x
pitch offset) each read `clips_per_voice` clips of native text, built from
seeded sentence draws until the clip lasts between `min_duration_s` and
`max_duration_s`. Speaker-disjoint split within each language.
"""

from __future__ import annotations

from judgeaudit.datasets.synth.common import (
    ClipWriter,
    make_voices,
    render,
    rng_for,
    split_speakers,
    trim_silence,
)
from judgeaudit.datasets.synth.texts import ESPEAK_VOICE, LANGUAGE_SENTENCES

DATASET = "synth_language"


def _clip_audio(sentences, voice, sample_rate, rng, lo, hi):
    order = [sentences[i] for i in rng.permutation(len(sentences))]
    k = 2
    best = None
    while k <= len(order):
        text = " ".join(order[:k])
        x = trim_silence(render(text, voice, sample_rate, rng=rng), sample_rate)
        dur = len(x) / sample_rate
        if dur > hi:
            break
        best = (text, x)
        if dur >= lo:
            return best
        k += 1
    if best is None or len(best[1]) / sample_rate < lo:
        text = order[0]
        x = trim_silence(render(text, voice, sample_rate, rng=rng), sample_rate)
        raise ValueError(
            f"{DATASET}: cannot build a clip of {lo}-{hi} s for voice {voice.espeak_name} "
            f"(one sentence lasts {len(x) / sample_rate:.1f} s); widen the duration bounds"
        )
    return best


def build(cfg: dict, clips_dir, seed: int, sample_rate: int, root=None) -> dict:
    writer = ClipWriter(DATASET, clips_dir, sample_rate, root)
    for lang in cfg["languages"]:
        if lang not in LANGUAGE_SENTENCES:
            raise ValueError(f"{DATASET}: no sentence bank for language {lang!r}; "
                             f"available: {sorted(LANGUAGE_SENTENCES)}")
        base = cfg["espeak_voices"].get(lang, ESPEAK_VOICE[lang])
        voices = make_voices(f"lang_{lang}", cfg["n_voices"], cfg["variants"],
                             cfg["pitch_offsets"], seed, DATASET, base=base)
        split = split_speakers(voices, cfg["test_fraction"], seed, f"{DATASET}/{lang}")
        for voice in voices:
            for c in range(cfg["clips_per_voice"]):
                clip_id = f"{voice.speaker}_c{c:02d}"
                rng = rng_for(seed, DATASET, clip_id)
                text, x = _clip_audio(LANGUAGE_SENTENCES[lang], voice, sample_rate, rng,
                                      cfg["min_duration_s"], cfg["max_duration_s"])
                writer.write(clip_id, x, voice.speaker, split[voice.speaker],
                             language=lang, transcript=text, voice=voice.label)
    return {"manifest.tsv": writer.manifest()}

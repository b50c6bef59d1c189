"""Per-emotion prosody profile of the synthetic emotion corpus (one table).

Each emotion is a set of deviations from the speaker's neutral voice. The
espeak-ng parameters (pitch, range, rate, word gap) shape the synthesis; the
post-processing terms (gain, spectral tilt, tremolo, breath noise, saturation)
are applied to the waveform afterwards. `strong` intensity scales every
deviation from neutral by `STRONG_SCALE`; `neutral` has only `normal`.

| emotion   | d_pitch | range | rate x | wordgap | gain dB | tilt  | tremolo | breath | drive |
|-----------|--------:|------:|-------:|--------:|--------:|------:|--------:|-------:|------:|
| neutral   |      0  |   45  |  1.00  |    0    |    0    |  0.0  |   0.00  |  0.00  |  0.0  |
| calm      |     -6  |   22  |  0.78  |    2    |   -6    | -0.5  |   0.00  |  0.01  |  0.0  |
| happy     |    +14  |   90  |  1.12  |    0    |   +3    | +0.3  |   0.00  |  0.00  |  0.0  |
| sad       |    -14  |    8  |  0.66  |    3    |  -10    | -0.8  |   0.00  |  0.05  |  0.0  |
| angry     |     +4  |   70  |  1.22  |    0    |   +8    | +0.8  |   0.00  |  0.00  |  0.6  |
| fearful   |    +20  |   20  |  1.35  |    0    |   -3    | +0.1  |   0.45  |  0.06  |  0.0  |
| disgust   |    -10  |   65  |  0.74  |    4    |   +1    | -0.2  |   0.00  |  0.00  |  0.0  |
| surprised |    +26  |  100  |  0.95  |    1    |   +4    | +0.4  |   0.00  |  0.00  |  0.0  |

Units: `d_pitch` is added to the speaker's espeak base pitch (0-100 scale; the
speaker's own offset is added on top); `range` is the espeak pitch range (0-100,
absolute); `rate x` multiplies the speaker's rate (175 wpm); `wordgap` is the
espeak word gap in 10 ms units; `gain dB` is relative to the -26 dBFS reference
RMS every clip is first normalised to; `tilt` in [-1, 1] is a first-order
spectral tilt (> 0 pre-emphasis = brighter/tenser, < 0 one-pole low-pass =
darker/softer); `tremolo` is the depth of a 6.5 Hz amplitude modulation
(trembling voice); `breath` is the level (relative to speech RMS) of
envelope-following high-passed noise (breathiness); `drive` is a tanh
saturation amount (harsh, pressed voice).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

STRONG_SCALE = 1.6
NEUTRAL_RANGE = 45


@dataclass(frozen=True)
class EmotionProfile:
    d_pitch: float
    pitch_range: float
    rate: float
    wordgap: float
    gain_db: float
    tilt: float
    tremolo: float
    breath: float
    drive: float


PROSODY_TABLE: dict[str, EmotionProfile] = {
    "neutral": EmotionProfile(0, 45, 1.00, 0, 0, 0.0, 0.00, 0.00, 0.0),
    "calm": EmotionProfile(-6, 22, 0.78, 2, -6, -0.5, 0.00, 0.01, 0.0),
    "happy": EmotionProfile(14, 90, 1.12, 0, 3, 0.3, 0.00, 0.00, 0.0),
    "sad": EmotionProfile(-14, 8, 0.66, 3, -10, -0.8, 0.00, 0.05, 0.0),
    "angry": EmotionProfile(4, 70, 1.22, 0, 8, 0.8, 0.00, 0.00, 0.6),
    "fearful": EmotionProfile(20, 20, 1.35, 0, -3, 0.1, 0.45, 0.06, 0.0),
    "disgust": EmotionProfile(-10, 65, 0.74, 4, 1, -0.2, 0.00, 0.00, 0.0),
    "surprised": EmotionProfile(26, 100, 0.95, 1, 4, 0.4, 0.00, 0.00, 0.0),
}


def profile(emotion: str, intensity: str = "normal") -> EmotionProfile:
    """The profile of `emotion` at `intensity` ("normal" | "strong")."""
    try:
        base = PROSODY_TABLE[emotion]
    except KeyError:
        raise ValueError(
            f"unknown emotion {emotion!r}; expected one of {sorted(PROSODY_TABLE)}"
        ) from None
    if intensity == "normal":
        return base
    if intensity != "strong":
        raise ValueError(f"unknown intensity {intensity!r}; expected 'normal' or 'strong'")
    neutral = PROSODY_TABLE["neutral"]
    scaled = {
        f.name: getattr(neutral, f.name)
        + STRONG_SCALE * (getattr(base, f.name) - getattr(neutral, f.name))
        for f in fields(EmotionProfile)
    }
    return replace(base, **scaled)


__all__ = ["NEUTRAL_RANGE", "PROSODY_TABLE", "STRONG_SCALE", "EmotionProfile", "profile"]

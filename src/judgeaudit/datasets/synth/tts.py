"""espeak-ng speech synthesis through ctypes on the `espeakng-loader` wheel.

The wheel ships `libespeak-ng.so` and the voice data, so no system package is
needed. espeak-ng keeps synthesis state in C statics that no API call resets
(the pitch-flutter phase, wave phase and filter memories survive even
`espeak_Terminate`/`espeak_Initialize`), so in one process an utterance's
samples would depend on everything synthesised before it. `EspeakSynth`
therefore keeps one initialised engine per process inside a small fork server
(`_espeak_zygote.py`, stdlib + ctypes only): the server loads and initialises
the library once and forks a child per utterance, so every utterance starts
from the same pristine state. The child uses `AUDIO_OUTPUT_SYNCHRONOUS` with a
synth callback that collects the samples, sets the voice (`espeak_SetVoiceByName`,
e.g. "en-us+m3") and every prosody parameter explicitly, and re-seeds
espeak-ng's noise generator (`espeak_ng_SetRandSeed`) and libc `rand()`. Same
request -> same samples, in any process and in any call order. Calls are
serialised with a lock; the output is resampled to the requested rate with
`scipy.signal.resample_poly`.
"""

from __future__ import annotations

import atexit
import json
import subprocess
import sys
import threading
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy.signal import resample_poly

ZYGOTE = Path(__file__).with_name("_espeak_zygote.py")
# run as a file, not imported: declared for the workflow's code inputs (judgeaudit.codedeps)
__code_deps__ = ("judgeaudit.datasets.synth._espeak_zygote",)


class SynthError(RuntimeError):
    """espeak-ng refused a request (unknown voice, bad parameter, synthesis failure)."""


@dataclass(frozen=True)
class Prosody:
    """espeak-ng prosody parameters (espeak units).

    rate: words per minute (80-450, espeak default 175); pitch: base pitch 0-100
    (default 50); pitch_range: 0-100 (default 50, 0 = monotone); volume: 0-200
    (default 100); wordgap: extra pause between words in units of 10 ms.
    """

    rate: int = 175
    pitch: int = 50
    pitch_range: int = 50
    volume: int = 100
    wordgap: int = 0


class EspeakSynth:
    """The process-wide espeak-ng engine (a fork server). Use `EspeakSynth.get()`."""

    _instance: EspeakSynth | None = None
    _lock = threading.RLock()

    def __init__(self) -> None:
        import espeakng_loader

        lib_path = str(espeakng_loader.get_library_path())
        data_path = str(espeakng_loader.get_data_path())
        self._proc = subprocess.Popen(
            [sys.executable, "-I", str(ZYGOTE), lib_path, data_path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        first = self._proc.stdout.readline().decode().split()
        if len(first) != 2 or first[0] != "READY":
            err = self._proc.stderr.read().decode(errors="replace") if self._proc.poll() \
                is not None else ""
            raise SynthError(f"espeak-ng engine failed to start ({' '.join(first)} {err})"
                             f" with library {lib_path} and data {data_path}")
        self.native_rate = int(first[1])
        atexit.register(self.close)

    @classmethod
    def get(cls) -> EspeakSynth:
        with cls._lock:
            if cls._instance is None or cls._instance._proc.poll() is not None:
                cls._instance = cls()
            return cls._instance

    def close(self) -> None:
        proc = self._proc
        if proc.poll() is None:
            try:
                proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
        for stream in (proc.stdout, proc.stderr):
            if stream and not stream.closed:
                stream.close()

    def synthesize_native(self, text: str, voice: str, prosody: Prosody,
                          ssml: bool = False) -> np.ndarray:
        """int16 samples at `self.native_rate` (22050 Hz for espeak-ng)."""
        if not text.strip():
            raise SynthError("empty text")
        req = {"text": text, "voice": voice, "rate": int(prosody.rate),
               "pitch": int(prosody.pitch), "pitch_range": int(prosody.pitch_range),
               "volume": int(prosody.volume), "wordgap": int(prosody.wordgap),
               "ssml": bool(ssml)}
        with self._lock:
            try:
                self._proc.stdin.write((json.dumps(req) + "\n").encode())
                self._proc.stdin.flush()
                head = self._proc.stdout.readline().decode(errors="replace").rstrip("\n")
                if head.startswith("OK "):
                    data = self._proc.stdout.read(int(head[3:]))
                else:
                    data = None
            except (BrokenPipeError, ValueError) as exc:
                raise SynthError(f"espeak-ng engine died ({exc})") from exc
        if data is None:
            msg = head[4:] if head.startswith("ERR ") else f"no reply from engine ({head!r})"
            raise SynthError(f"{msg} (voice {voice!r})")
        if not data:
            raise SynthError(f"espeak-ng produced no audio for {text[:40]!r} ({voice})")
        return np.frombuffer(data, dtype="<i2").astype(np.int16)


def resample(x: np.ndarray, sr_in: int, sr_out: int) -> np.ndarray:
    """Polyphase resampling of a float signal (deterministic)."""
    if sr_in == sr_out:
        return x.astype(np.float32, copy=False)
    frac = Fraction(sr_out, sr_in)
    y = resample_poly(x.astype(np.float64), frac.numerator, frac.denominator)
    return y.astype(np.float32)


def synthesize(
    text: str,
    voice: str = "en-us",
    rate: int = 175,
    pitch: int = 50,
    pitch_range: int = 50,
    volume: int = 100,
    wordgap: int = 0,
    sample_rate: int = 16000,
    ssml: bool = False,
) -> tuple[np.ndarray, int]:
    """Synthesize `text` with espeak-ng voice `voice` (e.g. "en-us+m3").

    Returns (float32 samples in [-1, 1], sample_rate). Leading/trailing silence
    that espeak adds is kept (short and deterministic).
    """
    engine = EspeakSynth.get()
    pros = Prosody(int(rate), int(pitch), int(pitch_range), int(volume), int(wordgap))
    native = engine.synthesize_native(text, voice, pros, ssml=ssml)
    x = native.astype(np.float32) / 32768.0
    return resample(x, engine.native_rate, sample_rate), sample_rate


__all__ = ["EspeakSynth", "Prosody", "SynthError", "resample", "synthesize"]

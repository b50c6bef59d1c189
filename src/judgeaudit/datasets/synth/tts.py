"""espeak-ng speech synthesis through ctypes on the `espeakng-loader` wheel.

The wheel ships `libespeak-ng.so` and the voice data, so no system package is
needed. One engine is initialised per process (espeak-ng keeps global state and
is not thread-safe); every call takes a module lock, sets the voice and all
prosody parameters explicitly (nothing leaks between calls), synthesises in
`AUDIO_OUTPUT_SYNCHRONOUS` mode with a callback that collects the samples, and
resamples to the requested rate with `scipy.signal.resample_poly`.

espeak-ng's own output is deterministic for a given text, voice and parameter
set; the only randomness in its C code (breath/roughness noise of some voice
variants) comes from its internal generator (`espeak_ng_SetRandSeed`) and libc
`rand()`; both are re-seeded before every call, so
the same request yields the same samples in any process.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.signal import resample_poly

# espeak_AUDIO_OUTPUT
AUDIO_OUTPUT_SYNCHRONOUS = 2
# espeak_PARAMETER
_RATE, _VOLUME, _PITCH, _RANGE, _WORDGAP = 1, 2, 3, 4, 7
_POS_CHARACTER = 1
_CHARS_UTF8 = 1
_SSML = 0x10
_EE_OK = 0

_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int,
                             ctypes.c_void_p)


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
    """A process-wide espeak-ng engine. Use `EspeakSynth.get()`."""

    _instance: EspeakSynth | None = None
    _lock = threading.RLock()

    def __init__(self) -> None:
        import espeakng_loader

        self._lib = ctypes.CDLL(espeakng_loader.get_library_path())
        lib = self._lib
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                          ctypes.c_int]
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_SetSynthCallback.argtypes = [_CALLBACK]
        lib.espeak_SetSynthCallback.restype = None
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetVoiceByName.restype = ctypes.c_int
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_SetParameter.restype = ctypes.c_int
        lib.espeak_Synth.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint,
                                     ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                                     ctypes.c_void_p, ctypes.c_void_p]
        lib.espeak_Synth.restype = ctypes.c_int
        lib.espeak_Synchronize.restype = ctypes.c_int
        self._has_seed = hasattr(lib, "espeak_ng_SetRandSeed")
        if self._has_seed:
            lib.espeak_ng_SetRandSeed.argtypes = [ctypes.c_long]
            lib.espeak_ng_SetRandSeed.restype = None
        data_path = espeakng_loader.get_data_path()
        sr = lib.espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0,
                                   str(data_path).encode("utf-8"), 0)
        if sr <= 0:
            raise SynthError(f"espeak_Initialize failed (data path {data_path})")
        self.native_rate = int(sr)
        self._chunks: list[np.ndarray] = []

        def _collect(wav, numsamples, events):  # noqa: ARG001 - C signature
            if wav and numsamples > 0:
                self._chunks.append(np.ctypeslib.as_array(wav, shape=(numsamples,)).copy())
            return 0

        self._callback = _CALLBACK(_collect)  # keep a reference: C holds the pointer
        lib.espeak_SetSynthCallback(self._callback)
        try:
            self._libc = ctypes.CDLL(None)
        except OSError:  # pragma: no cover - non-glibc platforms
            self._libc = None

    @classmethod
    def get(cls) -> EspeakSynth:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def _set(self, param: int, value: int, name: str) -> None:
        if self._lib.espeak_SetParameter(param, int(value), 0) != _EE_OK:
            raise SynthError(f"espeak_SetParameter({name}={value}) failed")

    def synthesize_native(self, text: str, voice: str, prosody: Prosody,
                          ssml: bool = False) -> np.ndarray:
        """int16 samples at `self.native_rate` (22050 Hz for espeak-ng)."""
        if not text.strip():
            raise SynthError("empty text")
        with self._lock:
            if self._lib.espeak_SetVoiceByName(voice.encode("utf-8")) != _EE_OK:
                raise SynthError(f"unknown espeak-ng voice {voice!r}")
            self._set(_RATE, prosody.rate, "rate")
            self._set(_VOLUME, prosody.volume, "volume")
            self._set(_PITCH, prosody.pitch, "pitch")
            self._set(_RANGE, prosody.pitch_range, "pitch_range")
            self._set(_WORDGAP, prosody.wordgap, "wordgap")
            if self._has_seed:
                self._lib.espeak_ng_SetRandSeed(0)
            if self._libc is not None:
                self._libc.srand(0)
            self._chunks = []
            buf = ctypes.create_string_buffer(text.encode("utf-8"))
            flags = _CHARS_UTF8 | (_SSML if ssml else 0)
            err = self._lib.espeak_Synth(buf, len(buf), 0, _POS_CHARACTER, 0, flags,
                                         None, None)
            if err != _EE_OK:
                raise SynthError(f"espeak_Synth failed with code {err} for voice {voice!r}")
            self._lib.espeak_Synchronize()
            chunks, self._chunks = self._chunks, []
        if not chunks:
            raise SynthError(f"espeak-ng produced no audio for {text[:40]!r} ({voice})")
        return np.concatenate(chunks).astype(np.int16, copy=False)


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

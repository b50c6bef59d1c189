"""The provider-neutral judge request: the one object every study builds and every
judge (embedded or API) consumes.

Its canonical JSON (audio by content hash, never by path) plus the judge's
fingerprint is the cache key, so the same question about the same bytes is never
paid for twice, whichever file the bytes came from.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from judgeaudit.io import canonical_json, sha256_bytes, sha256_json

REQUEST_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class TextPart:
    text: str
    kind: Literal["text"] = "text"

    def canonical(self) -> dict[str, Any]:
        return {"kind": "text", "text": self.text}


@dataclass(frozen=True)
class AudioPart:
    """Audio by content. `path` only says where to load the bytes from; it never
    enters the cache key."""

    sha256: str
    format: str = "wav"
    path: str | None = None
    kind: Literal["audio"] = "audio"

    def canonical(self) -> dict[str, Any]:
        return {"kind": "audio", "sha256": self.sha256, "format": self.format}


Part = TextPart | AudioPart


@dataclass(frozen=True)
class AnswerSpec:
    """What a valid answer looks like: a JSON object whose `key` holds one of `allowed`.

    `reasoning` asks for a free-text "reasoning" field before the answer (Study B)."""

    key: str
    allowed: tuple[str, ...]
    reasoning: bool = False

    def canonical(self) -> dict[str, Any]:
        return {"key": self.key, "allowed": list(self.allowed), "reasoning": self.reasoning}

    def json_schema(self) -> dict[str, Any]:
        props: dict[str, Any] = {self.key: {"type": "string", "enum": list(self.allowed)}}
        required = [self.key]
        if self.reasoning:
            props = {"reasoning": {"type": "string"}, **props}
            required = ["reasoning", self.key]
        return {"type": "object", "properties": props, "required": required,
                "additionalProperties": False}


@dataclass(frozen=True)
class Request:
    """One judge call: a system text, an ordered user turn of text/audio parts,
    the answer spec, output-affecting generation settings, and a replicate index
    (so sampled requests are cached per replicate)."""

    system: str | None
    parts: tuple[Part, ...]
    answer: AnswerSpec
    generation: tuple[tuple[str, Any], ...] = field(default=(("temperature", 0.0),))
    replicate: int = 0

    @property
    def audio_parts(self) -> list[AudioPart]:
        return [p for p in self.parts if isinstance(p, AudioPart)]

    @property
    def n_audio(self) -> int:
        return len(self.audio_parts)

    def generation_dict(self) -> dict[str, Any]:
        return dict(self.generation)

    def canonical(self) -> dict[str, Any]:
        return {
            "v": REQUEST_SCHEMA_VERSION,
            "system": self.system,
            "parts": [p.canonical() for p in self.parts],
            "answer": self.answer.canonical(),
            "generation": dict(sorted(self.generation)),
            "replicate": self.replicate,
        }

    def content_hash(self) -> str:
        return sha256_json(self.canonical())

    def cache_key(self, judge_fingerprint: str) -> str:
        """sha256 over the canonical request and the judge identity (provider,
        pinned model id, output-affecting judge settings)."""
        return sha256_bytes(
            (judge_fingerprint + "\n" + canonical_json(self.canonical())).encode("utf-8")
        )

    # --- serialisation (trial files carry paths so bytes can be loaded) ---
    def to_json(self) -> dict[str, Any]:
        out = self.canonical()
        out["parts"] = [
            dict(p.canonical(), path=p.path) if isinstance(p, AudioPart) else p.canonical()
            for p in self.parts
        ]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Request:
        parts: list[Part] = []
        for i, p in enumerate(data["parts"]):
            if p.get("kind") == "text":
                parts.append(TextPart(p["text"]))
            elif p.get("kind") == "audio":
                parts.append(AudioPart(p["sha256"], p.get("format", "wav"), p.get("path")))
            else:
                raise ValueError(f"request part {i}: unknown kind {p.get('kind')!r}")
        ans = data["answer"]
        return cls(
            system=data.get("system"),
            parts=tuple(parts),
            answer=AnswerSpec(ans["key"], tuple(ans["allowed"]), bool(ans.get("reasoning"))),
            generation=tuple(sorted(data.get("generation", {}).items())),
            replicate=int(data.get("replicate", 0)),
        )


@dataclass(frozen=True)
class LoadedRequest:
    """A request with its audio bytes resolved and verified: what a judge receives."""

    request: Request
    audio: dict[str, bytes]  # sha256 -> bytes

    def audio_bytes(self, part: AudioPart) -> bytes:
        return self.audio[part.sha256]


class AudioIntegrityError(ValueError):
    pass


#: (path, device, inode, size, mtime_ns, ctime_ns) -> (bytes, sha256) of the files read
#: last: a job's trials carry the same clips many times over. An entry serves only
#: while the file's stat is unchanged, and only files last changed more than
#: _SETTLED_NS ago are kept (as git's "racily clean" rule: a rewrite within the
#: timestamp granularity of a read could otherwise keep the stat), so a changed file
#: is read and checked again. Bounded by the bytes it keeps.
_READ_MEMO: OrderedDict[tuple, tuple[bytes, str]] = OrderedDict()
_READ_MEMO_BUDGET = 64 << 20
_SETTLED_NS = 2_000_000_000
_read_memo_held = 0


def _read_audio(path: Path) -> tuple[bytes, str]:
    global _read_memo_held
    st = os.stat(path)
    key = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    hit = _READ_MEMO.get(key)
    if hit is not None:
        _READ_MEMO.move_to_end(key)
        return hit
    data = path.read_bytes()
    value = (data, sha256_bytes(data))
    settled = time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > _SETTLED_NS
    if settled and len(data) <= _READ_MEMO_BUDGET:
        while _READ_MEMO and _read_memo_held + len(data) > _READ_MEMO_BUDGET:
            _read_memo_held -= len(_READ_MEMO.popitem(last=False)[1][0])
        _READ_MEMO[key] = value
        _read_memo_held += len(data)
    return value


def load_request_audio(request: Request, root: str | Path = ".",
                       roots: list[Path] | None = None) -> LoadedRequest:
    """Read each audio part's bytes from its path and check them before they go
    anywhere: with `roots` (the workflow's: the project's data/, results/ and
    configured corpus folders, `datasets.validate.config_audio_roots`), the path
    must resolve (symlinks followed) inside one of them; the bytes must be a
    RIFF/WAVE file and match the part's recorded sha256."""
    from judgeaudit.datasets.validate import outside_roots

    audio: dict[str, bytes] = {}
    for part in request.audio_parts:
        if part.sha256 in audio:
            continue
        if not part.path:
            raise AudioIntegrityError(f"audio part {part.sha256[:12]} has no path to load from")
        path = Path(part.path)
        path = path if path.is_absolute() else Path(root) / path
        outside = outside_roots(path, roots) if roots is not None else None
        if outside:
            raise AudioIntegrityError(f"audio part {part.sha256[:12]}: {outside}; not sent")
        try:
            data, actual = _read_audio(path)
        except OSError as exc:
            raise AudioIntegrityError(f"{path}: cannot read audio ({exc.strerror})") from exc
        if actual != part.sha256:
            raise AudioIntegrityError(
                f"{path}: sha256 mismatch (expected {part.sha256}, got {actual})"
            )
        if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
            raise AudioIntegrityError(f"{path}: not a RIFF/WAVE file (starts {data[:12]!r}); "
                                      f"only WAV files the project wrote are sent")
        audio[part.sha256] = data
    return LoadedRequest(request, audio)

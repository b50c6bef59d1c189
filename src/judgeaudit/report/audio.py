"""The audio the trace pages play, inside the report tree (`results/report/audio/`),
so a copy of `results/report/` alone plays every clip it cites.

Each distinct clip a trace cites is stored once, named by the sha256 of the file the
judge was sent (`audio/<sha256[:24]>.opus`): an Ogg Opus copy (libsndfile through
soundfile, compression level AUDIO_LEVEL, ~13 kbit/s for speech), so the tree stays a
few MB where the WAVs are hundreds (the page says the judge received the WAV, names
its path and sha256, and links it in the run directory). A clip Opus cannot take (a
sample rate other than 8/12/16/24/48 kHz, an unreadable file) is copied as sent.

Encoded copies are kept, by the same name, in `results/audio_store/` (a
content-addressed store like `results/config/`): a report rebuilt after one table
changed encodes only clips it has not seen. Each `report_trace` job fills the store
with the clips its table's traces cite (`fill_store`), side by side with the others,
so the report job only links them.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from judgeaudit.io import sha256_file, write_bytes_atomic

AUDIO_DIR = "audio"  # under the report folder
AUDIO_STORE = Path("results") / "audio_store"  # under the workflow root
AUDIO_LEVEL = 0.98  # soundfile's Opus compression_level (0 best .. 1 smallest): ~13 kbit/s
OPUS_RATES = (8000, 12000, 16000, 24000, 48000)
NAME_CHARS = 24


class AudioCopies:
    """The report's audio folder: `add(path, sha256)` gives the clip's file name under
    `<out>/audio/` (relative to `out`), `write()` makes the files."""

    def __init__(self, root: str | os.PathLike, out: str | os.PathLike,
                 store: str | os.PathLike | None = AUDIO_STORE):
        self.root, self.out = Path(root), Path(out)
        # one store per encoder setting: a changed level never reuses old copies
        self.store = None if store is None else self.root / store / f"opus-{AUDIO_LEVEL:g}"
        self.clips: dict[str, tuple[str, str]] = {}  # digest -> (source path, name)
        self._by_path: dict[str, str | None] = {}

    def add(self, path: str, sha256: str | None = None) -> str | None:
        """`audio/<name>` for the clip at `path` (relative to root, or absolute), or
        None when the file is not there."""
        if path in self._by_path:
            return self._by_path[path]
        src = Path(path) if os.path.isabs(path) else self.root / path
        if not src.is_file():
            self._by_path[path] = None
            return None
        digest = sha256 if sha256 and len(str(sha256)) == 64 else sha256_file(src)
        got = self.clips.get(digest)
        if got is None:
            name = f"{digest[:NAME_CHARS]}{'.opus' if _opus_ok(src) else src.suffix}"
            got = self.clips[digest] = (str(src), name)
        self._by_path[path] = f"{AUDIO_DIR}/{got[1]}"
        return self._by_path[path]

    def fill_store(self, order: str = "") -> int:
        """Encode into the store every added clip it does not hold yet (the trace jobs
        run this side by side, so the report job, the run's last, only links the
        copies); returns how many were encoded. Writes are atomic, so two jobs that
        encode one clip at once leave one whole file; each job walks the clips in an
        order of its own (sha256 of `order` + name), so jobs citing the same clips
        do not walk them in step and encode each twice."""
        if self.store is None:
            return 0
        n = 0
        for src, name in sorted(self.clips.values(), key=lambda v: hashlib.sha256(
                f"{order}|{v[1]}".encode()).hexdigest()):
            kept = self.store / name
            if name.endswith(".opus") and not kept.is_file():
                write_bytes_atomic(kept, encode_opus(src))
                n += 1
        return n

    def write(self) -> dict[str, Any]:
        """Write every clip into `<out>/audio/` (the folder is replaced); returns
        {"clips", "bytes", "source_bytes", "encoded", "reused", "copied"}."""
        folder = self.out / AUDIO_DIR
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        stats = {"clips": 0, "bytes": 0, "source_bytes": 0, "encoded": 0, "reused": 0,
                 "copied": 0}
        for src, name in sorted(self.clips.values(), key=lambda v: v[1]):
            dest = folder / name
            stats["clips"] += 1
            stats["source_bytes"] += os.path.getsize(src)
            if not name.endswith(".opus"):
                shutil.copyfile(src, dest)
                stats["copied"] += 1
            else:
                kept = self.store / name if self.store is not None else None
                if kept is not None and kept.is_file():
                    stats["reused"] += 1
                else:
                    data = encode_opus(src)
                    stats["encoded"] += 1
                    if kept is None:
                        write_bytes_atomic(dest, data)
                    else:
                        write_bytes_atomic(kept, data)
                if kept is not None:
                    _link_or_copy(kept, dest)
            stats["bytes"] += dest.stat().st_size
        return stats


def _link_or_copy(src: Path, dest: Path) -> None:
    try:
        os.link(src, dest)  # the store and the report on one disk: no second copy
    except OSError:
        shutil.copyfile(src, dest)


def _opus_ok(src: Path) -> bool:
    try:
        import soundfile as sf

        return int(sf.info(str(src)).samplerate) in OPUS_RATES
    except (RuntimeError, OSError, ValueError):
        return False


def encode_opus(src: str | os.PathLike, level: float = AUDIO_LEVEL) -> bytes:
    """The clip as Ogg Opus bytes (mono or as many channels as it has)."""
    import soundfile as sf

    data, rate = sf.read(str(src), dtype="float32", always_2d=False)
    buf = io.BytesIO()
    sf.write(buf, data, rate, format="OGG", subtype="OPUS", compression_level=level)
    return buf.getvalue()


def describe(stats: Mapping[str, Any]) -> str:
    """One sentence for the trace pages and the report: what the audio folder holds."""
    return (f"The clips play from the report's own folder ({AUDIO_DIR}/, "
            f"{stats.get('clips', 0)} distinct clips, {stats.get('bytes', 0) / 1e6:.1f} MB): "
            "each stored once, named by the sha256 of the file the judge was sent, as an "
            f"Ogg Opus copy (~13 kbit/s; the {stats.get('source_bytes', 0) / 1e6:.1f} MB "
            "of WAVs the judges received are linked by path in the run directory)")


__all__ = ["AUDIO_DIR", "AUDIO_STORE", "AudioCopies", "describe", "encode_opus"]

"""Tiny copies of each corpus in its official layout, and a loopback HTTP server
with Range support, for tests and smoke runs (no network needed).

The clips are short numpy tones; RAVDESS clips are 48 kHz stereo like the real
corpus, FLEURS/BVCC/VoxCeleb 16 kHz mono, EmoCF 24 kHz mono.
"""

from __future__ import annotations

import http.server
import json
import os
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf


def tone(path: str | os.PathLike, freq: float = 220.0, seconds: float = 0.3,
         sr: int = 16000, channels: int = 1, subtype: str = "PCM_16",
         fmt: str | None = None) -> Path:
    t = np.arange(int(seconds * sr)) / sr
    x = 0.3 * np.sin(2 * np.pi * freq * t)
    data = np.stack([x * (1.0 - 0.1 * c) for c in range(channels)], axis=1)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), data, sr, subtype=subtype, format=fmt)
    return path


def ravdess_tree(root: str | os.PathLike, actors=(1, 2, 3, 4), emotions=range(1, 9),
                 seconds: float = 0.2) -> Path:
    """Actor_XX/03-01-EE-II-SS-RR-AA.wav for the given actors (48 kHz stereo)."""
    root = Path(root)
    for a in actors:
        for e in emotions:
            for it in ("01",) if e == 1 else ("01", "02"):
                for st in ("01", "02"):
                    for rep in ("01", "02"):
                        name = f"03-01-{e:02d}-{it}-{st}-{rep}-{a:02d}.wav"
                        tone(root / f"Actor_{a:02d}" / name, 150 + 20 * e + a, seconds,
                             sr=48000, channels=2)
    return root


def zip_dir(src: str | os.PathLike, dest: str | os.PathLike) -> Path:
    src, dest = Path(src), Path(dest)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_STORED) as zf:
        for f in sorted(src.rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(src).as_posix())
    return dest


def tar_dir(src: str | os.PathLike, dest: str | os.PathLike, arc_prefix: str = "") -> Path:
    src, dest = Path(src), Path(dest)
    with tarfile.open(dest, "w:gz") as tf:
        for f in sorted(src.rglob("*")):
            if f.is_file():
                tf.add(f, arcname=(arc_prefix + f.relative_to(src).as_posix()))
    return dest


def fleurs_tree(root: str | os.PathLike, langs=None, n: int = 3, split: str = "test",
                packed: bool = True, splits: tuple[str, ...] | None = None) -> Path:
    """data/<conf>/<split>.tsv + data/<conf>/audio/<split>.tar.gz (or extracted) for each
    official split in `splits` (default: `split` and "train")."""
    root = Path(root)
    langs = langs or {"en": "en_us", "de": "de_de"}
    splits = splits or tuple(dict.fromkeys((split, "train")))
    for li, (_lang, conf) in enumerate(sorted(langs.items())):
        base = root / "data" / conf
        for si, sp in enumerate(splits):
            stage = base / "_stage" / sp
            lines = []
            for i in range(n + 1):  # the last one is too short (filtered out)
                secs = 3.5 + i if i < n else 1.0
                fname = f"{1000 + 100 * si + i}{li}.wav"
                tone(stage / fname, 200 + 30 * i + 7 * si, secs, sr=16000)
                lines.append("\t".join([str(i), fname, f"Sentence {i} in {conf}.",
                                        f"sentence {i} in {conf}", "s e n",
                                        str(int(secs * 16000)), "FEMALE" if i % 2 else "MALE"]))
            (base / f"{sp}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
            (base / "audio").mkdir(parents=True, exist_ok=True)
            if packed:
                tar_dir(base / "_stage" / sp, base / "audio" / f"{sp}.tar.gz", arc_prefix=f"{sp}/")
            else:
                os.replace(stage, base / "audio" / sp)
        _rmtree(base / "_stage")
    return root


def bvcc_tree(root: str | os.PathLike, n: int = 6, sets=("test",),
              shared_systems: bool = True) -> Path:
    """DATA/wav + DATA/sets/<set>_mos_list.txt (+ per-rating lists). With
    `shared_systems` every set uses the same systems (as the official BVCC sets do);
    otherwise each set has its own systems."""
    from judgeaudit.datasets.real.bvcc import SETS

    data = Path(root) / "DATA"
    (data / "sets").mkdir(parents=True, exist_ok=True)
    for k, set_name in enumerate(sets):
        mos, ratings = [], []
        for i in range(n):
            system = f"sys{i % 3:04x}" if shared_systems else f"sys{16 * k + i % 3:04x}"
            name = f"{system}-utt{256 * k + i:06x}.wav"
            tone(data / "wav" / name, 180 + 15 * i + 3 * k, 0.4)
            score = 1.25 + 0.7 * i
            mos.append(f"{name},{score:.3f}")
            for r in range(4):
                ratings.append(f"{system},{name},{max(1, min(5, round(score)))},rater{r}")
        mos_file, ratings_file = SETS[set_name]
        (data / "sets" / mos_file).write_text("\n".join(mos) + "\n")
        (data / "sets" / ratings_file).write_text("\n".join(ratings) + "\n")
    return Path(root)


def voxceleb_tree(root: str | os.PathLike, dev_speakers=("id10001", "id10002")) -> Path:
    """wav/<spk>/<video>/<n>.wav for three verification test speakers (in the trial
    list veri_test2.txt) and `dev_speakers` (not in it)."""
    root = Path(root)
    rels = []
    for s, spk in enumerate(("id10270", "id10271", "id10272", *dev_speakers)):
        for v, video in enumerate(("abcDEF123_x", "ghiJKL456_y")):
            rel = f"{spk}/{video}/{v + 1:05d}.wav"
            tone(root / "wav" / rel, 120 + 40 * s + 5 * v, 0.5)
            if spk not in dev_speakers:
                rels.append(rel)
    lines = []
    for a in rels:
        for b in rels:
            if a < b:
                lines.append(f"{int(a.split('/')[0] == b.split('/')[0])} {a} {b}")
    (root / "veri_test2.txt").write_text("\n".join(lines) + "\n")
    return root


#: (source id, sentence id, sentence, expected emotions, renderings present) of the
#: EmoCF-like fixture: the real layout's groups, including one sentence under two
#: sources (two different items, never paired across) and an incomplete group.
EMOCF_GROUPS = (
    ("5ea734f39a31b90ee2f7b8e0", "aaee06c6", "You're going to have pay for this.",
     ("fear", "sadness"), ("fear", "sadness")),
    ("67acae4d2601703808e7e666", "4b67c01e", "I still have some of their old toys.",
     ("neutral", "sadness"), ("neutral", "sadness")),
    ("6699258fcd1cb9db035de794", "54345e2f", "You're actually praying.",
     ("fear", "surprise"), ("fear", "surprise")),
    ("664cd1c6545aa0f362493dd9", "54345e2f", "You're actually praying.",
     ("surprise", "joy"), ("joy", "surprise")),
    ("6699258fcd1cb9db035de794", "b4ba40a3", "You're really going out there?",
     ("anger", "disgust"), ("anger", "disgust")),
    ("5a063c2d844c7a00015e477d", "e5fd8745", "You're going my way!",
     ("surprise", "joy"), ("surprise",)),  # incomplete: one rendering only
)


def emocf_tree(root: str | os.PathLike, audio: bool = True) -> Path:
    """`audio_inputs.jsonl` + `<source>_<sentence id>_<emotion>.wav` (24 kHz) in the
    released EmoCF layout (see EMOCF_GROUPS); `audio=False` makes a labels-only copy."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    for g, (src, sid, sent, expected, present) in enumerate(EMOCF_GROUPS):
        for e, emotion in enumerate(present):
            fname = f"{src}_{sid}_{emotion}.wav"
            if audio:
                tone(root / fname, 200 + 50 * e + 10 * g, 0.4, sr=24000)
            rows.append({"filename": fname, "emotion": emotion, "sentence": sent,
                         "expected_emotions": list(expected)})
    (root / "audio_inputs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def od3_tree(root: str | os.PathLike, split: str = "test", n_dialogues: int = 3,
             n_turns: int = 4) -> Path:
    root = Path(root)
    lines = []
    for d in range(n_dialogues):
        sid = f"{d:02d}dialogue{d}"
        turns = []
        for t in range(n_turns):
            agent = t % 2 == 1
            voice = "18811826" if agent else f"55{d}"
            rel = f"{split}/{sid[:2]}/{sid}/turn{t}+{voice}.wav"
            tone(root / "audio" / rel, 150 + 20 * t, 0.3)
            turns.append({"turn_id": f"turn{t}", "text": f"Turn {t} of dialogue {d}.",
                          "speaker_id": "agent" if agent else "user", "is_agent": agent,
                          "audio": {voice: {"path": rel, "voice_id": voice,
                                            "universal_agent": agent}}})
        lines.append(json.dumps({"sample_id": sid, "turns": turns,
                                 "source_dataset": "MultiWOZ_2.2"}))
    (root / f"od3_{split}.jsonl").write_text("\n".join(lines) + "\n")
    return root


def _rmtree(p: Path) -> None:
    import shutil

    shutil.rmtree(p, ignore_errors=True)


# ---- loopback HTTP server with Range support and fault injection ----

@dataclass
class ServerState:
    files: dict[str, bytes] = field(default_factory=dict)
    drop_after: dict[str, int] = field(default_factory=dict)  # path -> bytes, then drop (once)
    fail_status: dict[str, list[int]] = field(default_factory=dict)  # path -> statuses to send
    ignore_range: bool = False
    requests: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Range)


class _Handler(http.server.BaseHTTPRequestHandler):
    state: ServerState

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_GET(self):  # noqa: N802 - http.server API
        st = self.server.state  # type: ignore[attr-defined]
        path = self.path.split("?")[0]
        rng = self.headers.get("Range")
        st.requests.append((path, rng))
        if st.fail_status.get(path):
            code = st.fail_status[path].pop(0)
            self.send_response(code)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if path not in st.files:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = st.files[path]
        start = 0
        if rng and not st.ignore_range and rng.startswith("bytes="):
            start = int(rng[6:].split("-")[0])
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        chunk = body[start:]
        self.send_header("Content-Length", str(len(chunk)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        drop = st.drop_after.pop(path, None)
        if drop is not None:
            self.wfile.write(chunk[:drop])
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
            return
        self.wfile.write(chunk)


@contextmanager
def serve(state: ServerState | None = None) -> Iterator[tuple[str, ServerState]]:
    """Serve `state.files` ({"/path": bytes}) on 127.0.0.1; yields (base_url, state)."""
    state = state or ServerState()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.state = state  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", state
    finally:
        httpd.shutdown()
        httpd.server_close()


def read_bytes(path: str | os.PathLike) -> bytes:
    return Path(path).read_bytes()


def tree_files(root: str | os.PathLike, prefix: str = "") -> dict[str, bytes]:
    """Every file under `root` as {"/<prefix><relative path>": bytes} for `serve`."""
    root = Path(root)
    return {f"/{prefix}{f.relative_to(root).as_posix()}": f.read_bytes()
            for f in sorted(root.rglob("*")) if f.is_file()}


__all__ = ["ServerState", "bvcc_tree", "emocf_tree", "fleurs_tree", "od3_tree",
           "ravdess_tree", "serve", "tar_dir", "tone", "tree_files", "voxceleb_tree",
           "zip_dir"]

"""Study B rendering: candidate selection (fake renderer + scorer), the espeak
renderer, and the real-mode adapters (OpenAI speech, LLM replies) over real HTTP
against a server on 127.0.0.1 that checks every payload."""

from __future__ import annotations

import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
import soundfile as sf

from judgeaudit.study_b import tts
from judgeaudit.study_b.renderings import render_items
from judgeaudit.study_b.replies import LLMReplyWriter, ReplyBankError

KEY = "sk-test-study-b-123"


class FakeRenderer:
    """Candidate c of an emotional line is a tone whose pitch grows with c; the
    neutral reference (candidate -1) is 150 Hz."""

    name = "fake"

    def render(self, text, emotion, voice, candidate, key):
        sr = 16000
        f0 = 150.0 if candidate < 0 or emotion == "neutral" else 140.0 + 20.0 * candidate
        t = np.arange(int(0.6 * sr)) / sr
        x = 0.3 * np.sin(2 * np.pi * f0 * t) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))
        return tts.Rendering(x.astype(np.float32), sr, {"backend": "fake", "f0": f0})


def _item():
    return {"item_id": "single-x", "family": "single", "voice": "v",
            "turns": [{"turn": 1, "role": "user", "text": "the car is in the garage",
                       "emotions": ["happy", "neutral"]}],
            "key_turns": [1], "labels": ["happy", "neutral"]}


def test_selection_logs_every_candidate(tmp_path):
    # the scorer prefers candidate 1; the pitch check (happy: higher F0 than
    # neutral) rejects candidate 0 (140 Hz < 150 Hz)
    def score(data):
        x, sr = sf.read(io.BytesIO(data))
        est = np.argmax(np.abs(np.fft.rfft(x))) * sr / len(x)
        return {"happy": 0.9 if 155 < est < 165 else 0.4, "neutral": 0.1}

    rows, cands = render_items([_item()], FakeRenderer(), score, tmp_path, k=3, root=tmp_path)
    happy = [c for c in cands if c["emotion"] == "happy"]
    assert len(happy) == 3 and sum(c["accepted"] for c in happy) == 1
    assert [c["pitch_ok"] for c in happy] == [False, True, True]
    kept = next(c for c in happy if c["accepted"])
    assert kept["candidate"] == 1 and kept["spec_score"] == 0.9
    assert all((tmp_path / c["path"]).exists() for c in cands)
    assert {(r["rendering"], r["emotion"]) for r in rows} == {(0, "happy"), (1, "neutral")}
    r0 = next(r for r in rows if r["rendering"] == 0)
    assert r0["sha256"] == kept["sha256"]


def test_espeak_renderer_candidates_differ_and_repeat():
    r = tts.EspeakRenderer(sample_rate=16000, seed=7, n_voices=2)
    v = r.voice_ids()[0]
    a = r.render("Please pass me the blue folder.", "angry", v, 0, "k")
    b = r.render("Please pass me the blue folder.", "angry", v, 1, "k")
    a2 = r.render("Please pass me the blue folder.", "angry", v, 0, "k")
    assert a.sample_rate == 16000 and len(a.samples) > 8000
    # espeak-ng itself varies by a few samples between calls (see report); the
    # candidate's prosody (seeded jitter) is what must repeat
    assert abs(len(a.samples) - len(a2.samples)) < 0.005 * len(a.samples)
    assert abs(len(a.samples) - len(b.samples)) > 0.005 * len(a.samples)
    with pytest.raises(tts.TTSError, match="unknown voice"):
        r.render("x", "sad", "nobody", 0, "k")


class _Handler(BaseHTTPRequestHandler):
    seen: list = []
    fail_first = 0

    def log_message(self, *a):  # quiet
        pass

    def _json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        auth = self.headers.get("Authorization")
        type(self).seen.append((self.path, body, auth))
        if auth != f"Bearer {KEY}":
            return self._json(401, {"error": "bad key"})
        if type(self).fail_first > 0:
            type(self).fail_first -= 1
            return self._json(500, {"error": "transient"})
        if self.path == "/v1/audio/speech":
            ok = (body.get("model") == "gpt-4o-mini-tts" and body.get("response_format") == "wav"
                  and isinstance(body.get("input"), str) and body.get("voice")
                  and "tone" in body.get("instructions", ""))
            if not ok:
                return self._json(400, {"error": "bad speech payload"})
            sr = 24000
            t = np.arange(sr // 2) / sr
            buf = io.BytesIO()
            sf.write(buf, (0.2 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), sr,
                     subtype="PCM_16", format="WAV")
            data = buf.getvalue()
            self.send_response(200)
            self.send_header("Content-Type", "audio/wav")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return None
        if self.path == "/v1/chat/completions":
            msgs = body.get("messages", [])
            if [m["role"] for m in msgs] != ["system", "user"]:
                return self._json(400, {"error": "bad messages"})
            return self._json(200, {"model": body["model"] + "-dated", "choices": [
                {"message": {"role": "assistant",
                             "content": json.dumps({"reply": "I hear you; let me help."})}}]})
        return self._json(404, {"error": "no route"})


@pytest.fixture()
def server():
    _Handler.seen = []
    _Handler.fail_first = 0
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()


def test_openai_speech_over_http(server, monkeypatch):
    monkeypatch.setenv("SB_TEST_KEY", KEY)
    _Handler.fail_first = 1  # one 500, then success (retried)
    r = tts.OpenAISpeechRenderer(api_key_env="SB_TEST_KEY", base_url=server, sample_rate=16000)
    out = r.render("I lost my keys again.", "sad", "coral", 1, "k")
    assert out.sample_rate == 16000 and abs(len(out.samples) - 8000) < 10
    path, body, _ = _Handler.seen[-1]
    assert path == "/v1/audio/speech" and body["voice"] == "coral"
    assert body["instructions"].startswith("Speak in a sad")
    assert out.meta["instruction"] == body["instructions"]
    assert KEY not in json.dumps(out.meta)
    assert len(_Handler.seen) == 2


def test_openai_speech_needs_env_key(monkeypatch):
    monkeypatch.delenv("SB_MISSING_KEY", raising=False)
    with pytest.raises(tts.TTSError, match="SB_MISSING_KEY"):
        tts.OpenAISpeechRenderer(api_key_env="SB_MISSING_KEY")


def test_llm_reply_writer_over_http(server, monkeypatch):
    monkeypatch.setenv("SB_TEST_KEY", KEY)
    w = LLMReplyWriter("gpt-test", api_key_env="SB_TEST_KEY", base_url=server)
    out = w.write("I got the results back today.", "spoken angrily")
    assert out == {"reply": "I hear you; let me help.", "model": "gpt-test-dated",
                   "target": "spoken angrily"}
    _, body, auth = _Handler.seen[-1]
    assert "spoken angrily" in body["messages"][0]["content"] and auth == f"Bearer {KEY}"
    monkeypatch.delenv("SB_TEST_KEY")
    with pytest.raises(ReplyBankError, match="SB_TEST_KEY"):
        LLMReplyWriter("gpt-test", api_key_env="SB_TEST_KEY", base_url=server)


def test_llm_replies_replace_template_replies(server, monkeypatch):
    from judgeaudit.study_b.build import apply_llm_replies

    monkeypatch.setenv("SB_TEST_KEY", KEY)
    w = LLMReplyWriter("gpt-test", api_key_env="SB_TEST_KEY", base_url=server)
    item = dict(_item(), replies=["a", "b"])
    apply_llm_replies([item], w)
    assert item["replies"] == ["I hear you; let me help."] * 2
    assert item["reply_source"]["model"] == "gpt-test-dated"
    assert item["reply_source"]["targets"] == ["in a happy tone of voice",
                                               "in a neutral tone of voice"]

"""A loopback fake of the OpenAI Chat Completions, Gemini generateContent / Files and
Amazon Bedrock Converse APIs, for tests and benchmarks (never used by the workflow).

A minimal HTTP/1.1 server on 127.0.0.1 (asyncio streams, keep-alive) that
 - checks every payload against the provider's documented request format (part
   types, base64 WAV that decodes to a RIFF file, message order, system placement,
   auth header present) and answers 400 naming the violation (also kept in
   `violations`);
 - records a trace per request (provider, system placement, the ordered part kinds
   with the sha256 of each decoded audio) so tests can check the audio sent is the
   audio of the request;
 - answers `{"label": X}` where X follows `Say: X` in the prompt (or `reply_fn`);
 - injects faults scripted in the prompt: `FAULTS=429,500,stall,badjson,truncated,echoauth`
   applies one fault per attempt of that request, then answers normally;
   `ALWAYS=refusal|garbage|empty` answers that way every time;
 - adds `latency_s` of delay to every reply (benchmarks);
 - `outage`, a predicate on (prompt text, trace), answers HTTP 500 while it is set.
Bedrock Converse (`POST /model/{modelId}/converse`, what boto3 sends to `endpoint_url`):
the SigV4 Authorization header is checked for its documented form (credential scope
`<date>/<region>/bedrock/aws4_request`) and, when `aws_secret` is set, its signature is
recomputed with botocore's signer; errors come back the way Bedrock sends them
(`x-amzn-ErrorType` header + `{"message"}` body): 429 ThrottlingException, 500
InternalServerException, and fault `validation` = 400 ValidationException.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import threading
import time
from collections import Counter
from typing import Any

SAY = re.compile(r"Say:\s*([\w\-]+)")
FAULTS = re.compile(r"FAULTS=([\w,]+)")
ALWAYS = re.compile(r"ALWAYS=(\w+)")


class Violation(ValueError):
    pass


def _wav_sha(b64: Any, where: str) -> str:
    if not isinstance(b64, str) or b64.startswith("data:"):
        raise Violation(f"{where}: expected raw base64 (no data: prefix)")
    try:
        raw = base64.b64decode(b64, validate=True)
    except ValueError as exc:
        raise Violation(f"{where}: not valid base64") from exc
    if raw[:4] != b"RIFF" or raw[8:12] != b"WAVE":
        raise Violation(f"{where}: decoded bytes are not a RIFF/WAVE file")
    return hashlib.sha256(raw).hexdigest()


def check_openai(body: dict, compatible: bool) -> dict:
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise Violation("model: missing")
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        raise Violation("messages: expected a non-empty list")
    roles = [m.get("role") for m in msgs]
    system = None
    if roles[0] in ("system", "developer"):
        if not isinstance(msgs[0].get("content"), str):
            raise Violation("messages[0].content: system content must be a string")
        system = msgs[0]["content"]
        msgs = msgs[1:]
        roles = roles[1:]
    if roles != ["user"]:
        raise Violation(f"messages: expected [system?, user], got roles {roles}")
    parts = []
    for i, part in enumerate(msgs[0].get("content") or []):
        t = part.get("type")
        where = f"messages[user].content[{i}]"
        if t == "text":
            if not isinstance(part.get("text"), str) or set(part) != {"type", "text"}:
                raise Violation(f"{where}: text part must be {{type, text}}")
            parts.append(("text", part["text"]))
        elif t == "input_audio":
            ia = part.get("input_audio") or {}
            if set(part) != {"type", "input_audio"} or set(ia) != {"data", "format"}:
                raise Violation(f"{where}: input_audio part must be {{type, input_audio: {{data, format}}}}")
            if ia["format"] not in ("wav", "mp3"):
                raise Violation(f"{where}: format must be wav or mp3")
            parts.append(("audio", _wav_sha(ia["data"], where)))
        elif t == "audio_url" and compatible:
            url = (part.get("audio_url") or {}).get("url", "")
            prefix = "data:audio/wav;base64,"
            if not url.startswith(prefix):
                raise Violation(f"{where}: audio_url must be a data:audio/wav;base64 URL")
            parts.append(("audio", _wav_sha(url[len(prefix):], where)))
        else:
            raise Violation(f"{where}: unknown part type {t!r}")
    if not compatible and body.get("modalities", ["text"]) != ["text"]:
        raise Violation("modalities: text-only output expected")
    return {"system": system, "parts": parts}


SIGV4 = re.compile(r"AWS4-HMAC-SHA256 Credential=([A-Z0-9]+)/(\d{8})/([\w-]+)/bedrock/aws4_request, "
                   r"SignedHeaders=([\w;-]+), Signature=([0-9a-f]{64})$")


def check_bedrock(body: dict) -> dict:
    """The Converse request body as the API reference documents it."""
    allowed = {"messages", "system", "inferenceConfig", "additionalModelRequestFields"}
    if set(body) - allowed:
        raise Violation(f"unexpected top-level fields {sorted(set(body) - allowed)}")
    msgs = body.get("messages")
    if not isinstance(msgs, list) or len(msgs) != 1 or msgs[0].get("role") != "user":
        raise Violation("messages: expected one user message")
    system = None
    if "system" in body:
        sp = body["system"]
        if not isinstance(sp, list) or len(sp) != 1 or set(sp[0]) != {"text"}:
            raise Violation("system: expected [{text}]")
        system = sp[0]["text"]
    parts = []
    for i, block in enumerate(msgs[0].get("content") or []):
        where = f"messages[0].content[{i}]"
        if set(block) == {"text"} and isinstance(block["text"], str):
            parts.append(("text", block["text"]))
        elif set(block) == {"audio"}:
            a = block["audio"]
            if not isinstance(a, dict) or set(a) != {"format", "source"}:
                raise Violation(f"{where}: audio block must be {{format, source}}")
            if a["format"] != "wav" or set(a["source"] or {}) != {"bytes"}:
                raise Violation(f"{where}: audio must be {{format: wav, source: {{bytes}}}}")
            parts.append(("audio", _wav_sha(a["source"]["bytes"], where)))
        else:
            raise Violation(f"{where}: a content block holds exactly one of text/audio")
    inf = body.get("inferenceConfig", {})
    if not isinstance(inf, dict) or set(inf) - {"maxTokens", "temperature", "topP", "stopSequences"}:
        raise Violation("inferenceConfig: only maxTokens/temperature/topP/stopSequences")
    if "maxTokens" in inf and (not isinstance(inf["maxTokens"], int) or inf["maxTokens"] < 1):
        raise Violation("inferenceConfig.maxTokens must be a positive integer")
    return {"system": system, "parts": parts, "inference": inf}


def verify_sigv4(method: str, path: str, headers: dict[str, str], body: bytes,
                 secret: str) -> None:
    """Recompute the request's SigV4 signature with botocore's signer."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    m = SIGV4.match(headers.get("authorization", ""))
    akid, _, region, signed, signature = m.groups()
    names = signed.split(";")
    req = AWSRequest(method=method, url=f"http://{headers['host']}{path}", data=body,
                     headers={n: headers[n] for n in names if n in headers})
    req.context["timestamp"] = headers["x-amz-date"]
    signer = SigV4Auth(Credentials(akid, secret, headers.get("x-amz-security-token")),
                       "bedrock", region)
    canonical = signer.canonical_request(req)
    if signer.signature(signer.string_to_sign(req, canonical), req) != signature:
        raise Violation("SigV4 signature does not verify")


def check_gemini(body: dict) -> dict:
    contents = body.get("contents")
    if not isinstance(contents, list) or len(contents) != 1 or contents[0].get("role") != "user":
        raise Violation("contents: expected one user turn")
    system = None
    if "systemInstruction" in body:
        sp = body["systemInstruction"].get("parts") or []
        if len(sp) != 1 or set(sp[0]) != {"text"}:
            raise Violation("systemInstruction: expected parts [{text}]")
        system = sp[0]["text"]
    parts = []
    for i, part in enumerate(contents[0].get("parts") or []):
        where = f"contents[0].parts[{i}]"
        if set(part) == {"text"}:
            parts.append(("text", part["text"]))
        elif set(part) == {"inlineData"}:
            d = part["inlineData"]
            if set(d) != {"mimeType", "data"} or d["mimeType"] != "audio/wav":
                raise Violation(f"{where}: inlineData must be {{mimeType: audio/wav, data}}")
            parts.append(("audio", _wav_sha(d["data"], where)))
        elif set(part) == {"fileData"}:
            d = part["fileData"]
            if set(d) != {"mimeType", "fileUri"} or d["mimeType"] != "audio/wav":
                raise Violation(f"{where}: fileData must be {{mimeType: audio/wav, fileUri}}")
            parts.append(("file", d["fileUri"]))
        else:
            raise Violation(f"{where}: a part holds exactly one of text/inlineData/fileData")
    gen = body.get("generationConfig") or {}
    if gen.get("responseMimeType") != "application/json":
        raise Violation("generationConfig.responseMimeType must be application/json")
    return {"system": system, "parts": parts}


class FakeProvider:
    def __init__(self, latency_s: float = 0.0, stall_s: float = 30.0, retry_after: str = "1"):
        self.latency_s = latency_s
        self.stall_s = stall_s
        self.retry_after = retry_after
        self.reply_fn = None
        # a hostile/buggy provider echoing the caller's credential in successful
        # answers: in the answer text, a JSON field, a response header and cut short
        self.echo_credential = False
        self.outage = None  # callable(prompt text, trace) -> True: answer HTTP 500
        # callable(credential) -> the outage's error message (a provider echoing the
        # caller's key, in any encoding, in an error body); None: "outage"
        self.outage_message = None
        self.requests = 0  # every HTTP request received
        self.answered = 0  # 200 answers fully written
        self.attempts: Counter[str] = Counter()  # body sha256 -> times seen
        self.answered_bodies: Counter[str] = Counter()
        self.traces: list[dict[str, Any]] = []
        self.violations: list[str] = []
        self.headers_seen: list[dict[str, str]] = []
        self.files: dict[str, str] = {}  # uri -> sha256 of uploaded bytes
        self.aws_secret: str | None = None  # set: Bedrock SigV4 signatures are verified
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # ---------- lifecycle ----------
    def start(self) -> FakeProvider:
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=512))
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop:
            async def shutdown() -> None:
                self._server.close()
                tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

            asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(5)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---------- HTTP ----------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                keep = await self._dispatch(method, path, headers, body, writer)
                if not keep:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            try:
                writer.close()
            except Exception:
                pass

    async def _send(self, writer, status: int, payload: Any, extra: dict | None = None,
                    raw: bytes | None = None, truncate: bool = False) -> bool:
        data = raw if raw is not None else json.dumps(payload).encode()
        reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
                  404: "Not Found",
                  429: "Too Many Requests", 500: "Internal Server Error"}.get(status, "X")
        hdrs = {"Content-Type": "application/json", "Content-Length": str(len(data))}
        hdrs.update(extra or {})
        head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items())
        if truncate:
            writer.write(head.encode() + b"\r\n" + data[: len(data) // 2])
            await writer.drain()
            return False
        writer.write(head.encode() + b"\r\n" + data)
        await writer.drain()
        return True

    async def _dispatch(self, method, path, headers, body, writer) -> bool:
        with self._lock:
            self.requests += 1
            self.headers_seen.append(dict(headers))
        if path.startswith("/upload/v1beta/files"):
            return await self._upload_start(headers, writer)
        if path.startswith("/upload/session/"):
            return await self._upload_finish(path, headers, body, writer)
        try:
            payload = json.loads(body)
        except ValueError:
            return await self._bad(writer, "request body is not JSON")
        try:
            if path.endswith("/chat/completions"):
                compatible = str(payload.get("model", "")).startswith("compat")
                if not compatible and not headers.get("authorization", "").startswith("Bearer "):
                    raise Violation("missing Authorization: Bearer header")
                trace = check_openai(payload, compatible)
                provider = "openai"
            elif re.search(r"/v1beta/models/[\w.\-]+:generateContent$", path):
                if not headers.get("x-goog-api-key"):
                    raise Violation("missing x-goog-api-key header")
                trace = check_gemini(payload)
                provider = "gemini"
            elif re.match(r"^/model/[\w.\-%:]+/converse$", path):
                auth = headers.get("authorization", "")
                if not SIGV4.match(auth) or not headers.get("x-amz-date"):
                    raise Violation("missing or malformed SigV4 Authorization header")
                if self.aws_secret is not None:
                    verify_sigv4(method, path, headers, body, self.aws_secret)
                trace = check_bedrock(payload)
                trace["model"] = path.split("/")[2]
                provider = "bedrock"
            else:
                return await self._send(writer, 404, {"error": {"message": f"no route {path}"}})
        except Violation as exc:
            return await self._bad(writer, str(exc))
        text = "\n".join([trace["system"] or ""] + [v for k, v in trace["parts"] if k == "text"])
        digest = hashlib.sha256(body).hexdigest()
        with self._lock:
            self.attempts[digest] += 1
            attempt = self.attempts[digest]
            self.traces.append({"provider": provider, "attempt": attempt, "digest": digest, **trace})
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        outage = self.outage
        if outage is not None and outage(text, trace):
            cred = (headers.get("authorization") or headers.get("x-goog-api-key") or "")
            message = (self.outage_message(cred.removeprefix("Bearer "))
                       if self.outage_message else "outage")
            return await self._send(writer, 500, {"error": {"message": message}})
        faults = FAULTS.search(text)
        plan = faults.group(1).split(",") if faults else []
        fault = plan[attempt - 1] if attempt <= len(plan) else None
        always = ALWAYS.search(text)
        mode = always.group(1) if always else None
        if provider == "bedrock" and fault in ("429", "500", "validation"):
            status, code = {"429": (429, "ThrottlingException"),
                            "500": (500, "InternalServerException"),
                            "validation": (400, "ValidationException")}[fault]
            return await self._send(writer, status, {"message": f"{code} (fake)"},
                                    {"x-amzn-ErrorType": f"{code}:http://internal.amazon.com/"})
        if fault == "429":
            return await self._send(writer, 429, {"error": {"message": "rate limited"}},
                                    {"Retry-After": self.retry_after})
        if fault == "500":
            return await self._send(writer, 500, {"error": {"message": "server error"}})
        if fault == "echoauth":  # a hostile/buggy provider echoing the credential back
            cred = headers.get("authorization") or headers.get("x-goog-api-key") or ""
            if provider == "bedrock":
                return await self._send(writer, 403, {"message": f"invalid signature {cred}"},
                                        {"x-amzn-ErrorType": "AccessDeniedException"})
            return await self._send(writer, 401, {"error": {"message": f"invalid key {cred}"}})
        if fault == "stall":
            await asyncio.sleep(self.stall_s)
            return False
        if fault == "badjson":
            return await self._send(writer, 200, None, raw=b'{"choices": [ {"message": '
                                    if provider != "bedrock" else b'{"output": {"message": ')
        if fault == "truncated":
            return await self._send(writer, 200, self._answer(provider, payload, text, None),
                                    truncate=True)
        answer = self._answer(provider, payload, text, mode)
        extra = None
        if self.echo_credential:
            cred = (headers.get("authorization") or headers.get("x-goog-api-key") or "")
            cred = cred.removeprefix("Bearer ")
            answer = self._echo(answer, cred)
            extra = {"X-Echo-Key": cred}
        ok = await self._send(writer, 200, answer, extra)
        with self._lock:
            self.answered += 1
            self.answered_bodies[digest] += 1
        return ok

    async def _bad(self, writer, message: str) -> bool:
        with self._lock:
            self.violations.append(message)
        # the OpenAI/Gemini error body, plus Bedrock's `message` + error-type header
        return await self._send(writer, 400, {"error": {"message": message}, "message": message},
                                {"x-amzn-ErrorType": "ValidationException"})

    def _answer(self, provider: str, payload: dict, text: str, mode: str | None) -> dict:
        if self.reply_fn is not None:
            content = self.reply_fn(text)
        else:
            m = SAY.search(text)
            content = json.dumps({"label": m.group(1) if m else "A"})
        refusal = mode == "refusal"
        if mode == "garbage":
            content = "I think it is {label: happy"
        elif mode == "empty":
            content = ""
        if provider == "bedrock":
            stop = "end_turn"
            if refusal:  # a guardrail's canned answer, as Converse returns it
                content, stop = "Sorry, the model cannot answer this question.", "guardrail_intervened"
            return {"output": {"message": {"role": "assistant", "content": [{"text": content}]}},
                    "stopReason": stop, "metrics": {"latencyMs": 12},
                    "usage": {"inputTokens": 100, "outputTokens": 8, "totalTokens": 108}}
        if provider == "openai":
            message = {"role": "assistant", "content": None if refusal else content}
            if refusal:
                message["refusal"] = "I'm sorry, I can't help with that."
            return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                    "model": payload["model"] + "-served",
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 8, "total_tokens": 108}}
        if refusal:
            return {"candidates": [{"finishReason": "SAFETY", "content": {"parts": [], "role": "model"}}],
                    "modelVersion": "gemini-fake-001"}
        return {"candidates": [{"content": {"parts": [{"text": content}], "role": "model"},
                                "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 8,
                                  "totalTokenCount": 108},
                "modelVersion": "gemini-fake-001"}

    @staticmethod
    def _echo(answer: dict, cred: str) -> dict:
        """`answer` with the credential planted where a provider could echo it."""
        planted = f" (request signed with {cred}; key id {cred[:12]})"
        if "choices" in answer:
            msg = answer["choices"][0]["message"]
            if msg.get("content") is not None:
                body = json.loads(msg["content"]) if msg["content"].startswith("{") else {}
                body["note"] = "echo" + planted
                msg["content"] = json.dumps(body)
            answer["model"] = answer["model"] + "+" + cred
            answer["system_fingerprint"] = cred[-10:]
        else:
            for cand in answer.get("candidates", []):
                for part in cand.get("content", {}).get("parts", []):
                    part["text"] = part["text"] + planted
            answer["modelVersion"] = answer["modelVersion"] + "+" + cred
        return answer

    async def _upload_start(self, headers, writer) -> bool:
        if headers.get("x-goog-upload-protocol") != "resumable" or \
                headers.get("x-goog-upload-command") != "start" or not headers.get("x-goog-api-key"):
            return await self._bad(writer, "Files API start: resumable protocol headers missing")
        sid = f"s{len(self.files) + self.requests}"
        return await self._send(writer, 200, {}, {
            "X-Goog-Upload-URL": f"{self.url}/upload/session/{sid}",
            "X-Goog-Upload-Status": "active"})

    async def _upload_finish(self, path, headers, body, writer) -> bool:
        if headers.get("x-goog-upload-command") != "upload, finalize":
            return await self._bad(writer, "Files API upload: expected 'upload, finalize'")
        if body[:4] != b"RIFF":
            return await self._bad(writer, "Files API upload: body is not WAV")
        uri = f"{self.url}/v1beta/files/{path.rsplit('/', 1)[1]}"
        with self._lock:
            self.files[uri] = hashlib.sha256(body).hexdigest()
        return await self._send(writer, 200, {"file": {"name": "files/x", "uri": uri,
                                                        "mimeType": "audio/wav", "state": "ACTIVE"}})


def tone_wav(freq: float = 440.0, seconds: float = 0.2, sr: int = 16000, amp: float = 0.3) -> bytes:
    """A small mono int16 WAV for tests."""
    import io
    import wave

    import numpy as np

    t = np.arange(int(seconds * sr)) / sr
    pcm = np.round(amp * 32767 * np.sin(2 * np.pi * freq * t)).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sr)
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


def main() -> None:
    """Run the fake provider in its own process (benchmarks): prints its URL."""
    import argparse
    import sys

    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.0)
    args = ap.parse_args()
    srv = FakeProvider(latency_s=args.latency).start()
    print(srv.url, flush=True)
    try:
        sys.stdin.read()  # until the parent closes our stdin
    finally:
        srv.stop()


if __name__ == "__main__":
    main()

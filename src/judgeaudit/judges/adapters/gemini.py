"""Gemini `generateContent` over aiohttp (the REST API the google-genai SDK wraps).

POST {base_url}/v1beta/models/{model}:generateContent, header `x-goog-api-key: $KEY`:
  {"systemInstruction": {"parts": [{"text": <system>}]},       # system placement "system"
   "contents": [{"role": "user", "parts": [
       {"text": ...},
       {"inlineData": {"mimeType": "audio/wav", "data": <base64>}},   # inline
       {"fileData": {"mimeType": "audio/wav", "fileUri": <uri>}}]}],  # Files API
   "generationConfig": {"temperature": ..., "maxOutputTokens": ...,
                        "responseMimeType": "application/json",
                        "responseSchema": {"type": "OBJECT", ...}}}
Audio goes inline unless the request's base64 audio exceeds `inline_limit_bytes`
(the API's 20 MB request limit by default); then each clip is uploaded once per
process with the resumable Files API (`POST {base_url}/upload/v1beta/files`,
start + "upload, finalize") and referenced by URI.
"""

from __future__ import annotations

import base64
from typing import Any, ClassVar

from judgeaudit.judges.adapters.base import HTTPAdapter, Reply, TransientError
from judgeaudit.judges.request import AnswerSpec, LoadedRequest, TextPart

MIME = {"wav": "audio/wav", "mp3": "audio/mp3", "flac": "audio/flac"}
REFUSAL_FINISH = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION"}


def response_schema(answer: AnswerSpec) -> dict[str, Any]:
    """The OpenAPI-subset schema Gemini's `responseSchema` takes."""
    props: dict[str, Any] = {answer.key: {"type": "STRING", "enum": list(answer.allowed)}}
    order = [answer.key]
    if answer.reasoning:
        props = {"reasoning": {"type": "STRING"}, **props}
        order = ["reasoning", answer.key]
    return {"type": "OBJECT", "properties": props, "required": order, "propertyOrdering": order}


class GeminiAdapter(HTTPAdapter):
    provider = "gemini"
    AUDIO_TOKENS_PER_S = 32.0  # "each second of audio is represented as 32 tokens"
    DEFAULT_KEY_ENV = "GEMINI_API_KEY"
    DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
    OUTPUT_FIELDS: ClassVar[tuple[str, ...]] = (
        "model", "system_placement", "response_schema", "max_output_tokens",
    )
    DEFAULTS: ClassVar[dict[str, Any]] = {
        "system_placement": "system", "response_schema": True, "max_output_tokens": None,
        "inline_limit_bytes": 20_000_000,
    }

    def __init__(self, name: str, spec: dict[str, Any]):
        spec = {**self.DEFAULTS, **{k: v for k, v in spec.items() if v is not None}}
        super().__init__(name, spec)
        if not spec.get("model"):
            raise ValueError(f"judge {name}: 'model' (a pinned model id) is required")
        self._uploaded: dict[str, str] = {}

    @property
    def base(self) -> str:
        return (self.spec.get("base_url") or self.DEFAULT_BASE_URL).rstrip("/")

    def headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.api_key()}

    def needs_upload(self, loaded: LoadedRequest) -> bool:
        total = sum(len(b) for b in loaded.audio.values()) * 4 // 3
        return total > int(self.spec["inline_limit_bytes"])

    async def upload(self, data: bytes, mime: str, sha: str) -> str:
        if sha in self._uploaded:
            return self._uploaded[sha]
        from judgeaudit.judges.limits import parse_retry_after

        headers = {
            "x-goog-api-key": self.api_key(),
            "X-Goog-Upload-Protocol": "resumable",
            "X-Goog-Upload-Command": "start",
            "X-Goog-Upload-Header-Content-Length": str(len(data)),
            "X-Goog-Upload-Header-Content-Type": mime,
        }
        status, hdrs, content = await self.post(
            f"{self.base}/upload/v1beta/files", headers, json_body={"file": {"display_name": sha[:40]}})
        url = hdrs.get("x-goog-upload-url")
        if status >= 300 or not url:
            self._decode(status, hdrs, content, parse_retry_after)
            raise TransientError("Files API start returned no upload URL")
        done = await self.post(url, {
            "x-goog-api-key": self.api_key(), "X-Goog-Upload-Offset": "0",
            "X-Goog-Upload-Command": "upload, finalize"}, data=data)
        body = self._decode(*done, parse_retry_after)
        uri = (body.get("file") or {}).get("uri")
        if not uri:
            raise TransientError("Files API upload returned no file uri")
        self._uploaded[sha] = uri
        return uri

    async def build_body(self, loaded: LoadedRequest) -> dict[str, Any]:
        req = loaded.request
        parts_in = list(req.parts)
        body: dict[str, Any] = {}
        if req.system:
            if self.spec["system_placement"] == "user_prefix":
                parts_in = [TextPart(req.system), *parts_in]
            else:
                body["systemInstruction"] = {"parts": [{"text": req.system}]}
        upload = self.needs_upload(loaded)
        parts: list[dict[str, Any]] = []
        for part in parts_in:
            if part.kind == "text":
                parts.append({"text": part.text})
                continue
            mime = MIME.get(part.format, f"audio/{part.format}")
            data = loaded.audio_bytes(part)
            if upload:
                uri = await self.upload(data, mime, part.sha256)
                parts.append({"fileData": {"mimeType": mime, "fileUri": uri}})
            else:
                parts.append({"inlineData": {"mimeType": mime,
                                             "data": base64.b64encode(data).decode("ascii")}})
        body["contents"] = [{"role": "user", "parts": parts}]
        gen = req.generation_dict()
        config: dict[str, Any] = {"responseMimeType": "application/json"}
        for src, dst in (("temperature", "temperature"), ("top_p", "topP"), ("seed", "seed")):
            if src in gen:
                config[dst] = gen[src]
        max_out = gen.get("max_tokens", self.spec.get("max_output_tokens"))
        if max_out:
            config["maxOutputTokens"] = int(max_out)
        if self.spec["response_schema"]:
            config["responseSchema"] = response_schema(req.answer)
        body["generationConfig"] = config
        return body

    async def complete(self, loaded: LoadedRequest) -> Reply:
        url = f"{self.base}/v1beta/models/{self.spec['model']}:generateContent"
        data = await self.post_json(url, self.headers(), await self.build_body(loaded))
        usage_meta = data.get("usageMetadata") or {}
        usage = {k: v for k, v in usage_meta.items() if isinstance(v, int)}
        version = data.get("modelVersion")
        feedback = data.get("promptFeedback") or {}
        candidates = data.get("candidates")
        if feedback.get("blockReason") and not candidates:
            return Reply(None, True, usage, version)
        if not isinstance(candidates, list) or not candidates:
            raise TransientError("provider body has no candidates")
        cand = candidates[0] if isinstance(candidates[0], dict) else {}
        parts = (cand.get("content") or {}).get("parts") or []
        text = "".join(p.get("text", "") for p in parts
                       if isinstance(p, dict) and not p.get("thought"))
        refusal = cand.get("finishReason") in REFUSAL_FINISH and not text.strip()
        return Reply(text or None, refusal, usage, version)

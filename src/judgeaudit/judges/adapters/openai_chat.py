"""OpenAI Chat Completions (`openai`) and OpenAI-compatible servers such as vLLM
(`openai_compatible`), over aiohttp.

Request body (POST {base_url}/chat/completions, `Authorization: Bearer $KEY`):
  {"model": <pinned id>, "modalities": ["text"],            # openai only
   "messages": [{"role": "system", "content": <system>},     # system placement "system"
                {"role": "user", "content": [
                   {"type": "text", "text": ...},
                   {"type": "input_audio", "input_audio": {"data": <base64 WAV>, "format": "wav"}},
                   # or, audio_transport "audio_url" (vLLM):
                   {"type": "audio_url", "audio_url": {"url": "data:audio/wav;base64,..."}}]}],
   "temperature": ..., "max_completion_tokens" | "max_tokens": ...,
   "response_format": {"type": "json_schema", ...}}          # only if enabled
The user parts keep the request's order. With `system_placement: user_prefix`
the system text becomes the first user text part (models without a system role).
"""

from __future__ import annotations

import base64
from typing import Any, ClassVar

from judgeaudit.judges.adapters.base import HTTPAdapter, Reply, TransientError
from judgeaudit.judges.request import LoadedRequest, TextPart

MIME = {"wav": "audio/wav", "mp3": "audio/mpeg", "flac": "audio/flac"}


class OpenAIChatAdapter(HTTPAdapter):
    provider = "openai"
    DEFAULT_KEY_ENV = "OPENAI_API_KEY"
    DEFAULT_BASE_URL = "https://api.openai.com/v1"
    OUTPUT_FIELDS: ClassVar[tuple[str, ...]] = (
        "model", "system_placement", "system_role", "response_format",
        "max_output_tokens", "audio_transport",
    )
    DEFAULTS: ClassVar[dict[str, Any]] = {
        "system_placement": "system", "system_role": "system", "response_format": "none",
        "audio_transport": "input_audio", "max_output_tokens": None,
    }
    MAX_TOKENS_FIELD = "max_completion_tokens"
    SEND_MODALITIES = True

    def __init__(self, name: str, spec: dict[str, Any]):
        spec = {**self.DEFAULTS, **{k: v for k, v in spec.items() if v is not None}}
        super().__init__(name, spec)
        if not spec.get("model"):
            raise ValueError(f"judge {name}: 'model' (a pinned, dated model id) is required")

    def build_body(self, loaded: LoadedRequest) -> dict[str, Any]:
        req = loaded.request
        parts = list(req.parts)
        messages: list[dict[str, Any]] = []
        if req.system:
            if self.spec["system_placement"] == "user_prefix":
                parts = [TextPart(req.system), *parts]
            else:
                messages.append({"role": self.spec["system_role"], "content": req.system})
        content: list[dict[str, Any]] = []
        for part in parts:
            if part.kind == "text":
                content.append({"type": "text", "text": part.text})
                continue
            b64 = base64.b64encode(loaded.audio_bytes(part)).decode("ascii")
            if self.spec["audio_transport"] == "audio_url":
                mime = MIME.get(part.format, f"audio/{part.format}")
                content.append({"type": "audio_url",
                                "audio_url": {"url": f"data:{mime};base64,{b64}"}})
            else:
                content.append({"type": "input_audio",
                                "input_audio": {"data": b64, "format": part.format}})
        messages.append({"role": "user", "content": content})
        body: dict[str, Any] = {"model": self.spec["model"], "messages": messages}
        if self.SEND_MODALITIES:
            body["modalities"] = ["text"]
        gen = req.generation_dict()
        for key in ("temperature", "top_p", "seed"):
            if key in gen:
                body[key] = gen[key]
        max_out = gen.get("max_tokens", self.spec.get("max_output_tokens"))
        if max_out:
            body[self.MAX_TOKENS_FIELD] = int(max_out)
        fmt = self.spec["response_format"]
        if fmt == "json_object":
            body["response_format"] = {"type": "json_object"}
        elif fmt == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "judgement", "strict": True, "schema": req.answer.json_schema()}}
        return body

    async def complete(self, loaded: LoadedRequest) -> Reply:
        base = (self.spec.get("base_url") or self.DEFAULT_BASE_URL).rstrip("/")
        headers: dict[str, str] = {}
        key = self.api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        data = await self.post_json(f"{base}/chat/completions", headers, self.build_body(loaded))
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise TransientError("provider body has no choices")
        message = choices[0].get("message") or {}
        text = message.get("content")
        if isinstance(text, list):  # some servers return content parts
            text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
        refusal = bool(message.get("refusal")) or choices[0].get("finish_reason") == "content_filter"
        raw = text if text is not None else (message.get("refusal") or None)
        usage = {k: v for k, v in (data.get("usage") or {}).items() if isinstance(v, int)}
        return Reply(raw, refusal, usage, data.get("model"))


class OpenAICompatibleAdapter(OpenAIChatAdapter):
    """vLLM & co. (Qwen2.5/3-Omni, Voxtral, Audio-Flamingo-3, Qwen2-Audio).
    `max_audio_inputs` (default 1) makes two-audio "native" requests `unsupported`."""

    provider = "openai_compatible"
    DEFAULT_KEY_ENV = "OPENAI_COMPATIBLE_API_KEY"
    DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
    DEFAULTS: ClassVar[dict[str, Any]] = {
        **OpenAIChatAdapter.DEFAULTS, "audio_transport": "audio_url", "max_audio_inputs": 1,
        "allow_no_key": True,
    }
    OUTPUT_FIELDS = (*OpenAIChatAdapter.OUTPUT_FIELDS, "max_audio_inputs")
    MAX_TOKENS_FIELD = "max_tokens"
    SEND_MODALITIES = False

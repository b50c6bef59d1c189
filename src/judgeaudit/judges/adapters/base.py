"""The adapter interface every judge implements (API providers and embedded judges)
and the error types the engine's retry loop understands. The registry of adapter
classes is the package's (`judgeaudit.judges.adapters`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, ClassVar

from judgeaudit.judges.request import LoadedRequest, Request


@dataclass
class Reply:
    """What came back: raw text plus the provider's own signals."""

    raw_text: str | None
    refusal: bool = False
    usage: dict[str, Any] = field(default_factory=dict)
    model_version: str | None = None


class TransientError(Exception):
    """Worth retrying (5xx, 429, timeout, broken or malformed body)."""

    def __init__(self, reason: str, retry_after: float | None = None, rate_limited: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.rate_limited = rate_limited


class PermanentError(Exception):
    """Not worth retrying (400/401/403/404, bad configuration)."""


class MissingKeyError(PermanentError):
    pass


class Adapter:
    """One judge = one adapter instance. Subclasses set `provider`, list the settings
    that change outputs in `OUTPUT_FIELDS` (they enter the fingerprint, hence the
    cache key) and implement `complete`."""

    provider: ClassVar[str] = ""
    OUTPUT_FIELDS: ClassVar[tuple[str, ...]] = ("model",)
    blocking: ClassVar[bool] = False  # True: `complete_sync` runs in a worker thread
    # audio input tokens per second the provider documents (OpenAI: 1 token / 100 ms)
    AUDIO_TOKENS_PER_S: ClassVar[float] = 10.0
    # roles (see judgeaudit.judges.adapters.providers): an API judge that charges; an
    # embedded judge that runs the specialists on the audio; one whose behaviour is
    # known by construction (a control)
    ROLES: ClassVar[tuple[str, ...]] = ("paid", "perceives", "control")
    paid: ClassVar[bool] = False
    perceives: ClassVar[bool] = False
    control: ClassVar[bool] = False

    def __init__(self, name: str, spec: dict[str, Any]):
        self.name = name
        self.spec = dict(spec)

    # --- identity ---
    def fingerprint_fields(self) -> dict[str, Any]:
        return {k: self.spec.get(k) for k in self.OUTPUT_FIELDS}

    @property
    def max_audio_inputs(self) -> int | None:
        return self.spec.get("max_audio_inputs")

    def unsupported_reason(self, request: Request) -> str | None:
        limit = self.max_audio_inputs
        if limit is not None and request.n_audio > limit:
            return f"{self.name} accepts at most {limit} audio input(s); request has {request.n_audio}"
        return None

    # --- cost estimate (pre-flight) ---
    def estimate_tokens(self, request: Request, audio_seconds: float) -> tuple[int, int]:
        text_chars = sum(len(p.text) for p in request.parts if p.kind == "text")
        text_chars += len(request.system or "")
        rate = self.spec.get("audio_tokens_per_s")
        rate = self.AUDIO_TOKENS_PER_S if rate is None else float(rate)
        tokens_in = int(text_chars / 4 + audio_seconds * rate)
        tokens_out = int(self.spec.get("expected_output_tokens", 60))
        return tokens_in, tokens_out

    def estimate_cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * float(self.spec.get("price_in_per_mtok", 0.0))
                + tokens_out * float(self.spec.get("price_out_per_mtok", 0.0))) / 1e6

    # --- calls ---
    async def complete(self, loaded: LoadedRequest) -> Reply:
        return self.complete_sync(loaded)

    def complete_sync(self, loaded: LoadedRequest) -> Reply:
        raise NotImplementedError

    async def aclose(self) -> None:
        return None

    def redact(self, text: str) -> str:
        return text


# Shortest run of a secret's characters that is masked wherever it appears: a provider
# may echo a key cut short (a truncated echo, a prefix in an error id), and 8
# characters of a random key are already too many to leak.
SECRET_FRAGMENT = 8


def redact_secret(text: str, secret: str, fragment: int = SECRET_FRAGMENT) -> str:
    """`text` with every run of `fragment` or more consecutive characters of `secret`
    (the whole secret included) replaced by `***`."""
    if not text or not secret or len(secret) < 4:
        return text
    if len(secret) <= fragment:
        return text.replace(secret, "***")
    grams = {secret[i:i + fragment] for i in range(len(secret) - fragment + 1)}
    hit = [False] * len(text)
    for i in range(len(text) - fragment + 1):
        if text[i:i + fragment] in grams:
            for j in range(i, i + fragment):
                hit[j] = True
    if not any(hit):
        return text
    out, i = [], 0
    while i < len(text):
        if hit[i]:
            while i < len(text) and hit[i]:
                i += 1
            out.append("***")
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def redact_value(value: Any, redact) -> Any:
    """A JSON-like value with `redact` applied to every string in it (keys included)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact_value(v, redact)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v, redact) for v in value]
    return value


class HTTPAdapter(Adapter):
    """Shared plumbing for HTTP providers: API key from the environment only, one
    pooled aiohttp session, status-code classification, secret redaction."""

    paid = True
    DEFAULT_KEY_ENV: ClassVar[str] = ""

    def __init__(self, name: str, spec: dict[str, Any]):
        super().__init__(name, spec)
        self._client = None

    def api_key(self) -> str:
        env = self.spec.get("api_key_env") or self.DEFAULT_KEY_ENV
        key = os.environ.get(env, "") if env else ""
        if not key and not self.spec.get("allow_no_key", False):
            raise MissingKeyError(
                f"judge {self.name}: environment variable {env} is not set "
                f"(API keys are read only from the environment)"
            )
        return key

    def redact(self, text: str) -> str:
        env = self.spec.get("api_key_env") or self.DEFAULT_KEY_ENV
        key = os.environ.get(env, "") if env else ""
        return redact_secret(text, key)

    def client(self):
        """One pooled aiohttp session per adapter (created inside the running loop).
        aiohttp rather than httpx: httpcore's pool bookkeeping costs O(connections)
        per request and capped throughput at ~0.3 of the bound at concurrency 32."""
        if self._client is None:
            import aiohttp

            conc = int(self.spec.get("concurrency", 8))
            self._client = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=float(self.spec.get("timeout_s", 120.0)),
                                              connect=10.0),
                connector=aiohttp.TCPConnector(limit=conc + 4, ttl_dns_cache=300),
                trust_env=False,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def post(self, url: str, headers: dict[str, str], json_body: Any = None,
                   data: bytes | None = None) -> tuple[int, Any, bytes]:
        """POST; returns (status, headers, body bytes). Transport failures (timeouts,
        resets, truncated bodies) become TransientError; the message never holds
        request headers."""
        import aiohttp

        try:
            if json_body is not None:
                from judgeaudit.io import canonical_json

                data = canonical_json(json_body).encode("utf-8")
                headers = {**headers, "Content-Type": "application/json"}
            async with self.client().post(url, data=data, headers=headers) as resp:
                content = await resp.read()
                return resp.status, resp.headers, content
        except TimeoutError:
            raise TransientError("timeout (no complete response in time)") from None
        except aiohttp.ClientError as exc:
            raise TransientError(self.redact(f"transport: {type(exc).__name__}: {exc}")) from None

    async def post_json(self, url: str, headers: dict[str, str], body: dict[str, Any]) -> dict:
        """POST and return the decoded JSON body, mapping failures to the retry classes."""
        from judgeaudit.judges.limits import parse_retry_after

        status, hdrs, content = await self.post(url, headers, json_body=body)
        return self._decode(status, hdrs, content, parse_retry_after)

    def _decode(self, status: int, headers, content: bytes, parse_retry_after) -> dict:
        import json

        # redact the whole body first, then cut: a key straddling the cut must not
        # leave its first characters behind
        snippet = self.redact(content.decode("utf-8", "replace"))[:300]
        if status == 429:
            raise TransientError(
                f"HTTP 429: {snippet}", parse_retry_after(headers.get("retry-after")), True
            )
        if status in (408, 409) or status >= 500:
            raise TransientError(
                f"HTTP {status}: {snippet}", parse_retry_after(headers.get("retry-after"))
            )
        if status >= 400:
            raise PermanentError(f"HTTP {status}: {snippet}")
        try:
            data = json.loads(content)
        except ValueError:
            raise TransientError(f"malformed JSON body from provider: {snippet[:120]!r}") from None
        if not isinstance(data, dict):
            raise TransientError("provider body is not a JSON object")
        return data

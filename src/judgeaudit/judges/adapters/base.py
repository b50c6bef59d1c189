"""The adapter interface every judge implements (API providers and embedded judges)
and the error types the engine's retry loop understands. The registry of adapter
classes is the package's (`judgeaudit.judges.adapters`)."""

from __future__ import annotations

import base64
import functools
import os
import re
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
    # False: no reply at all (a python judge's None): counted `empty`, never cached
    final: bool = True


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
    # True: `complete_sync` runs in a worker thread abandoned after timeout_s (the
    # event loop and the lease heartbeat go on meanwhile)
    abandonable: ClassVar[bool] = False
    blocking: ClassVar[bool] = False  # True: `complete_sync` runs in a worker thread
    # audio input tokens per second the provider documents (OpenAI: 1 token / 100 ms)
    AUDIO_TOKENS_PER_S: ClassVar[float] = 10.0
    # roles (see judgeaudit.judges.adapters.providers): an API judge that charges; an
    # embedded judge that runs the specialists on the audio; one whose behaviour is
    # known by construction (a control); a built-in embedded judge (not an
    # audio-language model)
    ROLES: ClassVar[tuple[str, ...]] = ("paid", "perceives", "control", "embedded")
    paid: ClassVar[bool] = False
    perceives: ClassVar[bool] = False
    control: ClassVar[bool] = False
    embedded: ClassVar[bool] = False

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
    (the whole secret included) replaced by `***`, in plain text and in the encodings
    a provider may echo it in: JSON/Python escapes (`\\u0073`, `\\x73`), URL encoding
    (`%73`), HTML character references (`&#115;`, `&#x73;`), mixed with plain
    characters or not, and base64 (standard or URL-safe, at any alignment, also of
    the decoded escapes). An escape is masked whole; a base64 run holding a piece of
    the secret is masked whole."""
    if not text or not secret or len(secret) < 4:
        return text
    frag = min(fragment, len(secret))
    grams = sorted({secret[i:i + frag] for i in range(len(secret) - frag + 1)})
    finder = _gram_finder(tuple(grams))
    # each layer of escapes decoded in turn (an escaped escape: `\\u0073`), every
    # layer searched; hits are marked in the original text's positions
    mask = bytearray(len(text))
    layer, spans = text, None  # spans: layer position -> original span (None: same)
    for depth in range(_LAYERS + 1):
        for m in finder.finditer(layer):
            _mark(mask, spans, m.start(), m.start() + frag)
        for m in _B64_RUN.finditer(layer):
            if _b64_holds(m.group(0), finder):
                _mark(mask, spans, m.start(), m.end())
        if depth == _LAYERS:
            break
        decoded, inner = _decoded_view(layer)
        if inner is None:
            break
        spans = inner if spans is None else [(spans[a][0], spans[b - 1][1]) for a, b in inner]
        layer = decoded
    if not any(mask):
        return text
    spans = _Identity(len(text))
    out, pos, k = [], 0, 0
    while k < len(spans):
        if mask[k]:
            start = spans[k][0]
            while k < len(spans) and mask[k]:
                k += 1
            out.append(text[pos:start])
            out.append("***")
            pos = spans[k - 1][1]
        else:
            k += 1
    out.append(text[pos:])
    return "".join(out)


_LAYERS = 4  # escape layers decoded (a key escaped thrice over is still found)


def _mark(mask: bytearray, spans, a: int, b: int) -> None:
    """Mark the original characters behind layer positions [a, b)."""
    if spans is None:
        mask[a:b] = b"\x01" * (b - a)
        return
    for k in range(a, b):
        lo, hi = spans[k]
        mask[lo:hi] = b"\x01" * (hi - lo)


# one escape unit: \\uXXXX, \\xXX, %XX, &#NNN; / &#xHH;, or a JSON backslash escape
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|%([0-9a-fA-F]{2})"
                     r"|&#[xX]([0-9a-fA-F]{1,6});|&#([0-9]{1,7});|\\([\\/\"'])")
_B64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{8,}={0,2}")


@functools.lru_cache(maxsize=64)
def _gram_finder(grams: tuple[str, ...]) -> re.Pattern:
    """Every (overlapping) start of any gram: a lookahead alternation, run in C."""
    return re.compile("(?=(" + "|".join(re.escape(g) for g in grams) + "))")


class _Identity:
    """The spans of a text without escapes: character i came from [i, i + 1)."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> tuple[int, int]:
        return (i, i + 1)


def _decoded_view(text: str) -> tuple[str, list[tuple[int, int]] | None]:
    """`text` with its escape units decoded, and per decoded character the span of
    `text` it came from (None: no escape, the text itself)."""
    if not any(c in text for c in "\\%&"):
        return text, None
    chars: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _ESCAPE.finditer(text):
        for i in range(pos, m.start()):
            chars.append(text[i])
            spans.append((i, i + 1))
        u, x, pct, hx, dec, lit = m.groups()
        code = int(u or x or pct or hx, 16) if (u or x or pct or hx) else (
            int(dec) if dec else None)
        try:
            ch = lit if lit else chr(code)
        except (ValueError, OverflowError):
            ch = "\ufffd"
        chars.append(ch)
        spans.append((m.start(), m.end()))
        pos = m.end()
    for i in range(pos, len(text)):
        chars.append(text[i])
        spans.append((i, i + 1))
    return "".join(chars), spans


def _b64_holds(run: str, finder: re.Pattern) -> bool:
    """Whether a base64-alphabet run decodes (at some alignment, standard or URL-safe
    alphabet) to bytes holding a piece of the secret."""
    body = run.rstrip("=")
    for shift in range(4):
        chunk = body[shift:]
        chunk = chunk[: len(chunk) - len(chunk) % 4]
        if len(chunk) < 8:
            break
        try:  # the URL-safe alphabet read as the standard one
            raw = base64.b64decode(chunk.replace("-", "+").replace("_", "/"), validate=True)
        except ValueError:
            continue
        if finder.search(raw.decode("latin-1")):
            return True
    return False


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
        # (of its first 4 KB: the snippet keeps 300 characters)
        snippet = self.redact(content[:4096].decode("utf-8", "replace"))[:300]
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

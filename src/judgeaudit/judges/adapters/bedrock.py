"""Amazon Bedrock Converse API (`bedrock`), through boto3 (the optional `bedrock` extra),
imported only when the first call is made.

boto3 `bedrock-runtime` `converse(...)` = POST {endpoint}/model/{modelId}/converse,
SigV4-signed, REST-JSON (blobs travel base64-encoded in the JSON body):
  {"modelId": <pinned id>,
   "system": [{"text": <system>}],                              # system placement "system"
   "messages": [{"role": "user", "content": [
       {"text": ...},
       {"audio": {"format": "wav", "source": {"bytes": <raw WAV bytes>}}}]}],
   "inferenceConfig": {"maxTokens": ..., "temperature": ..., "topP": ...}}
Reply: {"output": {"message": {"role": "assistant", "content": [{"text": ...}]}},
        "stopReason": "end_turn" | "max_tokens" | "guardrail_intervened" | "content_filtered" | ...,
        "usage": {"inputTokens", "outputTokens", "totalTokens"}}
(API reference: Converse, ContentBlock, AudioBlock, AudioSource, InferenceConfiguration.)

Credentials and region come from the environment only (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, optional AWS_SESSION_TOKEN; AWS_REGION or AWS_DEFAULT_REGION):
they are passed to the client explicitly, so no shared credentials/config file and no
instance metadata is consulted. boto3's own retries are off (total_max_attempts 1): the
engine retries throttling and 5xx with its backoff like every other adapter.
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

from judgeaudit.judges.adapters.base import (
    Adapter,
    MissingKeyError,
    PermanentError,
    Reply,
    TransientError,
)
from judgeaudit.judges.request import LoadedRequest, TextPart

REFUSAL_STOP = {"guardrail_intervened", "content_filtered"}
# Converse error codes worth retrying (the API reference's 429/5xx/408 ones)
THROTTLED = {"ThrottlingException", "ModelNotReadyException", "TooManyRequestsException"}
TRANSIENT = {"InternalServerException", "ServiceUnavailableException", "ModelTimeoutException",
             "ModelErrorException"}
SECRET_ENVS = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID",
               "AWS_BEARER_TOKEN_BEDROCK")


class BedrockConverseAdapter(Adapter):
    provider = "bedrock"
    paid = True
    OUTPUT_FIELDS: ClassVar[tuple[str, ...]] = (
        "model", "system_placement", "max_output_tokens",
    )
    DEFAULTS: ClassVar[dict[str, Any]] = {
        "system_placement": "system", "max_output_tokens": None, "max_audio_inputs": None,
    }

    def __init__(self, name: str, spec: dict[str, Any]):
        spec = {**self.DEFAULTS, **{k: v for k, v in spec.items() if v is not None}}
        super().__init__(name, spec)
        if not spec.get("model"):
            raise ValueError(f"judge {name}: 'model' (a pinned Bedrock model id) is required")
        self._client = None
        self._pool: ThreadPoolExecutor | None = None

    # --- credentials (environment only) ---
    def _region(self) -> str:
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        if not region:
            raise MissingKeyError(f"judge {self.name}: neither AWS_REGION nor AWS_DEFAULT_REGION "
                                  f"is set (the Bedrock region is read only from the environment)")
        return region

    def missing_env(self) -> list[str]:
        """The credential/region variables that are unset (the workflow's key check)."""
        out = [e for e in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") if not os.environ.get(e)]
        if not (os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")):
            out.append("AWS_REGION")
        return out

    def api_key(self) -> str:
        """Checked by the engine before any call: the access key pair must be set."""
        missing = [e for e in self.missing_env() if e != "AWS_REGION"]
        if missing:
            raise MissingKeyError(f"judge {self.name}: environment variable(s) {', '.join(missing)} "
                                  f"not set (AWS credentials are read only from the environment)")
        self._region()
        return os.environ["AWS_ACCESS_KEY_ID"]

    def redact(self, text: str) -> str:
        for env in SECRET_ENVS:
            val = os.environ.get(env, "")
            if val and len(val) >= 4:
                text = text.replace(val, "***")
        return text

    def client(self):
        if self._client is None:
            try:
                import boto3
                from botocore.config import Config
            except ImportError as exc:  # the optional extra is not installed
                raise PermanentError(
                    f"judge {self.name}: provider bedrock needs boto3 "
                    f"(pip install 'judgeaudit[bedrock]')") from exc
            self.api_key()
            conc = int(self.spec.get("concurrency", 8))
            config = Config(
                region_name=self._region(),
                retries={"total_max_attempts": 1, "mode": "standard"},
                connect_timeout=10, read_timeout=float(self.spec.get("timeout_s", 120.0)),
                max_pool_connections=conc + 4,
            )
            self._client = boto3.session.Session().client(
                "bedrock-runtime",
                aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
                aws_session_token=os.environ.get("AWS_SESSION_TOKEN") or None,
                endpoint_url=self.spec.get("base_url") or None,
                config=config,
            )
            self._pool = ThreadPoolExecutor(max_workers=conc, thread_name_prefix=f"bedrock-{self.name}")
        return self._client

    # --- request ---
    def build_request(self, loaded: LoadedRequest) -> dict[str, Any]:
        req = loaded.request
        parts = list(req.parts)
        kwargs: dict[str, Any] = {"modelId": self.spec["model"]}
        if req.system:
            if self.spec["system_placement"] == "user_prefix":
                parts = [TextPart(req.system), *parts]
            else:
                kwargs["system"] = [{"text": req.system}]
        content: list[dict[str, Any]] = []
        for part in parts:
            if part.kind == "text":
                content.append({"text": part.text})
            else:
                content.append({"audio": {"format": part.format,
                                          "source": {"bytes": loaded.audio_bytes(part)}}})
        kwargs["messages"] = [{"role": "user", "content": content}]
        gen = req.generation_dict()
        inference: dict[str, Any] = {}
        for src, dst in (("temperature", "temperature"), ("top_p", "topP")):
            if src in gen:
                inference[dst] = gen[src]
        max_out = gen.get("max_tokens", self.spec.get("max_output_tokens"))
        if max_out:
            inference["maxTokens"] = int(max_out)
        if inference:
            kwargs["inferenceConfig"] = inference
        return kwargs

    def _call(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            ConnectionError,
            ConnectTimeoutError,
            ReadTimeoutError,
        )

        client = self.client()
        try:
            return client.converse(**kwargs)
        except ClientError as exc:
            err = exc.response.get("Error") or {}
            meta = exc.response.get("ResponseMetadata") or {}
            code = str(err.get("Code", ""))
            status = int(meta.get("HTTPStatusCode") or 0)
            msg = self.redact(f"HTTP {status} {code}: {err.get('Message', '')}")[:300]
            retry_after = (meta.get("HTTPHeaders") or {}).get("retry-after")
            from judgeaudit.judges.limits import parse_retry_after

            if code in THROTTLED or status == 429:
                raise TransientError(msg, parse_retry_after(retry_after), True) from None
            if code in TRANSIENT or status in (408, 409) or status >= 500:
                raise TransientError(msg, parse_retry_after(retry_after)) from None
            raise PermanentError(msg) from None
        except (ReadTimeoutError, ConnectTimeoutError):
            raise TransientError("timeout (no complete response in time)") from None
        except ConnectionError as exc:
            raise TransientError(self.redact(f"transport: {type(exc).__name__}: {exc}")) from None
        except BotoCoreError as exc:  # e.g. a malformed body the parser could not read
            name = type(exc).__name__
            if name == "ParamValidationError":
                raise PermanentError(self.redact(f"request rejected by boto3: {exc}")) from None
            raise TransientError(self.redact(f"{name}: {exc}")[:300]) from None

    def parse_reply(self, data: dict[str, Any]) -> Reply:
        usage = {k: v for k, v in (data.get("usage") or {}).items() if isinstance(v, int)}
        message = (data.get("output") or {}).get("message")
        if not isinstance(message, dict):
            raise TransientError("provider body has no output.message")
        text = "".join(b.get("text", "") for b in message.get("content") or []
                       if isinstance(b, dict) and isinstance(b.get("text"), str))
        refusal = data.get("stopReason") in REFUSAL_STOP
        # Converse names no served model version: the pinned id is the identity
        return Reply(text or None, refusal, usage, self.spec["model"])

    async def complete(self, loaded: LoadedRequest) -> Reply:
        kwargs = self.build_request(loaded)
        self.client()
        loop = asyncio.get_running_loop()
        data = await loop.run_in_executor(self._pool, self._call, kwargs)
        return self.parse_reply(data)

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
        if self._client is not None:
            self._client.close()
            self._client = None

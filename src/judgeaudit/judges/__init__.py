"""Judge engine: provider-neutral requests, adapters (API + embedded), a crash-safe
content-addressed response cache, scheduling and parsing. Never imports the
datasets, conditions or stats code: a judge sees only its request."""

from judgeaudit.judges.request import (
    AnswerSpec,
    AudioPart,
    LoadedRequest,
    Request,
    TextPart,
    load_request_audio,
)

__all__ = ["AnswerSpec", "AudioPart", "LoadedRequest", "Request", "TextPart",
           "load_request_audio"]

"""Judge adapters: the interface and error types (`base.py`), the API providers
(`bedrock.py`, `gemini.py`, `openai_chat.py`) and the embedded judges (`judges/embedded/adapters.py`),
in one registry keyed by provider.

The roles a provider plays are read off its adapter class, never listed by hand:
`paid` (an API judge: priced, budgeted, one job slot), `perceives` (an embedded
judge that runs the specialists on the audio) and `control` (an embedded judge whose
behaviour is known by construction: reported, but outside the contrasts' families).
`providers(paid=True)` names the providers with a role."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from judgeaudit.judges.adapters.base import (
    Adapter,
    MissingKeyError,
    PermanentError,
    Reply,
    TransientError,
)


@functools.cache
def registry() -> dict[str, type[Adapter]]:
    """provider -> adapter class. Imported on first use: the provider modules import
    `base`, whose package this is."""
    from judgeaudit.judges.adapters.bedrock import BedrockConverseAdapter
    from judgeaudit.judges.adapters.gemini import GeminiAdapter
    from judgeaudit.judges.adapters.openai_chat import OpenAIChatAdapter, OpenAICompatibleAdapter
    from judgeaudit.judges.embedded.adapters import (
        FirstSlotAdapter,
        LabelReaderAdapter,
        ListenerAdapter,
        SimulatedAdapter,
    )

    return {cls.provider: cls for cls in (
        BedrockConverseAdapter, GeminiAdapter, OpenAIChatAdapter, OpenAICompatibleAdapter, LabelReaderAdapter,
        FirstSlotAdapter, ListenerAdapter, SimulatedAdapter)}


def providers(**roles: bool) -> tuple[str, ...]:
    """The providers (sorted) whose adapter class has each given role value, e.g.
    `providers(paid=True)`, `providers(paid=False)` (the embedded judges),
    `providers(perceives=True)`, `providers(control=True)`."""
    unknown = sorted(set(roles) - set(Adapter.ROLES))
    if unknown:
        raise ValueError(f"unknown adapter roles {unknown}; known: {list(Adapter.ROLES)}")
    return tuple(sorted(p for p, cls in registry().items()
                        if all(getattr(cls, r) == v for r, v in roles.items())))


def is_paid(spec: Mapping[str, Any]) -> bool:
    """True for a judge spec whose provider is an API judge (`Adapter.paid`)."""
    cls = registry().get(spec.get("provider"))
    return bool(cls is not None and cls.paid)


def make_adapter(name: str, spec: dict[str, Any]) -> Adapter:
    """The adapter of judge `name` for its spec's provider."""
    provider = spec.get("provider")
    if provider not in registry():
        raise ValueError(
            f"judge {name!r}: unknown provider {provider!r}; known: {sorted(registry())}"
        )
    return registry()[provider](name, spec)


__all__ = ["Adapter", "MissingKeyError", "PermanentError", "Reply", "TransientError",
           "is_paid", "make_adapter", "providers", "registry"]

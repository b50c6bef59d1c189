"""Judge adapters behind one registry: `make_adapter(name, spec)`."""

from judgeaudit.judges.adapters.base import (
    REGISTRY,
    Adapter,
    PermanentError,
    Reply,
    TransientError,
    make_adapter,
    register,
)

__all__ = ["REGISTRY", "Adapter", "PermanentError", "Reply", "TransientError",
           "make_adapter", "register"]

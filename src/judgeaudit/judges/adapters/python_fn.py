"""The `python` provider: a local Python function as a judge, without a server.

Config: `provider: python`, `function: "package.module:function"` (importable with
the run's PYTHONPATH). The function receives the provider-neutral request
(`judgeaudit.judges.request.LoadedRequest`: `.request` is the Request with its
system text, ordered text/audio parts and answer spec; `.audio` maps each audio
part's sha256 to its WAV bytes) and returns the reply text (a JSON object such as
`{"label": "happy"}`, parsed like any provider's reply), or None for no reply
(counted `empty`, not cached: asked again on the next run, like an error). An
exception is recorded as that request's error; a call running past the judge's
`timeout_s` is cut off (it runs in a worker thread, abandoned then) and retried up
to `max_attempts`, then recorded as an error. Worked example:
`judgeaudit.audit.example_judge`.

The function name (and `model`, if set) enters the judge fingerprint, so editing
what the function does needs a new `model` tag (e.g. a version string) to avoid
replaying old cached answers."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, ClassVar

from judgeaudit.judges.adapters.base import Adapter, PermanentError, Reply
from judgeaudit.judges.request import LoadedRequest


def load_function(ref: str, judge: str = "?") -> Callable[[LoadedRequest], Any]:
    """`module:function` -> the callable; a clear error naming the judge otherwise."""
    if not isinstance(ref, str) or ref.count(":") != 1 or not all(ref.split(":")):
        raise PermanentError(f"judge {judge}: `function` must be 'module:function', got {ref!r}")
    mod_name, fn_name = ref.split(":")
    try:
        module = importlib.import_module(mod_name)
    except ImportError as exc:
        raise PermanentError(f"judge {judge}: cannot import module {mod_name!r} ({exc})") from None
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        raise PermanentError(f"judge {judge}: {mod_name!r} has no callable {fn_name!r}")
    return fn


class PythonFunctionAdapter(Adapter):
    """Roles (see `Adapter.ROLES`): not `paid` (local code: no price, no budget ledger,
    no key to check, no API job slot), not `perceives` (it gets the request, not the
    specialists' perception), not a `control` (its behaviour is what is being audited,
    so it stays inside the contrasts' families), not `embedded` (not one of the
    built-in judges of known behaviour)."""

    provider: ClassVar[str] = "python"
    OUTPUT_FIELDS: ClassVar[tuple[str, ...]] = ("function", "model")
    blocking: ClassVar[bool] = True
    abandonable: ClassVar[bool] = True  # timeout_s cuts a call off (worker thread)

    def __init__(self, name: str, spec: dict[str, Any]):
        super().__init__(name, spec)
        self._fn = load_function(spec.get("function"), name)

    def complete_sync(self, loaded: LoadedRequest) -> Reply:
        out = self._fn(loaded)
        if out is not None and not isinstance(out, str):
            raise PermanentError(f"judge {self.name}: {self.spec['function']} returned "
                                 f"{type(out).__name__}, expected the reply text (str) or None")
        return Reply(raw_text=out, model_version=self.spec.get("model") or self.spec["function"],
                     final=out is not None)

"""Turn a judge's raw reply into (parsed answer, status): no row is ever dropped.

Statuses (CONTRACTS section 4):
  valid          a JSON object whose answer key holds an allowed value
  invalid_json   text present but no JSON object could be extracted
  invalid_label  a JSON object, but the key is missing or its value is not allowed
  refusal        the provider flagged a refusal, or the text is a refusal with no JSON
  empty          nothing came back
  error          transport failure after the last attempt (set by the engine)
  unsupported    the judge cannot take this request (e.g. too many audio inputs)
  too_long       an answer over the judge's max_answer_chars: stored once, cut with a
                 marker, not parsed (set by the engine)

The JSON may be the whole text, inside a ```json fence, or embedded in prose; the
first object holding the answer key wins. Labels match case- and
whitespace-insensitively and are reported in their canonical (allowed) spelling.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from judgeaudit.judges.request import AnswerSpec

STATUSES = ("valid", "invalid_json", "invalid_label", "refusal", "empty", "error", "unsupported",
            "too_long")
ANSWERED = frozenset({"valid", "invalid_json", "invalid_label", "refusal", "empty", "too_long"})
"""Statuses that are the provider's answer (cached); error/unsupported are not."""

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)
_REFUSAL = re.compile(
    r"\b(I can(?:not|'t|’t) (?:help|assist|comply|do that|provide)|I(?:'m| am) (?:sorry|unable)"
    r"|I won(?:'t|’t) be able|I must decline|cannot fulfil+ this)",
    re.I,
)


@dataclass(frozen=True)
class ParseResult:
    parsed: str | None
    status: str
    error: str | None = None
    reasoning: str | None = None


def _objects(text: str) -> list[Any]:
    """Every JSON object found in `text`: whole text, fenced blocks, then embedded."""
    found: list[Any] = []
    stripped = text.strip()
    try:
        found.append(json.loads(stripped))
    except ValueError:
        pass
    for block in _FENCE.findall(text):
        try:
            found.append(json.loads(block.strip()))
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    i = text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        found.append(obj)
        i = text.find("{", end)
    return [o for o in found if isinstance(o, dict)]


def _norm(value: str) -> str:
    return " ".join(value.strip().strip(".").split()).casefold()


@functools.lru_cache(maxsize=256)
def _label_table(allowed: tuple[str, ...]) -> dict[str, str]:
    return {_norm(a): a for a in allowed}


def match_label(value: Any, allowed: tuple[str, ...]) -> str | None:
    if not isinstance(value, str):
        return None
    # the normalised table of one answer vocabulary, built once (callers only read it)
    table = _label_table(allowed) if isinstance(allowed, tuple) else {
        _norm(a): a for a in allowed}
    return table.get(_norm(value))


def parse_response(raw_text: str | None, answer: AnswerSpec, refusal: bool = False) -> ParseResult:
    """Classify one reply. `refusal` is the provider's own refusal signal."""
    text = raw_text or ""
    if refusal:
        return ParseResult(None, "refusal", "provider flagged a refusal")
    if not text.strip():
        return ParseResult(None, "empty", "empty reply")
    objects = _objects(text)
    if not objects:
        if _REFUSAL.search(text):
            return ParseResult(None, "refusal", "refusal text without an answer")
        return ParseResult(None, "invalid_json", "no JSON object in the reply")
    keyed = [o for o in objects if answer.key in o]
    if not keyed:
        return ParseResult(
            None, "invalid_label", f"JSON object has no key {answer.key!r}",
            _reasoning(objects[0]),
        )
    for obj in keyed:
        label = match_label(obj[answer.key], answer.allowed)
        if label is not None:
            return ParseResult(label, "valid", None, _reasoning(obj))
    value = keyed[0][answer.key]
    return ParseResult(
        None, "invalid_label",
        f"{answer.key}={str(value)[:80]!r} is not one of {list(answer.allowed)}",
        _reasoning(keyed[0]),
    )


def _reasoning(obj: dict) -> str | None:
    value = obj.get("reasoning")
    return value if isinstance(value, str) else None

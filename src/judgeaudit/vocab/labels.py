"""Label vocabularies the judges answer in and the corpora are labelled with."""

from __future__ import annotations

#: the 8 RAVDESS emotion classes, in RAVDESS order (file-name codes 01..08)
EMOTIONS: tuple[str, ...] = (
    "neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised",
)
#: ISO 639-1 code -> English name of the languages a judge's answer may name
#: (a reply naming "spanish" is read as `es`); the corpora accept any ISO 639-1
#: code (datasets.schema.ISO639_1) and the config picks the synthetic set
LANGUAGE_NAMES: dict[str, str] = {
    "en": "english", "es": "spanish", "fr": "french", "de": "german", "pt": "portuguese",
    "it": "italian", "zh": "chinese", "ja": "japanese",
}

__all__ = ["EMOTIONS", "LANGUAGE_NAMES"]

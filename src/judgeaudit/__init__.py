"""judge-audit: audits of audio-language-model judges of speech."""

__version__ = "0.1.0"

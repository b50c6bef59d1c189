"""Embedded judges with known behaviour (label-reader, first-slot, listener,
simulated). They see only the request; the prompt contract `judgeaudit.prompts`
documents what they read."""

from judgeaudit.judges.embedded.perception import Perception, SpecialistPerception
from judgeaudit.judges.embedded.reader import RequestView, SideLabel, read_request

__all__ = ["Perception", "RequestView", "SideLabel", "SpecialistPerception", "read_request"]

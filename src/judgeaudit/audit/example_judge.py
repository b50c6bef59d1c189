"""Worked example of the `python` provider: a judge that is a plain Python function.

Config (a panel entry, or a YAML file passed to `judgeaudit audit --judge FILE`):

    my-judge:
      provider: python
      function: judgeaudit.audit.example_judge:copy_label
      model: copy-label-v1        # a version tag: change it when the function changes

The function receives the provider-neutral request (`LoadedRequest`): `.request.system`,
`.request.parts` (TextPart.text / AudioPart.sha256 in order), `.request.answer`
(`key` and `allowed` answers) and `.audio` (sha256 -> WAV bytes), and returns the
reply text, here a JSON object `{"<key>": "<answer>"}`. Both functions below are
deliberately shortcut-taking (the audit should find them out):

- `copy_label`: answers any label the text states (`A classifier labelled this clip as
  X.`, `Label: X.`, `Reference label: X.`), else the first allowed answer;
- `first_slot`: always the first allowed answer (slot A / R1 in a two-way choice).
A real local model would decode `loaded.audio[...]` and run inference instead."""

from __future__ import annotations

import json
import re

from judgeaudit.judges.request import LoadedRequest, TextPart

_LABEL = re.compile(r"(?:A classifier labelled this clip as|Label:|Reference label:)\s+([^.\n]+)\.")


def _texts(loaded: LoadedRequest) -> list[str]:
    req = loaded.request
    return [req.system or ""] + [p.text for p in req.parts if isinstance(p, TextPart)]


def copy_label(loaded: LoadedRequest) -> str:
    ans = loaded.request.answer
    for text in _texts(loaded):
        for m in _LABEL.finditer(text):
            if m.group(1).strip() in ans.allowed:
                return json.dumps({ans.key: m.group(1).strip()})
    return first_slot(loaded)


def first_slot(loaded: LoadedRequest) -> str:
    ans = loaded.request.answer
    body = {ans.key: ans.allowed[0]}
    if ans.reasoning:
        body = {"reasoning": "always the first option", **body}
    return json.dumps(body)

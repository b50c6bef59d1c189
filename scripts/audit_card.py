"""Rule audit_card: verdicts of one judge + the reference panel's -> card.json,
card.html and the shortcut profile figure (card.png)."""

import json
import os
from pathlib import Path

from judgeaudit.audit.card import build_card, profile_figure, render_html
from judgeaudit.io import write_json_atomic, write_text_atomic
from judgeaudit.scriptjob import finish_job, start_job

smk, log = start_job(globals())
verdicts = json.loads(Path(smk.input.verdicts).read_text())
panel = [json.loads(Path(p).read_text()) for p in smk.input.panel]
here = Path(smk.output.card).parent
links = {"responses used (request key, raw answer, status, stage)": "responses.jsonl",
         "verdicts and their provenance record": "verdicts.json.prov.json",
         "card provenance record": "card.json.prov.json",
         **{f"trial shard {p}": Path(os.path.relpath(p, here)).as_posix()
            for p in smk.input.trials}}
card = build_card(verdicts, panel, links)
write_json_atomic(smk.output.card, card)
profile_figure(card, smk.output.figure)
write_text_atomic(smk.output.html, render_html(card, Path(smk.output.figure).name))
log.info("card %s: %s", smk.output.card, {p: v["verdict"] for p, v in card["protocols"].items()})
finish_job(smk)

"""Study A (Paper A: cue following in audio judges): its outputs registry
(`outputs.py`) and the recipes computing its metric rows (`compute.py`).

The study's other modules still live flat beside the other studies'
(`conditions/study_a*.py`, `stats/study_a.py`, `render/study_a.py`); moving them
here is left for later (issue 19), the registry names them by dotted path."""

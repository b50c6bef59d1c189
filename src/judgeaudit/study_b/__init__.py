"""Study B (Paper B: counterfactual audits of paralinguistic evidence): its outputs
registry (`outputs.py`) and the recipes computing its metric files (`compute.py`).

The study's other modules still live where they were (`conditions/study_b/`,
`stats/study_b.py`, `stats/chance.py`, `render/study_b.py`); moving them here is
left for later (issue 19), the registry names them by dotted path."""

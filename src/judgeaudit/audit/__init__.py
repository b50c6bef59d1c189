"""One-command judge audit (issue 23): a matched probe battery per protocol, sized by
a power calculation, run in stages and stopped by a group-sequential rule, ending in
a judge card (`results/audit/<judge>/card.json`, `card.html`; a protocol subset's in
`results/audit/<judge>/protocols/<set>/`).

Modules: `power` (fixed-design size), `sequential` (alpha-spending boundaries,
repeated confidence intervals, the verdict rule), `battery` (probe units and
contrasts from the Study A/B trial shards), `run` (staged judging through the
judge engine and its cache), `card` (card.json / card.html), `plan` (the workflow's
folders and inputs per judge and protocol set), `docs` (the README blocks generated
from a card and the stopping benchmark), `example_judge`
(a worked `python` provider judge)."""

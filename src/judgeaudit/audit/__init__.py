"""One-command judge audit (issue 23): a matched probe battery per protocol, sized by
a power calculation, run in stages and stopped by a group-sequential rule, ending in
a judge card (`results/audit/<judge>/card.json`, `card.html`).

Modules: `power` (fixed-design size), `sequential` (alpha-spending boundaries,
repeated confidence intervals, the verdict rule), `battery` (probe units and
contrasts from the Study A/B trial shards), `run` (staged judging through the
judge engine and its cache), `card` (card.json / card.html), `example_judge`
(a worked `python` provider judge)."""

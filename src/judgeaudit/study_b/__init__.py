"""Study B (Paper B: counterfactual audits of paralinguistic evidence), all of its
code: `items` (audit items), `replies` (candidate replies) and `quality` (their LLM
scorer), `tts` and `renderings` (the spoken renderings, the clearest kept),
`protocols` (trials under cues and probes), `build` (the file-level steps), `writers`
(the writer swap), `metrics` (accuracy, gaps, states, Potemkin), `chance` (chance
baselines and the Potemkin gate), `render` (tables and figures), its outputs registry
(`outputs`) and the recipes computing its metric files (`compute`). Shared machinery
stays by stage (`conditions.common`, `stats.clustered`, `render.tables`, ...)."""

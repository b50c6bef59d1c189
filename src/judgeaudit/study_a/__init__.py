"""Study A (Paper A: cue following in audio judges), all of its code:
trials (`classification` counter-conditions, `pairwise` A/B trials, `pair_sources`
pairs from manifests, `build` shards from files), `metrics` (rows from trials and
responses), `rates` (pairwise-order modes), `render` (tables and figures), its
outputs registry (`outputs`) and the recipes computing its metric rows (`compute`).
Shared machinery stays by stage (`conditions.common`, `stats.clustered`,
`render.tables`, ...)."""

"""The paper-like report (`results/report/`): `paper` builds it from the outputs
registries, `abstract` states the findings, `layout` prints the paper pivots,
`published` holds the papers' own numbers, `cellpages` writes the cell traces. It
sits above the studies; the table and figure primitives they draw with stay in
`judgeaudit.render`."""

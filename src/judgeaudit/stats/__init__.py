"""Shared statistics for both studies: cluster-robust estimates (`clustered`: the
interval every printed rate uses), Holm's correction (`contrasts`), pairwise-order
modes (`rates`), the chance gate (`chance`), the per-study metrics (`study_a`,
`study_b`) and the power report (`power`). Import the submodule you need."""

"""Shared statistics for both studies: cluster-robust estimates (`clustered`: the
interval every printed rate uses), Holm's correction (`contrasts`), the method
registry (`methods`), outcome counts (`outcomes`) and the power report (`power`).
The per-study metrics live with their study (`study_a.metrics`, `study_b.metrics`).
Import the submodule you need."""

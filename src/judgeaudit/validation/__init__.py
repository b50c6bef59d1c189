"""Independent validation of the audit's estimators (issue 11).

- `simulate`: a simulator of judge behaviour written from the study's definitions;
  it imports nothing from `judgeaudit.stats`, `judgeaudit.conditions`,
  `judgeaudit.study_a`, `judgeaudit.study_b` or `judgeaudit.judges` (a test
  inspects its imports).
- `estimators`: the thin adapter that feeds simulated data to the audit's own
  estimator functions (the only module here that imports `judgeaudit.study_a.metrics` /
  `judgeaudit.study_b.metrics`).
- `study`: replication, bias / RMSE / coverage with Monte Carlo errors, and the
  `estimator_validation` table and figure.
"""

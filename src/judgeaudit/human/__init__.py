"""Human validation: a static listening-test page built from the trial shards
(`listening.py`) and the import of the answers it downloads (`validation.py`)."""

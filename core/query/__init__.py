"""Free text → ``Query``, and the one name matcher.

Rule: the parser knows the shared core types (``core.models``, ``core.notes``) and its own words only; it knows no estimator."""

"""A pasted command or log → ``Diagnosis``.

Rule: a paste is read, never executed; every figure it states is kept as stated."""

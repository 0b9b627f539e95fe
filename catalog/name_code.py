"""Which code turns a catalog into the parser's vocabulary and name index, as one key: a stored index
is used only while this code is unchanged (a new matching rule builds it again). The modules are found
by name, not imported, so a one-shot command can check its stored index without loading the parser."""

from __future__ import annotations

import hashlib
from functools import cache
from importlib.util import find_spec
from pathlib import Path

NAME_MODULES = (
    "core.query.names",
    "core.query.lexicon",
    "core.query.index",
    "core.query.scores",  # the number part of a score is stored with the index
    "core.query.literals",
    "core.query.needs",
    "core.query.types",
    "core.models",
    "catalog.name_defaults",
    "catalog.lookup",
)


@cache
def names_key() -> str:
    digest = hashlib.sha256()
    for name in NAME_MODULES:
        spec = find_spec(name)
        digest.update(Path(spec.origin if spec and spec.origin else "").read_bytes())
    return digest.hexdigest()[:16]


__all__ = ["NAME_MODULES", "names_key"]

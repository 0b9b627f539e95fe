"""Catalog entries by a name the catalog itself lists, without the question parser.

A one-shot command given an id or a listed name (``fitbot estimate --model llama-3.1-8b-instruct --gpu
"rtx 4090"``) is answered from these before ``catalog.lookup`` (the parser and its fuzzy matching) is
imported, so it starts in about half the time. Only names that mean one entry and nothing else are
taken here: a device that comes in several memory sizes goes to the parser, which says which size it
read (``tests/catalog/test_exact_names.py`` holds that both give the same answer).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from core.models import Catalog, GpuSpec, ModelSpec, QuantSize

_MEMORY = re.compile(r"\s*\(?\b\d+\s*gb\b\)?", re.I)
_PLURAL = re.compile(r"\d(?:s|er|ern)$")


# Named tuples, not frozen dataclasses: as immutable, and a tenth of the cost to create at import (a
# dataclass writes and compiles its methods), which every ``fitbot estimate`` pays.
class NotFound(NamedTuple):
    kind: str  # "model" or "gpu"
    text: str
    suggestions: tuple[str, ...] = ()
    reason: str = ""


class ModelHit(NamedTuple):
    model: ModelSpec
    measured: Mapping[str, QuantSize] = MappingProxyType({})  # sizes that come with a local file
    quant: str | None = None


def exact_model(catalog: Catalog, text: str) -> ModelSpec | None:
    """The model whose id, name or Hugging Face repo id is ``text`` (case and spacing aside), if one is."""
    key = _key(text)
    hits = {m.id: m for m in catalog.models if key in (m.id, _key(m.name), _key(m.hf_repo or ""))}
    return next(iter(hits.values())) if len(hits) == 1 else None


def exact_gpu(catalog: Catalog, text: str) -> GpuSpec | None:
    """The device whose id, name or alias is ``text``, if exactly one lists it and it comes in one size."""
    key = _key(text)
    if _PLURAL.search(key):  # "4080s": a 4080 Super, or the plural of a 4080 (the parser reads the sentence)
        return None
    hits = [g for g in catalog.gpus if key in (g.id, _key(g.short_name), _key(g.name), *map(_key, g.aliases))]
    if len(hits) != 1:
        return None
    chip = _chip(hits[0])
    return hits[0] if sum(_chip(g) == chip for g in catalog.gpus) == 1 else None


def _chip(gpu: GpuSpec) -> str:
    return _key(_MEMORY.sub("", gpu.short_name))


def _key(text: str) -> str:
    return " ".join(text.lower().split())


__all__ = ["ModelHit", "NotFound", "exact_gpu", "exact_model"]

"""The parser-free lookup of listed names (``catalog.exact``) answers exactly what the parser-backed one
(``catalog.lookup``) answers, for every name of every catalog model and device it takes, and says nothing
the parser would have said ("read as …"): a one-shot command gets the same entry either way."""

from __future__ import annotations

from catalog.exact import exact_gpu, exact_model
from catalog.facts import load_facts
from catalog.lookup import ModelHit, NotFound, find_gpu, find_model

CATALOG = load_facts()


def test_every_model_name_it_takes_is_the_parsers_reading() -> None:
    taken = 0
    for model in CATALOG.models:
        for name in (model.id, model.name, model.hf_repo or "", model.name.upper()):
            hit = exact_model(CATALOG, name) if name else None
            if hit is None:
                continue
            taken += 1
            found = find_model(CATALOG, name)
            assert isinstance(found, ModelHit) and found.model.id == hit.id, (name, hit.id, found)
    assert taken >= 2 * len(CATALOG.models)


def test_every_device_name_it_takes_is_the_parsers_reading_with_nothing_assumed() -> None:
    taken = 0
    for gpu in CATALOG.gpus:
        for name in (gpu.id, gpu.short_name, gpu.name, *gpu.aliases):
            hit = exact_gpu(CATALOG, name)
            if hit is None:
                continue
            taken += 1
            assumed: list[str] = []
            found = find_gpu(CATALOG, name, assumed)
            # the parser reads it the same, or not at all ("rtx6000pro": a glued alias it cannot split yet)
            assert (found == (hit, 1) and not assumed) or isinstance(found, NotFound), (name, hit.id, found, assumed)
    assert taken >= len(CATALOG.gpus)


def test_a_device_in_several_sizes_is_left_to_the_parser() -> None:
    assert exact_gpu(CATALOG, "rtx 3060") is None  # 8 and 12 GB: the parser says which it read
    assert exact_gpu(CATALOG, "rtx 4090") is not None

"""A size the catalog lacks in a family it has ("qwen3-23b", "gemma 3 13b") suggests that family's nearest
sizes first, for every sized model in the catalog (issue 34: did-you-mean choices that are about what was
asked)."""

from __future__ import annotations

import math
import re

import pytest

from catalog.facts import load_facts
from core.query.parse import parse

CATALOG = load_facts()
SIZED_ID = re.compile(r"^([a-z][a-z0-9.]*(?:-[a-z][a-z0-9.]*)?)-(\d{1,3}(?:\.\d)?)b(?:-[a-z0-9.-]+)?$")
SIZED = [m for m in CATALOG.models if SIZED_ID.match(m.id)]


def size_of(model_id: str) -> float | None:
    m = re.search(r"-(\d{1,3}(?:\.\d)?)b(?:-|$)", model_id)
    return float(m.group(1)) if m else None


@pytest.mark.parametrize("model", SIZED, ids=lambda m: m.id)
def test_an_unknown_size_suggests_the_familys_nearest(model):
    from bot.answers.route import Answers

    answers = Answers(CATALOG)
    found = SIZED_ID.match(model.id)
    assert found
    family, size = found.group(1), float(found.group(2))
    sizes = {size_of(m.id) for m in CATALOG.models if m.id.startswith(family + "-")}
    asked = next((s for s in (size + 1, size + 2, size - 1) if s > 0 and s not in sizes), None)
    if asked is None:
        pytest.skip("every nearby size exists")
    match = parse(f"{family} {asked:g}b", answers.vocab).model
    assert match is not None
    if match.id is not None:  # read as one model: only one of the size asked ("qwen2.5 15b" is no 1.5B)
        assert size_of(match.id) in (None, asked), match.id
        return
    assert match.suggestions, f"{family} {asked:g}b"
    gaps = [abs(math.log(s / asked)) for m in match.suggestions if (s := size_of(m))]
    assert gaps == sorted(gaps), match.suggestions  # nearest size first

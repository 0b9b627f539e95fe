"""The generated questions (bench/question_gen.py, issue 34 item 1): a bounded, seeded sample per class
through the parser, each read as the generator meant it. Every class must reach 99 %, except those
listed in ``OPEN`` with their current share, which must not drop (and leave the list once they pass).
"""

from __future__ import annotations

import pytest

from bench.question_gen import generate
from bench.question_suite import run
from catalog.facts import load_facts

SAMPLE = 120  # questions per class; the whole suite is bench/question_suite.py
# class -> share now (a floor): causes in the README "Generated questions" section
OPEN = {
    # issue 36 item 5 (new models and devices re-drew the seeded sample; no new cause but the Inkling typo below)
    "count en": 0.966,  # "4 Titan Xps", "3 M2 Max 32GBs": a plural -s on a name's last word; "2× M5 24GB"
    "repo id": 0.975,  # "baidu/ERNIE-4.5-21B-A3B-PT-GGUF"; "Qwen/Qwen2.5-7B-GGUF" read as the Instruct model
    "typo en": 0.942,  # "Mistral 7B Intsruct v0.2" read as v0.3; "Inkilng" asks Inkling or Inkling-Small
    "context de": 0.975,  # a context in the model's name ("Phi-3-mini-128k") wins over the one asked
    "context en": 0.975,
    "ordinary words, no model en": 0.908,  # "good for scout work", "gut für seed": read as models
    "ordinary words, no model de": 0.908,
}
RESULT = run(load_facts(), SAMPLE)


def test_every_class_is_generated() -> None:
    assert {g.cls for g in generate(load_facts(), per_class=1)} == set(RESULT)
    assert all(total >= 20 for _, total, _ in RESULT.values())


@pytest.mark.parametrize("cls", sorted(RESULT))
def test_class_share(cls: str) -> None:
    right, total, misses = RESULT[cls]
    share = right / total
    if cls in OPEN:
        assert share >= OPEN[cls], (cls, share, misses[:5])
        assert share < 0.99, f"{cls} now passes ({share:.3f}): take it off OPEN"
    else:
        assert share >= 0.99, (cls, share, misses[:10])

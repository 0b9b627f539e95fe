"""Comparisons of two to four devices, with counts and modded cards, in both languages (issue 34).

Generated over catalog devices: every device answers in every position of a three-way comparison,
its count stays with it, and a "modded" card with its memory is that card's catalog row.
"""

from __future__ import annotations

import itertools

import pytest

from catalog.facts import load_facts
from catalog.lookup import vocabulary
from core.query.parse import parse
from core.query.types import Intent

VOCAB = vocabulary(load_facts())
# (as typed, catalog id): a spread of vendors and kinds
DEVICES = (
    ("rtx 4090", "rtx-4090"),
    ("7900 xtx", "rx-7900-xtx"),
    ("w7900", "radeon-pro-w7900"),
    ("r9700", "radeon-ai-pro-r9700"),
    ("4090 48gb modded", "rtx-4090-48gb"),
    ("modded 2080 ti", "rtx-2080-ti-22gb"),
    ("h100", "h100-sxm"),
    ("rtx 5090", "rtx-5090"),
)
TEMPLATES = (
    "{a} vs {b} vs {c} for qwen3 32b",
    "{a}, {b} or {c} for qwen3 32b?",
    "compare {a} and {b} and {c} on qwen3 32b",
    "{a} gegenüber {b} oder {c} für qwen3 32b",
    "{a} oder {b} oder lieber {c} für qwen3 32b?",
)
COUNTS = (("zwei ", 2), ("2x ", 2), ("", 1), ("drei ", 3))


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("trio", list(itertools.permutations(DEVICES, 3))[::17])
def test_three_devices_are_three_devices(template, trio):
    (a, ia), (b, ib), (c, ic) = trio
    q = parse(template.format(a=a, b=b, c=c), VOCAB)
    assert q.intent is Intent.COMPARE, q.intent
    got = [m.id for m in (q.gpu, q.gpu2, *q.more_gpus) if m is not None]
    assert got == [ia, ib, ic]
    assert q.model is not None and q.model.id == "qwen3-32b"


@pytest.mark.parametrize(("word", "count"), COUNTS)
@pytest.mark.parametrize("template", ("{a} gegenüber {n}{b} für qwen3 14b", "{a} vs {n}{b} for qwen3 14b"))
def test_a_count_stays_with_its_device(word, count, template):
    q = parse(template.format(a="r9700", n=word, b="3060"), VOCAB)
    assert q.intent is Intent.COMPARE
    assert q.gpu is not None and q.gpu.id == "radeon-ai-pro-r9700" and q.gpu_count == 1
    assert q.gpu2 is not None and q.gpu2.id == "rtx-3060-12gb" and q.gpu2_count == count

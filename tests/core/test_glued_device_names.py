"""A device name typed without its spaces ("rtx4070tisuper", "rtxa4000", "arcb580", "rtx6000pro") is the same
device as spaced. Generated over every catalog GPU named as a line, a model number and tier words (RTX, GTX,
RX, Arc, with PRO before or after the number), glued whole and with the line apart."""

from __future__ import annotations

import re

import pytest

from catalog.facts import load_facts
from catalog.lookup import vocabulary
from core.query.parse import parse

NAME = re.compile(r"(RTX|GTX|RX|Arc) (PRO )?(\w*\d\w*)((?: (?:Ti|Super|XT|XTX|GRE|D|Pro))*)(?: Blackwell)?")


def _glued(short_name: str) -> set[str]:
    m = NAME.fullmatch(short_name)
    if m is None:
        return set()
    line, pro, number, tiers = m[1].lower(), (m[2] or "").strip().lower(), m[3].lower(), m[4].replace(" ", "").lower()
    forms = {f"{line}{pro}{number}{tiers}", f"{line} {pro}{number}{tiers}".replace("  ", " ")}
    if pro:
        forms |= {f"{line}{number}{pro}{tiers}", f"{line} {number}{pro}{tiers}"}  # "rtx6000pro", "rtx 6000pro"
    return forms


@pytest.fixture(scope="module")
def catalog():
    return load_facts()


def test_a_glued_device_name_is_the_device(catalog):
    vocab = vocabulary(catalog)
    cases = [(g.id, form) for g in catalog.gpus for form in _glued(g.short_name)]
    assert len(cases) >= 100 and any(gid == "rtx-pro-6000" for gid, _ in cases)
    missed = []
    for gpu_id, form in cases:
        if parse(f"qwen3 8b on {gpu_id}", vocab).gpu is None:
            continue
        for sentence in (f"can I run qwen3 8b on my {form}?", f"passt qwen3 8b auf meine {form}?"):
            match = parse(sentence, vocab).gpu
            if match is None or (match.id != gpu_id and gpu_id not in match.choices):
                missed.append((sentence, match.id if match else None))
    assert missed == []


TIER_END = re.compile(r".* (?:Ti|Super|XT|XTX|GRE)")


def test_a_counted_plural_of_a_tier_is_that_card(catalog):
    """ "4 RTX 4070 Tis", "zwei 7900 XTXs": the plural of a card named with its tier, spaced, is that card (a glued
    alias of another card, "4070TiS" for the Ti Super, is read only when typed glued)."""
    vocab = vocabulary(catalog)
    cards = [g for g in catalog.gpus if TIER_END.fullmatch(g.short_name) and "Laptop" not in g.short_name]
    assert len(cards) >= 20
    missed = []
    for g in cards:
        if parse(f"qwen3 8b on {g.short_name}", vocab).gpu is None:
            continue
        for sentence in (f"llama 3.1 8b on 4 {g.short_name}s", f"passt llama 3.1 8b auf zwei {g.short_name}s?"):
            match = parse(sentence, vocab).gpu
            if match is None or (match.id != g.id and g.id not in match.choices):
                missed.append((sentence, match.id if match else None))
    assert missed == []

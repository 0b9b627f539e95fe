""" "What can I run?" (issue 34): a /models answer on the device the question names, else the saved one
(/mygpu: a catalog device or one known by its memory), else it asks for the device; a memory size alone is
a generic device of that memory. Every phrasing in both languages, on every kind of saved device.
"""

from __future__ import annotations

import asyncio

import pytest

from bot.reply import Reply
from bot.service import Service, User
from catalog.facts import load_facts

CATALOG = load_facts()
SERVICE = Service(CATALOG)
PHRASES = (
    ("which models fit my gpu", "en"),
    ("what can I run?", "en"),
    ("what can I run on this", "en"),
    ("what fits on my card", "en"),
    ("whats the best all-round model for my card", "en"),
    ("best model for my rig", "en"),
    ("was kann ich laufen lassen", "de"),
    ("was passt auf meine grafikkarte?", "de"),
    ("welche modelle laufen bei mir", "de"),
    ("bestes modell für meine karte", "de"),
)
# saved devices: catalog cards, a Mac, and devices known only by their memory (bot/users/saved.py)
SAVED = ("rtx-3090", "rtx-4060", "rx-7900-xtx", "generic-gpu-16", "generic-laptop-8")


def answer(text: str, lang: str, gpu_id: str | None = None) -> Reply:
    return asyncio.run(SERVICE.answer(text, None, User(lang=lang, gpu_id=gpu_id)))  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "lang"), PHRASES)
@pytest.mark.parametrize("saved", SAVED)
def test_what_can_i_run_uses_the_saved_device(text, lang, saved):
    reply = answer(text, lang, saved)
    assert reply.kind == "models" and reply.locale == lang, (reply.kind, reply.summary[:200])
    s = reply.subjects[0]
    assert s.model_id is None and s.gpu_id == saved, s
    assert reply.sections and reply.sections[0].rows, reply.summary[:200]


@pytest.mark.parametrize(("text", "lang"), PHRASES)
def test_what_can_i_run_without_a_saved_device_asks_for_it(text, lang):
    reply = answer(text, lang)
    assert reply.kind == "suggest" and "/models" in reply.summary and "/mygpu" in reply.summary, reply.summary


@pytest.mark.parametrize(
    ("text", "lang", "gb"),
    [
        ("what fits in 16gb", "en", 16),
        ("whats the best all-round model for my 16gb card", "en", 16),
        ("which models fit a 12 gb gpu", "en", 12),
        ("was passt in 24 gb", "de", 24),
        ("was kann ich mit 8 GB VRAM laufen lassen", "de", 8),
    ],
)
def test_what_runs_in_a_memory_size_is_a_generic_device_even_with_one_saved(text, lang, gb):
    for saved in (None, "rtx-4090"):
        reply = answer(text, lang, saved)
        assert reply.kind == "models", (reply.kind, reply.summary[:200])
        s = reply.subjects[0]
        assert s.gpu_id == f"generic-gpu-{gb}" and s.gpu_memory_gb == gb, s


@pytest.mark.parametrize(
    ("template", "lang"),
    [
        ("ich hab zwei {g}er, was kann ich laufen lassen?", "de"),
        ("ich habe 2x {g}, welche modelle passen?", "de"),
        ("I have two {g}s, what can I run?", "en"),
        ("i got 2 {g}, which models fit?", "en"),
    ],
)
def test_what_runs_on_the_hardware_i_have_is_answered_not_saved(template, lang):
    for card in ("3090", "4090", "5090", "3060"):
        reply = answer(template.format(g=card), lang)
        assert reply.kind == "models" and reply.locale == lang, (card, reply.kind, reply.summary[:200])
        s = reply.subjects[0]
        assert s.gpu_count == 2 and card in (s.gpu_id or ""), s

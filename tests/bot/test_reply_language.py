"""A reply's language is the user's: names carry none, and every button answers in its card's language (issue 34).

The classes: every catalog model's id and display name typed in a command (its "-it", "-a3b",
"instruct" are no English), and every button of cards asked in German from an English client and in
English from a German client, pressed.
"""

from __future__ import annotations

import asyncio

import pytest

from bot.service import Service
from catalog.facts import load_facts
from catalog.lookup import vocabulary
from core.query.parse import parse

CATALOG = load_facts()
VOCAB = vocabulary(CATALOG)


@pytest.mark.parametrize("field", ["id", "name"])
def test_no_catalog_model_name_carries_a_language(field):
    said = [
        (m.id, q.language)
        for m in CATALOG.models
        if (q := parse(f"/fit {getattr(m, field)} rtx 4090 32k", VOCAB)).language is not None
    ]
    assert said == []


@pytest.mark.parametrize(
    ("text", "lang"),
    [("passt gemma-3-27b-it auf meine rtx 4090?", "de"), ("can qwen3-30b-a3b-instruct-2507 run on my rtx 4090?", "en")],
)
def test_the_words_around_a_name_still_decide(text, lang):
    assert parse(text, VOCAB).language == lang


# (question, the client's language: the other one)
CARDS = (
    ("passt qwen3 32b auf meine rtx 4090 mit 32k kontext?", "en"),
    ("wie schnell läuft gpt-oss-120b auf einem mac studio m3 ultra?", "en"),
    ("was kostet llama 3.3 70b in der cloud?", "en"),
    ("welche quantisierung für gemma 3 27b auf einer 3090?", "en"),
    ("welche modelle passen auf eine rtx 4060 ti 16gb?", "en"),
    ("qwen3 8b oder llama 3.1 8b auf einer 3060?", "en"),
    ("can I run qwen3 32b on my rtx 4090 with 32k context?", "de"),
    ("how fast is gpt-oss-120b on a mac studio m3 ultra?", "de"),
    ("which models fit an rtx 4060 ti 16gb?", "de"),
    ("what does llama 3.3 70b cost in the cloud?", "de"),
)


@pytest.fixture(scope="module")
def presses():
    """Each card, and the replies to pressing each of its buttons from the same client."""

    async def press_all():
        service = Service(CATALOG)
        try:
            out = []
            for text, client in CARDS:
                card = await service.answer(text, locale=client)
                pressed = [await service.answer(a.query, locale=client) for a in card.actions]
                out.append((text, client, card, pressed))
            return out
        finally:
            await service.close()

    return asyncio.run(press_all())


def test_every_button_answers_in_its_cards_language(presses):
    buttons = 0
    for text, client, card, pressed in presses:
        assert card.locale != client, text  # the words decided, not the client
        for action, reply in zip(card.actions, pressed, strict=True):
            buttons += 1
            assert reply.locale == card.locale, (text, action.label, action.query)
    assert buttons >= 30  # the cards have buttons, so the test can fail


def test_the_tag_never_reaches_the_card(presses):
    for _, _, _, pressed in presses:
        for reply in pressed:
            assert "|de" not in reply.echo and "|en" not in reply.echo

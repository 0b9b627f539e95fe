"""A card built on a catalog row without a primary source says so, in English and German, naming the fields
nobody could check (issue 36); a fully sourced row's card says nothing of the kind."""

from __future__ import annotations

import pytest

from bot.render.text import to_console
from bot.service import Service
from catalog.facts import load_facts
from core.notes import answer_doubts
from locales import messages

CATALOG = load_facts()
MARK = {"en": "(unverified)", "de": "(ungeprüft)"}


@pytest.fixture(scope="module")
def service():
    return Service(CATALOG)


def doubts_of(model_id: str) -> tuple[str, ...]:
    model = CATALOG.model(model_id)
    assert model is not None
    return answer_doubts(model)


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("question", ["/fit mistral-small-4-119b h100 128k", "/speed mistral-small-4-119b h100"])
async def test_a_card_on_a_typed_row_names_what_is_unverified(service, question, lang):
    """Mistral Small 4's MLA fields come from a lead, not its config.json: the card's top lines say which."""
    fields = doubts_of("mistral-small-4-119b")
    assert {"attention", "kv_lora_rank"} <= set(fields)
    reply = await service.answer(question, locale=lang)
    warning = [line for line in reply.summary.splitlines() if line.startswith("⚠") and MARK[lang] in line]
    assert len(warning) == 1, reply.summary
    named = fields
    if reply.kind == "fit":  # the phone page names two and counts the rest; its details page names every one
        assert f"+{len(fields) - 2} " in warning[0], warning
        named = fields[:2]
        details = await service.answer(f"{question} details", locale=lang)
        assert all(messages(lang)[f"fact_field.{f}"] in details.summary for f in fields), details.summary
    for field in named:
        assert messages(lang)[f"fact_field.{field}"] in warning[0], field


@pytest.mark.parametrize("lang", ["en", "de"])
async def test_a_row_without_a_config_says_so_without_field_names(service, lang):
    model = CATALOG.model("glm-4.5-air")
    assert model is not None and "geometry" in model.provenance.unverified and not answer_doubts(model)
    reply = await service.answer("/fit glm-4.5-air rtx 5090 32k", locale=lang)
    assert sum(MARK[lang] in line for line in reply.summary.splitlines()) == 1


@pytest.mark.parametrize("lang", ["en", "de"])
async def test_a_fully_sourced_row_carries_no_warning(service, lang):
    model = CATALOG.model("olmo-3.1-32b-think")  # geometry from its stored config since issue 36
    assert model is not None and not model.provenance.unverified
    reply = await service.answer("/fit olmo-3.1-32b-think rtx 4090 32k", locale=lang)
    assert MARK[lang] not in to_console(reply)


def test_every_unverified_field_a_card_can_name_has_words_in_both_languages():
    named = {f for m in CATALOG.models for f in answer_doubts(m)}
    assert {"total_params_b", "kv_lora_rank", "max_context"} <= named
    for lang in ("en", "de"):
        missing = sorted(f for f in named if f"fact_field.{f}" not in messages(lang))
        assert missing == [], (lang, missing)

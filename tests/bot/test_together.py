"""Several models on one GPU: each part with its runtime, a sum that adds up, what fits and what swaps."""

from __future__ import annotations

import asyncio

import pytest

from bot.service import Service, User
from catalog.extra_facts import side_models
from catalog.facts import load_facts
from core.memory import RUNTIME_CONTEXT_BYTES
from core.models import GIB
from core.multi_model import Part, side_part, together


@pytest.fixture(scope="module")
def service() -> Service:
    return Service(load_facts().model_copy(update={"version": "test"}))


def ask(service: Service, text: str):
    return asyncio.run(service.answer(text, None, User()))


def gib_of(text: str) -> float:
    return float(text.split()[0].replace(",", ""))


def test_side_models_have_sources_and_memory():
    for side in side_models():
        assert side.weights_bytes > 0 and side.provenance.source.startswith("https://")
    whisper = next(s for s in side_models() if s.id == "whisper-large-v3")
    assert side_part(whisper).total_bytes == 3_900_000_000 + RUNTIME_CONTEXT_BYTES


def test_together_swaps_the_fewest_then_smallest():
    llm = Part(name="llm", runtime="llama.cpp", weights_bytes=18 * GIB, other_bytes=2 * GIB)
    small = Part(name="small", runtime="x", weights_bytes=GIB, other_bytes=0)
    big = Part(name="big", runtime="x", weights_bytes=4 * GIB, other_bytes=0)
    assert together(llm, [small], 24 * GIB).fits
    result = together(llm, [small, big], 24 * GIB)
    assert not result.fits and result.swap == ("big",)
    assert result.total_bytes == llm.total_bytes + small.total_bytes + big.total_bytes


def test_generic_question_sums_up_and_suggests_llms(service):
    reply = ask(service, "LLM + embedder + Whisper on one 24 GB card")
    assert reply.kind == "together" and reply.tone.value == "good"
    rows = {r.label: r.value for r in reply.sections[0].rows}
    parts = [gib_of(v) for k, v in rows.items() if "(" in k]
    assert gib_of(rows["= together"]) == pytest.approx(sum(parts), abs=0.02)
    assert "BGE-M3 assumed" in reply.assumptions and "Whisper large-v3 assumed" in reply.assumptions
    assert len(reply.sections[1].rows) == 3  # three LLMs that fit in the room left


def test_named_llm_that_does_not_fit_with_whisper_swaps_it(service):
    reply = ask(service, "qwen3 32b + bge-m3 + whisper large-v3 on a 4090")
    assert reply.tone.value == "warn" and "Whisper large-v3" in reply.summary
    rows = {r.label: r.value for r in reply.sections[0].rows}
    assert gib_of(rows["= together"].split(" of ")[0]) > gib_of(rows["= together"].split(" of ")[1])


def test_german_together(service):
    reply = ask(service, "qwen3 8b und whisper auf meiner rtx 4060 ti 16gb")
    assert reply.locale == "de" and reply.summary.startswith("Alle passen")


def test_plain_questions_are_not_special(service):
    kinds = {text: service.answers.understand(text).kind for text in (
        "can I run qwen3 32b on a 4090?", "llama-server -m x.gguf -ngl 99", "whisper and qwen3 8b on a 3060")}  # fmt: skip
    assert list(kinds.values()) == ["question", "paste", "together"]


@pytest.mark.parametrize(
    "lang, question",
    [("en", "LLM + embedder + Whisper on one 6 GB card"), ("de", "LLM + Embedder + Whisper auf einer 6-GB-Karte")],
)
def test_no_room_left_for_an_llm_says_so_in_the_user_s_language(service, lang, question):
    """The side models alone fill a small card: the suggestion list is empty, and the card says there is no room
    for an LLM (not an empty section)."""
    reply = ask(service, question)
    assert reply.kind == "together" and reply.locale == lang, reply.summary
    suggest = reply.sections[-1].rows
    expected = {"en": "No room left for an LLM on this GPU.", "de": "Auf dieser GPU bleibt kein Platz für ein LLM."}
    assert [r.value for r in suggest] == [expected[lang]]

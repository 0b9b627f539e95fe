"""The quant card with published quality figures, in both languages; none invented where none exist."""

from __future__ import annotations

import asyncio

import pytest

from bot.service import Service, User
from catalog.facts import load_facts


@pytest.fixture(scope="module")
def service() -> Service:
    return Service(load_facts().model_copy(update={"version": "test"}))


def ask(service: Service, text: str, lang: str | None = None):
    return asyncio.run(service.answer(text, lang, User(lang=lang)))  # type: ignore[arg-type]


def test_llama_quant_card_shows_kld_and_the_best_quality_that_fits(service):
    reply = ask(service, "/quant llama-3.1-8b-instruct rtx 4060 ti 8gb")
    section = next(s for s in reply.sections if "KL divergence" in s.title)
    values = {r.label: r.value for r in section.rows}
    assert values["Q4_K_M"] == "KLD 0.0313" and values["Q8_0"] == "KLD 0.0014"
    assert "llama.cpp" in values["Source"]
    assert "Best quality that fits: Q6_K (KLD 0.0055)." in reply.summary


def test_german_quality_line(service):
    reply = ask(service, "/quant gemma-2-27b-it rtx 4090", "de")
    assert "Beste Qualität, die passt: Q5_K_M (+0,67 % Perplexität)." in reply.summary


def test_family_without_figures_says_so_on_the_more_page_only(service):
    plain = ask(service, "/quant olmo-2-0325-32b-instruct rtx 4090")
    assert not any("Quality" in s.title for s in plain.sections)
    more = ask(service, "/quant olmo-2-0325-32b-instruct rtx 4090 more")
    assert any("No published KL-divergence" in r.value for s in more.sections for r in s.rows)


def test_qwen3_moe_card_cites_its_measurement(service):
    reply = ask(service, "/quant qwen3-30b-a3b rtx 4090")
    section = next(s for s in reply.sections if "KL divergence" in s.title)
    values = {r.label: r.value for r in section.rows}
    assert values["Q4_K_M"] == "KLD 0.0101" and values["Q8_0"] == "KLD 0.0023"
    assert "ik_llama.cpp/discussions/359" in values["Source"] and "Qwen3-30B-A3B" in section.title

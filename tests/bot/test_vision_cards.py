"""Image questions: projector memory that adds up, image tokens, longer time to first token, --mmproj."""

from __future__ import annotations

import asyncio

import pytest

from bot.service import Service, User
from catalog.extra_facts import vision_facts
from catalog.facts import load_facts
from core.vision import image_tokens, mmproj_bytes, vision_fact

CATALOG = load_facts()


@pytest.fixture(scope="module")
def service() -> Service:
    return Service(CATALOG.model_copy(update={"version": "test"}))


def ask(service: Service, text: str):
    return asyncio.run(service.answer(text, None, User()))


def gib_of(text: str) -> float:
    return float(text.split()[0].replace(",", ""))


def test_tokens_and_projector_per_family():
    gemma, qwen = CATALOG.model("gemma-3-27b-it"), CATALOG.model("qwen2.5-vl-7b-instruct")
    assert gemma is not None and qwen is not None
    g, q = vision_fact(gemma, vision_facts()), vision_fact(qwen, vision_facts())
    assert g is not None and q is not None
    assert image_tokens(g) == 256 and image_tokens(q, 1024) == 37 * 37 and image_tokens(q, 448) == 16 * 16
    assert mmproj_bytes(gemma, g) == 417_000_000 * 2 and mmproj_bytes(qwen, q) == qwen.vision_params * 2
    small = CATALOG.model("gemma-3-1b-it")
    assert small is not None and vision_fact(small, vision_facts()) is None
    text_only = CATALOG.model("qwen3-32b")
    assert text_only is not None and vision_fact(text_only, vision_facts()) is None


def test_image_question_adds_the_projector_and_the_image_tokens(service):
    reply = ask(service, "qwen2.5 vl 7b with 4 images on a 4060 ti 16gb")
    section = next(s for s in reply.sections if "With images" in s.title)
    rows = {r.label: r.value for r in section.rows}
    total = gib_of(rows["Model on GPU"]) + gib_of(rows["+ projector (mmproj, F16)"])
    assert gib_of(rows["= on GPU"]) == pytest.approx(total, abs=0.02)
    assert rows["Image tokens"].startswith("4 x 1,369 = 5,476 tokens")
    seconds = [float(w) for w in rows["First token"].replace("(", " ").split() if w.replace(".", "").isdigit()]
    assert seconds[0] > seconds[1]  # with images slower than the text prompt alone
    assert any("raise -c" in r.value for r in section.rows)
    assert "--mmproj mmproj-F16.gguf" in reply.code[0].text


def test_text_only_model_says_so(service):
    reply = ask(service, "qwen3 32b with images on a 4090")
    assert any("reads text only" in r.value for s in reply.sections for r in s.rows)


def test_german_image_card(service):
    reply = ask(service, "mistral small 3.1 mit 2 bildern auf einer 4090")
    assert reply.locale == "de" and any(s.title.startswith("Mit Bildern") for s in reply.sections)

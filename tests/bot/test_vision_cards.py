"""Image questions: projector memory that adds up, image tokens, longer time to first token, --mmproj."""

from __future__ import annotations

import asyncio

import pytest

from bot.service import Service, User
from catalog.facts import FACTS_DIR, load_facts, raw_rows
from catalog.model_files.vision import vision_of
from core.recommend import tags_of
from core.vision import image_tokens, mmproj_bytes

CATALOG = load_facts()


@pytest.fixture(scope="module")
def service() -> Service:
    return Service(CATALOG.model_copy(update={"version": "test"}))


def ask(service: Service, text: str):
    return asyncio.run(service.answer(text, None, User()))


def gib_of(text: str) -> float:
    return float(text.split()[0].replace(",", ""))


PUBLISHED = {
    r["id"]: float(r["vision_params_b"]) * 1e9
    for r in raw_rows(FACTS_DIR, "models.toml", "model")
    if "vision_params_b" in r
}
# the config-derived encoder against the publisher's count: mllama's 90B card counts 1.14B for the same tower
PUBLISHED_TOLERANCE = 0.25


def test_tokens_and_projector_per_family():
    gemma, qwen = CATALOG.model("gemma-3-27b-it"), CATALOG.model("qwen2.5-vl-7b-instruct")
    assert gemma is not None and qwen is not None
    g, q = vision_of(gemma), vision_of(qwen)
    assert g is not None and q is not None
    assert image_tokens(g) == 256 and image_tokens(q, 1024) == 37 * 37 and image_tokens(q, 448) == 16 * 16
    assert image_tokens(q, 1920, 1080) == 69 * 39
    assert g.encoder_params is not None and abs(g.encoder_params - 417e6) / 417e6 < 0.02  # the report's 417M
    assert mmproj_bytes(gemma, g) == g.encoder_params * 2
    small = CATALOG.model("gemma-3-1b-it")
    assert small is not None and vision_of(small) is None
    text_only = CATALOG.model("qwen3-32b")
    assert text_only is not None and vision_of(text_only) is None


@pytest.mark.parametrize("model", CATALOG.models, ids=[m.id for m in CATALOG.models])
def test_image_input_on_models_is_a_vision_tower_and_the_reverse(model):
    """/models tags image input exactly where the model has a vision tower (its config's vision_config)."""
    tower = vision_of(model)
    assert ("vision" in tags_of(model)) is (tower is not None), model.id
    if tower is None:
        return
    assert tower.encoder_params and image_tokens(tower) > 0
    assert mmproj_bytes(model, tower) == tower.encoder_params * 2
    if model.id in PUBLISHED:
        published = PUBLISHED[model.id]
        assert abs(tower.encoder_params - published) / published <= PUBLISHED_TOLERANCE, (
            model.id,
            tower.encoder_params,
        )


ISSUE_35 = [
    "llama-3.2-11b-vision-instruct",
    "llama-4-scout",
    "llama-4-maverick",
    "gemma-4-31b",
    "gemma-3n-e4b-it",
    "mistral-small-3.2-24b",
    "glm-4.5v",
    "minicpm-v-4.5",
    "qwen3-vl-30b-a3b-instruct",
    "qwen3-vl-235b-a22b-instruct",
]


@pytest.mark.parametrize("model_id", ISSUE_35)
def test_issue_35_vision_models_get_a_vision_section(service, model_id):
    reply = ask(service, f"{model_id} on 8x h200 with 2 images")
    assert not any("reads text only" in r.value for s in reply.sections for r in s.rows), model_id
    section = next(s for s in reply.sections if s.title.startswith("With images"))
    assert any(r.label == "Image tokens" for r in section.rows)


def test_llama_3_2_vision_names_the_engine_that_runs_its_images(service):
    reply = ask(service, "llama 3.2 11b vision with 2 images on a 4090")
    rows = [r.value for s in reply.sections for r in s.rows]
    assert any("no projector" in v and "vLLM" in v for v in rows)
    assert not any("--mmproj" in c.text for c in reply.code)
    assert any(c.text.startswith("vllm serve meta-llama/Llama-3.2-11B-Vision-Instruct") for c in reply.code)


def test_asked_resolution_sets_the_image_tokens(service):
    # "1920x1080" reads as a GPU count in the parser; the × sign and "px" name a size
    for text, tokens in (("1 image of 1920×1080", 69 * 39), ("1 image of 768 px", 28 * 28)):
        reply = ask(service, f"qwen2.5 vl 7b with {text} on a 4090")
        section = next(s for s in reply.sections if "With images" in s.title)
        rows = {r.label: r.value for r in section.rows}
        assert rows["Image tokens"].startswith(f"1 x {tokens:,} ="), text


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


@pytest.mark.parametrize("model", CATALOG.models, ids=[m.id for m in CATALOG.models])
def test_image_question_answers_per_model_as_models_tags_it(service, model):
    """The card agrees with /models: image input -> a vision section with tokens; text only -> says so."""
    reply = ask(service, f"{model.id} on 8x h200 with 2 images")
    vision = [s for s in reply.sections if s.title.startswith("With images") or s.title == "Images"]
    if not vision:  # the model does not fit even there: no vision section at all
        return
    text_only = any("reads text only" in r.value for s in vision for r in s.rows)
    assert text_only is ("vision" not in tags_of(model)), model.id


def test_llama_3_2_vision_in_german_and_its_image_tokens_stay_out_of_the_context(service):
    reply = ask(service, "llama 3.2 11b vision mit 2 bildern auf einer 4090")
    assert reply.locale == "de"
    rows = [r.value for s in reply.sections for r in s.rows]
    assert any("keinen Projektor" in v and "vLLM" in v for v in rows)
    assert any("Cross-Attention" in v and "nicht im Kontext" in v for v in rows)
    assert not any("-c erhöhen" in v for v in rows)  # 12,808 image tokens, but none of them in the 8K context

"""The newest open-weight models and devices (issue 36 item 5) answer, and each answer names them.

Generated from the catalog: every model known by its published size only (``memory_only.toml``) gets a
memory-only card that says so in English and German; every model added with a stored config gets a full fit
card; every new device (each memory variant) is the device of its card. The names people type for them are
read as those entries.
"""

from __future__ import annotations

import asyncio

import pytest

from bot.reply import Reply
from bot.service import Service
from catalog.extra_facts import sized_models
from catalog.facts import load_facts
from catalog.lookup import vocabulary
from core.query.parse import parse

CATALOG = load_facts()
SERVICE = Service(CATALOG)
VOCAB = vocabulary(CATALOG)
NEW_MODELS = ("qwen3.8-2.4t-a95b", "laguna-s-2.1", "laguna-xs.2", "laguna-xs-2.1", "nemotron-3-super-120b-a12b")
NEW_CHIPS = ("dgx-station-gb300", "rtx-spark", "arc-b390", "snapdragon-x2-elite", "snapdragon-x2-elite-extreme")
NEW_DEVICES = tuple(g for g in CATALOG.gpus if (g.chip or g.id) in NEW_CHIPS)
BIG = "8x h200"  # holds the weights of every one of them at Q4_K_M
# what a user types -> the entry it must be (the names of issue 36 item 5)
TYPED = {
    "qwen3.8 flash next": "qwen3.8-flash-next",
    "inkling": "inkling",
    "inkling small": "inkling-small",
    "nemotron 3 super": "nemotron-3-super-120b-a12b",
    "nemotron 3 nano omni": "nemotron-3-nano-omni-30b-a3b",
    "mistral large 3": "mistral-large-3-675b",
    "kimi linear": "kimi-linear-48b-a3b-instruct",
    "laguna xs": "laguna-xs-2.1",
    "laguna xs.2": "laguna-xs.2",
    "laguna s 2.1": "laguna-s-2.1",
    "qwen3.8 2.4t": "qwen3.8-2.4t-a95b",
}
TYPED_DEVICES = {
    "dgx station": "dgx-station-gb300",
    "rtx spark": "rtx-spark-128",
    "n1x laptop": "rtx-spark-128",
    "arc b390 32gb": "arc-b390-32",
    "x2 elite 32gb": "snapdragon-x2-elite-32",
    "x2 elite extreme": "snapdragon-x2-elite-extreme",
}


def answer(text: str) -> Reply:
    return asyncio.run(SERVICE.answer(text))


def test_the_new_rows_are_in_the_catalog() -> None:
    assert all(CATALOG.model(i) is not None for i in NEW_MODELS)
    assert {g.chip or g.id for g in NEW_DEVICES} == set(NEW_CHIPS)
    sized = {s.id for s in sized_models()}
    assert len(sized) == len(sized_models()) and not sized & {m.id for m in CATALOG.models}
    assert all(s.provenance.source and s.provenance.as_of and s.total_params > 0 for s in sized_models())


@pytest.mark.parametrize("model", sized_models(), ids=lambda s: s.id)
@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_size_only_model_gets_a_memory_only_card_that_says_so(model, lang) -> None:
    name = model.aliases[0]
    reply = answer(f"{name} on {BIG}" if lang == "en" else f"läuft {name} auf {BIG}?")
    assert reply.kind == "memory_only", (reply.kind, reply.summary[:200])
    assert reply.locale == lang
    subject = reply.subjects[0]
    assert subject.model_id == model.id and subject.model_name == model.name, subject
    assert model.name in reply.title and model.name in reply.summary
    assert [n.code for n in subject.notes] == ["memory_only_stated"]
    assert ("unverified" if lang == "en" else "ungeprüft") in reply.summary


@pytest.mark.parametrize("model_id", NEW_MODELS)
def test_a_new_model_with_a_config_gets_a_fit_card_naming_it(model_id: str) -> None:
    model = CATALOG.model(model_id)
    assert model is not None
    reply = answer(f"{model.aliases[0]} on {BIG}")
    assert reply.kind == "fit", (reply.kind, reply.summary[:200])
    assert [s.model_id for s in reply.subjects] == [model_id]
    assert model.name in reply.title or model.name in reply.summary


@pytest.mark.parametrize("device", NEW_DEVICES, ids=lambda g: g.id)
def test_a_new_device_is_the_device_of_its_card(device) -> None:
    reply = answer(f"qwen3 8b on {device.short_name}")  # a variant's own name (its first alias may be the chip's)
    assert reply.kind == "fit", (reply.kind, reply.summary[:200])
    assert [s.gpu_id for s in reply.subjects] == [device.id]
    assert device.short_name in reply.title


@pytest.mark.parametrize(("text", "want"), sorted(TYPED.items()))
def test_the_names_people_type_for_the_new_models(text: str, want: str) -> None:
    q = parse(f"can i run {text} on a 4090?", VOCAB)
    assert q.model is not None and q.model.id == want, q.model


@pytest.mark.parametrize(("text", "want"), sorted(TYPED_DEVICES.items()))
def test_the_names_people_type_for_the_new_devices(text: str, want: str) -> None:
    q = parse(f"qwen3 8b on {text}", VOCAB)
    assert q.gpu is not None and q.gpu.id == want, q.gpu


def test_bare_chip_names_answer_their_sizes_together() -> None:
    for text, chip in (("arc b390", "arc-b390"), ("x2 elite", "snapdragon-x2-elite")):
        reply = answer(f"qwen3 8b on {text}")
        assert reply.kind == "variants", (text, reply.kind)
        assert {s.gpu_id for s in reply.subjects} <= {g.id for g in NEW_DEVICES if g.chip == chip}


@pytest.mark.parametrize("model", sized_models(), ids=lambda s: s.id)
def test_every_name_of_a_size_only_model_is_that_model(model) -> None:
    for name in (model.name, model.id, *model.aliases, model.hf_repo):
        q = parse(f"{name} on a 4090", VOCAB)
        assert q.model is not None and q.model.id == model.id, (name, q.model)


@pytest.mark.parametrize("model", sized_models(), ids=lambda s: s.id)
def test_a_size_only_models_repo_id_gets_its_memory_only_card(model) -> None:
    reply = answer(f"{model.hf_repo} on {BIG}")
    assert reply.kind == "memory_only", (reply.kind, reply.summary[:200])
    assert [s.model_id for s in reply.subjects] == [model.id]

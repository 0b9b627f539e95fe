"""Session commands never ignore input: /mygpu takes VRAM, RAM, Apple names and dominant variants, says
what it saved or why not, in the user's language; German command names work like the English ones."""

from __future__ import annotations

import pytest

from bot import commands
from bot.service import Service, User
from catalog.facts import load_facts
from storage.userdata import UserDataStore

CATALOG = load_facts()
ALICE = User(id="tg:1")


@pytest.fixture
async def service(tmp_path):
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        service = Service(CATALOG, store=store)
        yield service
        await service.usage.flush()


async def test_mygpu_ram_only_is_saved_and_said(service):
    reply = await service.answer("/mygpu ram 96gb", user=ALICE)
    assert reply.kind == "settings" and "96 GB" in reply.summary
    settings = await service.answer("/settings", user=ALICE)
    assert any(row.value == "96 GB" for row in settings.sections[0].rows)


async def test_mygpu_by_vram_is_a_generic_gpu_used_later(service):
    reply = await service.answer("/mygpu 16gb vram", user=ALICE)
    assert reply.kind == "settings" and "16 GB" in reply.summary
    fit = await service.answer("can I run qwen3 8b?", user=ALICE)
    assert fit.kind == "fit" and fit.subjects[0].gpu_memory_gb == pytest.approx(16, abs=0.1)
    assert any(n.code == "generic_gpu" for n in fit.subjects[0].notes)


async def test_mygpu_cpu_only_with_ram(service):
    await service.answer("/mygpu cpu only ram 64gb", user=ALICE)
    fit = await service.answer("can I run qwen3 8b?", user=ALICE)
    assert any(n.code == "generic_cpu" for n in fit.subjects[0].notes), fit.subjects


@pytest.mark.parametrize("lang", ["en", "de"])
async def test_mygpu_a_named_cpu_keeps_its_channels(service, lang):
    """ "/mygpu epyc 9654 384gb ram": later answers run on its 12 DDR5 channels, not a dual-channel guess."""
    reply = await service.answer("/mygpu epyc 9654 ram 384gb", user=ALICE, locale=lang)
    assert reply.kind == "settings" and "EPYC 9654" in reply.summary, reply.summary
    fit = await service.answer("can I run qwen3 8b?", user=ALICE, locale=lang)
    assert any(
        n.code == "named_cpu" and n.values["bandwidth"] == 460.8 for n in fit.subjects[0].notes
    )  # a number: the card writes it the locale's way
    settings = await service.answer("/settings", user=ALICE, locale=lang)
    assert any("EPYC 9654" in row.value for row in settings.sections[0].rows)


async def test_mygpu_german_is_answered_in_german(service):
    reply = await service.answer("/mygpu 16gb vram", user=ALICE, locale="de")
    assert reply.locale == "de" and "Gespeichert" in reply.summary


async def test_mygpu_apple_core_count_is_not_a_device_count(service):
    reply = await service.answer("/mygpu m2 max 38-core 96gb", user=ALICE)
    assert reply.kind == "settings" and "M2 Max 96GB" in reply.summary and "38x" not in reply.summary
    fit = await service.answer("can I run qwen3 32b?", user=ALICE)
    assert fit.subjects[0].gpu_id == "m2-max-96" and fit.subjects[0].gpu_count == 1


async def test_mygpu_dominant_variant_is_saved_and_the_other_offered(service):
    reply = await service.answer("/mygpu 3060", user=ALICE)
    assert reply.kind == "settings" and "RTX 3060 12GB" in reply.summary
    assert [a.question for a in reply.actions] == ["/mygpu rtx-3060-8gb"]


@pytest.mark.parametrize("text", ["/mygpu blorp", "/mygpu qwen3 32b", "/mygpu rx 5500 xt", "/mygpu 4090 + 3090"])
async def test_mygpu_never_says_saved_for_what_it_could_not_read(service, text):
    reply = await service.answer(text, user=ALICE)
    assert reply.kind == "settings" and "did not save" in reply.summary, reply.summary
    assert "/mygpu" in reply.summary or "know" in reply.summary


async def test_a_saved_gpu_is_used_for_my_gpu_questions(service):
    await service.answer("/mygpu 4090", user=ALICE)
    for text in ("can my gpu run qwen3 8b", "läuft qwen3 8b auf meiner gpu?", "qwen3 32b on my gpu"):
        reply = await service.answer(text, user=ALICE)
        assert reply.subjects and reply.subjects[0].gpu_id == "rtx-4090", (text, reply.subjects)


@pytest.mark.parametrize(
    ("typed", "name"),
    [
        ("/hilfe", "help"), ("/passt qwen3", "fit"), ("/tempo qwen3", "speed"), ("/kosten qwen3", "cloud"),
        ("/preise qwen3", "cloud"), ("/quanten qwen3", "quant"), ("/grafikkarten qwen3", "gpus"),
        ("/modelle 3090", "models"), ("/finetuning qwen3", "finetune"), ("/vergleich a b", "compare"),
        ("/lohnt qwen3", "tco"), ("/meinegpu 3090", "mygpu"), ("/einstellungen", "settings"),
        ("/vergessen", "forget"), ("/HILFE@FitBot", "help"), ("/sprache de", "lang"),
    ],
)  # fmt: skip
def test_german_command_names(typed, name):
    assert commands.read(typed).name == name


async def test_german_commands_answer(service):
    assert (await service.answer("/hilfe", user=ALICE, locale="de")).kind == "help"
    fit = await service.answer("/passt qwen3-8b rtx 4090", user=ALICE)
    assert fit.kind == "fit" and fit.subjects[0].model_id == "qwen3-8b"
    speed = await service.answer("/tempo qwen3-8b rtx 4090", user=ALICE)
    assert speed.kind == "speed"

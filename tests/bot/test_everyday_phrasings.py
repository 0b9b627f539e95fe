"""Classes of everyday phrasing, through the whole service (the parser's readings of them are
classes of bench/question_gen.py):

- an engine's command word in a sentence ("vllm serve llama 3.1 8b on a 4090 with 8 users", "how many
  users can vllm serve with …", "llama-server qwen3 32b on 2x 3090") is a question about that engine,
  answered with its card, not a paste to diagnose; a command the engine accepts (its model in one word:
  a repo id, a file, a tag) is still diagnosed;
- a memory size said as unified memory ("is 128gb unified memory enough for …", "… mit 64 GB
  gemeinsamem Speicher") is a device of that size whose GPU share is the smallest any unified-memory
  platform of that size leaves, with a note that says what it stands for;
- a phone or tablet is no device of the catalog: the card says so, and one tap asks about its memory;
- people served at once counted in words ("two people", "fünf Kollegen"), and a stated prompt longer
  than the default context (which then holds it);
- how much memory a model, or its KV cache, needs at a context: the device list says weights, KV cache
  and runtime.
"""

from __future__ import annotations

import asyncio
import random
import re

import pytest

from bot.render.text import to_console
from bot.reply import Reply
from bot.service import Service
from catalog.facts import load_facts
from core.memory import unified_fraction

CATALOG = load_facts()
SERVICE = Service(CATALOG)
RNG = random.Random(38)
MODELS = RNG.sample([m for m in CATALOG.models if len(m.name.split()) >= 2 and m.total_params < 40e9], 12)
DEVICES = ("RTX 4090", "RTX 3090", "L40S", "A100 80GB")
SPOKEN = {
    "vllm": (
        "vllm serve {m} on a {g} with 8 users",
        "how many users can vllm serve with {m} on an {g}",
        "can vllm serve {m} on a {g}",
        "vllm serve {m} auf einer {g} für 8 Nutzer",
    ),
    "llama.cpp": (
        "llama-server {m} on {g}",
        "ollama run {m} on my {g}",
        "llama-server {m} auf meiner {g}",
        "ollama run {m} auf meiner {g}",
    ),
}


def ask(text: str) -> Reply:
    return asyncio.run(SERVICE.answer(text))


@pytest.mark.parametrize("engine", sorted(SPOKEN))
@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.id)
def test_a_command_word_in_a_sentence_is_a_question_about_that_engine(engine: str, model: object) -> None:
    for form in SPOKEN[engine]:
        text = form.format(m=model.name, g=RNG.choice(DEVICES))  # type: ignore[attr-defined]
        reply = ask(text)
        assert reply.kind not in ("diagnose", "error", "suggest"), (text, to_console(reply)[:400])
        subject = reply.subjects[0]
        assert subject.model_id == model.id and subject.engine == engine, (text, subject)  # type: ignore[attr-defined]
        assert reply.locale == ("de" if " auf " in text else "en"), text


@pytest.mark.parametrize(
    "text",
    [
        "vllm serve Qwen/Qwen3-32B-AWQ --max-model-len 32768 on my a6000",
        "vllm serve Qwen/Qwen3-32B-AWQ on my a6000",
        "ollama run qwen3:8b on my rtx 3060",
        "llama-server -m Qwen3-32B-Q4_K_M.gguf -c 32768 on my rtx 4090",
        "ollama run qwen3 on my rtx 3060",
    ],
)
def test_a_command_the_engine_accepts_is_still_diagnosed(text: str) -> None:
    assert ask(text).kind == "diagnose", text


def test_the_users_said_with_a_spoken_vllm_command_are_served() -> None:
    reply = ask("vllm serve llama 3.1 8b on a 4090 with 8 users")
    assert reply.subjects[0].figures.users == 8  # type: ignore[union-attr]


UNIFIED = (
    ("is {n}gb unified memory enough for {m}", "en"),
    ("{m} on {n} GB of unified memory", "en"),
    ("can i run {m} with {n}GB unified RAM", "en"),
    ("reichen {n} GB Unified Memory für {m}", "de"),
    ("läuft {m} mit {n} GB gemeinsamem Speicher?", "de"),
)


@pytest.mark.parametrize("size", [16, 36, 64, 128, 512])
def test_unified_memory_is_a_device_of_that_size_with_the_tightest_gpu_share(size: int) -> None:
    near = [g for g in CATALOG.gpus if g.unified_memory and g.category in ("apple", "apu") and g.vendor != "generic"]
    gap = min(abs(g.memory_bytes / 2**30 - size) for g in near)
    tightest = min(unified_fraction(g) for g in near if abs(g.memory_bytes / 2**30 - size) == gap)
    for form, lang in UNIFIED:
        model = RNG.choice(MODELS)
        reply = ask(form.format(n=size, m=model.name))
        assert reply.kind == "fit" and reply.locale == lang, (form, to_console(reply)[:400])
        subject = reply.subjects[0]
        assert subject.model_id == model.id and subject.gpu_memory_gb == size, (form, subject)
        usable = subject.figures.memory.usable_gib  # type: ignore[union-attr]
        assert usable == pytest.approx(size * tightest, rel=0.01), (form, usable)
        assert "generic_unified" in [n.code for n in subject.notes], form


PHONES = next(n for n in CATALOG.not_devices if n.stand_in)


@pytest.mark.parametrize("alias", PHONES.aliases)
def test_a_phone_is_no_device_of_the_catalog_and_one_tap_asks_about_its_memory(alias: str) -> None:
    for form, lang in (("can i run {m} on my {p}", "en"), ("läuft {m} auf meinem {p}?", "de")):
        model = RNG.choice(MODELS)
        reply = ask(form.format(m=model.name, p=alias))
        assert reply.kind == "suggest" and reply.locale == lang, (alias, to_console(reply)[:300])
        note = PHONES.note_de if lang == "de" else PHONES.note
        assert note in (reply.summary or ""), (alias, reply.summary)
        [action] = reply.actions
        assert PHONES.stand_in in action.query and alias not in action.query.lower(), action
        follow = ask(action.query)
        assert follow.kind == "fit" and follow.subjects[0].model_id == model.id, action.query


def test_the_users_said_in_words_are_served() -> None:
    reply = ask("can two people use qwen3 32b on my 4090 at the same time")
    assert reply.subjects[0].figures.users == 2  # type: ignore[union-attr]


def test_a_stated_prompt_longer_than_the_default_context_sets_the_context() -> None:
    reply = ask("how long to first token for a 32k prompt with qwen3 14b on a 4080")
    figures = reply.subjects[0].figures
    assert figures.prompt_tokens == 32768 and figures.context >= 32768 + 1024  # type: ignore[union-attr]


KV_QUESTIONS = (
    ("kv cache size for {m} at {c}", "en"),
    ("how big is the kv cache of {m} at {c} context", "en"),
    ("how much vram do i need for {m} at {c}", "en"),
    ("wie groß ist der kv cache von {m} bei {c}", "de"),
    ("kv-cache-bedarf von {m} bei {c} kontext", "de"),
)


@pytest.mark.parametrize("model", MODELS[:6], ids=lambda m: m.id)
def test_a_memory_question_names_weights_kv_cache_and_runtime_at_the_context(model: object) -> None:
    name = model.name  # type: ignore[attr-defined]
    for form, lang in KV_QUESTIONS:
        kv = []
        for c in ("8k", "32k"):
            reply = ask(form.format(m=name, c=c))
            assert reply.kind == "gpus" and reply.locale == lang, (form, to_console(reply)[:300])
            words = "KV-Cache" if lang == "de" else "KV cache"
            found = re.search(r"([\d.,]+) GiB (?:of )?" + words, reply.summary or "")
            assert found, (form, reply.summary)
            kv.append(float(found[1].replace(".", "").replace(",", ".") if lang == "de" else found[1]))
        assert kv[1] >= kv[0] > 0, (form, kv)  # a longer context holds as much or more (sliding windows cap it)


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("what's the latest model for a {g}", "en"),
        ("newest model that fits my {g}", "en"),
        ("welches ist das neueste modell für meine {g}", "de"),
        ("das aktuellste llm für meine {g}?", "de"),
    ],
)
def test_the_newest_models_are_listed_newest_first(text: str, lang: str) -> None:
    released = {m.name: m.release for m in CATALOG.models}
    for g in DEVICES:
        reply = ask(text.format(g=g))
        assert reply.kind == "models" and reply.locale == lang, (text, to_console(reply)[:300])
        names = [row.label.split(". ", 1)[1] for row in reply.sections[0].rows]
        dates = [released[n] for n in names if n in released]
        assert len(dates) >= 3 and dates == sorted(dates, reverse=True), (text, g, dates)


@pytest.mark.parametrize(
    "text",
    [
        "how much vram for full fine-tuning {m}",
        "vram needed for lora on {m}",
        "wie viel vram für full finetuning von {m}",
        "wie viel speicher braucht qlora für {m}",
    ],
)
def test_a_memory_question_about_training_is_answered_with_training_memory(text: str) -> None:
    for model in MODELS[:4]:
        reply = ask(text.format(m=model.name))
        assert reply.kind == "finetune", (text, to_console(reply)[:300])
        assert reply.subjects[0].model_id == model.id


@pytest.mark.parametrize("chip", ["m4 pro", "m4 max", "m3 max"])
def test_a_compared_device_with_memory_sizes_is_the_smallest_that_holds_the_model(chip: str) -> None:
    for text, model, lang in ((f"which is faster for qwen3 14b: {chip} or rtx 4090", "qwen3-14b", "en"),
                              (f"läuft qwen3 32b schneller auf {chip} oder 5090?", "qwen3-32b", "de")):  # fmt: skip
        reply = ask(text)
        assert reply.kind == "compare" and reply.locale == lang, (text, to_console(reply)[:300])
        chosen = reply.subjects[0]
        assert chosen.figures.verdict in ("fits", "tight"), chosen  # type: ignore[union-attr]
        assert f'"{chip}"' in (reply.summary or "") or f"„{chip}“" in (reply.summary or ""), reply.summary
        others = [w for a in reply.actions for w in a.query.split() if CATALOG.gpu(w.strip(":?")) is not None]
        assert others, reply.actions
        for other in others:  # every size smaller than the one read does not hold the model
            gpu = CATALOG.gpu(other.strip(":?"))
            if gpu is not None and gpu.memory_bytes < chosen.gpu_memory_gb * 2**30 - 2**29:  # type: ignore[operator]
                fit = ask(f"/fit {model} {other.strip(':?')}").subjects[0].figures
                assert fit.verdict not in ("fits", "tight"), (text, other)  # type: ignore[union-attr]


PROVIDERS = sorted({o.provider for o in CATALOG.offers if o.provider})
PROVIDER_FORMS = (("how much does {m} cost on {p}", "en"), ("{m} on {p} per month", "en"),
                  ("was kostet {m} bei {p}", "de"))  # fmt: skip


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_named_cloud_provider_shows_its_own_offers(provider: str) -> None:
    model = RNG.choice(MODELS)
    for form, lang in PROVIDER_FORMS:
        spelled = RNG.choice((provider, provider.lower(), provider.split(" (")[0]))
        reply = ask(form.format(m=model.name, p=spelled))
        assert reply.kind == "cloud" and reply.locale == lang, (form, spelled, to_console(reply)[:300])
        rows = reply.table.rows if reply.table else ()
        theirs = [r for r in rows if r[0].startswith(provider)]
        if theirs:  # the provider holds the model: its offers only
            assert len(theirs) == len(rows), (spelled, rows)
        assert provider in (reply.summary or ""), (spelled, reply.summary)


@pytest.mark.parametrize(
    "text",
    ["run qwen3 8b and whisper together on my 3090", "a vast model on my rtx 3090", "qwen3 8b on a 3090, modal window"],
)
def test_everyday_words_that_start_a_provider_name_are_no_provider(text: str) -> None:
    assert ask(text).kind != "cloud", text

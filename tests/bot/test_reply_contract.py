"""One contract for every reply (issue 33): ``docs/reply.schema.json``, and what each kind carries.

Every reply about a model on hardware names its model, device, quant, context and engine in
``subjects`` and carries the numbers its card shows in ``figures``, whatever kind of answer it is.
Regenerate the schema after changing ``bot/reply.py``:

    .venv/bin/python -c "import json,bot.reply as r; print(json.dumps(r.Reply.model_json_schema(mode='serialization'), indent=1, sort_keys=True))" > docs/reply.schema.json
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import jsonschema
import pytest

from bot.reply import Reply
from bot.service import Service
from catalog.facts import load_facts

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "reply.schema.json"
# (question, its kind): each kind about a model on hardware, in both languages
ABOUT_A_SETUP = (
    ("/fit qwen3-32b rtx 4090 32k", "fit"),
    ("passt qwen3 32b auf zwei 3090?", "fit"),
    ("/speed llama-3.1-8b-instruct rtx 3060", "speed"),
    ("/quant gemma-3-27b-it rtx 4090", "quant"),
    ("/cloud llama-3.3-70b-instruct", "cloud"),
    ("qwen3 8b vs llama 3.1 8b on a 3060", "compare"),
    ("4090 oder 5090 für qwen3 32b?", "compare"),
    ("llama-server -m Qwen3-32B-Q4_K_M.gguf -c 32768 -ngl 99 on my rtx 4090", "diagnose"),
    ("vllm serve Qwen/Qwen3-8B --max-model-len 131072 on my rtx 4090", "diagnose"),
    ("OLLAMA_CONTEXT_LENGTH=32768 ollama run qwen3:14b on my rtx 3060", "diagnose"),
    ("qwen3-14b with whisper on an rtx 3060 12gb", "together"),
    ("qwen3 32b with qwen3 0.6b as draft model on a 4090", "fit"),  # a fit card with the draft's sections
    ("qwen3-vl-8b-instruct with 4 images on an rtx 3060", "fit"),  # a fit card with the images' sections
)


def test_the_stored_schema_is_the_reply_models():
    assert json.loads(SCHEMA.read_text(encoding="utf-8")) == Reply.model_json_schema(mode="serialization")


@pytest.fixture(scope="module")
def replies():
    async def ask_all():
        service = Service(load_facts())
        try:
            return [(text, kind, await service.answer(text)) for text, kind in ABOUT_A_SETUP]
        finally:
            await service.close()

    return asyncio.run(ask_all())


def test_every_reply_validates_against_the_stored_schema(replies):
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    for _, _, reply in replies:
        jsonschema.validate(json.loads(reply.model_dump_json()), schema)


def test_every_reply_about_a_setup_names_it_and_carries_its_figures(replies):
    for text, kind, reply in replies:
        assert reply.kind == kind, (text, reply.kind, reply.title)
        assert reply.subjects, (text, "no subjects")
        for subject in reply.subjects:
            assert subject.model_id and subject.quant and subject.engine, (text, subject)
            assert subject.figures is not None, (text, subject.model_id, "no figures")
        if kind != "cloud":  # a cloud answer's hardware is each offer's own
            assert all(s.gpu_id and s.context for s in reply.subjects), text

"""A repo id of a copy of a catalog model answers for that model when the hub is out of reach (issue 34).

The class: every catalog model's GGUF repo (with a quant), and its own repo with the suffix of a
quantized copy (AWQ, FP8), asked without a hub and with the hub switched off; never the error card,
always the catalog model, and the card says how the repo was read.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from bot.service import Service
from catalog.facts import load_facts

CATALOG = load_facts()
GGUF = [(m.gguf_repo, m.id) for m in CATALOG.models if m.gguf_repo and "/" in m.gguf_repo]
COPIES = [
    (f"{m.hf_repo}-{suffix}", m.id, suffix)
    for m in CATALOG.models
    if m.hf_repo and m.variant not in ("base", "embedding") and not m.hf_repo.lower().endswith(("-fp8", "-awq"))
    for suffix in ("AWQ", "FP8")
][::7]  # every seventh: a spread over the catalog, in seconds


@pytest.fixture(scope="module")
def answered():
    async def ask_all():
        service = Service(CATALOG)  # no hub: as offline as it gets
        try:
            out = [(repo, mid, None, await service.answer(f"{repo} Q4_K_M on 2x h100")) for repo, mid in GGUF]
            out += [(repo, mid, s, await service.answer(f"{repo} on 2x h100")) for repo, mid, s in COPIES]
            return out
        finally:
            await service.close()

    return asyncio.run(ask_all())


def test_every_copy_answers_for_its_catalog_model(answered):
    wrong = [
        (repo, reply.kind, reply.title)
        for repo, mid, _, reply in answered
        if reply.kind == "error" or not reply.subjects or reply.subjects[0].model_id != mid
    ]
    assert len(answered) > 80 and wrong == []


def test_the_card_says_how_the_repo_was_read_and_keeps_its_quant(answered):
    for repo, _, suffix, reply in answered:
        assert repo in reply.summary or repo in reply.model_dump_json(), repo
        assert reply.subjects[0].quant == (suffix or "Q4_K_M"), (repo, reply.subjects[0].quant)


@pytest.mark.parametrize(
    ("question", "model", "quant"),
    [
        ("unsloth/Qwen3.5-27B-GGUF Q6_K on a 4090", "qwen3.5-27b", "Q6_K"),
        ("Qwen/Qwen3-14B-AWQ on a 4090", "qwen3-14b", "AWQ"),
        ("hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M on a 3060", "qwen3-8b", "Q4_K_M"),
    ],
)
def test_with_the_hub_switched_off(question, model, quant, tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "FITBOT_DATA_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-m", "bot.app.cli", "ask", "--json", question], env=env, capture_output=True, text=True
    )
    reply = json.loads(out.stdout)
    assert reply["kind"] != "error" and reply["subjects"][0]["model_id"] == model
    assert reply["subjects"][0]["quant"] == quant

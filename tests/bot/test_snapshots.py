"""Every card kind in both languages, rendered for the console, against reviewed snapshots.

The snapshots in tests/bot/snapshots/ were read by a person; when a fact file or a formula changes
on purpose, regenerate them with ``UPDATE_SNAPSHOTS=1 pytest tests/bot/test_snapshots.py`` and
review the diff before committing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.render.text import to_console
from bot.service import Service
from catalog.facts import load_facts

SNAPSHOTS = Path(__file__).with_name("snapshots")
CARDS = {
    "fit": "/fit glm-4.5-air rtx 5090 32k",
    "fit_offload": "/fit glm-4.5-air rtx 4090 ram 128gb",
    "fit_apple": "/fit gpt-oss-120b m3 ultra 512",
    "speed": "/speed llama-3.3-70b-instruct 2x 3090",
    "cloud": "/cloud qwen3-32b",
    "quant": "/quant qwen3-32b rtx 4090",
    "gpus": "/gpus llama-3.1-8b-instruct",
    "models": "/models rtx 4060 ti 16gb",
    "finetune": "/finetune llama-3.1-8b-instruct rtx 4090",
    "tco": "/tco qwen3-32b rtx 5090",
    "compare": "/compare rtx 4090 vs rtx 5090 qwen3-32b",
    "help": "/help",
    "typo": "/fit lama 3.1 8b rtx 4090x",
    "suggest": "/fit lama 3 70 4090",
    "not_a_device": "/fit glm-4.5-air mac studio m4 ultra",
}


@pytest.fixture(scope="module")
def service():
    # built_at stays empty and the version is pinned, so the footer does not change with every fact edit
    return Service(load_facts().model_copy(update={"version": "snapshot"}))


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("name", list(CARDS))
async def test_card_matches_reviewed_snapshot(service, name, lang):
    reply = await service.answer(CARDS[name], locale=lang)
    text = to_console(reply.model_copy(update={"locale": lang}))
    path = SNAPSHOTS / f"{name}.{lang}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")

"""Every card kind in both languages, rendered for the console, Telegram and Discord, against reviewed
snapshots; and no English sentence in a German card.

The snapshots in tests/bot/snapshots/ were read by a person; when a fact file or a formula changes
on purpose, regenerate them with ``UPDATE_SNAPSHOTS=1 pytest tests/bot/test_snapshots.py`` and
review the diff before committing. Console snapshots are ``<card>.<lang>.txt``; Telegram ones
``<card>.<lang>.telegram.html`` (each message, then its buttons); Discord ones
``<card>.<lang>.discord.json`` (the embeds and buttons as sent).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

import pytest

from bot.render.discord_embed import to_discord
from bot.render.telegram_html import to_telegram
from bot.render.text import to_console
from bot.service import Service
from catalog.facts import load_facts

SNAPSHOTS = Path(__file__).with_name("snapshots")
LOCALES = Path(__file__).resolve().parents[2] / "locales"
CARDS = {
    "fit": "/fit glm-4.5-air rtx 5090 32k",
    "fit_details": "/fit glm-4.5-air rtx 5090 32k details",
    "fit_tight": "/fit qwen3-32b rtx 4090 ctx 20k",
    "fit_offload": "/fit glm-4.5-air rtx 4090 ram 128gb",
    "fit_no_fit": "/fit llama-3.3-70b-instruct rtx 4090 ram 16gb",
    "fit_apple": "/fit gpt-oss-120b m3 ultra 512",
    "fit_long_context": "/fit phi-4 rtx 4090 64k",
    "fit_monthly": "/fit qwen3-32b rtx 4090 monthly",
    "speed": "/speed llama-3.3-70b-instruct 2x 3090",
    "cloud": "/cloud qwen3-32b",
    "cloud_monthly": "/cloud qwen3-32b monthly",
    "quant": "/quant qwen3-32b rtx 4090",
    "gpus": "/gpus llama-3.1-8b-instruct",
    "models": "/models rtx 4060 ti 16gb",
    "models_coding": "/models 2x rtx 3090 coding",
    "finetune": "/finetune llama-3.1-8b-instruct rtx 4090",
    "finetune_no_gpu": "/finetune qwen3-32b",
    "tco": "/tco qwen3-32b rtx 5090",
    "tco_mac": "/tco qwen3-32b m3 ultra 96",
    "tco_no_fit": "/tco deepseek-v3 rtx 5090",
    "compare": "/compare rtx 4090 vs rtx 5090 qwen3-32b",
    "help": "/help",
    "typo": "/fit lama 3.1 8b rtx 4090x",
    "suggest": "/fit lama 3 7 4090",
    "not_a_device": "/fit glm-4.5-air mac studio m4 ultra",
    "error": "/fit qwen3-32b rtx 4090 awq llama.cpp",
    "settings_here": "/settings",
}
# Words shared by both languages' cards or names, not English sentences: units, engines, tensor types.
ALLOWED_ENGLISH = {"decode", "prefill", "cache", "offload", "tokens", "batch", "spot", "reasoning", "details"}


@pytest.fixture(scope="module")
def service():
    # built_at stays empty and the version is pinned, so the footer does not change with every fact edit
    return Service(load_facts().model_copy(update={"version": "snapshot"}))


def telegram_text(reply) -> str:
    parts = []
    for i, message in enumerate(to_telegram(reply)):
        parts.append(f"--- message {i + 1}\n{message.text}")
        if message.buttons:
            parts.append(
                "--- buttons\n" + "\n".join(f"[{label}] {reply.actions[j].query}" for label, j in message.buttons)
            )
    return "\n".join(parts) + "\n"


def discord_text(reply) -> str:
    message = to_discord(reply)
    data = {
        "embeds": message.embeds,
        "buttons": [[label, reply.actions[j].query] for label, j in message.buttons],
        "image": message.image_name,
    }
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


RENDERERS = {"txt": to_console, "telegram.html": telegram_text, "discord.json": discord_text}


def check(path: Path, text: str) -> None:
    if os.environ.get("UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("name", list(CARDS))
async def test_card_matches_reviewed_snapshots(service, name, lang):
    reply = await service.answer(CARDS[name], locale=lang)
    reply = reply.model_copy(update={"locale": lang})
    for suffix, render in RENDERERS.items():
        check(SNAPSHOTS / f"{name}.{lang}.{suffix}", render(reply))


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-zÄÖÜäöüß]{4,}", text)}


def _strings(node: object) -> list[str]:
    if isinstance(node, dict):
        return [s for value in node.values() for s in _strings(value)]
    return [str(node)]


def english_only_words() -> set[str]:
    """Words of the English catalog of strings that the German one never uses (the cards' own words)."""
    en = tomllib.loads((LOCALES / "en.toml").read_text(encoding="utf-8"))
    de = tomllib.loads((LOCALES / "de.toml").read_text(encoding="utf-8"))
    for table in ("discord", "telegram", "hub"):  # platform command texts and hub errors: not card wording
        en.pop(table, None)
    english = set().union(*(_words(re.sub(r"\{[^}]*\}", " ", s)) for s in _strings(en)))
    german = set().union(*(_words(s) for s in _strings(de)))
    return english - german - ALLOWED_ENGLISH


def catalog_words() -> set[str]:
    """Names from the catalog (models, devices, providers) may be English words."""
    catalog = load_facts()
    names = [m.name for m in catalog.models] + [g.name for g in catalog.gpus] + [g.short_name for g in catalog.gpus]
    names += [o.provider for o in catalog.offers] + [o.instance for o in catalog.offers]
    return set().union(*(_words(n) for n in names))


def german_card_text(reply) -> str:
    """Everything a German reader sees, minus their own words (the echo), commands and button queries."""
    without = reply.model_copy(update={"echo": "", "code": (), "actions": ()})
    labels = " ".join(a.label for a in reply.actions)
    embeds = to_discord(without).embeds
    discord = [e.get("title", "") + e.get("description", "") + e.get("footer", {}).get("text", "") for e in embeds]
    discord += [f["name"] + " " + f["value"] for e in embeds for f in e.get("fields", [])]
    telegram = [m.text for m in to_telegram(without)]
    return "\n".join([to_console(without), labels, *discord, *telegram])


@pytest.mark.parametrize("name", list(CARDS))
async def test_german_cards_contain_no_english_sentences(service, name):
    forbidden = english_only_words() - catalog_words()
    assert {"with", "users", "month", "fits", "cheapest", "unverified"} & forbidden  # the list is not empty
    reply = await service.answer(CARDS[name], locale="de")
    found = sorted(_words(german_card_text(reply)) & forbidden)
    assert found == [], f"English words in the German {name} card: {found}"


@pytest.mark.parametrize("name", ["fit", "fit_offload", "fit_no_fit", "fit_tight", "gpus", "models", "cloud", "quant"])
async def test_phone_cards_stay_small(service, name):
    """Default cards fit a phone screen: one Telegram message, short footnote, tables within 45 columns."""
    for lang in ("en", "de"):
        reply = await service.answer(CARDS[name], locale=lang)
        messages = to_telegram(reply)
        assert len(messages) == 1, name
        assert len(reply.assumptions) <= 200, reply.assumptions
        plain = re.sub(r"<[^>]+>", "", messages[0].text)
        for block in re.findall(r"<pre>(?!<code)(.*?)</pre>", messages[0].text, re.S):
            assert max(len(line) for line in block.split("\n")) <= 45, block
        assert plain.count("\n") <= 40, (name, plain.count("\n"))

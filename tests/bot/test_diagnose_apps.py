"""A pasted command through the real service, the CLI and both apps' renderers (and Telegram end to end)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from telegram.ext import Application

from bot.adapters.telegram.bot import build_application, serve
from bot.app.cli import main
from bot.question_kinds import is_paste
from bot.render.discord_embed import to_discord
from bot.render.telegram_html import to_telegram
from bot.render.text import to_console
from bot.service import Service, User
from catalog.facts import load_facts
from catalog.store import CatalogStore
from core.models import Catalog
from fitbot_fakes import fixtures
from fitbot_fakes.telegram_api import FakeTelegramAPI, parse_html
from storage.userdata import UserDataStore

telegram_api = fixtures.telegram_api
TOKEN = "123456:TEST-token"
PASTE = "llama-server -m /models/Qwen3-30B-A3B-Q4_K_M.gguf -ngl 99 -c 131072 --fit off\non my RTX 4090 with 64 GB RAM"
GERMAN = "ollama run qwen3:30b-a3b auf meiner RTX 3060 12GB mit 32 GB RAM"


@pytest.fixture(scope="module")
def plain() -> Service:
    return Service(load_facts().model_copy(update={"version": "test"}))


def answer(service: Service, text: str, locale: str | None = None):
    return asyncio.run(service.answer(text, locale, User()))


def test_english_paste_gets_the_diagnosis_and_the_corrected_command(plain):
    reply = answer(plain, PASTE)
    assert reply.kind == "diagnose" and reply.locale == "en" and reply.tone.value == "bad"
    assert "RTX 4090" in reply.title and "Qwen3-30B-A3B" in reply.title
    assert reply.code and "-c 40960" in reply.code[0].text
    text = to_console(reply)
    assert "What goes where" in text and "GPU 0 (48 layers)" in text and "Corrected command" in text


def test_german_words_get_a_german_card(plain):
    reply = answer(plain, GERMAN)
    assert reply.kind == "diagnose" and reply.locale == "de"
    text = to_console(reply)
    assert "Was wo liegt" in text and "Arbeitsspeicher" in text and "32 GB" not in reply.title
    assert "Standardkontext" in reply.assumptions


def test_vllm_paste_on_the_same_line_as_the_hardware(plain):
    reply = answer(plain, "vllm serve Qwen/Qwen3-32B-AWQ --max-model-len 32768 on a 3090")
    assert reply.kind == "diagnose" and "RTX 3090" in reply.title
    assert reply.code and "--max-model-len 8192" in reply.code[0].text


MODELFILE_VALUES = (
    'SYSTEM """You are a helper.\nKeep answers short."""',
    'TEMPLATE """{{ .Prompt }}"""',
    "# a comment",
)


@pytest.mark.parametrize("words", ["on my {gpu}", "auf meiner {gpu}", "this is on an {gpu}, does it fit?"])
@pytest.mark.parametrize("gpu", ["RTX 4090", "RTX 3060 12GB", "RX 7900 XTX"])
def test_a_modelfile_reads_the_words_after_it(plain, words, gpu):
    """A Modelfile with the user's words under it: the device they name is the one diagnosed, whatever
    instructions (multi-line SYSTEM/TEMPLATE values, comments) come between."""
    for value in MODELFILE_VALUES:
        reply = answer(plain, f"FROM qwen3:32b\n{value}\nPARAMETER num_ctx 16384\n{words.format(gpu=gpu)}")
        assert reply.kind == "diagnose" and gpu.split(" 12GB")[0] in reply.title, (value, reply.title)


def test_unknown_model_and_unreadable_pastes_get_a_clear_answer(plain):
    unknown = answer(plain, "llama-server -m foo.gguf -ngl 99 on my 4090")
    assert unknown.kind == "diagnose" and "foo.gguf" in unknown.summary and unknown.tone.value == "info"
    quotes = answer(plain, 'llama-server -m "broken.gguf -ngl 99 on my 4090')
    assert "quote" in quotes.summary
    long = answer(plain, "llama-server -m x.gguf " + "-ngl 99 " * 1200)
    assert "8000" in long.summary or "8,000" in long.summary


def test_a_question_is_not_a_paste():
    assert not is_paste("can I run qwen3 32b on my 4090?")
    assert not is_paste("main question: does gpt-oss-120b fit a 5090?")
    assert not is_paste("from berlin, what GPU should I buy?")
    assert is_paste("/diagnose")


def test_hostile_echo_is_escaped_and_cannot_ping(plain):
    reply = answer(plain, "llama-server -m <b>@everyone</b>.gguf -ngl 99 on my 4090")
    html = "".join(m.text for m in to_telegram(reply))
    assert "<b>@everyone</b>" not in html and "&lt;b&gt;" in html
    discord = to_discord(reply)
    assert "@everyone" not in str(discord).replace("@\u200beveryone", "")


def test_discord_and_telegram_render_the_placement(plain):
    reply = answer(plain, PASTE)
    html = "".join(m.text for m in to_telegram(reply))
    assert "llama-server" in html and "40960" in parse_html(html)[0]
    assert "40960" in str(to_discord(reply))


def test_cli_ask_diagnoses_a_paste(capsys):
    assert main(["ask", PASTE]) == 0
    out = capsys.readouterr().out
    assert "Corrected command" in out and "-c 40960" in out


# --- Telegram end to end ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return asyncio.run(CatalogStore(tmp_path_factory.mktemp("catalog") / "c.sqlite").load())


@pytest.fixture
async def service(catalog: Catalog, tmp_path: Path) -> AsyncIterator[Service]:
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        yield Service(catalog, store=store)


@contextlib.asynccontextmanager
async def running(api: FakeTelegramAPI, service: Service, **kwargs: Any) -> AsyncIterator[Application]:
    app = build_application(service, TOKEN, base_url=api.base_url, base_file_url=api.base_file_url, **kwargs)
    async with serve(app, poll_timeout=1):
        yield app


async def test_telegram_user_pastes_a_command(telegram_api: FakeTelegramAPI, service: Service) -> None:
    async with running(telegram_api, service, charts=False):
        telegram_api.push_update(telegram_api.make_message(PASTE, chat_id=77, language_code="en"))
        async with asyncio.timeout(10):
            while not [e for e in telegram_api.exchanges if e.method == "sendMessage" and e.status == 200]:
                await telegram_api.wait_call("sendMessage", count=1, timeout=10)
    sent = [e.response for e in telegram_api.exchanges if e.method == "sendMessage" and e.status == 200]
    assert sent and "Corrected command" in sent[0]["text"] and "-c 40960" in sent[0]["text"]
    assert not [e for e in telegram_api.exchanges if e.status == 400]


def test_a_log_that_failed_where_the_estimate_fits_says_so(plain):
    log = (
        "ggml_cuda_init: found 2 CUDA devices:\n"
        "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes\n"
        "  Device 1: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes\n"
        "llama_model_loader: loaded meta data with 35 key-value pairs and 707 tensors from /m/Qwen3-32B-Q4_K_M.gguf\n"
        "llama_context: n_ctx         = 8192\n"
        "alloc_tensor_range: failed to allocate CUDA1 buffer of size 12884901888\n"
    )
    reply = answer(plain, log)
    assert reply.kind == "diagnose" and "2x RTX 3090" in reply.title
    text = to_console(reply)
    assert "nvidia-smi" in text and "12.00 GiB on CUDA1" in text

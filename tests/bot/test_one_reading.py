"""The message is read once (issue 33): from ``Service.answer`` on, the message's text reaches no function
but ``bot.understand.understand`` (and what it calls), except to be echoed (a parameter named ``echo``) or,
for a paste, read by the paste's reader (a parameter named ``paste``, and what that reader calls).

Every Python call made while a question is answered is watched (``sys.setprofile`` on the loop and on the
answer worker); a call whose arguments hold the message itself (the very object, so slices and lower-cased
copies made inside ``understand`` do not count, nor does text echoed into a card) is a second reading.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from types import FrameType
from typing import Any

import pytest

from bench.question_gen import generate
from bot.service import Service, User
from catalog.facts import load_facts

ALLOWED = frozenset({"echo", "paste"})
# the service's own steps before the reading: the message comes in, is untagged, memoised by, understood
ENTRY = frozenset(
    {
        ("bot.service", "answer"),
        ("bot.service", "_answer_text"),
        ("bot.service", "_first_pass"),
        ("bot.service", "_understand_and_answer"),
        ("bot.reply", "untagged"),
        ("bot.service", "_off_loop"),
        ("bot.worker", "run"),
        ("bot.answers.route", "understood_key"),
        ("bot.answers.route", "understand"),
    }
)
READERS = frozenset({("bot.understand", "understand")})
PASTES = (
    "llama-server -m Qwen3-32B-Q4_K_M.gguf -c 32768 -ngl 99 on my rtx 4090",
    "/diagnose vllm serve Qwen/Qwen3-8B --max-model-len 32768 --gpu-memory-utilization 0.9",
    "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 20480.00 MiB on device 0: cudaMalloc failed: "
    "out of memory\nllama_init_from_model: failed to allocate buffer for kv cache",
    "| model | size | params | backend | ngl | test | t/s |\n| --- | ---: | ---: | --- | --: | --: | ---: |\n"
    "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | pp512 | 11000.00 ± 20.00 |\n"
    "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 120.00 ± 0.50 |\n\nrtx 4090",
)
QUESTIONS = (
    "ollama command for qwen3 8b on a 3060",
    "llama 3.3 70b with llama 3.2 1b as draft model on 2x 3090",
    "gemma 3 27b with 4 images of 1920x1080 on a 4090",
    "qwen3 8b and whisper on an rtx 4060 ti 16gb",
    "passt Qwen3 32B auf zwei 3090? details",
    "/models rtx 3060 12gb coding more",
    "/cloud llama-3.1-70b monthly",
    "olmo 2 7b instruct on a 4090",
    "unsloth/Qwen3-14B-GGUF Q6_K on a 3090",
    "/lang de",
    "/mygpu rtx 4090",
    "ich habe zwei 3090",
    "vergiss mich",
    "x" * 2500,
)


def _message(text: str) -> str:
    """A fresh string object equal to ``text`` (no constant elsewhere is the same object)."""
    return "".join(list(text))


class Watch:
    """Records calls that receive the message outside the reading and the allowed parameters."""

    def __init__(self, message: str) -> None:
        self.message = message
        self.found: list[str] = []
        self.inside: dict[int, list[FrameType]] = {}  # per thread: the frames whose extent may read

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        stack = self.inside.setdefault(threading.get_ident(), [])
        if event == "return" and stack and stack[-1] is frame:
            stack.pop()
            return
        if event != "call" or stack:
            return
        code = frame.f_code
        where = (frame.f_globals.get("__name__", ""), code.co_name)
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        holding = [n for n in names if frame.f_locals.get(n) is self.message]
        if where in READERS or "paste" in holding:
            stack.append(frame)  # the reading, or the paste's reader: what it calls may read the text
        elif holding and where not in ENTRY and not set(holding) <= ALLOWED:
            self.found.append(f"{where[0]}.{where[1]}({', '.join(holding)})")


@pytest.fixture(scope="module")
def catalog():
    return load_facts().model_copy(update={"version": "test"})


def _answer_watched(catalog, text: str) -> list[str]:
    message = _message(text)
    watch = Watch(message)

    async def go() -> None:
        service = Service(catalog)
        try:
            await service.answer(message, user=User(id="reader"))
        finally:
            await service.close()

    threading.setprofile(watch)  # the answer worker is started by the service, after this
    sys.setprofile(watch)
    try:
        asyncio.run(go())
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return watch.found


@pytest.mark.parametrize("text", [*PASTES, *QUESTIONS], ids=lambda t: t[:40])
def test_the_message_is_read_once(catalog, text):
    assert _answer_watched(catalog, text) == []


def test_generated_questions_are_read_once(catalog):
    """One question of every generated class (models, devices, counts, contexts, both languages)."""
    seen: dict[str, str] = {}
    for gen in generate(catalog, seed=33):
        seen.setdefault(gen.cls, gen.text)
    found = {text: calls for text in seen.values() if (calls := _answer_watched(catalog, text))}
    assert found == {}


def test_the_watch_sees_a_second_reading(catalog, monkeypatch):
    """The check can fail: a card step that takes the message under another name is found."""
    import bot.answers.route as route

    def read_again(self, q, lang, user, text, model_override=None):
        return original(self, q, lang, user, text, model_override)

    original = route.Answers.dispatch
    monkeypatch.setattr(route.Answers, "dispatch", read_again)
    assert any(call.endswith(".read_again(text)") for call in _answer_watched(catalog, "qwen3 8b on a 3060"))

"""Chat end to end: "on vulkan" / "mit ROCm" set the backend, "32 GB at 608 GB/s" describes a device."""

from __future__ import annotations

import asyncio

from bot.adapters.console import to_console
from bot.reply import Reply
from bot.service import Service
from catalog.facts import load_facts

SERVICE = Service(load_facts())


def answer(text: str) -> tuple[Reply, str]:
    reply = asyncio.run(SERVICE.answer(text))
    return reply, to_console(reply)


def test_the_backend_asked_for_is_the_one_on_the_card():
    (vulkan, vulkan_text), (rocm, rocm_text) = (
        answer("can qwen3 8b run on a 7900 xtx on vulkan?"),
        answer("läuft qwen3 8b auf einer 7900 xtx mit ROCm?"),
    )
    assert vulkan.subjects[0].gpu_id == rocm.subjects[0].gpu_id == "rx-7900-xtx"
    assert "backend Vulkan" in vulkan_text and "Backend ROCm/HIP" in rocm_text


def test_a_device_described_by_its_specs_gets_an_answer_in_both_languages():
    for text, line in (
        ("my GPU has 32 GB at 608 GB/s, can it run qwen3 32b?", "608 GB/s"),
        ("meine Grafikkarte hat 16 GB mit 448 GB/s und 40 TFLOPS, läuft gpt-oss 20b?", "40 TFLOPS"),
    ):
        reply, shown = answer(text)
        assert reply.kind == "fit", shown[:300]
        assert reply.subjects[0].gpu_memory_gb is not None and line in shown

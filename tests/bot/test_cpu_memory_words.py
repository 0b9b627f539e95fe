"""A bare memory size next to a named CPU is the machine's RAM (a CPU has no other memory), for every CPU
row, in both languages; the card then answers instead of asking, and its figures are written the
language's way ("460,8 GB/s" in German)."""

from __future__ import annotations

import pytest

from bot.service import Service
from catalog.facts import load_facts
from core.speed.cpu import cpus

CATALOG = load_facts()
PHRASES = {"en": "can I run qwen3 8b on a {cpu} with {gb} gb", "de": "passt qwen3 8b auf einen {cpu} mit {gb} gb"}
# a Mac, a Raspberry Pi or a laptop APU is that machine (its own memory sizes, its iGPU: their own tests)
ROWS = sorted((c for c in cpus().values() if c.platform not in ("apple", "pi", "laptop")), key=lambda c: c.id)


@pytest.fixture(scope="module")
def service():
    return Service(CATALOG)


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("cpu", ROWS, ids=lambda c: c.id)
async def test_a_named_cpu_with_a_memory_size_answers_with_that_ram(service, cpu, lang):
    gb = 64 if cpu.channels <= 2 else 256
    reply = await service.answer(PHRASES[lang].format(cpu=cpu.name, gb=gb), locale=lang)
    assert reply.kind == "fit", reply.summary
    assert f"{gb} GB" in reply.title
    figure = f"{cpu.bandwidth_gbps:.1f}"
    if not figure.endswith(".0"):
        assert (figure.replace(".", ",") if lang == "de" else figure) in reply.summary, reply.summary

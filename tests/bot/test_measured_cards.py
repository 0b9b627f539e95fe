"""Measured next to estimated (issue 38): every published run of a catalog setup shows on its card.

The class is every row of ``catalog/facts/measurements.toml`` on its device's own backend: its fit
card (both languages) carries the run in the speed section and in ``figures.measured``; another quant
of the same setup is scaled by the bytes decode reads and says so; the stored file is what
``bench/measurements_export.py`` writes from the calibration data.
"""

from __future__ import annotations

import asyncio

import pytest

from bench.measurements_export import OUT, render
from bot.service import Service
from catalog.extra_facts import measurements
from catalog.facts import load_facts
from core.weights import weights

CATALOG = load_facts()
GPUS = {g.id: g for g in CATALOG.gpus}
OWN = [m for m in measurements() if m.gpu_count == 1 and m.gpu_id in GPUS and GPUS[m.gpu_id].backend.value == m.backend]
SETUPS = sorted({(m.model_id, m.quant, m.gpu_id) for m in OWN})


def test_the_stored_runs_are_the_calibration_datas():
    assert OUT.read_text(encoding="utf-8") == render()


@pytest.fixture(scope="module")
def cards():
    async def ask_all():
        service = Service(CATALOG)
        try:
            return {
                (model, quant, gpu, lang): await service.answer(f"/fit {model} {gpu} {quant}", locale=lang)
                for model, quant, gpu in SETUPS
                for lang in ("en", "de")
            }
        finally:
            await service.close()

    return asyncio.run(ask_all())


def test_every_run_shows_on_its_setups_card(cards):
    shown = 0
    for (model, quant, gpu, lang), reply in cards.items():
        subject = reply.subjects[0]
        assert subject.model_id == model and subject.gpu_id == gpu and subject.quant == quant, (model, gpu, quant)
        if subject.figures is None or subject.figures.verdict not in ("fits", "tight"):
            continue  # an offloaded setup is not the one the run measured
        runs = {(m.kind, m.tokens_per_s) for m in OWN if (m.model_id, m.quant, m.gpu_id) == (model, quant, gpu)}
        got = {(m.kind, m.tokens_per_s) for m in subject.figures.measured if m.from_quant is None}
        assert got and got <= runs, (model, gpu, quant, got)
        label = "Measured" if lang == "en" else "Gemessen"
        assert any(r.label.startswith(label) for s in reply.sections for r in s.rows), (model, gpu, lang)
        shown += 1
    assert shown >= 40


async def test_another_quant_is_scaled_by_the_bytes_decode_reads_and_says_so():
    service = Service(CATALOG)
    try:
        reply = await service.answer("/fit qwen3-30b-a3b ryzen-ai-max-395-128 q8_0")
    finally:
        await service.close()
    (run,) = [m for m in reply.subjects[0].figures.measured if m.kind == "decode"]
    source = next(
        m for m in OWN if m.model_id == "qwen3-30b-a3b" and m.gpu_id == "ryzen-ai-max-395-128" and m.kind == "decode"
    )
    model = CATALOG.model("qwen3-30b-a3b")

    def read(quant: str) -> int:
        q = CATALOG.quant(quant)
        return weights(model, q, CATALOG.size(model.id, q.id)).total_bytes

    assert run.from_quant == source.quant
    assert run.tokens_per_s == pytest.approx(source.tokens_per_s * read(source.quant) / read("Q8_0"))
    assert "scaled from" in reply.model_dump_json()


async def test_vllm_cards_show_no_llama_bench_run():
    service = Service(CATALOG)
    try:
        reply = await service.answer("/fit gpt-oss-20b dgx-spark vllm")
    finally:
        await service.close()
    assert reply.subjects[0].figures.measured == ()

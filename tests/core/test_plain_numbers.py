"""Scans judge memory on plain numbers and time only the setups that hold the model: every shortcut
gives what the objects it stands for give (``fit.place``, ``fit.breakdown``, ``serving.decode_speeds``),
and every memo what a fresh computation gives."""

from __future__ import annotations

import random

import pytest

from catalog.facts import load_facts
from core import memory
from core.advice import FULL_FIT, kv_savings, quick_fit
from core.estimate import EstimateError, Request, estimate_of, hardware_on, scenario, varied
from core.fit import Verdict, breakdown, full_fit, max_context, memory_table, need_bytes, place
from core.models import Engine, KvCacheType
from core.quants.ladder import ladder, ladder_weights
from core.speed import constants as speed_constants
from core.speed.device import device_rates, forget_rates
from core.speed.serving import decode_speeds, single_stream
from core.weights import weights

CATALOG = load_facts()


def _scenarios(n: int, seed: int) -> list:
    rng = random.Random(seed)
    found = []
    while len(found) < n:
        request = Request(
            gpu_count=rng.choice((1, 1, 2, 4)),
            quant=rng.choice((None, "Q8_0", "Q2_K", "IQ4_XS", "BF16", "FP8")),
            context=rng.choice((None, 4096, 32768, 131072)),
            engine=rng.choice((None, None, Engine.VLLM)),
            kv_cache=rng.choice((None, None, KvCacheType.Q8_0, KvCacheType.FP8)),
            concurrent=rng.choice((None, None, 4)),
            ram_gb=rng.choice((None, 16, 256)),
        )
        try:
            found.append(scenario(rng.choice(CATALOG.models), rng.choice(CATALOG.gpus), request, CATALOG))
        except EstimateError:
            continue
    return found


SCENARIOS = _scenarios(150, 11)


def _bisect(s) -> int:
    """max_context as first written: a plain bisection on ``breakdown``."""
    lo, hi = 0, s.model.max_context // 256
    while lo < hi:
        mid = (lo + hi + 1) // 2
        mem, _ = breakdown(s.model, s.quant, s.hardware, s.workload, s.measured, mid * 256)
        lo, hi = (mid, hi) if mem.total_bytes <= mem.usable_bytes else (lo, mid - 1)
    return lo * 256


def test_the_plain_numbers_are_the_placement():
    verdicts = set()
    for s in SCENARIOS:
        placement = place(s.model, s.quant, s.hardware, s.workload, s.measured)
        fit = full_fit(s.model, s.quant, s.hardware, s.workload, s.measured)
        verdicts.add(placement.verdict)
        assert need_bytes(s.model, s.quant, s.hardware, s.workload, s.measured) == (
            placement.memory.total_bytes,
            placement.memory.usable_bytes,
        )
        assert (fit is not None) == (placement.verdict in FULL_FIT)
        if fit is not None:
            assert fit.verdict is placement.verdict
            assert (fit.total_bytes, fit.usable_bytes) == (placement.memory.total_bytes, placement.memory.usable_bytes)
            assert fit.host_bytes == placement.offload.bytes_in_ram
            full = decode_speeds(s.model, fit, s.hardware, s.workload, s.users, s.quant.id)
            assert full == decode_speeds(s.model, placement, s.hardware, s.workload, s.users, s.quant.id)
            # the scans' short-context figure is the estimate's tg128, the served one the estimate's at the context
            est = estimate_of(s)
            assert single_stream(s.model, fit, s.hardware, s.workload, s.quant.id) == est.speed.decode_tokens_per_s
            assert full.decode_tokens_per_s == est.speed.decode_tokens_per_s_at_context
    assert verdicts == set(Verdict)  # every branch of place() was compared


def test_the_memory_table_is_need_bytes_of_every_quant_at_every_context():
    contexts = (4096, 32768, 131072)
    for s in SCENARIOS[:40]:
        quants = [(q, CATALOG.size(s.model.id, q.id)) for q in ladder(s.model, s.engine, CATALOG)[:4]]
        usable, table = memory_table(s.model, quants, s.hardware, s.workload, contexts)
        assert len(table) == len(quants)
        for (quant, measured), totals in zip(quants, table, strict=True):
            need = [need_bytes(s.model, quant, s.hardware, s.workload, measured, ctx) for ctx in contexts]
            assert list(totals) == [total for total, _ in need]
            assert {u for _, u in need} == {usable}


def test_max_context_is_the_bisection_of_the_breakdown():
    for s in SCENARIOS:
        assert max_context(s.model, s.quant, s.hardware, s.workload, s.measured) == _bisect(s)


def test_max_context_is_the_bisection_where_the_answer_lies_inside():
    inside = 0
    for model in CATALOG.models[::2]:
        for gpu_id in ("rtx-3060-12gb", "rtx-4090", "h100-sxm"):
            for request in (Request(), Request(kv_cache=KvCacheType.Q8_0, concurrent=4), Request(engine=Engine.VLLM)):
                try:
                    s = scenario(model, CATALOG.gpu(gpu_id), request, CATALOG)
                except EstimateError:
                    continue
                longest = max_context(s.model, s.quant, s.hardware, s.workload, s.measured)
                assert longest == _bisect(s), (model.id, gpu_id, request)
                inside += 0 < longest < model.max_context // 256 * 256
    assert inside > 100  # the search between the ends ran, not only its shortcuts


def test_an_estimate_serves_the_speeds_decode_speeds_gives():
    for s in SCENARIOS[:60]:
        est = estimate_of(s)
        placement = place(s.model, s.quant, s.hardware, s.workload, s.measured)
        assert est.serving == decode_speeds(s.model, placement, s.hardware, s.workload, s.users, s.quant.id)


def test_kv_options_are_what_a_full_estimate_with_that_cache_says():
    for s in SCENARIOS[:60]:
        for option in kv_savings(s):
            e = estimate_of(varied(s, kv_cache=option.kv_cache))
            assert (option.kv_cache_bytes, option.total_bytes, option.verdict, option.max_context) == (
                e.memory.kv_cache_bytes,
                e.memory.total_bytes,
                e.verdict,
                e.max_context,
            )


def test_a_row_that_holds_the_model_is_what_its_placement_reports():
    s = SCENARIOS[0]
    for gpu in CATALOG.gpus[:80]:
        hardware = hardware_on(s, gpu)
        row = quick_fit(s, FULL_FIT, hardware)
        placement = place(s.model, s.quant, hardware, s.workload, s.measured)
        assert (row.verdict, row.offload, row.gpu_bytes, row.ram_bytes) == (
            placement.verdict,
            placement.offload.mode,
            placement.offload.gpu_bytes,
            placement.offload.bytes_in_ram,
        )


def test_ladder_rungs_weigh_what_weights_says_in_ladder_order():
    model = next(m for m in CATALOG.models if m.is_moe)
    first = next(ladder_weights(model, Engine.LLAMA_CPP, CATALOG))  # a scan that stops at the first rung
    rungs = list(ladder_weights(model, Engine.LLAMA_CPP, CATALOG))
    assert rungs[0] == first
    assert [q for q, _ in rungs] == ladder(model, Engine.LLAMA_CPP, CATALOG)
    for quant, w in rungs:
        assert w == weights(model, quant, CATALOG.size(model.id, quant.id))


def test_memoised_kv_bytes_and_shared_objects_are_fresh_figures():
    base = SCENARIOS[1]  # built at collection: other tests may have filled and cleared the shared objects since
    s = scenario(base.model, base.gpu, base.request, CATALOG)
    again = scenario(s.model, s.gpu, s.request, CATALOG)
    assert again.workload is s.workload and again.hardware is s.hardware  # one object per value
    copy = s.workload.model_copy()
    for context in (None, 256, 100_000):
        assert memory.kv_cache_bytes(s.model, s.workload, context) == memory.kv_cache_bytes(s.model, copy, context)
    assert memory.kv_cache_bytes(s.model, s.workload, concurrent=1) == memory.kv_cache_bytes(
        s.model, s.workload.model_copy(update={"concurrent": 1})
    )


@pytest.fixture
def restored_constants():
    saved = dict(speed_constants.DECODE_BW_EFFICIENCY)
    quants, moe = dict(speed_constants.QUANT_DECODE_FACTOR), speed_constants.MOE_EXPERT_EXTRA
    yield
    speed_constants.DECODE_BW_EFFICIENCY.update(saved)
    speed_constants.QUANT_DECODE_FACTOR.update(quants)
    speed_constants.MOE_EXPERT_EXTRA = moe
    forget_rates()


def test_device_rates_follow_rewritten_constants_once_forgotten(restored_constants):
    gpu = next(g for g in CATALOG.gpus if g.id == "rtx-4090")
    before = device_rates(gpu)
    assert device_rates(gpu) is before  # memoised per device object
    speed_constants.DECODE_BW_EFFICIENCY["cuda"] *= 2  # what bench/speed_calibration.py does while it fits
    forget_rates()
    assert device_rates(gpu).bandwidth_bytes_per_s == pytest.approx(2 * before.bandwidth_bytes_per_s)


def test_decode_speeds_follow_rewritten_constants_once_forgotten(restored_constants):
    s = next(s for s in SCENARIOS if s.model.is_moe and s.quant.id == "Q8_0" and s.count == 1)
    placement = place(s.model, s.quant, s.hardware, s.workload, s.measured)
    before = single_stream(s.model, placement, s.hardware, s.workload, s.quant.id)
    assert single_stream(s.model, placement, s.hardware, s.workload, s.quant.id) == before  # from the memos
    speed_constants.QUANT_DECODE_FACTOR["q8_0"] *= 3  # what bench/speed_calibration.py does while it fits
    speed_constants.MOE_EXPERT_EXTRA *= 3
    forget_rates()
    assert single_stream(s.model, placement, s.hardware, s.workload, s.quant.id) < before

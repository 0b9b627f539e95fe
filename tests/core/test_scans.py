"""The catalog scans' shortcuts give what the per-scenario functions they stand for give: the device scans
(``advice.fits_on``, ``advice.full_fit_speeds``) what ``quick_fit`` gives on each device, the quant choice on
plain parts (``quant_choice.pick_quant``) what a scenario of the same question gets, and the resolver's parts
(``estimate.resolved``) the scenario's own."""

from __future__ import annotations

import random

from catalog.facts import load_facts
from core.advice import FULL_FIT, RUNS, choose_quant, fits_on, full_fit_speeds, quick_fit
from core.estimate import EstimateError, Request, estimate_of, hardware_on, on_device, resolved, scenario, varied
from core.fit import Verdict, overflow, place
from core.models import Engine, KvCacheType
from core.quants.choice import pick_quant
from core.speed.serving import single_stream

CATALOG = load_facts()


def _requests(n: int, seed: int) -> list[Request]:
    rng = random.Random(seed)
    return [
        Request(
            gpu_count=rng.choice((1, 1, 2, 4)),
            quant=rng.choice((None, None, "Q8_0", "IQ2_M", "BF16")),
            context=rng.choice((None, 4096, 32768, 131072)),
            engine=rng.choice((None, None, Engine.VLLM)),
            kv_cache=rng.choice((None, None, KvCacheType.Q8_0, KvCacheType.FP8)),
            concurrent=rng.choice((None, None, 4)),
            ram_gb=rng.choice((None, 16, 256)),
        )
        for _ in range(n)
    ]


def _scenarios(n: int, seed: int, with_device: bool = True) -> list:
    rng = random.Random(seed)
    found = []
    for request in _requests(4 * n, seed):
        gpu = rng.choice(CATALOG.gpus) if with_device else None
        try:
            found.append(scenario(rng.choice(CATALOG.models), gpu, request, CATALOG))
        except EstimateError:
            continue
    return found[:n]


def test_the_device_scans_are_quick_fit_on_every_device():
    gpus = CATALOG.gpus
    verdicts = set()
    for s in _scenarios(12, 5, with_device=False):
        for speed_for in (RUNS, FULL_FIT):
            rows = fits_on(s, gpus, speed_for)
            expected = [quick_fit(s, speed_for, hardware_on(s, gpu)) for gpu in gpus]
            assert rows == expected
            verdicts |= {row.verdict for row in rows}
        speeds = full_fit_speeds(s, gpus)
        assert speeds == [row.decode_tokens_per_s for row in fits_on(s, gpus, FULL_FIT)]
    assert verdicts == set(Verdict)  # every branch was compared


def test_the_quant_choice_on_plain_parts_is_the_scenarios():
    picked_some = kv_picks = 0
    for s in _scenarios(300, 9):
        picked = pick_quant(s.model, s.hardware, s.workload, s.request.kv_cache, CATALOG)
        choice = choose_quant(s, CATALOG)
        assert (picked.choice() if picked is not None else None) == choice
        if picked is None or choice is None:
            continue
        picked_some += 1
        kv_picks += picked.kv_cache is not None
        there = varied(s, CATALOG, quant=choice.quant, **({"kv_cache": choice.kv_cache} if choice.kv_cache else {}))
        assert there.workload is picked.workload
        e = estimate_of(there)
        assert (picked.fit.verdict, picked.fit.total_bytes) == (e.verdict, e.memory.total_bytes)
        speed = single_stream(s.model, picked.fit, s.hardware, picked.workload, picked.quant.id)
        assert speed == e.speed.decode_tokens_per_s
    assert picked_some > 100 and kv_picks > 0


def test_the_resolvers_parts_are_the_scenarios():
    rng = random.Random(2)
    for request in _requests(200, 4):
        model = rng.choice(CATALOG.models)
        try:
            s = scenario(model, None, request, CATALOG)
        except EstimateError as error:
            try:
                resolved(model, request, CATALOG)
            except EstimateError as again:
                assert again.note == error.note
            else:
                raise AssertionError("the resolver let through what the scenario refused") from error
            continue
        parts = resolved(model, request, CATALOG)
        assert (parts.request, parts.quant, parts.measured, parts.workload) == (
            s.request,
            s.quant,
            s.measured,
            s.workload,
        )
        assert parts.workload is s.workload


def test_a_rig_row_is_what_the_rigs_estimate_says():
    s = scenario(CATALOG.model("llama-3.3-70b-instruct"), None, Request(), CATALOG)
    gpu = CATALOG.gpu("rtx-3090")
    for count in (1, 2, 4):
        e = estimate_of(on_device(s, gpu, count))
        row = quick_fit(s, FULL_FIT, hardware_on(s, gpu, count))
        assert row.verdict is e.verdict
        if e.verdict in FULL_FIT:
            assert (row.gpu_bytes, row.decode_tokens_per_s) == (e.memory.total_bytes, e.speed.decode_tokens_per_s)


def test_an_overflow_is_what_its_placement_reports():
    verdicts = set()
    for s in _scenarios(400, 13):
        placement = place(s.model, s.quant, s.hardware, s.workload, s.measured)
        over = overflow(s.model, s.quant, s.hardware, s.workload, s.measured)
        assert (over is None) == (placement.verdict in FULL_FIT)
        if over is not None:
            off = placement.offload
            assert over == (placement.verdict, off.mode, off.gpu_bytes, off.bytes_in_ram)
            verdicts.add((over.verdict, over.mode))
    assert {(Verdict.OFFLOAD, "experts"), (Verdict.OFFLOAD, "layers"), (Verdict.NO_FIT, "none")} <= verdicts

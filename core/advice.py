"""Advice around one scenario: the best quant that fits, KV-cache quantization, the smallest change
that makes it fit, and hardware to buy or rent.

Every recommendation is a variation of the scenario (``estimate.varied``, ``estimate.hardware_on``) placed with
``fit.place`` on the hardware it names, so advice never names a setup or quant the memory model says
would not fit.
"""

# no ``from __future__ import annotations``: pydantic reads these models' field types as objects instead of
# compiling each from a string, a few milliseconds of every start (``fitbot estimate``, issue 33)

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal, NamedTuple

from core import memory
from core.cost import OfferQuote, quote_offers
from core.estimate import (
    EstimateError,
    FitEstimate,
    Scenario,
    estimate_of,
    hardware_on,
    scenario,
    varied,
    workload_of,
)
from core.fit import FullFit, Verdict, full_fit, full_fit_verdict, host_weights_bytes, max_context, overflow, place
from core.launch.vllm_hardware import engine_runs, has_checkpoint, vllm_quant_problem
from core.memory import RAM_USABLE_FRACTION, usable_bytes
from core.models import (
    Backend,
    Catalog,
    Engine,
    Frozen,
    GpuSpec,
    Hardware,
    KvCacheType,
    ModelSpec,
    QuantSize,
    QuantSpec,
    Workload,
)
from core.notes import Note, note
from core.quants.choice import KV_CHOICES, QuantChoice, pick_quant
from core.quants.ladder import LOW_BITS, ladder
from core.quants.rules import no_second_gpu
from core.regions import restricted
from core.speed.serving import single_stream
from core.weights import WeightEstimate, weights

FULL_FIT = (Verdict.FITS, Verdict.TIGHT)
PRICE_PERFORMANCE_COUNTS = (1, 2, 3, 4, 8)  # rigs of 2, 4 and 8 cards are what people build
FixKind = Literal["kv", "context", "quant", "ram", "gpus"]
RAM_STEPS = (32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)


class KvOption(Frozen):
    kv_cache: KvCacheType
    kv_cache_bytes: int
    total_bytes: int
    saved_bytes: int  # against the first (16-bit) option
    verdict: Verdict
    verdict_changed: bool  # against the 16-bit cache
    max_context: int  # largest context fully on the GPU(s) with this cache type


class Fix(Frozen):
    """The smallest change that makes a tight, offload or no-fit setup fit (or run)."""

    kind: FixKind
    value: str  # "q8_0", "16384", "IQ4_XS", "96", "2"
    verdict: Verdict  # with the change
    reserve_bytes: int  # GPU memory left with the change
    scenario: Scenario  # the setup with the change
    estimate: FitEstimate


class Setup(Frozen):
    """A purchasable hardware setup that holds the model fully."""

    gpu_id: str
    gpu_name: str
    count: int
    memory_bytes: int  # all devices, physical
    total_bytes: int
    usable_bytes: int
    verdict: Verdict  # fits or tight
    engine: Engine
    decode_tokens_per_s: float
    price_usd: float | None  # all devices
    usd_per_token_per_s: float | None  # purchase price / decode tok/s


class HardwareAdvice(Frozen):
    best_single_gpu: Setup | None  # fastest single GPU that holds the model
    best_price_performance: Setup | None  # most tokens/s per dollar (1-4 identical GPUs or one box)
    best_apple: Setup | None  # cheapest Mac that holds the model
    cheapest_cloud: OfferQuote | None
    cheapest: Setup | None = None  # lowest purchase price that holds the model
    notes: tuple[Note, ...] = ()


def with_quant(s: Scenario, quant: QuantSpec, catalog: Catalog, **changes: object) -> Scenario:
    """The scenario with another quant (and its measured size), and any other request changes."""
    request = s.request.model_copy(update={"quant": quant.id, **changes})
    return scenario(s.model, s.gpu, request, quant=quant, measured=catalog.size(s.model.id, quant.id))


def choose_quant(
    s: Scenario, catalog: Catalog, checkpoints: frozenset[tuple[str, str]] | None = None
) -> QuantChoice | None:
    """The quant a practitioner would run: the first of the ladder that fits fully (``quant_choice.pick_quant``).

    Below ``LOW_BITS`` a quantized KV cache (q8_0, fp8 on vLLM) is tried first, since it costs far
    less quality than 2-bit weights. None when nothing fits fully in GPU memory.
    """
    picked = pick_quant(s.model, s.hardware, s.workload, s.request.kv_cache, catalog, checkpoints)
    return picked.choice() if picked is not None else None


def chosen_scenario(s: Scenario, catalog: Catalog, choice: QuantChoice) -> Scenario:
    """The scenario of ``choose_quant``'s pick, with the KV cache it needs."""
    quant = catalog.quant(choice.quant)
    assert quant is not None
    return with_quant(s, quant, catalog, **({"kv_cache": choice.kv_cache} if choice.kv_cache is not None else {}))


def best_quant(s: Scenario, catalog: Catalog) -> FitEstimate | None:
    """The estimate for ``choose_quant``'s pick (with the KV cache it needs); None if nothing fits fully."""
    choice = choose_quant(s, catalog)
    return estimate_of(chosen_scenario(s, catalog, choice)) if choice is not None else None


def nearest_fix(
    s: Scenario, catalog: Catalog, est: FitEstimate, checkpoints: frozenset[tuple[str, str]] | None = None
) -> Fix | None:
    """The smallest change that improves the verdict: KV cache, context, quant, RAM, a second GPU.

    Tight -> fits; offload -> fits fully; no-fit -> runs (with offload if need be). Changes are tried
    from the least intrusive; each is a full estimate, so the card can show its speed and command.
    """
    if est.verdict is Verdict.FITS:
        return None
    want: tuple[Verdict, ...] = {
        Verdict.TIGHT: (Verdict.FITS,),
        Verdict.OFFLOAD: (Verdict.FITS, Verdict.TIGHT),
    }.get(est.verdict, (Verdict.FITS, Verdict.TIGHT, Verdict.OFFLOAD))

    def attempt(kind: FixKind, value: str, quant: QuantSpec | None = None, **changes: object) -> Fix | None:
        try:
            there = with_quant(s, quant, catalog) if quant is not None else varied(s, catalog, **changes)
        except (EstimateError, ValueError):
            return None
        # memory first, on plain numbers (placed only when it overflows): the full estimate only for a change that helps
        setup = (there.model, there.quant, there.hardware, there.workload, there.measured)
        fit = full_fit(*setup)
        if (fit.verdict if fit is not None else place(*setup).verdict) not in want:
            return None
        e = estimate_of(there)
        return Fix(
            kind=kind, value=value, verdict=e.verdict, reserve_bytes=e.gpu_reserve_bytes, scenario=there, estimate=e
        )

    kvs = KV_CHOICES[s.engine]
    current = kvs.index(s.kv_cache) if s.kv_cache in kvs else 0
    for kv in kvs[current + 1 :]:
        if fix := attempt("kv", kv.value, kv_cache=kv):
            return fix
    shorter = est.max_context >= 4096 and est.max_context < est.context and est.verdict is not Verdict.NO_FIT
    if shorter and (fix := attempt("context", str(est.max_context), context=est.max_context)):
        return fix
    # the catalog rows on both sides: a vLLM scenario holds the checkpoint form of MXFP4 (core.weights.as_loaded)
    now = _bytes_per_weight(catalog.quant(s.quant.id) or s.quant)
    smaller = [
        q
        for q in ladder(s.model, s.engine, catalog)
        if _bytes_per_weight(q) < now
        and (s.engine is not Engine.VLLM or vllm_quant_problem(q.id, s.device) is None)
        and (s.engine is not Engine.VLLM or has_checkpoint(s.model, q.id, checkpoints))
    ]
    for q in smaller:
        if q.bits < LOW_BITS and est.verdict is not Verdict.NO_FIT:
            break  # never trade a running setup for 2-bit weights
        if fix := attempt("quant", q.id, q):
            return fix
    if est.verdict is Verdict.NO_FIT and est.short_ram_bytes > 0 and not est.hardware.unified_memory:
        need = (est.ram_bytes / RAM_USABLE_FRACTION) / 1e9
        ram = next((r for r in RAM_STEPS if r >= need), None)
        if ram is not None and (fix := attempt("ram", str(ram), ram_gb=ram)):
            return fix
    if not est.hardware.unified_memory and not no_second_gpu(s.device):
        count = s.count
        steps = (count * 2,) if est.verdict is not Verdict.NO_FIT else (count * 2, count * 4)
        for more in steps:
            if more > 8:
                break
            if fix := attempt("gpus", str(more), gpu_count=more):
                return fix
    return None


def _bytes_per_weight(q: QuantSpec) -> float:
    return max(q.bpw_dense, q.bpw_experts)


def kv_savings(s: Scenario, est: FitEstimate | None = None) -> tuple[KvOption, ...]:
    """The scenario with each KV-cache type the engine offers: f16/q8_0/q4_0 (llama.cpp), bf16/fp8 (vLLM).

    An option needs memory, verdict and largest context only: each is judged on plain numbers
    (``fit.full_fit``, placed only when it overflows) and searched (``fit.max_context``), without the
    speed of a full estimate."""
    options: list[KvOption] = []
    for kv in KV_CHOICES[s.engine]:
        if est is not None and kv is s.kv_cache:
            kv_bytes, total, verdict, longest = (
                est.memory.kv_cache_bytes,
                est.memory.total_bytes,
                est.verdict,
                est.max_context,
            )
        else:  # ``varied(s, kv_cache=kv)``: only the workload changes
            model, quant, hardware, workload, measured = s.model, s.quant, s.hardware, workload_of(s, kv), s.measured
            kv_bytes = memory.kv_cache_bytes(model, workload)
            if (fit := full_fit(model, quant, hardware, workload, measured)) is not None:
                total, verdict = fit.total_bytes, fit.verdict
            else:
                placement = place(model, quant, hardware, workload, measured)
                total, verdict = placement.memory.total_bytes, placement.verdict
            longest = max_context(model, quant, hardware, workload, measured)
        base = options[0] if options else None
        options.append(
            KvOption(
                kv_cache=kv,
                kv_cache_bytes=kv_bytes,
                total_bytes=total,
                saved_bytes=base.kv_cache_bytes - kv_bytes if base else 0,
                verdict=verdict,
                verdict_changed=base is not None and verdict is not base.verdict,
                max_context=longest,
            )
        )
    return tuple(options)


class _Need(NamedTuple):
    """What a scenario needs on any device, in plain numbers: device scans judge memory before placing."""

    weights: WeightEstimate
    kv_bytes: int
    per_device_bytes: int  # overhead each device adds
    shared_bytes: int  # overhead paid once

    def total_bytes(self, gpu: GpuSpec, count: int, engine: Engine) -> int:
        """``fit.breakdown``'s total on ``count`` x ``gpu``."""
        w = self.weights
        overhead = self.per_device_bytes * count + self.shared_bytes
        return w.total_bytes - host_weights_bytes(w, gpu, engine) + self.kv_bytes + overhead


def _need(s: Scenario) -> _Need:
    per_device, shared = memory.overhead_parts(s.model, s.workload)
    return _Need(weights(s.model, s.quant, s.measured), memory.kv_cache_bytes(s.model, s.workload), per_device, shared)


@dataclass
class _Candidate:
    """A ``Setup`` while the scan runs: a plain record, since only the few picks become a ``Setup`` (not
    frozen: a frozen dataclass sets each field through ``object.__setattr__``, ten times slower)."""

    gpu_id: str
    gpu_name: str
    count: int
    memory_bytes: int
    total_bytes: int
    usable_bytes: int
    verdict: Verdict
    engine: Engine
    decode_tokens_per_s: float
    price_usd: float | None
    usd_per_token_per_s: float | None


def _setup(s: Scenario, need: _Need, gpu: GpuSpec, count: int) -> _Candidate | None:
    """The scenario on ``count`` x ``gpu``; a candidate only when it fits fully.

    Memory on plain numbers (``need``, ``fit.full_fit_verdict``), then the speed of a setup that holds it.
    """
    workload = s.workload
    if not engine_runs(workload.engine, s.quant.id, gpu):
        return None  # e.g. NVFP4 in vLLM below Blackwell
    total, usable = need.total_bytes(gpu, count, workload.engine), memory.usable_device_bytes(gpu, workload) * count
    verdict = full_fit_verdict(total, usable, count)
    if verdict is None:
        return None
    hardware = hardware_on(s, gpu, count)
    host = host_weights_bytes(need.weights, gpu, workload.engine)
    speed = single_stream(s.model, FullFit(verdict, total, usable, host, need.weights), hardware, workload, s.quant.id)
    price = gpu.price_usd * count if gpu.price_usd is not None else None
    return _Candidate(
        gpu_id=gpu.id,
        gpu_name=gpu.short_name,
        count=count,
        memory_bytes=gpu.memory_bytes * count,
        total_bytes=total,
        usable_bytes=usable,
        verdict=verdict,
        engine=workload.engine,
        decode_tokens_per_s=speed,
        price_usd=price,
        usd_per_token_per_s=price / speed if price is not None and speed > 0 else None,
    )


def _built(pick: _Candidate | None) -> Setup | None:
    return Setup(**vars(pick)) if pick is not None else None


class _Devices(NamedTuple):
    """The devices ``recommend_hardware`` scans, which depend on the catalog alone."""

    discrete: tuple[GpuSpec, ...]  # discrete cards, fastest memory first
    macs: tuple[GpuSpec, ...]  # cheapest first
    buyable: tuple[GpuSpec, ...]  # priced cards and boxes, in catalog order


# ``_devices`` per catalog object and whether restricted parts count; id() keyed with the catalog kept in the
# entry, as in ``core.weights``
_DEVICES: dict[tuple[int, bool], tuple[Catalog, _Devices]] = {}
_DEVICES_ENTRIES = 64


def _devices(catalog: Catalog, allow_restricted: bool) -> _Devices:
    hit = _DEVICES.get((id(catalog), allow_restricted))
    if hit is not None and hit[0] is catalog:
        return hit[1]
    if len(_DEVICES) >= _DEVICES_ENTRIES:
        _DEVICES.clear()

    def allowed(gpu: GpuSpec) -> bool:
        if gpu.backend is Backend.OTHER:
            return False
        return allow_restricted or not restricted(gpu)

    discrete = [g for g in catalog.gpus if g.category != "apple" and not g.unified_memory and allowed(g)]
    devices = _Devices(
        discrete=tuple(sorted(discrete, key=lambda g: -g.bandwidth_bytes_per_s)),
        macs=tuple(
            sorted(
                (g for g in catalog.gpus if g.category == "apple"),
                key=lambda g: (g.price_usd is None, g.price_usd or 0.0, g.memory_bytes, g.id),
            )
        ),
        buyable=tuple(
            g
            for g in catalog.gpus
            if g.price_usd is not None and g.category in ("consumer", "workstation", "apu", "datacenter") and allowed(g)
        ),
    )
    _DEVICES[(id(catalog), allow_restricted)] = (catalog, devices)
    return devices


def recommend_hardware(
    s: Scenario,
    catalog: Catalog,
    offers: tuple[OfferQuote, ...] | None = None,
    allow_restricted: bool = False,
) -> HardwareAdvice:
    """Fastest single GPU, cheapest setup, most tokens/s per dollar and cheapest Mac that hold the model.

    Region-restricted export parts (``REGION_RESTRICTED``) are left out unless ``allow_restricted``.
    """
    model = s.model
    need = _need(s)
    w = need.weights
    devices = _devices(catalog, allow_restricted)
    # Fastest single GPU: fastest memory first, and stop once no card left could beat the best so far
    # even at its bandwidth's roofline (every decoded token reads at least the dense weights and the
    # routed experts in use; 25 % margin for efficiency factors), so the answer is exact without placing all 200+ cards.
    per_token = (
        w.dense_bytes + w.output_bytes + w.experts_bytes * (model.experts_per_token or 1) / (model.n_experts or 1)
    )
    singles: list[_Candidate] = []
    fastest = 0.0  # the best single-GPU speed so far
    for gpu in devices.discrete:
        if singles and 1.25 * gpu.bandwidth_bytes_per_s / max(per_token, 1.0) < fastest:
            break
        if setup := _setup(s, need, gpu, 1):
            singles.append(setup)
            fastest = max(fastest, setup.decode_tokens_per_s)
    apple: list[_Candidate] = []
    # vLLM has no Metal backend: Macs are judged with llama.cpp (and its quant, when the engine changes it).
    on_mac = s if s.engine is Engine.LLAMA_CPP else _llama_cpp(s, catalog)
    if on_mac is not None:
        mac_need = need if on_mac is s else _need(on_mac)
        for gpu in devices.macs:  # cheapest first: the first Mac that fits is the answer
            if setup := _setup(on_mac, mac_need, gpu, 1):
                apple.append(setup)
                break
    priced: list[_Candidate] = []

    def best_case_usd_per_tps(gpu: GpuSpec) -> float:  # one card at its roofline: no setup of it does better
        return (gpu.price_usd or 0.0) / (1.25 * gpu.bandwidth_bytes_per_s / max(per_token, 1.0))

    # cheapest and best tokens per dollar, exact without placing every card: in order of the best case,
    # stop once no card left could beat either on price or on price per token/s
    best = cheapest = 0.0  # the best price per token/s and the lowest price so far
    for gpu in sorted(devices.buyable, key=best_case_usd_per_tps):
        if priced and best_case_usd_per_tps(gpu) > best and (gpu.price_usd or 0.0) > cheapest:
            continue
        for count in PRICE_PERFORMANCE_COUNTS if not gpu.unified_memory else (1,):
            if setup := _setup(s, need, gpu, count):
                best = min(best, setup.usd_per_token_per_s or 0.0) if priced else setup.usd_per_token_per_s or 0.0
                cheapest = min(cheapest, setup.price_usd or 0.0) if priced else setup.price_usd or 0.0
                priced.append(setup)
                break  # more of the same GPU costs more and, split by layers, is not faster
    if offers is None:
        offers = quote_offers(s, catalog)
    return HardwareAdvice(
        best_single_gpu=_built(
            max(singles, key=lambda s: (s.decode_tokens_per_s, -s.memory_bytes, s.gpu_id), default=None)
        ),
        best_price_performance=_built(
            min(priced, key=lambda s: (s.usd_per_token_per_s or 0.0, s.gpu_id), default=None)
        ),
        best_apple=_built(
            min(apple, key=lambda s: (s.price_usd is None, s.price_usd or 0.0, s.memory_bytes, s.gpu_id), default=None)
        ),
        # the cheapest box that holds it may be a Mac (DeepSeek R1: a 512 GB Mac Studio, not 4 workstation cards)
        cheapest=_built(
            min([*priced, *apple], key=lambda s: (s.price_usd or 0.0, -s.decode_tokens_per_s, s.gpu_id), default=None)
        ),
        cheapest_cloud=offers[0] if offers else None,
        notes=(note("hw_full_fit"), note("hw_restricted_left_out")) if not allow_restricted else (note("hw_full_fit"),),
    )


def _llama_cpp(s: Scenario, catalog: Catalog) -> Scenario | None:
    """The scenario served by llama.cpp (for Macs): the same quant when llama.cpp runs it."""
    try:
        return varied(s, catalog, engine=Engine.LLAMA_CPP, quant=s.quant.id, kv_cache=None)
    except EstimateError:
        return None


class QuickFit(NamedTuple):
    """A scenario's placement and single-stream decode speed, without the card's other figures (list rows:
    plain numbers, since scans make one per device)."""

    verdict: Verdict
    offload: Literal["none", "layers", "experts"]
    gpu_bytes: int  # what the GPU(s) hold in this placement
    ram_bytes: int  # what system RAM holds
    decode_tokens_per_s: float | None  # None when it does not run, or when its speed was not needed

    @property
    def need_bytes(self) -> int:
        return self.gpu_bytes + self.ram_bytes


RUNS = (Verdict.FITS, Verdict.TIGHT, Verdict.OFFLOAD)


def quick_fit(s: Scenario, speed_for: tuple[Verdict, ...] = RUNS, hardware: Hardware | None = None) -> QuickFit:
    """Memory first (``fit.full_fit``, else ``fit.place`` for the offload), the speed only for a verdict in
    ``speed_for``: what list answers rank by. ``hardware`` puts the scenario on other devices
    (``estimate.hardware_on``)."""
    return quick_fit_on(s.model, s.quant, hardware or s.hardware, s.workload, s.measured, speed_for)


def quick_fit_on(
    model: ModelSpec,
    quant: QuantSpec,
    hardware: Hardware,
    workload: Workload,
    measured: QuantSize | None,
    speed_for: tuple[Verdict, ...] = RUNS,
) -> QuickFit:
    """``quick_fit`` on plain parts (a scan over the catalog's models builds no scenario per model)."""
    fit = full_fit(model, quant, hardware, workload, measured)
    if fit is not None:
        speed = single_stream(model, fit, hardware, workload, quant.id) if fit.verdict in speed_for else None
        return QuickFit(fit.verdict, "none", fit.total_bytes, fit.host_bytes, speed)  # what ``place`` reports
    over = overflow(model, quant, hardware, workload, measured)
    assert over is not None  # ``full_fit`` found that it overflows
    speed = None
    if over.verdict in speed_for:  # the speed of an offload reads its placement
        speed = single_stream(model, place(model, quant, hardware, workload, measured), hardware, workload, quant.id)
    return QuickFit(over.verdict, over.mode, over.gpu_bytes, over.bytes_in_ram, speed)


def fits_on(s: Scenario, gpus: Iterable[GpuSpec], speed_for: tuple[Verdict, ...] = RUNS) -> list[QuickFit]:
    """``quick_fit(s, speed_for, hardware_on(s, gpu))`` on each of ``gpus``: the device scans of list answers."""
    model, quant, workload = s.model, s.quant, s.workload
    rows = []
    for hardware, fit in _full_fits(s, gpus):
        if fit is None:  # it overflows: ``place`` plans the offload
            rows.append(quick_fit_on(model, quant, hardware, workload, s.measured, speed_for))
            continue
        speed = single_stream(model, fit, hardware, workload, quant.id) if fit.verdict in speed_for else None
        rows.append(QuickFit(fit.verdict, "none", fit.total_bytes, fit.host_bytes, speed))
    return rows


def full_fit_speeds(s: Scenario, gpus: Iterable[GpuSpec]) -> list[float | None]:
    """Single-stream decode tok/s on each of ``gpus`` where the scenario holds everything on the GPU(s), else
    None, nothing placed: ``quick_fit(s, FULL_FIT, hardware_on(s, gpu)).decode_tokens_per_s``."""
    model, workload, quant_id = s.model, s.workload, s.quant.id
    return [
        single_stream(model, fit, hardware, workload, quant_id) if fit is not None else None
        for hardware, fit in _full_fits(s, gpus)
    ]


def _full_fits(s: Scenario, gpus: Iterable[GpuSpec]) -> Iterator[tuple[Hardware, FullFit | None]]:
    """Each device's hardware and ``fit.full_fit`` of the scenario on it, with what does not change with the
    device (weights, KV cache, overhead: ``_need``) worked out once."""
    need, workload = _need(s), s.workload
    w, engine = need.weights, workload.engine
    for gpu in gpus:
        hardware = hardware_on(s, gpu)
        total, usable = need.total_bytes(gpu, 1, engine), usable_bytes(hardware, workload)
        verdict = full_fit_verdict(total, usable, 1)
        fit = FullFit(verdict, total, usable, host_weights_bytes(w, gpu, engine), w) if verdict is not None else None
        yield hardware, fit


__all__ = [
    "Fix",
    "HardwareAdvice",
    "KvOption",
    "QuantChoice",
    "RUNS",
    "QuickFit",
    "Setup",
    "best_quant",
    "choose_quant",
    "chosen_scenario",
    "kv_savings",
    "nearest_fix",
    "fits_on",
    "full_fit_speeds",
    "quick_fit",
    "quick_fit_on",
    "recommend_hardware",
    "with_quant",
]

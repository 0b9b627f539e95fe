"""Memory breakdown, placement (GPU / system RAM) and the fit verdict.

Two stages, as in gguf-parser's estimate-then-summarize: ``breakdown`` computes every part for a
full GPU placement; ``place`` decides what has to move to system RAM and gives the verdict.
"""

# no ``from __future__ import annotations``: pydantic reads these models' field types as objects instead of
# compiling each from a string, a few milliseconds of every start (``fitbot estimate``, issue 33)

import math
from collections.abc import Sequence
from enum import StrEnum
from typing import Literal, NamedTuple

from core import memory
from core.models import GIB, Engine, Frozen, GpuSpec, Hardware, ModelSpec, QuantSize, QuantSpec, Workload
from core.weights import WeightEstimate, as_loaded, weights


class Verdict(StrEnum):
    FITS = "fits"
    TIGHT = "tight"  # fits, but with less than the comfortable reserve
    OFFLOAD = "offload"  # runs only with part of the model in system RAM
    NO_FIT = "no_fit"


class MemoryBreakdown(Frozen):
    weights_bytes: int  # the whole model file / checkpoint
    host_weights_bytes: int  # part of the weights llama.cpp keeps in RAM anyway (token embedding)
    kv_cache_bytes: int
    overhead_bytes: int  # compute buffers, output buffer, runtime/driver context
    total_bytes: int  # GPU memory needed with everything offloaded to the GPU(s)
    usable_bytes: int
    reserve_bytes: int  # usable - total; negative when it does not fit
    comfortable_reserve_bytes: int  # the reserve below which the verdict is "tight"
    weights_measured: bool


class Offload(Frozen):
    mode: Literal["none", "layers", "experts"]
    layers_on_gpu: int
    layers_total: int
    cpu_moe_layers: int = 0  # llama.cpp --n-cpu-moe: layers whose routed experts stay in RAM
    gpu_bytes: int  # what the GPU(s) hold in this placement
    bytes_in_ram: int  # weights (and their KV) in system RAM
    ram_usable_bytes: int
    fits_ram: bool


class Placement(Frozen):
    memory: MemoryBreakdown
    offload: Offload
    verdict: Verdict
    weights: WeightEstimate


def comfortable_reserve(usable: int, count: int) -> int:
    """Reserve a full fit should keep: 5 % of usable memory, at least 0.5 GiB per device."""
    return max(round(0.05 * usable), count * GIB // 2)


def host_weights_bytes(w: WeightEstimate, gpu: GpuSpec, engine: Engine) -> int:
    """Weights llama.cpp keeps in host memory: the token embedding (a row lookup); on unified memory
    the host is the same pool, so it counts."""
    return w.embed_bytes if keeps_embedding(gpu, engine) else 0


def keeps_embedding(gpu: GpuSpec, engine: Engine) -> bool:
    """Whether the token embedding stays in host memory (``host_weights_bytes``): for a scan over weights."""
    return engine is Engine.LLAMA_CPP and not gpu.unified_memory


def full_fit_verdict(total: int, usable: int, count: int) -> Verdict | None:
    """``place``'s verdict for ``total`` bytes all on the GPU(s): fits or tight, None when they overflow
    (then ``place`` decides on offload). Plain numbers: scans judge memory with it before placing."""
    if total > usable:
        return None
    return Verdict.FITS if usable - total >= comfortable_reserve(usable, count) else Verdict.TIGHT


class FullFit(NamedTuple):
    """``place``'s verdict and totals for a setup that holds everything on the GPU(s), in plain numbers."""

    verdict: Verdict  # fits or tight
    total_bytes: int
    usable_bytes: int
    host_bytes: int  # the token embedding llama.cpp keeps in RAM (``host_weights_bytes``)
    weights: WeightEstimate


def full_fit(
    model: ModelSpec,
    quant: QuantSpec,
    hardware: Hardware,
    workload: Workload,
    measured: QuantSize | None = None,
) -> FullFit | None:
    """``place`` without its objects where everything stays on the GPU(s); None where it does not (then
    ``place`` plans the offload). Scans over devices and quants judge memory with it first."""
    w, host, _, _, total, usable = _parts(model, quant, hardware, workload, measured, None)
    verdict = full_fit_verdict(total, usable, hardware.count)
    return FullFit(verdict, total, usable, host, w) if verdict is not None else None


def need_bytes(
    model: ModelSpec,
    quant: QuantSpec,
    hardware: Hardware,
    workload: Workload,
    measured: QuantSize | None = None,
    context: int | None = None,
) -> tuple[int, int]:
    """``breakdown``'s total and usable bytes, in plain numbers (charts and scans need no more)."""
    _, _, _, _, total, usable = _parts(model, quant, hardware, workload, measured, context)
    return total, usable


def memory_table(
    model: ModelSpec,
    quants: Sequence[tuple[QuantSpec, QuantSize | None]],
    hardware: Hardware,
    workload: Workload,
    contexts: Sequence[int],
) -> tuple[int, tuple[tuple[int, ...], ...]]:
    """``need_bytes`` of every quant (with its measured size) at every context: (usable bytes, one row of
    totals per quant). The weights are worked out once per quant, the KV cache and overhead once per
    context: they do not depend on the quant (the memory chart draws this table)."""
    rest = [
        memory.kv_cache_bytes(model, workload, ctx) + memory.overhead_bytes(model, hardware, workload, ctx)
        for ctx in contexts
    ]
    rows = []
    for quant, measured in quants:
        w = weights(model, *as_loaded(quant, measured, workload.engine))
        held = w.total_bytes - host_weights_bytes(w, hardware.gpu, workload.engine)
        rows.append(tuple(held + r for r in rest))
    return memory.usable_bytes(hardware, workload), tuple(rows)


def _parts(
    model: ModelSpec,
    quant: QuantSpec,
    hardware: Hardware,
    workload: Workload,
    measured: QuantSize | None,
    context: int | None,
) -> tuple[WeightEstimate, int, int, int, int, int]:
    """The one computation of every memory part: ``breakdown``, ``full_fit`` and ``need_bytes`` read it.

    (weights, host-side weight bytes, KV cache, overhead, total on the GPU(s) with everything there, usable
    bytes): a plain tuple, since scans call it for every device."""
    w = weights(model, *as_loaded(quant, measured, workload.engine))
    kv, per_device, shared = memory.context_bytes(model, workload, context)
    overhead = per_device * hardware.count + shared  # ``memory.overhead_bytes``
    host = host_weights_bytes(w, hardware.gpu, workload.engine)
    total = w.total_bytes - host + kv + overhead
    return w, host, kv, overhead, total, memory.usable_bytes(hardware, workload)


def breakdown(
    model: ModelSpec,
    quant: QuantSpec,
    hardware: Hardware,
    workload: Workload,
    measured: QuantSize | None = None,
    context: int | None = None,
) -> tuple[MemoryBreakdown, WeightEstimate]:
    """Every memory part for the whole model on the GPU(s)."""
    w, host, kv, overhead, total, usable = _parts(model, quant, hardware, workload, measured, context)
    mem = MemoryBreakdown(
        weights_bytes=w.total_bytes,
        host_weights_bytes=host,
        kv_cache_bytes=kv,
        overhead_bytes=overhead,
        total_bytes=total,
        usable_bytes=usable,
        reserve_bytes=usable - total,
        comfortable_reserve_bytes=comfortable_reserve(usable, hardware.count),
        weights_measured=w.measured,
    )
    return mem, w


def place(
    model: ModelSpec,
    quant: QuantSpec,
    hardware: Hardware,
    workload: Workload,
    measured: QuantSize | None = None,
    context: int | None = None,
) -> Placement:
    """Decide what stays on the GPU(s) and give the verdict."""
    mem, w = breakdown(model, quant, hardware, workload, measured, context)
    ram_usable = memory.usable_ram_bytes(hardware)
    layers = model.n_layers
    verdict = full_fit_verdict(mem.total_bytes, mem.usable_bytes, hardware.count)
    if verdict is not None:
        full = Offload(
            mode="none",
            layers_on_gpu=layers,
            layers_total=layers,
            gpu_bytes=mem.total_bytes,
            bytes_in_ram=mem.host_weights_bytes,
            ram_usable_bytes=ram_usable,
            fits_ram=True,  # only the token embedding sits in RAM: a row lookup, mmap'd from the file
        )
        return Placement(memory=mem, offload=full, verdict=verdict, weights=w)
    if not _offloads(hardware, workload, ram_usable):
        none = Offload(
            mode="none",
            layers_on_gpu=0,
            layers_total=layers,
            gpu_bytes=mem.total_bytes,
            bytes_in_ram=0,
            ram_usable_bytes=ram_usable,
            fits_ram=False,
        )
        return Placement(memory=mem, offload=none, verdict=Verdict.NO_FIT, weights=w)
    budget = mem.usable_bytes - mem.comfortable_reserve_bytes
    plan = _offload_plan(
        model, w, mem.total_bytes, mem.host_weights_bytes, mem.kv_cache_bytes, mem.overhead_bytes, budget
    )
    offload = Offload(
        mode=plan.mode,
        layers_on_gpu=plan.layers_on_gpu,
        layers_total=layers,
        cpu_moe_layers=plan.cpu_moe_layers,
        gpu_bytes=plan.gpu_bytes,
        bytes_in_ram=plan.bytes_in_ram,
        ram_usable_bytes=ram_usable,
        fits_ram=plan.bytes_in_ram <= ram_usable,
    )
    return Placement(
        memory=mem, offload=offload, verdict=Verdict.OFFLOAD if offload.fits_ram else Verdict.NO_FIT, weights=w
    )


class Overflow(NamedTuple):
    """``place``'s verdict and placement, in plain numbers, for a setup that does not hold everything on the
    GPU(s): what a scan lists for it without building the placement."""

    verdict: Verdict  # offload or no_fit
    mode: Literal["none", "layers", "experts"]
    gpu_bytes: int
    bytes_in_ram: int


def overflow(
    model: ModelSpec,
    quant: QuantSpec,
    hardware: Hardware,
    workload: Workload,
    measured: QuantSize | None = None,
) -> Overflow | None:
    """``place`` where the setup overflows the GPU(s), without its objects; None where it fits (``full_fit``)."""
    w, host, kv, overhead, total, usable = _parts(model, quant, hardware, workload, measured, None)
    if full_fit_verdict(total, usable, hardware.count) is not None:
        return None
    ram_usable = memory.usable_ram_bytes(hardware)
    if not _offloads(hardware, workload, ram_usable):
        return Overflow(Verdict.NO_FIT, "none", total, 0)
    plan = _offload_plan(model, w, total, host, kv, overhead, usable - comfortable_reserve(usable, hardware.count))
    verdict = Verdict.OFFLOAD if plan.bytes_in_ram <= ram_usable else Verdict.NO_FIT
    return Overflow(verdict, plan.mode, plan.gpu_bytes, plan.bytes_in_ram)


def _offloads(hardware: Hardware, workload: Workload, ram_usable: int) -> bool:
    """Whether weights may move to system RAM: llama.cpp on a discrete card with RAM to spare (vLLM
    pre-allocates on the GPU; unified memory is one pool)."""
    return workload.engine is not Engine.VLLM and not hardware.gpu.unified_memory and ram_usable != 0


class _Plan(NamedTuple):
    mode: Literal["layers", "experts"]
    layers_on_gpu: int
    cpu_moe_layers: int
    gpu_bytes: int
    bytes_in_ram: int


def _offload_plan(
    model: ModelSpec, w: WeightEstimate, total: int, host: int, kv: int, overhead: int, budget: int
) -> _Plan:
    """What moves to system RAM when ``total`` bytes overflow ``budget`` (usable less the reserve): a MoE's
    experts layer by layer, else whole layers."""
    plan = _expert_offload(model, w, total, host, budget) if model.is_moe else None
    return plan if plan is not None else _layer_offload(model, w, kv, overhead, host, budget)


def _expert_offload(model: ModelSpec, w: WeightEstimate, total: int, host: int, budget: int) -> _Plan | None:
    """MoE: keep attention, shared weights and KV on the GPU; move whole layers' experts to RAM."""
    per_layer = w.experts_bytes / model.n_layers
    fixed = total - w.experts_bytes
    if fixed > budget or per_layer <= 0:
        return None
    cpu_layers = min(model.n_layers, math.ceil((total - budget) / per_layer))
    moved = round(cpu_layers * per_layer)
    return _Plan("experts", model.n_layers, cpu_layers, total - moved, moved + host)


def _layer_offload(model: ModelSpec, w: WeightEstimate, kv: int, overhead: int, host: int, budget: int) -> _Plan:
    """Dense (or MoE whose shared part alone overflows): whole layers with their KV go to RAM."""
    per_layer = (w.dense_bytes + w.experts_bytes + kv) / model.n_layers
    room = budget - overhead
    on_gpu = max(0, min(model.n_layers - 1, math.floor(room / per_layer))) if room > 0 else 0
    gpu = overhead + round(on_gpu * per_layer)
    in_ram = round((model.n_layers - on_gpu) * per_layer) + w.output_bytes + host
    return _Plan("layers", on_gpu, 0, gpu, in_ram)


def shortfall(mem: MemoryBreakdown, offload: Offload, verdict: Verdict) -> tuple[int, int]:
    """What is really missing on a no-fit, after the best offload: (GPU bytes, system RAM bytes).

    With offload the GPU keeps its share and only the RAM side may be short; without offload
    (vLLM, unified memory, no RAM) the whole excess is GPU memory. Zero for anything that runs.
    """
    if verdict is not Verdict.NO_FIT:
        return 0, 0
    if offload.mode == "none":
        return max(mem.total_bytes - mem.usable_bytes, 0), 0
    return max(offload.gpu_bytes - mem.usable_bytes, 0), max(offload.bytes_in_ram - offload.ram_usable_bytes, 0)


def max_context(
    model: ModelSpec,
    quant: QuantSpec,
    hardware: Hardware,
    workload: Workload,
    measured: QuantSize | None = None,
) -> int:
    """Largest context (multiple of 256, up to the model's maximum) that stays fully on the GPU.

    Each step is ``breakdown``'s total at that context, in plain numbers (only KV and overhead change).
    KV cache and compute buffers never shrink with context, so the search may look at the ends first:
    most setups hold the model's whole context, or not even 256 tokens. Memoised per model, quant, size and
    hardware object and the workload's fields other than its context and prompt (/speed asks it at four)."""
    key = (
        id(model),
        id(quant),
        id(measured),
        id(hardware),
        workload.kv_cache,
        workload.engine,
        workload.concurrent,
        workload.n_ubatch,
        workload.flash_attention,
        workload.gpu_memory_utilization,
    )
    hit = _LONGEST.get(key)
    if hit is not None and hit[0] is model and hit[1] is quant and hit[2] is measured and hit[3] is hardware:
        return hit[4]
    if len(_LONGEST) >= _LONGEST_ENTRIES:
        _LONGEST.clear()
    longest = _max_context(model, quant, hardware, workload, measured)
    _LONGEST[key] = (model, quant, measured, hardware, longest)
    return longest


# ``max_context`` per objects and workload fields, id() keyed with the objects kept in the entry (``core.weights``)
_LONGEST: dict[tuple[object, ...], tuple[ModelSpec, QuantSpec, QuantSize | None, Hardware, int]] = {}
_LONGEST_ENTRIES = 1024


def _max_context(
    model: ModelSpec, quant: QuantSpec, hardware: Hardware, workload: Workload, measured: QuantSize | None
) -> int:
    w = weights(model, *as_loaded(quant, measured, workload.engine))
    room = memory.usable_bytes(hardware, workload) - (
        w.total_bytes - host_weights_bytes(w, hardware.gpu, workload.engine)
    )

    def need(units: int) -> int:  # KV cache and overhead at ``units`` x 256 tokens
        ctx = units * 256
        return memory.kv_cache_bytes(model, workload, ctx) + memory.overhead_bytes(model, hardware, workload, ctx)

    top = model.max_context // 256
    if top == 0 or (high := need(top)) <= room:
        return top * 256
    if (low := need(1)) > room:
        return 0
    # 256 tokens fit (lo), the whole context does not (hi). The probes alternate between where the straight
    # line through the two crosses the room (KV and buffers grow about linearly with context: it lands next
    # to the end) and the middle (so never more than twice a bisection's steps); both keep lo fitting and hi
    # not, so the end is the same as a bisection's.
    lo, hi, halve = 1, top, False
    while hi - lo > 1:
        if halve:
            mid = (lo + hi) // 2
        else:
            mid = min(max(lo + (room - low) * (hi - lo) // (high - low), lo + 1), hi - 1)
        if (value := need(mid)) <= room:
            lo, low = mid, value
        else:
            hi, high = mid, value
        halve = not halve
    return lo * 256

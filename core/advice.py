"""Advice around one estimate: the best quant that fits, KV-cache quantization, hardware to buy or
rent, and launch commands that reproduce the estimate's settings exactly.

Every recommendation is re-placed with ``fit.place`` on the hardware it names, so advice never
names a setup, quant or command the memory model says would not fit.
"""

from __future__ import annotations

import shlex
from typing import Literal

from pydantic import computed_field

from core.cost import OfferQuote, quote_offers
from core.estimate import ENGINE_KV_TYPES, FitEstimate, Request, default_quant, estimate, resolve
from core.fit import Verdict, place
from core.models import (
    Backend,
    Catalog,
    Engine,
    Frozen,
    GpuSpec,
    KvCacheType,
    ModelSpec,
    QuantSize,
    QuantSpec,
    Workload,
)
from core.speed import decode_tokens_per_s
from core.speed_constants import TG_MEAN_DEPTH
from core.weights import weights

FULL_FIT = (Verdict.FITS, Verdict.TIGHT)
KV_CHOICES: dict[Engine, tuple[KvCacheType, ...]] = {
    Engine.LLAMA_CPP: (KvCacheType.F16, KvCacheType.Q8_0, KvCacheType.Q4_0),
    Engine.VLLM: (KvCacheType.BF16, KvCacheType.FP8),
}
PRICE_PERFORMANCE_COUNTS = (1, 2, 3, 4)
VLLM_GPU_MEMORY_UTILIZATION: float = Workload.model_fields["gpu_memory_utilization"].default
ALL_LAYERS = "999"  # -ngl above the layer count also offloads the output layer


class KvOption(Frozen):
    kv_cache: KvCacheType
    kv_cache_bytes: int
    total_bytes: int
    saved_bytes: int  # against the first (16-bit) option
    verdict: Verdict
    verdict_changed: bool  # against the 16-bit cache
    max_context: int  # largest context fully on the GPU(s) with this cache type


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
    best_single_gpu: Setup | None
    best_price_performance: Setup | None
    best_apple: Setup | None
    cheapest_cloud: OfferQuote | None
    assumptions: tuple[str, ...]


class LaunchCommand(Frozen):
    """A server command line as argv, with the settings it reproduces."""

    engine: Engine
    quant: str
    argv: tuple[str, ...]
    context: int  # per sequence
    concurrent: int
    kv_cache: KvCacheType
    gpu_count: int
    verdict: Verdict
    offload_mode: Literal["none", "layers", "experts"]
    notes: tuple[str, ...] = ()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def shell(self) -> str:
        return shlex.join(self.argv)


def _candidates(model: ModelSpec, engine: Engine, catalog: Catalog) -> list[QuantSpec]:
    """Quants the engine runs, best first (bits, then bits in dense tensors); MXFP4 only for MXFP4 models."""
    quants = [
        q for q in catalog.quants if engine in q.engines and (q.id.upper() != "MXFP4" or model.native_dtype == "mxfp4")
    ]
    return sorted(quants, key=lambda q: (-q.bits, -q.bpw_dense, -q.bpw_experts, q.id))


def best_quant(model: ModelSpec, gpu: GpuSpec, request: Request, catalog: Catalog) -> FitEstimate | None:
    """Highest-bit quant whose estimate fits with reserve, else the highest that is tight; None if none does.

    The scan only places each quant (cheap); the full estimate is made for the winner alone.
    """
    engine = request.engine or Engine.LLAMA_CPP
    tight: QuantSpec | None = None
    chosen: QuantSpec | None = None
    for quant in _candidates(model, engine, catalog):
        req = request.model_copy(update={"quant": quant.id})
        hardware, workload, _, _, _ = resolve(model, gpu, req)
        verdict = place(model, quant, hardware, workload, catalog.size(model.id, quant.id)).verdict
        if verdict is Verdict.FITS:
            chosen = quant
            break
        if verdict is Verdict.TIGHT and tight is None:
            tight = quant
    chosen = chosen or tight
    if chosen is None:
        return None
    return estimate(
        model, gpu, chosen, request.model_copy(update={"quant": chosen.id}), catalog.size(model.id, chosen.id)
    )


def kv_savings(
    model: ModelSpec, gpu: GpuSpec, quant: QuantSpec, request: Request, measured: QuantSize | None = None
) -> tuple[KvOption, ...]:
    """The estimate with each KV-cache type the engine offers: f16/q8_0/q4_0 (llama.cpp), bf16/fp8 (vLLM)."""
    engine = request.engine or Engine.LLAMA_CPP
    options: list[KvOption] = []
    for kv in KV_CHOICES[engine]:
        est = estimate(model, gpu, quant, request.model_copy(update={"kv_cache": kv, "engine": engine}), measured)
        base = options[0] if options else None
        options.append(
            KvOption(
                kv_cache=kv,
                kv_cache_bytes=est.memory.kv_cache_bytes,
                total_bytes=est.memory.total_bytes,
                saved_bytes=base.kv_cache_bytes - est.memory.kv_cache_bytes if base else 0,
                verdict=est.verdict,
                verdict_changed=base is not None and est.verdict is not base.verdict,
                max_context=est.max_context,
            )
        )
    return tuple(options)


def _setup(
    model: ModelSpec,
    quant: QuantSpec,
    gpu: GpuSpec,
    count: int,
    request: Request,
    measured: QuantSize | None,
    floor_bytes: int = 0,
) -> Setup | None:
    """Place the model on ``count`` x ``gpu``; a Setup only when it fits fully.

    ``floor_bytes`` (weights the GPU must hold at least) skips hopeless setups without placing them.
    """
    if gpu.memory_bytes * count < floor_bytes:
        return None
    hardware, workload, _, _, _ = resolve(model, gpu, request.model_copy(update={"gpu_count": count}))
    if workload.engine not in quant.engines:
        return None
    placement = place(model, quant, hardware, workload, measured)
    if placement.verdict not in FULL_FIT:
        return None
    speed = decode_tokens_per_s(model, placement.weights, placement, hardware, workload, TG_MEAN_DEPTH, quant.id)
    price = gpu.price_usd * count if gpu.price_usd is not None else None
    return Setup(
        gpu_id=gpu.id,
        gpu_name=gpu.short_name,
        count=count,
        memory_bytes=gpu.memory_bytes * count,
        total_bytes=placement.memory.total_bytes,
        usable_bytes=placement.memory.usable_bytes,
        verdict=placement.verdict,
        engine=workload.engine,
        decode_tokens_per_s=speed,
        price_usd=price,
        usd_per_token_per_s=price / speed if price is not None and speed > 0 else None,
    )


def recommend_hardware(
    model: ModelSpec,
    quant: QuantSpec,
    request: Request,
    catalog: Catalog,
    measured: QuantSize | None = None,
    offers: tuple[OfferQuote, ...] | None = None,
) -> HardwareAdvice:
    """Best single GPU, best price-performance setup, best Apple machine and cheapest cloud offer."""
    measured = measured or catalog.size(model.id, quant.id)
    w = weights(model, quant, measured)
    floor = w.total_bytes - w.embed_bytes  # no placement holds less than this on the GPU(s)
    singles: list[Setup] = []
    smallest: int | None = None  # memory of the first single GPU that fits: larger ones cannot be "best"
    for gpu in sorted(catalog.gpus, key=lambda g: g.memory_bytes):
        if gpu.category == "apple" or gpu.backend is Backend.OTHER or gpu.unified_memory:
            continue
        if smallest is not None and gpu.memory_bytes > smallest:
            break
        if s := _setup(model, quant, gpu, 1, request, measured, floor):
            singles.append(s)
            smallest = gpu.memory_bytes
    apple: list[Setup] = []
    macs = sorted(
        (g for g in catalog.gpus if g.category == "apple"),
        key=lambda g: (g.price_usd is None, g.price_usd or 0.0, g.memory_bytes, g.id),
    )
    for gpu in macs:  # cheapest first: the first Mac that fits is the answer
        # vLLM has no Metal backend: Macs are judged with llama.cpp.
        if s := _setup(model, quant, gpu, 1, request.model_copy(update={"engine": Engine.LLAMA_CPP}), measured, floor):
            apple.append(s)
            break
    value: list[Setup] = []
    for gpu in catalog.gpus:
        if gpu.price_usd is None or gpu.category not in ("consumer", "workstation", "apu"):
            continue
        if gpu.backend is Backend.OTHER:
            continue
        for count in PRICE_PERFORMANCE_COUNTS if not gpu.unified_memory else (1,):
            if s := _setup(model, quant, gpu, count, request, measured, floor):
                value.append(s)
                break  # more of the same GPU costs more and, split by layers, is not faster
    if offers is None:
        offers = quote_offers(model, quant, request, catalog, measured=measured) if quant_runs(quant, request) else ()
    return HardwareAdvice(
        best_single_gpu=min(singles, key=lambda s: (s.memory_bytes, -s.decode_tokens_per_s, s.gpu_id), default=None),
        best_price_performance=min(value, key=lambda s: (s.usd_per_token_per_s or 0.0, s.gpu_id), default=None),
        best_apple=min(
            apple, key=lambda s: (s.price_usd is None, s.price_usd or 0.0, s.memory_bytes, s.gpu_id), default=None
        ),
        cheapest_cloud=offers[0] if offers else None,
        assumptions=(
            "every setup holds the whole model on its GPU(s) (fits or tight), at the asked quant and context",
            "best single GPU: least memory that fits, then fastest; Apple and APU machines listed separately",
            (
                "price-performance: purchase price / decode tok/s over 1-4 identical consumer or workstation GPUs "
                "(or one APU box) with a catalog price"
            ),
            "Apple: cheapest Mac that fits, served with llama.cpp (Metal)",
            "devices without llama.cpp/vLLM support in the model (backend 'other') are left out",
        ),
    )


def quant_runs(quant: QuantSpec, request: Request) -> bool:
    return (request.engine or Engine.LLAMA_CPP) in quant.engines


def launch_command(
    estimate: FitEstimate, model: ModelSpec, quant: QuantSpec, concurrent: int = 1
) -> LaunchCommand | None:
    """The server command for this estimate's settings; None when it does not fit or cannot run."""
    if estimate.verdict is Verdict.NO_FIT or estimate.quant.upper() != quant.id.upper():
        return None
    on_mac = estimate.hardware.unified_memory
    count, ctx, kv = estimate.hardware.count, estimate.context, estimate.kv_cache
    if kv not in ENGINE_KV_TYPES[estimate.engine]:
        return None
    notes: list[str] = []
    if estimate.engine is Engine.LLAMA_CPP:
        ref = ["-hf", f"{model.gguf_repo}:{quant.id}"] if model.gguf_repo else ["-m", f"{model.id}-{quant.id}.gguf"]
        if not model.gguf_repo:
            notes.append(f"no GGUF repo known: point -m at your {quant.id} file")
        argv = ["llama-server", *ref, "--ctx-size", str(ctx * concurrent)]
        if concurrent > 1:
            argv += ["--parallel", str(concurrent)]  # the context is shared by the slots
        off = estimate.offload
        if off.mode == "layers":
            argv += ["-ngl", str(off.layers_on_gpu)]
        else:
            argv += ["-ngl", ALL_LAYERS]
            if off.mode == "experts":
                argv += ["--n-cpu-moe", str(off.cpu_moe_layers)]
        if off.mode != "none":
            notes.append(f"needs about {off.bytes_in_ram / 1e9:.1f} GB of free system RAM")
        if kv is not KvCacheType.F16:
            argv += ["--cache-type-k", kv.value, "--cache-type-v", kv.value]
        argv += ["--flash-attn", "on"]
        if count > 1:
            argv += ["--tensor-split", ",".join(["1"] * count)]
    else:
        if on_mac:
            return None  # vLLM has no Metal backend
        ref_repo = model.hf_repo or f"./{model.id}"
        argv = ["vllm", "serve", ref_repo, "--max-model-len", str(ctx)]
        if count > 1:
            argv += ["--tensor-parallel-size", str(count)]
        argv += ["--gpu-memory-utilization", f"{VLLM_GPU_MEMORY_UTILIZATION:g}"]
        if concurrent > 1:
            argv += ["--max-num-seqs", str(concurrent)]
        if kv is KvCacheType.FP8:
            argv += ["--kv-cache-dtype", "fp8"]
        native = model.native_dtype == quant.id.lower()
        if quant.vllm_quantization and not native:
            argv += ["--quantization", quant.vllm_quantization]
            if quant.vllm_quantization != "fp8":
                notes.append(
                    f"needs a pre-quantized {quant.id} checkpoint of {ref_repo}: "
                    "vLLM quantizes only to fp8 at load time"
                )
        elif quant.format == "checkpoint" and not native and quant.id.upper() not in ("BF16", "F16"):
            notes.append(f"needs a {quant.id} checkpoint of {ref_repo}")
    return LaunchCommand(
        engine=estimate.engine,
        quant=quant.id,
        argv=tuple(argv),
        context=ctx,
        concurrent=concurrent,
        kv_cache=kv,
        gpu_count=count,
        verdict=estimate.verdict,
        offload_mode=estimate.offload.mode,
        notes=tuple(notes),
    )


def launch_commands(
    model: ModelSpec, gpu: GpuSpec, request: Request, catalog: Catalog, measured: QuantSize | None = None
) -> tuple[LaunchCommand, ...]:
    """Commands for llama.cpp and vLLM, each re-estimated with its engine's quant; only those that fit."""
    commands: list[LaunchCommand] = []
    asked = request.engine or Engine.LLAMA_CPP
    for engine in (asked, *(e for e in Engine if e is not asked)):
        quant_id = (request.quant if engine is asked else None) or default_quant(model, engine)
        quant = catalog.quant(quant_id)
        if quant is None or engine not in quant.engines:
            continue
        kv = request.kv_cache if request.kv_cache in ENGINE_KV_TYPES[engine] else None
        req = request.model_copy(update={"engine": engine, "quant": quant.id, "kv_cache": kv})
        size = measured if engine is asked and measured else catalog.size(model.id, quant.id)
        cmd = launch_command(estimate(model, gpu, quant, req, size), model, quant, request.concurrent or 1)
        if cmd is not None:
            commands.append(cmd)
    return tuple(commands)

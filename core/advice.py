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
from core.memory import RAM_USABLE_FRACTION
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
from core.notes import Note, note
from core.regions import restricted
from core.speed import decode_tokens_per_s
from core.speed_constants import TG_MEAN_DEPTH
from core.speed_device import BACKEND_LABELS, LLAMA_CPP_BUILD_FLAGS
from core.weights import weights

FULL_FIT = (Verdict.FITS, Verdict.TIGHT)
KV_CHOICES: dict[Engine, tuple[KvCacheType, ...]] = {
    Engine.LLAMA_CPP: (KvCacheType.F16, KvCacheType.Q8_0, KvCacheType.Q4_0),
    Engine.VLLM: (KvCacheType.BF16, KvCacheType.FP8),
}
PRICE_PERFORMANCE_COUNTS = (1, 2, 3, 4)
# Quants people actually run, best quality per byte first (llama.cpp tools/quantize/README.md perplexity
# table: K- and IQ-quants beat the legacy Q4_0/Q4_1/Q5_0/Q5_1 of the same size, so legacy types are not
# recommended). Below about 3 bits quality falls off fast: a quantized KV cache comes first.
QUANT_LADDER = ("Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "IQ4_XS", "Q3_K_M", "IQ3_XXS")
LOW_BIT_LADDER_MOE = ("UD-Q2_K_XL", "UD-IQ2_M", "UD-IQ1_M")  # unsloth dynamic: experts low, attention high
LOW_BIT_LADDER_DENSE = ("IQ2_M", "IQ2_XXS", "IQ1_M")
LOW_BITS = 3.0
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


class QuantChoice(Frozen):
    """The recommended quant (and KV cache) for one model on one setup, and why."""

    quant: str
    verdict: Verdict
    kv_cache: KvCacheType | None  # None: the asked/default cache; else the cache it needs
    reason: str  # locale code: "ladder", "kv_before_low_bits", "low_bits", "native"


class Fix(Frozen):
    """The smallest change that makes a tight, offload or no-fit setup fit (or run)."""

    kind: Literal["kv", "context", "quant", "ram", "gpus"]
    value: str  # "q8_0", "16384", "IQ4_XS", "96", "2"
    verdict: Verdict  # with the change
    reserve_bytes: int  # GPU memory left with the change
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
    assumptions: tuple[str, ...]
    cheapest: Setup | None = None  # lowest purchase price that holds the model
    notes: tuple[Note, ...] = ()


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


def _ladder(model: ModelSpec, engine: Engine, catalog: Catalog) -> list[QuantSpec]:
    """Quants to recommend, best quality per byte first; vLLM keeps the checkpoint formats by bits."""
    if engine is not Engine.LLAMA_CPP:
        return _candidates(model, engine, catalog)
    ids = (*(("MXFP4",) if model.native_dtype == "mxfp4" else ()), *QUANT_LADDER)
    ids += LOW_BIT_LADDER_MOE if model.is_moe else LOW_BIT_LADDER_DENSE
    return [q for q in (catalog.quant(i) for i in ids) if q is not None and engine in q.engines]


def _first_fit(
    model: ModelSpec, gpu: GpuSpec, request: Request, catalog: Catalog, quants: list[QuantSpec]
) -> tuple[QuantSpec, Verdict] | None:
    """The first quant that fits with reserve, else the first that is tight."""
    tight: QuantSpec | None = None
    for quant in quants:
        hardware, workload, _, _, _ = resolve(model, gpu, request.model_copy(update={"quant": quant.id}))
        verdict = place(model, quant, hardware, workload, catalog.size(model.id, quant.id)).verdict
        if verdict is Verdict.FITS:
            return quant, verdict
        if verdict is Verdict.TIGHT and tight is None:
            tight = quant
    return (tight, Verdict.TIGHT) if tight else None


def choose_quant(model: ModelSpec, gpu: GpuSpec, request: Request, catalog: Catalog) -> QuantChoice | None:
    """The quant a practitioner would run: the first of the ladder that fits fully.

    Below ``LOW_BITS`` a quantized KV cache (q8_0, fp8 on vLLM) is tried first, since it costs far
    less quality than 2-bit weights. None when nothing fits fully in GPU memory.
    """
    engine = request.engine or Engine.LLAMA_CPP
    quants = _ladder(model, engine, catalog)
    found = _first_fit(model, gpu, request, catalog, quants)
    if found is None or found[0].bits < LOW_BITS:
        kvs = KV_CHOICES[engine]
        start = kvs.index(request.kv_cache) + 1 if request.kv_cache in kvs else 1
        for kv in kvs[start:]:  # q8_0, then q4_0 (fp8 on vLLM)
            with_kv = _first_fit(model, gpu, request.model_copy(update={"kv_cache": kv}), catalog, quants)
            if with_kv and with_kv[0].bits >= LOW_BITS and (found is None or with_kv[0].bits > found[0].bits):
                return QuantChoice(quant=with_kv[0].id, verdict=with_kv[1], kv_cache=kv, reason="kv_before_low_bits")
    if found is None:
        return None
    quant, verdict = found
    reason = "native" if quant.id == "MXFP4" else "low_bits" if quant.bits < LOW_BITS else "ladder"
    return QuantChoice(quant=quant.id, verdict=verdict, kv_cache=None, reason=reason)


def best_quant(model: ModelSpec, gpu: GpuSpec, request: Request, catalog: Catalog) -> FitEstimate | None:
    """The estimate for ``choose_quant``'s pick (with the KV cache it needs); None if nothing fits fully."""
    choice = choose_quant(model, gpu, request, catalog)
    if choice is None:
        return None
    quant = catalog.quant(choice.quant)
    assert quant is not None
    update: dict[str, object] = {"quant": quant.id}
    if choice.kv_cache is not None:
        update["kv_cache"] = choice.kv_cache
    return estimate(model, gpu, quant, request.model_copy(update=update), catalog.size(model.id, quant.id))


def nearest_fix(
    model: ModelSpec, gpu: GpuSpec, quant: QuantSpec, request: Request, catalog: Catalog, est: FitEstimate
) -> Fix | None:
    """The smallest change that improves the verdict: KV cache, context, quant, RAM, a second GPU.

    Tight -> fits; offload -> fits fully; no-fit -> runs (with offload if need be). Changes are tried
    from the least intrusive; each is a full estimate, so the card can show its speed and command.
    """
    if est.verdict is Verdict.FITS:
        return None
    engine = est.engine
    want: tuple[Verdict, ...] = {
        Verdict.TIGHT: (Verdict.FITS,),
        Verdict.OFFLOAD: (Verdict.FITS, Verdict.TIGHT),
    }.get(est.verdict, (Verdict.FITS, Verdict.TIGHT, Verdict.OFFLOAD))
    measured = catalog.size(model.id, quant.id)

    def attempt(kind: str, value: str, q: QuantSpec, req: Request, g: GpuSpec = gpu) -> Fix | None:
        try:
            e = estimate(model, g, q, req, catalog.size(model.id, q.id) if q is not quant else measured)
        except ValueError:
            return None
        if e.verdict not in want:
            return None
        return Fix(kind=kind, value=value, verdict=e.verdict, reserve_bytes=e.gpu_reserve_bytes, estimate=e)  # type: ignore[arg-type]

    kvs = KV_CHOICES[engine]
    current = kvs.index(est.kv_cache) if est.kv_cache in kvs else 0
    for kv in kvs[current + 1 :]:
        if fix := attempt("kv", kv.value, quant, request.model_copy(update={"kv_cache": kv})):
            return fix
    if est.max_context >= 4096 and est.max_context < est.context and est.verdict is not Verdict.NO_FIT:
        ctx = est.max_context
        if fix := attempt("context", str(ctx), quant, request.model_copy(update={"context": ctx})):
            return fix
    ladder = _ladder(model, engine, catalog)
    smaller = [q for q in ladder if _bytes_per_weight(q) < _bytes_per_weight(quant)]
    for q in smaller:
        if q.bits < LOW_BITS and est.verdict is not Verdict.NO_FIT:
            break  # never trade a running setup for 2-bit weights
        if fix := attempt("quant", q.id, q, request.model_copy(update={"quant": q.id})):
            return fix
    if est.verdict is Verdict.NO_FIT and est.short_ram_bytes > 0 and not est.hardware.unified_memory:
        need = (est.ram_bytes / RAM_USABLE_FRACTION) / 1e9
        ram = next((r for r in RAM_STEPS if r >= need), None)
        if ram is not None and (fix := attempt("ram", str(ram), quant, request.model_copy(update={"ram_gb": ram}))):
            return fix
    if not est.hardware.unified_memory:
        count = est.hardware.count
        steps = (count * 2,) if est.verdict is not Verdict.NO_FIT else (count * 2, count * 4)
        for more in steps:
            if more > 8:
                break
            req = request.model_copy(update={"gpu_count": more})
            if fix := attempt("gpus", str(more), quant, req):
                return fix
    return None


RAM_STEPS = (32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)


def _bytes_per_weight(q: QuantSpec) -> float:
    return max(q.bpw_dense, q.bpw_experts)


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
    allow_restricted: bool = False,
) -> HardwareAdvice:
    """Fastest single GPU, cheapest setup, most tokens/s per dollar and cheapest Mac that hold the model.

    Region-restricted export parts (``REGION_RESTRICTED``) are left out unless ``allow_restricted``.
    """
    measured = measured or catalog.size(model.id, quant.id)
    w = weights(model, quant, measured)
    floor = w.total_bytes - w.embed_bytes  # no placement holds less than this on the GPU(s)

    def allowed(gpu: GpuSpec) -> bool:
        if gpu.backend is Backend.OTHER:
            return False
        return allow_restricted or not restricted(gpu)

    # Fastest single GPU: fastest memory first, and stop once no card left could beat the best so far
    # even at its bandwidth's roofline (every decoded token reads at least the dense weights and the
    # routed experts in use; 25 % margin for efficiency factors), so the answer is exact without placing all 200+ cards.
    per_token = (
        w.dense_bytes + w.output_bytes + w.experts_bytes * (model.experts_per_token or 1) / (model.n_experts or 1)
    )
    singles: list[Setup] = []
    discrete = [g for g in catalog.gpus if g.category != "apple" and not g.unified_memory and allowed(g)]
    for gpu in sorted(discrete, key=lambda g: -g.bandwidth_bytes_per_s):
        if singles and 1.25 * gpu.bandwidth_bytes_per_s / max(per_token, 1.0) < max(
            s.decode_tokens_per_s for s in singles
        ):
            break
        if s := _setup(model, quant, gpu, 1, request, measured, floor):
            singles.append(s)
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
    priced: list[Setup] = []
    buyable = [
        g
        for g in catalog.gpus
        if g.price_usd is not None and g.category in ("consumer", "workstation", "apu", "datacenter") and allowed(g)
    ]

    def best_case_usd_per_tps(gpu: GpuSpec) -> float:  # one card at its roofline: no setup of it does better
        return (gpu.price_usd or 0.0) / (1.25 * gpu.bandwidth_bytes_per_s / max(per_token, 1.0))

    # cheapest and best tokens per dollar, exact without placing every card: in order of the best case,
    # stop once no card left could beat either on price or on price per token/s
    for gpu in sorted(buyable, key=best_case_usd_per_tps):
        if priced:
            best = min(s.usd_per_token_per_s or 0.0 for s in priced)
            if best_case_usd_per_tps(gpu) > best and (gpu.price_usd or 0.0) > min(s.price_usd or 0.0 for s in priced):
                continue
        for count in PRICE_PERFORMANCE_COUNTS if not gpu.unified_memory else (1,):
            if s := _setup(model, quant, gpu, count, request, measured, floor):
                priced.append(s)
                break  # more of the same GPU costs more and, split by layers, is not faster
    if offers is None:
        offers = quote_offers(model, quant, request, catalog, measured=measured) if quant_runs(quant, request) else ()
    return HardwareAdvice(
        best_single_gpu=max(singles, key=lambda s: (s.decode_tokens_per_s, -s.memory_bytes, s.gpu_id), default=None),
        best_price_performance=min(priced, key=lambda s: (s.usd_per_token_per_s or 0.0, s.gpu_id), default=None),
        best_apple=min(
            apple, key=lambda s: (s.price_usd is None, s.price_usd or 0.0, s.memory_bytes, s.gpu_id), default=None
        ),
        cheapest=min(priced, key=lambda s: (s.price_usd or 0.0, -s.decode_tokens_per_s, s.gpu_id), default=None),
        cheapest_cloud=offers[0] if offers else None,
        assumptions=(
            "every setup holds the whole model on its GPU(s) (fits or tight), at the asked quant and context",
            "fastest: single GPU with the highest decode tok/s; cheapest: lowest catalog price over 1-4 GPUs",
            "tokens per dollar: purchase price / decode tok/s over 1-4 identical GPUs (or one APU box) with a price",
            "Apple: cheapest Mac that fits, served with llama.cpp (Metal)",
            "devices without llama.cpp/vLLM support (backend 'other') and region-restricted parts are left out",
        ),
        notes=(note("hw_full_fit"), note("hw_restricted_left_out")) if not allow_restricted else (note("hw_full_fit"),),
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
        if (backend := estimate.hardware.backend) in LLAMA_CPP_BUILD_FLAGS:
            notes.append(f"llama.cpp built for {BACKEND_LABELS[backend]} (cmake {LLAMA_CPP_BUILD_FLAGS[backend]})")
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

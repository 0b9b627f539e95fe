"""One estimate for one question: resolve defaults, place the model, summarise for the card.

``estimate`` is the single entry point the CLI and the bot call; it returns everything a card
shows (and the full breakdown for "why?" follow-ups) as one ``FitEstimate``.
"""

from __future__ import annotations

from pydantic import Field

from core.fit import MemoryBreakdown, Offload, Verdict, max_context, place, shortfall
from core.memory import RAM_USABLE_FRACTION, unified_fraction
from core.models import (
    GIB,
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
from core.notes import CodedError, Note, note
from core.speed import SpeedEstimate, estimate_speed

# The reference calculator's defaults (shared/reference): Q4_K_M, 8K context, f16 KV, llama.cpp.
DEFAULT_QUANT = "Q4_K_M"
DEFAULT_VLLM_QUANT = "BF16"
DEFAULT_CONTEXT = 8192
# KV cache types each engine offers: llama.cpp --cache-type-k/v, vLLM --kv-cache-dtype
ENGINE_KV_TYPES: dict[Engine, tuple[KvCacheType, ...]] = {
    Engine.LLAMA_CPP: (KvCacheType.F16, KvCacheType.BF16, KvCacheType.Q8_0, KvCacheType.Q4_0),
    Engine.VLLM: (KvCacheType.BF16, KvCacheType.F16, KvCacheType.FP8),
}
DEFAULT_ENGINE = Engine.LLAMA_CPP
DEFAULT_RAM_GB = 64.0


class Request(Frozen):
    """What the user asked; None means "not said", so the default is used and listed."""

    quant: str | None = None
    context: int | None = Field(default=None, ge=1)
    kv_cache: KvCacheType | None = None
    engine: Engine | None = None
    gpu_count: int = Field(default=1, ge=1, le=64)
    ram_gb: float | None = Field(default=None, ge=0, le=65536)
    ram_bandwidth_gbps: float | None = Field(default=None, gt=0, le=100000)
    prompt_tokens: int | None = Field(default=None, ge=1, le=1 << 24)
    concurrent: int | None = Field(default=None, ge=1, le=4096)


class ModelRef(Frozen):
    id: str
    name: str
    hf_repo: str | None
    gguf_repo: str | None
    total_params: int
    active_params: int
    max_context: int


class HardwareRef(Frozen):
    gpu: str
    gpu_name: str
    count: int
    memory_bytes: int  # physical memory, all devices
    usable_bytes: int
    unified_memory: bool
    system_ram_bytes: int


class FitEstimate(Frozen):
    model: ModelRef
    quant: str
    context: int
    kv_cache: KvCacheType
    engine: Engine
    hardware: HardwareRef
    memory: MemoryBreakdown
    verdict: Verdict
    offload: Offload
    max_context: int  # largest context that still fits fully on the GPU(s) at this quant (memory limit)
    gpu_bytes: int = 0  # what the GPU(s) hold in this placement (offloaded bytes not included)
    ram_bytes: int = 0  # what system RAM holds (offloaded weights, the token embedding)
    short_gpu_bytes: int = 0  # no-fit: GPU memory still missing after the best offload
    short_ram_bytes: int = 0  # no-fit: system RAM still missing after the best offload
    rope_scaled_max_context: int | None = None  # context reachable with the model's RoPE scaling, if known
    speed: SpeedEstimate
    concurrent: int = 1
    assumptions: tuple[str, ...]
    defaults_used: tuple[str, ...]  # request fields filled with defaults, for localized cards
    notes: tuple[Note, ...] = ()  # the same assumptions as codes + values, rendered by the cards

    @property
    def beyond_trained_context(self) -> bool:
        return self.context > self.model.max_context

    @property
    def gpu_reserve_bytes(self) -> int:
        """Usable GPU memory left over by what the GPU(s) actually hold."""
        return self.memory.usable_bytes - self.gpu_bytes


class EstimateError(CodedError):
    """The request cannot be estimated (e.g. a quant the engine cannot run); ``note`` has its code."""


def rope_scaled_context(model: ModelSpec) -> int | None:
    """Context the model reaches with RoPE scaling (YaRN), when the catalog knows it (optional field)."""
    value = getattr(model, "rope_scaling_max_context", None)
    return int(value) if isinstance(value, int) and value > model.max_context else None


def default_quant(model: ModelSpec, engine: Engine) -> str:
    """Q4_K_M for llama.cpp, the native checkpoint for vLLM; MXFP4 models ship 4-bit natively."""
    if model.native_dtype == "mxfp4":
        return "MXFP4"
    if engine is Engine.VLLM:
        return "FP8" if model.native_dtype == "fp8" else DEFAULT_VLLM_QUANT
    return DEFAULT_QUANT


def resolve(model: ModelSpec, gpu: GpuSpec, request: Request) -> tuple[Hardware, Workload, str, list[str], list[str]]:
    """Fill unset request fields with defaults; say which defaults and assumptions were used."""
    hardware, workload, quant, used, notes, _ = resolve_notes(model, gpu, request)
    return hardware, workload, quant, used, notes


def resolve_notes(
    model: ModelSpec, gpu: GpuSpec, request: Request
) -> tuple[Hardware, Workload, str, list[str], list[str], list[Note]]:
    """``resolve`` plus the assumptions as codes (``Note``) for the cards."""
    used: list[str] = []
    notes: list[str] = []
    coded: list[Note] = []
    engine = request.engine or DEFAULT_ENGINE
    if request.engine is None:
        used.append("engine")
        notes.append(f"engine {engine.value} (default)")
        coded.append(note("engine_default", value=engine.value))
    quant = request.quant or default_quant(model, engine)
    if request.quant is None:
        used.append("quant")
        notes.append(f"quant {quant} (default)")
        coded.append(note("quant_default", value=quant))
    context = request.context or min(DEFAULT_CONTEXT, model.max_context)
    if request.context is None:
        used.append("context")
        notes.append(f"context {context} tokens (default)")
        coded.append(note("context_default", value=context))
    if context > model.max_context:
        notes.append(f"context {context} exceeds the model's trained maximum of {model.max_context}")
        rope = rope_scaled_context(model)
        coded.append(
            note("context_rope", value=context, max=model.max_context, rope=rope)
            if rope and context <= rope
            else note("context_over_max", value=context, max=model.max_context)
        )
    kv = request.kv_cache or (KvCacheType.F16 if engine is Engine.LLAMA_CPP else KvCacheType.BF16)
    if request.kv_cache is None:
        used.append("kv_cache")
        notes.append(f"KV cache {kv.value} (default)")
        coded.append(note("kv_default", value=kv.value))
    ram_gb = DEFAULT_RAM_GB if request.ram_gb is None else request.ram_gb
    if request.ram_gb is None and not gpu.unified_memory:
        used.append("ram")
        notes.append(f"system RAM {ram_gb:g} GB (default), {RAM_USABLE_FRACTION:.0%} of it usable for offload")
        coded.append(note("ram_default", value=ram_gb, share=RAM_USABLE_FRACTION))
    if gpu.unified_memory:
        notes.append(f"unified memory: {unified_fraction(gpu):.0%} usable by the GPU (OS default limit)")
        coded.append(note("unified", share=unified_fraction(gpu)))
    else:
        notes.append(
            "token embedding kept in system RAM (llama.cpp)"
            if engine is Engine.LLAMA_CPP
            else "vLLM pre-allocates gpu_memory_utilization 0.9 of each GPU"
        )
        coded.append(note("embedding_in_ram" if engine is Engine.LLAMA_CPP else "vllm_preallocates", share=0.9))
    concurrent = request.concurrent or 1
    workload = Workload(
        context=context,
        kv_cache=kv,
        engine=engine,
        concurrent=concurrent,
        prompt_tokens=request.prompt_tokens or Workload.model_fields["prompt_tokens"].default,
    )
    hardware = Hardware(
        gpu=gpu,
        count=request.gpu_count,
        system_ram_bytes=round(ram_gb * 1e9),
        ram_bandwidth_bytes_per_s=request.ram_bandwidth_gbps * 1e9 if request.ram_bandwidth_gbps else None,
    )
    if request.gpu_count > 1:
        notes.append(
            "layer split across GPUs (llama.cpp), compute buffers on every GPU"
            if engine is Engine.LLAMA_CPP
            else f"tensor parallel over {request.gpu_count} GPUs (vLLM)"
        )
        coded.append(note("split" if engine is Engine.LLAMA_CPP else "tensor_parallel", n=request.gpu_count))
    if "geometry" in model.provenance.unverified:  # no stored config.json behind the row (catalog/importers)
        notes.append("model geometry not checked against a config.json")
        coded.append(note("geometry_unverified", model=model.name))
    return hardware, workload, quant, used, notes, coded


def estimate(
    model: ModelSpec,
    gpu: GpuSpec,
    quant: QuantSpec,
    request: Request,
    measured: QuantSize | None = None,
) -> FitEstimate:
    """Fit estimate for one model, quant and hardware."""
    hardware, workload, _, used, notes, coded = resolve_notes(model, gpu, request)
    if workload.engine not in quant.engines:
        raise EstimateError(
            "quant_engine",
            f"{quant.id} cannot be served by {workload.engine.value}",
            quant=quant.id,
            engine=workload.engine.value,
        )
    if workload.kv_cache not in ENGINE_KV_TYPES[workload.engine]:
        options = ", ".join(k.value for k in ENGINE_KV_TYPES[workload.engine])
        raise EstimateError(
            "kv_engine",
            f"{workload.engine.value} has no {workload.kv_cache.value} KV cache (use {options})",
            engine=workload.engine.value,
            kv=workload.kv_cache.value,
            options=options,
        )
    placement = place(model, quant, hardware, workload, measured)
    speed = estimate_speed(model, placement.weights, placement, hardware, workload, quant.id)
    notes.append(
        "weights: measured file size"
        if placement.weights.measured
        else f"weights: estimated from the {quant.id} recipe (no measured file size)"
    )
    coded.append(note("weights_measured" if placement.weights.measured else "weights_recipe", quant=quant.id))
    off = placement.offload
    short_gpu, short_ram = shortfall(placement.memory, off, placement.verdict)
    return FitEstimate(
        model=ModelRef(
            id=model.id,
            name=model.name,
            hf_repo=model.hf_repo,
            gguf_repo=model.gguf_repo,
            total_params=model.total_params,
            active_params=model.active_params,
            max_context=model.max_context,
        ),
        quant=quant.id,
        context=workload.context,
        kv_cache=workload.kv_cache,
        engine=workload.engine,
        hardware=HardwareRef(
            gpu=gpu.id,
            gpu_name=gpu.short_name,
            count=hardware.count,
            memory_bytes=gpu.memory_bytes * hardware.count,
            usable_bytes=placement.memory.usable_bytes,
            unified_memory=gpu.unified_memory,
            system_ram_bytes=hardware.system_ram_bytes,
        ),
        memory=placement.memory,
        verdict=placement.verdict,
        offload=placement.offload,
        max_context=max_context(model, quant, hardware, workload, measured),
        gpu_bytes=off.gpu_bytes,
        ram_bytes=off.bytes_in_ram,
        short_gpu_bytes=short_gpu,
        short_ram_bytes=short_ram,
        rope_scaled_max_context=rope_scaled_context(model),
        speed=speed,
        concurrent=workload.concurrent,
        assumptions=tuple(notes),
        defaults_used=tuple(used),
        notes=tuple(coded),
    )


__all__ = ["GIB", "EstimateError", "FitEstimate", "Request", "estimate", "resolve"]

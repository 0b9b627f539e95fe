"""One question resolved once (``Scenario``), then placed and summarised for the card (``FitEstimate``).

A ``Request`` says what the user asked (None = not said). ``scenario`` fills every unset field with
its default exactly once, looks the quant and its measured file size up, checks that the engine can
run them, and records each default and modelling assumption as a coded ``Note`` with its values.
Everything downstream (memory, fit, speed, serving, cost, advice, the cards) reads the Scenario and
never resolves a default again; a variation ("the same with KV q8_0", "the same on 2 GPUs") is
``varied``, another ``scenario`` call with a changed request. ``estimate_of`` places one scenario.
"""

# no ``from __future__ import annotations``: pydantic reads these models' field types as objects instead of
# compiling each from a string, a few milliseconds of every start (``fitbot estimate``, issue 33)

from functools import cached_property
from typing import NamedTuple

from pydantic import Field

from core.fit import MemoryBreakdown, Offload, Verdict, max_context, place, shortfall
from core.launch.vllm_hardware import vllm_quant_problem
from core.memory import RAM_USABLE_FRACTION, unified_fraction
from core.models import (
    GIB,
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
from core.notes import CodedError, Note, note, unverified_note
from core.speed.device import BACKEND_LABELS, with_backend
from core.speed.estimate import PromptTime, SpeedEstimate, estimate_speed, prompt_time
from core.speed.serving import Speeds, speeds_of
from core.weights import as_loaded

# The reference calculator's defaults (shared/reference): Q4_K_M, 8K context, f16 KV, llama.cpp.
DEFAULT_QUANT = "Q4_K_M"
DEFAULT_VLLM_QUANT = "BF16"
DEFAULT_CONTEXT = 8192
DEFAULT_PROMPT_TOKENS = 4096  # the prompt time to first token assumes, never longer than the context
ANSWER_ROOM_TOKENS = 1024  # room for the answer when the context is set by a stated prompt length
DEFAULT_ENGINE = Engine.LLAMA_CPP
DEFAULT_RAM_GB = 64.0
DEFAULT_COST_USERS = 8  # concurrent streams for the "real deployment" $/Mtok figure when no users were asked
# KV cache types each engine offers: llama.cpp --cache-type-k/v, vLLM --kv-cache-dtype
ENGINE_KV_TYPES: dict[Engine, tuple[KvCacheType, ...]] = {
    Engine.LLAMA_CPP: (KvCacheType.F16, KvCacheType.BF16, KvCacheType.Q8_0, KvCacheType.Q4_0),
    Engine.VLLM: (KvCacheType.BF16, KvCacheType.F16, KvCacheType.FP8),
}


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
    backend: Backend | None = None  # a llama.cpp backend other than the device's own (Vulkan on an NVIDIA card)


class EstimateError(CodedError):
    """The request cannot be estimated (e.g. a quant the engine cannot run); ``note`` has its code."""


class Scenario(Frozen):
    """Everything one estimate is about, every default filled in, every assumption a coded note."""

    model: ModelSpec
    # the device (its backend replaced when the question named another one); None for a question about
    # a model across devices (/cloud, /gpus), whose devices come in with ``on_device``
    gpu: GpuSpec | None
    count: int = Field(ge=1, le=64)
    # every device of a mixed rig (core/rig.py); empty for ``count`` x ``gpu``, the only case modelled here
    rig: tuple[GpuSpec, ...] = ()
    quant: QuantSpec
    measured: QuantSize | None  # the measured file size of this model in this quant, when the catalog has one
    context: int = Field(ge=1)
    kv_cache: KvCacheType
    engine: Engine
    ram_gb: float
    ram_bandwidth_gbps: float | None
    users: int = Field(ge=1)  # concurrent streams served (1 unless asked)
    cost_users: int = Field(ge=1)  # streams a $/Mtok figure is batched over: the asked users, else 8
    prompt_tokens: int = Field(ge=1)
    request: Request  # what was asked: variations and follow-up questions start from it

    @cached_property
    def assumptions(self) -> tuple[tuple[str, ...], tuple[Note, ...]]:
        """``assumed``: derived once, when a card or an estimate asks."""
        return assumed(self)

    @property
    def defaults_used(self) -> tuple[str, ...]:
        """Request fields filled with defaults."""
        return self.assumptions[0]

    @property
    def notes(self) -> tuple[Note, ...]:
        """The defaults and modelling assumptions, as codes with values."""
        return self.assumptions[1]

    @property
    def device(self) -> GpuSpec:
        if self.gpu is None:
            raise ValueError("this scenario has no device: use on_device")
        return self.gpu

    @property
    def backend(self) -> Backend | None:
        """The backend the speed model uses: the device's own, or the one the question named."""
        return self.gpu.backend if self.gpu is not None else None

    @cached_property
    def hardware(self) -> Hardware:
        return hardware_on(self, self.device, self.count)

    @cached_property
    def workload(self) -> Workload:
        return workload_of(self, self.kv_cache)


# Workloads and hardware are immutable, and a few distinct ones serve every scan and question: one object
# per value (a device by id(), its spec kept in the entry as in ``core.weights``), built once and seen
# again by the per-object memos downstream (``memory.kv_cache_bytes``).
_WORKLOADS: dict[tuple[int, KvCacheType, Engine, int, int], Workload] = {}
_HARDWARE: dict[tuple[int, int, float, float | None], tuple[GpuSpec, Hardware]] = {}
_SHARED_ENTRIES = 1024  # full within the first few thousand distinct questions, so RSS stays flat after


def workload_of(s: Scenario, kv_cache: KvCacheType) -> Workload:
    """The scenario's workload with ``kv_cache`` (what ``varied(s, kv_cache=...)`` gives): one object per value."""
    return shared_workload(s.context, kv_cache, s.engine, s.users, s.prompt_tokens)


def with_kv(workload: Workload, kv_cache: KvCacheType) -> Workload:
    """A ``workload_of`` workload with another KV cache type: ``workload_of(s, kv_cache)`` of its scenario."""
    return shared_workload(workload.context, kv_cache, workload.engine, workload.concurrent, workload.prompt_tokens)


def shared_workload(context: int, kv_cache: KvCacheType, engine: Engine, users: int, prompt_tokens: int) -> Workload:
    """The one ``Workload`` object with these fields (the rest at their defaults)."""
    key = (context, kv_cache, engine, users, prompt_tokens)
    if (shared := _WORKLOADS.get(key)) is None:
        if len(_WORKLOADS) >= _SHARED_ENTRIES:
            _WORKLOADS.clear()
        shared = _WORKLOADS[key] = Workload(
            context=context, kv_cache=kv_cache, engine=engine, concurrent=users, prompt_tokens=prompt_tokens
        )
    return shared


def default_quant(model: ModelSpec, engine: Engine) -> str:
    """Q4_K_M for llama.cpp, the native checkpoint for vLLM; MXFP4 models ship 4-bit natively."""
    if model.native_dtype == "mxfp4":
        return "MXFP4"
    if engine is Engine.VLLM:
        return "FP8" if model.native_dtype == "fp8" else DEFAULT_VLLM_QUANT
    return DEFAULT_QUANT


def default_kv(engine: Engine) -> KvCacheType:
    return KvCacheType.F16 if engine is Engine.LLAMA_CPP else KvCacheType.BF16


def rope_scaled_context(model: ModelSpec) -> int | None:
    """Context the model reaches with RoPE scaling (YaRN), when the catalog knows it (optional field)."""
    value = vars(model).get("rope_scaling_max_context")  # a field only some specs have: no failing look-up
    return int(value) if isinstance(value, int) and value > model.max_context else None


class Resolved(NamedTuple):
    """What ``scenario`` resolves from a request before a device comes in, in plain parts: what a scan over
    the catalog's models reads (the workload holds the context, KV cache, engine, users and prompt)."""

    request: Request  # with a quant handed in recorded as asked
    quant: QuantSpec
    measured: QuantSize | None
    workload: Workload


def scenario(
    model: ModelSpec,
    gpu: GpuSpec | None,
    request: Request,
    catalog: Catalog | None = None,
    *,
    quant: QuantSpec | None = None,
    measured: QuantSize | None = None,
) -> Scenario:
    """The one resolver: defaults, the quant (``quant`` or looked up in ``catalog``), checks and notes.

    With ``quant`` given, ``measured`` is its file size (None: the recipe); without it the catalog
    supplies both. Raises ``EstimateError`` for a quant or KV cache the engine cannot run.
    """
    request, quant, measured, workload = resolved(model, request, catalog, quant=quant, measured=measured)
    if gpu is not None and workload.engine is Engine.VLLM:
        problem = vllm_quant_problem(quant.id, device_on(gpu, request))
        if problem is not None:  # e.g. NVFP4 on an H100: no FP4 tensor cores (core.launch.vllm_hardware)
            raise EstimateError(problem.code, f"vllm cannot run {quant.id} on {gpu.name}", **problem.values)
    # every part was validated on its way in (catalog rows, the Request): build without revalidating them
    return Scenario.model_construct(
        model=model,
        gpu=device_on(gpu, request) if gpu is not None else None,
        count=request.gpu_count,
        quant=quant,
        measured=measured,
        context=workload.context,
        kv_cache=workload.kv_cache,
        engine=workload.engine,
        ram_gb=ram_gb_of(request),
        ram_bandwidth_gbps=request.ram_bandwidth_gbps,
        users=workload.concurrent,
        cost_users=request.concurrent or DEFAULT_COST_USERS,
        prompt_tokens=workload.prompt_tokens,
        request=request,
        rig=(),
    )


def resolved(
    model: ModelSpec,
    request: Request,
    catalog: Catalog | None = None,
    *,
    quant: QuantSpec | None = None,
    measured: QuantSize | None = None,
) -> Resolved:
    """``scenario``'s defaults, quant and checks without the device (raises ``EstimateError`` as it does)."""
    engine = request.engine or DEFAULT_ENGINE
    if quant is not None and request.quant is None and quant.id.upper() != default_quant(model, engine).upper():
        request = request.model_copy(update={"quant": quant.id})  # a quant handed in is a quant asked for
    quant_id = request.quant or default_quant(model, engine)
    if quant is None:
        if catalog is None or (quant := catalog.quant(quant_id)) is None:
            raise EstimateError("unknown_quant", f"unknown quant {quant_id}", quant=quant_id)
        measured = catalog.size(model.id, quant.id)
    context = request.context or min(max(DEFAULT_CONTEXT, _holding(request.prompt_tokens)), model.max_context)
    kv = request.kv_cache or default_kv(engine)
    if engine not in quant.engines:
        raise EstimateError(
            "quant_engine", f"{quant.id} cannot be served by {engine.value}", quant=quant.id, engine=engine.value
        )
    if kv not in ENGINE_KV_TYPES[engine]:
        options = ", ".join(k.value for k in ENGINE_KV_TYPES[engine])
        raise EstimateError(
            "kv_engine",
            f"{engine.value} has no {kv.value} KV cache (use {options})",
            engine=engine.value,
            kv=kv.value,
            options=options,
        )
    prompt = request.prompt_tokens or min(DEFAULT_PROMPT_TOKENS, context)
    quant, measured = as_loaded(quant, measured, engine)  # vLLM: the safetensors checkpoint's bits, not the GGUF's
    return Resolved(request, quant, measured, shared_workload(context, kv, engine, request.concurrent or 1, prompt))


def _holding(prompt_tokens: int | None) -> int:
    """The context a prompt of that length needs when none was asked: the prompt and an answer of
    ``ANSWER_ROOM_TOKENS``, rounded up to whole 1K (a 32K prompt is no question about an 8K context)."""
    if not prompt_tokens:
        return 0
    return -(-(prompt_tokens + ANSWER_ROOM_TOKENS) // 1024) * 1024


def device_on(gpu: GpuSpec, request: Request) -> GpuSpec:
    """The device with the backend asked for, when llama.cpp has it for this device (else its own)."""
    return with_backend(gpu, request.backend) or gpu


def ram_gb_of(request: Request) -> float:
    return DEFAULT_RAM_GB if request.ram_gb is None else request.ram_gb


def assumed(s: Scenario) -> tuple[tuple[str, ...], tuple[Note, ...]]:
    """(request fields filled with defaults, every default and modelling assumption as a coded note)."""
    request, model, gpu = s.request, s.model, s.gpu
    used: list[str] = []
    coded: list[Note] = []
    if request.engine is None:
        used.append("engine")
        coded.append(note("engine_default", value=s.engine.value))
    if gpu is not None:
        coded.append(backend_note(gpu.backend, request.backend))
    if request.quant is None:
        used.append("quant")
        coded.append(note("quant_default", value=s.quant.id))
    if request.context is None:
        used.append("context")
        coded.append(note("context_default", value=s.context))
    if s.context > model.max_context:
        rope = rope_scaled_context(model)
        coded.append(
            note("context_rope", value=s.context, max=model.max_context, rope=rope)
            if rope and s.context <= rope
            else note("context_over_max", value=s.context, max=model.max_context)
        )
    if request.kv_cache is None:
        used.append("kv_cache")
        coded.append(note("kv_default", value=s.kv_cache.value))
    unified = gpu is not None and gpu.unified_memory
    if request.ram_gb is None and not unified:
        used.append("ram")
        coded.append(note("ram_default", value=s.ram_gb, share=RAM_USABLE_FRACTION))
    if gpu is not None and gpu.backend is Backend.CPU:  # a CPU-only machine: its RAM, no GPU share
        coded.append(note("cpu_ram", share=unified_fraction(gpu)))
    elif gpu is not None and gpu.unified_memory:
        coded.append(note("unified", share=unified_fraction(gpu)))
    else:
        coded.append(note("embedding_in_ram" if s.engine is Engine.LLAMA_CPP else "vllm_preallocates", share=0.9))
    if s.count > 1:
        coded.append(note("split" if s.engine is Engine.LLAMA_CPP else "tensor_parallel", n=s.count))
    coded.append(note("weights_measured" if s.measured is not None else "weights_recipe", quant=s.quant.id))
    if (doubt := unverified_note(model)) is not None:  # no primary source behind some of the row's facts
        coded.insert(0, doubt)  # first: a short footnote keeps it
    return tuple(used), tuple(coded)


def backend_note(used: Backend, asked: Backend | None) -> Note:
    """The backend the card names: the device's usual one, the one asked for, or why not that one."""
    if asked is None:
        return note("backend_default", value=BACKEND_LABELS[used])
    if asked is not used:  # e.g. Metal on a GeForce
        return note("backend_unavailable", backend=BACKEND_LABELS[asked], used=BACKEND_LABELS[used])
    return note("backend", value=BACKEND_LABELS[used])


def varied(s: Scenario, catalog: Catalog | None = None, **changes: object) -> Scenario:
    """The same question with some request fields changed, resolved again by ``scenario``.

    The quant stays unless the changes pick another one (a ``quant``, or an ``engine`` whose default
    quant differs); then ``catalog`` supplies it and its measured size.
    """
    request = s.request.model_copy(update=changes)
    if "quant" in changes or "engine" in changes:
        quant_id = request.quant or default_quant(s.model, request.engine or DEFAULT_ENGINE)
        if quant_id.upper() != s.quant.id.upper():
            return scenario(s.model, s.gpu, request, catalog)
    return scenario(s.model, s.gpu, request, quant=s.quant, measured=s.measured)


def hardware_on(s: Scenario, gpu: GpuSpec, count: int = 1) -> Hardware:
    """The scenario's hardware with other devices (same system RAM): what the device scans place on;
    the workload does not change with the device. One object per device, count and RAM."""
    return shared_hardware(gpu, count, s.ram_gb, s.ram_bandwidth_gbps)


def shared_hardware(gpu: GpuSpec, count: int, ram_gb: float, ram_bandwidth_gbps: float | None) -> Hardware:
    """The one ``Hardware`` object of ``count`` x ``gpu`` with this system RAM (``hardware_on``)."""
    key = (id(gpu), count, ram_gb, ram_bandwidth_gbps)
    hit = _HARDWARE.get(key)
    if hit is not None and hit[0] is gpu:
        return hit[1]
    if len(_HARDWARE) >= _SHARED_ENTRIES:
        _HARDWARE.clear()
    hardware = Hardware(
        gpu=gpu,
        count=count,
        system_ram_bytes=round(ram_gb * 1e9),
        ram_bandwidth_bytes_per_s=ram_bandwidth_gbps * 1e9 if ram_bandwidth_gbps else None,
    )
    _HARDWARE[key] = (gpu, hardware)
    return hardware


def on_device(s: Scenario, gpu: GpuSpec, count: int = 1) -> Scenario:
    """The same question on other hardware (a cloud offer, a purchase pick), with that device's own backend."""
    request = s.request.model_copy(update={"gpu_count": count, "backend": None})
    return scenario(s.model, gpu, request, quant=s.quant, measured=s.measured)


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
    backend: Backend | None = None


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
    serving: Speeds  # per-user and total decode speed for the scenario's users (``core.speed.serving``)
    concurrent: int = 1
    defaults_used: tuple[str, ...]  # request fields filled with defaults, for localized cards
    notes: tuple[Note, ...] = ()  # the assumptions as codes + values, rendered by the cards

    @property
    def beyond_trained_context(self) -> bool:
        return self.context > self.model.max_context

    @property
    def gpu_reserve_bytes(self) -> int:
        """Usable GPU memory left over by what the GPU(s) actually hold."""
        return self.memory.usable_bytes - self.gpu_bytes


# The references an estimate carries, one object per model and per device setup (immutable, and the same few
# come back in every scan and question); id() keyed with the spec kept in the entry, as ``_HARDWARE``.
_MODEL_REFS: dict[int, tuple[ModelSpec, ModelRef]] = {}
_HARDWARE_REFS: dict[tuple[int, int, int, int], tuple[GpuSpec, HardwareRef]] = {}


def model_ref(model: ModelSpec) -> ModelRef:
    hit = _MODEL_REFS.get(id(model))
    if hit is not None and hit[0] is model:
        return hit[1]
    if len(_MODEL_REFS) >= _SHARED_ENTRIES:
        _MODEL_REFS.clear()
    ref = ModelRef(
        id=model.id,
        name=model.name,
        hf_repo=model.hf_repo,
        gguf_repo=model.gguf_repo,
        total_params=model.total_params,
        active_params=model.active_params,
        max_context=model.max_context,
    )
    _MODEL_REFS[id(model)] = (model, ref)
    return ref


def hardware_ref(gpu: GpuSpec, count: int, usable_bytes: int, system_ram_bytes: int) -> HardwareRef:
    key = (id(gpu), count, usable_bytes, system_ram_bytes)
    hit = _HARDWARE_REFS.get(key)
    if hit is not None and hit[0] is gpu:
        return hit[1]
    if len(_HARDWARE_REFS) >= _SHARED_ENTRIES:
        _HARDWARE_REFS.clear()
    ref = HardwareRef(
        gpu=gpu.id,
        gpu_name=gpu.short_name,
        count=count,
        memory_bytes=gpu.memory_bytes * count,
        usable_bytes=usable_bytes,
        unified_memory=gpu.unified_memory,
        system_ram_bytes=system_ram_bytes,
        backend=gpu.backend,
    )
    _HARDWARE_REFS[key] = (gpu, ref)
    return ref


# Why a card's speed is rough although its backend has rows (``speed.calibration_level``): the card line says it.
SPEED_COVERAGE_NOTES = {"thin": "speed_thin", "missed": "speed_missed", "excluded": "speed_excluded"}


def estimate_of(s: Scenario) -> FitEstimate:
    """Memory, placement, verdict and speed of one scenario."""
    model, gpu, hardware, workload = s.model, s.device, s.hardware, s.workload
    placement = place(model, s.quant, hardware, workload, s.measured)
    speed = estimate_speed(model, placement.weights, placement, hardware, workload, s.quant.id)
    off = placement.offload
    short_gpu, short_ram = shortfall(placement.memory, off, placement.verdict)
    return FitEstimate(
        model=model_ref(model),
        quant=s.quant.id,
        context=s.context,
        kv_cache=s.kv_cache,
        engine=s.engine,
        hardware=hardware_ref(gpu, s.count, placement.memory.usable_bytes, hardware.system_ram_bytes),
        memory=placement.memory,
        verdict=placement.verdict,
        offload=off,
        max_context=max_context(model, s.quant, hardware, workload, s.measured),
        gpu_bytes=off.gpu_bytes,
        ram_bytes=off.bytes_in_ram,
        short_gpu_bytes=short_gpu,
        short_ram_bytes=short_ram,
        rope_scaled_max_context=rope_scaled_context(model),
        speed=speed,
        serving=speeds_of(speed, s.users),
        concurrent=s.users,
        defaults_used=s.defaults_used,
        notes=s.notes
        + ((note(SPEED_COVERAGE_NOTES[speed.calibration]),) if speed.calibration in SPEED_COVERAGE_NOTES else ()),
    )


def prompt_of(s: Scenario, n_tokens: int, depth: int = 0) -> PromptTime:
    """A prompt of ``n_tokens`` after ``depth`` cached ones on the scenario's setup: what a pasted prompt
    run (llama-bench pp2048 at d32768, a llama-server prompt) is measured against."""
    placement = place(s.model, s.quant, s.hardware, s.workload, s.measured)
    return prompt_time(s.model, placement.weights, placement, s.hardware, s.workload, n_tokens, depth, s.quant.id)


def estimate(
    model: ModelSpec,
    gpu: GpuSpec,
    quant: QuantSpec,
    request: Request,
    measured: QuantSize | None = None,
) -> FitEstimate:
    """Fit estimate for one model, quant and hardware: ``estimate_of(scenario(...))``."""
    return estimate_of(scenario(model, gpu, request, quant=quant, measured=measured))


__all__ = [
    "DEFAULT_CONTEXT",
    "DEFAULT_COST_USERS",
    "DEFAULT_ENGINE",
    "DEFAULT_PROMPT_TOKENS",
    "DEFAULT_QUANT",
    "ENGINE_KV_TYPES",
    "GIB",
    "EstimateError",
    "FitEstimate",
    "Request",
    "Resolved",
    "Scenario",
    "default_kv",
    "device_on",
    "assumed",
    "default_quant",
    "estimate",
    "estimate_of",
    "hardware_on",
    "hardware_ref",
    "model_ref",
    "on_device",
    "prompt_of",
    "ram_gb_of",
    "resolved",
    "rope_scaled_context",
    "scenario",
    "shared_hardware",
    "shared_workload",
    "varied",
    "with_kv",
    "workload_of",
]

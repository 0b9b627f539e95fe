"""Diagnose a pasted launch command: what lands where, whether it fits, how fast, and what to change.

``diagnose`` takes the parsed flags (``core.diagnose_flags``; a log becomes flags through
``core.diagnose_log``), the model, quant and hardware, and returns a ``Diagnosis``: the placement
per GPU and in RAM (``core.diagnose_place`` for llama.cpp and Ollama, the vLLM memory model for
vLLM), the speed from the estimator, the problems found as codes, and at most two flag changes with
the corrected command and the placement and speed it gives. Nothing is executed.

The order fixes are tried in follows ``core.advice.nearest_fix`` (least intrusive first): a context
read from the model (``-c`` missing with ``--fit off``, or ``-c 0``) is cut first; then a quantized
KV cache (q8_0: near-lossless), a tensor split by free memory on several GPUs, and offload
(``--n-cpu-moe`` for MoE, ``-ngl`` for dense); the context last. A command that fits but offloads
more than it must gets the smaller offload, with the speed it gains.
"""

from __future__ import annotations

import math
import shlex
from typing import Literal

from core.diagnose_flags import LaunchFlags
from core.diagnose_place import ALL, KV_TYPE_BYTES, DeviceLoad, Layout, Settings, layout
from core.estimate import DEFAULT_CONTEXT, Request, estimate
from core.fit import Verdict, breakdown, place
from core.fit import max_context as fit_max_context
from core.models import Engine, Frozen, GpuSpec, Hardware, KvCacheType, ModelSpec, QuantSize, QuantSpec, Workload
from core.notes import Note, note
from core.ollama import ollama_default_context
from core.speed import SpeedEstimate

FIT_CTX_MIN = 4096  # llama.cpp --fit-ctx default: --fit never cuts the context below it
VLLM_DEFAULT_GMU = 0.9
CTX_STEP = 1024


class FlagChange(Frozen):
    flag: str  # as the engine spells it: "-c", "--n-cpu-moe", "OLLAMA_KV_CACHE_TYPE"
    value: str | None  # None: remove the flag
    reason: str  # locale code: diagnose.reason.<reason>


class Outcome(Frozen):
    """One placement: per device, the verdict and the speed (None when it does not fit)."""

    devices: tuple[DeviceLoad, ...]
    verdict: Verdict
    over: tuple[str, ...] = ()
    speed: SpeedEstimate | None = None
    context: int
    kv_tokens: int | None = None  # vLLM: tokens the KV cache holds


class Diagnosis(Frozen):
    engine: Literal["llama.cpp", "vllm", "ollama"]
    model_id: str
    model_name: str
    quant: str
    context: int
    cache_k: str
    cache_v: str
    gpu_name: str
    gpu_count: int
    outcome: Outcome
    problems: tuple[Note, ...] = ()
    changes: tuple[FlagChange, ...] = ()
    corrected: tuple[str, ...] = ()  # the corrected command as shell lines (empty when nothing changes)
    fixed: Outcome | None = None  # the placement with the changes
    assumptions: tuple[Note, ...] = ()
    unknown_flags: tuple[str, ...] = ()


def diagnose(
    flags: LaunchFlags,
    model: ModelSpec,
    quant: QuantSpec,
    measured: QuantSize | None,
    gpu: GpuSpec,
    count: int,
    ram_bytes: int,
    catalog_quant: dict[str, QuantSpec] | None = None,
) -> Diagnosis:
    """The diagnosis of one command on ``count`` x ``gpu`` with ``ram_bytes`` of system RAM."""
    if flags.engine == "vllm":
        return _vllm(flags, model, quant, measured, gpu, count, ram_bytes)
    return _llama(flags, model, quant, measured, gpu, count, ram_bytes)


# --- llama.cpp and Ollama -----------------------------------------------------------------------


def _outcome(lay: Layout, context: int) -> Outcome:
    return Outcome(devices=lay.devices, verdict=lay.verdict, over=lay.over, speed=lay.speed, context=context)


def _settings(flags: LaunchFlags, model: ModelSpec, vram: int) -> tuple[Settings, bool, list[Note], list[Note]]:
    """Settings with the engine's defaults; (settings, auto-fit on, problems, assumptions)."""
    problems: list[Note] = []
    assumed: list[Note] = []
    ollama = flags.engine == "ollama"
    k = flags.cache_k or "f16"
    v = flags.cache_v or "f16"
    for kind, value in (("k", k), ("v", v)):
        if value not in KV_TYPE_BYTES:
            problems.append(note("bad_cache_type", which=kind, value=value))
    k = k if k in KV_TYPE_BYTES else "f16"
    v = v if v in KV_TYPE_BYTES else "f16"
    fa = flags.flash_attn != "off"
    if ollama and (flags.cache_k or flags.cache_v) and flags.flash_attn != "on":
        problems.append(note("ollama_kv_needs_fa"))  # OLLAMA_KV_CACHE_TYPE is ignored without flash attention
        k = v = "f16"
    elif v not in ("f16", "bf16", "f32") and flags.flash_attn == "off":
        problems.append(note("v_quant_needs_fa", value=v))
    auto_fit = not ollama and flags.fit is not False and flags.gpu_layers is None
    if ollama:
        context = flags.context or min(ollama_default_context(vram), model.max_context)
        if flags.context is None:
            assumed.append(note("ollama_ctx_default", value=context))
    elif not flags.context:
        context = model.max_context
        if flags.context == 0 or flags.fit is False:  # --fit cuts only a context the user left unset
            problems.append(note("ctx_from_model", value=context))
    else:
        context = flags.context
    if context > model.max_context:
        problems.append(note("ctx_over_trained", value=context, max=model.max_context))
    ngl = ALL if flags.gpu_layers is None else flags.gpu_layers
    settings = Settings(
        context=context,
        gpu_layers=ngl,
        n_cpu_moe=flags.n_cpu_moe or 0,
        cpu_moe_all=flags.cpu_moe_all,
        overrides=flags.overrides,
        tensor_split=flags.tensor_split,
        cache_k=k,
        cache_v=v,
        flash_attention=fa,
        ubatch=flags.ubatch or 512,
        no_kv_offload=flags.no_kv_offload,
    )
    if auto_fit:
        assumed.append(note("auto_fit"))
    elif flags.gpu_layers is None and not ollama:
        assumed.append(note("ngl_all"))
    return settings, auto_fit, problems, assumed


def _auto(
    model: ModelSpec,
    quant: QuantSpec,
    measured: QuantSize | None,
    gpu: GpuSpec,
    count: int,
    ram_bytes: int,
    s: Settings,
    ctx_free: bool,
    layers_only: bool,
) -> Settings:
    """What llama.cpp's ``--fit`` (or Ollama's scheduler) picks: context first, then offload."""
    kv = KvCacheType.Q8_0 if KV_TYPE_BYTES[s.cache_k] < 2 else KvCacheType.F16
    hw = Hardware(gpu=gpu, count=count, system_ram_bytes=ram_bytes)
    work = Workload(context=s.context, kv_cache=kv, flash_attention=s.flash_attention, n_ubatch=s.ubatch)
    if ctx_free and layout(model, quant, measured, gpu, count, ram_bytes, s).verdict in (
        Verdict.NO_FIT,
        Verdict.OFFLOAD,
    ):
        best = fit_max_context(model, quant, hw, work, measured)
        s = s.model_copy(update={"context": max(FIT_CTX_MIN, min(s.context, best // CTX_STEP * CTX_STEP or best))})
        work = work.model_copy(update={"context": s.context})
    if layout(model, quant, measured, gpu, count, ram_bytes, s).verdict in (Verdict.FITS, Verdict.TIGHT):
        return s
    if model.is_moe and not layers_only:
        n = _min_cpu_moe(model, quant, measured, gpu, count, ram_bytes, s)
        if n is not None:
            return s.model_copy(update={"n_cpu_moe": n, "gpu_layers": ALL})
    placed = place(model, quant, hw, work, measured)
    ngl = (
        placed.offload.layers_on_gpu
        if placed.offload.mode == "layers"
        else _max_ngl(model, quant, measured, gpu, count, ram_bytes, s)
    )
    return s.model_copy(update={"gpu_layers": ngl})


def _fits(lay: Layout) -> bool:
    return not lay.over


def _min_cpu_moe(
    model: ModelSpec, quant: QuantSpec, measured: QuantSize | None, gpu: GpuSpec, count: int, ram: int, s: Settings
) -> int | None:
    """Fewest layers whose experts go to RAM for everything else to fit on the GPU(s) with reserve."""
    base = s.model_copy(update={"gpu_layers": ALL, "cpu_moe_all": False, "overrides": ()})
    lo, hi = 0, model.n_layers
    if not _comfortable(layout(model, quant, measured, gpu, count, ram, base.model_copy(update={"n_cpu_moe": hi}))):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if _comfortable(layout(model, quant, measured, gpu, count, ram, base.model_copy(update={"n_cpu_moe": mid}))):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _comfortable(lay: Layout) -> bool:
    return not lay.over and not lay.tight


def _max_ngl(
    model: ModelSpec, quant: QuantSpec, measured: QuantSize | None, gpu: GpuSpec, count: int, ram: int, s: Settings
) -> int:
    """Most layers on the GPU(s) that still fit with reserve (0 when even one does not)."""
    base = s.model_copy(update={"n_cpu_moe": 0, "cpu_moe_all": False})
    if _comfortable(layout(model, quant, measured, gpu, count, ram, base.model_copy(update={"gpu_layers": ALL}))):
        return ALL
    lo, hi = 0, model.n_layers
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _comfortable(layout(model, quant, measured, gpu, count, ram, base.model_copy(update={"gpu_layers": mid}))):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _llama(
    flags: LaunchFlags,
    model: ModelSpec,
    quant: QuantSpec,
    measured: QuantSize | None,
    gpu: GpuSpec,
    count: int,
    ram: int,
) -> Diagnosis:
    ollama = flags.engine == "ollama"
    s, auto_fit, problems, assumed = _settings(flags, model, gpu.memory_bytes)
    for old, new in flags.removed:
        problems.append(note("removed_flag", flag=old, new=new))
    if flags.tensor_split and len(flags.tensor_split) > count:
        problems.append(note("ts_more_than_gpus", n=len(flags.tensor_split), gpus=count))
    if flags.visible_devices is not None and flags.visible_devices < count:
        count = max(1, flags.visible_devices)
        assumed.append(note("visible_devices", n=count))
    if (flags.n_cpu_moe or flags.cpu_moe_all) and not model.is_moe:
        problems.append(note("cpu_moe_dense"))
    asked = s
    if auto_fit or (ollama and flags.gpu_layers is None):
        ctx_free = not flags.context if not ollama else False
        s = _auto(model, quant, measured, gpu, count, ram, s, ctx_free, layers_only=ollama)
        if s.context != asked.context:
            problems.append(note("fit_cuts_ctx", value=s.context, asked=asked.context))
    lay = layout(model, quant, measured, gpu, count, ram, s)
    if lay.bad_patterns:
        problems.append(note("bad_pattern", n=len(lay.bad_patterns)))
    outcome = _outcome(lay, s.context)
    changes: list[FlagChange] = []
    fixed_settings: Settings | None = None
    for _old, new in flags.removed:
        changes.append(FlagChange(flag=new, value=None, reason="renamed"))
    if any(p.code == "v_quant_needs_fa" for p in problems):
        changes.append(FlagChange(flag="-fa", value="on", reason="v_quant_needs_fa"))
        fixed_settings = s.model_copy(update={"flash_attention": True})
    if lay.over:
        fix = _fix_overflow(flags, model, quant, measured, gpu, count, ram, s, ollama)
        if fix is not None:
            changes.extend(fix[0])
            fixed_settings = fix[1]
        else:
            problems.append(note("no_fix"))
    elif not (auto_fit or ollama) and lay.verdict is Verdict.OFFLOAD:
        less = _less_offload(model, quant, measured, gpu, count, ram, s)
        if less is not None:
            changes.extend(less[0])
            fixed_settings = less[1]
    elif lay.verdict is Verdict.OFFLOAD and s.cache_k == s.cache_v == "f16":
        # offload chosen by --fit or Ollama: a q8_0 KV cache may bring everything onto the GPU(s)
        full = s.model_copy(
            update={
                "cache_k": "q8_0",
                "cache_v": "q8_0",
                "flash_attention": True,
                "gpu_layers": ALL,
                "n_cpu_moe": 0,
                "cpu_moe_all": False,
            }
        )
        if layout(model, quant, measured, gpu, count, ram, full).verdict in (Verdict.FITS, Verdict.TIGHT):
            changes.extend(_kv_changes(flags, ollama))
            fixed_settings = full
    fixed = None
    if fixed_settings is not None:
        fixed = _outcome(layout(model, quant, measured, gpu, count, ram, fixed_settings), fixed_settings.context)
    if lay.over:
        problems.insert(0, note("oom", devices=", ".join(lay.over)))
    corrected = _apply(flags, changes) if changes else ()
    return Diagnosis(
        engine=flags.engine,
        model_id=model.id,
        model_name=model.name,
        quant=quant.id,
        context=s.context,
        cache_k=s.cache_k,
        cache_v=s.cache_v,
        gpu_name=gpu.short_name,
        gpu_count=count,
        outcome=outcome,
        problems=tuple(problems),
        changes=tuple(changes),
        corrected=corrected,
        fixed=fixed,
        assumptions=tuple(assumed),
        unknown_flags=flags.unknown,
    )


def _fix_overflow(
    flags: LaunchFlags,
    model: ModelSpec,
    quant: QuantSpec,
    measured: QuantSize | None,
    gpu: GpuSpec,
    count: int,
    ram: int,
    s: Settings,
    ollama: bool,
) -> tuple[list[FlagChange], Settings] | None:
    """At most two flag changes that make the placement fit, least intrusive first."""

    def ok(candidate: Settings) -> bool:
        return _fits(layout(model, quant, measured, gpu, count, ram, candidate))

    ctx_flag = "num_ctx" if ollama else "-c"
    tries: list[tuple[list[FlagChange], Settings]] = []
    lead: list[FlagChange] = []  # a context cut every other try builds on
    if s.context > model.max_context:  # beyond the trained context: back to it first
        lead = [FlagChange(flag=ctx_flag, value=str(model.max_context), reason="ctx_over_trained")]
        s = _ctx(s, model.max_context)
        tries.append((lead, s))
    ctx_fit = _largest_ctx(model, quant, measured, gpu, count, ram, s)
    from_model = not ollama and not flags.context
    if from_model and not lead and (flags.context == 0 or flags.fit is False):
        cut = ctx_fit or min(model.max_context, DEFAULT_CONTEXT)
        lead = [FlagChange(flag=ctx_flag, value=str(cut), reason="ctx_from_model")]
        s = _ctx(s, cut)
        tries.append((lead, s))
    if s.cache_k == "f16" and s.cache_v == "f16":
        q8 = s.model_copy(update={"cache_k": "q8_0", "cache_v": "q8_0", "flash_attention": True})
        tries.append((_kv_changes(flags, ollama), q8))
    if count > 1 and not ollama:
        split = _split_by_room(model, quant, measured, gpu, count, ram, s)
        if split is not None:
            tries.append(
                ([FlagChange(flag="-ts", value=",".join(f"{x:g}" for x in split), reason="split")], _ts(s, split))
            )
    if ollama:
        ngl = _max_ngl(model, quant, measured, gpu, count, ram, s)
        if ngl and ngl < ALL:
            tries.append(
                (
                    [FlagChange(flag="num_gpu", value=str(ngl), reason="layers")],
                    s.model_copy(update={"gpu_layers": ngl}),
                )
            )
    elif model.is_moe:
        n = _min_cpu_moe(model, quant, measured, gpu, count, ram, s)
        if n is not None:
            moe = [FlagChange(flag="--n-cpu-moe", value=str(n), reason="experts")]
            if s.gpu_layers < model.n_layers + 1:
                moe.append(FlagChange(flag="-ngl", value=str(ALL), reason="experts"))
            if s.overrides:
                moe.append(FlagChange(flag="-ot", value=None, reason="experts"))
            tries.append(
                (moe, s.model_copy(update={"n_cpu_moe": n, "gpu_layers": ALL, "overrides": (), "cpu_moe_all": False}))
            )
    else:
        ngl = _max_ngl(model, quant, measured, gpu, count, ram, s)
        if ngl and ngl < ALL:
            tries.append(
                ([FlagChange(flag="-ngl", value=str(ngl), reason="layers")], s.model_copy(update={"gpu_layers": ngl}))
            )
    if ctx_fit and not from_model and ctx_fit < s.context:
        tries.append(([FlagChange(flag=ctx_flag, value=str(ctx_fit), reason="ctx")], _ctx(s, ctx_fit)))
    for changes, candidate in tries:
        if ok(candidate):
            return (changes if changes is lead else [*lead, *changes]), candidate
    return None


def _kv_changes(flags: LaunchFlags, ollama: bool) -> list[FlagChange]:
    """A q8_0 KV cache: -ctk/-ctv (flash attention on if it was off), or Ollama's environment."""
    if ollama:
        return [
            FlagChange(flag="OLLAMA_KV_CACHE_TYPE", value="q8_0", reason="kv_q8"),
            FlagChange(flag="OLLAMA_FLASH_ATTENTION", value="1", reason="kv_q8"),
        ]
    kv = [FlagChange(flag="-ctk", value="q8_0", reason="kv_q8"), FlagChange(flag="-ctv", value="q8_0", reason="kv_q8")]
    if flags.flash_attn == "off":
        kv.append(FlagChange(flag="-fa", value="on", reason="v_quant_needs_fa"))
    return kv


def _ctx(s: Settings, ctx: int) -> Settings:
    return s.model_copy(update={"context": ctx})


def _ts(s: Settings, split: tuple[float, ...]) -> Settings:
    return s.model_copy(update={"tensor_split": split})


def _largest_ctx(
    model: ModelSpec, quant: QuantSpec, measured: QuantSize | None, gpu: GpuSpec, count: int, ram: int, s: Settings
) -> int | None:
    """Largest context (a multiple of 1024, at least 4096, below the current one) that fits comfortably."""
    lo, hi = FIT_CTX_MIN // CTX_STEP, min(s.context, model.max_context) // CTX_STEP
    if hi < lo or not _comfortable(layout(model, quant, measured, gpu, count, ram, _ctx(s, lo * CTX_STEP))):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _comfortable(layout(model, quant, measured, gpu, count, ram, _ctx(s, mid * CTX_STEP))):
            lo = mid
        else:
            hi = mid - 1
    return lo * CTX_STEP if lo * CTX_STEP < s.context else None


def _split_by_room(
    model: ModelSpec, quant: QuantSpec, measured: QuantSize | None, gpu: GpuSpec, count: int, ram: int, s: Settings
) -> tuple[float, ...] | None:
    """An even split when the asked one overloads a GPU (identical GPUs: equal room each)."""
    even = tuple(1.0 for _ in range(count))
    if s.tensor_split and tuple(_norm(s.tensor_split[:count])) != tuple(_norm(even)):
        return even
    return None


def _norm(split: tuple[float, ...]) -> list[float]:
    total = sum(split) or 1.0
    return [round(x / total, 4) for x in split]


def _less_offload(
    model: ModelSpec, quant: QuantSpec, measured: QuantSize | None, gpu: GpuSpec, count: int, ram: int, s: Settings
) -> tuple[list[FlagChange], Settings] | None:
    """A command that offloads more than it must: the smallest offload that still fits, if faster."""
    if s.gpu_layers <= model.n_layers:
        ngl = _max_ngl(model, quant, measured, gpu, count, ram, s)
        if ngl > s.gpu_layers:
            new = s.model_copy(update={"gpu_layers": ngl})
            if (
                model.is_moe
                and ngl < ALL
                and (n := _min_cpu_moe(model, quant, measured, gpu, count, ram, s)) is not None
            ):
                changes = [
                    FlagChange(flag="-ngl", value=str(ALL), reason="more_gpu"),
                    FlagChange(flag="--n-cpu-moe", value=str(n), reason="more_gpu"),
                ]
                return changes, s.model_copy(update={"gpu_layers": ALL, "n_cpu_moe": n})
            return [FlagChange(flag="-ngl", value=str(ngl), reason="more_gpu")], new
        return None
    if model.is_moe and (s.n_cpu_moe or s.cpu_moe_all or s.overrides):
        n = _min_cpu_moe(model, quant, measured, gpu, count, ram, s)
        current = layout(model, quant, measured, gpu, count, ram, s).experts_in_ram_layers
        if n is not None and n < current - 0.5:
            changes = [FlagChange(flag="--n-cpu-moe", value=str(n), reason="more_gpu")]
            if s.overrides:
                changes.append(FlagChange(flag="-ot", value=None, reason="more_gpu"))
            if s.cpu_moe_all:
                changes.append(FlagChange(flag="--cpu-moe", value=None, reason="more_gpu"))
            return changes, s.model_copy(update={"n_cpu_moe": n, "overrides": (), "cpu_moe_all": False})
    return None


# --- vLLM -----------------------------------------------------------------------------------------


def _vllm(
    flags: LaunchFlags,
    model: ModelSpec,
    quant: QuantSpec,
    measured: QuantSize | None,
    gpu: GpuSpec,
    count: int,
    ram: int,
) -> Diagnosis:
    problems: list[Note] = []
    assumed: list[Note] = []
    tp = flags.tensor_parallel or 1
    gmu = flags.gpu_memory_utilization or VLLM_DEFAULT_GMU
    context = flags.context or model.max_context
    if flags.context is None:
        problems.append(note("vllm_ctx_from_model", value=context))
    kv_name = flags.kv_cache_dtype or "auto"
    kv = KvCacheType.FP8 if kv_name.startswith("fp8") else KvCacheType.BF16
    if tp > count:
        problems.append(note("tp_more_than_gpus", tp=tp, gpus=count))
    if model.n_heads % tp or (model.n_kv_heads and tp > model.n_kv_heads and tp % model.n_kv_heads):
        problems.append(note("tp_heads", tp=tp, heads=model.n_heads))
    if gpu.unified_memory and gpu.category == "apple":
        problems.append(note("vllm_no_metal"))
    if gmu > 0.98:
        problems.append(note("gmu_high", value=gmu))
    usable_tp = min(tp, count)
    outcome, weights_fit = _vllm_outcome(model, quant, measured, gpu, usable_tp, ram, context, kv, gmu)
    changes: list[FlagChange] = []
    fixed: Outcome | None = None
    if tp > count:
        changes.append(FlagChange(flag="--tensor-parallel-size", value=str(count), reason="tp_gpus"))
    if not weights_fit:
        problems.insert(0, note("vllm_weights_oom"))
        more = next((n for n in (2, 4, 8) if n <= count and n > usable_tp and model.n_heads % n == 0), None)
        if more is not None:
            changes.append(FlagChange(flag="--tensor-parallel-size", value=str(more), reason="tp_more"))
            fixed, _ = _vllm_outcome(model, quant, measured, gpu, more, ram, context, kv, gmu)
        else:
            problems.append(note("vllm_needs_quant"))
    elif outcome.over:
        problems.insert(0, note("vllm_kv_short", tokens=outcome.kv_tokens or 0, value=context))
        room = outcome.kv_tokens or 0
        if kv is not KvCacheType.FP8 and room * 2 >= context:
            changes.append(FlagChange(flag="--kv-cache-dtype", value="fp8", reason="kv_fp8"))
            fixed, _ = _vllm_outcome(model, quant, measured, gpu, usable_tp, ram, context, KvCacheType.FP8, gmu)
        elif room >= FIT_CTX_MIN:
            cut = room // CTX_STEP * CTX_STEP
            changes.append(FlagChange(flag="--max-model-len", value=str(cut), reason="ctx"))
            fixed, _ = _vllm_outcome(model, quant, measured, gpu, usable_tp, ram, cut, kv, gmu)
        else:
            problems.append(note("no_fix"))
    corrected = _apply(flags, changes) if changes else ()
    assumed.append(note("vllm_gmu", share=gmu))
    return Diagnosis(
        engine="vllm",
        model_id=model.id,
        model_name=model.name,
        quant=quant.id,
        context=context,
        cache_k=kv.value,
        cache_v=kv.value,
        gpu_name=gpu.short_name,
        gpu_count=usable_tp,
        outcome=outcome,
        problems=tuple(problems),
        changes=tuple(changes),
        corrected=corrected,
        fixed=fixed,
        assumptions=tuple(assumed),
        unknown_flags=flags.unknown,
    )


def _vllm_outcome(
    model: ModelSpec,
    quant: QuantSpec,
    measured: QuantSize | None,
    gpu: GpuSpec,
    tp: int,
    ram: int,
    context: int,
    kv: KvCacheType,
    gmu: float,
) -> tuple[Outcome, bool]:
    """vLLM pre-allocates ``gmu`` of each GPU: weights and overhead first, the rest is KV cache, which
    must hold one sequence of ``--max-model-len`` tokens (else vLLM refuses to start)."""
    hw = Hardware(gpu=gpu, count=tp, system_ram_bytes=ram)
    work = Workload(context=context, kv_cache=kv, engine=Engine.VLLM, gpu_memory_utilization=gmu)
    mem, _ = breakdown(model, quant, hw, work, measured)
    weights_per = mem.weights_bytes // tp
    overhead_per = mem.overhead_bytes // tp
    kv_need_per = mem.kv_cache_bytes // tp
    usable_per = mem.usable_bytes // tp
    room = usable_per - weights_per - overhead_per
    per_token = max(1, mem.kv_cache_bytes / max(context, 1))
    tokens = max(0, math.floor(room * tp / per_token))
    devices = tuple(
        DeviceLoad(
            name=f"GPU {i}",
            weights_bytes=weights_per,
            kv_bytes=max(room, 0),  # vLLM fills all the rest with KV cache blocks
            overhead_bytes=overhead_per,
            usable_bytes=usable_per,
            layers=model.n_layers,
        )
        for i in range(tp)
    )
    ram_row = DeviceLoad(name="RAM", weights_bytes=0, kv_bytes=0, overhead_bytes=0, usable_bytes=0)
    weights_fit = room > 0
    over = tuple(d.name for d in devices) if room < kv_need_per else ()
    speed = None
    if not over:
        req = Request(engine=Engine.VLLM, quant=quant.id, context=context, kv_cache=kv, gpu_count=tp)
        speed = estimate(model, gpu, quant, req, measured).speed
    verdict = Verdict.NO_FIT if over else Verdict.FITS
    return Outcome(
        devices=(*devices, ram_row), verdict=verdict, over=over, speed=speed, context=context, kv_tokens=tokens
    ), weights_fit


# --- the corrected command ----------------------------------------------------------------------

# every spelling of a flag the fixes may change, so the change replaces it wherever the user put it
_SPELLINGS: dict[str, tuple[str, ...]] = {
    "-c": ("-c", "--ctx-size"),
    "-ngl": ("-ngl", "--gpu-layers", "--n-gpu-layers"),
    "-ctk": ("-ctk", "--cache-type-k"),
    "-ctv": ("-ctv", "--cache-type-v"),
    "-ts": ("-ts", "--tensor-split"),
    "-ot": ("-ot", "--override-tensor"),
    "--n-cpu-moe": ("-ncmoe", "--n-cpu-moe"),
    "--cpu-moe": ("-cmoe", "--cpu-moe"),
    "-fa": ("-fa", "--flash-attn"),
    "--max-model-len": ("--max-model-len",),
    "--kv-cache-dtype": ("--kv-cache-dtype",),
    "--tensor-parallel-size": ("-tp", "--tensor-parallel-size"),
    "--spec-draft-n-max": ("--draft-max", "--draft", "--draft-n", "--spec-draft-n-max"),
    "--spec-draft-n-min": ("--draft-min", "--draft-n-min", "--spec-draft-n-min"),
}
_SWITCHES = frozenset({"--cpu-moe"})
_ENV_FLAGS = frozenset({"OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION", "OLLAMA_CONTEXT_LENGTH"})


def _apply(flags: LaunchFlags, changes: list[FlagChange]) -> tuple[str, ...]:
    """The pasted argv with the changes: each flag replaced where it stood (any spelling), else appended."""
    if flags.engine == "ollama":
        return _apply_ollama(flags, changes)
    argv = list(flags.argv)
    for change in changes:
        if change.reason == "renamed":  # keep the value, change the name
            argv = [change.flag if tok in _SPELLINGS.get(change.flag, ()) else tok for tok in argv]
            continue
        spellings = _SPELLINGS.get(change.flag, (change.flag,))
        out: list[str] = []
        done = False
        i = 0
        while i < len(argv):
            tok = argv[i]
            name = tok.split("=", 1)[0]
            if name in spellings:
                has_value = "=" not in tok and change.flag not in _SWITCHES and i + 1 < len(argv)
                if change.flag == "-fa" and has_value and argv[i + 1].startswith("-"):
                    has_value = False  # a bare "-fa"
                if change.value is not None and not done:
                    out += [name, change.value] if change.flag not in _SWITCHES else [name]
                    done = True
                i += 2 if has_value else 1
                continue
            out.append(tok)
            i += 1
        if not done and change.value is not None:
            out += [change.flag, change.value]
        argv = out
    return (shlex.join(argv),)


def _apply_ollama(flags: LaunchFlags, changes: list[FlagChange]) -> tuple[str, ...]:
    """Ollama takes its cache settings from the server's environment and num_ctx/num_gpu as Modelfile
    parameters: the server line (when the environment changes), then the Modelfile or the run line."""
    env = {k: v for k, v in flags.env if k in _ENV_FLAGS}
    params: dict[str, str] = {}
    if flags.context:
        params["num_ctx"] = str(flags.context)
    if flags.gpu_layers is not None:
        params["num_gpu"] = str(flags.gpu_layers)
    asked = dict(params)
    for change in changes:
        if change.value is None:
            continue
        if change.flag in _ENV_FLAGS:
            env[change.flag] = change.value
        else:
            params[change.flag] = change.value
    lines: tuple[str, ...] = ()
    if env != {k: v for k, v in flags.env if k in _ENV_FLAGS}:
        lines += (" ".join((*(f"{k}={v}" for k, v in env.items()), "ollama", "serve")),)
    modelfile = bool(flags.argv) and flags.argv[0].lower() == "from"
    if modelfile or params != asked:
        lines += (f"FROM {flags.model_ref}", *(f"PARAMETER {k} {v}" for k, v in params.items()))
    else:
        lines += (f"ollama run {flags.model_ref}",)
    return lines


__all__ = ["Diagnosis", "FlagChange", "Outcome", "diagnose"]

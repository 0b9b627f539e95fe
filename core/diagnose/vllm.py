"""Diagnosing a ``vllm serve`` command: vLLM pre-allocates its share of each GPU, weights and overhead
first, and the rest must hold one ``--max-model-len`` sequence of KV cache or vLLM refuses to start."""

from __future__ import annotations

import math

from core.diagnose.argv import corrected_command
from core.diagnose.flags import LaunchFlags
from core.diagnose.place import DeviceLoad
from core.diagnose.types import CTX_STEP, FIT_CTX_MIN, VLLM_DEFAULT_GMU, Diagnosis, FlagChange, Outcome
from core.estimate import Request, estimate
from core.fit import Verdict, breakdown
from core.memory import RAM_USABLE_FRACTION
from core.models import Engine, GpuSpec, Hardware, KvCacheType, ModelSpec, QuantSize, QuantSpec, Workload
from core.notes import Note, note


def diagnose_vllm(
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
    offload = round((flags.cpu_offload_gb or 0) * 1e9)  # --cpu-offload-gb: weights vLLM keeps in RAM, per GPU
    if offload:
        assumed.append(note("vllm_cpu_offload", value=flags.cpu_offload_gb or 0))
    outcome, weights_fit = _vllm_outcome(model, quant, measured, gpu, usable_tp, ram, context, kv, gmu, offload)
    changes: list[FlagChange] = []
    fixed: Outcome | None = None
    if tp > count:
        changes.append(FlagChange(flag="--tensor-parallel-size", value=str(count), reason="tp_gpus"))
    if not weights_fit:
        problems.insert(0, note("vllm_weights_oom"))
        more = next((n for n in (2, 4, 8) if n <= count and n > usable_tp and model.n_heads % n == 0), None)
        if more is not None:
            changes.append(FlagChange(flag="--tensor-parallel-size", value=str(more), reason="tp_more"))
            fixed, _ = _vllm_outcome(model, quant, measured, gpu, more, ram, context, kv, gmu, offload)
        else:
            problems.append(note("vllm_needs_quant"))
    elif outcome.over:
        problems.insert(0, note("vllm_kv_short", tokens=outcome.kv_tokens or 0, value=context))
        room = outcome.kv_tokens or 0
        if kv is not KvCacheType.FP8 and room * 2 >= context:
            changes.append(FlagChange(flag="--kv-cache-dtype", value="fp8", reason="kv_fp8"))
            fixed, _ = _vllm_outcome(
                model, quant, measured, gpu, usable_tp, ram, context, KvCacheType.FP8, gmu, offload
            )
        elif room >= FIT_CTX_MIN:
            cut = room // CTX_STEP * CTX_STEP
            changes.append(FlagChange(flag="--max-model-len", value=str(cut), reason="ctx"))
            fixed, _ = _vllm_outcome(model, quant, measured, gpu, usable_tp, ram, cut, kv, gmu, offload)
        else:
            problems.append(note("no_fix"))
    corrected, refused = corrected_command(flags, changes)
    if refused is not None:
        problems.append(refused)
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
    offload_bytes: int = 0,
) -> tuple[Outcome, bool]:
    """vLLM pre-allocates ``gmu`` of each GPU: weights and overhead first, the rest is KV cache, which
    must hold one sequence of ``--max-model-len`` tokens (else vLLM refuses to start)."""
    hw = Hardware(gpu=gpu, count=tp, system_ram_bytes=ram)
    work = Workload(context=context, kv_cache=kv, engine=Engine.VLLM, gpu_memory_utilization=gmu)
    mem, _ = breakdown(model, quant, hw, work, measured)
    weights_per = max(0, mem.weights_bytes // tp - offload_bytes)
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
    in_ram = min(offload_bytes * tp, mem.weights_bytes)
    ram_row = DeviceLoad(
        name="RAM", weights_bytes=in_ram, kv_bytes=0, overhead_bytes=0, usable_bytes=round(ram * RAM_USABLE_FRACTION)
    )
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


__all__ = ["diagnose_vllm"]

"""Diagnose a pasted launch command: what lands where, whether it fits, how fast, and what to change.

``diagnose`` takes the parsed flags (``core.diagnose.flags``; a log becomes flags through
``core.diagnose.log``), the model, quant and hardware, and returns a ``Diagnosis``: the placement
per GPU and in RAM (``core.diagnose.place`` for llama.cpp and Ollama, the vLLM memory model for
vLLM), the speed from the estimator, the problems found as codes, and at most two flag changes with
the corrected command and the placement and speed it gives. Nothing is executed.

The order fixes are tried in follows ``core.advice.nearest_fix`` (least intrusive first): a context
read from the model (``-c`` missing with ``--fit off``, or ``-c 0``) is cut first; then a quantized
KV cache (q8_0: near-lossless), a tensor split by free memory on several GPUs, and offload
(``--n-cpu-moe`` for MoE, ``-ngl`` for dense); the context last. A command that fits but offloads
more than it must gets the smaller offload, with the speed it gains.
"""

from __future__ import annotations

from core.diagnose.argv import corrected_command
from core.diagnose.flags import LaunchFlags
from core.diagnose.place import ALL, KV_TYPE_BYTES, Layout, Settings, layout
from core.diagnose.types import CTX_STEP, FIT_CTX_MIN, Diagnosis, FlagChange, Outcome
from core.diagnose.vllm import diagnose_vllm
from core.estimate import DEFAULT_CONTEXT
from core.fit import Verdict, place
from core.fit import max_context as fit_max_context
from core.launch.ollama import ollama_default_context
from core.models import GpuSpec, Hardware, KvCacheType, ModelSpec, QuantSize, QuantSpec, Workload
from core.notes import Note, note


def diagnose(
    flags: LaunchFlags,
    model: ModelSpec,
    quant: QuantSpec,
    measured: QuantSize | None,
    gpu: GpuSpec,
    count: int,
    ram_bytes: int,
) -> Diagnosis:
    """The diagnosis of one command on ``count`` x ``gpu`` with ``ram_bytes`` of system RAM."""
    if flags.engine == "vllm":
        return diagnose_vllm(flags, model, quant, measured, gpu, count, ram_bytes)
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
    corrected, refused = corrected_command(flags, changes)
    if refused is not None:
        problems.append(refused)
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


__all__ = ["Diagnosis", "FlagChange", "Outcome", "diagnose"]

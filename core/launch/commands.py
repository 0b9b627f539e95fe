"""Launch commands for llama.cpp and vLLM that reproduce a scenario's settings exactly.

A command is only written for a scenario that runs (fits, tight or offload), from the same
placement its estimate used, so the command and the card agree on layers, experts and KV cache.
"""

# no ``from __future__ import annotations``: pydantic reads these models' field types as objects instead of
# compiling each from a string, a few milliseconds of every start (``fitbot estimate``, issue 33)

import shlex
from typing import Literal

from pydantic import computed_field

from core.estimate import ENGINE_KV_TYPES, EstimateError, FitEstimate, Scenario, default_quant, varied
from core.fit import Placement, Verdict, place
from core.launch.vllm_hardware import fp8_weight_only, needs_half, vllm_quant_problem
from core.models import Backend, Catalog, Engine, Frozen, KvCacheType, Workload
from core.notes import Note, note
from core.speed.device import BACKEND_LABELS, LLAMA_CPP_BUILD_FLAGS, vllm_max_num_seqs

VLLM_GPU_MEMORY_UTILIZATION: float = Workload.model_fields["gpu_memory_utilization"].default
ALL_LAYERS = "999"  # -ngl above the layer count also offloads the output layer


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
    notes: tuple[Note, ...] = ()  # what the command needs besides itself, as codes with values

    @computed_field  # type: ignore[prop-decorator]
    @property
    def shell(self) -> str:
        return shlex.join(self.argv)


def launch_command(s: Scenario, est: FitEstimate | Placement) -> LaunchCommand | None:
    """The server command for this scenario's settings; None when it does not fit or cannot run. ``est`` is
    its estimate or just its placement: the verdict and the offload are all a command reads."""
    if est.verdict is Verdict.NO_FIT:
        return None
    model, quant = s.model, s.quant
    count, ctx, kv, concurrent = s.count, s.context, s.kv_cache, s.users
    notes: list[Note] = []
    if s.engine is Engine.LLAMA_CPP:
        ref = ["-hf", f"{model.gguf_repo}:{quant.id}"] if model.gguf_repo else ["-m", f"{model.id}-{quant.id}.gguf"]
        if not model.gguf_repo:
            notes.append(note("cmd_no_gguf_repo", quant=quant.id))
        argv = ["llama-server", *ref, "--ctx-size", str(ctx * concurrent)]
        if (flag := LLAMA_CPP_BUILD_FLAGS.get(s.device.backend)) is not None:
            notes.append(note("cmd_build", backend=BACKEND_LABELS[s.device.backend], flag=flag))
        if concurrent > 1:
            argv += ["--parallel", str(concurrent)]  # the context is shared by the slots
        off = est.offload
        gpu_build = s.device.backend is not Backend.CPU  # CPU only: no GPU device to put layers on, so no -ngl
        if gpu_build and off.mode == "layers":
            argv += ["-ngl", str(off.layers_on_gpu)]
        elif gpu_build:
            argv += ["-ngl", ALL_LAYERS]
            if off.mode == "experts":
                argv += ["--n-cpu-moe", str(off.cpu_moe_layers)]
        if off.mode != "none":
            notes.append(note("cmd_needs_ram", ram_bytes=off.bytes_in_ram))
        if kv is not KvCacheType.F16:
            argv += ["--cache-type-k", kv.value, "--cache-type-v", kv.value]
        argv += ["--flash-attn", "on"]
        if count > 1:
            argv += ["--tensor-split", ",".join(["1"] * count)]
    else:
        if s.device.unified_memory:
            return None  # vLLM has no Metal backend
        if vllm_quant_problem(quant.id, s.device) is not None:
            return None  # vLLM does not run this quant on this GPU (core.launch.vllm_hardware)
        ref_repo = model.hf_repo or f"./{model.id}"
        argv = ["vllm", "serve", ref_repo, "--max-model-len", str(ctx)]
        if count > 1:
            # vLLM: "Total number of attention heads must be divisible by tensor parallel size"
            # (ModelConfig.verify_with_parallel_config); the rest of the GPUs form pipeline stages
            tp = max(d for d in range(1, count + 1) if count % d == 0 and model.n_heads % d == 0)
            if tp > 1:
                argv += ["--tensor-parallel-size", str(tp)]
            if count // tp > 1:
                argv += ["--pipeline-parallel-size", str(count // tp)]
        argv += ["--gpu-memory-utilization", f"{VLLM_GPU_MEMORY_UTILIZATION:g}"]
        if concurrent > 1:  # never above vLLM's default for the GPU: the card's users at once assume it
            argv += ["--max-num-seqs", str(min(concurrent, vllm_max_num_seqs(s.device)))]
        if kv is KvCacheType.FP8:
            argv += ["--kv-cache-dtype", "fp8"]
        if needs_half(quant.id, model.native_dtype, s.device):
            argv += ["--dtype", "half"]
        native = model.native_dtype == quant.id.lower()
        if quant.id.upper() == "FP8" and not native:
            # online FP8 of the BF16 checkpoint (docs/features/quantization/fp8.md); a published FP8
            # checkpoint replaces repo and flag (``core.launch.tools.with_repo``)
            argv += ["--quantization", "fp8"]
            if fp8_weight_only(s.device):
                notes.append(note("cmd_fp8_weight_only"))
        elif quant.format == "checkpoint" and not native and quant.id.upper() not in ("BF16", "F16"):
            # AWQ, GPTQ, NVFP4: vLLM reads the method from the checkpoint's quantization_config; the
            # command is only shown once a repository holding that checkpoint replaces the base one
            notes.append(note("cmd_prequantized", quant=quant.id, repo=ref_repo))
    return LaunchCommand(
        engine=s.engine,
        quant=quant.id,
        argv=tuple(argv),
        context=ctx,
        concurrent=concurrent,
        kv_cache=kv,
        gpu_count=count,
        verdict=est.verdict,
        offload_mode=est.offload.mode,
        notes=tuple(notes),
    )


def launch_commands(s: Scenario, catalog: Catalog, est: FitEstimate | None = None) -> tuple[LaunchCommand, ...]:
    """Commands for the asked engine (``est`` is its estimate, when known) and the other one, each with
    its engine's quant; only those that fit (the other engine's is placed, not estimated: a command
    needs no speed)."""
    commands: list[LaunchCommand] = []
    for engine in (s.engine, *(e for e in Engine if e is not s.engine)):
        if engine is s.engine:
            there, there_est = s, est
        else:
            kv = s.request.kv_cache if s.request.kv_cache in ENGINE_KV_TYPES[engine] else None
            try:
                there = varied(s, catalog, engine=engine, quant=default_quant(s.model, engine), kv_cache=kv)
            except EstimateError:
                continue
            there_est = None
        placed = there_est or place(there.model, there.quant, there.hardware, there.workload, there.measured)
        cmd = launch_command(there, placed)
        if cmd is not None:
            commands.append(cmd)
    return tuple(commands)


__all__ = ["ALL_LAYERS", "VLLM_GPU_MEMORY_UTILIZATION", "LaunchCommand", "launch_command", "launch_commands"]

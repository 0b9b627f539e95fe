"""Launch settings beside the llama.cpp and vLLM commands: LM Studio, llama.cpp's own fitting, and the
pre-quantized repository a vLLM command should load.

* LM Studio (lmstudio.ai/docs: ``lms load --gpu --context-length``; the load settings Flash
  Attention, K/V Cache Quantization Type; "Force Model Expert Weights onto CPU" since 0.3.23, which
  moves *all* routed experts, not the first N layers as ``--n-cpu-moe N`` does).
* llama.cpp ``--fit on`` (default in current builds, tools/server/README.md): it picks ``-ngl`` and
  the expert offload itself for the free memory, leaving ``--fit-target`` MiB (default 1024) per GPU;
  the manual flags pin the placement FitBot computed instead.
* vLLM quantizes only to FP8 at load time; an AWQ/GPTQ/NVFP4 command must name a checkpoint in that
  format (``catalog/facts/quant_repos.toml``), else there is no command and the card says none is known;
  an FP8 command loads a published FP8 checkpoint where one is known, else quantizes the BF16 one online.
"""

from __future__ import annotations

from core.estimate import FitEstimate
from core.launch.commands import LaunchCommand
from core.launch.ollama import ToolCommand
from core.models import Engine, Frozen, KvCacheType, Provenance

FIT_TARGET_MIB = 1024
_MANUAL = {"-ngl": 1, "--n-cpu-moe": 1}


class QuantRepo(Frozen):
    model_id: str
    quant: str
    repo: str
    provenance: Provenance


class Setting(Frozen):
    """One LM Studio load setting: ``code`` names the locale label, ``value`` is shown as given."""

    code: str  # gpu_offload, context_length, flash_attention, k_cache, v_cache, experts_on_cpu
    value: str


def lm_studio_settings(est: FitEstimate) -> tuple[Setting, ...]:
    """The LM Studio load settings that reproduce the estimate's placement, context and cache."""
    off = est.offload
    layers = off.layers_on_gpu if off.mode == "layers" else off.layers_total
    out = [
        Setting(code="gpu_offload", value=f"{layers}/{off.layers_total}"),
        Setting(code="context_length", value=str(est.context)),
        Setting(code="flash_attention", value="on"),
    ]
    if est.kv_cache is not KvCacheType.F16:
        out += [Setting(code="k_cache", value=est.kv_cache.value), Setting(code="v_cache", value=est.kv_cache.value)]
    if off.mode == "experts":
        out.append(Setting(code="experts_on_cpu", value="on"))
    return tuple(out)


def fit_command(cmd: LaunchCommand) -> ToolCommand | None:
    """The llama.cpp command with ``--fit on`` choosing the offload: the manual placement flags dropped."""
    if cmd.engine is not Engine.LLAMA_CPP:
        return None
    argv: list[str] = []
    skip = 0
    for token in cmd.argv:
        if skip:
            skip -= 1
            continue
        if token in _MANUAL:
            skip = _MANUAL[token]
            continue
        argv.append(token)
    argv += ["--fit", "on", "--fit-target", str(FIT_TARGET_MIB)]
    return ToolCommand(tool="llama.cpp-fit", lines=(" ".join(argv),))


def manual_flags(cmd: LaunchCommand) -> tuple[tuple[str, str], ...]:
    """The placement flags of a llama.cpp command with their values, to explain each one."""
    found = []
    for i, token in enumerate(cmd.argv[:-1]):
        if token in _MANUAL:
            found.append((token, cmd.argv[i + 1]))
    return tuple(found)


def quantized_repo(model_id: str, quant: str, repos: tuple[QuantRepo, ...]) -> QuantRepo | None:
    return next((r for r in repos if r.model_id == model_id and r.quant.upper() == quant.upper()), None)


def with_repo(cmd: LaunchCommand, repo: str) -> LaunchCommand:
    """A vLLM command that loads ``repo`` (the pre-quantized checkpoint) instead of the base model."""
    if cmd.engine is not Engine.VLLM or len(cmd.argv) < 3:
        return cmd
    rest = list(cmd.argv[3:])
    if "--quantization" in rest:  # the checkpoint's quantization_config names its method: no online FP8
        i = rest.index("--quantization")
        del rest[i : i + 2]
    argv = (*cmd.argv[:2], repo, *rest)
    notes = tuple(n for n in cmd.notes if n.code not in ("cmd_prequantized", "cmd_checkpoint"))
    return cmd.model_copy(update={"argv": argv, "notes": notes})


__all__ = [
    "QuantRepo",
    "Setting",
    "fit_command",
    "lm_studio_settings",
    "manual_flags",
    "quantized_repo",
    "with_repo",
]

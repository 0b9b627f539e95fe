"""Which quantized checkpoints vLLM runs on which GPU, by compute capability (issue 35, item 2).

A vLLM command is only written where vLLM runs that quant on that hardware; the rules, each with its
source (the vLLM tree as stored in ``catalog/engines/vllm_quant_hardware.md``):

* vLLM on CUDA needs compute capability 7.0 or higher (docs/getting_started/installation/gpu, "GPU:
  compute capability 7.0 or higher"); BF16 needs 8.0 (``vllm/platforms/cuda.py``
  ``check_if_supports_dtype``: "Bfloat16 is only supported on GPUs with compute capability of at least
  8.0 ... use float16 instead by explicitly setting the `dtype` flag": FitBot then writes ``--dtype half``).
* FP8: W8A8 on Ada (8.9) and Hopper (9.0) and later, weight-only W8A16 through the Marlin kernels on
  Ampere (8.0/8.6); nothing below (docs/features/quantization/fp8.md, supported_hardware.md "FP8 (W8A8)"
  and "Marlin (GPTQ/AWQ/FP8)" rows). On AMD: the "AMD GPU" column, MI300 (CDNA3) and later.
* NVFP4: FP4 tensor cores, Blackwell only (``cutlass_fp4_supported`` ->
  ``cutlass_scaled_mm_supports_fp4``: capability 100 and up; 10.0 B200, 12.0 RTX 50 / RTX PRO, 12.1 GB10,
  11.0 Thor). vLLM can emulate NVFP4 elsewhere (Marlin FP4, weight only), but without FP4 compute the
  card's speed would be wrong and nobody picks FP4 there: not offered.
* AWQ: Turing (7.5) and later, GPTQ: Volta (7.0) and later; neither on AMD GPUs (supported_hardware.md).
* MXFP4 (gpt-oss): ``Mxfp4Config.get_min_capability`` 80; on AMD MI300 (CDNA3) and later.
"""

from __future__ import annotations

from core.models import Backend, Engine, GpuSpec, ModelSpec
from core.notes import Note, note

# compute capability per chip generation of ``GpuSpec.arch`` (developer.nvidia.com/cuda-gpus, as of 2026-12)
CUDA_CAPABILITY: dict[str, float] = {
    "maxwell": 5.2,
    "pascal": 6.1,
    "volta": 7.0,
    "turing": 7.5,
    "ampere-dc": 8.0,  # A100, A30
    "ampere": 8.6,  # RTX 30, RTX A-series
    "orin": 8.7,
    "ada": 8.9,
    "hopper": 9.0,
    "blackwell-dc": 10.0,  # B200, GB200
    "blackwell-soc": 11.0,  # Jetson Thor 11.0, DGX Spark (GB10) 12.1: both have FP4 tensor cores
    "blackwell": 12.0,  # RTX 50, RTX PRO Blackwell
}
VLLM_MIN_CAPABILITY = 7.0
BF16_MIN_CAPABILITY = 8.0
# minimum compute capability per quant id (CUDA); quants not listed run wherever vLLM runs
QUANT_MIN_CAPABILITY: dict[str, float] = {"FP8": 8.0, "NVFP4": 10.0, "AWQ": 7.5, "GPTQ": 7.0, "MXFP4": 8.0}
FP8_W8A8_CAPABILITY = 8.9  # below this (Ampere), FP8 runs weight-only through Marlin
ROCM_FP8_ARCHS = frozenset({"cdna3", "cdna4"})  # MI300, MI325, MI350
ROCM_NO_QUANTS = frozenset({"AWQ", "GPTQ", "NVFP4"})


def capability(gpu: GpuSpec) -> float | None:
    """The CUDA compute capability of the device's chip generation; None off CUDA or for an unknown one."""
    if gpu.backend is not Backend.CUDA:
        return None
    return CUDA_CAPABILITY.get(gpu.arch)


def vllm_quant_problem(quant_id: str, gpu: GpuSpec) -> Note | None:
    """Why vLLM cannot run ``quant_id`` on this device (a note with the figures), or None when it can."""
    q = quant_id.upper()
    if gpu.backend is Backend.CUDA:
        cap = capability(gpu)
        if cap is None:
            return None  # a generation not in the table: no claim either way
        if cap < VLLM_MIN_CAPABILITY:
            return note("vllm_gpu_too_old", gpu=gpu.name, has=f"{cap:.1f}", needs=f"{VLLM_MIN_CAPABILITY:.1f}")
        if cap < (needs := QUANT_MIN_CAPABILITY.get(q, 0.0)):
            return note("vllm_quant_hardware", quant=q, gpu=gpu.name, has=f"{cap:.1f}", needs=f"{needs:.1f}")
        return None
    if q == "NVFP4" and gpu.backend not in (Backend.CUDA, Backend.ROCM):
        return note("vllm_nvfp4_nvidia", gpu=gpu.name)  # FP4 tensor cores: NVIDIA Blackwell only
    rocm_lacks = q in ROCM_NO_QUANTS or (q in ("FP8", "MXFP4") and gpu.arch not in ROCM_FP8_ARCHS)
    if gpu.backend is Backend.ROCM and rocm_lacks:
        return note("vllm_quant_rocm", quant=q, gpu=gpu.name)
    return None


def engine_runs(engine: Engine, quant_id: str, gpu: GpuSpec) -> bool:
    """The engine runs this quant on this device: always for llama.cpp, for vLLM per ``vllm_quant_problem``
    (the device scans of /gpus, /cloud and the hardware picks leave the others out)."""
    return engine is not Engine.VLLM or vllm_quant_problem(quant_id, gpu) is None


PREQUANTIZED = frozenset({"AWQ", "GPTQ", "NVFP4"})  # vLLM loads these only from a checkpoint in that format


def has_checkpoint(model: ModelSpec, quant_id: str, checkpoints: frozenset[tuple[str, str]] | None) -> bool:
    """vLLM can load this quant of the model: it ships in it, it is quantized at load time (FP8), or a
    pre-quantized repository of it is known (``checkpoints``: (model id, QUANT) pairs; None: no list, no
    claim)."""
    q = quant_id.upper()
    known = checkpoints is None or (model.id, q) in checkpoints
    return q not in PREQUANTIZED or model.native_dtype == q.lower() or known


def needs_half(quant_id: str, native_dtype: str, gpu: GpuSpec) -> bool:
    """A BF16 checkpoint on a GPU without BF16 (below 8.0): vLLM refuses it unless told ``--dtype half``."""
    cap = capability(gpu)
    unquantized = quant_id.upper() in ("BF16", "F16") or quant_id.lower() == native_dtype
    return cap is not None and cap < BF16_MIN_CAPABILITY and unquantized and native_dtype == "bf16"


def fp8_weight_only(gpu: GpuSpec) -> bool:
    cap = capability(gpu)
    return cap is not None and cap < FP8_W8A8_CAPABILITY


__all__ = [
    "CUDA_CAPABILITY",
    "PREQUANTIZED",
    "QUANT_MIN_CAPABILITY",
    "capability",
    "engine_runs",
    "has_checkpoint",
    "fp8_weight_only",
    "needs_half",
    "vllm_quant_problem",
]

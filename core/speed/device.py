"""Device side of the speed model: the speed family of a GPU and the rates it delivers.

Bandwidth, matrix FLOP/s and the fixed per-layer time of one device after the fitted efficiencies
(``core/speed/constants.py``) and the per-generation physics (``core/speed/arch.py``).
"""

# no ``from __future__ import annotations``: pydantic reads these models' field types as objects instead of
# compiling each from a string, a few milliseconds of every start (``fitbot estimate``, issue 33)

from typing import Literal, NamedTuple

from pydantic import Field

from core.models import BACKEND_NAMES, Backend, Engine, Frozen, GpuSpec, Hardware
from core.speed import constants as K
from core.speed.arch import (
    FLOP_PER_BYTE_BY_CATEGORY,
    arch_profile,
    canonical_arch,
    consumer_board,
    is_igpu,
    matrix_tflops,
)
from core.speed.constants import (
    DECODE_BW_EFFICIENCY,
    FAMILY_PROXY,
    LAYER_CYCLES,
    PREFILL_FLOPS_EFFICIENCY,
    RAM_BANDWIDTH_DEFAULTS,
    RAM_READ_EFFICIENCY,
    TP_ALLREDUCE_S,
    TP_SCALING,
)
from core.speed.cpu import CPU_PREFILL_EFFICIENCY
from core.speed.model import forget_terms


class DeviceRates(Frozen):
    """What one device (or a TP group) delivers after efficiencies."""

    bandwidth_bytes_per_s: float = Field(gt=0)  # effective bytes/s for decode reads
    gemm_flops_per_s: float = Field(gt=0)  # effective FLOP/s for prefill GEMMs
    layer_latency_s: float = Field(ge=0)
    attention_efficiency: float = Field(gt=0)  # share of the GEMM rate the backend's attention kernels reach
    moe_tile_tokens: float = Field(ge=0)  # the backend's expert-GEMM tile: see ``speed_model.moe_tile_factor``
    slow_decode_quants: frozenset[str] = frozenset()  # quant families without the backend's fast mat-vec path
    slow_decode_factor: float = 1.0  # their decode time multiple (``SYCL_NO_REORDER_DECODE_FACTOR``)
    sm_cycles_per_s: float = 0.0  # CUDA: SMs x clock (the mma basis / 1024 FLOP per SM and clock); 0 elsewhere
    rough: bool
    notes: tuple[str, ...] = ()
    cpu: bool = False  # llama.cpp's CPU backend: prompt quant factors of ``core.speed.cpu``


# --------------------------------------------------------------------------------------------
# Backends
# --------------------------------------------------------------------------------------------

# llama.cpp backends for each vendor's GPUs (llama.cpp docs/build.md), the catalog's (common) one first
# on a card: NVIDIA CUDA or Vulkan; AMD ROCm/HIP or Vulkan (RADV or AMDVLK); Intel SYCL or Vulkan;
# Apple Metal (Vulkan on macOS runs through MoltenVK, which llama.cpp's macOS builds do not use).
VENDOR_BACKENDS: dict[str, tuple[Backend, ...]] = {
    "nvidia": (Backend.CUDA, Backend.VULKAN),
    "amd": (Backend.ROCM, Backend.VULKAN),
    "intel": (Backend.SYCL, Backend.VULKAN),
    "apple": (Backend.METAL,),
}
BACKEND_LABELS: dict[Backend, str] = {
    Backend.CUDA: "CUDA",
    Backend.ROCM: "ROCm/HIP",
    Backend.VULKAN: "Vulkan",
    Backend.SYCL: "SYCL",
    Backend.METAL: "Metal",
    Backend.CPU: "CPU",
    Backend.OTHER: "vendor runtime",
}
# How llama.cpp is built for each backend (llama.cpp docs/build.md): the CMake switch; Metal is on by
# default on macOS, CPU needs none.
LLAMA_CPP_BUILD_FLAGS: dict[Backend, str] = {
    Backend.CUDA: "-DGGML_CUDA=ON",
    Backend.ROCM: "-DGGML_HIP=ON",
    Backend.VULKAN: "-DGGML_VULKAN=ON",
    Backend.SYCL: "-DGGML_SYCL=ON",
}


def backend_named(text: str) -> Backend | None:
    """The backend a name means ("ROCm/HIP", "radv", "Vulkan"), or None."""
    words = text.lower().replace("/", " ").split()
    return next((BACKEND_NAMES[w] for w in words if w in BACKEND_NAMES), None)


# A device known only by its specs (core/custom_device.py, the generic devices): any GPU backend
ANY_GPU_BACKEND = (Backend.CUDA, Backend.ROCM, Backend.VULKAN, Backend.SYCL, Backend.METAL)


def backend_options(gpu: GpuSpec) -> tuple[Backend, ...]:
    """Backends llama.cpp can run this device with; its catalog backend first (the default)."""
    if gpu.backend in (Backend.CPU, Backend.OTHER):
        return (gpu.backend,)
    options = VENDOR_BACKENDS.get(gpu.vendor.lower(), ANY_GPU_BACKEND)
    return tuple(dict.fromkeys((gpu.backend, *options)))


def with_backend(gpu: GpuSpec, backend: Backend | None) -> GpuSpec | None:
    """The device run with ``backend`` (None: its default), or None when llama.cpp has no such backend for it."""
    if backend is None or backend is gpu.backend:
        return gpu
    if backend not in backend_options(gpu):
        return None
    return gpu.model_copy(update={"backend": backend})


# --------------------------------------------------------------------------------------------
# Device side
# --------------------------------------------------------------------------------------------


CALIBRATED_BACKENDS = frozenset({Backend.CUDA, Backend.ROCM, Backend.METAL, Backend.SYCL})  # a family each


def speed_family(gpu: GpuSpec) -> tuple[str, bool]:
    """Speed family whose fitted constants apply, and whether it is a proxy (no calibration rows)."""
    if gpu.backend is Backend.VULKAN:
        return ("vulkan-intel" if gpu.vendor.lower() == "intel" else "vulkan"), False
    if gpu.backend in CALIBRATED_BACKENDS:
        return gpu.backend.value, False
    return FAMILY_PROXY[gpu.backend], True


def kernel_family(family: str) -> str:
    """Whose prompt kernels a speed family runs: Vulkan on Intel runs ggml-vulkan's matmul, attention and
    expert-GEMM shaders like any Vulkan device (its matrix rate is set apart by ``VULKAN_INTEL_MATRIX_SHARE``);
    decode stays per speed family, since ggml-vulkan restricts the integer mat-vec path and subgroup
    collectives on Intel (ggml-vulkan.cpp, PR #14316), which is what its bandwidth share and fixed cost carry."""
    return "vulkan" if family == "vulkan-intel" else family


def dense_tflops(gpu: GpuSpec, engine: Engine = Engine.LLAMA_CPP) -> tuple[float, bool]:
    """Dense FP16 TFLOPS the GEMMs can use, and whether it is a rough figure.

    llama.cpp: ``speed_arch.matrix_tflops`` (the mma.sync / dot-product rate its kernels are built
    for). vLLM's BF16 GEMMs (CUTLASS, wgmma on Hopper) get the listed figure, FP32 accumulate, so
    GeForce's listed half rate is what they get; without a listed figure the category's FLOP per
    byte of bandwidth.
    """
    if engine is Engine.LLAMA_CPP:
        return matrix_tflops(gpu)
    if gpu.fp16_tflops is not None:
        return gpu.fp16_tflops, False
    return gpu.bandwidth_bytes_per_s * FLOP_PER_BYTE_BY_CATEGORY.get(gpu.category, 150.0) / 1e12, True


def layer_latency_s(gpu: GpuSpec, family: str) -> float:
    """Fixed time per layer and token or ubatch: the backend's cycles at the generation's clock; CUDA on a card
    before Ampere runs without CUDA graphs (``NO_CUDA_GRAPHS_LATENCY_FACTOR``)."""
    profile = arch_profile(gpu)
    clock = profile.clock_ghz * 1e9 * (K.CONSUMER_CLOCK_FACTOR if consumer_board(gpu) else 1.0)
    graphs = 1.0 if family != "cuda" or profile.cuda_graphs else K.NO_CUDA_GRAPHS_LATENCY_FACTOR
    return LAYER_CYCLES[family] * graphs / clock


# ``device_rates`` per device object and engine: /models times every model on one device, and the same
# devices come back question after question. Keyed by id() with the spec kept in the entry (as in
# ``core.weights``: an id a collected spec leaves behind never matches). The fitted constants are module
# state that bench/speed_calibration.py rewrites while it fits; it calls ``forget_rates`` each time.
_RATES: dict[tuple[int, Engine], tuple[GpuSpec, DeviceRates]] = {}
_RATES_ENTRIES = 4096


def device_rates(gpu: GpuSpec, engine: Engine = Engine.LLAMA_CPP) -> DeviceRates:
    """Effective bandwidth, GEMM FLOP/s and per-layer latency of one device (memoised per device object).

    Integrated GPUs and APUs (``speed_arch.is_igpu``) get the iGPU factors on top of their backend's
    efficiencies: they are a class of their own, not small discrete cards.
    """
    key = (id(gpu), engine)
    hit = _RATES.get(key)
    if hit is not None and hit[0] is gpu:
        return hit[1]
    if len(_RATES) >= _RATES_ENTRIES:
        _RATES.clear()
    rates = _device_rates(gpu, engine)
    _RATES[key] = (gpu, rates)
    return rates


def forget_rates() -> None:
    """Drop the memoised ``device_rates`` and ``speed_model.decode_terms``: for code that rewrites the speed
    constants (the calibration)."""
    _RATES.clear()
    _SETUPS.clear()
    forget_terms()


def _device_rates(gpu: GpuSpec, engine: Engine) -> DeviceRates:
    family, proxy = speed_family(gpu)
    notes: list[str] = []
    if gpu.backend is Backend.CPU:
        return _cpu_rates(gpu, family)
    if proxy:
        notes.append(f"no llama.cpp calibration for {gpu.backend.value}: {family} efficiencies assumed")
    tflops, flops_rough = dense_tflops(gpu, engine)
    if flops_rough:
        notes.append(f"no calibrated compute figure for {gpu.arch or 'this chip'}: compute rate estimated")
    bw_eff = DECODE_BW_EFFICIENCY[family]
    pp_eff = PREFILL_FLOPS_EFFICIENCY[kernel_family(family)]
    if consumer_board(gpu) and engine is Engine.LLAMA_CPP:
        pp_eff *= K.CONSUMER_CLOCK_FACTOR
    profile = arch_profile(gpu)
    if profile.hbm:
        bw_eff *= K.HBM_BANDWIDTH_FACTOR
    if profile.pre_ampere_decode:
        bw_eff *= K.PRE_AMPERE_BANDWIDTH_FACTOR
    if profile.xe_hpg:
        bw_eff *= K.XE_HPG_BANDWIDTH_FACTOR
    if profile.pre_ampere:
        pp_eff *= K.PRE_AMPERE_MATRIX_FACTOR
    if is_igpu(gpu):
        bw_eff *= K.IGPU_BANDWIDTH_FACTOR
        pp_eff *= K.AMD_APU_MATRIX_FACTOR if gpu.vendor.lower() == "amd" else K.IGPU_MATRIX_FACTOR
        notes.append("integrated GPU: its own efficiency class (shared LPDDR memory, power-limited clocks)")
    return DeviceRates(
        bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s * bw_eff,
        gemm_flops_per_s=tflops * 1e12 * pp_eff,
        layer_latency_s=layer_latency_s(gpu, family),
        attention_efficiency=K.ATTENTION_EFFICIENCY[kernel_family(family)],
        moe_tile_tokens=K.MOE_TILE_TOKENS[kernel_family(family)],
        sm_cycles_per_s=tflops * 1e12 / 1024.0 if family == "cuda" and engine is Engine.LLAMA_CPP else 0.0,
        slow_decode_quants=K.SYCL_NO_REORDER_FAMILIES if family == "sycl" else frozenset(),
        slow_decode_factor=K.SYCL_NO_REORDER_DECODE_FACTOR if family == "sycl" else 1.0,
        rough=proxy or flops_rough,
        notes=tuple(notes),
    )


def _cpu_rates(gpu: GpuSpec, family: str) -> DeviceRates:
    """llama.cpp's CPU backend: the int8 peak (``fp16_tflops`` of a CPU device) x the efficiency fitted on
    published CPU runs (``core/speed/cpu.py``); decode from RAM at ``RAM_READ_EFFICIENCY``."""
    tflops = gpu.fp16_tflops or 1.0
    return DeviceRates(
        bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s * RAM_READ_EFFICIENCY,
        gemm_flops_per_s=tflops * 1e12 * CPU_PREFILL_EFFICIENCY,
        layer_latency_s=layer_latency_s(gpu, family),
        attention_efficiency=K.ATTENTION_EFFICIENCY[kernel_family(family)],
        moe_tile_tokens=K.MOE_TILE_TOKENS[kernel_family(family)],
        rough=True,
        notes=("CPU: prompt speed from the int8 dot-product peak, fitted on published llama-bench CPU runs",),
        cpu=True,
    )


def ram_bandwidth(hardware: Hardware) -> tuple[float, bool]:
    """System RAM bandwidth (bytes/s) and whether it is the platform default, not the user's figure."""
    if hardware.ram_bandwidth_bytes_per_s:
        return hardware.ram_bandwidth_bytes_per_s, False
    return RAM_BANDWIDTH_DEFAULTS.get(hardware.gpu.category, 89.6e9), True


class SetupRates(NamedTuple):
    """Rates of the whole setup (one GPU, a layer-split group or a TP group) plus system RAM (read for
    every timing of a setup, so a plain tuple)."""

    rates: DeviceRates
    devices: int
    tensor_parallel: bool
    extra_decode_s: float  # multi-GPU hand-over / all-reduce time per token
    ram_bytes_per_s: float
    ram_default: bool
    notes: tuple[str, ...]


# ``setup_rates`` per hardware object, engine and layer count (a scan times many models on the same devices);
# keyed by id() with the hardware kept in the entry, as ``_RATES``, and dropped with it by ``forget_rates``.
_SETUPS: dict[tuple[int, Engine, int], tuple[Hardware, SetupRates]] = {}


def setup_rates(hardware: Hardware, engine: Engine, n_layers: int) -> SetupRates:
    """Combine devices: vLLM tensor parallel adds bandwidth and FLOPs, llama.cpp layer split does not.

    Layer split (llama.cpp ``--split-mode layer``, the default) runs the layers one GPU after the
    other, so one stream reads the same bytes at one GPU's bandwidth, plus a hand-over per extra
    GPU. Tensor parallel splits every GEMM over the GPUs: summed bandwidth times ``TP_SCALING`` of
    the interconnect, plus two all-reduces per layer and token (memoised per hardware object).
    """
    # the layer count matters only to tensor parallel's all-reduces: one entry per device for every model else
    key = (id(hardware), engine, n_layers if hardware.count > 1 and engine is Engine.VLLM else 0)
    hit = _SETUPS.get(key)
    if hit is not None and hit[0] is hardware:
        return hit[1]
    if len(_SETUPS) >= _RATES_ENTRIES:
        _SETUPS.clear()
    setup = _setup_rates(hardware, engine, n_layers)
    _SETUPS[key] = (hardware, setup)
    return setup


def _setup_rates(hardware: Hardware, engine: Engine, n_layers: int) -> SetupRates:
    base = device_rates(hardware.gpu, engine)
    notes = list(base.notes)
    ram_bw, ram_default = ram_bandwidth(hardware)
    count = hardware.count
    extra = 0.0
    rates = base
    tp = count > 1 and engine is Engine.VLLM
    if tp:
        link = hardware.gpu.interconnect
        scale = count * TP_SCALING[link]
        rates = base.model_copy(
            update={
                "bandwidth_bytes_per_s": base.bandwidth_bytes_per_s * scale,
                "gemm_flops_per_s": base.gemm_flops_per_s * scale,
            }
        )
        extra = 2 * n_layers * TP_ALLREDUCE_S[link]
        notes.append(f"tensor parallel x{count} over {link}: {TP_SCALING[link]:.0%} scaling, all-reduce per layer")
    elif count > 1:
        extra = (count - 1) * K.LAYER_SPLIT_HOP_S
        notes.append(f"layer split over {count} GPUs: sequential, no single-stream speed-up")
    return SetupRates(
        rates=rates,
        devices=count,
        tensor_parallel=tp,
        extra_decode_s=extra,
        ram_bytes_per_s=ram_bw,
        ram_default=ram_default,
        notes=tuple(notes),
    )


def vllm_max_num_seqs(gpu: GpuSpec) -> int:
    """vLLM's default ``--max-num-seqs`` for ``vllm serve`` on this GPU (``VLLM_MAX_NUM_SEQS``)."""
    large = gpu.memory_bytes >= K.VLLM_LARGE_DEVICE_BYTES and "a100" not in gpu.id.lower()
    return K.VLLM_MAX_NUM_SEQS_LARGE if large else K.VLLM_MAX_NUM_SEQS


def calibration_level(gpu: GpuSpec) -> Literal["calibrated", "thin", "missed", "excluded", "none"]:
    """How well llama-bench rows cover this generation on this speed family (the segment): rows from at least
    two sources whose held-out rows sit inside the calibrated band ("calibrated"); from one source only
    ("thin"); from several sources but held out they miss the band ("missed"); a device whose own rows are
    kept out of the fit ("excluded", ``KEPT_OUT_DEVICES``: never calibrated, whatever its generation has);
    or none. Only "calibrated" gets the calibrated band and label; the others the rough band, and the card
    says why."""
    family, proxy = speed_family(gpu)
    key = f"{canonical_arch(gpu)}/{family}"
    if proxy:
        return "none"
    if gpu.id in K.KEPT_OUT_DEVICES:
        return "excluded"
    if key in K.CALIBRATED_ARCHS:
        return "calibrated"
    if key in K.MISSED_ARCHS:
        return "missed"
    return "thin" if key in K.THIN_ARCHS else "none"


def decode_quant_factor(rates: DeviceRates, quant_factor: float, quant_family: str) -> float:
    """The weights' decode time multiplier on this device: the quant family's, times the backend's slow-path factor
    where it has no fast mat-vec kernel for the family (SYCL without the reorder layout)."""
    return quant_factor * (rates.slow_decode_factor if quant_family in rates.slow_decode_quants else 1.0)


def dequant_seconds(rates: DeviceRates, grid_weights: float, gpu_share: float = 1.0) -> float:
    """Seconds a CUDA mat-vec spends decoding codebook-quant weights (``IQ_GRID_SM_CYCLES_PER_WEIGHT``), for the
    share of them on the GPU; 0 where no such weights or no CUDA rate."""
    if not grid_weights or not rates.sm_cycles_per_s:
        return 0.0
    return grid_weights * gpu_share * K.IQ_GRID_SM_CYCLES_PER_WEIGHT / rates.sm_cycles_per_s

"""Fitted and assumed constants of the speed model (``core/speed.py``).

The fitted ones come from ``bench/speed_calibration.py``; paste its "fitted constants" block here
when the calibration data changes. Kept apart so the formulas in ``speed.py`` read on their own.
"""

from __future__ import annotations

from core.models import Backend

# --------------------------------------------------------------------------------------------
# Fitted constants: written by ``bench/speed_calibration.py --write`` from bench/calibration/*.csv
# (tests/core/test_speed_calibration.py fails when they drift from what the script fits).
# Efficiencies are keyed by speed family: the backend, with Vulkan on Intel split off (llama.cpp's
# Vulkan shaders reach far less of Intel Arc's XMX rate than of NVIDIA/AMD matrix units).
# --------------------------------------------------------------------------------------------
# BEGIN FITTED
DECODE_BW_EFFICIENCY: dict[str, float] = {
    "cuda": 0.8884,
    "rocm": 0.9503,
    "metal": 0.8604,
    "vulkan": 0.9042,
    "vulkan-intel": 0.9502,
}
PREFILL_FLOPS_EFFICIENCY: dict[str, float] = {
    "cuda": 0.5675,
    "rocm": 0.4163,
    "metal": 0.8373,
    "vulkan": 0.4452,
    "vulkan-intel": 0.08928,
}
LAYER_CYCLES: dict[str, float] = {
    "cuda": 101300.0,
    "rocm": 310000.0,
    "metal": 184100.0,
    "vulkan": 128800.0,
    "vulkan-intel": 863400.0,
}
CONSUMER_CLOCK_FACTOR = 1.161
PRE_AMPERE_BANDWIDTH_FACTOR = 0.7367
PRE_AMPERE_MATRIX_FACTOR = 0.6437
IGPU_BANDWIDTH_FACTOR = 0.8916
IGPU_MATRIX_FACTOR = 0.6144
HBM_BANDWIDTH_FACTOR = 0.7673
MOE_EXPERT_EXTRA = 0.09532
MOE_TILE_TOKENS = 9.657
QUANT_DECODE_FACTOR: dict[str, float] = {"f16": 1.0, "q8_0": 0.942, "q4_0": 0.9873, "k": 1.018, "mxfp4": 0.915}
QUANT_PREFILL_FACTOR: dict[str, float] = {"f16": 1.0, "q8_0": 1.129, "q4_0": 1.084, "k": 1.336, "mxfp4": 1.364}
PREFILL_NO_FLASH_ATTENTION_FACTOR = 1.097
ATTENTION_EFFICIENCY = 0.5113
LAYER_SPLIT_HOP_S = 0.0002121
DECODE_BAND: dict[str, tuple[float, float]] = {
    "cuda": (0.868, 1.234),
    "rocm": (0.868, 1.315),
    "metal": (0.865, 1.247),
    "vulkan": (0.868, 1.234),
    "vulkan-intel": (0.826, 1.29),
}
DECODE_BAND_ROUGH: dict[str, tuple[float, float]] = {
    "cuda": (0.848, 1.259),
    "rocm": (0.848, 1.315),
    "metal": (0.848, 1.259),
    "vulkan": (0.848, 1.259),
    "vulkan-intel": (0.611, 1.786),
}
PREFILL_BAND: dict[str, tuple[float, float]] = {
    "cuda": (0.669, 1.33),
    "rocm": (0.555, 1.694),
    "metal": (0.695, 1.33),
    "vulkan": (0.656, 1.423),
    "vulkan-intel": (0.575, 1.405),
}
PREFILL_BAND_ROUGH: dict[str, tuple[float, float]] = {
    "cuda": (0.664, 1.351),
    "rocm": (0.555, 1.727),
    "metal": (0.695, 1.351),
    "vulkan": (0.656, 1.506),
    "vulkan-intel": (0.54, 1.405),
}
MOE_DECODE_BAND: tuple[float, float] = (0.923, 1.326)
MOE_PREFILL_BAND: tuple[float, float] = (0.637, 1.61)
CALIBRATED_ARCHS: frozenset[str] = frozenset(
    {
        "ada/cuda",
        "ada/vulkan",
        "ampere-dc/cuda",
        "ampere-soc/cuda",
        "ampere/cuda",
        "ampere/vulkan",
        "apple-m1/metal",
        "apple-m2/metal",
        "apple-m3/metal",
        "apple-m4/metal",
        "blackwell-soc/cuda",
        "blackwell/cuda",
        "gcn5/rocm",
        "hopper/cuda",
        "pascal-hbm/cuda",
        "pascal/cuda",
        "pascal/vulkan",
        "rdna2/rocm",
        "rdna2/vulkan",
        "rdna3.5/rocm",
        "rdna3.5/vulkan",
        "rdna3/rocm",
        "rdna3/vulkan",
        "turing/cuda",
        "turing/vulkan",
        "volta/cuda",
        "xe-hpg/vulkan-intel",
        "xe2/vulkan-intel",
    }
)
# END FITTED

# What the fitted names mean:
# DECODE_BW_EFFICIENCY: share of the vendor's peak memory bandwidth the decode kernels reach.
# PREFILL_FLOPS_EFFICIENCY: share of ``speed_arch.matrix_tflops`` the prompt GEMMs reach.
# LAYER_CYCLES: fixed clock cycles per layer and token or ubatch (kernel launches, synchronisation,
#   latency-bound small kernels); divided by the generation's clock (``speed_arch.ARCH``). Metal's is
#   the largest (command-buffer encoding per kernel).
# CONSUMER_CLOCK_FACTOR: consumer boards (GeForce, Radeon RX, Arc) sustain this multiple of the clock that
#   workstation and datacenter boards of the same chip sustain under load (higher power limits, boost above
#   the rated clock); multiplies the matrix rate and divides the per-layer time.
# PRE_AMPERE_*_FACTOR: NVIDIA Pascal/Volta/Turing reach this share of the bandwidth / matrix rate a newer
#   generation reaches: llama.cpp's CUDA kernels are written for sm_80+ (async copies, ldmatrix, int8
#   m16n8k32 MMA); older chips run fallback paths (dp4a, m8n8k16) with less overlap.
# IGPU_*_FACTOR: integrated GPUs / APUs (``speed_arch.is_igpu``) reach this share of what a discrete
#   GPU of the same backend reaches: LPDDR latency, power-limited sustained clocks.
# HBM_BANDWIDTH_FACTOR: HBM parts (A100, H100, V100, MI-series) reach this share of what GDDR/LPDDR
#   parts of the same backend reach in single-stream decode: more latency, more bytes in flight needed.
# MOE_EXPERT_EXTRA: a MoE layer's fixed cost is (1 + this x k) x a dense layer's, k the routed experts
#   per token (router, top-k, expert gather and the per-expert matrix-vector work of small matrices).
# MOE_TILE_TOKENS: expert GEMMs of a ubatch see ubatch*k/E tokens each; a GEMM of t tokens runs at
#   t / (t + this) of the full-tile rate, which is what makes MoE prefill slow at small batches.
# QUANT_*_FACTOR: time multiplier per quant family (dequantization; f16 = 1). IQ types: K-quant x
#   ``IQ_EXTRA_FACTOR``.
# PREFILL_NO_FLASH_ATTENTION_FACTOR: prompt processing with -fa 0 (KQ materialised, separate softmax).
# ATTENTION_EFFICIENCY: flash-attention arithmetic reaches this share of the GEMM rate.
# LAYER_SPLIT_HOP_S: llama.cpp layer split: one hand-over of the hidden state per extra GPU.
# *_BAND: 8th/92nd percentiles of measured/predicted: band = [pred*lo, pred*hi]. Plain bands come from
#   leave-one-GPU-out (a generation with calibration rows), *_ROUGH ones from leave-one-family-out
#   (a generation without rows, or a proxy backend). MOE_*_BAND: held-out spread of the MoE rows; a MoE
#   model's band is widened to contain it.

IQ_EXTRA_FACTOR = 1.15
# A rough estimate on top of that (uncalibrated backend, offload with default RAM bandwidth, vLLM)
# widens the rough band this much (exponent on its factors).
ROUGH_BAND_WIDEN = 1.5

# --------------------------------------------------------------------------------------------
# Assumed constants (no calibration rows; documented defaults).
# --------------------------------------------------------------------------------------------

# Backends without llama-bench rows borrow a calibrated family and are flagged rough: SYCL runs on
# Intel GPUs (Vulkan-on-Intel figures), CANN/Gaudi/other accelerators get CUDA's, a CPU "device"
# (bandwidth = its RAM) gets the RAM read efficiency below and Vulkan's compute share.
FAMILY_PROXY: dict[Backend, str] = {Backend.SYCL: "vulkan-intel", Backend.OTHER: "cuda", Backend.CPU: "vulkan"}

# System RAM bandwidth when the user does not give --ram-bandwidth: theoretical peak of a typical
# platform for the GPU's category. Desktop: dual-channel DDR5-5600 (2 x 64 bit x 5600 MT/s =
# 89.6 GB/s); servers: one socket of 8-channel DDR5-4800 (307.2 GB/s).
RAM_BANDWIDTH_DEFAULTS: dict[str, float] = {
    "consumer": 89.6e9,
    "workstation": 89.6e9,
    "datacenter": 307.2e9,
    "accelerator": 307.2e9,
    "apple": 89.6e9,  # unused: unified memory is one pool
    "apu": 89.6e9,
}
# llama.cpp's CPU matmul-vec reaches about 2/3 of theoretical DRAM bandwidth in token generation
# (llmfit/iaexplore use 50-70 GB/s on dual-channel DDR5, see shared/research/peers.md sec. 5).
RAM_READ_EFFICIENCY = 0.65
# Prompt processing with weights in RAM: llama.cpp copies them to the GPU for every ubatch of at
# least 32 tokens (ggml-cuda.cu ggml_backend_cuda_device_offload_op, min_batch_size 32), so they
# cross PCIe once per ubatch. Practical PCIe 4.0 x16 host-to-device rate:
PCIE_BYTES_PER_S = 25e9

# vLLM tensor parallel: share of the summed bandwidth/FLOPs kept after splitting the GEMMs, and the
# latency of the two all-reduces per layer and token (NCCL small-message all-reduce: ~10 us over
# NVLink, ~30 us over PCIe; Megatron-LM, Shoeybi et al. 2019, sec. 3).
TP_SCALING: dict[str, float] = {"nvlink": 0.90, "xgmi": 0.85, "pcie": 0.75, "none": 0.70}
TP_ALLREDUCE_S: dict[str, float] = {"nvlink": 10e-6, "xgmi": 15e-6, "pcie": 30e-6, "none": 40e-6}

LLAMA_BENCH_PP = 512  # llama-bench pp512
LLAMA_BENCH_TG = 128  # llama-bench tg128
TG_MEAN_DEPTH = LLAMA_BENCH_TG // 2  # the average KV depth while generating tg128: the short-context figure

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
    "cuda": 0.9181,
    "rocm": 0.9073,
    "metal": 0.8675,
    "vulkan": 0.9049,
    "vulkan-intel": 1.213,
}
PREFILL_FLOPS_EFFICIENCY: dict[str, float] = {
    "cuda": 0.5683,
    "rocm": 0.4699,
    "metal": 0.8224,
    "vulkan": 0.463,
    "vulkan-intel": 0.1322,
}
LAYER_CYCLES: dict[str, float] = {
    "cuda": 105900.0,
    "rocm": 239300.0,
    "metal": 164200.0,
    "vulkan": 115600.0,
    "vulkan-intel": 916900.0,
}
IGPU_BANDWIDTH_FACTOR = 0.8735
IGPU_MATRIX_FACTOR = 0.572
HBM_BANDWIDTH_FACTOR = 0.8395
MOE_LAYER_EXTRA = 0.7149
MOE_TILE_TOKENS = 28.42
QUANT_DECODE_FACTOR: dict[str, float] = {"f16": 1.0, "q8_0": 0.966, "q4_0": 1.03, "k": 1.081, "mxfp4": 0.8985}
QUANT_PREFILL_FACTOR: dict[str, float] = {"f16": 1.0, "q8_0": 1.109, "q4_0": 1.127, "k": 1.231, "mxfp4": 1.221}
PREFILL_NO_FLASH_ATTENTION_FACTOR = 1.069
ATTENTION_EFFICIENCY = 0.5543
LAYER_SPLIT_HOP_S = 0.0002266
DECODE_BAND: tuple[float, float] = (0.787, 1.147)
PREFILL_BAND: tuple[float, float] = (0.636, 1.314)
DECODE_BAND_ROUGH: tuple[float, float] = (0.739, 1.171)
PREFILL_BAND_ROUGH: tuple[float, float] = (0.636, 1.403)
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
        "turing-gtx/vulkan",
        "turing/cuda",
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
# IGPU_*_FACTOR: integrated GPUs / APUs (``speed_arch.is_igpu``) reach this share of what a discrete
#   GPU of the same backend reaches: LPDDR latency, power-limited sustained clocks.
# HBM_BANDWIDTH_FACTOR: HBM parts (A100, H100, V100, MI-series) reach this share of what GDDR/LPDDR
#   parts of the same backend reach in single-stream decode: more latency, more bytes in flight needed.
# MOE_LAYER_EXTRA: a MoE layer's fixed cost is (1 + this) x a dense layer's (router, top-k, expert
#   gather and the per-expert matrix-vector launches).
# MOE_TILE_TOKENS: expert GEMMs of a ubatch see ubatch*k/E tokens each; a GEMM of t tokens runs at
#   t / (t + this) of the full-tile rate, which is what makes MoE prefill slow at small batches.
# QUANT_*_FACTOR: time multiplier per quant family (dequantization; f16 = 1). IQ types: K-quant x
#   ``IQ_EXTRA_FACTOR``.
# PREFILL_NO_FLASH_ATTENTION_FACTOR: prompt processing with -fa 0 (KQ materialised, separate softmax).
# ATTENTION_EFFICIENCY: flash-attention arithmetic reaches this share of the GEMM rate.
# LAYER_SPLIT_HOP_S: llama.cpp layer split: one hand-over of the hidden state per extra GPU.
# *_BAND: 8th/92nd percentiles of measured/predicted: band = [pred*lo, pred*hi]. Plain bands come from
#   leave-one-GPU-out (a generation with calibration rows), *_ROUGH ones from leave-one-family-out
#   (a generation without rows, or a proxy backend).

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

"""Fitted and assumed constants of the speed model (``core/speed.py``).

The fitted ones come from ``bench/speed_calibration.py``; paste its "fitted constants" block here
when the calibration data changes. Kept apart so the formulas in ``speed.py`` read on their own.
"""

from __future__ import annotations

from core.models import Backend

# --------------------------------------------------------------------------------------------
# Fitted constants. Source: bench/speed_calibration.py on shared/calibration/llamacpp_speed.csv,
# fit of 2026-11-29 (Huber least squares on log error, 155 decode + 156 prefill rows on 45 GPUs,
# weak priors; leave-one-GPU-out median error 6.4 % decode, 13.4 % prefill). Re-run the script and
# paste its "fitted constants" block here when the calibration data changes.
# --------------------------------------------------------------------------------------------

# Efficiencies are keyed by speed family: the backend, with Vulkan on Intel split off (llama.cpp's
# Vulkan shaders had no XMX/cooperative-matrix path on Intel drivers in these builds, so Intel Arc
# runs them far below NVIDIA/AMD on the same backend).
# Share of the vendor's peak memory bandwidth llama.cpp's decode kernels reach.
DECODE_BW_EFFICIENCY: dict[str, float] = {
    "cuda": 0.884,
    "rocm": 0.652,
    "metal": 0.904,
    "vulkan": 0.716,
    "vulkan-intel": 0.487,
}
# Fixed time per layer and token or ubatch (kernel launches, synchronisation): it dominates small
# models on fast GPUs (7B Q4_0 on an RTX PRO 6000 reads 3.8 GB in ~2.4 ms but takes ~3.6 ms per
# token). Metal's is the largest (command-buffer encoding per kernel).
LAYER_LATENCY_S: dict[str, float] = {
    "cuda": 66.6e-6,
    "rocm": 23.5e-6,
    "metal": 174e-6,
    "vulkan": 20.4e-6,
    "vulkan-intel": 40.4e-6,
}
# Share of dense FP16 tensor TFLOPS llama.cpp's prompt-processing GEMMs reach.
PREFILL_FLOPS_EFFICIENCY: dict[str, float] = {
    "cuda": 0.586,
    "rocm": 0.484,
    "metal": 0.757,
    "vulkan": 0.421,
    "vulkan-intel": 0.123,
}
# Decode: time multiplier on the weight bytes of each quant family (dequantization cost per byte;
# F16 reads are plain loads). Prefill: multiplier on GEMM time (dequantize-to-GEMM overhead).
# IQ types have no calibration rows: K-quant factor times the extra lookup-table cost assumed.
QUANT_DECODE_FACTOR: dict[str, float] = {"f16": 1.0, "q8_0": 0.990, "q4_0": 0.965, "k": 1.039, "mxfp4": 1.037}
QUANT_PREFILL_FACTOR: dict[str, float] = {"f16": 1.0, "q8_0": 1.091, "q4_0": 1.089, "k": 1.287, "mxfp4": 1.565}
IQ_EXTRA_FACTOR = 1.15
# Prompt processing without flash attention (llama.cpp -fa 0: KQ materialised in F32, separate
# softmax) takes this much longer; llama.cpp turns FA on by default where supported.
PREFILL_NO_FLASH_ATTENTION_FACTOR = 1.045
# Attention arithmetic (flash-attention kernels) reaches this share of the GEMM efficiency.
ATTENTION_EFFICIENCY = 0.603
# llama.cpp layer split: each extra GPU adds one hand-over of the hidden state per token.
LAYER_SPLIT_HOP_S = 0.258e-3

# 8th/92nd percentiles of the leave-one-GPU-out ratios measured/predicted: band = [pred*lo, pred*hi].
DECODE_BAND: tuple[float, float] = (0.768, 1.172)
PREFILL_BAND: tuple[float, float] = (0.614, 1.302)
# A rough estimate (uncalibrated backend, spec fallback, offload, vLLM) widens the band this much.
ROUGH_BAND_WIDEN = 2.0

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

# GPUs without a dense FP16 figure: TFLOPS from bandwidth at a typical FLOP-per-byte ratio of the
# category. Apple M1-M4 GPUs run FP16 at the FP32 rate: M2 Ultra 27.2 TFLOPS / 800 GB/s = 34,
# M1 Max 10.4/400 = 26, M3 Max 16.4/400 = 41 FLOP/B. APUs: Strix Halo 59/256 = 230; GB10 (DGX
# Spark) 1 PFLOP sparse FP4 -> 62.5 dense FP16 with FP32 accumulate / 273 GB/s = 229.
# Discrete cards: RTX 4000 Ada 107/360 = 297, H100 NVL 989/3940 = 251.
FLOP_PER_BYTE_FALLBACK: dict[str, float] = {
    "apple": 35.0,
    "apu": 230.0,
    "consumer": 150.0,
    "workstation": 250.0,
    "datacenter": 250.0,
    "accelerator": 250.0,
}
# The Apple ratio is what the Metal efficiency was fitted with, so it is not a rough guess.
CALIBRATED_FALLBACK_CATEGORIES = frozenset({"apple"})

LLAMA_BENCH_PP = 512  # llama-bench pp512
LLAMA_BENCH_TG = 128  # llama-bench tg128
TG_MEAN_DEPTH = LLAMA_BENCH_TG // 2  # the average KV depth while generating tg128: the short-context figure

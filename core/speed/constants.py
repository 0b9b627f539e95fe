"""Fitted and assumed constants of the speed model (``core/speed/estimate.py``).

The fitted ones come from ``bench/speed_calibration.py``; paste its "fitted constants" block here
when the calibration data changes. Kept apart so the formulas in ``speed.py`` read on their own.
"""

from __future__ import annotations

from core.models import Backend

# --------------------------------------------------------------------------------------------
# Fitted constants: written by ``bench/speed_calibration.py --write`` from bench/calibration/*.csv
# (tests/core/test_speed_calibration.py fails when they drift from what the script fits).
# Decode constants are keyed by speed family: the backend, with Vulkan on Intel split off (ggml-vulkan
# restricts its integer mat-vec path and subgroup collectives on Intel). Prompt constants (matrix and
# attention efficiency, expert tile) are keyed by kernel family (``speed_device.kernel_family``): Vulkan
# on Intel runs Vulkan's shaders, at the vector rate ``speed_arch.VULKAN_INTEL_MATRIX_SHARE`` sets.
# --------------------------------------------------------------------------------------------
# BEGIN FITTED
DECODE_BW_EFFICIENCY: dict[str, float] = {
    "cuda": 0.875,
    "rocm": 0.9204,
    "metal": 0.8602,
    "vulkan": 0.9517,
    "vulkan-intel": 0.617,
    "sycl": 0.6771,
}
PREFILL_FLOPS_EFFICIENCY: dict[str, float] = {
    "cuda": 0.5738,
    "rocm": 0.4146,
    "metal": 0.8458,
    "vulkan": 0.4154,
    "sycl": 0.7387,
}
LAYER_CYCLES: dict[str, float] = {
    "cuda": 92300.0,
    "rocm": 281500.0,
    "metal": 176500.0,
    "vulkan": 181800.0,
    "vulkan-intel": 180600.0,
    "sycl": 119900.0,
}
ATTENTION_EFFICIENCY: dict[str, float] = {
    "cuda": 0.6622,
    "rocm": 0.325,
    "metal": 0.5144,
    "vulkan": 0.2789,
    "sycl": 0.4054,
}
MOE_TILE_TOKENS: dict[str, float] = {
    "cuda": 74.25,
    "rocm": 9.157,
    "metal": 10.34,
    "vulkan": 20.81,
    "sycl": 16.0,
}
CONSUMER_CLOCK_FACTOR = 1.183
PRE_AMPERE_BANDWIDTH_FACTOR = 0.711
PRE_AMPERE_MATRIX_FACTOR = 0.621
IGPU_BANDWIDTH_FACTOR = 0.9494
IGPU_MATRIX_FACTOR = 0.6023
AMD_APU_MATRIX_FACTOR = 0.8536
HBM_BANDWIDTH_FACTOR = 0.7071
MOE_EXPERT_EXTRA = 0.07932
QUANT_DECODE_FACTOR: dict[str, float] = {"f16": 1.0, "q8_0": 0.9656, "q4_0": 0.9946, "k": 1.02, "mxfp4": 0.9937}
QUANT_PREFILL_FACTOR: dict[str, float] = {"f16": 1.0, "q8_0": 1.126, "q4_0": 1.091, "k": 1.453, "mxfp4": 1.206}
PREFILL_NO_FLASH_ATTENTION_FACTOR = 1.112
NO_CUDA_GRAPHS_LATENCY_FACTOR = 1.746
LAYER_SPLIT_HOP_S = 0.0001626
XE_HPG_BANDWIDTH_FACTOR = 0.6259
DECODE_BAND: dict[str, tuple[float, float]] = {
    "cuda": (0.891, 1.193),
    "rocm": (0.848, 1.214),
    "metal": (0.891, 1.26),
    "vulkan": (0.828, 1.193),
    "vulkan-intel": (0.891, 1.193),
    "sycl": (0.891, 1.193),
}
DECODE_BAND_ROUGH: dict[str, tuple[float, float]] = {
    "cuda": (0.761, 1.357),
    "rocm": (0.748, 1.357),
    "metal": (0.757, 1.357),
    "vulkan": (0.698, 1.357),
    "vulkan-intel": (0.599, 1.691),
    "sycl": (0.761, 1.419),
}
PREFILL_BAND: dict[str, tuple[float, float]] = {
    "cuda": (0.741, 1.263),
    "rocm": (0.459, 1.263),
    "metal": (0.798, 1.263),
    "vulkan": (0.798, 2.0),
    "vulkan-intel": (0.798, 1.263),
    "sycl": (0.798, 1.263),
}
PREFILL_BAND_ROUGH: dict[str, tuple[float, float]] = {
    "cuda": (0.607, 1.562),
    "rocm": (0.459, 1.779),
    "metal": (0.607, 1.562),
    "vulkan": (0.585, 2.0),
    "vulkan-intel": (0.244, 1.562),
    "sycl": (0.607, 1.562),
}
SEGMENT_DECODE_BAND: dict[str, tuple[float, float]] = {
    "ampere-dc/cuda": (0.865, 1.193),
    "apple-m1/metal": (0.757, 1.26),
    "apple-m3/metal": (0.847, 1.26),
    "rdna3.5/rocm": (0.789, 1.224),
}
SEGMENT_DECODE_BAND_ROUGH: dict[str, tuple[float, float]] = {
    "apple-m1/metal": (0.694, 1.357),
    "rdna3.5/rocm": (0.685, 1.357),
    "turing/cuda": (0.753, 1.357),
}
SEGMENT_PREFILL_BAND: dict[str, tuple[float, float]] = {
    "ada/cuda": (0.715, 1.498),
    "apple-m1/metal": (0.798, 1.401),
    "blackwell/cuda": (0.741, 1.276),
    "hopper/cuda": (0.55, 1.263),
    "rdna3.5/rocm": (0.459, 1.699),
}
SEGMENT_PREFILL_BAND_ROUGH: dict[str, tuple[float, float]] = {
    "blackwell-soc/cuda": (0.593, 1.562),
}
MOE_DECODE_BAND: tuple[float, float] = (0.768, 1.194)
MOE_PREFILL_BAND: tuple[float, float] = (0.679, 1.635)
CALIBRATED_ARCHS: frozenset[str] = frozenset(
    {
        "ada/cuda",
        "ampere-dc/cuda",
        "ampere/cuda",
        "ampere/vulkan",
        "apple-m1/metal",
        "apple-m2/metal",
        "apple-m3/metal",
        "blackwell/cuda",
        "hopper/cuda",
        "rdna3.5/rocm",
        "rdna3.5/vulkan",
        "rdna3/rocm",
    }
)
THIN_ARCHS: frozenset[str] = frozenset(
    {
        "ada/vulkan",
        "ampere-soc/cuda",
        "apple-m4/metal",
        "blackwell-soc/cuda",
        "pascal/cuda",
        "pascal/vulkan",
        "rdna2/rocm",
        "rdna2/vulkan",
        "rdna3/vulkan",
        "rdna4/rocm",
        "rdna4/vulkan",
        "turing-gtx/cuda",
        "turing-gtx/vulkan",
        "turing/cuda",
        "volta/cuda",
        "xe-hpg/sycl",
        "xe2/vulkan-intel",
    }
)
MISSED_ARCHS: frozenset[str] = frozenset(
    {
        "cdna3/rocm",
        "gcn5/rocm",
        "pascal-hbm/cuda",
        "xe-hpg/vulkan-intel",
        "xe2/sycl",
    }
)
KEPT_OUT_DEVICES: frozenset[str] = frozenset(
    {
        "arc-140v-32",
        "arc-pro-b70",
    }
)
# END FITTED

# What the fitted names mean (speed families: cuda, rocm, metal, vulkan, vulkan-intel, sycl; SYCL has rows
# since issue 24 -- oneMKL/oneDNN GEMMs on the XMX units, its own mat-vec kernels -- and is no proxy):
# DECODE_BW_EFFICIENCY: share of the vendor's peak memory bandwidth the decode kernels reach.
# PREFILL_FLOPS_EFFICIENCY: share of ``speed_arch.matrix_tflops`` the prompt GEMMs reach (per kernel family).
# LAYER_CYCLES: fixed clock cycles per layer and token or ubatch (kernel launches, synchronisation,
#   latency-bound small kernels); divided by the generation's clock (``speed_arch.ARCH``). Metal's is
#   the largest (command-buffer encoding per kernel).
# CONSUMER_CLOCK_FACTOR: consumer boards (GeForce, Radeon RX, Arc) sustain this multiple of the clock that
#   workstation and datacenter boards of the same chip sustain under load (higher power limits, boost above
#   the rated clock); multiplies the matrix rate and divides the per-layer time.
# PRE_AMPERE_MATRIX_FACTOR: NVIDIA Volta/Turing/Pascal prompt GEMMs reach this share of what a newer generation
#   reaches: llama.cpp's MMQ kernels are written for sm_80+ (async copies, ldmatrix, int8 m16n8k32 MMA); older
#   chips run fallback paths (dp4a, m8n8k16) with less overlap. Not the P100 (no MMQ at all: cuBLAS FP16).
# PRE_AMPERE_BANDWIDTH_FACTOR: Pascal (GP10x GDDR5/5X, GP100 HBM2) decode reaches this share of the bandwidth
#   newer chips reach: mat-vec kernels tuned for sm_75+ warps and caches (Turing decode rows fit without it).
# IGPU_*_FACTOR: integrated GPUs / APUs (``speed_arch.is_igpu``) reach this share of what a discrete
#   GPU of the same backend reaches: LPDDR latency, power-limited sustained clocks.
# AMD_APU_MATRIX_FACTOR: the prompt-rate share for AMD APUs (Strix Halo, Strix Point, Z1, Rembrandt), apart
#   from IGPU_MATRIX_FACTOR (NVIDIA's SoCs, Intel's iGPUs), because the power behind the GPU differs by class:
#   Strix Halo's GPU shares a package budget of up to 120 W (AMD's cTDP range for the Ryzen AI Max+ 395:
#   45-120 W), while the GB10 (DGX Spark) GPU draws 15-36 W at ~2.4 GHz during llama-bench (ggml-org/llama.cpp
#   discussion #18254) and throttles on firmware power limits, and Jetson Orin runs 15-60 W power modes; their
#   matrix rates come from the SoC sheets' peak (sparse FP4/INT8) figures, which sustained GEMMs do not reach.
# HBM_BANDWIDTH_FACTOR: HBM parts (A100, H100, V100, MI-series) reach this share of what GDDR/LPDDR
#   parts of the same backend reach in single-stream decode: more latency, more bytes in flight needed.
# MOE_EXPERT_EXTRA: a MoE layer's fixed cost is (1 + this x k) x a dense layer's, k the routed experts
#   per token (router, top-k, expert gather and the per-expert matrix-vector work of small matrices).
# MOE_TILE_TOKENS: expert GEMMs of a ubatch see ubatch*k/E tokens each; a GEMM of t tokens runs at
#   t / (t + this) of the full-tile rate, which is what makes MoE prefill slow at small batches. Per kernel
#   family (``speed_device.kernel_family``): each backend has its own expert-GEMM kernel and tile (ggml-cuda
#   MMQ with mmq_x up to 128 tokens, shared by ROCm through HIP; ggml-vulkan's mul_mm_id shaders; Metal's
#   mul_mm_id; SYCL has no MoE rows and keeps the prior, 16).
# QUANT_*_FACTOR: time multiplier per quant family (dequantization; f16 = 1). IQ types: K-quant x
#   ``IQ_EXTRA_FACTOR``.
# PREFILL_NO_FLASH_ATTENTION_FACTOR: prompt processing with -fa 0 (KQ materialised, separate softmax).
# NO_CUDA_GRAPHS_LATENCY_FACTOR: the per-layer fixed time of CUDA without CUDA graphs (every kernel launched
#   from the host, not replayed as one graph): ggml-cuda turns graphs off below compute capability 8.0
#   (ggml-cuda.cu ``ggml_cuda_graph_set_enabled``: ``cc < GGML_CUDA_CC_AMPERE`` -> ``disable_due_to_gpu_arch``), so
#   every Pascal, Volta and Turing card pays it, in every build; builds before graphs existed (pre-b3000, PR #6766)
#   paid it on every card, which is where most of its rows come from (2024 builds on Ampere/Ada). MoE layers
#   launch more kernels (``MOE_EXPERT_EXTRA``), so they pay it more. ROCm runs without graphs by default
#   (GGML_HIP_GRAPHS off), which its own ``LAYER_CYCLES`` carries.
# ATTENTION_EFFICIENCY: flash-attention arithmetic reaches this share of the GEMM rate, per kernel family: each
#   backend has its own flash-attention kernels (ggml-cuda fattn-mma/-wmma, shared by ROCm through HIP;
#   ggml-vulkan flash_attn shaders, scalar or cooperative-matrix by device; Metal's; SYCL's), and at long
#   depth this is what sets prompt and decode speed (kyuz0's R9700: 2048 tokens after 32768 run 567 t/s
#   under ROCm, 430 under Vulkan RADV, on the same card and build).
# XE_HPG_BANDWIDTH_FACTOR: Intel Xe-HPG (Alchemist: A770, A750, A770M, ...) decode reaches this share of the
#   bandwidth Xe2 reaches on the same backend; the same share under Vulkan and SYCL (``speed_arch.ARCH["xe-hpg"]``).
# LAYER_SPLIT_HOP_S: llama.cpp layer split: one hand-over of the hidden state per extra GPU (prompts: plus
#   the ubatch's f32 activations over PCIe). A split prompt runs the GPUs in turn, so prefill does not scale.
# *_BAND: band = [pred*lo, pred*hi] from held-out measured/predicted (bench/speed_validation.py). Plain bands:
#   the central 86 % of leave-one-source-out residuals (a generation x backend with rows from two or more
#   sources, CALIBRATED_ARCHS); *_ROUGH: the central 92 % of the leave-one-architecture-out, leave-one-family-
#   out and thin source-held-out residuals (a generation with rows from one source, THIN_ARCHS, none, or a
#   proxy backend). SEGMENT_*_BAND(_ROUGH): a generation x backend whose own held-out spread is wider than its
#   family's band, calibrated or rough, gets it (a band must hold per segment). MOE_*_BAND: held-out spread of
#   the MoE rows; a MoE model's band is widened to contain it.

IQ_EXTRA_FACTOR = 1.15
# SYCL decode of a quant type without ggml-sycl's "reorder" layout (the scales split from the quants for coalesced
# reads; Q4_0, Q4_K, Q6_K, and Q8_0 since PR #21527): PR #21527 measured Q8_0 decode on an Arc Pro B70 at 21 % of
# the bandwidth before its reorder path and 66 % after (4.88 -> 15.24 t/s, Qwen3.5-27B). MXFP4 mat-vec came with PR
# #17826 as a generic path ("performance ... decreased", "need to optimize on GPU") and the IQ types have no
# reorder path either, so their decode time is this multiple of a reordered type's.
SYCL_NO_REORDER_DECODE_FACTOR = 66.0 / 21.0
SYCL_NO_REORDER_FAMILIES = frozenset({"mxfp4", "iq"})
# Codebook quants (IQ1/IQ2/IQ3: each group of weights decoded through a lattice grid and sign table) make a CUDA
# mat-vec ALU-bound where bandwidth per SM is high: SM clock cycles per weight, from ggml-org/llama.cpp PR #8215's
# microbatch-1 rows (MMVQ, the decode kernel) of Llama-3-8B on an RTX 3090, 151.5 t/s at IQ2_S and 143.5 at IQ3_XXS
# where its bandwidth allows ~200: 6.6-7.0 ms per token, less the model's own per-layer time (~1.5 ms), x the 3090's
# SM cycles (its mma basis / 1024 = 139e9/s) over the ~7.5e9 weights a token reads = 0.100 (both rows within 2.2 %;
# the RTX 4090 of the same table, 2.3x the SM cycles, stays bandwidth-bound, as the max() says). A decode step takes
# the longer of the weight read and this dequantisation; an H200 (132 SMs, 4.8 TB/s) is dequantisation-bound on them.
IQ_GRID_SM_CYCLES_PER_WEIGHT = 0.100
IQ_GRID_PREFIXES = ("IQ1", "IQ2", "IQ3")
# A rough estimate on top of that (uncalibrated backend, offload with default RAM bandwidth, vLLM)
# widens the rough band this much (exponent on its factors).
ROUGH_BAND_WIDEN = 1.5

# --------------------------------------------------------------------------------------------
# Assumed constants (no calibration rows; documented defaults).
# --------------------------------------------------------------------------------------------

# Backends without llama-bench rows borrow a calibrated family and are flagged rough: CANN/Gaudi/other
# accelerators get CUDA's, a CPU "device" (bandwidth = its RAM) gets the RAM read efficiency below and
# Vulkan's compute share. (SYCL has rows since issue 24: its own family.)
FAMILY_PROXY: dict[Backend, str] = {Backend.OTHER: "cuda", Backend.CPU: "vulkan"}

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

# vLLM's default ``--max-num-seqs`` for ``vllm serve`` (the OPENAI_API_SERVER usage context), set in
# ``EngineArgs._set_default_args`` (vllm/engine/arg_utils.py at vllm-project/vllm@99d7eb5d, v0.11 line):
# a GPU with at least 70 GiB whose name does not contain "a100" (H100, H200, B200, MI300X) gets 1024
# sequences (and 8192 batched tokens), any other GPU 256 (and 2048); the default is then capped at
# ``max_num_batched_tokens``, which is larger in both cases (README, "How the numbers are computed").
VLLM_LARGE_DEVICE_BYTES = 70 * 2**30
VLLM_MAX_NUM_SEQS_LARGE = 1024
VLLM_MAX_NUM_SEQS = 256

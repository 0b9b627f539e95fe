"""Decode and prefill speed, time to first token and vLLM concurrency from bandwidth and FLOPs.

The model is a roofline with a handful of constants fitted on llama-bench results
(``shared/calibration/llamacpp_speed.csv``; re-run ``bench/speed_calibration.py``). There is no
per-GPU table: every GPU gets its speed from its spec sheet (bandwidth, dense FP16 TFLOPS), its
backend family (CUDA, ROCm, Metal, Vulkan, SYCL, CPU) and the quant family of the weights.

Decode (one stream) is memory-bound (Williams et al., "Roofline", CACM 2009; Pope et al.,
"Efficiently Scaling Transformer Inference", 2022, sec. 2): every generated token reads the
active weights once (MoE: shared weights plus the k routed experts of each layer, not the whole
model) and the KV cache of the current context::

    t_token = (W_active * q_dec + KV(ctx)) / (eff_bw * BW)        # weights + cache from VRAM
            + (W_ram * q_dec + KV_ram) / (RAM_EFF * BW_ram)        # offloaded part, from system RAM
            + A(ctx) / (ATTN_EFF * eff_pp * TFLOPS)                # attention arithmetic at depth
            + n_layers * latency                                   # kernel launches, syncs

Prefill of one ubatch of n tokens (llama.cpp processes a prompt in ubatches of ``n_ubatch``)::

    t_ubatch = 2 * P_gemm * n * q_pre / (eff_pp * TFLOPS)           # weight GEMMs
             + A_prefill(n, depth) / (ATTN_EFF * eff_pp * TFLOPS)    # causal attention
             + W_touched(n) / (eff_bw * BW)                          # weights streamed once per ubatch
             + n_layers * latency

``W_touched`` is the dense weights plus the routed experts that at least one of the n tokens
uses: E * (1 - (1 - k/E)^n) experts per layer, which is what makes MoE prefill slow at small
batches.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field

from core import memory
from core.fit import Placement
from core.models import (
    AttentionKind,
    Backend,
    Engine,
    Frozen,
    GpuSpec,
    Hardware,
    ModelSpec,
    Workload,
)
from core.speed_constants import (
    ATTENTION_EFFICIENCY,
    CALIBRATED_FALLBACK_CATEGORIES,
    DECODE_BAND,
    DECODE_BW_EFFICIENCY,
    FAMILY_PROXY,
    FLOP_PER_BYTE_FALLBACK,
    IQ_EXTRA_FACTOR,
    LAYER_LATENCY_S,
    LAYER_SPLIT_HOP_S,
    LLAMA_BENCH_PP,
    PCIE_BYTES_PER_S,
    PREFILL_BAND,
    PREFILL_FLOPS_EFFICIENCY,
    PREFILL_NO_FLASH_ATTENTION_FACTOR,
    QUANT_DECODE_FACTOR,
    QUANT_PREFILL_FACTOR,
    RAM_BANDWIDTH_DEFAULTS,
    RAM_READ_EFFICIENCY,
    ROUGH_BAND_WIDEN,
    TG_MEAN_DEPTH,
    TP_ALLREDUCE_S,
    TP_SCALING,
)
from core.weights import WeightEstimate, active_weight_bytes, param_groups


class Concurrency(Frozen):
    """vLLM serving N users at the requested context."""

    sequences_fit: int  # sequences of the requested context the KV budget holds
    users: int
    kv_budget_bytes: int
    kv_bytes_per_sequence: int
    batch: int  # sequences decoded together: min(users, sequences_fit)
    aggregate_tokens_per_s: float
    per_user_tokens_per_s: float
    compute_bound: bool


class SpeedEstimate(Frozen):
    decode_tokens_per_s: float  # llama-bench tg128: short context
    decode_tokens_per_s_at_context: float  # with the KV cache of the requested context
    decode_range: tuple[float, float]
    prefill_tokens_per_s: float  # llama-bench pp512
    prefill_range: tuple[float, float]
    ttft_s: float  # time to first token for prompt_tokens
    prompt_tokens: int
    context: int
    confidence: Literal["calibrated", "rough"]
    basis: tuple[str, ...] = ()
    concurrency: Concurrency | None = None


class DeviceRates(Frozen):
    """What one device (or a TP group) delivers after efficiencies."""

    bandwidth_bytes_per_s: float = Field(gt=0)  # effective bytes/s for decode reads
    gemm_flops_per_s: float = Field(gt=0)  # effective FLOP/s for prefill GEMMs
    layer_latency_s: float = Field(ge=0)
    rough: bool
    notes: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------
# Device side
# --------------------------------------------------------------------------------------------


def speed_family(gpu: GpuSpec) -> tuple[str, bool]:
    """Speed family whose fitted constants apply, and whether it is a proxy (no calibration rows)."""
    if gpu.backend is Backend.VULKAN:
        return ("vulkan-intel" if gpu.vendor.lower() == "intel" else "vulkan"), False
    if gpu.backend in (Backend.CUDA, Backend.ROCM, Backend.METAL):
        return gpu.backend.value, False
    return FAMILY_PROXY[gpu.backend], True


def dense_tflops(gpu: GpuSpec, engine: Engine = Engine.LLAMA_CPP) -> tuple[float, bool]:
    """Dense FP16 TFLOPS the GEMMs can use, and whether it is a rough fallback.

    The catalog lists GeForce cards at their FP32-accumulate tensor rate (half rate on GeForce).
    llama.cpp's GEMMs use FP16 accumulation (cuBLAS CUBLAS_COMPUTE_16F for F16 weights) or INT8
    MMA (MMQ kernels for quantized weights), which run at the full rate, so GeForce counts twice
    the listed figure for llama.cpp; vLLM's BF16 GEMMs accumulate in FP32 and get the listed rate.
    Without a listed figure the rate is estimated from bandwidth (``FLOP_PER_BYTE_FALLBACK``).
    """
    if gpu.fp16_tflops is not None:
        geforce = gpu.vendor.upper() == "NVIDIA" and gpu.category == "consumer"
        factor = 2.0 if geforce and engine is Engine.LLAMA_CPP else 1.0
        return gpu.fp16_tflops * factor, False
    ratio = FLOP_PER_BYTE_FALLBACK.get(gpu.category, 150.0)
    rough = gpu.category not in CALIBRATED_FALLBACK_CATEGORIES
    return gpu.bandwidth_bytes_per_s * ratio / 1e12, rough


def device_rates(gpu: GpuSpec, engine: Engine = Engine.LLAMA_CPP) -> DeviceRates:
    """Effective bandwidth, GEMM FLOP/s and per-layer latency of one device."""
    family, proxy = speed_family(gpu)
    notes: list[str] = []
    if proxy:
        notes.append(f"no llama.cpp calibration for {gpu.backend.value}: {family} efficiencies assumed")
    tflops, flops_rough = dense_tflops(gpu, engine)
    if flops_rough:
        notes.append("no FP16 TFLOPS on record: compute rate estimated from bandwidth")
    bw_eff = RAM_READ_EFFICIENCY if gpu.backend is Backend.CPU else DECODE_BW_EFFICIENCY[family]
    return DeviceRates(
        bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s * bw_eff,
        gemm_flops_per_s=tflops * 1e12 * PREFILL_FLOPS_EFFICIENCY[family],
        layer_latency_s=LAYER_LATENCY_S[family],
        rough=proxy or flops_rough,
        notes=tuple(notes),
    )


def ram_bandwidth(hardware: Hardware) -> tuple[float, bool]:
    """System RAM bandwidth (bytes/s) and whether it is the platform default, not the user's figure."""
    if hardware.ram_bandwidth_bytes_per_s:
        return hardware.ram_bandwidth_bytes_per_s, False
    return RAM_BANDWIDTH_DEFAULTS.get(hardware.gpu.category, 89.6e9), True


# --------------------------------------------------------------------------------------------
# Model side
# --------------------------------------------------------------------------------------------


def quant_family(quant_id: str | None, bits_per_weight: float) -> str:
    """Kernel family of a quant id: f16, q8_0, q4_0 (legacy blocks), k (K-quants), iq, mxfp4."""
    qid = (quant_id or "").upper()
    qid = qid.removeprefix("UD-")
    if qid in {"F16", "BF16", "F32", "FP8", "FP16", "AWQ", "GPTQ", "NVFP4"}:
        return "f16"  # vLLM checkpoints: GEMM kernels stream weights at full speed
    if qid.startswith("MXFP4"):
        return "mxfp4"
    if qid.startswith("IQ"):
        return "iq"
    if "_K" in qid:
        return "k"
    if qid in {"Q8_0"}:
        return "q8_0"
    if qid in {"Q4_0", "Q4_1", "Q5_0", "Q5_1"}:
        return "q4_0"
    if bits_per_weight >= 12:
        return "f16"
    if bits_per_weight >= 7.5:
        return "q8_0"
    return "k"


def quant_factors(quant_id: str | None, bits_per_weight: float) -> tuple[float, float]:
    """(decode, prefill) time multipliers of the quant family; IQ = K-quant x ``IQ_EXTRA_FACTOR``."""
    family = quant_family(quant_id, bits_per_weight)
    if family == "iq":
        return QUANT_DECODE_FACTOR["k"] * IQ_EXTRA_FACTOR, QUANT_PREFILL_FACTOR["k"] * IQ_EXTRA_FACTOR
    return QUANT_DECODE_FACTOR[family], QUANT_PREFILL_FACTOR[family]


def attention_dims(model: ModelSpec) -> tuple[int, int]:
    """Query heads times (key + value) width the attention arithmetic runs over, per cached token.

    MLA in llama.cpp runs absorbed: each head scores against the latent plus rope key
    (kv_lora_rank + qk_rope_head_dim) and reads the latent as value (kv_lora_rank).
    """
    if model.attention is AttentionKind.MLA:
        assert model.kv_lora_rank is not None
        return model.n_heads, 2 * model.kv_lora_rank + (model.qk_rope_head_dim or 0)
    return model.n_heads, model.head_dim + (model.v_head_dim or model.head_dim)


def attended_tokens(model: ModelSpec, position: float) -> float:
    """Cached tokens one query at ``position`` attends to, summed over layers (sliding windows capped)."""
    window = model.sliding_window or 0
    swa = model.n_sliding_layers * (min(position, window) if window else position)
    return model.kv_layers * position + swa


def decode_attention_flops(model: ModelSpec, context: float) -> float:
    """FLOPs of QK^T and PV for one new token at ``context``: 2 * heads * (dk + dv) per cached token."""
    heads, width = attention_dims(model)
    return 2.0 * heads * width * attended_tokens(model, context)


def prefill_attention_flops(model: ModelSpec, n_tokens: int, depth: int) -> float:
    """Causal attention FLOPs of n new tokens after ``depth`` cached ones (mean position depth + n/2)."""
    return n_tokens * decode_attention_flops(model, depth + n_tokens / 2)


def gemm_params_per_token(model: ModelSpec) -> float:
    """Weights each prompt token multiplies: dense + shared + its k routed experts.

    The token embedding is a lookup and the output head runs for the last token only
    (llama-bench and prompt processing request one logit row).
    """
    groups = param_groups(model)
    routed = float(groups.experts)
    if model.is_moe:
        assert model.n_experts and model.experts_per_token
        routed = groups.experts * model.experts_per_token / model.n_experts
    return groups.dense + routed


def token_read_bytes(model: ModelSpec, w: WeightEstimate) -> float:
    """Weight bytes read per generated token: ``active_weight_bytes`` plus, for tied embeddings,
    the embedding matrix, which then doubles as the output projection and is read in full."""
    tied = w.embed_bytes if model.tied_embeddings else 0
    return float(active_weight_bytes(model, w) + tied)


def touched_weight_bytes(model: ModelSpec, w: WeightEstimate, n_tokens: int) -> float:
    """Weight bytes a batch of n tokens streams: dense, output and every expert hit at least once."""
    experts = float(w.experts_bytes)
    if model.is_moe:
        assert model.n_experts and model.experts_per_token
        share = model.experts_per_token / model.n_experts
        experts *= 1.0 - (1.0 - share) ** max(n_tokens, 1)
    tied = w.embed_bytes if model.tied_embeddings else 0
    return w.dense_bytes + w.output_bytes + tied + experts


def kv_read_bytes(model: ModelSpec, workload: Workload, context: int) -> float:
    """KV bytes one sequence reads per generated token at ``context`` (all layers, SWA capped)."""
    single = workload.model_copy(update={"concurrent": 1})
    return float(memory.kv_cache_bytes(model, single, context))


# --------------------------------------------------------------------------------------------
# Time per token / per ubatch from features (pure float arithmetic, used by the fit as well)
# --------------------------------------------------------------------------------------------


def decode_time_s(
    *,
    gpu_weight_bytes: float,
    kv_bytes: float,
    attention_flops: float,
    bandwidth: float,
    gemm_flops: float,
    layer_latency_s: float,
    n_layers: int,
    quant_factor: float,
    ram_bytes: float = 0.0,
    ram_kv_bytes: float = 0.0,
    ram_bandwidth: float = 1.0,
    extra_s: float = 0.0,
) -> float:
    """Seconds per generated token (formula in the module docstring).

    ``bandwidth`` and ``gemm_flops`` are effective rates (after the backend efficiencies);
    ``ram_bytes`` (weights) and ``ram_kv_bytes`` (their layers' cache) sit in system RAM and are read
    at ``ram_bandwidth * RAM_READ_EFFICIENCY``; the quant factor applies to weights only.
    """
    t = (gpu_weight_bytes * quant_factor + kv_bytes) / bandwidth
    if ram_bytes or ram_kv_bytes:
        t += (ram_bytes * quant_factor + ram_kv_bytes) / (ram_bandwidth * RAM_READ_EFFICIENCY)
    t += attention_flops / (ATTENTION_EFFICIENCY * gemm_flops)
    return t + n_layers * layer_latency_s + extra_s


def prefill_time_s(
    *,
    n_tokens: int,
    n_ubatches: int,
    gemm_params: float,
    attention_flops: float,
    ubatch_weight_bytes: float,
    bandwidth: float,
    gemm_flops: float,
    layer_latency_s: float,
    n_layers: int,
    quant_factor: float,
    ubatch_pcie_bytes: float = 0.0,
    ubatch_extra_s: float = 0.0,
) -> float:
    """Seconds to process ``n_tokens`` prompt tokens in ``n_ubatches`` ubatches.

    GEMMs: 2 FLOPs per weight and token; attention: ``attention_flops`` in total; every ubatch
    streams ``ubatch_weight_bytes`` from VRAM (and ``ubatch_pcie_bytes`` of offloaded weights over
    PCIe) and pays the per-layer latency once.
    """
    t = 2.0 * gemm_params * n_tokens * quant_factor / gemm_flops
    t += attention_flops / (ATTENTION_EFFICIENCY * gemm_flops)
    per_ubatch = ubatch_weight_bytes / bandwidth + ubatch_pcie_bytes / PCIE_BYTES_PER_S
    per_ubatch += n_layers * layer_latency_s + ubatch_extra_s
    return t + n_ubatches * per_ubatch


# --------------------------------------------------------------------------------------------
# Whole-system speeds
# --------------------------------------------------------------------------------------------


class _System(Frozen):
    """Rates of the whole setup (one GPU, a layer-split group or a TP group) plus system RAM."""

    rates: DeviceRates
    count: int
    tensor_parallel: bool
    extra_decode_s: float  # multi-GPU hand-over / all-reduce time per token
    ram_bytes_per_s: float
    ram_default: bool
    notes: tuple[str, ...]


def _system(hardware: Hardware, engine: Engine, model: ModelSpec) -> _System:
    """Combine devices: vLLM tensor parallel adds bandwidth and FLOPs, llama.cpp layer split does not.

    Layer split (llama.cpp ``--split-mode layer``, the default) runs the layers one GPU after the
    other, so one stream reads the same bytes at one GPU's bandwidth, plus a hand-over per extra
    GPU. Tensor parallel splits every GEMM over the GPUs: summed bandwidth times ``TP_SCALING`` of
    the interconnect, plus two all-reduces per layer and token.
    """
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
        rates = base.model_copy(update={
            "bandwidth_bytes_per_s": base.bandwidth_bytes_per_s * scale,
            "gemm_flops_per_s": base.gemm_flops_per_s * scale,
        })
        extra = 2 * model.n_layers * TP_ALLREDUCE_S[link]
        notes.append(f"tensor parallel x{count} over {link}: {TP_SCALING[link]:.0%} scaling, all-reduce per layer")
    elif count > 1:
        extra = (count - 1) * LAYER_SPLIT_HOP_S
        notes.append(f"layer split over {count} GPUs: sequential, no single-stream speed-up")
    return _System(rates=rates, count=count, tensor_parallel=tp, extra_decode_s=extra, ram_bytes_per_s=ram_bw,
                   ram_default=ram_default, notes=tuple(notes))


def _split_bytes(model: ModelSpec, w: WeightEstimate, placement: Placement, workload: Workload,
                 context: int) -> tuple[float, float, float, float]:
    """(GPU weight bytes, RAM weight bytes, GPU KV bytes, RAM KV bytes) read per token.

    Layer offload (``-ngl``): the CPU layers' weights and KV, and the output head (llama.cpp keeps
    it on the CPU unless ngl > n_layers), come from RAM. Expert offload (``--n-cpu-moe``): only the
    routed experts of the CPU layers do; attention, shared experts and KV stay on the GPU.
    Unified memory has no offload: one pool, one bandwidth.
    """
    active = token_read_bytes(model, w)
    kv = kv_read_bytes(model, workload, context)
    off = placement.offload
    if off.mode == "layers" and off.layers_total:
        gpu_share = off.layers_on_gpu / off.layers_total
        body = active - w.output_bytes
        return body * gpu_share, body * (1 - gpu_share) + w.output_bytes, kv * gpu_share, kv * (1 - gpu_share)
    if off.mode == "experts" and model.is_moe and off.layers_total:
        assert model.n_experts and model.experts_per_token
        used_experts = w.experts_bytes * model.experts_per_token / model.n_experts
        in_ram = used_experts * off.cpu_moe_layers / off.layers_total
        return active - in_ram, in_ram, kv, 0.0
    return active, 0.0, kv, 0.0


def _bpw(model: ModelSpec, w: WeightEstimate) -> float:
    return 8.0 * w.total_bytes / model.total_params


def _ubatch_ram_share(model: ModelSpec, w: WeightEstimate, placement: Placement, workload: Workload,
                      ubatch: int, context: int) -> float:
    """Share of the weights one ubatch touches that sit in system RAM (and so cross PCIe).

    Expert offload: the touched routed experts of the CPU layers, which for a 512-token ubatch are
    nearly all of them. Layer offload: the CPU layers' share of the per-token read.
    """
    off = placement.offload
    touched = touched_weight_bytes(model, w, ubatch)
    if off.mode == "experts" and model.is_moe and off.layers_total:
        experts = touched - (w.dense_bytes + w.output_bytes)
        experts -= w.embed_bytes if model.tied_embeddings else 0
        return min(1.0, experts * off.cpu_moe_layers / off.layers_total / max(touched, 1.0))
    _, ram_w, _, _ = _split_bytes(model, w, placement, workload, context)
    return min(1.0, ram_w / max(token_read_bytes(model, w), 1.0))


def _decode_time(model: ModelSpec, w: WeightEstimate, placement: Placement, workload: Workload,
                 context: int, quant_id: str | None, system: _System) -> float:
    gpu_w, ram_w, gpu_kv, ram_kv = _split_bytes(model, w, placement, workload, context)
    factor = quant_factors(quant_id, _bpw(model, w))[0]
    return decode_time_s(
        gpu_weight_bytes=gpu_w, kv_bytes=gpu_kv, attention_flops=decode_attention_flops(model, context),
        bandwidth=system.rates.bandwidth_bytes_per_s, gemm_flops=system.rates.gemm_flops_per_s,
        layer_latency_s=system.rates.layer_latency_s, n_layers=model.n_layers, quant_factor=factor,
        ram_bytes=ram_w, ram_kv_bytes=ram_kv, ram_bandwidth=system.ram_bytes_per_s, extra_s=system.extra_decode_s,
    )


def _prompt_time(model: ModelSpec, w: WeightEstimate, placement: Placement, workload: Workload,
                 n_tokens: int, depth: int, quant_id: str | None, system: _System) -> float:
    ubatch = max(1, min(workload.n_ubatch, n_tokens))
    chunks = math.ceil(n_tokens / ubatch)
    touched = touched_weight_bytes(model, w, ubatch)
    ram_share = _ubatch_ram_share(model, w, placement, workload, ubatch, depth + n_tokens)
    extra = 0.0
    if system.count > 1 and not system.tensor_parallel:
        # layer split: each hand-over moves the ubatch's f32 hidden states over PCIe
        hop_bytes = ubatch * model.hidden_size * 4
        extra = (system.count - 1) * (LAYER_SPLIT_HOP_S + hop_bytes / PCIE_BYTES_PER_S)
    elif system.tensor_parallel:
        extra = system.extra_decode_s
    no_fa = PREFILL_NO_FLASH_ATTENTION_FACTOR if not workload.flash_attention else 1.0
    return no_fa * prefill_time_s(
        n_tokens=n_tokens, n_ubatches=chunks, gemm_params=gemm_params_per_token(model),
        attention_flops=prefill_attention_flops(model, n_tokens, depth),
        ubatch_weight_bytes=touched * (1.0 - ram_share), bandwidth=system.rates.bandwidth_bytes_per_s,
        gemm_flops=system.rates.gemm_flops_per_s, layer_latency_s=system.rates.layer_latency_s,
        n_layers=model.n_layers, quant_factor=quant_factors(quant_id, _bpw(model, w))[1],
        ubatch_pcie_bytes=touched * ram_share, ubatch_extra_s=extra,
    )


def decode_tokens_per_s(
    model: ModelSpec,
    weights: WeightEstimate,
    placement: Placement,
    hardware: Hardware,
    workload: Workload,
    context: int,
    quant_id: str | None = None,
) -> float:
    """Single-stream tokens/s at ``context`` on any hardware (a cloud offer's own GPU included)."""
    system = _system(hardware, workload.engine, model)
    return 1.0 / _decode_time(model, weights, placement, workload, context, quant_id, system)


def prompt_time_s(
    model: ModelSpec,
    weights: WeightEstimate,
    placement: Placement,
    hardware: Hardware,
    workload: Workload,
    n_tokens: int,
    depth: int = 0,
    quant_id: str | None = None,
) -> float:
    """Seconds to process ``n_tokens`` of prompt after ``depth`` cached tokens, ubatch by ubatch.

    Each ubatch streams the weights once (offloaded ones over PCIe) and pays attention over
    everything before it; the attention sum is closed-form because it grows linearly with position.
    """
    system = _system(hardware, workload.engine, model)
    return _prompt_time(model, weights, placement, workload, n_tokens, depth, quant_id, system)


def prefill_tokens_per_s(
    model: ModelSpec,
    weights: WeightEstimate,
    placement: Placement,
    hardware: Hardware,
    workload: Workload,
    n_tokens: int = LLAMA_BENCH_PP,
    depth: int = 0,
    quant_id: str | None = None,
) -> float:
    """Prompt tokens/s for a batch of ``n_tokens`` (llama-bench pp512 by default) after ``depth``."""
    return n_tokens / prompt_time_s(model, weights, placement, hardware, workload, n_tokens, depth, quant_id)


# --------------------------------------------------------------------------------------------
# Concurrency (vLLM)
# --------------------------------------------------------------------------------------------


def concurrency(
    model: ModelSpec,
    weights: WeightEstimate,
    hardware: Hardware,
    workload: Workload,
    users: int,
    quant_id: str | None = None,
) -> Concurrency:
    """How many sequences of the requested context fit, and throughput for ``users`` users.

    KV budget = usable memory - weights - runtime overhead (vLLM pre-allocates its KV pool the
    same way, ``determine_available_memory``). A decode step for a batch of B sequences reads the
    weights once (MoE: every expert any of the B tokens routes to) plus B KV caches, and does
    B x 2 x P_active GEMM FLOPs; the step takes the longer of the two (roofline) plus the B
    sequences' attention arithmetic, so aggregate throughput grows with B until the GEMMs become
    compute-bound. With B = 1 this is exactly the single-stream decode time. Users beyond the batch wait,
    so per-user speed = aggregate / users.
    """
    system = _system(hardware, workload.engine, model)
    usable = memory.usable_bytes(hardware, workload)
    overhead = memory.overhead_bytes(model, hardware, workload)
    budget = max(0, usable - weights.total_bytes - overhead)
    per_seq = max(1, memory.kv_cache_bytes(model, workload.model_copy(update={"concurrent": 1})))
    fit = budget // per_seq
    batch = max(1, min(users, fit))
    read = touched_weight_bytes(model, weights, batch) * quant_factors(quant_id, _bpw(model, weights))[0]
    read += batch * kv_read_bytes(model, workload, workload.context)
    t_mem = read / system.rates.bandwidth_bytes_per_s
    t_mem += model.n_layers * system.rates.layer_latency_s + system.extra_decode_s
    t_compute = batch * 2.0 * gemm_params_per_token(model) / system.rates.gemm_flops_per_s
    t_attention = batch * decode_attention_flops(model, workload.context) / (
        ATTENTION_EFFICIENCY * system.rates.gemm_flops_per_s)
    step = max(t_mem, t_compute) + t_attention
    aggregate = batch / step if fit > 0 else 0.0
    return Concurrency(
        sequences_fit=int(fit), users=users, kv_budget_bytes=int(budget), kv_bytes_per_sequence=int(per_seq),
        batch=batch if fit > 0 else 0, aggregate_tokens_per_s=aggregate,
        per_user_tokens_per_s=aggregate / users, compute_bound=t_compute > t_mem,
    )


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def _band(value: float, band: tuple[float, float], rough: bool) -> tuple[float, float]:
    lo, hi = band
    if rough:
        lo, hi = lo**ROUGH_BAND_WIDEN, hi**ROUGH_BAND_WIDEN
    return value * lo, value * hi


def estimate_speed(
    model: ModelSpec,
    weights: WeightEstimate,
    placement: Placement,
    hardware: Hardware,
    workload: Workload,
    quant_id: str | None = None,
) -> SpeedEstimate:
    """Decode, prefill, TTFT (and vLLM concurrency) for one placement; see the module docstring."""
    engine = workload.engine
    system = _system(hardware, engine, model)
    notes = list(system.notes)
    rough = system.rates.rough
    if engine is Engine.VLLM:
        rough = True
        notes.append("vLLM: no vLLM speed calibration, llama.cpp efficiencies of the backend used")
    offloaded = placement.offload.mode in ("layers", "experts")
    if offloaded:
        gbps = system.ram_bytes_per_s / 1e9
        source = "platform default" if system.ram_default else "given"
        notes.append(f"offloaded weights read from system RAM at {gbps:.0f} GB/s ({source})")
        rough = rough or system.ram_default
    if hardware.gpu.unified_memory:
        notes.append("unified memory: weights and KV read at the one pool's bandwidth")
    if model.is_moe:
        notes.append("MoE: per token only shared weights and the routed experts in use are read")

    short = _decode_time(model, weights, placement, workload, TG_MEAN_DEPTH, quant_id, system)
    at_ctx = _decode_time(model, weights, placement, workload, workload.context, quant_id, system)
    decode = 1.0 / short
    pp = LLAMA_BENCH_PP / _prompt_time(model, weights, placement, workload, LLAMA_BENCH_PP, 0, quant_id, system)
    ttft = _prompt_time(model, weights, placement, workload, workload.prompt_tokens, 0, quant_id, system)
    conc = None
    if engine is Engine.VLLM or workload.concurrent > 1:  # llama-server -np batches the same way
        conc = concurrency(model, weights, hardware, workload, workload.concurrent, quant_id)
    return SpeedEstimate(
        decode_tokens_per_s=decode,
        decode_tokens_per_s_at_context=1.0 / at_ctx,
        decode_range=_band(decode, DECODE_BAND, rough),
        prefill_tokens_per_s=pp,
        prefill_range=_band(pp, PREFILL_BAND, rough),
        ttft_s=ttft,
        prompt_tokens=workload.prompt_tokens,
        context=workload.context,
        confidence="rough" if rough else "calibrated",
        basis=tuple(notes),
        concurrency=conc,
    )


__all__ = [
    "Concurrency",
    "SpeedEstimate",
    "concurrency",
    "decode_tokens_per_s",
    "device_rates",
    "estimate_speed",
    "prefill_tokens_per_s",
    "prompt_time_s",
]

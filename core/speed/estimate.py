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

# no ``from __future__ import annotations``: pydantic reads these models' field types as objects instead of
# compiling each from a string, a few milliseconds of every start (``fitbot estimate``, issue 33)

import math
from typing import Literal, NamedTuple

from core import memory
from core.fit import Placement
from core.models import Engine, Frozen, Hardware, ModelSpec, Workload
from core.speed import constants as K
from core.speed.arch import arch_profile, canonical_arch, consumer_board, is_igpu
from core.speed.bands import speed_band
from core.speed.constants import LLAMA_BENCH_PP, PCIE_BYTES_PER_S, RAM_READ_EFFICIENCY, TG_MEAN_DEPTH
from core.speed.cpu import prompt_quant_factor
from core.speed.device import (
    DeviceRates,
    SetupRates,
    calibration_level,
    decode_quant_factor,
    dense_tflops,
    dequant_seconds,
    device_rates,
    kernel_family,
    layer_latency_s,
    ram_bandwidth,
    setup_rates,
    speed_family,
    vllm_max_num_seqs,
)
from core.speed.model import (
    DecodeTerms,
    attended_tokens,
    attention_dims,
    decode_attention_flops,
    decode_terms,
    gemm_params_effective,
    gemm_params_per_token,
    kv_read_bytes,
    layer_cost_factor,
    moe_tile_factor,
    prefill_attention_flops,
    quant_factors,
    quant_family,
    token_read_bytes,
    touched_weight_bytes,
)
from core.weights import WeightEstimate, param_groups


class Concurrency(Frozen):
    """N users served at the requested context (``batch_speed``)."""

    sequences_fit: int  # sequences of the requested context the KV pool holds (llama.cpp: its slots)
    users: int
    kv_budget_bytes: int
    kv_bytes_per_sequence: int
    batch: int  # sequences decoded together: min(users, sequences_fit, vLLM max_num_seqs)
    aggregate_tokens_per_s: float
    per_user_tokens_per_s: float
    compute_bound: bool


class SpeedEstimate(Frozen):
    decode_tokens_per_s: float  # llama-bench tg128: short context
    decode_tokens_per_s_at_context: float  # with the KV cache of the requested context (the fit card's figure)
    decode_range: tuple[float, float]
    decode_range_at_context: tuple[float, float]  # the same band around the figure at the context
    prefill_tokens_per_s: float  # llama-bench pp512
    prefill_range: tuple[float, float]
    prefill_attention_share: float = 0.0  # of the pp512 time, attention's (``PromptTime``)
    ttft_s: float  # time to first token for prompt_tokens
    ttft_attention_share: float = 0.0
    prompt_tokens: int
    context: int
    confidence: Literal["calibrated", "rough"]
    # rows behind the band (``calibration_level``)
    calibration: Literal["calibrated", "thin", "missed", "excluded", "none"] = "calibrated"
    basis: tuple[str, ...] = ()
    concurrency: Concurrency | None = None


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
    n_layers: float,
    quant_factor: float,
    ram_bytes: float = 0.0,
    ram_kv_bytes: float = 0.0,
    ram_bandwidth: float = 1.0,
    extra_s: float = 0.0,
    attention_efficiency: float,
    dequant_s: float = 0.0,
) -> float:
    """Seconds per generated token (module docstring): the VRAM read or, where longer, ``dequant_s`` (codebooks).

    ``bandwidth`` and ``gemm_flops`` are effective rates (after the backend efficiencies);
    ``ram_bytes`` (weights) and ``ram_kv_bytes`` (their layers' cache) sit in system RAM and are read
    at ``ram_bandwidth * RAM_READ_EFFICIENCY``; the quant factor applies to weights only; attention
    runs at ``attention_efficiency`` (the backend's ``ATTENTION_EFFICIENCY``) of the GEMM rate.
    """
    t = max((gpu_weight_bytes * quant_factor + kv_bytes) / bandwidth, dequant_s)
    if ram_bytes or ram_kv_bytes:
        t += (ram_bytes * quant_factor + ram_kv_bytes) / (ram_bandwidth * RAM_READ_EFFICIENCY)
    t += attention_flops / (attention_efficiency * gemm_flops)
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
    n_layers: float,
    quant_factor: float,
    ubatch_pcie_bytes: float = 0.0,
    ubatch_extra_s: float = 0.0,
    attention_efficiency: float,
) -> float:
    """Seconds to process ``n_tokens`` prompt tokens in ``n_ubatches`` ubatches.

    GEMMs: 2 FLOPs per weight and token; attention: ``attention_flops`` in total; every ubatch
    streams ``ubatch_weight_bytes`` from VRAM (and ``ubatch_pcie_bytes`` of offloaded weights over
    PCIe) and pays the per-layer latency once.
    """
    t = 2.0 * gemm_params * n_tokens * quant_factor / gemm_flops
    t += attention_flops / (attention_efficiency * gemm_flops)
    per_ubatch = ubatch_weight_bytes / bandwidth + ubatch_pcie_bytes / PCIE_BYTES_PER_S
    per_ubatch += n_layers * layer_latency_s + ubatch_extra_s
    return t + n_ubatches * per_ubatch


# --------------------------------------------------------------------------------------------
# Whole-system speeds
# --------------------------------------------------------------------------------------------


def _split_bytes(
    model: ModelSpec, w: WeightEstimate, placement: Placement | None, terms: DecodeTerms, batch: int = 1
) -> tuple[float, float, float, float]:
    """(GPU weight bytes, RAM weight bytes, GPU KV bytes, RAM KV bytes) one decode step of ``batch``
    sequences reads (KV per sequence); ``placement`` None: everything on the GPU(s).

    A batch reads the weights once, every routed expert one of its tokens uses (``touched_weight_bytes``;
    ``batch`` 1: the one token's read). Layer offload (``-ngl``): the CPU layers' weights and KV, and the
    output head (llama.cpp keeps it on the CPU unless ngl > n_layers), come from RAM. Expert offload
    (``--n-cpu-moe``): only the routed experts of the CPU layers do; attention, shared experts and KV stay
    on the GPU. Unified memory has no offload: one pool, one bandwidth.
    """
    active, kv = terms.weight_bytes, terms.kv_bytes
    if batch > 1:
        active += touched_weight_bytes(model, w, batch) - touched_weight_bytes(model, w, 1)
    if placement is None:
        return active, 0.0, kv, 0.0
    off = placement.offload
    if off.mode == "layers" and off.layers_total:
        gpu_share = off.layers_on_gpu / off.layers_total
        body = active - w.output_bytes
        return body * gpu_share, body * (1 - gpu_share) + w.output_bytes, kv * gpu_share, kv * (1 - gpu_share)
    if off.mode == "experts" and model.is_moe and off.layers_total:
        assert model.n_experts and model.experts_per_token
        share = model.experts_per_token / model.n_experts
        used_experts = w.experts_bytes * (1.0 - (1.0 - share) ** batch) if batch > 1 else w.experts_bytes * share
        in_ram = used_experts * off.cpu_moe_layers / off.layers_total
        return active - in_ram, in_ram, kv, 0.0
    return active, 0.0, kv, 0.0


def _bpw(model: ModelSpec, w: WeightEstimate) -> float:
    return 8.0 * w.total_bytes / model.total_params


def _ubatch_ram_share(
    model: ModelSpec,
    w: WeightEstimate,
    placement: Placement,
    workload: Workload,
    touched: float,
    context: int,
    quant_id: str | None,
) -> float:
    """Share of the weights one ubatch touches (``touched`` bytes) that sit in system RAM (and so cross PCIe).

    Expert offload: the touched routed experts of the CPU layers, which for a 512-token ubatch are
    nearly all of them. Layer offload: the CPU layers' share of the per-token read.
    """
    off = placement.offload
    if off.mode == "none":
        return 0.0  # everything on the GPU(s): nothing crosses PCIe
    if off.mode == "experts" and model.is_moe and off.layers_total:
        experts = touched - (w.dense_bytes + w.output_bytes)
        experts -= w.embed_bytes if model.tied_embeddings else 0
        return min(1.0, experts * off.cpu_moe_layers / off.layers_total / max(touched, 1.0))
    terms = decode_terms(model, w, workload, context, quant_id)
    _, ram_w, _, _ = _split_bytes(model, w, placement, terms)
    return min(1.0, ram_w / max(terms.weight_bytes, 1.0))


def _decode_time(
    model: ModelSpec,
    w: WeightEstimate,
    placement: Placement | None,
    workload: Workload,
    context: int,
    quant_id: str | None,
    system: SetupRates,
) -> float:
    terms = decode_terms(model, w, workload, context, quant_id)
    gpu_w, ram_w, gpu_kv, ram_kv = _split_bytes(model, w, placement, terms)
    return decode_time_s(
        gpu_weight_bytes=gpu_w,
        kv_bytes=gpu_kv,
        attention_flops=terms.attention_flops,
        bandwidth=system.rates.bandwidth_bytes_per_s,
        gemm_flops=system.rates.gemm_flops_per_s,
        layer_latency_s=system.rates.layer_latency_s,
        n_layers=terms.layers,
        quant_factor=decode_quant_factor(system.rates, terms.quant_factor, terms.quant_family),
        ram_bytes=ram_w,
        ram_kv_bytes=ram_kv,
        ram_bandwidth=system.ram_bytes_per_s,
        extra_s=system.extra_decode_s,
        attention_efficiency=system.rates.attention_efficiency,
        dequant_s=dequant_seconds(system.rates, terms.grid_weights, gpu_w / max(terms.weight_bytes, 1.0)),
    )


class PromptTime(NamedTuple):
    """Seconds to process a prompt, and the share of them the attention arithmetic takes (the rest is the
    weight GEMMs, their reads and the per-layer time): what a user's run calibrates apart
    (``core.runs.calibrate``), since attention grows with depth and the GEMMs do not."""

    seconds: float
    attention_share: float


def _prompt_time(
    model: ModelSpec,
    w: WeightEstimate,
    placement: Placement,
    workload: Workload,
    n_tokens: int,
    depth: int,
    quant_id: str | None,
    system: SetupRates,
) -> PromptTime:
    ubatch = max(1, min(workload.n_ubatch, n_tokens))
    chunks = math.ceil(n_tokens / ubatch)
    touched = touched_weight_bytes(model, w, ubatch)
    ram_share = _ubatch_ram_share(model, w, placement, workload, touched, depth + n_tokens, quant_id)
    extra = 0.0
    if system.devices > 1 and not system.tensor_parallel:
        # layer split: each hand-over moves the ubatch's f32 hidden states over PCIe
        hop_bytes = ubatch * model.hidden_size * 4
        extra = (system.devices - 1) * (K.LAYER_SPLIT_HOP_S + hop_bytes / PCIE_BYTES_PER_S)
    elif system.tensor_parallel:
        extra = system.extra_decode_s
    no_fa = K.PREFILL_NO_FLASH_ATTENTION_FACTOR if not workload.flash_attention else 1.0
    attention_flops = prefill_attention_flops(model, n_tokens, depth)
    seconds = no_fa * prefill_time_s(
        n_tokens=n_tokens,
        n_ubatches=chunks,
        gemm_params=gemm_params_effective(model, ubatch, system.rates.moe_tile_tokens),
        attention_flops=attention_flops,
        ubatch_weight_bytes=touched * (1.0 - ram_share),
        bandwidth=system.rates.bandwidth_bytes_per_s,
        gemm_flops=system.rates.gemm_flops_per_s,
        layer_latency_s=system.rates.layer_latency_s,
        n_layers=model.n_layers * layer_cost_factor(model),
        quant_factor=prompt_quant_factor(quant_id) if system.rates.cpu else quant_factors(quant_id, _bpw(model, w))[1],
        ubatch_pcie_bytes=touched * ram_share,
        ubatch_extra_s=extra,
        attention_efficiency=system.rates.attention_efficiency,
    )
    attention_s = no_fa * attention_flops / (system.rates.attention_efficiency * system.rates.gemm_flops_per_s)
    return PromptTime(seconds, min(1.0, attention_s / seconds))


def decode_tokens_per_s(
    model: ModelSpec,
    weights: WeightEstimate,
    placement: Placement | None,
    hardware: Hardware,
    workload: Workload,
    context: int,
    quant_id: str | None = None,
) -> float:
    """Single-stream tokens/s at ``context`` on any hardware (a cloud offer's own GPU included);
    ``placement`` None for a setup that holds everything on the GPU(s) (judged on plain numbers)."""
    system = setup_rates(hardware, workload.engine, model.n_layers)
    return 1.0 / _decode_time(model, weights, placement, workload, context, quant_id, system)


def prompt_time(
    model: ModelSpec,
    weights: WeightEstimate,
    placement: Placement,
    hardware: Hardware,
    workload: Workload,
    n_tokens: int,
    depth: int = 0,
    quant_id: str | None = None,
) -> PromptTime:
    """Seconds to process ``n_tokens`` of prompt after ``depth`` cached tokens, ubatch by ubatch, and
    attention's share of them.

    Each ubatch streams the weights once (offloaded ones over PCIe) and pays attention over
    everything before it; the attention sum is closed-form because it grows linearly with position.
    """
    system = setup_rates(hardware, workload.engine, model.n_layers)
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
    return n_tokens / prompt_time(model, weights, placement, hardware, workload, n_tokens, depth, quant_id).seconds


# --------------------------------------------------------------------------------------------
# Concurrency (vLLM)
# --------------------------------------------------------------------------------------------


class Batch(NamedTuple):
    """``Concurrency`` in plain numbers, for scans that price many setups (same fields)."""

    sequences_fit: int
    users: int
    kv_budget_bytes: int
    kv_bytes_per_sequence: int
    batch: int
    aggregate_tokens_per_s: float
    per_user_tokens_per_s: float
    compute_bound: bool


def concurrency(
    model: ModelSpec,
    weights: WeightEstimate,
    placement: Placement | None,
    hardware: Hardware,
    workload: Workload,
    users: int,
    quant_id: str | None = None,
) -> Concurrency:
    """``batch_speed`` as the estimate reports it."""
    return Concurrency(**batch_speed(model, weights, placement, hardware, workload, users, quant_id)._asdict())


def batch_speed(
    model: ModelSpec,
    weights: WeightEstimate,
    placement: Placement | None,
    hardware: Hardware,
    workload: Workload,
    users: int,
    quant_id: str | None = None,
) -> Batch:
    """How many of ``users`` sequences at the requested context decode together, and their throughput,
    on ``placement`` (None: everything on the GPU(s)); engine by engine:

    * vLLM pages its KV cache: the pool is usable memory (``gpu_memory_utilization``) less weights and
      activations/CUDA graphs (``determine_available_memory``); ``memory.reserved_sequences`` makes the
      fit hold one ``max_model_len`` sequence. Sequences at once = min(users, ``max_num_seqs``
      (``vllm_max_num_seqs``), pool // one sequence's KV at the context); the rest queue (vLLM preempts
      and recomputes when the pool runs out), they do not make it "not fit".
    * llama.cpp: ``--parallel N`` slots share ``--ctx-size N x context``, all N caches in the placement
      (offloading layers to make room), every slot in the batch; a scan pricing more users than the
      workload's slots (``core.cost``) gets as many as fit next to the weights.

    A step of B sequences is ``decode_time_s`` with the weights read once (MoE: every expert one of the B
    tokens uses), B caches and B x the attention FLOPs, VRAM and RAM parts as placed; the GPU GEMMs (B x 2
    x P_active) may outlast the VRAM read (roofline). No term is below one stream's, so no user is faster
    than one stream on the same placement; users beyond the batch wait (per user = aggregate / users).
    """
    system = setup_rates(hardware, workload.engine, model.n_layers)
    terms = decode_terms(model, weights, workload, workload.context, quant_id)
    per_seq = max(1, memory.kv_cache_bytes(model, workload, concurrent=1))
    usable = memory.usable_bytes(hardware, workload)
    _, per_device, shared = memory.context_bytes(model, workload)
    pool = max(0, usable - weights.total_bytes - (per_device * hardware.count + shared))  # minus the overhead
    if workload.engine is Engine.VLLM:
        fit = pool // per_seq
        cap = vllm_max_num_seqs(hardware.gpu)
    elif users <= workload.concurrent:  # the slots are in the placement (offloaded where they did not fit)
        pool, fit, cap = memory.kv_cache_bytes(model, workload), users, users
    else:
        fit, cap = max(workload.concurrent, pool // per_seq), users
    batch = max(1, min(users, fit, cap))
    gpu_w, ram_w, gpu_kv, ram_kv = _split_bytes(model, weights, placement, terms, batch)
    t_mem = decode_time_s(
        gpu_weight_bytes=gpu_w,
        kv_bytes=batch * gpu_kv,
        attention_flops=batch * terms.attention_flops,
        bandwidth=system.rates.bandwidth_bytes_per_s,
        gemm_flops=system.rates.gemm_flops_per_s,
        layer_latency_s=system.rates.layer_latency_s,
        n_layers=terms.layers,
        quant_factor=(qf := decode_quant_factor(system.rates, terms.quant_factor, terms.quant_family)),
        ram_bytes=ram_w,
        ram_kv_bytes=batch * ram_kv,
        ram_bandwidth=system.ram_bytes_per_s,
        extra_s=system.extra_decode_s,
        attention_efficiency=system.rates.attention_efficiency,
        dequant_s=dequant_seconds(system.rates, terms.grid_weights, gpu_w / max(terms.weight_bytes, 1.0)),
    )
    vram_read = (gpu_w * qf + batch * gpu_kv) / system.rates.bandwidth_bytes_per_s
    gpu_share = min(1.0, gpu_w / terms.weight_bytes) if terms.weight_bytes and ram_w else 1.0
    t_compute = batch * 2.0 * gemm_params_per_token(model) * gpu_share / system.rates.gemm_flops_per_s
    step = t_mem + max(0.0, t_compute - vram_read)  # the VRAM read or the GEMMs, whichever is longer
    aggregate = batch / step if fit > 0 else 0.0
    return Batch(
        sequences_fit=int(fit),
        users=users,
        kv_budget_bytes=int(pool),
        kv_bytes_per_sequence=int(per_seq),
        batch=batch if fit > 0 else 0,
        aggregate_tokens_per_s=aggregate,
        per_user_tokens_per_s=aggregate / users,
        compute_bound=t_compute > vram_read,
    )


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


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
    system = setup_rates(hardware, engine, model.n_layers)
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
    family = speed_family(hardware.gpu)[0]
    segment = f"{canonical_arch(hardware.gpu)}/{family}"
    level = 2 if rough else 0
    coverage = calibration_level(hardware.gpu)
    arch = canonical_arch(hardware.gpu) or "this chip"
    band_level = level
    if level == 0 and coverage in ("thin", "missed", "excluded"):  # the unseen-generation band, labelled rough
        level = band_level = 1
        why = {
            "thin": "from one source only",
            "missed": "miss the calibrated band when their source is held out",
            "excluded": "of this device are kept out of the fit",
        }[coverage]
        notes.append(f"llama-bench rows for {arch} on {family} {why}: wider band")
    elif level == 0 and coverage == "none":
        level = band_level = 1
        notes.append(f"no llama-bench rows for {arch}: band from other generations")

    short = _decode_time(model, weights, placement, workload, TG_MEAN_DEPTH, quant_id, system)
    at_ctx = _decode_time(model, weights, placement, workload, workload.context, quant_id, system)
    decode = 1.0 / short
    pp = _prompt_time(model, weights, placement, workload, LLAMA_BENCH_PP, 0, quant_id, system)
    ttft = _prompt_time(model, weights, placement, workload, workload.prompt_tokens, 0, quant_id, system)
    conc = None
    if engine is Engine.VLLM or workload.concurrent > 1:  # llama-server -np batches the same way
        conc = concurrency(model, weights, placement, hardware, workload, workload.concurrent, quant_id)
    return SpeedEstimate(
        decode_tokens_per_s=decode,
        decode_tokens_per_s_at_context=1.0 / at_ctx,
        decode_range=speed_band(decode, "decode", family, band_level, model.is_moe, segment),
        decode_range_at_context=speed_band(1.0 / at_ctx, "decode", family, band_level, model.is_moe, segment),
        prefill_tokens_per_s=LLAMA_BENCH_PP / pp.seconds,
        prefill_range=speed_band(LLAMA_BENCH_PP / pp.seconds, "prefill", family, band_level, model.is_moe, segment),
        prefill_attention_share=pp.attention_share,
        ttft_s=ttft.seconds,
        ttft_attention_share=ttft.attention_share,
        prompt_tokens=workload.prompt_tokens,
        context=workload.context,
        confidence="calibrated" if level == 0 else "rough",
        calibration=coverage,
        basis=tuple(notes),
        concurrency=conc,
    )


__all__ = [
    "Batch",
    "Concurrency",
    "DeviceRates",
    "SpeedEstimate",
    "arch_profile",
    "attended_tokens",
    "attention_dims",
    "batch_speed",
    "calibration_level",
    "canonical_arch",
    "concurrency",
    "consumer_board",
    "decode_attention_flops",
    "decode_time_s",
    "decode_tokens_per_s",
    "dense_tflops",
    "device_rates",
    "estimate_speed",
    "gemm_params_effective",
    "gemm_params_per_token",
    "is_igpu",
    "kernel_family",
    "kv_read_bytes",
    "layer_cost_factor",
    "layer_latency_s",
    "moe_tile_factor",
    "param_groups",
    "prefill_attention_flops",
    "PromptTime",
    "prefill_time_s",
    "prefill_tokens_per_s",
    "prompt_time",
    "quant_factors",
    "quant_family",
    "ram_bandwidth",
    "speed_family",
    "token_read_bytes",
    "touched_weight_bytes",
]

"""Model side of the speed model: bytes read and FLOPs done per token or ubatch.

Pure functions of the model architecture, the weight sizes and the quant family; the time formulas
in ``core/speed/estimate.py`` (and the fit in ``bench/speed_calibration.py``) combine them with device rates.
"""

from __future__ import annotations

from typing import NamedTuple

from core import memory
from core.models import AttentionKind, ModelSpec, Workload
from core.speed import constants as K
from core.speed.constants import IQ_EXTRA_FACTOR, IQ_GRID_PREFIXES, QUANT_DECODE_FACTOR, QUANT_PREFILL_FACTOR
from core.weights import WeightEstimate, active_weight_bytes, param_groups

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


def moe_tile_factor(model: ModelSpec, ubatch: int, tile_tokens: float) -> float:
    """Slow-down of the routed-expert GEMMs of one ubatch: each expert sees ubatch*k/E tokens, and a
    GEMM of t tokens runs at t / (t + ``tile_tokens``) of the full-tile rate (the backend's
    ``MOE_TILE_TOKENS``: its expert-GEMM kernel's tile)."""
    if not model.is_moe:
        return 1.0
    assert model.n_experts and model.experts_per_token
    per_expert = max(ubatch * model.experts_per_token / model.n_experts, 1e-6)
    return 1.0 + tile_tokens / per_expert


def gemm_params_effective(model: ModelSpec, ubatch: int, tile_tokens: float) -> float:
    """``gemm_params_per_token`` with the routed experts weighted by ``moe_tile_factor``."""
    groups = param_groups(model)
    if not model.is_moe:
        return float(groups.dense + groups.experts)
    assert model.n_experts and model.experts_per_token
    routed = groups.experts * model.experts_per_token / model.n_experts
    return groups.dense + routed * moe_tile_factor(model, ubatch, tile_tokens)


def layer_cost_factor(model: ModelSpec) -> float:
    """Fixed per-layer cost of the model relative to a dense layer: a MoE layer adds
    ``MOE_EXPERT_EXTRA`` per routed expert a token uses (router, top-k, gather, per-expert launches)."""
    if not model.is_moe:
        return 1.0
    return 1.0 + K.MOE_EXPERT_EXTRA * (model.experts_per_token or 0)


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
    return float(memory.kv_cache_bytes(model, workload, context, concurrent=1))


class DecodeTerms(NamedTuple):
    """The model side of one generated token at a context, whatever the device: what a device scan times
    on every device."""

    weight_bytes: float  # ``token_read_bytes``
    kv_bytes: float  # ``kv_read_bytes`` at the context
    attention_flops: float  # ``decode_attention_flops`` at the context
    layers: float  # n_layers x ``layer_cost_factor``
    quant_factor: float  # the decode multiplier of ``quant_factors``
    quant_family: str = ""  # ``quant_family`` of the weights (a backend may lack a fast kernel for it)
    grid_weights: float = 0.0  # weights read per token when they are codebook quants (``IQ_GRID_PREFIXES``)


# ``decode_terms`` per model, weights and workload object (id() keyed with the objects kept in the entry, as
# in ``core.weights``): a scan times one model on every device with the same three.
_TERMS: dict[tuple[int, int, int, int, str | None], tuple[ModelSpec, WeightEstimate, Workload, DecodeTerms]] = {}
_TERMS_ENTRIES = 4096


def decode_terms(
    model: ModelSpec, w: WeightEstimate, workload: Workload, context: int, quant_id: str | None
) -> DecodeTerms:
    """Bytes read, attention FLOPs, layers and quant factor of one token at ``context`` (memoised)."""
    key = (id(model), id(w), id(workload), context, quant_id)
    hit = _TERMS.get(key)
    if hit is not None and hit[0] is model and hit[1] is w and hit[2] is workload:
        return hit[3]
    if len(_TERMS) >= _TERMS_ENTRIES:
        _TERMS.clear()
    terms = DecodeTerms(
        weight_bytes=token_read_bytes(model, w),
        kv_bytes=kv_read_bytes(model, workload, context),
        attention_flops=decode_attention_flops(model, context),
        layers=model.n_layers * layer_cost_factor(model),
        quant_factor=quant_factors(quant_id, 8.0 * w.total_bytes / model.total_params)[0],
        quant_family=quant_family(quant_id, 8.0 * w.total_bytes / model.total_params),
        grid_weights=grid_weights(model, w, quant_id),
    )
    _TERMS[key] = (model, w, workload, terms)
    return terms


def grid_weights(model: ModelSpec, w: WeightEstimate, quant_id: str | None) -> float:
    """Weights one token reads when the quant is a codebook type (IQ1/IQ2/IQ3), else 0: the per-token read in
    bytes at the file's mean bits per weight."""
    if not (quant_id or "").upper().removeprefix("UD-").startswith(IQ_GRID_PREFIXES):
        return 0.0
    return token_read_bytes(model, w) * model.total_params / max(w.total_bytes, 1.0)


def forget_terms() -> None:
    """Drop the memoised ``decode_terms`` (their layer and quant factors are fitted constants)."""
    _TERMS.clear()

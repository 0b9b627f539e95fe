"""Parameter count of a model recomputed from its architecture numbers.

Used by the tests to catch a wrong layer count, FFN width or parameter total in ``models.toml``:
the count here is what the config implies, the catalog's ``total_params`` is what the model card or
the checkpoint says. Norms, biases and rotary tables are left out (well under 1 % for every model).

    embedding   vocab x hidden (+ the same again for an untied output head)
    attention   GQA: q and o hidden x heads*head_dim, k and v hidden x kv_heads*head_dim
                MLA: q (through q_lora_rank when set), kv_a hidden x (kv_lora_rank + rope),
                     kv_b kv_lora_rank x heads*(nope + v_head_dim), o heads*v_head_dim x hidden
    FFN         gated (3 matrices, 2 when gated_ffn is false): dense layers 3 x hidden x intermediate_size;
                MoE layers (n_experts + n_shared_experts) x 3 x hidden x moe_intermediate_size, plus the router
    vision      vision_params when the row counts a vision tower
"""

from __future__ import annotations

from core.models import AttentionKind, ModelSpec


def attention_params(m: ModelSpec) -> int:
    """Weights of one attention block (full or sliding; linear-attention layers are counted the same)."""
    h = m.hidden_size
    if m.attention is AttentionKind.MLA and m.kv_lora_rank:
        rope = m.qk_rope_head_dim or 0
        v_dim = m.v_head_dim or m.head_dim
        nope = m.head_dim - rope
        q = h * m.q_lora_rank + m.q_lora_rank * m.n_heads * m.head_dim if m.q_lora_rank else h * m.n_heads * m.head_dim
        kv = h * (m.kv_lora_rank + rope) + m.kv_lora_rank * m.n_heads * (nope + v_dim)
        return q + kv + m.n_heads * v_dim * h
    v_dim = m.v_head_dim or m.head_dim
    return h * m.n_heads * m.head_dim * 2 + h * m.n_kv_heads * (m.head_dim + v_dim)


def ffn_params(m: ModelSpec) -> int | None:
    """Weights of every FFN block; None when the row lacks a width it needs."""
    h = m.hidden_size
    mats = 3 if m.gated_ffn else 2
    if not m.is_moe:
        return mats * h * m.intermediate_size * m.n_layers if m.intermediate_size else None
    if not m.moe_intermediate_size or not m.n_experts:
        return None
    dense_layers = m.n_dense_layers
    if dense_layers and not m.intermediate_size:
        return None
    shared = m.n_shared_experts * (m.shared_expert_intermediate_size or m.moe_intermediate_size)
    per_moe_layer = 3 * h * (m.n_experts * m.moe_intermediate_size + shared) + h * m.n_experts
    dense = 3 * h * (m.intermediate_size or 0) * dense_layers
    return dense + per_moe_layer * (m.n_layers - dense_layers)


def architecture_params(m: ModelSpec) -> int | None:
    """Total parameters the architecture implies, or None when a needed width is missing."""
    ffn = ffn_params(m)
    if ffn is None:
        return None
    embed = m.vocab_size * m.hidden_size * (1 if m.tied_embeddings else 2)
    return embed + attention_params(m) * m.n_layers + ffn + (m.vision_params or 0)


def params_deviation(m: ModelSpec) -> float | None:
    """(catalog total - architecture total) / catalog total; None when it cannot be computed."""
    computed = architecture_params(m)
    if computed is None:
        return None
    return (m.total_params - computed) / m.total_params

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
    active      the same with experts_per_token routed experts (plus the shared ones) per MoE layer

``config_params`` adds what only the config.json says: Gated DeltaNet layers (Qwen3-Next/3.5) and
LFM2 short-convolution and Granite 4.0-H Mamba2 layers have their own projections, and a gated attention output (``attn_output_gate``) doubles the query projection.
Per-block configs (Nemotron-H, Nemotron-NAS) are counted block by block (``block_params``).
"""

from __future__ import annotations

from typing import Any

from catalog.config_geometry import (
    BLOCK_TYPES,
    NEMOTRON_NAS,
    integer,
    mamba2_params,
    model_type,
    nas_attention,
    nas_blocks,
    nas_ffn_width,
    nemotron_h_blocks,
    text_config,
)
from catalog.config_layers import linear_layer_params
from core.models import AttentionKind, ModelSpec, Provenance


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


def ffn_params(m: ModelSpec, active: bool = False) -> int | None:
    """Weights of every FFN block (``active``: only those one token uses); None when a width is missing."""
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
    routed = (m.experts_per_token or m.n_experts) if active else m.n_experts
    per_moe_layer = 3 * h * (routed * m.moe_intermediate_size + shared) + h * m.n_experts
    dense = 3 * h * (m.intermediate_size or 0) * dense_layers
    return dense + per_moe_layer * (m.n_layers - dense_layers)


def embedding_params(g: dict[str, Any]) -> int:
    """Token embedding plus an untied output head, from geometry fields (``ModelSpec`` names)."""
    return int(g["vocab_size"] * g["hidden_size"] * (1 if g.get("tied_embeddings") else 2))


def architecture_params(m: ModelSpec, active: bool = False) -> int | None:
    """Total (or ``active``) parameters the architecture implies, or None when a needed width is missing."""
    ffn = ffn_params(m, active)
    if ffn is None:
        return None
    embed = m.vocab_size * m.hidden_size * (1 if m.tied_embeddings else 2)
    return embed + attention_params(m) * m.n_layers + ffn + (m.vision_params or 0)


def config_params(config: dict[str, Any], geometry: dict[str, Any]) -> tuple[int, int]:
    """(total, active) language-model parameters of a config.json, ``geometry`` being its ModelSpec fields.

    Falls back to a 4 x hidden dense FFN when the config gives no FFN width (old GPT-style configs).
    """
    if model_type(text_config(config)) in BLOCK_TYPES:
        return block_params(text_config(config), geometry)
    spec = ModelSpec(
        id="count",
        name="count",
        family="count",
        total_params=1,
        active_params=1,
        provenance=_COUNTING,
        **({"intermediate_size": 4 * geometry["hidden_size"]} | geometry),
    )
    total, active = architecture_params(spec), architecture_params(spec, active=True)
    if total is None or active is None:  # a MoE without an expert width: count it as dense
        spec = spec.model_copy(update={"n_experts": None, "experts_per_token": None})
        total = active = architecture_params(spec) or 1
    cfg = text_config(config)
    fix = 0
    if spec.n_linear_layers:
        fix += spec.n_linear_layers * (linear_layer_params(cfg, spec.hidden_size) - attention_params(spec))
    if cfg.get("attn_output_gate"):
        fix += spec.kv_layers * spec.hidden_size * spec.n_heads * spec.head_dim
    if spec.global_head_dim and spec.global_kv_heads:  # Gemma 4 full layers: their own head size, K = V shared
        g_head, g_kv, h = spec.global_head_dim, spec.global_kv_heads, spec.hidden_size
        full = 2 * h * spec.n_heads * g_head + h * g_kv * g_head * (1 if cfg.get("attention_k_eq_v") else 2)
        fix += spec.kv_layers * (full - attention_params(spec))
    return total + fix, active + fix


def block_params(cfg: dict[str, Any], g: dict[str, Any]) -> tuple[int, int]:
    """(total, active) weights of a per-block config, block by block; ``g`` is its geometry.

    Nemotron-NAS: GQA attention where a block has it, a SwiGLU of the block's own width.
    Nemotron-H: Mamba2 blocks (in_proj to x, z, B, C and dt; conv; out_proj), GQA attention blocks,
    ReLU^2 MLP blocks, and MoE blocks: router, shared expert and routed experts, the experts in
    ``moe_latent_size`` when set (Super, Ultra: hidden -> latent -> experts -> latent -> hidden).
    """
    h, heads, head_dim = int(g["hidden_size"]), int(g["n_heads"]), int(g["head_dim"])
    embed = embedding_params(g)

    def attention(kv_heads: int) -> int:
        return 2 * h * heads * head_dim + 2 * h * kv_heads * head_dim

    if model_type(cfg) == NEMOTRON_NAS:
        total = embed
        for block in nas_blocks(cfg):
            group, width = nas_attention(block), nas_ffn_width(block, h)
            total += attention(heads // group) if group else 0
            total += 3 * h * width if width else 0
        return total, total
    blocks = nemotron_h_blocks(cfg)
    mamba = mamba2_params(cfg, h) if "mamba" in blocks else 0
    fixed = embed + blocks.count("attention") * attention(g["n_kv_heads"]) + blocks.count("mamba") * mamba
    fixed += blocks.count("mlp") * 2 * h * (g.get("intermediate_size") or 0)
    if "moe" not in blocks:
        return fixed, fixed
    latent = integer(cfg, "moe_latent_size", default=0) or 0
    expert = 2 * (latent or h) * g["moe_intermediate_size"]
    shared = g["n_shared_experts"] * 2 * h * (g.get("shared_expert_intermediate_size") or 0)
    around = h * g["n_experts"] + 2 * h * latent + shared  # router, latent projections, shared expert
    moe = blocks.count("moe")
    return fixed + moe * (around + g["n_experts"] * expert), fixed + moe * (around + g["experts_per_token"] * expert)


_COUNTING = Provenance(source="parameter count", as_of="computed")


def params_deviation(m: ModelSpec) -> float | None:
    """(catalog total - architecture total) / catalog total; None when it cannot be computed."""
    computed = architecture_params(m)
    if computed is None:
        return None
    return (m.total_params - computed) / m.total_params

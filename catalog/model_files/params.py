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

``config_params`` adds what only the config.json says: Gated DeltaNet layers (Qwen3-Next/3.5),
LFM2 short-convolution and Granite 4.0-H Mamba2 layers have their own projections, and a gated attention
output (``attn_output_gate``) doubles the query projection. Per-block configs (Nemotron-H, Nemotron-NAS)
are counted block by block (``block_params``), DeepSeek V4 and Kimi Linear by their own layouts
(``deepseek_v4_params``, ``kimi_linear_params``).
"""

from __future__ import annotations

from typing import Any

from catalog.model_files.geometry import (
    BLOCK_TYPES,
    NEMOTRON_NAS,
    mamba2_params,
    model_type,
    nas_attention,
    nas_blocks,
    nas_ffn_width,
    nemotron_h_blocks,
    small_gemma_params,
    text_config,
)
from catalog.model_files.layers import linear_layer_params
from catalog.model_files.mixed import DEEPSEEK_V4, KIMI_LINEAR, compress_ratios, kda_dims, size
from catalog.model_files.values import integer
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
    kind = model_type(text_config(config))
    if kind in BLOCK_TYPES:
        return block_params(text_config(config), geometry)
    if kind == DEEPSEEK_V4:
        return deepseek_v4_params(text_config(config), geometry)
    if kind == KIMI_LINEAR:
        return kimi_linear_params(text_config(config), geometry)
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
        fix += _full_attention_layers(cfg, spec) * (full - attention_params(spec))
    if spec.n_sliding_layers and (spec.sliding_kv_heads or spec.sliding_head_dim or spec.sliding_v_head_dim):
        fix += spec.n_sliding_layers * (_sliding_attention_params(cfg, spec) - attention_params(spec))
    fix += _per_layer_query_heads(cfg, spec)
    extra_total, extra_active = small_gemma_params(cfg, spec.n_layers, spec.hidden_size)
    return total + fix + extra_total, active + fix + extra_active


def _per_layer_query_heads(cfg: dict[str, Any], spec: ModelSpec) -> int:
    """Laguna's ``num_attention_heads_per_layer``: query and output weights of the heads a layer has beyond
    ``num_attention_heads`` (its sliding layers have more); the KV heads stay the same."""
    heads = cfg.get("num_attention_heads_per_layer")
    if not isinstance(heads, list) or len(heads) != spec.n_layers or not all(isinstance(n, int) for n in heads):
        return 0
    extra: int = sum(int(n) - spec.n_heads for n in heads)
    return extra * 2 * spec.hidden_size * spec.head_dim


def _sliding_attention_params(cfg: dict[str, Any], spec: ModelSpec) -> int:
    """Weights of one sliding-window attention block with its own heads (MiMo's ``swa_*`` keys)."""
    h, heads = spec.hidden_size, integer(cfg, "swa_num_attention_heads") or spec.n_heads
    kv = spec.sliding_kv_heads or spec.n_kv_heads
    k_dim = spec.sliding_head_dim or spec.head_dim
    v_dim = spec.sliding_v_head_dim or spec.v_head_dim or k_dim
    return h * heads * k_dim + h * kv * (k_dim + v_dim) + heads * v_dim * h


def _full_attention_layers(cfg: dict[str, Any], spec: ModelSpec) -> int:
    """Full-attention layers by weights: all of them, also those sharing an earlier layer's KV cache."""
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(types) == spec.n_layers:
        return sum(1 for t in types if "full" in str(t))
    return spec.kv_layers


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


def _moe(g: dict[str, Any], width: int, latent: int = 0) -> tuple[int, int]:
    """(all, active) weights of one MoE layer: router, shared experts in ``hidden_size``, routed experts
    in ``latent`` when set (with the projections into and out of it)."""
    h = int(g["hidden_size"])
    inner = latent or h
    shared = g["n_shared_experts"] * 3 * h * (g.get("shared_expert_intermediate_size") or width)
    around = h * g["n_experts"] + shared + (2 * h * latent if latent else 0)
    expert = 3 * inner * width
    return around + g["n_experts"] * expert, around + g["experts_per_token"] * expert


def deepseek_v4_params(cfg: dict[str, Any], g: dict[str, Any]) -> tuple[int, int]:
    """(total, active) of DeepSeek V4 without its MTP layers.

    Attention per layer: q through ``q_lora_rank`` to heads x head_dim, one shared K = V projection to
    head_dim, the output through ``o_groups`` low-rank groups (heads x head_dim -> o_lora_rank per group ->
    hidden); pooled layers add their compressor (hidden -> head_dim, for K and a gate), CSA layers their
    indexer (q_lora_rank -> index heads x index_head_dim, hidden -> index heads, and its own compressor).
    """
    h, heads, head = int(g["hidden_size"]), int(g["n_heads"]), int(g["head_dim"])
    q_rank, o_rank, o_groups = size(cfg, "q_lora_rank") or h, size(cfg, "o_lora_rank") or h, size(cfg, "o_groups") or 1
    i_heads, i_dim = size(cfg, "index_n_heads"), size(cfg, "index_head_dim")
    base = h * q_rank + q_rank * heads * head + h * head + heads * head * o_rank + o_groups * o_rank * h
    attention = 0
    for ratio in compress_ratios(cfg, int(g["n_layers"])):
        attention += base + (2 * h * head * 2 if ratio else 0)
        if ratio == 4:
            attention += q_rank * i_heads * i_dim + h * i_heads + 2 * h * i_dim * 2
    moe_all, moe_active = _moe(g, int(g["moe_intermediate_size"]))
    fixed = embedding_params(g) + attention
    return fixed + g["n_layers"] * moe_all, fixed + g["n_layers"] * moe_active


def kimi_linear_params(cfg: dict[str, Any], g: dict[str, Any]) -> tuple[int, int]:
    """(total, active) of a Kimi Linear language model (Kimi K3), the vision tower left out.

    MLA layers as in DeepSeek V3, plus an output gate (hidden -> heads x v_head_dim) when
    ``mla_use_output_gate``. KDA layers: q, k, v and output projections (heads x head_dim each), the decay
    and output gates through a head_dim-wide low-rank pair each, a per-head beta. Routed experts run in
    ``routed_expert_hidden_size``; the leading dense layers are ``intermediate_size`` wide.
    """
    h, heads = int(g["hidden_size"]), int(g["n_heads"])
    rope, v_dim = int(g.get("qk_rope_head_dim") or 0), int(g.get("v_head_dim") or g["head_dim"])
    q_rank, kv_rank, nope = int(g["q_lora_rank"]), int(g["kv_lora_rank"]), int(g["head_dim"]) - rope
    mla = h * q_rank + q_rank * heads * (nope + rope) + h * (kv_rank + rope) + kv_rank * heads * (nope + v_dim)
    mla += heads * v_dim * h * (2 if cfg.get("mla_use_output_gate") else 1)
    k_heads, k_dim, kernel = kda_dims(cfg)
    inner = k_heads * k_dim
    kda = 4 * h * inner + 2 * (h * k_dim + k_dim * inner) + h * k_heads + 3 * inner * kernel
    dense = int(g.get("n_dense_layers") or 0)
    latent = size(cfg, "routed_expert_hidden_size")
    moe_all, moe_active = _moe(g, int(g["moe_intermediate_size"]), latent)
    fixed = embedding_params(g) + g["n_full_attention_layers"] * mla + g["n_linear_layers"] * kda
    fixed += dense * 3 * h * int(g.get("intermediate_size") or 0)
    moe_layers = int(g["n_layers"]) - dense
    return fixed + moe_layers * moe_all, fixed + moe_layers * moe_active


def routed_expert_params(config: dict[str, Any], geometry: dict[str, Any]) -> int | None:
    """Weights of the routed experts of all MoE layers, counted from the config (None for a dense model).

    Per expert: gate, up and down projections of ``moe_intermediate_size`` (3 matrices; Nemotron-H's ReLU^2
    experts have 2), in ``moe_latent_size`` (Nemotron-H) or ``routed_expert_hidden_size`` (Kimi Linear)
    instead of ``hidden_size`` where the config has one; gpt-oss adds its expert biases (gate_up 2 x width,
    down hidden). MoE layers are all layers but the dense ones ``n_dense_layers`` counts (first_k_dense_replace,
    moe_layer_freq, mlp_only_layers, Llama 4's interleave step); MTP (next-n) layers are left out (a catalog total
    that counts them leaves them in the dense remainder). Shared experts and the router are dense, not counted here.
    """
    experts, width = int(geometry.get("n_experts") or 0), int(geometry.get("moe_intermediate_size") or 0)
    if experts <= 1 or not width or not geometry.get("experts_per_token"):
        return None
    cfg = text_config(config)
    kind, hidden = model_type(cfg), int(geometry["hidden_size"])
    if kind in BLOCK_TYPES:
        blocks = nemotron_h_blocks(cfg) if kind != NEMOTRON_NAS else []
        latent = integer(cfg, "moe_latent_size", default=0) or 0
        return blocks.count("moe") * experts * 2 * (latent or hidden) * width or None
    inner = (size(cfg, "routed_expert_hidden_size") or hidden) if kind == KIMI_LINEAR else hidden
    per_expert = 3 * inner * width + (2 * width + hidden if kind == GPT_OSS else 0)
    moe_layers = int(geometry["n_layers"]) - int(geometry.get("n_dense_layers") or 0)
    return moe_layers * experts * per_expert


GPT_OSS = "gpt_oss"  # expert projections with biases


def mtp_layer_params(config: dict[str, Any], geometry: dict[str, Any]) -> int:
    """Weights of one next-n (MTP) layer: a decoder layer like the model's last (a MoE layer after its leading
    dense ones) plus the projection joining the hidden state and the next token's embedding (2 x hidden -> hidden).
    Copies of the embedding and output head some checkpoints store inside the MTP layer are not counted.
    """
    total, _ = config_params(config, geometry)
    h, layers = int(geometry["hidden_size"]), int(geometry["n_layers"])
    dense = int(geometry.get("n_dense_layers") or 0) if geometry.get("n_experts") else 0
    body = total - embedding_params(geometry)
    if dense and geometry.get("intermediate_size") and geometry.get("attention") is not None:
        spec = ModelSpec(
            id="count", name="count", family="count", total_params=1, active_params=1, provenance=_COUNTING, **geometry
        )
        body -= dense * (attention_params(spec) + 3 * h * int(geometry["intermediate_size"]))
    return body // (layers - dense) + 2 * h * h


_COUNTING = Provenance(source="parameter count", as_of="computed")


def params_deviation(m: ModelSpec) -> float | None:
    """(catalog total - architecture total) / catalog total; None when it cannot be computed."""
    computed = architecture_params(m)
    if computed is None:
        return None
    return (m.total_params - computed) / m.total_params

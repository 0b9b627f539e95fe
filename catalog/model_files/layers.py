"""Architectures whose config.json spells its layers its own way, read on top of ``config_geometry``.

- LFM2 (``lfm2``): short-convolution blocks (``full_attn_idxs`` or ``layer_types`` "conv") next to GQA
  blocks; a conv block keeps its last ``conv_L_cache - 1`` inputs as state, and the SwiGLU width is
  derived from ``block_ff_dim`` as transformers' Lfm2Config does (``lfm2_ffn_width``);
- Granite 4.0-H (``granitemoehybrid``): ``layer_types`` "mamba" / "attention" mixers, each followed by
  routed experts plus a shared MLP (or only the shared MLP: the dense H-Micro); Mamba2 keys ``mamba_*``;
- Hunyuan (``hunyuan``, ``hunyuan_v1_moe``) writes experts per token, shared experts and expert width
  as one value per layer; equal lists are read as that value (``per_layer_scalars``).

Their constant-state layers (convolutions, Mamba2) are ``n_linear_layers`` with ``linear_state_bytes``;
``linear_layer_params`` gives the parameter count their weights.
"""

from __future__ import annotations

from typing import Any

from catalog.model_files.geometry import (
    SUPPORTED_TYPES,
    Layout,
    linear_attention_params,
    mamba2_params,
    mamba_state_bytes,
    model_type,
    text_config,
)
from catalog.model_files.values import GeometryError, integer

LFM2 = "lfm2"  # short-convolution + attention hybrid (lfm2_mix)
GRANITE_HYBRID = "granitemoehybrid"  # Mamba2 + attention mixers, experts + shared MLP (granite_hybrid_mix)
HUNYUAN_TYPES = {"hunyuan", "hunyuan_v1_moe"}  # per-layer lists for the MoE keys (per_layer_scalars)
CONV_STATE_BYTES = 4  # llama.cpp keeps the LFM2 short-convolution state in f32


HUNYUAN_PER_LAYER = {"moe_topk": "moe_topk", "num_shared_expert": "n_shared_experts", "moe_intermediate_size": None}


def per_layer_scalars(cfg: dict[str, Any]) -> dict[str, Any]:
    """Hunyuan's per-layer lists (``moe_topk``, ``num_shared_expert``, ``moe_intermediate_size``) as one value.

    Every layer of the published checkpoints has the same value; a list that varies is not modelled.
    Other architectures come back unchanged.
    """
    if model_type(cfg) not in HUNYUAN_TYPES:
        return cfg
    out = dict(cfg)
    for key, renamed in HUNYUAN_PER_LAYER.items():
        value = cfg.get(key)
        if isinstance(value, list):
            if not value or len(set(map(repr, value))) > 1:
                raise GeometryError(f"{key} differs between layers; per-layer MoE widths are not modelled")
            value = value[0]
        if value is not None:
            out[renamed or key] = value
    return out


def lfm2_blocks(cfg: dict[str, Any], layers: int) -> list[str]:
    """LFM2 block kinds in order: "attention" or "conv" (``layer_types``, or the older ``full_attn_idxs``)."""
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(types) == layers:
        return ["attention" if "attention" in str(t) else "conv" for t in types]
    idxs = cfg.get("full_attn_idxs")
    if not isinstance(idxs, list) or not all(isinstance(i, int) and 0 <= i < layers for i in idxs):
        raise GeometryError("LFM2 config lacks layer_types or full_attn_idxs")
    return ["attention" if i in idxs else "conv" for i in range(layers)]


def lfm2_ffn_width(cfg: dict[str, Any]) -> int | None:
    """SwiGLU width as transformers' Lfm2Config derives it from ``block_ff_dim`` (or ``intermediate_size``)."""
    width = integer(cfg, "block_ff_dim", "intermediate_size")
    if not width:
        return None
    if cfg.get("block_auto_adjust_ff_dim"):
        width = int(2 * width / 3)
        mult = cfg.get("block_ffn_dim_multiplier")
        if isinstance(mult, int | float) and not isinstance(mult, bool) and 0 < mult < 100:
            width = int(mult * width)
        step = integer(cfg, "block_multiple_of", default=256) or 256
        width = step * -(-width // step)
    return width


def lfm2_mix(cfg: dict[str, Any], layers: int) -> dict[str, Any]:
    """Attention and short-convolution block counts, the conv state and the FFN width of an LFM2 config."""
    blocks = lfm2_blocks(cfg, layers)
    conv = blocks.count("conv")
    hidden = integer(cfg, "conv_dim", "hidden_size") or 0
    cache = integer(cfg, "conv_L_cache", default=3) or 3
    return {
        "intermediate_size": lfm2_ffn_width(cfg),
        "n_full_attention_layers": layers - conv,
        "n_sliding_layers": 0,
        "n_linear_layers": conv,
        "linear_state_bytes": (cache - 1) * hidden * CONV_STATE_BYTES if conv else 0,
    }


def lfm2_conv_params(cfg: dict[str, Any], hidden: int) -> int:
    """Weights of one LFM2 conv block: in_proj to B, C and x, the depthwise conv, out_proj (no biases)."""
    cache = integer(cfg, "conv_L_cache", default=3) or 3
    return 3 * hidden * hidden + hidden * cache + hidden * hidden


def granite_hybrid_mix(cfg: dict[str, Any], layers: int) -> dict[str, Any]:
    """Mamba2 / attention layer counts, the Mamba2 state and the FFN of a Granite 4.0-H config.

    Every layer has the shared MLP (``shared_intermediate_size``); MoE variants add routed experts of
    width ``intermediate_size``. The dense H-Micro has no experts: its shared MLP is the dense FFN.
    """
    types = cfg.get("layer_types")
    if not isinstance(types, list) or len(types) != layers or not set(map(str, types)) <= {"mamba", "attention"}:
        raise GeometryError("Granite hybrid layer_types must list 'mamba' or 'attention' for every layer")
    mamba = sum(1 for t in types if t == "mamba")
    experts = integer(cfg, "num_local_experts", default=0) or 0
    shared = integer(cfg, "shared_intermediate_size")
    ffn: dict[str, Any] = {"intermediate_size": shared}
    if experts > 1:
        ffn = {
            "n_experts": experts,
            "experts_per_token": integer(cfg, "num_experts_per_tok"),
            "moe_intermediate_size": integer(cfg, "intermediate_size"),
            "n_shared_experts": 1 if shared else 0,
            "shared_expert_intermediate_size": shared,
            "n_dense_layers": 0,
        }
    return ffn | {
        "n_full_attention_layers": layers - mamba,
        "n_sliding_layers": 0,
        "n_linear_layers": mamba,
        "linear_state_bytes": mamba_state_bytes(cfg) if mamba else 0,
    }


def linear_layer_params(cfg: dict[str, Any], hidden: int) -> int:
    """Weights of one constant-state (linear-attention, convolution or Mamba2) layer of this architecture."""
    kind = model_type(text_config(cfg))
    if kind == LFM2:
        return lfm2_conv_params(text_config(cfg), hidden)
    if kind == GRANITE_HYBRID:
        return mamba2_params(text_config(cfg), hidden)
    return linear_attention_params(cfg, hidden)


LAYOUTS: dict[str, Layout] = {LFM2: lfm2_mix, GRANITE_HYBRID: granite_hybrid_mix}
READABLE_TYPES = SUPPORTED_TYPES | set(LAYOUTS)  # every model_type the config reader answers for

"""config.json readers for models that mix attention kinds per layer in their own way.

``config_geometry.geometry`` reads the common keys first; these functions add or replace what only
these architectures say:

- DeepSeek V4 (``deepseek_v4``: V4 Flash / Pro): every layer attends a ``sliding_window`` of recent
  tokens at full width, and ``compress_ratios`` (one entry per layer, then the MTP layers) pools the
  rest of the context per layer into one ``head_dim``-wide entry (K = V, one KV head) per 4 tokens
  ("CSA", which also caches an ``index_head_dim`` indexer key per entry) or per 128 tokens ("HCA");
  0 = window only. That is the cache layout sglang's DeepSeek V4 pool planner sizes (its
  ``DSV4PoolConfigurator``: latent entries per ratio, the indexer on ratio-4 layers only).
- Kimi Linear (``kimi_linear``: Kimi K3): ``linear_attn_config`` lists the MLA layers
  (``full_attn_layers``) and the KDA (Kimi Delta Attention) layers (``kda_layers``). A KDA layer keeps a
  head_dim x head_dim fp32 state per head plus short convolutions over q, k and v. Routed experts run in
  ``routed_expert_hidden_size`` (a latent MoE), which only the parameter count needs.
- MiniMax M3 (``minimax_m3``): GQA whose sparse attention reads selected blocks of a full cache (the cache
  is not smaller); dense layers are ``dense_intermediate_size`` wide, the shared expert
  ``shared_intermediate_size`` (``intermediate_size`` there is the expert width).
"""

from __future__ import annotations

from typing import Any

from catalog.model_files.values import GeometryError, integer

DEEPSEEK_V4, KIMI_LINEAR, MINIMAX_M3 = "deepseek_v4", "kimi_linear", "minimax_m3"
MIXED_TYPES = {DEEPSEEK_V4, KIMI_LINEAR, MINIMAX_M3}  # read here: what is their own beyond the common keys

KDA_STATE_BYTES = 4  # fp32 recurrent state and conv cache, as for Gated DeltaNet
CSA_RATIO = 4  # DeepSeek V4 layers pooled this finely also cache an indexer key per entry


def size(cfg: dict[str, Any], key: str, default: int = 0) -> int:
    """A width or count these layouts add (an untrusted config value): an integer from 0 to 2**20."""
    value = integer(cfg, key, default=default) or 0
    if not 0 <= value <= 1 << 20:
        raise GeometryError(f"{key} must be between 0 and {1 << 20}, got {value}")
    return value


def mixed_geometry(cfg: dict[str, Any], kind: str, layers: int) -> dict[str, Any]:
    """Geometry fields of a ``MIXED_TYPES`` config that replace the common reading."""
    if kind == DEEPSEEK_V4:
        return deepseek_v4_geometry(cfg, layers)
    if kind == KIMI_LINEAR:
        return kimi_linear_geometry(cfg, layers)
    return minimax_m3_geometry(cfg)


def compress_ratios(cfg: dict[str, Any], layers: int) -> list[int]:
    """DeepSeek V4: the pooling ratio of each decoder layer (MTP layers' entries dropped)."""
    ratios = cfg.get("compress_ratios")
    if not isinstance(ratios, list) or len(ratios) < layers:
        raise GeometryError("compress_ratios must list a ratio for every layer")
    out = [integer({"compress_ratios": r}, "compress_ratios") or 0 for r in ratios[:layers]]
    if any(r < 0 or r > 1 << 16 for r in out):
        raise GeometryError("compress_ratios must be between 0 and 65536")
    return out


def deepseek_v4_geometry(cfg: dict[str, Any], layers: int) -> dict[str, Any]:
    """Every layer a window layer; the pooled entries of all layers as elements per context token."""
    window = integer(cfg, "sliding_window")
    if not window:
        raise GeometryError("sliding_window is missing")
    latent = integer(cfg, "head_dim") or 0
    index = size(cfg, "index_head_dim")
    pooled = sum((latent + (index if r == CSA_RATIO else 0)) / r for r in compress_ratios(cfg, layers) if r)
    return {
        "n_full_attention_layers": 0,
        "n_sliding_layers": layers,
        "sliding_window": window,
        "pooled_kv_elements": pooled,
        "q_lora_rank": integer(cfg, "q_lora_rank"),
        "qk_rope_head_dim": integer(cfg, "qk_rope_head_dim"),
    }


def kda_layers(cfg: dict[str, Any], layers: int) -> tuple[int, int]:
    """Kimi Linear: (MLA layers, KDA layers) from ``linear_attn_config``."""
    linear = cfg.get("linear_attn_config")
    if not isinstance(linear, dict):
        raise GeometryError("linear_attn_config is missing")
    full, kda = linear.get("full_attn_layers"), linear.get("kda_layers")
    if not isinstance(full, list) or not isinstance(kda, list) or len(full) + len(kda) != layers:
        raise GeometryError("linear_attn_config full_attn_layers and kda_layers must cover every layer")
    return len(full), len(kda)


def kda_dims(cfg: dict[str, Any]) -> tuple[int, int, int]:
    """(heads, head_dim, conv kernel) of a KDA layer."""
    linear = cfg.get("linear_attn_config") or {}
    heads, head_dim = size(linear, "num_heads"), size(linear, "head_dim")
    kernel = size(linear, "short_conv_kernel_size", default=4) or 4
    if not (heads and head_dim) or max(heads, head_dim, kernel) > 1 << 12:
        raise GeometryError("linear_attn_config num_heads or head_dim is missing or out of range")
    return heads, head_dim, kernel


def kimi_linear_geometry(cfg: dict[str, Any], layers: int) -> dict[str, Any]:
    full, kda = kda_layers(cfg, layers)
    heads, head_dim, kernel = kda_dims(cfg)
    state = heads * head_dim * head_dim + (kernel - 1) * 3 * heads * head_dim  # state + q/k/v conv windows
    return {
        "n_full_attention_layers": full,
        "n_linear_layers": kda,
        "linear_state_bytes": state * KDA_STATE_BYTES,
    }


def minimax_m3_geometry(cfg: dict[str, Any]) -> dict[str, Any]:
    shared = integer(cfg, "n_shared_experts", default=0) or 0
    return {
        "intermediate_size": integer(cfg, "dense_intermediate_size"),
        "shared_expert_intermediate_size": integer(cfg, "shared_intermediate_size") if shared else None,
    }

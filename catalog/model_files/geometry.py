"""The one reading of a Hugging Face ``config.json``: which ``ModelSpec`` geometry fields it implies.

Used by the catalog importer (stored config copies -> catalog rows) and by live look-ups
(``hf_config.spec_from_config``), so a catalog row and a hub answer for the same config agree.

What it reads beyond the plain GQA keys:

- layer mix: ``layer_types`` (full / sliding / linear per layer), ``full_attention_interval``
  (Qwen3-Next/3.5: every 4th layer is full attention), ``sliding_window_pattern`` (an int, or
  EXAONE-4's "LLLG" string), MiMo's ``hybrid_layer_pattern`` (1 = sliding window), Gemma 2 (1:1);
- MLA: ``kv_lora_rank``, ``q_lora_rank``, ``qk_rope_head_dim`` + ``qk_nope_head_dim``, ``v_head_dim``;
- MoE: routed experts, experts per token, shared experts and their width, leading dense layers
  (``first_k_dense_replace``, or a ``moe_layer_freq`` / ``mlp_only_layers`` list); Gemma 4's dense MLP
  next to its experts (``enable_moe_block``) counts as one shared expert;
- per-layer-type heads: Gemma 4's full-attention layers have their own KV heads and head size
  (``num_global_key_value_heads``, ``global_head_dim``; ``attention_k_eq_v``: no V projection there);
  sliding-window layers theirs (``swa_num_key_value_heads``, ``swa_head_dim``, ``swa_v_head_dim``: MiMo);
- keys a config leaves to transformers' defaults: Google's Gemma 3 4B/12B/27B configs give no heads,
  vocabulary, context or layer pattern (``gemma3_defaults``);
- Phi-2's December 2023 config (``phi-msft``: ``n_embd``, ``n_head``, ``n_layer``, ``n_inner`` null = 4 x hidden,
  ``mixformer_width``);
- cross-attention layers (Llama 3.2 Vision, ``mllama``: ``cross_attention_layers``) attend to the image
  tokens only, so their KV does not grow with the text (``cross_attention_mix``);
- Gemma 4 E2B/E4B (``small_gemma``): the last ``num_kv_shared_layers`` layers reuse the KV of an earlier layer
  of their kind and keep no cache of their own (``kv_shared_mix``); per-layer embeddings
  (``hidden_size_per_layer_input``) and the double-wide FFN of the shared layers (``use_double_wide_mlp``)
  add weights the per-layer formula does not see (``small_gemma_params``);
- next-n (MTP) layers (``num_nextn_predict_layers``, ``mtp_num_hidden_layers``) are not decoder layers:
  ``mtp_layers`` counts them, ``gguf_mtp_layers`` says whether llama.cpp's converter keeps them (``GGUF_KEEPS_MTP``);
- context: ``max_position_embeddings`` as written. ``rope_scaling.factor`` is NOT multiplied in:
  the config length is what the checkpoint was set up for; YaRN is a serving choice;
- per-block layouts, where a block is not attention + FFN (``block_mix``):
  Nemotron-H (``nemotron_h``: Nemotron-H, Nemotron 3 Nano/Super/Ultra) makes each block ONE of a
  Mamba2 mixer (``M`` / "mamba"), GQA attention (``*`` / "attention"), a routed-expert FFN (``E`` /
  "moe") or a dense MLP (``-`` / "mlp"), from ``hybrid_override_pattern`` or ``layers_block_type``;
  its FFNs are ReLU^2 (two matrices). DeciLM / Nemotron-NAS (``nemotron-nas``: Llama-3.x-Nemotron
  Super) gives each block its own attention (``n_heads_in_group``, or none: ``no_op``) and FFN
  width (``ffn_mult``) in ``block_configs``. A Mamba2 block keeps a constant recurrent state;
- attention mixed per layer in a model's own way (``MIXED_TYPES``, read in ``config_mixed``):
  DeepSeek V4 compressed attention, Kimi Linear (KDA + MLA), MiniMax M3.
- LFM2 short convolutions, Granite 4.0-H Mamba2 layers and Hunyuan's per-layer MoE lists:
  ``catalog.model_files.layers``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from catalog.model_files import mixed as config_mixed
from catalog.model_files.mixed import MIXED_TYPES
from catalog.model_files.values import GeometryError, integer
from core.models import AttentionKind

# FFNs with two matrices (up, down) instead of a gated three (gate, up, down)
UNGATED_TYPES = {"phi", "phi-msft", "starcoder2", "apertus", "arcee"}  # arcee (AFM): ReLU^2 up/down MLP
# transformers' own default when a config leaves tie_word_embeddings out
TIED_BY_DEFAULT = {"gemma", "gemma2", "gemma3", "gemma3_text", "gemma4", "gemma4_text", "smollm3", "lfm2"}
MLA_TYPES = {"deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "glm_moe_dsa", "glm4_moe_lite", "kimi_linear"}
HYBRID_TYPES = {"qwen3_next", "qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text"}
GQA_TYPES = {
    "llama",
    "mistral",
    "ministral3",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen2_vl",  # Qwen2-VL / Qwen2.5-VL: the text keys sit at the top level, vision_config apart
    "qwen2_5_vl",
    "qwen3",
    "qwen3_moe",
    "qwen3_vl",
    "qwen3_vl_text",
    "qwen3_vl_moe",
    "qwen3_vl_moe_text",
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3_text",
    "gemma4",
    "gemma4_text",
    "phi3",
    "phimoe",
    "phi",
    "phi-msft",
    "glm",
    "glm4",
    "glm4_moe",
    "gpt_oss",
    "olmo",
    "olmo2",
    "olmo3",
    "cohere",
    "cohere2",
    "granite",
    "granitemoe",
    "minimax_m2",
    "ernie4_5",
    "ernie4_5_moe",
    "hunyuan_v1_moe",
    "exaone",
    "exaone4",
    "starcoder2",
    "internlm2",
    "internlm3",
    "smollm3",
    "llama4_text",
    "seed_oss",
    "apertus",
    "dots1",
    "arcee",
    "hunyuan_v1_dense",
    "hunyuan",
    "mimo_v2_flash",
    "step3p7",
    "mllama",
    "mllama_text_model",
    "laguna",  # poolside Laguna: layer_types (sliding 512 : full), per-layer query heads (num_attention_heads_per_layer)
}
NEMOTRON_H, NEMOTRON_NAS = "nemotron_h", "nemotron-nas"
BLOCK_TYPES = {NEMOTRON_H, NEMOTRON_NAS}  # one layout entry per block (block_mix)
SUPPORTED_TYPES = GQA_TYPES | MLA_TYPES | HYBRID_TYPES | BLOCK_TYPES | MIXED_TYPES
NEMOTRON_H_BLOCKS = {"M": "mamba", "*": "attention", "E": "moe", "-": "mlp"}
MAMBA_STATE_BYTES = 4  # llama.cpp keeps the Mamba conv and SSM states in f32
# transformers' Gemma3TextConfig defaults for the keys Gemma 3's multimodal config.json files leave out
GEMMA3_TEXT_DEFAULTS = {
    "vocab_size": 262_208,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "max_position_embeddings": 131_072,
    "sliding_window": 4096,
    "sliding_window_pattern": 6,
}


Layout = Callable[[dict[str, Any], int], dict[str, Any]]  # (config, layers) -> layer counts, state, FFN


def text_config(config: dict[str, Any]) -> dict[str, Any]:
    """Multimodal configs nest the language model under ``text_config`` (or ``llm_config``)."""
    for key in ("text_config", "llm_config", "language_config"):
        inner = config.get(key)
        if isinstance(inner, dict) and inner.get("num_hidden_layers"):
            merged = {k: v for k, v in config.items() if k != key}
            merged.update(inner)
            inner_type = str(inner.get("model_type") or "").lower()
            merged["model_type"] = inner_type if inner_type in SUPPORTED_TYPES else config.get("model_type")
            merged["architectures"] = config.get("architectures") or inner.get("architectures")
            merged.setdefault("tie_word_embeddings", config.get("tie_word_embeddings"))
            return gemma3_defaults(merged)
    return gemma3_defaults(config)


def gemma3_defaults(cfg: dict[str, Any]) -> dict[str, Any]:
    """A Gemma 3 text config with transformers' defaults for the keys it leaves out (4B: heads, vocabulary...)."""
    if model_type(cfg) != "gemma3_text":
        return cfg
    return GEMMA3_TEXT_DEFAULTS | cfg


def model_type(cfg: dict[str, Any]) -> str:
    return str(cfg.get("model_type") or "").lower()


def geometry(config: dict[str, Any], layout: Layout | None = None) -> dict[str, Any]:
    """``ModelSpec`` geometry fields (names as in ``core.models.ModelSpec``) from a config dict.

    The caller checks ``model_type(text_config(config)) in SUPPORTED_TYPES`` first, or passes the
    ``layout`` reader of an architecture with its own layer layout (``catalog.model_files.layers.LAYOUTS``).
    """
    cfg = text_config(config)
    kind = model_type(cfg)
    layers = integer(cfg, "num_hidden_layers", "n_layer", "num_layers")
    if not layers and kind == NEMOTRON_H and isinstance(cfg.get("layers_block_type"), list):
        layers = len(cfg["layers_block_type"])  # Nemotron 3 Ultra lists its blocks and gives no count
    hidden = integer(cfg, "hidden_size", "n_embd", "d_model")
    heads = integer(cfg, "num_attention_heads", "n_head")
    vocab = integer(cfg, "vocab_size")
    if not (layers and hidden and heads and vocab):
        raise GeometryError("config.json lacks num_hidden_layers, hidden_size, num_attention_heads or vocab_size")
    kv_heads = integer(cfg, "num_key_value_heads", "multi_query_group_num", default=heads) or heads
    head_dim = integer(cfg, "head_dim", "attention_head_dim") or hidden // heads
    archs = cfg.get("architectures") or [""]
    if not isinstance(archs, list) or not isinstance(archs[0], str):
        raise GeometryError(f"config.json architectures must be a list of names, got {archs!r:.40}")
    out: dict[str, Any] = {
        "architecture": archs[0],
        "n_layers": layers,
        "hidden_size": hidden,
        "n_heads": heads,
        "n_kv_heads": kv_heads,
        "head_dim": head_dim,
        "vocab_size": vocab,
        "max_context": integer(cfg, "max_position_embeddings", "n_positions", "seq_length", default=4096) or 4096,
        "tied_embeddings": _tied(cfg, kind),
        "native_dtype": native_dtype(cfg),
        "gated_ffn": kind not in UNGATED_TYPES,
    }
    if integer(cfg, "v_head_dim"):
        out["v_head_dim"] = integer(cfg, "v_head_dim")
    if integer(cfg, "global_head_dim") or integer(cfg, "num_global_key_value_heads"):  # Gemma 4 full layers
        out["global_head_dim"] = integer(cfg, "global_head_dim") or head_dim
        out["global_kv_heads"] = integer(cfg, "num_global_key_value_heads") or kv_heads
    out.update(sliding_heads(cfg))
    if kind in MLA_TYPES:
        rope = integer(cfg, "qk_rope_head_dim", default=64) or 0
        out.update(
            attention=AttentionKind.MLA,
            kv_lora_rank=integer(cfg, "kv_lora_rank"),
            q_lora_rank=integer(cfg, "q_lora_rank"),
            qk_rope_head_dim=rope,
            head_dim=(integer(cfg, "qk_nope_head_dim", default=128) or 128) + rope,
        )
    if kind in BLOCK_TYPES:
        out.update(block_mix(cfg, kind))
    elif layout is not None:
        out.update(layout(cfg, layers))
    else:
        out.update(_ffn(cfg, layers))
        if kind == "phi-msft":
            out["intermediate_size"] = mixformer_width(cfg, hidden)
        out.update(layer_mix(cfg, layers))
        out.update(kv_shared_mix(cfg, layers))
    if kind in MIXED_TYPES:
        out.update(config_mixed.mixed_geometry(cfg, kind, layers))
    return {k: v for k, v in out.items() if v is not None}


MTP_KEYS = ("num_nextn_predict_layers", "mtp_num_hidden_layers")  # next-n prediction layers after the decoder's own
# Does llama.cpp's GGUF converter write a model type's MTP layers into the GGUF? Read in ggml-org/llama.cpp's
# conversion/ modules: DeepseekV2Model (registered for DeepseekV2/V3ForCausalLM and Kimi K2/K2.5) sets
# ``skip_mtp = True`` and drops every ``model.layers.N`` with N >= num_hidden_layers ("skip Multi-Token Prediction
# (MTP) layers", conversion/deepseek.py); DeepseekV4Model drops the ``mtp.`` tensors; DeepseekV32Model and
# GlmMoeDsaModel set ``skip_mtp = False`` and Glm4MoeModel (conversion/glm.py) writes num_hidden_layers +
# num_nextn_predict_layers blocks. Model types not listed here were not checked.
GGUF_KEEPS_MTP = {
    "deepseek_v3": False,
    "kimi_k2": False,
    "deepseek_v4": False,
    "deepseek_v32": True,
    "glm_moe_dsa": True,
    "glm4_moe": True,
}


def mtp_layers(config: dict[str, Any]) -> int:
    """Next-n (MTP) prediction layers a config declares after its ``num_hidden_layers`` (0 when none)."""
    cfg = text_config(config)
    return integer(cfg, *MTP_KEYS, default=0) or 0


def gguf_mtp_layers(config: dict[str, Any]) -> int | None:
    """MTP layers a GGUF made by llama.cpp's converter holds: all, none, or None where the converter of this
    model type was not checked (``GGUF_KEEPS_MTP``)."""
    layers = mtp_layers(config)
    keeps = GGUF_KEEPS_MTP.get(model_type(text_config(config)))
    if not layers:
        return 0
    return None if keeps is None else layers if keeps else 0


SLIDING_HEAD_KEYS = {  # config key of a sliding-window layer's own KV layout -> ModelSpec field
    "swa_num_key_value_heads": "sliding_kv_heads",
    "swa_head_dim": "sliding_head_dim",
    "swa_v_head_dim": "sliding_v_head_dim",
}


def sliding_heads(cfg: dict[str, Any]) -> dict[str, Any]:
    """The KV heads and head sizes of the sliding-window layers where the config gives them apart (``swa_*``:
    MiMo-V2-Flash has 8 KV heads on its window layers and 4 on the full ones); none when it does not."""
    return {field: integer(cfg, key) for key, field in SLIDING_HEAD_KEYS.items() if integer(cfg, key)}


def _tied(cfg: dict[str, Any], kind: str) -> bool:
    tie = cfg.get("tie_word_embeddings")
    return bool(tie) if tie is not None else kind in TIED_BY_DEFAULT


def _ffn(cfg: dict[str, Any], layers: int) -> dict[str, Any]:
    """Dense width, or routed experts, shared experts and leading dense layers of a MoE."""
    experts = integer(cfg, "num_local_experts", "num_experts", "n_routed_experts")
    width = integer(cfg, "intermediate_size", "ffn_hidden_size")
    if model_type(cfg) == "llama4_text" and experts:  # one shared expert; every n-th layer is MoE, the rest dense
        step = integer(cfg, "interleave_moe_layer_step", default=1) or 1
        return {
            "n_experts": experts,
            "experts_per_token": integer(cfg, "num_experts_per_tok", default=1),
            "moe_intermediate_size": width,
            "intermediate_size": integer(cfg, "intermediate_size_mlp") if step > 1 else None,
            "n_shared_experts": 1,
            "n_dense_layers": layers - layers // step,
        }
    if not experts or experts <= 1:
        return {"intermediate_size": width}
    moe_width = integer(cfg, "moe_intermediate_size")
    shared_width = integer(cfg, "shared_expert_intermediate_size", "share_expert_dim")
    if cfg.get("enable_moe_block") and moe_width:  # Gemma 4: a dense MLP runs next to the experts, like a shared one
        shared_width = width
    shared = integer(cfg, "n_shared_experts", "num_shared_experts")
    if shared is None:
        shared = 1 if shared_width else 0
    return {
        "n_experts": experts,
        "experts_per_token": integer(cfg, "num_experts_per_tok", "num_experts_per_token", "moe_topk", "top_k_experts"),
        "moe_intermediate_size": moe_width or width,  # Mixtral/MiniMax/gpt-oss: intermediate_size is the expert
        "intermediate_size": width if moe_width else None,
        "n_shared_experts": shared,
        "shared_expert_intermediate_size": shared_width if shared else None,
        "n_dense_layers": _dense_layers(cfg, layers),
    }


def _dense_layers(cfg: dict[str, Any], layers: int) -> int:
    """Leading layers with a dense FFN instead of experts."""
    k = integer(cfg, "first_k_dense_replace")
    if k is not None:
        return k
    freq = cfg.get("moe_layer_freq")
    if isinstance(freq, list) and len(freq) == layers:
        return sum(1 for f in freq if not f)
    only = cfg.get("mlp_only_layers")
    if isinstance(only, list):
        return len(only)
    kinds = cfg.get("mlp_layer_types")  # Laguna: "dense" or "sparse" per layer
    return sum(1 for k in kinds if k == "dense") if isinstance(kinds, list) and len(kinds) == layers else 0


def layer_mix(cfg: dict[str, Any], layers: int) -> dict[str, Any]:
    """Full-attention, sliding-window and linear-attention layer counts (and the window and state)."""
    window = integer(cfg, "sliding_window", "attention_chunk_size")
    sliding = linear = 0
    types = cfg.get("layer_types")
    pattern = cfg.get("sliding_window_pattern")
    hybrid = cfg.get("hybrid_layer_pattern")
    interval = integer(cfg, "full_attention_interval")
    if isinstance(types, list) and len(types) == layers:
        sliding = sum(1 for t in types if "sliding" in str(t) or "chunked" in str(t))
        linear = sum(1 for t in types if "linear" in str(t) or "mamba" in str(t))
    elif interval:
        linear = layers - layers // interval
    elif isinstance(hybrid, list) and len(hybrid) == layers:
        sliding = sum(1 for t in hybrid if t)
    elif isinstance(pattern, str) and pattern:  # EXAONE 4: "LLLG" = 3 local then 1 global, repeated
        sliding = sum(1 for i in range(layers) if pattern[i % len(pattern)].upper() == "L")
    elif isinstance(pattern, int) and not isinstance(pattern, bool) and pattern > 1:
        sliding = layers - layers // pattern
    elif model_type(cfg) == "gemma2":
        sliding = layers // 2
    elif isinstance(cfg.get("cross_attention_layers"), list):
        return cross_attention_mix(cfg, layers)
    elif model_type(cfg) == "llama4_text":  # chunked attention except every 4th (NoPE) layer, transformers' default
        sliding = layers - layers // (integer(cfg, "no_rope_layer_interval", default=4) or 4)
    if cfg.get("use_sliding_window") is False or not window:
        sliding = 0
    if not (sliding or linear):
        return {}
    return {
        "n_full_attention_layers": layers - sliding - linear,
        "n_sliding_layers": sliding,
        "n_linear_layers": linear,
        "sliding_window": window if sliding else None,
        "linear_state_bytes": linear_state_bytes(cfg) if linear else 0,
    }


def cross_attention_mix(cfg: dict[str, Any], layers: int) -> dict[str, Any]:
    """Llama 3.2 Vision: the listed layers attend to the image tokens only; the others keep the text's KV."""
    cross = {i for i in cfg["cross_attention_layers"] if isinstance(i, int) and 0 <= i < layers}
    return {"n_full_attention_layers": layers - len(cross)} if cross else {}


def mixformer_width(cfg: dict[str, Any], hidden: int) -> int:
    """Phi-2's December 2023 config (``phi-msft``): ``n_inner`` null means 4 x ``n_embd``, as its modeling code has it."""
    return integer(cfg, "n_inner") or 4 * hidden


def kv_shared_mix(cfg: dict[str, Any], layers: int) -> dict[str, Any]:
    """Gemma 4 E2B/E4B: only the layers before the ``num_kv_shared_layers`` shared ones keep a KV cache.

    A shared layer attends with the cache of the last earlier layer of its kind (sliding or full), so the
    cache holds the full and sliding layers among the first ``layers - num_kv_shared_layers``.
    """
    shared = integer(cfg, "num_kv_shared_layers", default=0) or 0
    types = cfg.get("layer_types")
    if not shared or not isinstance(types, list) or len(types) != layers or not 0 < shared < layers:
        return {}
    own = [str(t) for t in types[: layers - shared]]
    sliding = sum(1 for t in own if "sliding" in t)
    return {"n_full_attention_layers": len(own) - sliding, "n_sliding_layers": sliding}


def small_gemma_params(cfg: dict[str, Any], layers: int, hidden: int) -> tuple[int, int]:
    """(total, active) weights of Gemma 4 E2B/E4B that one FFN width per layer does not describe.

    Per-layer embeddings: a ``vocab_size_per_layer_input`` x (layers x ``hidden_size_per_layer_input``) table,
    looked up per token (so not active), plus the projection into it and each layer's gate and projection
    back. With ``use_double_wide_mlp`` the KV-shared layers' gated FFN is twice ``intermediate_size`` wide.
    """
    cfg = text_config(cfg)
    width = integer(cfg, "hidden_size_per_layer_input", default=0) or 0
    vocab = integer(cfg, "vocab_size_per_layer_input", "vocab_size", default=0) or 0
    projections = hidden * layers * width + layers * 2 * hidden * width
    table = vocab * layers * width
    wide = 0
    if cfg.get("use_double_wide_mlp"):
        shared = integer(cfg, "num_kv_shared_layers", default=0) or 0
        wide = shared * 3 * hidden * (integer(cfg, "intermediate_size", default=0) or 0)
    return table + projections + wide, projections + wide


def nemotron_h_blocks(cfg: dict[str, Any]) -> list[str]:
    """Nemotron-H block kinds in order: "mamba", "attention", "moe" or "mlp"."""
    named = cfg.get("layers_block_type")
    if isinstance(named, list) and named:
        blocks = [str(b) for b in named]
    else:
        pattern = cfg.get("hybrid_override_pattern")
        if not isinstance(pattern, str) or not pattern:
            raise GeometryError("hybrid_override_pattern or layers_block_type is missing")
        blocks = [NEMOTRON_H_BLOCKS.get(c, c) for c in pattern]
    unknown = sorted(set(blocks) - set(NEMOTRON_H_BLOCKS.values()))
    if unknown:
        raise GeometryError(f"Nemotron-H block {unknown[0][:20]!r} is not mamba, attention, moe or mlp")
    return blocks


def mamba_dims(cfg: dict[str, Any]) -> tuple[int, int, int, int, int]:
    """(heads, head_dim, state_size, groups, conv_kernel) of a Mamba2 mixer.

    Nemotron-H names them ``mamba_num_heads``, ``mamba_head_dim``, ``ssm_state_size``, ``n_groups``,
    ``conv_kernel``; Granite 4.0-H ``mamba_n_heads``, ``mamba_d_head`` (or "auto": expand x hidden / heads),
    ``mamba_d_state``, ``mamba_n_groups``, ``mamba_d_conv``.
    """
    heads = integer(cfg, "mamba_num_heads", "mamba_n_heads", default=0) or 0
    head_dim = cfg.get("mamba_head_dim", cfg.get("mamba_d_head"))
    if not isinstance(head_dim, int) and heads:  # Granite's "auto"
        expand = integer(cfg, "mamba_expand", default=2) or 2
        head_dim = expand * (integer(cfg, "hidden_size", default=0) or 0) // heads
    head_dim = head_dim if isinstance(head_dim, int) and not isinstance(head_dim, bool) else 0
    state = integer(cfg, "ssm_state_size", "mamba_d_state", default=0) or 0
    if not (heads and head_dim and state) or max(heads, head_dim, state) > 1 << 14:
        raise GeometryError("mamba_num_heads, mamba_head_dim or ssm_state_size is missing or out of range")
    groups = integer(cfg, "n_groups", "mamba_n_groups", default=1) or 1
    kernel = integer(cfg, "conv_kernel", "mamba_d_conv", default=4) or 4
    return heads, head_dim, state, groups, kernel


def mamba2_params(cfg: dict[str, Any], hidden: int) -> int:
    """Weights of one Mamba2 mixer: in_proj to x, z, B, C and dt; the conv; A, D, dt bias; norm; out_proj."""
    heads, head_dim, state, groups, kernel = mamba_dims(cfg)
    inner, bc = heads * head_dim, 2 * groups * state
    return hidden * (2 * inner + bc + heads) + (inner + bc) * kernel + inner * hidden + 3 * heads + inner


def nas_blocks(cfg: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = cfg.get("block_configs")
    if not isinstance(blocks, list) or not blocks or not all(isinstance(b, dict) for b in blocks):
        raise GeometryError("block_configs is missing")
    return blocks


def nas_attention(block: dict[str, Any]) -> int | None:
    """Query heads per KV head of a Nemotron-NAS block, or None when the block has no attention."""
    attention = block.get("attention") or {}
    if attention.get("no_op") or attention.get("replace_with_linear"):
        return None
    return integer(attention, "n_heads_in_group")


def nas_ffn_width(block: dict[str, Any], hidden: int) -> int | None:
    """SwiGLU width of a Nemotron-NAS block (transformers: 2/3 x ffn_mult x hidden, up to a multiple of 256)."""
    ffn = block.get("ffn") or {}
    if ffn.get("no_op") or ffn.get("replace_with_linear"):
        return None
    mult = ffn.get("ffn_mult")
    if isinstance(mult, bool) or not isinstance(mult, int | float) or not 0 < mult < 1000:
        raise GeometryError(f"block_configs ffn_mult must be a positive number, got {mult!r:.20}")
    return -(-int(2 * mult * hidden / 3) // 256) * 256


def block_mix(cfg: dict[str, Any], kind: str) -> dict[str, Any]:
    """Layer counts, state and FFN fields of a per-block config (``kind`` in BLOCK_TYPES)."""
    return _nas_mix(cfg) if kind == NEMOTRON_NAS else _nemotron_h_mix(cfg)


def _nas_mix(cfg: dict[str, Any]) -> dict[str, Any]:
    blocks = nas_blocks(cfg)
    groups = {g for b in blocks if (g := nas_attention(b)) is not None}
    if len(groups) > 1 or 0 in groups:
        raise GeometryError("Nemotron-NAS blocks with different KV group sizes are not modelled")
    heads = integer(cfg, "num_attention_heads") or 1
    return {
        "n_layers": len(blocks),
        "n_kv_heads": heads // min(groups) if groups else 0,
        "n_full_attention_layers": sum(1 for b in blocks if nas_attention(b)),
    }


def _nemotron_h_mix(cfg: dict[str, Any]) -> dict[str, Any]:
    blocks = nemotron_h_blocks(cfg)
    out: dict[str, Any] = {
        "n_layers": len(blocks),
        "n_full_attention_layers": blocks.count("attention"),
        "n_linear_layers": blocks.count("mamba"),
        "linear_state_bytes": mamba_state_bytes(cfg) if "mamba" in blocks else 0,
        "gated_ffn": False,
        "intermediate_size": integer(cfg, "intermediate_size") if "mlp" in blocks else None,
    }
    if "moe" in blocks:
        shared = integer(cfg, "n_shared_experts", default=0) or 0
        out |= {
            "n_experts": integer(cfg, "n_routed_experts"),
            "experts_per_token": integer(cfg, "num_experts_per_tok"),
            "moe_intermediate_size": integer(cfg, "moe_intermediate_size"),
            "n_shared_experts": shared,
            "shared_expert_intermediate_size": integer(cfg, "moe_shared_expert_intermediate_size") if shared else None,
        }
    return out


def mamba_state_bytes(cfg: dict[str, Any]) -> int:
    """Mamba2 state per block and sequence: SSM heads x head_dim x state plus the conv window over x, B and C."""
    heads, head_dim, state, groups, kernel = mamba_dims(cfg)
    inner = heads * head_dim
    return (inner * state + (kernel - 1) * (inner + 2 * groups * state)) * MAMBA_STATE_BYTES


def linear_state_bytes(cfg: dict[str, Any]) -> int:
    """Gated DeltaNet recurrent state (fp32) plus its short convolution, per layer and sequence."""
    v_heads = integer(cfg, "linear_num_value_heads", default=32) or 32
    k_heads = integer(cfg, "linear_num_key_heads", default=16) or 16
    k_dim = integer(cfg, "linear_key_head_dim", default=128) or 128
    v_dim = integer(cfg, "linear_value_head_dim", default=128) or 128
    kernel = integer(cfg, "linear_conv_kernel_dim", default=4) or 4
    conv_dim = 2 * k_heads * k_dim + v_heads * v_dim
    return v_heads * k_dim * v_dim * 4 + (kernel - 1) * conv_dim * 4


def linear_attention_params(cfg: dict[str, Any], hidden: int) -> int:
    """Weights of one Gated DeltaNet block: q/k/v/z and b/a projections in, the output projection out."""
    cfg = text_config(cfg)
    v_heads = integer(cfg, "linear_num_value_heads", default=32) or 32
    k_heads = integer(cfg, "linear_num_key_heads", default=16) or 16
    k_dim = integer(cfg, "linear_key_head_dim", default=128) or 128
    v_dim = integer(cfg, "linear_value_head_dim", default=128) or 128
    qkvz = 2 * k_heads * k_dim + 2 * v_heads * v_dim
    return hidden * (qkvz + 2 * v_heads) + v_heads * v_dim * hidden


def native_dtype(cfg: dict[str, Any]) -> str:
    quant = cfg.get("quantization_config") or {}
    method = str(quant.get("quant_method", "")).lower() if isinstance(quant, dict) else ""
    if method in ("fp8", "mxfp4"):
        return method
    if method == "compressed-tensors" and "mxfp4" in str(quant.get("format", "")).lower():  # Kimi K3
        return "mxfp4"
    if method == "compressed-tensors" and _float8(quant):  # Laguna FP8: "float-quantized", 8-bit float weights
        return "fp8"
    if method in ("awq", "gptq", "compressed-tensors", "bitsandbytes"):
        return "int4"
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16")
    return {"float16": "fp16", "float32": "fp32"}.get(dtype, "bf16")


def _float8(quant: dict[str, Any]) -> bool:
    """A compressed-tensors config whose weight groups are all 8-bit floats."""
    groups = quant.get("config_groups")
    weights = [g.get("weights") for g in groups.values() if isinstance(g, dict)] if isinstance(groups, dict) else []
    return bool(weights) and all(
        isinstance(w, dict) and w.get("type") == "float" and w.get("num_bits") == 8 for w in weights
    )

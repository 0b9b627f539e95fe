"""Maps a Hugging Face ``config.json`` (a dict) to the ``ModelSpec`` the estimator uses.

Used for local config files and folders and for live Hub look-ups. Architectures whose KV cache
we cannot size honestly raise ``UnsupportedArchitecture`` instead of guessing.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.models import AttentionKind, ModelSpec, Provenance


class ConfigError(ValueError):
    """The config is malformed or out of sane bounds; the message says which field."""


class UnsupportedArchitecture(ConfigError):
    """A valid config for an architecture the memory model does not cover yet."""

    def __init__(self, message: str, arch: str = "") -> None:
        super().__init__(message)
        self.arch = arch


class _Bounds(BaseModel):
    """Sane ranges for the raw config keys, checked before any arithmetic touches them.

    A hub config is untrusted input: 10**12 layers or -4 heads must fail here, by the config's
    own key name, rather than deep inside the parameter count or as a ModelSpec field name.
    """

    model_config = ConfigDict(extra="ignore")

    num_hidden_layers: int | None = Field(default=None, gt=0, le=1000)
    n_layer: int | None = Field(default=None, gt=0, le=1000)
    num_layers: int | None = Field(default=None, gt=0, le=1000)
    hidden_size: int | None = Field(default=None, gt=0, le=1 << 17)
    n_embd: int | None = Field(default=None, gt=0, le=1 << 17)
    d_model: int | None = Field(default=None, gt=0, le=1 << 17)
    num_attention_heads: int | None = Field(default=None, gt=0, le=4096)
    n_head: int | None = Field(default=None, gt=0, le=4096)
    num_key_value_heads: int | None = Field(default=None, ge=0, le=4096)
    head_dim: int | None = Field(default=None, gt=0, le=4096)
    vocab_size: int | None = Field(default=None, gt=0, le=1 << 22)
    intermediate_size: int | None = Field(default=None, gt=0, le=1 << 20)
    moe_intermediate_size: int | None = Field(default=None, gt=0, le=1 << 20)
    num_local_experts: int | None = Field(default=None, gt=0, le=1 << 14)
    num_experts: int | None = Field(default=None, gt=0, le=1 << 14)
    n_routed_experts: int | None = Field(default=None, gt=0, le=1 << 14)
    num_experts_per_tok: int | None = Field(default=None, gt=0, le=1 << 14)
    n_shared_experts: int | None = Field(default=None, ge=0, le=1 << 10)
    first_k_dense_replace: int | None = Field(default=None, ge=0, le=1000)
    kv_lora_rank: int | None = Field(default=None, gt=0, le=1 << 16)
    qk_rope_head_dim: int | None = Field(default=None, ge=0, le=4096)
    qk_nope_head_dim: int | None = Field(default=None, ge=0, le=4096)
    v_head_dim: int | None = Field(default=None, gt=0, le=4096)
    max_position_embeddings: int | None = Field(default=None, gt=0, le=1 << 25)
    sliding_window_pattern: int | None = Field(default=None, gt=0, le=1000)
    full_attention_interval: int | None = Field(default=None, gt=0, le=1000)


def check_bounds(cfg: dict[str, Any], source: str = "config.json") -> None:
    """Raise ``ConfigError`` naming the first config key that is not a sane integer."""
    try:
        _Bounds.model_validate(cfg)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "config"
        got = first.get("input")
        shown = repr(got) if len(repr(got)) <= 40 else repr(got)[:37] + "..."
        raise ConfigError(f"{source} is out of bounds at {key}: {first['msg']} (got {shown})") from None


# Families whose attention is plain GQA/MHA with the standard config keys.
_GQA_TYPES = {
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3_text",
    "phi3",
    "phi",
    "glm",
    "glm4",
    "glm4_moe",
    "gpt_oss",
    "olmo",
    "olmo2",
    "cohere",
    "cohere2",
    "granite",
    "granitemoe",
    "minimax_m2",
    "ernie4_5",
    "ernie4_5_moe",
    "hunyuan_v1_moe",
    "exaone",
    "starcoder2",
    "internlm2",
    "smollm3",
    "llama4_text",
    "seed_oss",
    "apertus",
    "dots1",
    "arcee",
    "hunyuan_v1_dense",
}
_MLA_TYPES = {"deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "glm_moe_dsa"}
_HYBRID_TYPES = {"qwen3_next", "qwen3_5", "qwen3_5_moe"}


def _first(cfg: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for key in keys:
        if cfg.get(key) is not None:
            return cfg[key]
    return default


def _int(cfg: dict[str, Any], *keys: str, default: int | None = None) -> int | None:
    value = _first(cfg, *keys, default=default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ConfigError(f"{keys[0]} must be an integer, got {value!r}")
    return int(value)


def text_config(config: dict[str, Any]) -> dict[str, Any]:
    """Multimodal configs nest the language model under ``text_config`` (or ``llm_config``)."""
    for key in ("text_config", "llm_config", "language_config"):
        inner = config.get(key)
        if isinstance(inner, dict) and inner.get("num_hidden_layers"):
            merged = {k: v for k, v in config.items() if k != key}
            merged.update(inner)
            merged.setdefault("architectures", config.get("architectures"))
            return merged
    return config


def count_params(
    cfg: dict[str, Any], hidden: int, layers: int, heads: int, kv_heads: int, head_dim: int, vocab: int, tied: bool
) -> tuple[int, int]:
    """Total and active parameters from the config dims (when the checkpoint does not say)."""
    attn = hidden * head_dim * (heads + 2 * kv_heads) + heads * head_dim * hidden
    inter = _int(cfg, "intermediate_size", default=4 * hidden) or 4 * hidden
    dense_ffn = 3 * hidden * inter
    experts = _int(cfg, "num_local_experts", "num_experts", "n_routed_experts") or 0
    per_tok = _int(cfg, "num_experts_per_tok", "num_experts_per_token", "moe_topk") or 0
    moe_inter = _int(cfg, "moe_intermediate_size", default=inter) or inter
    shared = _int(cfg, "n_shared_experts", "num_shared_experts", default=0) or 0
    dense_layers = _int(cfg, "first_k_dense_replace", default=0) or 0
    embed = vocab * hidden * (1 if tied else 2)
    if experts:
        moe_layers = layers - dense_layers
        routed = moe_layers * experts * 3 * hidden * moe_inter
        common = layers * attn + dense_layers * dense_ffn + moe_layers * shared * 3 * hidden * moe_inter
        total = embed + common + routed
        active = embed + common + moe_layers * per_tok * 3 * hidden * moe_inter
        return total, active
    total = embed + layers * (attn + dense_ffn)
    return total, total


def spec_from_config(
    config: dict[str, Any],
    model_id: str,
    provenance: Provenance,
    total_params: int | None = None,
    name: str | None = None,
) -> ModelSpec:
    """Build a ``ModelSpec`` from a config.json dict; raise ``ConfigError`` with a clear reason.

    A config is untrusted input: a value of the wrong type or NaN/infinity anywhere becomes a
    ``ConfigError`` naming the problem, never a TypeError that surfaces as "internal error".
    """
    try:
        spec = _spec_from_config(config, model_id, provenance, total_params, name)
    except ConfigError:
        raise
    except (TypeError, KeyError, IndexError, AttributeError, ValueError, OverflowError) as exc:
        raise ConfigError(f"config.json has a value of the wrong type or range ({exc.__class__.__name__})") from None
    if not _all_finite(spec.model_dump()):
        raise ConfigError("config.json has a value that is not a finite number (NaN or infinity)")
    return spec


def _all_finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_all_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_all_finite(v) for v in value)
    return True


def _spec_from_config(
    config: dict[str, Any],
    model_id: str,
    provenance: Provenance,
    total_params: int | None = None,
    name: str | None = None,
) -> ModelSpec:
    if not isinstance(config, dict):
        raise ConfigError("config.json must be a JSON object")
    cfg = text_config(config)
    check_bounds(cfg)
    model_type = str(cfg.get("model_type") or "").lower()
    if model_type not in _GQA_TYPES | _MLA_TYPES | _HYBRID_TYPES:
        archs = cfg.get("architectures")
        arch = str(archs[0]) if isinstance(archs, list) and archs else model_type or "unknown"
        raise UnsupportedArchitecture(f"can't estimate the {arch} architecture yet", arch=arch)
    layers = _int(cfg, "num_hidden_layers", "n_layer", "num_layers")
    hidden = _int(cfg, "hidden_size", "n_embd", "d_model")
    heads = _int(cfg, "num_attention_heads", "n_head")
    vocab = _int(cfg, "vocab_size")
    if not (layers and hidden and heads and vocab):
        raise ConfigError("config.json lacks num_hidden_layers, hidden_size, num_attention_heads or vocab_size")
    kv_heads = _int(cfg, "num_key_value_heads", "multi_query_group_num", default=heads) or heads
    head_dim = _int(cfg, "head_dim") or (hidden // heads if heads else 0)
    tied = bool(cfg.get("tie_word_embeddings", False))
    fields: dict[str, Any] = {}
    if model_type in _MLA_TYPES:
        fields.update(
            attention=AttentionKind.MLA,
            kv_lora_rank=_int(cfg, "kv_lora_rank"),
            qk_rope_head_dim=_int(cfg, "qk_rope_head_dim", default=64),
        )
        head_dim = (_int(cfg, "qk_nope_head_dim", default=128) or 128) + (fields["qk_rope_head_dim"] or 0)
        fields["v_head_dim"] = _int(cfg, "v_head_dim")
    fields.update(_layer_mix(cfg, layers))
    experts = _int(cfg, "num_local_experts", "num_experts", "n_routed_experts")
    total, active = count_params(cfg, hidden, layers, heads, kv_heads, head_dim, vocab, tied)
    if total_params and total > 0:
        active = round(active * total_params / total)
        total = total_params
    max_ctx = _int(cfg, "max_position_embeddings", "n_positions", "seq_length", default=4096) or 4096
    try:
        return ModelSpec(
            id=model_id,
            name=name or model_id.split("/")[-1],
            family=model_type,
            hf_repo=model_id if "/" in model_id else None,
            architecture=(cfg.get("architectures") or [""])[0],
            total_params=total,
            active_params=active,
            n_layers=layers,
            hidden_size=hidden,
            n_heads=heads,
            n_kv_heads=kv_heads,
            head_dim=head_dim,
            n_experts=experts if experts and experts > 1 else None,
            experts_per_token=_int(cfg, "num_experts_per_tok", "num_experts_per_token", "moe_topk")
            if experts
            else None,
            n_shared_experts=_int(cfg, "n_shared_experts", "num_shared_experts", default=0) or 0,
            moe_intermediate_size=_int(cfg, "moe_intermediate_size") if experts else None,
            vocab_size=vocab,
            max_context=max_ctx,
            tied_embeddings=tied,
            native_dtype=_dtype(cfg),  # type: ignore[arg-type]  # _dtype returns one of the allowed literals
            provenance=provenance,
            **fields,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "config"
        raise ConfigError(f"config.json is out of bounds at {where}: {first['msg']}") from None


def _layer_mix(cfg: dict[str, Any], layers: int) -> dict[str, Any]:
    """Full-attention, sliding-window and linear-attention layer counts."""
    window = _int(cfg, "sliding_window", "attention_chunk_size")
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(types) == layers:
        sliding = sum(1 for t in types if "sliding" in str(t) or "chunked" in str(t))
        linear = sum(1 for t in types if "linear" in str(t) or "mamba" in str(t))
        return {
            "n_sliding_layers": sliding if window else 0,
            "n_linear_layers": linear,
            "sliding_window": window if sliding else None,
            "linear_state_bytes": _linear_state(cfg) if linear else 0,
        }
    interval = _int(cfg, "full_attention_interval")
    if interval:
        full = layers // interval
        return {"n_linear_layers": layers - full, "linear_state_bytes": _linear_state(cfg)}
    pattern = _int(cfg, "sliding_window_pattern")
    if window and pattern and cfg.get("use_sliding_window", True) is not False:
        full = layers // pattern
        return {"n_sliding_layers": layers - full, "sliding_window": window}
    if window and str(cfg.get("model_type")) == "gemma2":
        return {"n_sliding_layers": layers // 2, "sliding_window": window}
    return {}


def _linear_state(cfg: dict[str, Any]) -> int:
    """Gated DeltaNet recurrent state (fp32) plus its short convolution, per layer and sequence."""
    v_heads = _int(cfg, "linear_num_value_heads", default=32) or 32
    k_heads = _int(cfg, "linear_num_key_heads", default=16) or 16
    k_dim = _int(cfg, "linear_key_head_dim", default=128) or 128
    v_dim = _int(cfg, "linear_value_head_dim", default=128) or 128
    kernel = _int(cfg, "linear_conv_kernel_dim", default=4) or 4
    conv_dim = 2 * k_heads * k_dim + v_heads * v_dim
    return v_heads * k_dim * v_dim * 4 + (kernel - 1) * conv_dim * 4


def _dtype(cfg: dict[str, Any]) -> str:
    quant = cfg.get("quantization_config") or {}
    method = str(quant.get("quant_method", "")).lower() if isinstance(quant, dict) else ""
    if method in ("fp8", "mxfp4"):
        return method
    if method in ("awq", "gptq", "compressed-tensors", "bitsandbytes"):
        return "int4"
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16")
    return {"float16": "fp16", "float32": "fp32"}.get(dtype, "bf16")


# llama.cpp architecture names (general.architecture) -> the HF model_type spec_from_config knows.
# Hybrid linear-attention GGUFs (qwen3next, ...) are left out: their state sizes are not in this mapping.
GGUF_MODEL_TYPES = {
    "llama": "llama",
    "llama4": "llama4_text",
    "qwen2": "qwen2",
    "qwen2moe": "qwen2_moe",
    "qwen3": "qwen3",
    "qwen3moe": "qwen3_moe",
    "gemma": "gemma",
    "gemma2": "gemma2",
    "gemma3": "gemma3_text",
    "phi3": "phi3",
    "phi2": "phi",
    "glm4": "glm4",
    "glm4moe": "glm4_moe",
    "gpt-oss": "gpt_oss",
    "olmo": "olmo",
    "olmo2": "olmo2",
    "command-r": "cohere",
    "cohere2": "cohere2",
    "granite": "granite",
    "granitemoe": "granitemoe",
    "exaone": "exaone",
    "starcoder2": "starcoder2",
    "internlm2": "internlm2",
    "smollm3": "smollm3",
    "seed_oss": "seed_oss",
    "apertus": "apertus",
    "dots1": "dots1",
    "arcee": "arcee",
    "hunyuan-moe": "hunyuan_v1_moe",
    "hunyuan-dense": "hunyuan_v1_dense",
    "ernie4_5": "ernie4_5",
    "ernie4_5-moe": "ernie4_5_moe",
    "deepseek2": "deepseek_v3",
    "minimax-m2": "minimax_m2",
}

# GGUF key (after the "{arch}." prefix) -> config.json key.
_GGUF_KEYS = {
    "block_count": "num_hidden_layers",
    "embedding_length": "hidden_size",
    "attention.head_count": "num_attention_heads",
    "attention.head_count_kv": "num_key_value_heads",
    "feed_forward_length": "intermediate_size",
    "context_length": "max_position_embeddings",
    "expert_count": "num_experts",
    "expert_used_count": "num_experts_per_tok",
    "expert_shared_count": "n_shared_experts",
    "expert_feed_forward_length": "moe_intermediate_size",
    "leading_dense_block_count": "first_k_dense_replace",
    "vocab_size": "vocab_size",
    "attention.sliding_window": "sliding_window",
    "attention.kv_lora_rank": "kv_lora_rank",
}


def config_from_gguf(meta: dict[str, Any]) -> dict[str, Any]:
    """A config.json-shaped dict from GGUF header metadata, for ``spec_from_config``.

    ``meta`` maps GGUF keys to values; arrays may be given by their length only (an int under
    ``"<key>#len"``), which is how a ranged header read reports the tokenizer it did not download.
    """
    arch = meta.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise ConfigError("GGUF header has no general.architecture")
    model_type = GGUF_MODEL_TYPES.get(arch)
    if model_type is None:
        raise UnsupportedArchitecture(f"can't estimate the {arch} architecture yet", arch=arch)

    def get(key: str) -> Any:
        value = meta.get(f"{arch}.{key}")
        if isinstance(value, list):  # per-layer values (variable GQA, per-layer FFN widths)
            numbers = [v for v in value if isinstance(v, int) and not isinstance(v, bool)]
            return max(numbers) if numbers else None
        return value

    cfg: dict[str, Any] = {"model_type": model_type, "architectures": [arch]}
    for gguf_key, cfg_key in _GGUF_KEYS.items():
        value = get(gguf_key)
        if value is not None:
            cfg[cfg_key] = value
    if "vocab_size" not in cfg:
        tokens = meta.get("tokenizer.ggml.tokens#len")
        cfg["vocab_size"] = tokens if isinstance(tokens, int) and tokens > 0 else None
    key_length, rope = get("attention.key_length"), get("rope.dimension_count")
    if model_type in _MLA_TYPES:
        key_mla = get("attention.key_length_mla") or key_length
        cfg["qk_rope_head_dim"] = rope if rope is not None else 64
        if isinstance(key_mla, int):
            cfg["qk_nope_head_dim"] = key_mla - cfg["qk_rope_head_dim"]
        cfg["v_head_dim"] = get("attention.value_length_mla") or get("attention.value_length")
    elif key_length:
        cfg["head_dim"] = key_length
    pattern = get("attention.sliding_window_pattern")
    if isinstance(pattern, int) and pattern > 1:
        cfg["sliding_window_pattern"] = pattern
    elif arch == "gemma3" and cfg.get("sliding_window"):
        cfg["sliding_window_pattern"] = 6  # llama.cpp hard-codes 5 local : 1 global for gemma3
    return cfg


REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


MAX_CONFIG_BYTES = 2 << 20  # a real config.json is a few KiB; the hub look-ups use the same cap


def read_config_file(path: Path, max_bytes: int = MAX_CONFIG_BYTES) -> dict[str, Any]:
    """A local config.json as a dict, read with a size cap (never the whole of a 2 GB file)."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise ConfigError(f"{path.name} cannot be read ({exc.__class__.__name__})") from None
    if len(raw) > max_bytes:
        raise ConfigError(f"{path.name} is larger than {max_bytes} bytes; that is not a config.json")
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise ConfigError(f"{path.name} is not valid JSON") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{path.name} is not a JSON object")
    return value

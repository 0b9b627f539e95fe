"""Maps a Hugging Face ``config.json`` (a dict) to the ``ModelSpec`` the estimator uses.

Used for local config files and folders and for live Hub look-ups. Architectures whose KV cache
we cannot size honestly raise ``UnsupportedArchitecture`` instead of guessing.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from catalog.model_files.geometry import MLA_TYPES, geometry, model_type, text_config
from catalog.model_files.layers import LAYOUTS, READABLE_TYPES, per_layer_scalars
from catalog.model_files.params import config_params, routed_expert_params
from catalog.model_files.values import GeometryError
from core.models import ModelSpec, Provenance


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
    num_local_experts: int | None = Field(default=None, ge=0, le=1 << 14)  # 0: Granite 4.0-H Micro (dense)
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
    sliding_window_pattern: Annotated[int, Field(gt=0, le=1000)] | str | None = None  # EXAONE 4: "LLLG"
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
    check_consistency(cfg, source)


# (part, whole): a config whose part exceeds its whole describes no model that can exist
_AT_MOST = (
    (("num_experts_per_tok",), ("num_local_experts", "num_experts", "n_routed_experts")),
    (("num_key_value_heads",), ("num_attention_heads", "n_head")),
    (("first_k_dense_replace",), ("num_hidden_layers", "n_layer", "num_layers")),
)


def check_consistency(cfg: dict[str, Any], source: str = "config.json") -> None:
    """Raise ``ConfigError`` for values that are each in bounds but impossible together (more experts
    used per token than exist, more KV heads than attention heads, more dense layers than layers)."""
    for part_keys, whole_keys in _AT_MOST:
        part = next((cfg[k] for k in part_keys if isinstance(cfg.get(k), int)), None)
        whole_key = next((k for k in whole_keys if isinstance(cfg.get(k), int) and cfg[k] > 0), None)
        if part is not None and whole_key is not None and part > cfg[whole_key]:
            raise ConfigError(
                f"{source} is impossible: {part_keys[0]} = {part} is more than {whole_key} = {cfg[whole_key]}"
            )


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
    ``total_params`` (the checkpoint's own count) wins over the count the architecture implies;
    the active count is scaled with it.
    """
    try:
        spec = _spec_from_config(config, model_id, provenance, total_params, name)
    except ConfigError:
        raise
    except GeometryError as exc:
        raise ConfigError(str(exc)) from None
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


def checked_geometry(config: dict[str, Any]) -> dict[str, Any]:
    """``config_geometry.geometry`` after the bounds and architecture checks (``ConfigError`` otherwise), with the
    routed experts' weights (``expert_params``) a MoE config implies."""
    if not isinstance(config, dict):
        raise ConfigError("config.json must be a JSON object")
    config = per_layer_scalars(config)  # Hunyuan: one value per layer -> one value
    cfg = text_config(config)
    check_bounds(cfg)
    kind = model_type(cfg)
    if kind not in READABLE_TYPES:
        archs = cfg.get("architectures")
        arch = str(archs[0]) if isinstance(archs, list) and archs else kind or "unknown"
        raise UnsupportedArchitecture(f"can't estimate the {arch} architecture yet", arch=arch)
    fields = geometry(config, layout=LAYOUTS.get(kind))
    experts = routed_expert_params(config, fields)
    return fields | {"expert_params": experts} if experts else fields


def _spec_from_config(
    config: dict[str, Any],
    model_id: str,
    provenance: Provenance,
    total_params: int | None = None,
    name: str | None = None,
) -> ModelSpec:
    fields = checked_geometry(config)
    total, active = config_params(config, fields)
    if total_params and total > 0:
        active = round(active * total_params / total)
        total = total_params
    try:
        return ModelSpec(
            id=model_id,
            name=name or model_id.split("/")[-1],
            family=model_type(text_config(config)),
            hf_repo=model_id if "/" in model_id else None,
            total_params=max(total, 1),
            active_params=max(min(active, total), 1),
            provenance=provenance,
            **fields,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "config"
        raise ConfigError(f"config.json is out of bounds at {where}: {first['msg']}") from None


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
    hf_type = GGUF_MODEL_TYPES.get(arch)
    if hf_type is None:
        raise UnsupportedArchitecture(f"can't estimate the {arch} architecture yet", arch=arch)

    def get(key: str) -> Any:
        value = meta.get(f"{arch}.{key}")
        if isinstance(value, list):  # per-layer values (variable GQA, per-layer FFN widths)
            numbers = [v for v in value if isinstance(v, int) and not isinstance(v, bool)]
            return max(numbers) if numbers else None
        return value

    cfg: dict[str, Any] = {"model_type": hf_type, "architectures": [arch]}
    for gguf_key, cfg_key in _GGUF_KEYS.items():
        value = get(gguf_key)
        if value is not None:
            cfg[cfg_key] = value
    if "vocab_size" not in cfg:
        tokens = meta.get("tokenizer.ggml.tokens#len")
        cfg["vocab_size"] = tokens if isinstance(tokens, int) and tokens > 0 else None
    key_length, rope = get("attention.key_length"), get("rope.dimension_count")
    if hf_type in MLA_TYPES:
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

"""Reads a local ``.gguf`` file's header (metadata and tensor shapes, never the weights).

The ``gguf`` package memory-maps the file, so only the header pages are touched. The result is
the same ``ModelSpec`` the catalog holds, plus the measured weight size of that file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from catalog.hf_config import ConfigError
from core.models import AttentionKind, ModelSpec, Provenance, QuantSize

# general.file_type (llama.cpp enum llama_ftype) -> our quant id
FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
    12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K",
    19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL",
    26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 38: "MXFP4",
}


def _value(reader: Any, key: str) -> Any:
    field = reader.fields.get(key)
    if field is None:
        return None
    try:
        return field.contents()
    except (IndexError, ValueError, TypeError):
        return None


def read_gguf(path: Path) -> tuple[ModelSpec, QuantSize, str]:
    """Return the model, its measured size and the quant id named in the header."""
    try:
        from gguf import GGUFReader  # imports numpy: keep it off the start-up path
    except ImportError as exc:  # pragma: no cover - gguf is a dependency
        raise ConfigError("reading .gguf files needs the 'gguf' package") from exc
    try:
        reader = GGUFReader(str(path), "r")
    except (ValueError, OSError, IndexError, KeyError) as exc:
        raise ConfigError(f"{path.name} is not a readable GGUF file ({exc.__class__.__name__})") from None
    arch = _value(reader, "general.architecture")
    if not isinstance(arch, str):
        raise ConfigError(f"{path.name}: GGUF header has no general.architecture")

    def meta(key: str, default: Any = None) -> Any:
        value = _value(reader, f"{arch}.{key}")
        return default if value is None else value

    layers, hidden = meta("block_count"), meta("embedding_length")
    heads = meta("attention.head_count")
    if isinstance(heads, list):  # per-layer head counts (variable GQA models)
        heads = max(heads)
    kv_heads = meta("attention.head_count_kv", heads)
    if isinstance(kv_heads, list):
        kv_heads = max(kv_heads)
    if not (layers and hidden and heads):
        raise ConfigError(f"{path.name}: GGUF header lacks block_count, embedding_length or head_count")
    tokens = _value(reader, "tokenizer.ggml.tokens")
    vocab = meta("vocab_size") or (len(tokens) if isinstance(tokens, list) else None) or 32000
    params = sum(int(t.n_elements) for t in reader.tensors)
    tensor_bytes = sum(int(t.n_bytes) for t in reader.tensors)
    names = {t.name for t in reader.tensors}
    experts = meta("expert_count")
    lora = meta("attention.kv_lora_rank")
    fields: dict[str, Any] = {}
    head_dim = meta("attention.key_length") or hidden // heads
    if lora:
        fields.update(attention=AttentionKind.MLA, kv_lora_rank=lora, qk_rope_head_dim=meta("rope.dimension_count", 64))
    window = meta("attention.sliding_window")
    if window:
        pattern = meta("attention.sliding_window_pattern")
        n_full = layers // pattern if isinstance(pattern, int) and pattern > 1 else layers // 2
        fields.update(sliding_window=window, n_sliding_layers=layers - n_full)
    ftype = FILE_TYPES.get(int(_value(reader, "general.file_type") or -1), "F16")
    name = _value(reader, "general.name") or path.stem
    prov = Provenance(source=f"GGUF header of {path.name}", as_of="local file")
    used = meta("expert_used_count")
    active = params
    if experts and used and experts > 1:
        routed = sum(int(t.n_elements) for t in reader.tensors if "_exps" in t.name)
        active = params - routed + routed * used // experts
    try:
        model = ModelSpec(
            id=path.stem.lower(), name=str(name), family=arch, architecture=arch,
            total_params=params, active_params=active, n_layers=layers, hidden_size=hidden,
            n_heads=heads, n_kv_heads=kv_heads or heads, head_dim=head_dim,
            v_head_dim=meta("attention.value_length") if not lora else None,
            n_experts=experts if experts and experts > 1 else None,
            experts_per_token=used if experts and experts > 1 else None,
            moe_intermediate_size=meta("expert_feed_forward_length"),
            vocab_size=vocab, max_context=meta("context_length", 4096),
            tied_embeddings="output.weight" not in names, provenance=prov, **fields,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"{path.name}: header value out of bounds at {first['loc'][0]}: {first['msg']}") from None
    size = QuantSize(model_id=model.id, quant_id=ftype, size_bytes=tensor_bytes or path.stat().st_size, provenance=prov)
    return model, size, ftype

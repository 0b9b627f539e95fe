"""Reads a local ``.gguf`` file's header (metadata and tensor shapes, never the weights).

The ``gguf`` package memory-maps the file, so only the header pages are touched. The metadata
goes through the same GGUF → config mapping as Hugging Face look-ups (``hf_config.config_from_gguf``),
so a local file and a hub repo give the same ``ModelSpec``; the tensor sizes add the exact
parameter count and the measured weight bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from catalog.hf_config import ConfigError, config_from_gguf, spec_from_config
from core.models import ModelSpec, Provenance, QuantSize

# general.file_type (llama.cpp enum llama_ftype) -> our quant id
FILE_TYPES = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    7: "Q8_0",
    8: "Q5_0",
    9: "Q5_1",
    10: "Q2_K",
    11: "Q3_K_S",
    12: "Q3_K_M",
    13: "Q3_K_L",
    14: "Q4_K_S",
    15: "Q4_K_M",
    16: "Q5_K_S",
    17: "Q5_K_M",
    18: "Q6_K",
    19: "IQ2_XXS",
    20: "IQ2_XS",
    21: "Q2_K_S",
    22: "IQ3_XS",
    23: "IQ3_XXS",
    24: "IQ1_S",
    25: "IQ4_NL",
    26: "IQ3_S",
    27: "IQ3_M",
    28: "IQ2_S",
    29: "IQ2_M",
    30: "IQ4_XS",
    31: "IQ1_M",
    32: "BF16",
    38: "MXFP4",
}


def _metadata(reader: Any) -> dict[str, Any]:
    """GGUF key -> value; arrays of strings are reported by length (``<key>#len``) like a ranged read."""
    meta: dict[str, Any] = {}
    for key, field in reader.fields.items():
        try:
            value = field.contents()
        except (IndexError, ValueError, TypeError):
            continue
        if isinstance(value, list) and value and isinstance(value[0], str):
            meta[f"{key}#len"] = len(value)
        else:
            meta[key] = value
    return meta


def read_gguf(path: Path) -> tuple[ModelSpec, QuantSize, str]:
    """Return the model, its measured size and the quant id named in the header."""
    from gguf import GGUFReader  # imports numpy: keep it off the start-up path

    try:
        reader = GGUFReader(str(path), "r")
    except (ValueError, OSError, IndexError, KeyError) as exc:
        raise ConfigError(f"{path.name} is not a readable GGUF file ({exc.__class__.__name__})") from None
    meta = _metadata(reader)
    file_type = meta.get("general.file_type")
    quant = FILE_TYPES.get(file_type) if isinstance(file_type, int) else None
    if quant is None:
        raise ConfigError(f"{path.name}: unknown GGUF file type {file_type!r}; pass --quant")
    names = {t.name for t in reader.tensors}
    config = config_from_gguf(meta)
    if not config.get("vocab_size"):  # no tokenizer in the header: the embedding has one row per token
        config["vocab_size"] = next((int(t.shape[-1]) for t in reader.tensors if t.name == "token_embd.weight"), None)
    config["tie_word_embeddings"] = "output.weight" not in names
    params = sum(int(t.n_elements) for t in reader.tensors)
    prov = Provenance(source=f"GGUF header of {path.name}", as_of="local file")
    name = meta.get("general.name")
    model = spec_from_config(
        config, path.stem.lower(), prov, total_params=params, name=name if isinstance(name, str) else path.stem
    )
    tensor_bytes = sum(int(t.n_bytes) for t in reader.tensors)
    size = QuantSize(model_id=model.id, quant_id=quant, size_bytes=tensor_bytes or path.stat().st_size, provenance=prov)
    return model, size, quant

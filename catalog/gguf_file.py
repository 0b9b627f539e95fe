"""Reads a local ``.gguf`` file's header (metadata and tensor shapes, never the weights).

The ``gguf`` package memory-maps the file, so only the header pages are touched. The metadata
goes through the same GGUF → config mapping as Hugging Face look-ups (``hf_config.config_from_gguf``),
so a local file and a hub repo give the same ``ModelSpec``; the tensor sizes add the exact
parameter count and the measured weight bytes.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any, BinaryIO

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


# Bounds for an untrusted header, checked before the ``gguf`` package reads it: that reader
# trusts every count and length, so a 68-byte file claiming a 2**60-element array made it allocate
# without end. Real headers: a few hundred keys, vocabularies up to ~300k tokens, ~2k tensors.
MAX_HEADER_BYTES = 256 << 20
MAX_KEYS = 100_000
MAX_TENSORS = 1_000_000
MAX_STRING_BYTES = 1 << 20
MAX_ARRAY_ITEMS = 50_000_000
MAX_DIMS = 8
_SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9


class _Header:
    """Walks a GGUF header with bounded reads, never trusting a length beyond the file or the caps."""

    def __init__(self, fh: BinaryIO, size: int, name: str) -> None:
        self.fh, self.size, self.name = fh, size, name

    def fail(self, why: str) -> ConfigError:
        return ConfigError(f"{self.name} is not a readable GGUF file ({why})")

    def take(self, n: int) -> bytes:
        if n < 0 or self.fh.tell() + n > min(self.size, MAX_HEADER_BYTES):
            raise self.fail(
                "a length points past the end of the file" if self.fh.tell() + n > self.size else "header too large"
            )
        data = self.fh.read(n)
        if len(data) != n:
            raise self.fail("truncated")
        return data

    def skip(self, n: int) -> None:
        if n < 0 or self.fh.tell() + n > min(self.size, MAX_HEADER_BYTES):
            raise self.fail("an array runs past the end of the file")
        self.fh.seek(n, os.SEEK_CUR)

    def u32(self) -> int:
        return int(struct.unpack("<I", self.take(4))[0])

    def u64(self) -> int:
        return int(struct.unpack("<Q", self.take(8))[0])

    def string(self) -> None:
        length = self.u64()
        if length > MAX_STRING_BYTES:
            raise self.fail("a string is longer than 1 MiB")
        self.skip(length)

    def value(self, vtype: int, depth: int = 0) -> None:
        if vtype in _SCALAR_SIZES:
            self.skip(_SCALAR_SIZES[vtype])
        elif vtype == _STRING:
            self.string()
        elif vtype == _ARRAY and depth == 0:
            itype, count = self.u32(), self.u64()
            if count > MAX_ARRAY_ITEMS:
                raise self.fail(f"an array claims {count} items")
            if itype in _SCALAR_SIZES:
                self.skip(count * _SCALAR_SIZES[itype])
            elif itype == _STRING:
                if self.fh.tell() + 8 * count > min(self.size, MAX_HEADER_BYTES):  # each string has an 8-byte length
                    raise self.fail(
                        "header too large"
                        if self.fh.tell() + 8 * count <= self.size
                        else "an array runs past the end of the file"
                    )
                for _ in range(count):
                    self.string()
            else:
                raise self.fail("nested or unknown array type")
        else:
            raise self.fail(f"unknown value type {vtype}")

    def check(self) -> None:
        if self.take(4) != b"GGUF":
            raise self.fail("bad magic")
        if self.u32() not in (2, 3):
            raise self.fail("unsupported version")
        n_tensors, n_kv = self.u64(), self.u64()
        if n_tensors > MAX_TENSORS or n_kv > MAX_KEYS:
            raise self.fail("absurd tensor or key count")
        for _ in range(n_kv):
            self.string()
            self.value(self.u32())
        for _ in range(n_tensors):
            self.string()
            dims = self.u32()
            if dims > MAX_DIMS:
                raise self.fail("a tensor has too many dimensions")
            if any(self.u64() > 1 << 40 for _ in range(dims)):
                raise self.fail("a tensor dimension is absurd")
            self.skip(4 + 8)  # type, offset


def check_gguf_header(path: Path) -> None:
    """Raise ``ConfigError`` unless the header's counts and lengths are within the file and sane bounds."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            _Header(fh, size, path.name).check()
    except OSError as exc:
        raise ConfigError(f"{path.name} cannot be read ({exc.__class__.__name__})") from None


def read_gguf(path: Path) -> tuple[ModelSpec, QuantSize, str]:
    """Return the model, its measured size and the quant id named in the header."""
    check_gguf_header(path)  # before the gguf package, which trusts every count
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

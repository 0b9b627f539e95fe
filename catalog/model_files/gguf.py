"""The one GGUF header reader: metadata and tensor shapes, never the weights.

``parse_gguf_prefix`` reads the metadata from the first bytes of a file; Hugging Face look-ups
give it one ranged read, ``read_gguf`` the header of a local file after ``_Header`` has walked it
with bounded reads (every count and length checked against the file and sane caps) and collected
the tensor table. Both go through the same GGUF → config mapping (``hf_config.config_from_gguf``),
so a local file and a hub repo give the same ``ModelSpec``; a local file's tensor table adds the
exact parameter count and the measured weight bytes.
"""

from __future__ import annotations

import math
import os
import struct
from pathlib import Path
from typing import Any, BinaryIO

from catalog.model_files.config import ConfigError, config_from_gguf, spec_from_config
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


# Bounds for an untrusted header: a 68-byte file claiming a 2**60-element array must not make
# anything allocate without end. Real headers: a few hundred keys, vocabularies up to ~300k tokens, ~2k tensors.
MAX_HEADER_BYTES = 256 << 20
MAX_KEYS = 100_000
MAX_TENSORS = 1_000_000
MAX_STRING_BYTES = 1 << 20
MAX_ARRAY_ITEMS = 50_000_000
MAX_DIMS = 8
_SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_PREFIX_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
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

    def text(self) -> str:
        length = self.u64()
        if length > MAX_STRING_BYTES:
            raise self.fail("a string is longer than 1 MiB")
        return self.take(length).decode("utf-8", errors="replace")

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

    def check(self) -> list[tuple[str, tuple[int, ...], int]]:
        """Walks the whole header; returns the tensor table as (name, shape, ggml type)."""
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
        tensors = []
        for _ in range(n_tensors):
            name = self.text()
            dims = self.u32()
            if dims > MAX_DIMS:
                raise self.fail("a tensor has too many dimensions")
            shape = tuple(self.u64() for _ in range(dims))
            if any(d > 1 << 40 for d in shape):
                raise self.fail("a tensor dimension is absurd")
            ggml_type = self.u32()
            self.skip(8)  # offset
            tensors.append((name, shape, ggml_type))
        return tensors


def check_gguf_header(path: Path) -> list[tuple[str, tuple[int, ...], int]]:
    """Raise ``ConfigError`` unless the header's counts and lengths are within the file and sane bounds;
    return the tensor table."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            header = _Header(fh, size, path.name)
            tensors = header.check()
            length = fh.tell()
    except OSError as exc:
        raise ConfigError(f"{path.name} cannot be read ({exc.__class__.__name__})") from None
    return tensors if length else []


def read_gguf(path: Path) -> tuple[ModelSpec, QuantSize, str]:
    """Return the model, its measured size and the quant id named in the header."""
    tensors = check_gguf_header(path)
    with path.open("rb") as fh:
        meta = parse_gguf_prefix(fh.read(MAX_HEADER_BYTES))
    file_type = meta.get("general.file_type")
    quant = FILE_TYPES.get(file_type) if isinstance(file_type, int) else None
    if quant is None:
        raise ConfigError(f"{path.name}: unknown GGUF file type {file_type!r}; pass --quant")
    config = config_from_gguf(meta)
    embedding = next((shape for name, shape, _ in tensors if name == "token_embd.weight"), ())
    if not config.get("vocab_size") and embedding:  # no tokenizer in the header: one embedding row per token
        config["vocab_size"] = int(embedding[-1])
    config["tie_word_embeddings"] = "output.weight" not in {name for name, _, _ in tensors}
    params = sum(math.prod(shape) for _, shape, _ in tensors)
    prov = Provenance(source=f"GGUF header of {path.name}", as_of="local file")
    name = meta.get("general.name")
    model = spec_from_config(
        config, path.stem.lower(), prov, total_params=params, name=name if isinstance(name, str) else path.stem
    )
    size = QuantSize(
        model_id=model.id, quant_id=quant, size_bytes=_tensor_bytes(tensors) or path.stat().st_size, provenance=prov
    )
    return model, size, quant


def _tensor_bytes(tensors: list[tuple[str, tuple[int, ...], int]]) -> int:
    """Bytes of the weights as stored: elements / block size x bytes per block, per ggml type."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType  # tables only, no numpy

    total = 0
    for _, shape, ggml_type in tensors:
        try:
            block, size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
        except ValueError:
            return 0  # a type this gguf version does not know: fall back to the file size
        total += math.prod(shape) // block * size
    return total


class _Truncated(Exception):
    """The prefix ends inside this key/value pair."""


def _read(fmt: str, data: bytes, pos: int) -> tuple[Any, int]:
    size = struct.calcsize("<" + fmt)
    if pos + size > len(data):
        raise _Truncated
    return struct.unpack_from("<" + fmt, data, pos)[0], pos + size


def _read_string(data: bytes, pos: int) -> tuple[str, int]:
    length, pos = _read("Q", data, pos)
    if pos + length > len(data):
        raise _Truncated
    return data[pos : pos + length].decode("utf-8", errors="replace"), pos + length


def parse_gguf_prefix(data: bytes) -> dict[str, Any]:
    """Metadata readable from the first bytes of a GGUF file (spec: ggml/docs/gguf.md, v2 and v3).

    Scalars and strings come back as values. Every array also reports its length under
    ``"<key>#len"``; numeric arrays of at most 4096 items are returned as lists, string arrays
    are skipped. Parsing stops quietly where the prefix ends.
    """
    if data[:4] != b"GGUF" or len(data) < 24:
        raise ConfigError("not a GGUF file (bad magic)")
    version, n_kv = struct.unpack_from("<I", data, 4)[0], struct.unpack_from("<Q", data, 16)[0]
    if version not in (2, 3):
        raise ConfigError(f"unsupported GGUF version {version}")
    if n_kv > 1_000_000:
        raise ConfigError("GGUF header claims an absurd number of metadata keys")
    meta: dict[str, Any] = {}
    pos = 24
    try:
        for _ in range(n_kv):
            key, pos = _read_string(data, pos)
            vtype, pos = _read("I", data, pos)
            if vtype == _ARRAY:
                itype, pos = _read("I", data, pos)
                count, pos = _read("Q", data, pos)
                meta[f"{key}#len"] = count
                if itype in _PREFIX_FORMATS:
                    fmt = _PREFIX_FORMATS[itype]
                    end = pos + struct.calcsize("<" + fmt) * count
                    if end > len(data):
                        raise _Truncated
                    if count <= 4096:
                        meta[key] = list(struct.unpack_from(f"<{count}{fmt}", data, pos))
                    pos = end
                elif itype == _STRING:
                    for _ in range(count):
                        _, pos = _read_string(data, pos)
                else:
                    raise _Truncated  # nested arrays: nothing we need lies past them
            elif vtype == _STRING:
                meta[key], pos = _read_string(data, pos)
            elif vtype in _PREFIX_FORMATS:
                meta[key], pos = _read(_PREFIX_FORMATS[vtype], data, pos)
            else:
                raise ConfigError(f"GGUF header has an unknown value type {vtype} at {key!r}")
    except _Truncated:
        pass
    return meta

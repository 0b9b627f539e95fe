"""Offline index of popular Hugging Face model repos: name, size, downloads, a few config fields.

Shipped as ``catalog/data/hf_index.json.gz`` (built by ``catalog/importers/hf_index_build.py`` from llmfit's
``hf_models.json``), so that a plain name such as "gemma 3 1b" can be matched to ``google/gemma-3-1b-it``
without a network call. Fields that the source left empty are None; parameter counts are the safetensors
totals the source recorded (vision towers included). ``active_params`` is the source's own estimate and is
wrong for some MLA models (Kimi K2: 71.6B recorded, 32B disclosed) - prefer a catalog row where one exists.
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

INDEX_FILE = Path(__file__).resolve().parents[1] / "data" / "hf_index.json.gz"


class HfIndexRow(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: str  # "google/gemma-3-1b-it"
    params: int  # total parameters (safetensors count)
    active_params: int | None = None  # MoE: parameters used per token
    downloads: int = 0  # Hugging Face downloads as recorded by the source
    n_layers: int | None = None
    hidden_size: int | None = None
    n_heads: int | None = None
    n_kv_heads: int | None = None
    head_dim: int | None = None
    vocab_size: int | None = None
    n_experts: int | None = None
    experts_per_token: int | None = None
    max_context: int | None = None
    model_type: str | None = None  # config model_type, e.g. "gemma3_text"
    license: str | None = None
    release: str | None = None  # ISO date the repo was created
    pipeline: str | None = None  # "text-generation" or "image-text-to-text"


def load_hf_index(path: Path = INDEX_FILE) -> tuple[HfIndexRow, ...]:
    """All rows, most downloaded first."""
    return _read(path)[1]


def index_source(path: Path = INDEX_FILE) -> str:
    """Where the index came from, for provenance lines."""
    return _read(path)[0]


@lru_cache(maxsize=1)
def _read(path: Path) -> tuple[str, tuple[HfIndexRow, ...]]:
    """The source and the rows, read once per process (every indexed model's provenance names the source)."""
    payload = json.loads(gzip.decompress(path.read_bytes()))
    return str(payload["source"]), tuple(HfIndexRow(**row) for row in payload["rows"])

"""A model name the catalog lacks, found in the offline Hugging Face index (``catalog/hub/index.py``).

Used when the hub cannot be asked (offline, unreachable, no hit): the most downloaded indexed repo
that *is* the typed model (same size, version and variant, ``core.query.names``) becomes a ``ModelSpec``
from the index's config fields. Rows without those fields borrow them from a mirror of the same
model (same parameter count); a MoE row is not built, because the index lacks the expert width.
The card says the numbers come from the index and were not checked against the hub.
"""

from __future__ import annotations

from functools import lru_cache

from catalog.hub.index import HfIndexRow, index_source, load_hf_index
from catalog.hub.search import SKIP_REPO, agrees
from core.models import ModelSpec, Provenance
from core.query import names as N

REQUIRED = ("n_layers", "hidden_size", "n_heads", "vocab_size")


def find_in_index(phrase: str) -> tuple[HfIndexRow, ModelSpec | None] | None:
    """The indexed repo for a typed name, and a spec when the index holds enough to estimate it."""
    hits = _hits(phrase)
    if not hits:
        return None
    best = hits[0]  # the index is sorted by downloads
    shaped = next((r for r in hits if r.params == best.params and all(getattr(r, f) for f in REQUIRED)), None)
    return best, (_spec(best, shaped) if shaped is not None else None)


def indexed_repo(phrase: str) -> str | None:
    """``find_in_index``'s repo alone (no spec is built)."""
    hits = _hits(phrase)
    return hits[0].repo if hits else None


def _hits(phrase: str) -> list[HfIndexRow]:
    """Indexed repos that are the typed model, most downloaded first."""
    said = N.typed(phrase)
    if not said.words:
        return []
    return [
        r for r in _rows_with(said.words[0]) if not SKIP_REPO.search(r.repo.split("/")[-1]) and agrees(said, r.repo)
    ]


@lru_cache(maxsize=256)
def _rows_with(word: str) -> tuple[HfIndexRow, ...]:
    key = word.lower()
    return tuple(row for name, row in searchable_rows() if key in name)


@lru_cache(maxsize=1)
def searchable_rows() -> tuple[tuple[str, HfIndexRow], ...]:
    """Every row with its repo name as a word is compared: lower case, without "-" and "_"."""
    return tuple((r.repo.lower().replace("-", "").replace("_", ""), r) for r in load_hf_index())


def _spec(row: HfIndexRow, shape: HfIndexRow) -> ModelSpec | None:
    if (shape.n_experts or 1) > 1:
        return None  # expert width unknown: a MoE's weights and speed cannot be split
    assert shape.n_layers and shape.hidden_size and shape.n_heads and shape.vocab_size
    return ModelSpec(
        id=row.repo,
        name=row.repo.split("/")[-1],
        family=shape.model_type or "",
        hf_repo=row.repo,
        total_params=row.params,
        active_params=row.params,
        n_layers=shape.n_layers,
        hidden_size=shape.hidden_size,
        n_heads=shape.n_heads,
        n_kv_heads=shape.n_kv_heads or shape.n_heads,
        head_dim=shape.head_dim or shape.hidden_size // shape.n_heads,
        vocab_size=shape.vocab_size,
        max_context=shape.max_context or row.max_context or 4096,
        license=row.license or "",
        release=row.release or "",
        provenance=Provenance(
            source=f"offline Hugging Face index ({index_source()}), config fields of {shape.repo}",
            as_of=row.release or "index",
            unverified=("sliding_window", "tied_embeddings", "native_dtype"),
        ),
    )

"""The one quant ladder: which quants FitBot recommends, lists, draws and offers as choices, in order.

Quants people actually run, best quality per byte first (llama.cpp tools/quantize/README.md
perplexity table: K- and IQ-quants beat the legacy Q4_0/Q4_1/Q5_0/Q5_1 of the same size, so legacy
types are not recommended). Below about 3 bits quality falls off fast: the advice tries a quantized
KV cache first. MoE models go lower with unsloth's dynamic quants (experts low, attention high).
The advice walks ``ladder``; the /quant table shows ``table_ids``; the memory chart draws
``chart_ids``; chat clients offer ``MENU`` as fixed choices.
"""

from __future__ import annotations

from collections.abc import Iterator

from core.models import Catalog, Engine, ModelSpec, QuantSpec
from core.quants.rules import sensible
from core.weights import WeightEstimate, as_loaded, weights

QUANT_LADDER = ("Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "IQ4_XS", "Q3_K_M", "IQ3_XXS")
LOW_BIT_LADDER_MOE = ("UD-Q2_K_XL", "UD-IQ2_M", "UD-IQ1_M")
LOW_BIT_LADDER_DENSE = ("IQ2_M", "IQ2_XXS", "IQ1_M")
LOW_BITS = 3.0  # below this, weights lose clearly more than a quantized KV cache does
CHART_SKIP = frozenset({"Q5_K_M", "IQ3_XXS"})  # rungs the chart leaves out so its curves stay apart
CHECKPOINT_HEADS = ("BF16",)  # the unquantized checkpoint, listed above the ladder for reference
# Fixed choices for chat clients (Discord allows 25): the default and the ladder's neighbours first,
# then the other quants people type.
MENU = (
    "Q4_K_M",
    "Q5_K_M",
    "Q6_K",
    "Q8_0",
    "Q4_K_S",
    "Q4_0",
    "Q3_K_M",
    "Q3_K_L",
    "Q3_K_S",
    "Q2_K",
    "IQ4_XS",
    "IQ4_NL",
    "IQ3_M",
    "IQ3_XXS",
    *LOW_BIT_LADDER_DENSE,
    "UD-Q4_K_XL",
    LOW_BIT_LADDER_MOE[0],
    "F16",
    "BF16",
    "FP8",
    "MXFP4",
    "NVFP4",
    "AWQ",
)


def ladder_ids(model: ModelSpec) -> tuple[str, ...]:
    """The llama.cpp ladder for this model: K/IQ quants, then low bits; a model that ships in MXFP4
    (gpt-oss) has that one rung: its GGUF repositories publish the MXFP4 file (ggml-org/gpt-oss-*-GGUF,
    llama.cpp ``--gpt-oss-20b-default``: gpt-oss-20b-mxfp4.gguf), and no size of another quant is given
    that a repository does not publish (issue 35)."""
    if model.native_dtype == "mxfp4":
        return ("MXFP4",)
    steps = (*QUANT_LADDER, *(LOW_BIT_LADDER_MOE if model.is_moe else LOW_BIT_LADDER_DENSE))
    return tuple(q for q in steps if sensible(model, q))


def table_ids(model: ModelSpec) -> tuple[str, ...]:
    """The rows of the /quant table: the ladder with the checkpoint after a native MXFP4, for reference."""
    steps = ladder_ids(model)
    if model.native_dtype == "mxfp4":
        return steps  # the checkpoint is the MXFP4 file: no BF16 row of invented size
    return (*CHECKPOINT_HEADS, *steps)


def chart_ids(model: ModelSpec) -> tuple[str, ...]:
    """The curves of the memory chart: every other size step of the ladder and its first low-bit rung."""
    if model.native_dtype == "mxfp4":
        return ladder_ids(model)
    return tuple(q for q in ladder_ids(model) if q not in CHART_SKIP)[:6]


def candidates(model: ModelSpec, engine: Engine, catalog: Catalog) -> list[QuantSpec]:
    """Quants the engine runs, best first (bits, then bits in dense tensors); MXFP4 only for MXFP4 models."""
    quants = [
        q for q in catalog.quants if engine in q.engines and (q.id.upper() != "MXFP4" or model.native_dtype == "mxfp4")
    ]
    return sorted(quants, key=lambda q: (-q.bits, -q.bpw_dense, -q.bpw_experts, q.id))


_LADDERS: dict[tuple[int, Engine, bool, tuple[str, ...]], tuple[Catalog, list[QuantSpec]]] = {}


def ladder(model: ModelSpec, engine: Engine, catalog: Catalog) -> list[QuantSpec]:
    """Quants to recommend, best quality per byte first; vLLM keeps the checkpoint formats by bits.

    The ladder depends only on the engine, a native MXFP4 checkpoint and the model's rung ids (MoE-ness
    and the advice filters of ``core.quants.rules``): memoised per catalog object (the /models scan walks
    it for every model).
    """
    ids = ladder_ids(model)
    key = (id(catalog), engine, model.native_dtype == "mxfp4", ids)
    hit = _LADDERS.get(key)
    if hit is not None and hit[0] is catalog:
        return hit[1]
    if engine is not Engine.LLAMA_CPP:
        steps = candidates(model, engine, catalog)
    else:
        steps = [q for q in (catalog.quant(i) for i in ids) if q is not None and engine in q.engines]
    if len(_LADDERS) > 64:
        _LADDERS.clear()
    _LADDERS[key] = (catalog, steps)
    return steps


# (catalog, model, engine) -> the ladder and the weights of the rungs weighed so far; id() keyed with the
# objects kept in the entry, as in ``core.weights`` (an id a collected object leaves behind never matches)
_RUNGS: dict[tuple[int, int, Engine], tuple[Catalog, ModelSpec, list[QuantSpec], list[WeightEstimate | None]]] = {}
_RUNGS_ENTRIES = 4096  # every catalog model on both engines, with room for Hugging Face models


def ladder_weights(model: ModelSpec, engine: Engine, catalog: Catalog) -> Iterator[tuple[QuantSpec, WeightEstimate]]:
    """``ladder`` with each rung's weights (its measured size when the catalog has one), best rung first:
    what the quant choice compares against the memory of a setup. Memoised per catalog and model object,
    since a model's rungs weigh the same on every device (/models walks every model, /fit and the warm-up
    the same few); a rung is weighed when a scan first gets to it."""
    key = (id(catalog), id(model), engine)
    hit = _RUNGS.get(key)
    if hit is None or hit[0] is not catalog or hit[1] is not model:
        if len(_RUNGS) >= _RUNGS_ENTRIES:
            _RUNGS.clear()
        quants = ladder(model, engine, catalog)
        hit = _RUNGS[key] = (catalog, model, quants, [None] * len(quants))
    quants, weighed = hit[2], hit[3]
    for i, row in enumerate(quants):
        quant, measured = as_loaded(row, catalog.size(model.id, row.id), engine)  # vLLM: the checkpoint's bits
        w = weighed[i]
        if w is None:  # set by index: the same figures whichever thread weighs it first
            w = weighed[i] = weights(model, quant, measured)
        yield quant, w


__all__ = [
    "LOW_BITS",
    "MENU",
    "QUANT_LADDER",
    "candidates",
    "chart_ids",
    "ladder",
    "ladder_ids",
    "ladder_weights",
    "table_ids",
]

"""Quality per quant from published measurements: the figure for a family, and the best quality that fits.

A row is one published number for one quant of one model family (``catalog/facts/quant_quality.toml``):
mean KL divergence against the 16-bit model (llama.cpp's perplexity tool, ``--kl-divergence``), or the
perplexity increase in percent where only perplexity was published. Figures are compared only within
one family and one metric; a family without a table gets none, and the card says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from core.models import Frozen, ModelSpec, Provenance

Metric = Literal["kld", "ppl_delta_pct"]


class QualityRow(Frozen):
    family: str
    measured_on: str
    quant: str
    metric: Metric
    value: float
    imatrix: str = "none"
    provenance: Provenance


def family_quality(model: ModelSpec, rows: Iterable[QualityRow]) -> dict[str, QualityRow]:
    """The published rows for the model's family, by quant id (upper case); empty when none exist."""
    return {r.quant.upper(): r for r in rows if r.family == model.family}


def best_quality(fitting: Iterable[str], quality: dict[str, QualityRow]) -> QualityRow | None:
    """Among the quants that fit, the one with the lowest published loss (None without figures)."""
    measured = [quality[q.upper()] for q in fitting if q.upper() in quality]
    return min(measured, key=lambda r: (r.value, r.quant), default=None)


__all__ = ["Metric", "QualityRow", "best_quality", "family_quality"]

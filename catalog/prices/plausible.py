"""Which live prices a card may show: a row for a GPU the catalog knows, at a price that could be real.

A price API can answer with a number that parses and is still no price ("Azure 8x H100 at
$0.00/h": a meter's placeholder, a unit error, a test row). Each live row is judged per GPU-hour
(its price over its GPU count):

* below ``FLOOR_USD_PER_GPU_H`` ($0.05) it is dropped: the snapshot's cheapest row is $0.22
  (an RTX 3090 on RunPod), so the floor leaves a factor of four for a cheaper market;
* where the snapshot (``offers.toml``) has offers for that GPU, a row more than ``BAND`` (10x)
  above or below their median per-GPU-hour price is dropped: across the snapshot the widest
  distance of a row from its GPU's median is 6.6x (a DataCrunch spot A100 40 GB at $0.25
  against $1.66), so the band keeps every row the catalog itself holds;
* a GPU the snapshot prices nowhere is judged by the floor alone.

Dropped rows, these and the ones a parser drops itself (a $0 meter, a price that is no number), cost
that row only: they are counted and logged in one warning per provider and refresh
(``"event": "price_implausible"``), never stored.
"""

from __future__ import annotations

import logging
import statistics
from dataclasses import dataclass

from core.models import Catalog, CloudOffer

log = logging.getLogger("catalog.prices.refresh")

FLOOR_USD_PER_GPU_H = 0.05
BAND = 10.0


def per_gpu_hour(offer: CloudOffer) -> float:
    return offer.price_per_hour_usd / max(offer.gpu_count, 1)


@dataclass(frozen=True)
class PriceBounds:
    """The GPUs the catalog knows, and the median snapshot price per GPU-hour of those it prices."""

    known: frozenset[str]
    median: dict[str, float]

    @classmethod
    def of(cls, catalog: Catalog) -> PriceBounds:
        prices: dict[str, list[float]] = {}
        for offer in catalog.offers:
            prices.setdefault(offer.gpu_id, []).append(per_gpu_hour(offer))
        return cls(frozenset(g.id for g in catalog.gpus), {g: statistics.median(p) for g, p in prices.items()})

    def doubt(self, offer: CloudOffer) -> str | None:
        """Why ``offer`` cannot be a real price, or None when it can."""
        price = per_gpu_hour(offer)
        if price < FLOOR_USD_PER_GPU_H:
            return f"${price:.4f}/GPU-h is below the ${FLOOR_USD_PER_GPU_H}/GPU-h floor"
        median = self.median.get(offer.gpu_id)
        if median is not None and not median / BAND <= price <= median * BAND:
            return f"${price:.2f}/GPU-h is over {BAND:.0f}x off the snapshot's ${median:.2f}/GPU-h for {offer.gpu_id}"
        return None

    def judge(self, offers: list[CloudOffer]) -> tuple[list[CloudOffer], list[str]]:
        """(the offers for known GPUs at plausible prices, why each doubted one was dropped)."""
        known = [o for o in offers if o.gpu_id in self.known]
        kept, dropped = [], []
        for offer in known:
            why = self.doubt(offer)
            if why is None:
                kept.append(offer)
            else:
                dropped.append(f"{offer.instance[:60]} {offer.pricing_type}: {why}")
        return kept, dropped

    def keep(self, provider: str, offers: list[CloudOffer], dropped: tuple[str, ...] = ()) -> list[CloudOffer]:
        """``judge``, with every row dropped here or by the parser (``dropped``) logged in one warning."""
        kept, doubts = self.judge(offers)
        warn_dropped(provider, [*dropped, *doubts])
        return kept


def warn_dropped(provider: str, dropped: list[str]) -> None:
    """One warning for all the rows of one refresh of ``provider`` that were no price (none: nothing)."""
    if dropped:
        log.warning(
            "dropped %d implausible %s prices (e.g. %s)",
            len(dropped),
            provider,
            dropped[0],
            extra={"event": "price_implausible", "provider": provider, "dropped": len(dropped)},
        )


__all__ = ["BAND", "FLOOR_USD_PER_GPU_H", "PriceBounds", "per_gpu_hour", "warn_dropped"]

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

Dropped rows are counted and logged per provider (``"event": "price_implausible"``), never stored.
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

    def keep(self, provider: str, offers: list[CloudOffer]) -> list[CloudOffer]:
        """The offers for known GPUs at plausible prices; the dropped ones are logged once, counted."""
        known = [o for o in offers if o.gpu_id in self.known]
        doubts = [(o, why) for o in known if (why := self.doubt(o)) is not None]
        if doubts:
            offer, why = doubts[0]
            log.warning(
                "dropped %d implausible %s prices (e.g. %s %s: %s)",
                len(doubts),
                provider,
                offer.instance[:60],
                offer.pricing_type,
                why,
                extra={"event": "price_implausible", "provider": provider, "dropped": len(doubts)},
            )
        dropped = {id(o) for o, _ in doubts}
        return [o for o in known if id(o) not in dropped]


__all__ = ["BAND", "FLOOR_USD_PER_GPU_H", "PriceBounds", "per_gpu_hour"]

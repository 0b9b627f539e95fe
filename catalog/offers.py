"""Which cloud offers need a refresh: older than about six months, undated, or with unchecked fields.

A pure function over the catalog, so the CLI (``fitbot catalog offers --stale``) and the cards can share it.
``seen`` may be a full date, a month ("2026-04") or only a year ("2026", an undated page); a partial date
counts from its first day, so an offer is never reported fresher than its source allows.
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict

from core.models import Catalog, CloudOffer

MAX_AGE_DAYS = 183  # about six months
# prices a user can rent at ("serverless": per-second workers, kept apart from on-demand instances;
# "marketplace": a host's or a marketplace's typical asking price, marked "~" on a card);
# "marketplace-median" and "price-cap" rows are signals, never offers on a card
OFFER_TYPES = ("on-demand", "spot", "reserved", "serverless", "marketplace")
SIGNAL_TYPES = ("marketplace-median", "price-cap")


class StaleOffer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    offer: CloudOffer
    age_days: int | None  # None when the page was undated (year only)
    reasons: tuple[str, ...]  # "older than 183 days", "undated", "unverified: price_per_hour_usd"


def seen_date(seen: str) -> date | None:
    """First day that ``seen`` can mean; None when only a year (or nothing usable) is given."""
    parts = seen.strip().split("-")
    try:
        if len(parts) >= 3:
            return date(int(parts[0]), int(parts[1]), int(parts[2][:2]))
        if len(parts) == 2:
            return date(int(parts[0]), int(parts[1]), 1)
    except ValueError:
        return None
    return None


def age_label(offer: CloudOffer, today: date) -> str:
    """How old a price is, for listings: "143 days old", "undated" (a year only)."""
    seen = seen_date(offer.seen)
    return f"{(today - seen).days} days old" if seen else "undated"


def stale_offers(catalog: Catalog, today: date, max_age_days: int = MAX_AGE_DAYS) -> list[StaleOffer]:
    """Offers to re-check, oldest first (undated ones last)."""
    out = []
    for offer in catalog.offers:
        seen = seen_date(offer.seen)
        age = (today - seen).days if seen else None
        reasons = []
        if age is None:
            reasons.append("undated")
        elif age > max_age_days:
            reasons.append(f"older than {max_age_days} days")
        if offer.provenance.unverified:
            reasons.append("unverified: " + ", ".join(offer.provenance.unverified))
        if reasons:
            out.append(StaleOffer(offer=offer, age_days=age, reasons=tuple(reasons)))
    return sorted(out, key=lambda s: (s.age_days is None, -(s.age_days or 0), s.offer.provider, s.offer.instance))

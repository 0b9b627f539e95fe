"""What ``fitbot health`` says about the live prices: each source, skipped (no key) or its last refresh.

A source whose key is not set is skipped by every refresh; this is where an operator learns which and
why (the variable to set, never a value). For the others: how many prices its last good refresh
stored and when, or the error of a last refresh that failed (a 401, a changed format) with the age
of the prices it keeps.
"""

from __future__ import annotations

from catalog.prices.sources import PriceSource
from catalog.prices.store import PriceTables
from core.models import Lang
from locales import t


async def price_status(
    store: PriceTables, sources: list[PriceSource], keys: dict[str, str], lang: Lang = "en"
) -> list[str]:
    """One line per price source."""
    refreshes = await store.refreshes()
    stored = await store.counts()
    lines = []
    for source in sources:
        if source.credentials(keys) is None:
            lines.append(t(lang, "price_health.skipped", provider=source.name, needs=source.needs()))
            continue
        ok_at, failed_at, error = refreshes.get(source.name, (None, None, None))
        if failed_at and (not ok_at or failed_at > ok_at):
            when = _minute(ok_at) if ok_at else t(lang, "price_health.none")
            line = t(lang, "price_health.failed", provider=source.name, at=_minute(failed_at), error=error, ok_at=when)
        elif ok_at:
            line = t(lang, "price_health.ok", provider=source.name, count=stored.get(source.name, 0), at=_minute(ok_at))
        else:
            line = t(lang, "price_health.never", provider=source.name)
        lines.append(line)
    return lines


def _minute(iso: str) -> str:
    return iso[:16].replace("T", " ")


__all__ = ["price_status"]

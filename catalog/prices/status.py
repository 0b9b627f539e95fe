"""What ``fitbot health`` knows about the live prices: each source, skipped (no key) or its last refresh.

A source whose key is not set is skipped by every refresh; this is where an operator learns which and
why (the variable to set, never a value). For the others: how many prices its last good refresh
stored and when, or the error of a last refresh that failed (a 401, a changed format) with the age
of the prices it keeps. The states are data; ``bot.cards.prices`` says them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from catalog.prices.sources import PriceSource
from catalog.prices.store import PriceTables


@dataclass(frozen=True)
class PriceState:
    """One source's state: ``skipped`` (``needs`` names the variables to set), ``failed`` (at ``failed_at``,
    with ``error``; the prices of ``ok_at`` kept, if any), ``ok`` (``count`` prices at ``ok_at``) or ``never``
    refreshed. Times are UTC ISO strings."""

    provider: str
    state: Literal["skipped", "failed", "ok", "never"]
    needs: str = ""
    ok_at: str | None = None
    failed_at: str | None = None
    error: str | None = None
    count: int = 0


async def price_states(store: PriceTables, sources: list[PriceSource], keys: dict[str, str]) -> list[PriceState]:
    """One state per price source."""
    refreshes = await store.refreshes()
    stored = await store.counts()
    states = []
    for source in sources:
        if source.credentials(keys) is None:
            states.append(PriceState(source.name, "skipped", needs=source.needs()))
            continue
        ok_at, failed_at, error = refreshes.get(source.name, (None, None, None))
        if failed_at and (not ok_at or failed_at > ok_at):
            states.append(PriceState(source.name, "failed", ok_at=ok_at, failed_at=failed_at, error=error))
        elif ok_at:
            states.append(PriceState(source.name, "ok", ok_at=ok_at, count=stored.get(source.name, 0)))
        else:
            states.append(PriceState(source.name, "never"))
    return states


__all__ = ["PriceState", "price_states"]

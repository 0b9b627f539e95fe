"""``fitbot health``'s price lines: each live price source's state (``catalog.prices.status``), said by
``bot.cards.prices``."""

from __future__ import annotations

from bot.cards.prices import price_lines
from catalog.prices.sources import PriceSource
from catalog.prices.status import price_states
from catalog.prices.store import PriceTables
from core.models import Lang


async def price_status(
    store: PriceTables, sources: list[PriceSource], keys: dict[str, str], lang: Lang = "en"
) -> list[str]:
    """One line per price source."""
    return price_lines(await price_states(store, sources, keys), lang)

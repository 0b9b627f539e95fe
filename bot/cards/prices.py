"""The words of ``fitbot health``'s price lines: one per live price source (``catalog.prices.status``)."""

from __future__ import annotations

from collections.abc import Sequence

from catalog.prices.status import PriceState
from core.models import Lang
from locales import t


def price_lines(states: Sequence[PriceState], lang: Lang = "en") -> list[str]:
    """One line per price source: skipped and why, its last refresh, or its failure."""
    lines = []
    for s in states:
        if s.state == "skipped":
            line = t(lang, "price_health.skipped", provider=s.provider, needs=s.needs)
        elif s.state == "failed":
            when = _minute(s.ok_at) if s.ok_at else t(lang, "price_health.none")
            at = _minute(s.failed_at or "")
            line = t(lang, "price_health.failed", provider=s.provider, at=at, error=s.error, ok_at=when)
        elif s.state == "ok":
            line = t(lang, "price_health.ok", provider=s.provider, count=s.count, at=_minute(s.ok_at or ""))
        else:
            line = t(lang, "price_health.never", provider=s.provider)
        lines.append(line)
    return lines


def _minute(iso: str) -> str:
    return iso[:16].replace("T", " ")

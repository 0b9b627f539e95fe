"""``fitbot catalog``: what the catalog holds, with sources and dates; ``verify`` and ``refresh``.

Apart from ``bot.app.cli`` so that the one-shot ``fitbot estimate`` does not load it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable
from typing import Any

from bot.labels import setup_label
from core.models import GIB, Catalog, CloudOffer, GpuSpec, ModelSpec, QuantSpec

HubService = Callable[[], Awaitable[Any]]  # opens the bots' own service (``cli._hub_service``)


def run(args: argparse.Namespace, catalog: Catalog, hub_service: HubService) -> int:
    """The ``catalog`` sub-command; its exit status."""
    if args.what == "verify":
        return print_verify(catalog, args.live, args.json, hub_service)
    if args.what == "refresh":
        return print_refresh(catalog)
    if args.stale and args.what == "offers":
        print_stale_offers(catalog, args.json)
    else:
        print_catalog(args.what, catalog, args.json)
    return 0


def print_refresh(catalog: Catalog) -> int:
    """Ask every price API once (``catalog/prices``) into ``prices.sqlite``, or the shared database with
    FITBOT_DATABASE_URL; exit 1 when none answered."""
    import asyncio
    from datetime import UTC, datetime

    from bot.app.settings import Settings
    from catalog.prices.plausible import PriceBounds
    from catalog.prices.refresh import ProviderResult, refresh
    from catalog.prices.sources import default_sources
    from catalog.prices.store import PriceStore, PriceTables

    settings = Settings()
    sources, keys, bounds = default_sources(settings.price_endpoint), settings.price_keys(), PriceBounds.of(catalog)

    async def into_store() -> list[ProviderResult]:
        if settings.database_url() is None:
            return await refresh(PriceStore(settings.prices_path()), sources, keys, bounds)
        from bot.app.migrate import user_store

        async with user_store(settings) as store:  # the shared database: every worker applies it next
            tables = PriceTables(store.database)
            results = await refresh(tables, sources, keys, bounds)
            await tables.mark_attempt(datetime.now(UTC))
            return results

    results = asyncio.run(into_store())
    for r in results:
        shown = f"{r.prices} prices" if r.status == "ok" else f"{r.status}: {r.detail}"
        print(f"{r.provider:<14} {shown}")
    return 0 if any(r.status == "ok" for r in results) else 1


def print_catalog(what: str, catalog: Catalog, as_json: bool) -> None:
    tables: dict[str, tuple[GpuSpec, ...] | tuple[ModelSpec, ...] | tuple[CloudOffer, ...] | tuple[QuantSpec, ...]]
    tables = {"gpus": catalog.gpus, "models": catalog.models, "offers": catalog.offers, "quants": catalog.quants}
    items = tables[what]
    if as_json:
        print(json.dumps([i.model_dump(mode="json") for i in items], ensure_ascii=False, indent=1))
        return
    for item in items:
        print(_catalog_line(item))
    if what == "offers":
        from catalog.facts import load_price_signals

        signals = load_price_signals(catalog)
        print(f"\n{len(signals)} price signals (marketplace medians, price caps): not offers, never on a card")
        for signal in signals:
            print(_catalog_line(signal))


def _catalog_line(item: GpuSpec | ModelSpec | CloudOffer | QuantSpec) -> str:
    prov = item.provenance
    flag = " [unverified: " + ", ".join(prov.unverified) + "]" if prov.unverified else ""
    return f"{_catalog_head(item)}  ({prov.source[:60]}; {prov.as_of}){flag}"


def print_stale_offers(catalog: Catalog, as_json: bool) -> None:
    """Offers that need a fresh look, oldest first, with why."""
    from datetime import date

    from catalog.offers import stale_offers

    stale = stale_offers(catalog, date.today())
    if as_json:
        print(json.dumps([s.model_dump(mode="json") for s in stale], ensure_ascii=False, indent=1))
        return
    for item in stale:
        print(f"{_catalog_head(item.offer)}  ({'; '.join(item.reasons)})")
    print(f"{len(stale)} of {len(catalog.offers)} offers need a refresh")


def _catalog_head(item: GpuSpec | ModelSpec | CloudOffer | QuantSpec) -> str:
    if isinstance(item, GpuSpec):
        return f"{item.id:<24} {item.memory_bytes / GIB:>7.1f} GiB {item.bandwidth_bytes_per_s / 1e9:>7.0f} GB/s"
    if isinstance(item, ModelSpec):
        return f"{item.id:<32} {item.total_params / 1e9:>8.1f}B total {item.active_params / 1e9:>6.1f}B active"
    if isinstance(item, CloudOffer):
        from datetime import date

        from catalog.offers import age_label

        price = f"${item.price_per_hour_usd:>7.2f}/h"
        setup = setup_label(item.gpu_id, item.gpu_count)
        age = age_label(item, date.today())
        return f"{item.provider:<14} {setup:<22} {price}  {item.pricing_type:<18} seen {item.seen} ({age})"
    return f"{item.id:<14} {item.label}"


def print_verify(catalog: Catalog, live: bool, as_json: bool, hub_service: HubService) -> int:
    """Rows whose stored config, live config (``--live``) or parameter counts disagree; exit 1 when any do."""
    from catalog.verify import live_findings, stored_findings

    findings = stored_findings(catalog)
    if live:
        import asyncio

        async def check() -> list[Any]:
            service = await hub_service()
            try:
                return await live_findings(catalog, service.hub)
            finally:
                await service.close()

        findings += asyncio.run(check())
    if as_json:
        print(json.dumps([f.model_dump() for f in findings], indent=1))
    else:
        for f in findings:
            print(f"{f.model:<34} {f.kind:<10} {f.detail}")
        kinds = {k: sum(f.kind == k for f in findings) for k in ("no-config", "params", "live")}
        print(f"{len(catalog.models)} models: " + ", ".join(f"{n} {k}" for k, n in kinds.items()))
    return 1 if any(f.kind != "no-config" for f in findings) else 0

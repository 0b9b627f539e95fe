"""One price refresh (every provider, each on its own), the merge over the snapshot, and the schedule.

A provider that cannot be reached, refuses the operator's key (401/403) or answers in a shape its
parser does not know keeps its last good prices; the first such failure logs one warning (repeats of
the same failure log at info). A row whose price is no price (a $0 meter) costs that row only, one
warning per provider and refresh for all of them. A provider whose key is not set is skipped.

Offers a card may show are list, spot, reserved, serverless and marketplace prices (the last marked
"~" on a card). The merge replaces a snapshot row only with live rows of the same provider and
kind (``offer_kind``): a RunPod refresh (Pod prices) leaves the snapshot's RunPod serverless rows,
a Lambda refresh (on-demand) its reserved row. With a shared database only the elected worker
refreshes, and every worker follows what it stored (``schedule_prices``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from catalog.offers import OFFER_TYPES
from catalog.prices.fetch import fetch
from catalog.prices.plausible import PriceBounds, warn_dropped
from catalog.prices.sources import PriceAuthError, PriceFormatError, PriceSource, default_sources
from catalog.prices.store import PriceStore, PriceTables
from core.models import Catalog, CloudOffer
from storage.base import Database, store_errors
from storage.leader import Election, while_leader

log = logging.getLogger(__name__)
TIMEOUT_S = 20.0
RETRY_S = 300.0  # a price store that could not be reached is asked again after this
FOLLOW_S = 60.0  # with a shared database, how often a worker looks for a newer refresh


@dataclass(frozen=True)
class ProviderResult:
    provider: str
    status: str  # "ok", "no key", "unauthorized", "format", "unreachable"
    prices: int = 0
    detail: str = ""


async def refresh(
    store: PriceTables,
    sources: list[PriceSource],
    keys: dict[str, str],
    bounds: PriceBounds,
    now: datetime | None = None,
) -> list[ProviderResult]:
    """Ask every provider once; store what parsed and is plausible, keep the last good prices of the rest.

    Whatever one provider answers (too large, not JSON, nested too deep, a shape its parser does not
    know, pages elsewhere) costs that provider only.
    """
    import aiohttp

    now = now or datetime.now(UTC)
    seen = now.date().isoformat()
    results = []
    timeout = aiohttp.ClientTimeout(total=TIMEOUT_S)
    async with aiohttp.ClientSession(timeout=timeout, trust_env=True) as session:
        for source in sources:
            credentials = source.credentials(keys)
            if credentials is None:
                results.append(ProviderResult(source.name, "no key", detail=f"set {source.needs()}"))
                continue
            try:
                rows = source.parse(await fetch(session, source, *credentials), seen)
                offers, doubts = bounds.judge(rows.offers)
                dropped = [*rows.dropped, *doubts]
                if not offers:
                    example = f" ({len(dropped)} dropped, e.g. {dropped[0]})" if dropped else ""
                    raise PriceFormatError("no plausible price for any GPU the catalog knows" + example)
            except PriceAuthError as exc:
                results.append(await _failed(store, source.name, "unauthorized", exc, now))
                continue
            except (aiohttp.ClientError, TimeoutError) as exc:
                results.append(await _failed(store, source.name, "unreachable", exc, now))
                continue
            except Exception as exc:  # whatever else the answer breaks in its parser: a format problem
                results.append(await _failed(store, source.name, "format", exc, now))
                continue
            warn_dropped(source.name, dropped)
            await store.replace(source.name, offers, now)
            results.append(ProviderResult(source.name, "ok", len(offers)))
    return results


async def _failed(store: PriceTables, provider: str, status: str, exc: BaseException, now: datetime) -> ProviderResult:
    detail = f"{exc.__class__.__name__}: {exc}"[:200]
    first = await store.last_error(provider) != f"{status}: {detail}"
    (log.warning if first else log.info)(
        "price refresh of %s failed (%s); keeping its last good prices",
        provider,
        detail,
        extra={"event": "price_refresh_failed", "provider": provider, "status": status},
    )
    await store.failed(provider, now, f"{status}: {detail}")
    return ProviderResult(provider, status, detail=detail)


def offer_kind(offer: CloudOffer) -> str:
    """Which prices a live row may replace: "serverless", "marketplace" (by type or billing), else its type."""
    if offer.pricing_type == "serverless":
        return "serverless"
    if offer.pricing_type == "marketplace" or offer.billing == "marketplace":
        return "marketplace"
    return offer.pricing_type


def merge(snapshot: Catalog, live: list[tuple[CloudOffer, str]]) -> Catalog:
    """The snapshot's offers with each refreshed provider's rows of a kind replaced by its live rows of it."""
    offers = [o for o, _ in live if o.pricing_type in OFFER_TYPES and snapshot.gpu(o.gpu_id) is not None]
    refreshed = {(o.provider.lower(), offer_kind(o)) for o in offers}
    kept = [o for o in snapshot.offers if (o.provider.lower(), offer_kind(o)) not in refreshed]
    return snapshot.model_copy(update={"offers": (*kept, *offers)})


async def run_schedule(
    snapshot: Catalog,
    store: PriceTables,
    sources: list[PriceSource],
    keys: dict[str, str],
    every: timedelta,
    apply: Callable[[Catalog], None],
    stop: asyncio.Event,
) -> None:
    """Apply the stored prices, then refresh every ``every`` (at once when the last refresh is older) until ``stop``."""
    apply(merge(snapshot, await store.offers()))

    async def reapply() -> None:
        apply(merge(snapshot, await store.offers()))

    await refresh_when_due(store, sources, keys, PriceBounds.of(snapshot), every, stop, reapply)


async def refresh_when_due(
    store: PriceTables,
    sources: list[PriceSource],
    keys: dict[str, str],
    bounds: PriceBounds,
    every: timedelta,
    stop: asyncio.Event,
    after: Callable[[], Awaitable[None]],
) -> None:
    """Refresh when the last attempt (by any process) is ``every`` old, then ``after()``, until ``stop``.

    With a shared database this is the elected worker's job: the last attempt is in the database,
    so a worker taking over after a failover waits out the period its predecessor started. A
    ``stop`` during a refresh cancels it at once (its providers keep their last good prices, and the
    attempt is not recorded, so the next start refreshes).
    """
    while not stop.is_set():
        try:
            last = await store.last_attempt()
            wait = (last + every - datetime.now(UTC)).total_seconds() if last else 0.0
            if wait <= 0:
                if not await _unless_stopped(_refresh_once(store, sources, keys, bounds), stop):
                    log.info("price refresh cancelled by the stop", extra={"event": "price_refresh_cancelled"})
                    return
                await after()
                continue
        except store_errors():  # the store is out of reach (a database restarting): try again soon
            log.warning("price store unavailable; trying again", exc_info=True)
            wait = RETRY_S
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), wait)


async def _unless_stopped(work: Coroutine[Any, Any, None], stop: asyncio.Event) -> bool:
    """Runs ``work`` until it ends (True) or ``stop`` is set (False: it is cancelled)."""
    task = asyncio.ensure_future(work)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
    if task.done():
        task.result()
        return True
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return False


async def _refresh_once(
    store: PriceTables, sources: list[PriceSource], keys: dict[str, str], bounds: PriceBounds
) -> None:
    try:
        results = await refresh(store, sources, keys, bounds)
        log.info("prices refreshed: %s", ", ".join(f"{r.provider} {r.status} {r.prices}" for r in results))
    except Exception:  # a refresh must never take the bot down; the next one tries again
        log.exception("price refresh failed")
    await store.mark_attempt(datetime.now(UTC))


async def follow(
    snapshot: Catalog,
    store: PriceTables,
    apply: Callable[[Catalog], None],
    stop: asyncio.Event,
    every_s: float = FOLLOW_S,
) -> None:
    """Every worker on a shared database: apply the stored prices now and after each refresh any worker made."""
    applied: datetime | None | bool = False  # False: nothing applied yet
    while not stop.is_set():
        try:
            last = await store.last_attempt()
            if last != applied:
                apply(merge(snapshot, await store.offers()))
                applied = last
        except store_errors():
            log.warning("price store unavailable; keeping the prices applied", exc_info=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every_s)


class PriceSettings(Protocol):
    """What the schedule needs from ``bot.app.settings.Settings``."""

    price_refresh_hours: float
    price_endpoint: str | None

    def prices_path(self) -> Path: ...

    def price_keys(self) -> dict[str, str]: ...


async def schedule_prices(
    snapshot: Catalog,
    settings: PriceSettings,
    apply: Callable[[Catalog], None],
    stop: asyncio.Event,
    shared: tuple[Database, Election] | None = None,
    follow_s: float = FOLLOW_S,
) -> None:
    """The prices of ``fitbot run``: with the store, sources, keys and period the settings name.

    Alone, ``run_schedule`` on ``prices.sqlite``. With a ``shared`` database and the election of its
    refresh job, only the elected worker refreshes (``refresh_when_due``, handed over on failover),
    and every worker ``follow``s the shared prices.
    """
    every = timedelta(hours=settings.price_refresh_hours)
    sources, keys = default_sources(settings.price_endpoint), settings.price_keys()
    if shared is None:
        await run_schedule(snapshot, PriceStore(settings.prices_path()), sources, keys, every, apply, stop)
        return
    database, elect = shared
    store, bounds = PriceTables(database), PriceBounds.of(snapshot)

    def job(job_stop: asyncio.Event) -> Coroutine[Any, Any, None]:
        return refresh_when_due(store, sources, keys, bounds, every, job_stop, _nothing)

    await asyncio.gather(while_leader(elect, stop, job), follow(snapshot, store, apply, stop, follow_s))


async def _nothing() -> None:
    return None


async def stored_catalog(snapshot: Catalog, path: Path) -> Catalog:
    """The snapshot with the prices a refresh stored (the CLI's view of the catalog)."""
    return merge(snapshot, await PriceStore(path).offers())

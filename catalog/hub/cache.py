"""Hub look-ups kept in the user database: ``HubCache`` gives the stored JSON its meaning, ``CachedHubClient``
puts it in front of ``HubClient``.

A fresh entry answers without a request, an entry older than ``max_age`` is refreshed, and when the hub
is down or rate-limits us a stale entry is served, marked ``stale``. Other errors (404, gated, bad data)
are passed on: the cached numbers might no longer be what the repo holds, and the user should hear why.
The SQL is storage's (``storage.userdata.HubCacheRows``); this module only needs rows of that shape.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

from pydantic import ValidationError

from catalog.hub.client import (
    HubClient,
    HubModel,
    HubRateLimited,
    HubUnavailable,
    RepoRef,
    parse_repo_ref,
    require_quant,
)

log = logging.getLogger(__name__)

DEFAULT_MAX_AGE = timedelta(days=7)


class HubCacheRows(Protocol):
    """What the cache needs of storage: one JSON text per repo id (``storage.userdata.HubCacheRows``)."""

    async def get(self, repo_id: str) -> str | None: ...
    async def put(self, key: str, repo_id: str, revision: str, fetched_at: datetime, data: str) -> None: ...


class HubCache:
    """Cached ``HubModel``s over the stored rows."""

    def __init__(self, rows: HubCacheRows) -> None:
        self.rows = rows

    async def get(self, repo_id: str) -> HubModel | None:
        """The cached look-up for a repo, or None (also for a row an older FitBot wrote in another shape)."""
        data = await self.rows.get(repo_id)
        if data is None:
            return None
        try:
            return HubModel.model_validate_json(data)
        except ValidationError:
            log.warning("dropping unreadable hub cache entry for %s", repo_id)
            return None

    async def put(self, model: HubModel, repo_id: str | None = None) -> None:
        """Store (or replace) a look-up under ``repo_id`` (the id the user asked for) or its own id."""
        stored = model.model_copy(update={"stale": False, "stale_reason": None})
        await self.rows.put(
            repo_id or model.repo_id, model.repo_id, model.revision, model.fetched_at, stored.model_dump_json()
        )


class CachedHubClient:
    """``HubClient.lookup`` behind the cache: fresh hits cost no request, a down hub gets stale answers."""

    def __init__(
        self,
        client: HubClient,
        rows: HubCacheRows,
        *,
        max_age: timedelta = DEFAULT_MAX_AGE,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.client = client
        self.cache = HubCache(rows)
        self.max_age = max_age
        self._clock = clock
        self._inflight: dict[str, asyncio.Future[HubModel]] = {}

    async def lookup(self, ref: RepoRef | str) -> HubModel:
        if isinstance(ref, str):
            ref = parse_repo_ref(ref)
        cached = await self.cache.get(ref.repo_id)
        if cached is not None and self._clock() - cached.fetched_at < self.max_age:
            return require_quant(cached, ref.quant)
        try:
            fresh = await self._fetch_once(ref.repo_id)
        except (HubUnavailable, HubRateLimited) as exc:
            if cached is None:
                raise
            log.info(
                "hub look-up of %s failed (%s); answering from the cache of %s",
                ref.repo_id,
                exc.key,
                cached.fetched_at.isoformat(timespec="minutes"),
            )
            return require_quant(cached.model_copy(update={"stale": True, "stale_reason": exc.key}), ref.quant)
        return require_quant(fresh, ref.quant)

    async def _fetch_once(self, repo_id: str) -> HubModel:
        """One hub request per repo at a time: concurrent askers share the first one's answer."""
        key = repo_id.lower()
        pending = self._inflight.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[HubModel] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            model = await self.client.lookup(RepoRef(repo_id))  # all quants; the caller's is checked after
            await self.cache.put(model, repo_id)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # mark retrieved: nobody else may be waiting
            raise
        else:
            future.set_result(model)
            return model
        finally:
            del self._inflight[key]

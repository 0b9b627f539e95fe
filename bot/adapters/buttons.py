"""Button questions too long for a platform's button payload, kept in memory by a short key.

Telegram allows 64 bytes of callback_data and Discord 100 characters of custom_id; a longer
follow-up question is stored here with an expiry and a size cap. The store lives in memory, so a
restart expires such buttons and the adapters answer "this card expired, ask again". With several
workers (PostgreSQL) each key is also written to the shared ``buttons`` table, so a press that
lands on another worker (a webhook behind a load balancer, a restarted process) still finds it.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import time
from collections import OrderedDict
from typing import Protocol

log = logging.getLogger(__name__)

DEFAULT_TTL_S = 7 * 24 * 3600
DEFAULT_SIZE = 50_000


class SharedTable(Protocol):
    """``bot.app.jobs.ButtonTable``: the keys every worker can read."""

    async def put(self, key: str, query: str, ttl_s: float) -> None: ...

    async def get(self, key: str) -> str | None: ...


class ButtonStore:
    def __init__(
        self, ttl_s: float = DEFAULT_TTL_S, size: int = DEFAULT_SIZE, shared: SharedTable | None = None
    ) -> None:
        self.ttl_s, self.size, self.shared = ttl_s, size, shared
        self._items: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self._writes: set[asyncio.Task[None]] = set()

    def put(self, query: str) -> str:
        """Stores ``query`` and returns its 12-character key (the same key for the same query)."""
        key = base64.urlsafe_b64encode(hashlib.blake2b(query.encode(), digest_size=9).digest()).decode()
        self._items[key] = (query, time.monotonic() + self.ttl_s)
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)
        if self.shared is not None:  # written while the card is sent; a press comes seconds later
            task = asyncio.get_running_loop().create_task(self._share(key, query))
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)
        return key

    async def _share(self, key: str, query: str) -> None:
        try:
            await self.shared.put(key, query, self.ttl_s)  # type: ignore[union-attr]
        except Exception:  # a press on this worker still works; another worker says "expired"
            log.warning("could not share button %s", key, exc_info=True)

    def get(self, key: str) -> str | None:
        """The stored question, or None when unknown or expired."""
        query, expires = self._items.get(key, ("", 0.0))
        return query if expires > time.monotonic() else None

    async def fetch(self, key: str) -> str | None:
        """``get``, then the shared table (a button another worker made)."""
        found = self.get(key)
        if found is None and self.shared is not None:
            try:
                found = await self.shared.get(key)
            except Exception:
                log.warning("could not read shared button %s", key, exc_info=True)
        return found

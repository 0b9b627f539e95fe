"""Button questions too long for a platform's button payload, kept in memory by a short key.

Telegram allows 64 bytes of callback_data and Discord 100 characters of custom_id; a longer
follow-up question is stored here with an expiry and a size cap. The store lives in memory, so a
restart expires such buttons and the adapters answer "this card expired, ask again".
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections import OrderedDict

DEFAULT_TTL_S = 7 * 24 * 3600
DEFAULT_SIZE = 50_000


class ButtonStore:
    def __init__(self, ttl_s: float = DEFAULT_TTL_S, size: int = DEFAULT_SIZE) -> None:
        self.ttl_s, self.size = ttl_s, size
        self._items: OrderedDict[str, tuple[str, float]] = OrderedDict()

    def put(self, query: str) -> str:
        """Stores ``query`` and returns its 12-character key (the same key for the same query)."""
        key = base64.urlsafe_b64encode(hashlib.blake2b(query.encode(), digest_size=9).digest()).decode()
        self._items[key] = (query, time.monotonic() + self.ttl_s)
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)
        return key

    def get(self, key: str) -> str | None:
        """The stored question, or None when unknown or expired."""
        query, expires = self._items.get(key, ("", 0.0))
        return query if expires > time.monotonic() else None

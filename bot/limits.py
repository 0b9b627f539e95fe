"""Per-user and per-chat rate limits: sliding one-minute windows kept in memory.

A limit that trips gets a friendly "slow down" card instead of silence; other users are not
affected. The clock is passed in, so tests need no sleeping.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

WINDOW_S = 60.0
MAX_KEYS = 100_000  # oldest keys are forgotten first, so a flood of new ids cannot grow memory


@dataclass
class RateLimiter:
    """Allows ``per_minute`` events per key in any 60-second window."""

    per_minute: int
    clock: Callable[[], float] = time.monotonic
    _events: OrderedDict[str, deque[float]] = field(default_factory=OrderedDict)

    def allow(self, key: str) -> bool:
        """Record one event for ``key`` if it is within the limit; say whether it was."""
        now = self.clock()
        events = self._events.pop(key, None) or deque()
        while events and now - events[0] >= WINDOW_S:
            events.popleft()
        allowed = len(events) < self.per_minute
        if allowed:
            events.append(now)
        self._events[key] = events
        if len(self._events) > MAX_KEYS:
            self._events.popitem(last=False)
        return allowed

    def retry_after(self, key: str) -> float:
        """Seconds until ``key`` may ask again (0 when it may now)."""
        events = self._events.get(key)
        if not events or len(events) < self.per_minute:
            return 0.0
        return max(0.0, WINDOW_S - (self.clock() - events[0]))


@dataclass
class Limits:
    """The limits one service applies: per user, per chat, and for expensive work per user."""

    user: RateLimiter
    chat: RateLimiter
    expensive: RateLimiter

    @classmethod
    def per_minute(cls, user: int, chat: int, expensive: int, clock: Callable[[], float] = time.monotonic) -> Limits:
        return cls(RateLimiter(user, clock), RateLimiter(chat, clock), RateLimiter(expensive, clock))

    def check(self, user_id: str, chat_id: str) -> float:
        """0 when the question may be answered, else seconds to wait."""
        if user_id and not self.user.allow(user_id):
            return self.user.retry_after(user_id)
        if chat_id and not self.chat.allow(chat_id):
            return self.chat.retry_after(chat_id)
        return 0.0

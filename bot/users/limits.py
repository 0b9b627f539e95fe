"""Per-user and per-chat rate limits: sliding one-minute windows kept in memory.

A limit that trips gets a friendly "slow down" card instead of silence, but only once per user
per window (``Limits.first_notice``): a flood of refused messages must not turn into a flood of
cards that, under the platforms' global send pacing, delays everybody else. Other users are not
affected. A chat limit that refuses a question does not charge the asker's own quota, and
questions asked inside ``Limits.free_of_charge()`` (inline-mode keystrokes, which are debounced by
the adapter instead) are not counted at all. The clock is passed in, so tests need no sleeping.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from storage.base import store_errors

log = logging.getLogger(__name__)

WINDOW_S = 60.0
MAX_KEYS = 100_000  # oldest keys are forgotten first, so a flood of new ids cannot grow memory

_FREE = contextvars.ContextVar("fitbot_free_of_charge", default=False)


@dataclass
class RateLimiter:
    """Allows ``per_minute`` events per key in any 60-second window."""

    per_minute: int
    clock: Callable[[], float] = time.monotonic
    _events: OrderedDict[str, deque[float]] = field(default_factory=OrderedDict)

    def _current(self, key: str, now: float) -> deque[float]:
        events = self._events.pop(key, None) or deque()
        while events and now - events[0] >= WINDOW_S:
            events.popleft()
        self._events[key] = events
        if len(self._events) > MAX_KEYS:
            self._events.popitem(last=False)
        return events

    def would_allow(self, key: str) -> bool:
        """Whether one more event for ``key`` is within the limit, without recording it."""
        return len(self._current(key, self.clock())) < self.per_minute

    def record(self, key: str) -> None:
        self._current(key, self.clock()).append(self.clock())

    def allow(self, key: str) -> bool:
        """Record one event for ``key`` if it is within the limit; say whether it was."""
        allowed = self.would_allow(key)
        if allowed:
            self.record(key)
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
    _noticed: OrderedDict[str, float] = field(default_factory=OrderedDict)
    shared: Any = None  # bot.app.jobs.RateWindows when several processes count together (PostgreSQL)

    @classmethod
    def per_minute(cls, user: int, chat: int, expensive: int, clock: Callable[[], float] = time.monotonic) -> Limits:
        return cls(RateLimiter(user, clock), RateLimiter(chat, clock), RateLimiter(expensive, clock))

    def check(self, user_id: str, chat_id: str) -> float:
        """0 when the question may be answered, else seconds to wait.

        Nothing is charged unless the question is answered, so a question the chat limit refuses
        costs the asker nothing; inside ``free_of_charge()`` nothing is checked or charged.
        """
        if _FREE.get():
            return 0.0
        if user_id and not self.user.would_allow(user_id):
            return self.user.retry_after(user_id) or 1.0
        if chat_id and not self.chat.would_allow(chat_id):
            return self.chat.retry_after(chat_id) or 1.0
        if user_id:
            self.user.record(user_id)
        if chat_id:
            self.chat.record(chat_id)
        return 0.0

    async def acheck(self, user_id: str, chat_id: str) -> float:
        """``check``, counted in the shared database when ``shared`` is set: a flood through two workers is one flood."""
        if self.shared is None or _FREE.get():
            return self.check(user_id, chat_id)
        limits = [(f"user:{user_id}", self.user.per_minute), (f"chat:{chat_id}", self.chat.per_minute)]
        try:
            return float(await self.shared.take([(key, n) for key, n in limits if key.split(":", 1)[1]]))
        except store_errors():  # the shared database is gone: this process counts alone until it is back
            log.warning("shared rate limits unavailable; counting in this process", exc_info=True)
            return self.check(user_id, chat_id)

    def first_notice(self, key: str) -> bool:
        """True for the first refusal of ``key`` in a window: only that one gets a slow-down card."""
        now = self.user.clock()
        last = self._noticed.pop(key, None)
        first = last is None or now - last >= WINDOW_S
        self._noticed[key] = now if first else last  # type: ignore[assignment]
        if len(self._noticed) > MAX_KEYS:
            self._noticed.popitem(last=False)
        return first

    @staticmethod
    @contextmanager
    def free_of_charge() -> Iterator[None]:
        """Questions asked in this block (this task only) are not counted against any limit."""
        token = _FREE.set(True)
        try:
            yield
        finally:
            _FREE.reset(token)

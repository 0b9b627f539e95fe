"""Telegram flood control per chat: a 429 for one chat holds that chat's sends only.

PTB's ``AIORateLimiter`` paces sends at Telegram's documented limits (30 messages a second in all,
20 a minute per group) and that is kept: ``ChatFloodLimiter`` is that limiter. What it changes is
what a 429 does. The library halts *every* request for the ``retry_after`` of any 429 (its docs say
so: "stricter than necessary"); one group under flood control (``retry_after=40``) held every
private chat for about 35 s. Telegram's flood control for a chat is about that chat, so here:

* A 429 for a request that names a ``chat_id`` closes that chat's gate until its ``retry_after``
  (+0.1 s) has passed. The refused send and every later send to that chat wait at the gate, then go
  one at a time in the order they reached it (an ``asyncio.Lock`` is first come, first served), so
  nothing is lost, a card's messages keep their order, and only one send probes a window that may
  still be closed. Other chats go on at once; the gate is gone when its last waiter has sent and
  the window is over.
* A wait at the gate may last up to ``max_wait_s`` (60 s, the transport's longest retry_after); a
  send that would wait longer raises ``RetryAfter`` instead of holding its worker, and the poller
  answers the update again after the wait (``telegram_queue.Retries``). The bound is per wait, not
  per send: a chat whose window is renewed is still served in order, one wait after the other.
  The global pause is never set for a chat.
* A 429 without a chat (``answerCallbackQuery``, ``setMyCommands``, ...) keeps the library's
  behaviour: retried ``max_retries`` times, pausing every request meanwhile. ``getUpdates`` does not
  pass a rate limiter at all (``ExtBot``).

The transport (``telegram_transport``) passes a 429 that names a chat straight on, so that this
gate, which sees every send to the chat, is the one place that waits for it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from telegram.error import RetryAfter
from telegram.ext import AIORateLimiter

log = logging.getLogger(__name__)

MAX_WAIT_S = 60.0  # the longest wait at a chat's gate; a longer retry_after goes to the poller
MAX_RETRIES = 3  # a 429 that names no chat: the library's tries, each pausing every send
MARGIN_S = 0.1  # added to every retry_after, as the library does
SWEEP_AT = 512  # from this many gates on, idle ones are swept (the library does so for its group limiters)

Callback = Callable[..., Coroutine[Any, Any, Any]]


def retry_seconds(error: RetryAfter) -> float:
    """``RetryAfter.retry_after`` in seconds: an int in PTB 22, a timedelta with PTB_TIMEDELTA=1 (and later)."""
    value: Any = error.retry_after
    total = getattr(value, "total_seconds", None)
    return float(total()) if callable(total) else float(value)


def chat_of(data: dict[str, Any]) -> str | None:
    """The chat a Bot API call is for (``chat_id``), as one key for ``-100123`` and ``"-100123"``."""
    chat = data.get("chat_id")
    return None if chat is None else str(chat)


class _ChatRefused(Exception):
    """A 429 for the chat of the request, carried past the library's handler (which would pause everyone)."""

    def __init__(self, error: RetryAfter) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass
class _Gate:
    """One chat under flood control: closed until ``until`` (loop time); ``lock`` lets its sends out one by one."""

    until: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    waiting: int = 0

    def idle(self, now: float) -> bool:
        return self.waiting == 0 and now >= self.until


class ChatFloodLimiter(AIORateLimiter):
    """``AIORateLimiter`` whose 429 for one chat holds that chat only (see the module docstring).

    ``paced=False`` switches the library's pacing off (tests and benches that send thousands of
    messages); the flood control per chat and the retries stay.
    """

    def __init__(self, *, paced: bool = True) -> None:
        if paced:
            super().__init__(max_retries=MAX_RETRIES)
        else:
            super().__init__(overall_max_rate=0, group_max_rate=0, max_retries=MAX_RETRIES)
        self.max_wait_s = MAX_WAIT_S  # an attribute: a test shortens it
        self._gates: dict[str, _Gate] = {}

    async def process_request(
        self,
        callback: Callback,
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> Any:
        chat = chat_of(data)
        if chat is None:
            return await super().process_request(callback, args, kwargs, endpoint, data, rate_limit_args)
        loop = asyncio.get_running_loop()
        gate = self._gate(chat, loop.time())
        if gate is None:
            try:
                return await self._send(callback, args, kwargs, endpoint, data, rate_limit_args)
            except _ChatRefused as exc:
                gate = self._close(chat, exc.error)
        return await self._through(gate, chat, callback, args, kwargs, endpoint, data, rate_limit_args)

    async def _through(self, gate: _Gate, chat: str, *request: Any) -> Any:
        """Waits for the gate's turn and window, then sends; a new 429 keeps the turn and waits again."""
        loop = asyncio.get_running_loop()
        gate.waiting += 1
        try:
            async with gate.lock:  # taken at once by the send the 429 answered: nothing can come between
                while True:
                    wait = gate.until - loop.time()
                    if wait > self.max_wait_s:
                        log.warning(
                            "chat %s stays under Telegram flood control for %.0f s more; the answer is sent later",
                            chat,
                            wait,
                            extra={"event": "flood_control_handed_on", "chat": chat},
                        )
                        raise RetryAfter(dt.timedelta(seconds=wait))
                    if wait > 0:
                        await asyncio.sleep(wait)
                    try:
                        return await self._send(*request)
                    except _ChatRefused as exc:
                        self._close(chat, exc.error)
        finally:
            gate.waiting -= 1
            if gate.idle(loop.time()) and self._gates.get(chat) is gate:
                del self._gates[chat]

    async def _send(
        self,
        callback: Callback,
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> Any:
        """One try through the library's pacing; a 429 comes out as ``_ChatRefused``, not as its global pause."""

        async def once(*a: Any, **kw: Any) -> Any:
            try:
                return await callback(*a, **kw)
            except RetryAfter as exc:
                raise _ChatRefused(exc) from None

        return await super().process_request(once, args, kwargs, endpoint, data, rate_limit_args)

    def _close(self, chat: str, error: RetryAfter) -> _Gate:
        """Closes (or keeps closed) ``chat``'s gate until ``error``'s retry_after has passed."""
        now = asyncio.get_running_loop().time()
        until = now + retry_seconds(error) + MARGIN_S
        gate = self._gate(chat, now)
        if gate is None:
            gate = self._gates[chat] = _Gate(until)
            log.info(
                "chat %s is under Telegram flood control for %.0f s; its sends wait, other chats go on",
                chat,
                until - now,
                extra={"event": "flood_control", "chat": chat},
            )
        gate.until = max(gate.until, until)
        return gate

    def _gate(self, chat: str, now: float) -> _Gate | None:
        """The chat's gate while it matters (closed, or sends still waiting at it); drops idle ones."""
        if len(self._gates) > SWEEP_AT:
            for key in [k for k, g in self._gates.items() if g.idle(now)]:
                del self._gates[key]
        gate = self._gates.get(chat)
        if gate is not None and gate.idle(now):
            del self._gates[chat]
            return None
        return gate

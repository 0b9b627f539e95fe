"""The fence before every send of a shared worker: an answer goes out only while its update's claim is still ours.

A worker paused past its lease (SIGSTOP, a long GC, a frozen event loop) wakes up holding updates
another worker has claimed and answered since. Its handlers do not know that, so the check sits
under them, in the HTTP layer: while ``SharedConsumer`` handles an update it sets ``GUARD`` (a
context variable, so it follows the handler and only it), and ``FencedRequest`` asks the guard
before every Bot API call that changes something a user sees (every method but ``get…``). The
guard asks the database in one statement that compares the claim's fencing token and extends the
lease (``SharedInbox.hold``); a claim that is gone, or a database that cannot say, raises
``LeaseLost`` instead of sending, and the consumer drops the update (its new holder answers it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from telegram.error import TelegramError
from telegram.request import BaseRequest, RequestData

__all__ = ["GUARD", "FencedRequest", "Guard", "LeaseLost"]


class LeaseLost(TelegramError):
    """The update's claim is no longer this worker's (or could not be confirmed): nothing was sent."""


class Guard:
    """One update's fence: ``check`` says whether its claim still holds (True also extends the lease)."""

    def __init__(self, check: Callable[[], Awaitable[bool]]) -> None:
        self.check = check
        self.lost = False
        self.settled = False  # marked done: a send after that (a feel stream's edits) is no longer fenced

    async def admit(self) -> None:
        if self.settled:
            return
        if self.lost or not await self.check():
            self.lost = True
            raise LeaseLost("the update's lease is no longer this worker's; not sending")


GUARD: ContextVar[Guard | None] = ContextVar("fitbot_telegram_guard", default=None)


def changes_something(url: str) -> bool:
    """Every Bot API method but the read-only ``get…`` ones (getMe, getChatMember, getFile, getUpdates)."""
    return not url.rsplit("/", 1)[-1].startswith("get")


class FencedRequest(BaseRequest):
    """Another request (``telegram_transport.AiohttpRequest``) with the guard asked before each call."""

    def __init__(self, inner: BaseRequest) -> None:
        self.inner = inner

    @property
    def read_timeout(self) -> float | None:
        return self.inner.read_timeout

    async def initialize(self) -> None:
        await self.inner.initialize()

    async def shutdown(self) -> None:
        await self.inner.shutdown()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = BaseRequest.DEFAULT_NONE,
        write_timeout: Any = BaseRequest.DEFAULT_NONE,
        connect_timeout: Any = BaseRequest.DEFAULT_NONE,
        pool_timeout: Any = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        guard = GUARD.get()
        if guard is not None and changes_something(url):
            await guard.admit()
        return await self.inner.do_request(
            url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
        )

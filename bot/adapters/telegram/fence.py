"""The fence before every send of a shared worker: an answer goes out only while its update's claim is still ours.

A worker paused past its lease (SIGSTOP, a long GC, a frozen event loop) wakes up holding updates
another worker has claimed and answered since. Its handlers do not know that, so the check sits
under them, in the HTTP layer: while ``SharedConsumer`` handles an update it sets ``GUARD`` (a
context variable, so it follows the handler and only it), and ``FencedRequest`` asks the guard
before every Bot API call that changes something a user sees (every method but ``get…``). The
guard asks the database in one statement that compares the claim's fencing token and extends the
lease (``SharedInbox.hold``); a claim that is gone, or a database that cannot say, raises
``LeaseLost`` instead of sending, and the consumer drops the update (its new holder answers it).

The fence stands before the answer's first message only. Once that is out (``Guard.delivered``
records it, ``SharedInbox.began``) the answer is this worker's to finish: the rest of the card
(the chart after the text, paced a second apart in a private chat) follows unfenced, and a worker
that claims the row later closes it without answering again. So a pause or a clock jump in the
middle of a card neither cuts it short nor sends its first part twice.
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
    """One update's fence: ``check`` says whether its claim still holds (True also extends the lease);
    ``began`` records that its first message went out."""

    def __init__(self, check: Callable[[], Awaitable[bool]], began: Callable[[], Awaitable[None]]) -> None:
        self.check, self.began = check, began
        self.lost = False
        self.sending = False  # the first message went out: the rest of the answer follows unfenced
        self.settled = False  # marked done: a send after that (a feel stream's edits) is no longer fenced

    async def admit(self) -> None:
        if self.settled or self.sending:
            return
        if self.lost or not await self.check():
            self.lost = True
            raise LeaseLost("the update's lease is no longer this worker's; not sending")

    async def delivered(self) -> None:
        if not self.sending and not self.settled:
            self.sending = True
            await self.began()


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
        fenced = guard is not None and changes_something(url)
        if guard is not None and fenced:
            await guard.admit()
        status, payload = await self.inner.do_request(
            url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
        )
        if guard is not None and fenced and 200 <= status < 300:
            await guard.delivered()
        return status, payload

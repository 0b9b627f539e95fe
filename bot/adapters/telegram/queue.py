"""Who is answered next: queued Telegram updates by chat, then by user, served round robin at both levels;
and when a network-failed answer is tried again (``Retries``).

Round robin by user alone was not enough: 60 askers in one busy group are 60 users, and under
Telegram's pacing for groups (20 messages a minute, ``AIORateLimiter``) their answers held every
worker while 30 private users waited a median 77 s. So the queue first rotates over chats, then
over the users of a chat, and a chat may hold at most ``per_chat`` workers at once: a slow group
waits for its own pacing on a few workers while everyone else is answered on the others.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, OrderedDict, deque
from typing import Generic, TypeVar

from telegram import Update
from telegram.error import RetryAfter

from bot.adapters.telegram.flood import retry_seconds

log = logging.getLogger(__name__)

T = TypeVar("T")


def queue_key(update: Update) -> tuple[str, str]:
    """(chat, user) an update waits under: the sender, and the chat it came from (else the sender)."""
    user, chat = update.effective_user, update.effective_chat
    who = f"u{user.id}" if user is not None else (f"c{chat.id}" if chat is not None else "anon")
    return (f"c{chat.id}" if chat is not None else who), who


class FairQueue(Generic[T]):
    """FIFO per (chat, user), round robin over chats and, within a chat, over its users.

    ``get`` hands out the next item whose chat holds fewer than ``per_chat`` items taken and not yet
    ``release``d (no cap when None; ``caps`` sets other caps for some chats): one chat cannot occupy
    every worker.
    """

    def __init__(self, per_chat: int | None = None, caps: dict[str, int] | None = None) -> None:
        self.per_chat = per_chat
        self.caps = caps or {}  # chats with a cap of their own
        self._chats: OrderedDict[str, OrderedDict[str, deque[T]]] = OrderedDict()
        self._busy: Counter[str] = Counter()
        self._size = 0
        self._ready = asyncio.Event()

    def __len__(self) -> int:
        return self._size

    def put(self, user: str, item: T, chat: str | None = None) -> None:
        users = self._chats.setdefault(chat or user, OrderedDict())
        users.setdefault(user, deque()).append(item)
        self._size += 1
        self._ready.set()

    async def get(self) -> T:
        """The next item (see ``take``), for callers that do not cap chats."""
        return (await self.take())[1]

    async def take(self) -> tuple[str, T]:
        """The next item and its chat, waiting until one is free; pair it with ``release(chat)``."""
        while True:
            chat = next((c for c in self._chats if self._free(c)), None)
            if chat is not None:
                break
            self._ready.clear()
            await self._ready.wait()
        users = self._chats.pop(chat)
        user, items = next(iter(users.items()))
        item = items.popleft()
        del users[user]
        if items:
            users[user] = items  # this user to the back of the chat's round
        if users:
            self._chats[chat] = users  # this chat to the back of the round
        self._size -= 1
        if self.per_chat is not None or chat in self.caps:
            self._busy[chat] += 1
        return chat, item

    def _free(self, chat: str) -> bool:
        cap = self.caps.get(chat, self.per_chat)
        return cap is None or self._busy[chat] < cap

    def release(self, chat: str) -> None:
        """The item taken from ``chat`` is finished: the chat may have another worker."""
        if self._busy[chat] > 1:
            self._busy[chat] -= 1
        else:
            self._busy.pop(chat, None)
        self._ready.set()


class Retries:
    """Answers that failed on the network, queued again after a back-off until their time budget is spent.

    The time an update waits for its chat's flood control (``RetryAfter``, from ``telegram_flood``
    when the wait is too long to hold a worker for) is not counted: a window of five minutes would
    otherwise lose the answer, which Telegram will take once the window is over.
    """

    def __init__(self, queue: FairQueue[Update], budget_s: float, backoff_s: tuple[float, ...]) -> None:
        self.queue, self.budget_s, self.backoff_s = queue, budget_s, backoff_s
        self._tries: dict[int, tuple[float, int]] = {}  # update_id -> (first failure, attempts)
        self._timers: set[asyncio.TimerHandle] = set()

    def later(self, update: Update, error: BaseException) -> bool:
        """Queues ``update`` again after its back-off (``retry_after`` at least); False once its budget is spent."""
        now = time.monotonic()
        first, attempts = self._tries.get(update.update_id, (now, 0))
        wait = self.backoff_s[min(attempts, len(self.backoff_s) - 1)]
        if isinstance(error, RetryAfter):  # Telegram said when: waiting out flood control spends no budget
            wait = max(wait, retry_seconds(error))
            first += wait
        if now + wait - first > self.budget_s:
            log.warning(
                "gave up answering update %s after %.0f s of network errors (%s)",
                update.update_id,
                now - first,
                error.__class__.__name__,
                extra={"event": "send_given_up", "update_id": update.update_id},
            )
            return False
        if attempts == 0:
            log.info("answer to update %s failed (%s); retrying", update.update_id, error.__class__.__name__)
        self._tries[update.update_id] = (first, attempts + 1)

        def again(handle: list[asyncio.TimerHandle]) -> None:
            self._timers.discard(handle[0])
            chat, user = queue_key(update)
            self.queue.put(user, update, chat)

        holder: list[asyncio.TimerHandle] = []
        holder.append(asyncio.get_running_loop().call_later(wait, again, holder))
        self._timers.add(holder[0])
        return True

    def forget(self, update_id: int) -> None:
        self._tries.pop(update_id, None)

    def cancel(self) -> int:
        """Cancels the waiting retries (on stop: they stay open in the inbox); returns how many there were."""
        for timer in self._timers:
            timer.cancel()
        count, self._timers = len(self._timers), set()
        return count

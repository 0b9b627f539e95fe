"""Who is answered next: queued Telegram updates by chat, then by user, served round robin at both levels.

Round robin by user alone was not enough: 60 askers in one busy group are 60 users, and under
Telegram's pacing for groups (20 messages a minute, ``AIORateLimiter``) their answers held every
worker while 30 private users waited a median 77 s. So the queue first rotates over chats, then
over the users of a chat, and a chat may hold at most ``per_chat`` workers at once: a slow group
waits for its own pacing on a few workers while everyone else is answered on the others.
"""

from __future__ import annotations

import asyncio
from collections import Counter, OrderedDict, deque
from typing import Generic, TypeVar

from telegram import Update

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

"""Long polling with a durable inbox and fair dispatch: no Telegram question is lost on restart or crash.

PTB's own ``Updater`` confirms updates as it fetches them (the next ``getUpdates`` carries the new
offset), so everything fetched but not yet answered died with the process: with production send
pacing a backlog cannot drain in the 30 s stop grace. Here:

1. ``getUpdates`` fetches a batch; the batch is written to ``tg_inbox`` (one durable statement)
   *before* the next ``getUpdates`` confirms it to Telegram.
2. Workers answer from the inbox and mark each update done as soon as its answer went out.
3. On stop, fetching ends at once; answers in flight and queued ones get ``grace_s`` to finish;
   what is left stays in the inbox. On the next start every open row is answered first, and the
   offset continues from the highest stored ``update_id``. An update Telegram delivers again is
   recognised by its id and not answered twice.

Without a database (tests, the console) nothing is durable, so the poller fetches only as much as
it can answer in the grace period (``max_backlog``) and confirms only what it answered.

Fairness: queued updates wait per user, and workers take them round robin across users, so under
the global send pacing one user's flood delays mostly that user, not everyone else.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
from collections import OrderedDict, deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

from telegram import Update
from telegram.error import Conflict, InvalidToken, NetworkError, TelegramError, TimedOut

if TYPE_CHECKING:
    from bot.adapters.telegram_parts import TelegramApp
    from catalog.inbox import InboxStore

log = logging.getLogger(__name__)

GRACE_S = 20.0  # systemd and compose give 30 s; the rest is for closing connections
FINISH_S = 5.0  # the end of the grace: answers under way finish, no new one starts
FOLD_EVERY = 200  # journaled marks are folded into the inbox table this often
MAX_BACKLOG = 300  # without a durable inbox: about what production pacing (15 cards/s) answers in the grace
BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0)


def user_key(update: Update) -> str:
    """Whose turn an update takes: the sender, else the chat."""
    user = update.effective_user
    if user is not None:
        return f"u{user.id}"
    chat = update.effective_chat
    return f"c{chat.id}" if chat is not None else "anon"


class FairQueue:
    """Per-user FIFO queues served round robin: one user's 300 messages wait behind everyone's next one."""

    def __init__(self) -> None:
        self._queues: OrderedDict[str, deque[Update]] = OrderedDict()
        self._size = 0
        self._ready = asyncio.Event()

    def __len__(self) -> int:
        return self._size

    def put(self, key: str, update: Update) -> None:
        self._queues.setdefault(key, deque()).append(update)
        self._size += 1
        self._ready.set()

    async def get(self) -> Update:
        while not self._queues:
            self._ready.clear()
            await self._ready.wait()
        key, queue = next(iter(self._queues.items()))
        update = queue.popleft()
        self._size -= 1
        del self._queues[key]
        if queue:
            self._queues[key] = queue  # to the back of the round
        return update


class Poller:
    """Fetches updates into the inbox and answers them with ``workers`` concurrent handlers."""

    def __init__(
        self,
        app: TelegramApp,
        inbox: InboxStore | None,
        *,
        allowed_updates: Sequence[str],
        poll_timeout: int = 10,
        workers: int = 16,
        grace_s: float = GRACE_S,
        max_backlog: int = MAX_BACKLOG,
    ) -> None:
        self.app, self.inbox = app, inbox
        self.allowed_updates = list(allowed_updates)
        self.poll_timeout, self.workers, self.grace_s, self.max_backlog = poll_timeout, workers, grace_s, max_backlog
        self.queue = FairQueue()
        self.offset: int | None = None
        self.answered = 0
        self._in_flight: set[int] = set()
        self._unanswered: set[int] = set()  # without an inbox: fetched, not yet answered
        self.fetcher: asyncio.Task[None] | None = None
        self._workers: list[asyncio.Task[None]] = []
        self._conflict_logged = False
        self._marked = 0
        self._closing = False
        self._put_back = 0
        self._folding: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Re-queues what an earlier process left unanswered, then starts fetching and answering."""
        if self.inbox is not None:
            try:
                await self._resume()
            except (sqlite3.Error, OSError, ValueError):  # a locked or damaged inbox must not stop the bot
                log.warning("the inbox could not be read; starting without the questions left in it", exc_info=True)
        self._workers = [asyncio.create_task(self._work(), name=f"tg-worker-{i}") for i in range(self.workers)]
        self.fetcher = asyncio.create_task(self._fetch(), name="tg-poller")

    async def _resume(self) -> None:
        assert self.inbox is not None
        await self.inbox.fold()  # marks journaled by an earlier process, perhaps a killed one
        left = await self.inbox.open_items()
        for item in left:
            update = Update.de_json(json.loads(item.data), self.app.bot)
            self.queue.put(item.user_key, update)
        last = await self.inbox.last_update_id()
        self.offset = last + 1 if last is not None else None
        if left:
            log.info("answering %d questions left from before the restart", len(left), extra={"event": "inbox"})
        await self.inbox.prune()

    async def stop(self) -> None:
        """Stops fetching now; gives queued and in-flight answers ``grace_s``; leaves the rest in the inbox.

        The last ``FINISH_S`` of the grace take no new update: the answers under way finish instead of
        being cut off mid-send (a cut-off answer Telegram already took would be sent again later).
        """
        if self.fetcher is not None:
            self.fetcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.fetcher
        loop = asyncio.get_running_loop()
        finish = min(FINISH_S, self.grace_s / 2)
        deadline = loop.time() + self.grace_s - finish
        while (len(self.queue) or self._in_flight) and loop.time() < deadline:
            await asyncio.sleep(0.05)
        self._closing = True  # workers take nothing new; what they hold gets ``finish`` seconds
        deadline = loop.time() + finish
        while self._in_flight and loop.time() < deadline:
            await asyncio.sleep(0.02)
        left = len(self.queue) + len(self._in_flight) + self._put_back
        for task in self._workers:
            task.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        await self.flush()
        if left:
            where = "kept in the inbox for the next start" if self.inbox is not None else "not confirmed to Telegram"
            log.warning("%d questions not answered before the stop; %s", left, where, extra={"event": "inbox"})
        if self.inbox is None:
            await self._confirm()

    async def _confirm(self) -> None:
        """Without an inbox: confirm to Telegram what was answered, nothing after the first unanswered one."""
        upto = min(self._unanswered) if self._unanswered else self.offset
        if upto is None:
            return
        with contextlib.suppress(TelegramError):
            await self.app.bot.get_updates(offset=upto, limit=1, timeout=0, allowed_updates=self.allowed_updates)

    # ---- fetching

    async def _fetch(self) -> None:
        failures = 0
        while True:
            if self.inbox is None and len(self.queue) >= self.max_backlog:
                await asyncio.sleep(0.1)  # fetch only what can still be answered within the grace period
                continue
            try:
                updates = await self.app.bot.get_updates(
                    offset=self.offset,
                    timeout=self.poll_timeout,
                    allowed_updates=self.allowed_updates,
                    limit=100 if self.inbox is not None else max(1, min(100, self.max_backlog - len(self.queue))),
                )
            except InvalidToken:
                raise  # the adapter's supervisor reports it and retries later
            except Conflict:
                failures += 1
                self._log_conflict()
                await asyncio.sleep(BACKOFF_S[min(failures, len(BACKOFF_S)) - 1])
                continue
            except (TimedOut, NetworkError) as exc:
                failures += 1
                wait = BACKOFF_S[min(failures, len(BACKOFF_S)) - 1]
                log.warning("getUpdates failed (%s); trying again in %.0f s", exc.__class__.__name__, wait)
                await asyncio.sleep(wait)
                continue
            except TelegramError as exc:  # anything else Telegram says: keep polling, slower
                failures += 1
                log.warning("getUpdates refused (%s); trying again", exc.__class__.__name__)
                await asyncio.sleep(BACKOFF_S[min(failures, len(BACKOFF_S)) - 1])
                continue
            if failures and self._conflict_logged:
                log.info("polling again: the other instance stopped")
            failures, self._conflict_logged = 0, False
            if updates:
                await self._take(updates)

    def _log_conflict(self) -> None:
        """Two pollers on one token: one clear line, not a traceback per poll."""
        if not self._conflict_logged:
            log.error(
                "another process is polling this Telegram bot token (409 Conflict); only one may."
                " Waiting and retrying until it stops.",
                extra={"event": "telegram_conflict"},
            )
            self._conflict_logged = True

    async def _take(self, updates: Sequence[Update]) -> None:
        """Persist the batch, then queue what is new; the next getUpdates confirms it to Telegram."""
        ids = [u.update_id for u in updates]
        fresh: list[Update] | None = None
        if self.inbox is not None:
            from catalog.inbox import InboxItem

            try:
                new_ids = await self.inbox.is_new(ids)
                fresh = [u for u in updates if u.update_id in new_ids]
                await self.inbox.add([InboxItem(u.update_id, user_key(u), json.dumps(u.to_dict())) for u in fresh])
            except (sqlite3.Error, OSError):  # locked or full: answer anyway, only not durably
                log.warning("the inbox cannot be written; answering %d updates without it", len(ids), exc_info=True)
                fresh = None
        if fresh is None:
            fresh = list(updates)
            self._unanswered.update(u.update_id for u in fresh)
        self.offset = max(ids) + 1
        for update in fresh:
            self.queue.put(user_key(update), update)

    # ---- answering

    async def _work(self) -> None:
        while True:
            update = await self.queue.get()
            if self._closing:  # stays open in the inbox: answered after the next start
                self._put_back += 1
                self._unanswered.add(update.update_id)
                return
            self._in_flight.add(update.update_id)
            try:
                await self.app.process_update(update)  # handler errors go to the error handler, not here
            except Exception:
                log.exception("update %s failed outside its handler", update.update_id)
            finally:
                self._in_flight.discard(update.update_id)
            await self._done(update.update_id)

    async def _done(self, update_id: int) -> None:
        """Marks an answered update: in the journal at once, in the table in batches (``catalog.inbox``)."""
        self.answered += 1
        self._unanswered.discard(update_id)
        if self.inbox is None:
            return
        try:
            self.inbox.mark(update_id)
        except OSError:  # a full disk must not stop the answers; at worst this one is repeated after a crash
            log.warning("could not journal update %s as answered", update_id)
        self._marked += 1
        if self._marked >= FOLD_EVERY and (self._folding is None or self._folding.done()):
            self._marked = 0
            self._folding = asyncio.create_task(self._fold())

    async def _fold(self) -> None:
        try:
            await self.inbox.fold()  # type: ignore[union-attr]
        except Exception:
            log.warning("could not fold the answered-updates journal", exc_info=True)

    async def flush(self) -> None:
        """Folds every journaled mark into the inbox table."""
        if self._folding is not None:
            await asyncio.gather(self._folding, return_exceptions=True)
        if self.inbox is not None:
            await self._fold()

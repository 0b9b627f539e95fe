"""Long polling with a durable inbox and fair dispatch: no Telegram question is lost on restart, crash or outage.

PTB's own ``Updater`` confirms updates as it fetches them (the next ``getUpdates`` carries the new
offset), so everything fetched but not yet answered died with the process. Here:

1. ``getUpdates`` fetches a batch; the batch is written to ``tg_inbox`` (one durable statement)
   *before* the next ``getUpdates`` confirms it to Telegram. While the inbox cannot be written the
   offset stays where it is and the same batch is fetched again (``telegram_intake``).
2. Workers answer from the inbox and mark each update done as soon as its answer went out. An
   answer that failed on the network (refused, reset, timed out, flood control given up) is not
   done: it is queued again with back-off until ``SEND_BUDGET_S`` has passed since its first
   failure, then closed as failed with a log line. An update whose handler raised for any other
   reason is closed as failed at once (the error handler reported it, once).
3. On stop, fetching ends at once; answers in flight and queued ones get ``grace_s`` to finish;
   what is left (also what waits for a retry) stays in the inbox. On the next start every open
   row is answered first, and the offset continues from the highest stored ``update_id``; an
   update that was being handled when the process died twice is quarantined instead.

Without a database (tests, the console) nothing is durable, so the poller fetches only as much as
it can answer in the grace period (``max_backlog``) and confirms only what it answered.

Fairness: ``telegram_queue.FairQueue``, round robin by chat, then by user, a few workers per chat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

from telegram import Update
from telegram.error import BadRequest, Conflict, InvalidToken, NetworkError, RetryAfter, TelegramError, TimedOut

from bot.adapters.telegram.intake import SUSPECTS, Batch, Intake, StateCallback, fetch, report_poison
from bot.adapters.telegram.queue import FairQueue, Retries, queue_key

if TYPE_CHECKING:
    from bot.adapters.telegram.parts import TelegramApp
    from bot.handover import UpdateInbox

__all__ = ["GRACE_S", "FairQueue", "Poller", "retryable"]

log = logging.getLogger(__name__)

GRACE_S = 20.0  # systemd and compose give 30 s; the rest is for closing connections
FINISH_S = 5.0  # the end of the grace: answers under way finish, no new one starts
FOLD_EVERY = 200  # journaled marks are folded into the inbox table this often
MAX_BACKLOG = 300  # without a durable inbox: about what production pacing (15 cards/s) answers in the grace
BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0)
STORE_RETRY_S = (0.5, 1.0, 2.0)  # an inbox that cannot be written is tried again this often (the last repeats)
SEND_BUDGET_S = 120.0  # an answer failing on the network is retried this long after its first failure
SEND_BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0)
JOURNAL_FAILS = {"event": "journal_unwritable"}
PER_CHAT = 2  # workers one chat may hold at once (of 16): a paced group cannot stall the others


def retryable(error: BaseException | None) -> bool:
    """A network failure (the answer may not have gone out), not a refusal: worth sending again."""
    return isinstance(error, NetworkError | RetryAfter) and not isinstance(error, BadRequest)


class Poller:
    """Fetches updates into the inbox and answers them with ``workers`` concurrent handlers."""

    def __init__(
        self,
        app: TelegramApp,
        inbox: UpdateInbox | None,
        *,
        allowed_updates: Sequence[str],
        poll_timeout: int = 10,
        workers: int = 16,
        grace_s: float = GRACE_S,
        max_backlog: int = MAX_BACKLOG,
        on_state: StateCallback | None = None,
        send_budget_s: float = SEND_BUDGET_S,
    ) -> None:
        self.app = app
        self.intake = Intake(inbox, app.bot, on_state) if inbox is not None else None
        self.allowed_updates = list(allowed_updates)
        self.poll_timeout, self.workers, self.grace_s, self.max_backlog = poll_timeout, workers, grace_s, max_backlog
        self.queue: FairQueue[Update] = FairQueue(per_chat=PER_CHAT, caps={SUSPECTS: 1})
        self.offset: int | None = None
        self.answered = 0
        self.failed: dict[int, BaseException] = {}  # update_id -> what its handler raised (from the error handler)
        self._in_flight: set[int] = set()
        self._unanswered: set[int] = set()  # without an inbox: fetched, not yet answered
        self.retries = Retries(self.queue, send_budget_s, SEND_BACKOFF_S)
        self.fetcher: asyncio.Task[None] | None = None
        self._workers: list[asyncio.Task[None]] = []
        self._conflict_logged = False
        self._marked = 0
        self._closing = False
        self._put_back = 0
        self._folding: asyncio.Task[None] | None = None
        self._unjournaled: deque[tuple[int, str | None]] = deque()  # marks the journal could not take yet
        self._journal_failing = False

    @property
    def inbox(self) -> UpdateInbox | None:
        return self.intake.inbox if self.intake is not None else None

    async def start(self) -> None:
        """Re-queues what an earlier process left unanswered, then starts fetching and answering."""
        if self.intake is not None:
            try:
                left, self.offset = await self.intake.resume()
            except Exception:  # a locked or damaged inbox must not stop the bot; fetching tells if it stays so
                log.warning("the inbox could not be read; starting without the questions left in it", exc_info=True)
                left = []
            for chat, user, update in left:
                self.queue.put(user, update, chat)
            if left:
                log.info("answering %d questions left from before the restart", len(left), extra={"event": "inbox"})
        self._workers = [asyncio.create_task(self._work(), name=f"tg-worker-{i}") for i in range(self.workers)]
        self.fetcher = asyncio.create_task(self._fetch(), name="tg-poller")

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
        left = len(self.queue) + len(self._in_flight) + self._put_back + self.retries.cancel()
        for task in self._workers:
            task.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._journal()
        await self.flush()
        if left:
            where = "kept in the inbox for the next start" if self.inbox is not None else "not confirmed to Telegram"
            log.warning("%d questions not answered before the stop; %s", left, where, extra={"event": "inbox"})
        if self.intake is None:
            await self._confirm()
        else:
            await self.intake.close()

    async def _confirm(self) -> None:
        """Without an inbox: confirm to Telegram what was answered, nothing after the first unanswered one."""
        upto = min(self._unanswered) if self._unanswered else self.offset
        if upto is None:
            return
        with contextlib.suppress(TelegramError):
            await self.app.bot.get_updates(offset=upto, limit=1, timeout=0, allowed_updates=self.allowed_updates)

    # ---- fetching

    async def _fetch(self) -> None:
        failures = unsafe = 0
        while True:
            if self.intake is None and len(self.queue) >= self.max_backlog:
                await asyncio.sleep(0.1)  # fetch only what can still be answered within the grace period
                continue
            try:
                batch = await fetch(
                    self.app.bot,
                    offset=self.offset,
                    timeout=self.poll_timeout if not unsafe else 0,
                    allowed=self.allowed_updates,
                    limit=100 if self.intake is not None else max(1, min(100, self.max_backlog - len(self.queue))),
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
            if await self._take(batch):
                unsafe = 0
                self._journal()  # marks a failing journal held back, now that the disk took a write
            else:  # not stored, so not confirmed: the same batch comes again after a pause
                unsafe += 1
                await asyncio.sleep(STORE_RETRY_S[min(unsafe, len(STORE_RETRY_S)) - 1])

    def _log_conflict(self) -> None:
        """Two pollers on one token: one clear line, not a traceback per poll."""
        if not self._conflict_logged:
            log.error(
                "another process is polling this Telegram bot token (409 Conflict); only one may."
                " Waiting and retrying until it stops.",
                extra={"event": "telegram_conflict"},
            )
            self._conflict_logged = True

    async def _take(self, batch: Batch) -> bool:
        """Persist the batch, then queue what is new; the next getUpdates confirms it to Telegram.

        Returns False (nothing confirmed, nothing queued) when the inbox could not store it.
        """
        if batch.next_offset is None:
            return True
        if self.intake is not None:
            if not await self.intake.store(batch):
                return False
        else:
            self._unanswered.update(u.update_id for u in batch.updates)
            for update_id, _, reason in batch.poison:
                report_poison(update_id, reason)
        self.offset = batch.next_offset
        for update in batch.updates:
            chat, user = queue_key(update)
            self.queue.put(user, update, chat)
        return True

    # ---- answering

    async def _work(self) -> None:
        while True:
            chat, update = await self.queue.take()
            try:
                if self._closing:  # stays open in the inbox: answered after the next start
                    self._put_back += 1
                    self._unanswered.add(update.update_id)
                    return
                await self._answer(update)
            finally:
                self.queue.release(chat)

    async def _answer(self, update: Update) -> None:
        uid = update.update_id
        self._in_flight.add(uid)
        if self.inbox is not None:
            try:
                self.inbox.started(uid)  # crash quarantine: two deaths on this update and it is set aside
            except OSError:
                log.warning("could not journal the start of update %s", uid)
        try:
            await self.app.process_update(update)  # handler errors go to the error handler, which tells ``failed``
            error = self.failed.pop(uid, None)
        except Exception as exc:
            log.exception("update %s failed outside its handler", uid)
            error = exc
        finally:
            self._in_flight.discard(uid)
        if error is not None and retryable(error) and (self._closing or self.retries.later(update, error)):
            return  # sent again later, or (stopping) left open in the inbox for the next start
        self.retries.forget(uid)
        reason = None if error is None else f"{'send' if retryable(error) else 'handler'}: {error.__class__.__name__}"
        await self._done(uid, reason)

    async def _done(self, update_id: int, failed: str | None = None) -> None:
        """Marks a settled update: in the journal at once, in the table in batches (``storage.inbox``)."""
        self.answered += failed is None
        self._unanswered.discard(update_id)
        if self.inbox is None:
            return
        self._unjournaled.append((update_id, failed))
        self._journal()
        self._marked += 1
        if self._marked >= FOLD_EVERY and (self._folding is None or self._folding.done()):
            self._marked = 0
            self._folding = asyncio.create_task(self._fold())

    def _journal(self) -> None:
        """Journals the waiting marks; one the disk refuses (full, read-only) waits for the next mark or
        fetch, said once: dropped, its update would be answered again after a crash."""
        while self._unjournaled and self.inbox is not None:
            try:
                self.inbox.mark(*self._unjournaled[0])
            except OSError as exc:
                if not self._journal_failing:
                    why, self._journal_failing = exc.__class__.__name__, True
                    log.warning("could not journal answered updates (%s); keeping them", why, extra=JOURNAL_FAILS)
                return
            self._unjournaled.popleft()
        if self._journal_failing:
            self._journal_failing = False
            log.info("answered updates journaled again", extra={"event": "journal_writable"})

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

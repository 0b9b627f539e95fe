"""Telegram served by several processes from the shared inbox (PostgreSQL, ``FITBOT_DATABASE_URL``).

Ingest, in one of two ways, writes each update to the shared inbox before Telegram hears it arrived:

* long polling: only the elected leader (job ``telegram-poll``) calls ``getUpdates``; a batch is
  stored, and the next ``getUpdates`` (whose offset confirms it) is sent only after that. When the
  leader dies another worker is elected within about a second and goes on from the highest stored
  ``update_id``;
* webhook: every worker runs a receiver behind the reverse proxy; it checks Telegram's secret
  token, stores the update, and only then answers 200 (a failed store answers 503, so Telegram
  delivers it again).

Every worker answers: ``SharedConsumer`` claims batches under a lease (``bot.handover.SharedQueue``)
whenever it has a free handler, is woken by a ``NOTIFY`` when updates arrive, serves them fairly
by chat and user (``telegram_queue.FairQueue``), renews the leases of what it holds, marks each
update done once its answer went out, and on SIGTERM claims nothing more, finishes what it started
within the grace period and releases the rest to the other workers. An answer that failed on the
network goes back to the inbox for a later try by any worker; an update tried ``MAX_CLAIMS`` times
is set aside. Every send is fenced (``telegram_fence``): a worker whose lease ran out while it was
paused drops the update instead of answering it a second time.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from telegram import Update
from telegram.error import Conflict, InvalidToken, RetryAfter, TelegramError

from bot.adapters.telegram.bot import ALLOWED_UPDATES, CONCURRENT_UPDATES, build_application
from bot.adapters.telegram.fence import GUARD, FencedRequest, Guard, LeaseLost
from bot.adapters.telegram.flood import retry_seconds
from bot.adapters.telegram.intake import item_of
from bot.adapters.telegram.poller import FINISH_S, GRACE_S, PER_CHAT, SEND_BACKOFF_S, retryable
from bot.adapters.telegram.queue import FairQueue
from bot.adapters.telegram.transport import AiohttpRequest
from bot.app.jobs import TELEGRAM_POLL, leadership, shared_database, shared_inbox
from bot.handover import ClaimedUpdate, Lease, SharedQueue

if TYPE_CHECKING:
    from aiohttp import web

    from bot.adapters.telegram.parts import TelegramApp
    from bot.service import Service

log = logging.getLogger(__name__)

IDLE_POLL_S = 0.5  # without a NOTIFY (it can be missed while reconnecting), look this often anyway
POLL_BACKOFF_S = 2.0
MAX_BODY = 1 << 20


class SharedConsumer:
    """Claims from the shared inbox and answers with ``workers`` concurrent handlers, fairly across users.

    Fenced: a send goes out only while the update's claim is still this worker's (``telegram_fence``);
    a renew that fails or finds a claim gone counts as a lost lease (the update is dropped here,
    its new holder answers it). A done mark the database refused is kept and written before
    anything new is claimed. Once ``stop`` is set nothing new is claimed.
    """

    def __init__(
        self, app: TelegramApp, inbox: SharedQueue, *, workers: int = CONCURRENT_UPDATES, grace_s: float = GRACE_S
    ):
        self.app, self.inbox, self.workers, self.grace_s = app, inbox, workers, grace_s
        self.queue: FairQueue[tuple[Lease, bool, Update]] = FairQueue(per_chat=PER_CHAT)  # (lease, begun, update)
        self.failed: dict[int, BaseException] = {}  # filled by the adapter's error handler (``on_error``)
        self.held: dict[int, int] = {}  # update_id -> fence of this worker's claim, until done (or lost)
        self.in_flight: set[int] = set()
        self.unmarked: dict[int, str | None] = {}  # answered, but the done mark is not written yet (retried)
        self.lost: set[Lease] = set()  # claims found gone (renew): queued or in flight, never sent
        self.dropped = 0  # updates not answered here because their lease was another worker's by then
        self.wake = asyncio.Event()
        self.answered = 0
        self._stop = asyncio.Event()
        self._draining = False  # stop() began: nothing new is claimed
        self._closing = False
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self, stop: asyncio.Event | None = None) -> None:
        """Starts claiming and answering; from the moment ``stop`` is set (SIGTERM) nothing new is claimed."""
        self._stop = stop or self._stop
        self._tasks = [asyncio.create_task(self._work(), name=f"tg-shared-{i}") for i in range(self.workers)]
        self._tasks += [asyncio.create_task(self._claim(), name="tg-claim"), asyncio.create_task(self._renew())]

    @property
    def claiming(self) -> bool:
        return not (self._stop.is_set() or self._draining)

    async def _claim(self) -> None:
        while True:
            await self._mark()  # marks first: a row answered here must be closed before anything is claimed
            free = self.workers - len(self.held)
            batch: Sequence[ClaimedUpdate] = []
            if free > 0 and self.claiming and not self.unmarked:
                try:
                    batch = await self.inbox.claim(free)
                except Exception:
                    log.warning("could not claim from the shared inbox", exc_info=True)
            for item in batch:
                self.held[item.update_id] = item.fence
                chat, _, user = item.user_key.partition("|")
                update = Update.de_json(json.loads(item.data), self.app.bot)
                self.queue.put(user or chat, ((item.update_id, item.fence), item.begun, update), chat)
            if not batch:
                self.wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), IDLE_POLL_S)

    async def _mark(self) -> None:
        """Writes the done marks the database refused before; what still fails waits for the next round."""
        for uid, reason in list(self.unmarked.items()):
            try:
                await self.inbox.done([uid], failed=reason)
            except Exception:
                return
            del self.unmarked[uid]
            self.held.pop(uid, None)
            log.info("marked update %s done after the database came back", uid, extra={"event": "inbox_marked"})

    async def _renew(self) -> None:
        """Every third of the lease; a lease not renewed (gone, or the database away) is lost."""
        while True:
            await asyncio.sleep(self.inbox.lease_s / 3)
            leases = list(self.held.items())
            try:
                kept = await self.inbox.renew(leases)
            except Exception as exc:
                kept = set()
                if leases:
                    log.warning("could not renew %d leases (%s); dropping them", len(leases), exc.__class__.__name__)
            for lease in leases:
                uid, fence = lease
                if uid not in kept and self.held.get(uid) == fence and uid not in self.unmarked:
                    del self.held[uid]
                    self.lost.add(lease)

    async def _hold(self, lease: Lease) -> bool:
        """The guard's question: is this claim still ours? (One statement; it extends the lease too.)

        A yes that took longer than a third of the lease to arrive is not trusted: the process may have
        been paused after the database said it (the monotonic clock runs on under SIGSTOP), and the
        lease it extended may have run out and been taken over since.
        """
        if lease in self.lost or self.held.get(lease[0]) != lease[1]:
            return False
        loop = asyncio.get_running_loop()
        asked = loop.time()
        try:
            held = await self.inbox.hold(lease)
        except Exception as exc:
            log.warning("could not confirm the lease of update %s (%s); not sending", lease[0], exc.__class__.__name__)
            return False
        return held and loop.time() - asked < self.inbox.lease_s / 3

    async def _work(self) -> None:
        while True:
            chat, (lease, begun, update) = await self.queue.take()
            try:
                if self._closing:
                    return  # left held: released in ``stop``
                if lease in self.lost or self.held.get(lease[0]) != lease[1]:
                    self._drop(lease)
                    continue
                await self._answer(lease, update, begun)
            finally:
                self.queue.release(chat)

    def _drop(self, lease: Lease) -> None:
        """Another worker holds this update now (our lease ran out): it answers, we forget it."""
        self.lost.discard(lease)
        if self.held.get(lease[0]) == lease[1]:
            del self.held[lease[0]]
        self.dropped += 1
        log.info(
            "update %s is another worker's now (lease lost); not answering it",
            lease[0],
            extra={"event": "lease_lost", "update_id": lease[0]},
        )

    async def _began(self, lease: Lease) -> None:
        """Records that this claim's answer started going out (a later claim then only closes the row)."""
        try:
            await self.inbox.began(lease)
        except Exception as exc:  # the done mark that follows is kept and retried all the same
            log.warning("could not record that update %s is being answered (%s)", lease[0], exc.__class__.__name__)

    async def _answer(self, lease: Lease, update: Update, begun: bool = False) -> None:
        """Answers ``update`` under ``lease``; one an earlier claim began answering (``begun``) is only closed."""
        uid = lease[0]
        self.in_flight.add(uid)  # until marked: a stop must not release it
        guard = Guard(lambda: self._hold(lease), lambda: self._began(lease))
        token = GUARD.set(guard)
        try:
            if begun:
                log.info("update %s was answered under an earlier claim; closing it", uid, extra={"event": "inbox"})
            else:
                await self.app.process_update(update)  # handler errors reach ``failed`` through on_error
            error = self.failed.pop(uid, None)
        except Exception as exc:
            log.exception("update %s failed outside its handler", uid)
            error = exc
        finally:
            GUARD.reset(token)
            guard.settled = not guard.lost
            self.in_flight.discard(uid)
        if guard.lost or isinstance(error, LeaseLost):
            self._drop(lease)
        elif error is not None and retryable(error):  # the answer may not have gone out: any worker tries again
            flood = retry_seconds(error) if isinstance(error, RetryAfter) else 0.0  # not inside the chat's window
            with contextlib.suppress(Exception):  # else its lease runs out and any worker tries again
                await self.inbox.retry_later(lease, max(SEND_BACKOFF_S[-1], flood))
            self._forget(lease)
        else:
            reason = None if error is None else f"handler: {error.__class__.__name__}"
            try:
                await self.inbox.done([uid], failed=reason)
                self._forget(lease)
            except Exception as exc:  # kept: dropped, the lease would run out and another worker answer again
                self.unmarked[uid] = reason
                log.warning("could not mark update %s done (%s); keeping the mark", uid, exc.__class__.__name__)
        self.answered += 1
        self.wake.set()

    def _forget(self, lease: Lease) -> None:
        self.lost.discard(lease)
        if self.held.get(lease[0]) == lease[1]:
            del self.held[lease[0]]

    async def stop(self) -> None:
        """Answers what was claimed for up to the grace period, then releases what is left to the others."""
        loop = asyncio.get_running_loop()
        self._draining = True  # claims nothing new (so since SIGTERM already, when ``start`` got the stop event)
        deadline = loop.time() + self.grace_s - FINISH_S
        while (self.in_flight or len(self.queue) or self.unmarked) and loop.time() < deadline:
            await asyncio.sleep(0.05)
        self._closing = True
        deadline = loop.time() + FINISH_S
        while self.in_flight and loop.time() < deadline:
            await asyncio.sleep(0.02)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._mark()
        if self.unmarked:
            log.warning(
                "%d answered updates could not be marked done; their leases run out and they are answered again",
                len(self.unmarked),
                extra={"event": "inbox"},
            )
        left = [(u, f) for u, f in self.held.items() if u not in self.in_flight and u not in self.unmarked]
        with contextlib.suppress(Exception):
            released = await self.inbox.release(left)
            if released:
                log.info("released %d claimed updates to the other workers", released, extra={"event": "inbox"})


async def poll_into_inbox(
    app: TelegramApp,
    inbox: SharedQueue,
    stop: asyncio.Event,
    poll_timeout: int = 10,
    beat: Callable[[], Awaitable[bool]] | None = None,
) -> None:
    """The leader's job: ``getUpdates`` into the shared inbox; a batch is confirmed only once stored.

    Each poll is a step of progress (``beat``, the election's heartbeat): a poller that was stalled
    past its lease finds its lead broken and stops before it polls (and confirms) again.
    """
    await app.bot.delete_webhook()
    last = await inbox.last_update_id()
    offset = last + 1 if last is not None else None
    while not stop.is_set():
        if beat is not None and not await beat():
            log.warning("no longer the poller (the lead was lost); stopping", extra={"event": "leader_lost"})
            return
        fetch = asyncio.ensure_future(
            app.bot.get_updates(offset=offset, timeout=poll_timeout, allowed_updates=ALLOWED_UPDATES, limit=100)
        )
        stopped = asyncio.ensure_future(stop.wait())
        await asyncio.wait({fetch, stopped}, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if not fetch.done():
            fetch.cancel()
            with contextlib.suppress(asyncio.CancelledError, TelegramError):
                await fetch
            return
        try:
            updates = fetch.result()
        except InvalidToken:
            raise
        except (Conflict, TelegramError) as exc:
            log.warning("getUpdates failed (%s); trying again", exc.__class__.__name__)
            await asyncio.sleep(POLL_BACKOFF_S)
            continue
        if updates:
            await inbox.add([item_of(u) for u in updates])
            offset = max(u.update_id for u in updates) + 1


def webhook_app(app: TelegramApp, inbox: SharedQueue, secret: str, path: str) -> web.Application:
    """The receiver: secret checked, update stored in the shared inbox, then 200."""
    from aiohttp import web

    async def receive(request: web.Request) -> web.Response:
        given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
        if not hmac.compare_digest(given.encode(), secret.encode()):
            return web.Response(status=403)
        try:
            body = await request.json()
            update = Update.de_json(body, app.bot)
        except (ValueError, TypeError, KeyError):
            return web.Response(status=400)
        try:
            await inbox.add([item_of(update)])
        except Exception:
            log.warning("could not store a webhook update; Telegram will send it again", exc_info=True)
            return web.Response(status=503)
        return web.Response(status=200)

    server = web.Application(client_max_size=MAX_BODY)
    server.router.add_post(f"/{path}", receive)
    return server


async def run_shared_telegram(
    service: Service,
    *,
    token: str,
    base_url: str | None = None,
    webhook_url: str | None = None,
    webhook_secret: str | None = None,
    listen: str = "127.0.0.1",
    port: int = 8443,
    charts: bool = True,
    stop: asyncio.Event | None = None,
    grace_s: float = GRACE_S,
    poll_timeout: int = 10,
    on_state: Callable[[str], None] | None = None,
) -> None:
    """``fitbot run`` with the shared database: answer from the shared inbox; ingest by webhook or as leader."""
    inbox = shared_inbox(service)
    database = shared_database(service)
    if inbox is None or database is None:
        raise RuntimeError("run_shared_telegram needs FITBOT_DATABASE_URL (PostgreSQL)")
    if webhook_url and not webhook_secret:
        raise ValueError("webhook mode with several workers needs TELEGRAM_WEBHOOK_SECRET (the same on every worker)")
    stop = stop or asyncio.Event()
    request = FencedRequest(AiohttpRequest())  # every send asks whether its update is still ours
    app = build_application(
        service, token, base_url=base_url, webhook=bool(webhook_url), charts=charts, request=request
    )
    consumer = SharedConsumer(app, inbox, grace_s=grace_s)
    app.bot_data["poller"] = consumer  # the error handler reports failed answers to it
    await app.initialize()
    async with app, contextlib.AsyncExitStack() as cleanup:
        if app.post_init:
            await app.post_init(app)
        await app.start()
        cleanup.push_async_callback(app.stop)
        cleanup.push_async_callback(await inbox.listen(consumer.wake.set))
        await consumer.start(stop)  # SIGTERM: no new claim from that instant
        cleanup.push_async_callback(consumer.stop)  # runs after the ingest below has ended
        ingest: asyncio.Future[Any]
        if webhook_url:
            from aiohttp import web

            path = urlsplit(webhook_url).path.strip("/") or "telegram"
            runner = web.AppRunner(webhook_app(app, inbox, webhook_secret or "", path))
            await runner.setup()
            cleanup.push_async_callback(runner.cleanup)  # first: no new updates, the proxy sends them elsewhere
            await web.TCPSite(runner, listen, port).start()
            await app.bot.set_webhook(webhook_url, secret_token=webhook_secret, allowed_updates=ALLOWED_UPDATES)
            ingest = asyncio.ensure_future(stop.wait())
        else:
            lead = leadership(database, TELEGRAM_POLL)
            ingest = asyncio.ensure_future(
                lead.run(stop, lambda job_stop: poll_into_inbox(app, inbox, job_stop, poll_timeout, lead.beat))
            )
        cleanup.push_async_callback(_finish, ingest)
        if on_state is not None:
            on_state("running")
        log.info("telegram adapter running (%s, shared inbox)", "webhook" if webhook_url else "polling when elected")
        stopped = asyncio.ensure_future(stop.wait())
        await asyncio.wait({ingest, stopped}, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if ingest.done() and not ingest.cancelled() and ingest.exception() is not None:
            raise ingest.exception()  # type: ignore[misc]


async def _finish(ingest: asyncio.Future[Any]) -> None:
    """The poll job ends on ``stop`` by itself; cut off after 5 s (a cut-off poll is only repeated)."""
    if not ingest.done():
        await asyncio.wait({ingest}, timeout=5)
        ingest.cancel()
    await asyncio.gather(ingest, return_exceptions=True)

"""Telegram served by several processes from the shared inbox (PostgreSQL, ``FITBOT_DATABASE_URL``).

Ingest, in one of two ways, writes each update to the shared inbox before Telegram hears it arrived:

* long polling: only the elected leader (job ``telegram-poll``) calls ``getUpdates``; a batch is
  stored, and the next ``getUpdates`` (whose offset confirms it) is sent only after that. When the
  leader dies another worker is elected within about a second and goes on from the highest stored
  ``update_id``;
* webhook: every worker runs a receiver behind the reverse proxy; it checks Telegram's secret
  token, stores the update, and only then answers 200 (a failed store answers 503, so Telegram
  delivers it again).

Every worker answers: ``SharedConsumer`` claims batches under a lease (``bot.shared.SharedInbox``)
whenever it has a free handler, is woken by a ``NOTIFY`` when updates arrive, serves them fairly
by chat and user (``telegram_queue.FairQueue``), renews the leases of what it holds, marks each
update done once its answer went out, and on SIGTERM finishes what it started within the grace
period and releases the rest to the other workers. An answer that failed on the network goes
back to the inbox for a later try by any worker; an update tried ``MAX_CLAIMS`` times is set aside.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from telegram import Update
from telegram.error import Conflict, InvalidToken, RetryAfter, TelegramError

from bot.adapters.telegram_bot import ALLOWED_UPDATES, CONCURRENT_UPDATES, build_application
from bot.adapters.telegram_flood import retry_seconds
from bot.adapters.telegram_poller import FINISH_S, GRACE_S, PER_CHAT, SEND_BACKOFF_S, retryable
from bot.adapters.telegram_queue import FairQueue, queue_key
from bot.shared import TELEGRAM_POLL, shared_database, shared_inbox
from catalog.db.leader import election, while_leader
from catalog.db.queue import SharedInbox

if TYPE_CHECKING:
    from aiohttp import web

    from bot.adapters.telegram_parts import TelegramApp
    from bot.service import Service

log = logging.getLogger(__name__)

IDLE_POLL_S = 0.5  # without a NOTIFY (it can be missed while reconnecting), look this often anyway
POLL_BACKOFF_S = 2.0
MAX_BODY = 1 << 20


class SharedConsumer:
    """Claims from the shared inbox and answers with ``workers`` concurrent handlers, fairly across users."""

    def __init__(
        self, app: TelegramApp, inbox: SharedInbox, *, workers: int = CONCURRENT_UPDATES, grace_s: float = GRACE_S
    ):
        self.app, self.inbox, self.workers, self.grace_s = app, inbox, workers, grace_s
        self.queue: FairQueue[Update] = FairQueue(per_chat=PER_CHAT)
        self.failed: dict[int, BaseException] = {}  # filled by the adapter's error handler (``on_error``)
        self.held: set[int] = set()  # claimed by this process, not yet done (queued or in flight)
        self.in_flight: set[int] = set()
        self.wake = asyncio.Event()
        self.answered = 0
        self._closing = False
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        self._tasks = [asyncio.create_task(self._work(), name=f"tg-shared-{i}") for i in range(self.workers)]
        self._tasks += [asyncio.create_task(self._claim(), name="tg-claim"), asyncio.create_task(self._renew())]

    async def _claim(self) -> None:
        while not self._closing:
            free = self.workers - len(self.held)
            batch = []
            if free > 0:
                try:
                    batch = await self.inbox.claim(free)
                except Exception:
                    log.warning("could not claim from the shared inbox", exc_info=True)
            for item in batch:
                self.held.add(item.update_id)
                chat, _, user = item.user_key.partition("|")
                self.queue.put(user or chat, Update.de_json(json.loads(item.data), self.app.bot), chat)
            if not batch:
                self.wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), IDLE_POLL_S)

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(self.inbox.lease_s / 3)
            with contextlib.suppress(Exception):
                await self.inbox.renew(sorted(self.held))

    async def _work(self) -> None:
        while True:
            chat, update = await self.queue.take()
            try:
                if self._closing:
                    return  # left held: released in ``stop``
                await self._answer(update)
            finally:
                self.queue.release(chat)

    async def _answer(self, update: Update) -> None:
        uid = update.update_id
        self.in_flight.add(uid)  # until marked: a stop must not release it
        try:
            try:
                await self.app.process_update(update)  # handler errors reach ``failed`` through on_error
                error = self.failed.pop(uid, None)
            except Exception as exc:
                log.exception("update %s failed outside its handler", uid)
                error = exc
            if error is not None and retryable(error):  # the answer may not have gone out: any worker tries again
                flood = retry_seconds(error) if isinstance(error, RetryAfter) else 0.0  # not inside the chat's window
                await self.inbox.retry_later(uid, max(SEND_BACKOFF_S[-1], flood))
            else:
                reason = None if error is None else f"handler: {error.__class__.__name__}"
                await self.inbox.done([uid], failed=reason)
        except Exception:  # the lease runs out and another worker answers again: one duplicate, nothing lost
            log.warning("could not mark update %s", uid, exc_info=True)
        finally:
            self.in_flight.discard(uid)
            self.held.discard(uid)
        self.answered += 1
        self.wake.set()

    async def stop(self) -> None:
        """Answers what was claimed for up to the grace period, then releases what is left to the others."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.grace_s - FINISH_S
        while self.held and loop.time() < deadline:
            if not self.in_flight and not len(self.queue):
                break
            await asyncio.sleep(0.05)
        self._closing = True
        deadline = loop.time() + FINISH_S
        while self.in_flight and loop.time() < deadline:
            await asyncio.sleep(0.02)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        left = sorted(self.held - self.in_flight)
        with contextlib.suppress(Exception):
            released = await self.inbox.release(left)
            if released:
                log.info("released %d claimed updates to the other workers", released, extra={"event": "inbox"})


async def poll_into_inbox(app: TelegramApp, inbox: SharedInbox, stop: asyncio.Event, poll_timeout: int = 10) -> None:
    """The leader's job: ``getUpdates`` into the shared inbox; a batch is confirmed only once stored."""
    await app.bot.delete_webhook()
    last = await inbox.last_update_id()
    offset = last + 1 if last is not None else None
    while not stop.is_set():
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


def item_of(update: Update) -> tuple[int, str, str]:
    """An inbox row: the id, "chat|user" (whose turn it takes, as ``telegram_intake`` writes it), the JSON."""
    chat, user = queue_key(update)
    return update.update_id, f"{chat}|{user}", json.dumps(update.to_dict())


def webhook_app(app: TelegramApp, inbox: SharedInbox, secret: str, path: str) -> web.Application:
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
    app = build_application(service, token, base_url=base_url, webhook=bool(webhook_url), charts=charts)
    consumer = SharedConsumer(app, inbox, grace_s=grace_s)
    app.bot_data["poller"] = consumer  # the error handler reports failed answers to it
    await app.initialize()
    async with app, contextlib.AsyncExitStack() as cleanup:
        if app.post_init:
            await app.post_init(app)
        await app.start()
        cleanup.push_async_callback(app.stop)
        cleanup.push_async_callback(await inbox.listen(consumer.wake.set))
        await consumer.start()
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
            ingest = asyncio.ensure_future(
                while_leader(
                    election(database, TELEGRAM_POLL),
                    stop,
                    lambda job_stop: poll_into_inbox(app, inbox, job_stop, poll_timeout),
                )
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

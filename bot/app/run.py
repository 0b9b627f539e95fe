"""``fitbot run | health | stats``: every adapter whose token is set, in one process, sharing one service.

Wiring only: settings → logging → catalog and user data → service → adapters. SIGTERM, SIGINT
and SIGHUP (a closed terminal, a supervisor's reload) set a stop event; adapters finish in-flight answers and close their connections before exit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import secrets
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bot.app import datadir
from bot.app.datadir import DataDirBusy, DataDirUnwritable
from bot.app.logs import JsonLines, emit, redact_also, setup_logging
from bot.app.settings import Settings
from bot.service import Service
from bot.users.limits import Limits
from catalog.store import CatalogStore
from core.models import Catalog

if TYPE_CHECKING:
    from storage.userdata import UserDataStore

log = logging.getLogger("fitbot")

BACKOFF_S = (2.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0)  # an adapter that keeps failing is retried this often
HEALTH_FILE = "health.json"
HUB_CACHE_KEEP = 4  # cached look-ups are kept this many refresh periods (stale answers when the hub is down)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)  # each drains, as described in OPERATIONS.md

__all__ = ["JsonLines", "main", "open_service", "run", "setup_logging"]


async def open_service(catalog: Catalog, settings: Settings, store: UserDataStore | None = None) -> Service:
    """The production service: user data (``store``, else opened here), hub cache and limits from the settings."""
    from bot.app.jobs import shared_database
    from bot.app.migrate import user_store
    from catalog.hub.cache import CachedHubClient
    from catalog.hub.client import HubClient
    from catalog.hub.search import HubSearch
    from storage.shared import RateWindows

    store = store or await user_store(settings).open()
    pruned = await store.hub_cache.prune(timedelta(days=settings.hub_cache_days * HUB_CACHE_KEEP))
    if pruned:
        log.info("pruned %d old hub look-ups", pruned)
    options = settings.hub_client_options()
    hub = CachedHubClient(
        HubClient(**options),
        store.hub_cache,
        max_age=timedelta(days=settings.hub_cache_days),
    )
    limits = Limits.per_minute(
        settings.rate_user_per_minute, settings.rate_chat_per_minute, settings.rate_expensive_per_minute
    )
    search = HubSearch(endpoint=options["endpoint"], token=options["token"], offline=options["offline"])
    service = Service(
        catalog, store=store, hub=hub, limits=limits, max_question_chars=settings.max_question_chars, search=search
    )
    shared = shared_database(service)
    if shared is not None:  # several processes: one limit for a user, whichever worker answers
        limits.shared = RateWindows(shared)
    return service


async def build_service(settings: Settings, stop: asyncio.Event | None = None) -> Service | None:
    """The shared service: catalog, user data, hub cache and limits; an unreachable PostgreSQL is waited
    for (``scale.open_user_store``), and None comes back when ``stop`` is set meanwhile."""
    from bot.app.migrate import open_user_store

    catalog = await CatalogStore(settings.catalog_path()).load()
    store = await open_user_store(settings, stop)
    return None if store is None else await open_service(catalog, settings, store)


class Health:
    """Each adapter's state (starting, running, reconnecting, retrying, stopped), kept in ``health.json``.

    ``fitbot health`` reads the file; it names the process that wrote it, so a stale file from a
    dead process is recognised.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.adapters: dict[str, dict[str, Any]] = {}
        self.stuck_answers = 0  # answers past their deadline still running: `fitbot health` fails

    def set_stuck(self, count: int) -> None:
        if count != self.stuck_answers:
            self.stuck_answers = count
            log.warning("%d answer(s) past the deadline still running", count, extra={"event": "answers_stuck"})
            self.write()

    def set(self, name: str, state: str, **detail: Any) -> None:
        previous = self.adapters.get(name, {})
        if previous.get("state") == state and not detail:
            return
        self.adapters[name] = {"state": state, "since": round(time.time(), 1), **detail}
        log.info("adapter %s: %s", name, state, extra={"event": "adapter_state", "adapter": name, "state": state})
        self.write()

    def write(self) -> None:
        if self.path is None:
            return
        body = {
            "pid": os.getpid(),
            "updated": round(time.time(), 1),
            "adapters": self.adapters,
            "stuck_answers": self.stuck_answers,
        }
        try:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(body), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            log.warning("could not write %s", self.path)


async def run(
    settings: Settings, *, adapter_runner: Callable[..., Any] | None = None, stop: asyncio.Event | None = None
) -> int:
    """Starts every adapter under its own supervisor; returns the exit code once stopped by a signal.

    Adapters are independent: one that fails (bad token, platform unreachable) is logged and
    retried with back-off while the others keep serving; the process stops only on a signal in ``STOP_SIGNALS``.
    """
    adapters = settings.adapters()
    if not adapters:
        log.error("no adapter to start: set DISCORD_BOT_TOKEN or TELEGRAM_BOT_TOKEN (see deploy/settings.example)")
        return 1
    try:
        lock = claim_data_dir(settings)
    except DataDirBusy as exc:
        log.error("%s", exc, extra={"event": "data_dir_busy"})
        return 1
    except DataDirUnwritable as exc:
        log.critical("%s", exc, extra={"event": "startup_failed", "error": "DataDirUnwritable"})
        return 1
    try:
        return await _run(settings, adapters, runner=adapter_runner or run_adapter, stop=stop)
    finally:
        lock.close()


def claim_data_dir(settings: Settings) -> IO[str]:
    """The one-process lock on the data directory (``bot.app.datadir``), on either storage backend."""
    lock = datadir.claim(settings.data_dir())
    datadir.mark(settings.data_dir())
    return lock


async def _run(
    settings: Settings, adapters: list[str], *, runner: Callable[..., Any], stop: asyncio.Event | None
) -> int:
    if stop is None:  # tests pass their own
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, stop.set)
    service = await build_service(settings, stop)
    if service is None:  # stopped while waiting for PostgreSQL
        return 0
    health = Health(settings.data_dir() / HEALTH_FILE)
    tasks = [
        asyncio.create_task(supervise(name, runner, service, settings, stop, health), name=name) for name in adapters
    ]
    if settings.price_refresh_hours > 0:  # live GPU prices, merged over the snapshot (catalog/prices)
        tasks.append(asyncio.create_task(price_schedule(service, settings, stop), name="prices"))
    log.info("fitbot running", extra={"adapters": adapters, "data_dir": str(settings.data_dir())})
    tasks += shared_jobs(service, stop)
    watch = asyncio.create_task(watch_answers(service, health, stop), name="answers")
    await stop.wait()
    await watch
    log.info("shutting down")
    if service.hub is not None:
        service.hub.client.cut_short()  # answers waiting on a slow hub finish now, not in 30 s
    results = await asyncio.gather(*tasks, return_exceptions=True)
    await service.close()
    for name in adapters:
        health.set(name, "stopped")
    failed = [r for r in results if isinstance(r, BaseException)]
    for error in failed:
        log.error("adapter failed while stopping: %s", error.__class__.__name__, exc_info=error)
    code = 1 if failed else 0
    if service.stuck_answers():  # the interpreter would wait for that thread at exit: stop now, all is saved
        log.warning("exiting with an answer still running past its deadline", extra={"event": "exit_stuck"})
        logging.shutdown()
        os._exit(code)
    return code


async def watch_answers(service: Service, health: Health, stop: asyncio.Event, every_s: float = 1.0) -> None:
    """Keeps the count of answers past their deadline in the health file, so `fitbot health` fails while
    one still runs."""
    while not stop.is_set():
        health.set_stuck(service.stuck_answers())
        try:
            await asyncio.wait_for(stop.wait(), every_s)
        except TimeoutError:
            pass


def shared_jobs(service: Service, stop: asyncio.Event) -> list[asyncio.Task[None]]:
    """With a shared database: the clean-up, run by whichever worker is elected (``bot.app.jobs``)."""
    from bot.app.jobs import CLEANUP, cleanup_job, shared_database
    from storage.leader import election, while_leader

    database = shared_database(service)
    if database is None:
        return []
    job = while_leader(election(database, CLEANUP), stop, lambda job_stop: cleanup_job(database, job_stop))
    return [asyncio.create_task(job, name="cleanup")]


async def price_schedule(service: Service, settings: Settings, stop: asyncio.Event) -> None:
    """The price refresh: in this process, or with a shared database by the worker elected for it."""
    from bot.app.jobs import PRICE_REFRESH, shared_database
    from catalog.prices.refresh import schedule_prices
    from storage.leader import election

    def apply(catalog: Catalog) -> None:
        service.answers = service.answers.with_model(catalog)

    database = shared_database(service)
    shared = (database, election(database, PRICE_REFRESH)) if database is not None else None
    await schedule_prices(service.catalog, settings, apply, stop, shared)


async def supervise(
    name: str,
    runner: Callable[..., Any],
    service: Service,
    settings: Settings,
    stop: asyncio.Event,
    health: Health,
) -> None:
    """Runs one adapter until ``stop``; when it fails it is retried with back-off, the others carry on."""
    attempt = 0
    while not stop.is_set():
        health.set(name, "starting", attempt=attempt + 1)

        def state(value: str, _name: str = name, **detail: Any) -> None:
            nonlocal attempt
            if value == "running":
                attempt = 0
            health.set(_name, value, **detail)

        try:
            await runner(name, service, settings, stop, state)
            if stop.is_set():
                return
            error: BaseException = RuntimeError(f"{name} adapter ended by itself")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            error = exc
        attempt += 1
        delay = BACKOFF_S[min(attempt, len(BACKOFF_S)) - 1] * random.uniform(0.8, 1.2)
        health.set(name, "retrying", error=error.__class__.__name__, attempt=attempt, retry_in_s=round(delay, 1))
        log.error(
            "adapter %s failed (%s); retrying in %.1f s, the other adapters keep running",
            name,
            error.__class__.__name__,
            delay,
            exc_info=error,
            extra={"event": "adapter_failed", "adapter": name},
        )
        try:
            await asyncio.wait_for(stop.wait(), delay)
        except TimeoutError:
            pass


async def run_adapter(
    name: str, service: Service, settings: Settings, stop: asyncio.Event, state: Callable[[str], None]
) -> None:
    if name == "telegram" and settings.telegram_bot_token:
        secret = settings.telegram_webhook_secret.get_secret_value() if settings.telegram_webhook_secret else None
        run_telegram: Callable[..., Awaitable[None]]
        if settings.database_url():  # several workers, one shared inbox (they must share a set secret)
            from bot.adapters.telegram.shared import run_shared_telegram as run_telegram
        else:
            from bot.adapters.telegram.bot import run_telegram

            if settings.telegram_webhook_url and not secret:
                secret = secrets.token_urlsafe(32)  # generated here, so the redaction knows it too
                redact_also(secret)
        await run_telegram(
            service,
            token=settings.telegram_bot_token.get_secret_value(),
            base_url=settings.telegram_base_url,
            webhook_url=settings.telegram_webhook_url,
            webhook_secret=secret,
            listen=settings.telegram_webhook_listen,
            port=settings.telegram_webhook_port,
            stop=stop,
            on_state=state,
        )
    elif name == "discord" and settings.discord_bot_token:
        from bot.adapters.discord.bot import run_discord

        await run_discord(
            service,
            settings.discord_bot_token.get_secret_value(),
            shards=settings.discord_shards,
            shard_ids=settings.shard_ids(),
            sync_state_path=settings.data_dir() / "discord_sync.json",
            message_content=settings.discord_message_content,
            stop=stop,
            on_state=state,
        )
    else:
        raise ValueError(f"adapter {name} has no token or is unknown")


def main_run(settings: Settings) -> int:
    setup_logging(settings.fitbot_log_level, settings.secrets())
    started = time.monotonic()
    try:
        code = asyncio.run(run(settings))
    except Exception as exc:  # start-up failed (data directory not writable, ...): one JSON line, not a traceback
        log.critical(
            "start-up failed: %s: %s",
            exc.__class__.__name__,
            exc,
            exc_info=exc,
            extra={"event": "startup_failed", "error": exc.__class__.__name__},
        )
        return 1
    log.info("stopped", extra={"uptime_s": round(time.monotonic() - started, 1)})
    return code


async def _health(settings: Settings) -> int:
    from bot.app.migrate import shared_health, user_store
    from catalog.store import CatalogStore

    where = settings.data_dir()
    if not datadir.is_marked(where):  # a wrong FITBOT_DATA_DIR: say so, and create nothing there
        print(
            f"fitbot: {where} is not a FitBot data directory (no {datadir.MARKER}, which `fitbot run` writes);"
            " check FITBOT_DATA_DIR",
            file=sys.stderr,
        )
        return 1
    catalog = await CatalogStore(settings.catalog_path()).load()
    async with user_store(settings) as store:
        await store.database.fetchval("SELECT 1")
        shared = await shared_health(store)
        prices = await _price_health(settings, store.database)
    print(f"ok: {where}: catalog {catalog.version} ({len(catalog.models)} models, {len(catalog.gpus)} devices)")
    print("\n".join(shared))
    print("\n".join(prices))
    return adapter_health(settings.data_dir() / HEALTH_FILE, settings.adapters())


async def _price_health(settings: Settings, database: Any) -> list[str]:
    """Each live price source: skipped for want of a key, or its last refresh (``catalog.prices.status``)."""
    from bot.app.price_health import price_status
    from catalog.prices.sources import default_sources
    from catalog.prices.store import PriceStore, PriceTables

    store = PriceTables(database) if database.shared else PriceStore(settings.prices_path())
    return await price_status(store, default_sources(settings.price_endpoint), settings.price_keys())


def adapter_health(path: Path, expected: list[str]) -> int:
    """Prints each adapter's state from the running process's health file; 1 when none is running."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        print("adapters: no health file (is `fitbot run` running?)")
        return 0 if not expected else 1
    alive = _alive(body.get("pid"))
    running = 0
    for name in expected or sorted(body.get("adapters", {})):
        info = body.get("adapters", {}).get(name, {"state": "unknown"})
        state = info.get("state", "unknown") if alive else "not running"
        running += state == "running"
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(info["since"])) if "since" in info else "?"
        attempt = f", attempt {info['attempt']}" if info.get("attempt") else ""
        extra = f" ({info['error']}{attempt})" if alive and info.get("error") else ""
        print(f"{name}: {state} since {since} UTC{extra}")
    stuck = body.get("stuck_answers", 0) if alive else 0
    if stuck:
        print(f"answers: {stuck} past the deadline and still running (see the log, event answer_deadline)")
    return 0 if (running or not expected) and not stuck else 1


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def _stats(settings: Settings, as_json: bool) -> int:
    from bot.app.migrate import user_store

    async with user_store(settings) as store:
        log = store.query_log(settings.query_log_days)
        await log.prune()
        stats = await log.stats()
    if as_json:
        print(json.dumps(stats, indent=1))
        return 0
    print(
        f"questions: {stats['questions']}, not understood: {stats['not_understood']},"
        f" mean latency {stats['mean_latency_ms']} ms"
    )
    for key in ("intents", "models", "gpus", "platforms"):
        rows = stats[key]
        print(f"{key}: " + (", ".join(f"{name} {count}" for name, count in rows) if rows else "–"))  # type: ignore[attr-defined]
    return 0


def main(args: argparse.Namespace) -> int:
    """``fitbot run | health | stats``: settings from the environment, then the sub-command."""
    try:
        settings = Settings()
    except Exception as exc:  # pydantic's message names the variable, never its value for secrets
        emit("CRITICAL", f"invalid settings: {_settings_error(exc)}", event="startup_failed")
        return 2
    if args.command == "run":
        return main_run(settings)
    try:
        if args.command == "health":
            return asyncio.run(_health(settings))
        if args.command == "migrate":
            from bot.app.migrate import migrate

            return asyncio.run(migrate(settings))
        return asyncio.run(_stats(settings, args.json))
    except Exception as exc:
        print(f"fitbot: {args.command} failed: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return 1


def _settings_error(exc: Exception) -> str:
    """Which settings are wrong and why, without their values (pydantic would echo the input)."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return exc.__class__.__name__
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']).upper()}: {e['msg']}" for e in errors())

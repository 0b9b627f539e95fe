"""``fitbot run | health | stats``: every adapter whose token is set, in one process, sharing one service.

Wiring only: settings → logging → catalog and user data → service → adapters. SIGTERM/SIGINT
set a stop event; adapters finish in-flight answers and close their connections before exit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
import time
from datetime import timedelta

from bot.app.settings import Settings
from bot.limits import Limits
from bot.service import Service
from catalog.store import CatalogStore
from core.models import Catalog

log = logging.getLogger("fitbot")

_RESERVED = set(vars(logging.makeLogRecord({})))


class JsonLines(logging.Formatter):
    """One JSON object per line; extra fields given with ``extra={...}`` are kept."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": round(record.created, 3),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        line.update({k: v for k, v in vars(record).items() if k not in _RESERVED and not k.startswith("_")})
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def setup_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines())
    logging.basicConfig(level=level, handlers=[handler], force=True)
    for noisy in ("httpx", "discord.gateway", "discord.client", "telegram.ext.Updater"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))


async def open_service(catalog: Catalog, settings: Settings) -> Service:
    """The production service: user data, hub cache and limits from the settings."""
    from catalog.hub import HubClient
    from catalog.hub_search import HubSearch
    from catalog.userdata import CachedHubClient, UserDataStore

    store = await UserDataStore(settings.user_db_path()).open()
    hub = CachedHubClient(
        HubClient(**settings.hub_client_options()),
        store.hub_cache,
        max_age=timedelta(days=settings.hub_cache_days),
    )
    limits = Limits.per_minute(
        settings.rate_user_per_minute, settings.rate_chat_per_minute, settings.rate_expensive_per_minute
    )
    options = settings.hub_client_options()
    search = HubSearch(endpoint=options["endpoint"], token=options["token"], offline=options["offline"])
    return Service(
        catalog, store=store, hub=hub, limits=limits, max_question_chars=settings.max_question_chars, search=search
    )


async def build_service(settings: Settings) -> Service:
    """The shared service: catalog, user data, hub cache and limits."""
    return await open_service(await CatalogStore(settings.catalog_path()).load(), settings)


async def run(settings: Settings) -> int:
    adapters = settings.adapters()
    if not adapters:
        log.error("no adapter to start: set DISCORD_BOT_TOKEN or TELEGRAM_BOT_TOKEN (see deploy/settings.example.env)")
        return 1
    service = await build_service(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    tasks = [asyncio.create_task(_adapter(name, service, settings, stop), name=name) for name in adapters]
    for task in tasks:
        task.add_done_callback(lambda done: _adapter_ended(done, stop))
    log.info("fitbot running", extra={"adapters": adapters, "data_dir": str(settings.data_dir())})
    await stop.wait()
    log.info("shutting down")
    for task in tasks:
        if task.get_name() == "discord":
            task.cancel()  # discord.py closes its connections on cancellation
    results = await asyncio.gather(*tasks, return_exceptions=True)
    await service.close()
    failed = any(isinstance(r, Exception) for r in results)
    return 1 if failed else 0


def _adapter_ended(task: asyncio.Task[None], stop: asyncio.Event) -> None:
    """An adapter that dies (bad token, lost gateway) stops the process, so the supervisor restarts it."""
    if task.cancelled() or stop.is_set():
        return
    error = task.exception()
    log.error(
        "adapter %s stopped: %s", task.get_name(), error.__class__.__name__ if error else "finished", exc_info=error
    )
    stop.set()


async def _adapter(name: str, service: Service, settings: Settings, stop: asyncio.Event) -> None:
    if name == "telegram" and settings.telegram_bot_token:
        from bot.adapters.telegram_bot import run_telegram

        secret = settings.telegram_webhook_secret.get_secret_value() if settings.telegram_webhook_secret else None
        await run_telegram(
            service,
            token=settings.telegram_bot_token.get_secret_value(),
            base_url=settings.telegram_base_url,
            webhook_url=settings.telegram_webhook_url,
            webhook_secret=secret,
            listen=settings.telegram_webhook_listen,
            port=settings.telegram_webhook_port,
            stop=stop,
        )
    elif name == "discord" and settings.discord_bot_token:
        from bot.adapters.discord_bot import run_discord

        await run_discord(
            service,
            settings.discord_bot_token.get_secret_value(),
            shards=settings.discord_shards,
            sync_state_path=settings.data_dir() / "discord_sync.json",
            message_content=settings.discord_message_content,
        )
    else:
        log.error("adapter %s has no token or is unknown", name)


def main_run(settings: Settings) -> int:
    setup_logging(settings.fitbot_log_level)
    started = time.monotonic()
    code = asyncio.run(run(settings))
    log.info("stopped", extra={"uptime_s": round(time.monotonic() - started, 1)})
    return code


async def _health(settings: Settings) -> int:
    from catalog.store import CatalogStore
    from catalog.userdata import UserDataStore

    catalog = await CatalogStore(settings.catalog_path()).load()
    async with UserDataStore(settings.user_db_path()) as store:
        await (await store.db.execute("SELECT 1")).fetchone()
    print(f"ok: catalog {catalog.version} ({len(catalog.models)} models, {len(catalog.gpus)} devices)")
    return 0


async def _stats(settings: Settings, as_json: bool) -> int:
    from catalog.userdata import UserDataStore

    async with UserDataStore(settings.user_db_path()) as store:
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
        print(f"fitbot: invalid settings: {exc}", file=sys.stderr)
        return 2
    if args.command == "run":
        return main_run(settings)
    try:
        if args.command == "health":
            return asyncio.run(_health(settings))
        return asyncio.run(_stats(settings, args.json))
    except Exception as exc:
        print(f"fitbot: {args.command} failed: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return 1

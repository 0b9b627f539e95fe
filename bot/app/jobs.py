"""What several FitBot processes share when the user data is on PostgreSQL (``FITBOT_DATABASE_URL``).

The adapters find the shared database through here (``shared_database``: the service's, when other
processes use it too) and get its inbox and elections from here (``shared_inbox``, ``leadership``),
typed by what they need of them (``bot.handover``). With the default SQLite file there is one
process: ``shared_database`` is None and every adapter works as before, in memory and on its own inbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from storage.base import process_name
from storage.leader import Election, Job, election, while_leader
from storage.queue import SharedInbox
from storage.shared import ButtonTable, RateWindows

if TYPE_CHECKING:
    from bot.service import Service
    from storage.base import Database

log = logging.getLogger(__name__)

TELEGRAM_POLL = "telegram-poll"  # the jobs only one process runs (leader election)
CLEANUP = "cleanup"
PRICE_REFRESH = "price-refresh"
JOBS = (TELEGRAM_POLL, CLEANUP, PRICE_REFRESH)
CLEANUP_EVERY_S = 3600.0

__all__ = [
    "CLEANUP",
    "JOBS",
    "PRICE_REFRESH",
    "TELEGRAM_POLL",
    "cleanup_job",
    "leadership",
    "shared_buttons",
    "shared_database",
    "shared_inbox",
]


def shared_database(service: Service) -> Database | None:
    """The database other processes use too, or None (no store, or the one-process SQLite file)."""
    store = service.store
    if store is None:
        return None
    database = store.database
    return database if database.shared else None


def shared_inbox(service: Service, lease_s: float | None = None) -> SharedInbox | None:
    database = shared_database(service)
    if database is None:
        return None
    return SharedInbox(database, process_name()) if lease_s is None else SharedInbox(database, process_name(), lease_s)


class Leadership:
    """``job`` run only while this process leads it (``storage.leader``); ``beat`` once per step of progress."""

    def __init__(self, elect: Election) -> None:
        self.elect = elect

    async def beat(self) -> bool:
        return await self.elect.beat()

    async def run(self, stop: asyncio.Event, job: Job) -> None:
        await while_leader(self.elect, stop, job)


def leadership(database: Database, job: str) -> Leadership:
    return Leadership(election(database, job))


def shared_buttons(service: Service) -> ButtonTable | None:
    database = shared_database(service)
    return ButtonTable(database) if database is not None else None


async def cleanup_job(database: Database, stop: asyncio.Event, every_s: float = CLEANUP_EVERY_S) -> None:
    """The leader's clean-up, hourly: answered inbox rows after a day, spent rate windows, expired buttons."""
    while not stop.is_set():
        try:
            pruned = (
                await SharedInbox(database, process_name()).prune(),
                await RateWindows(database).prune(),
                await ButtonTable(database).prune(),
            )
            log.info("clean-up: %d inbox rows, %d rate events, %d buttons", *pruned, extra={"event": "cleanup"})
        except Exception:
            log.warning("clean-up failed; trying again next time", exc_info=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every_s)

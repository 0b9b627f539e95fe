"""``fitbot migrate`` and the shared half of ``fitbot health``: the user database many processes use.

``fitbot migrate`` applies pending schema migrations and prints the applied list; every process
also migrates at start-up (under a lock), so a rolling upgrade needs it only to upgrade the
schema *before* the first new worker starts (see deploy/OPERATIONS.md, "Scale out").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING

from bot.app.jobs import JOBS
from bot.app.settings import Settings
from storage.base import process_name, unreachable_errors
from storage.leader import leader_of
from storage.queue import SharedInbox

if TYPE_CHECKING:
    from storage.userdata import UserDataStore

log = logging.getLogger(__name__)

START_BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0)  # PostgreSQL unreachable at start: tried again this often (last repeats)


def user_store(settings: Settings) -> UserDataStore:
    """The user database the settings name: FITBOT_DATABASE_URL, else ``user.sqlite`` in the data directory."""
    from storage.userdata import UserDataStore

    return UserDataStore(settings.user_db_path(), url=settings.database_url())


async def open_user_store(settings: Settings, stop: asyncio.Event | None = None) -> UserDataStore | None:
    """The open user database; a PostgreSQL that is down or starting is waited for with back-off.

    Workers started together with their database (compose, a host's boot) used to exit at once; now
    each waits, logging every try, and serves once the server answers. None when ``stop`` came first.
    A wrong password or database name is no outage: it fails at once, as a setting to fix.
    """
    attempt = 0
    while True:
        store = user_store(settings)
        try:
            return await store.open()
        except unreachable_errors() as exc:
            if store.url is None:
                raise  # the SQLite file: nothing to wait for
            wait = START_BACKOFF_S[min(attempt, len(START_BACKOFF_S) - 1)]
            attempt += 1
            log.warning(
                "PostgreSQL is unreachable (%s); trying again in %.1f s",
                exc.__class__.__name__,
                wait,
                extra={"event": "database_unreachable", "attempt": attempt},
            )
        if stop is None:
            await asyncio.sleep(wait)
            continue
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), wait)
        if stop.is_set():
            return None


async def migrate(settings: Settings) -> int:
    from storage.migrations import applied

    async with user_store(settings) as store:
        names = await applied(store.database)
        where = "PostgreSQL" if store.database.shared else str(settings.user_db_path())
    print(f"user database ({where}): schema version {len(names)}")
    for name in names:
        print(f"  {name}")
    return 0


async def shared_health(store: UserDataStore) -> list[str]:
    """Lines for ``fitbot health``: backend, inbox depth and oldest waiting update, each job's leader."""
    database = store.database
    if not database.shared:
        return ["user database: SQLite (one process)"]
    depth = await SharedInbox(database, process_name()).depth()
    oldest = "–" if depth.oldest_unclaimed_s is None else f"{depth.oldest_unclaimed_s:.1f} s"
    lines = [
        "user database: PostgreSQL (shared)",
        f"inbox: {depth.open} open, {depth.unclaimed} waiting for a worker (oldest {oldest}),"
        f" {depth.set_aside} set aside",
    ]
    for job in JOBS:
        lines.append(f"leader {job}: {await leader_of(database, job) or 'none'}")
    lines.append(f"checked at {time.strftime('%H:%M:%S', time.gmtime())} UTC by {process_name()}")
    return lines

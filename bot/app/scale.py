"""``fitbot migrate`` and the shared half of ``fitbot health``: the user database many processes use.

``fitbot migrate`` applies pending schema migrations and prints the applied list; every process
also migrates at start-up (under a lock), so a rolling upgrade needs it only to upgrade the
schema *before* the first new worker starts (see deploy/OPERATIONS.md, "Scale out").
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from bot.app.settings import Settings
from bot.shared import JOBS
from catalog.db.base import process_name
from catalog.db.leader import leader_of
from catalog.db.queue import SharedInbox

if TYPE_CHECKING:
    from catalog.userdata import UserDataStore


def user_store(settings: Settings) -> UserDataStore:
    """The user database the settings name: FITBOT_DATABASE_URL, else ``user.sqlite`` in the data directory."""
    from catalog.userdata import UserDataStore

    return UserDataStore(settings.user_db_path(), url=settings.database_url())


async def migrate(settings: Settings) -> int:
    from catalog.migrations import applied

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

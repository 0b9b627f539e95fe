"""What several FitBot processes share when the user data is on PostgreSQL (``FITBOT_DATABASE_URL``).

The adapters reach the shared inbox, the elections and the shared button table through here (they
talk to the bot layer, never to the catalog). With the default SQLite file there is one process:
``shared_database`` is None and every adapter works as before, in memory and on its own inbox.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalog.db.leader import Election, election, leader_of, while_leader
from catalog.db.queue import Claimed, InboxDepth, SharedInbox
from catalog.db.shared import ButtonTable, RateWindows
from catalog.userdata import process_name

if TYPE_CHECKING:
    from bot.service import Service
    from catalog.db.base import Database

TELEGRAM_POLL = "telegram-poll"  # the jobs only one process runs (leader election)
CLEANUP = "cleanup"
JOBS = (TELEGRAM_POLL, CLEANUP)

__all__ = [
    "CLEANUP",
    "JOBS",
    "TELEGRAM_POLL",
    "ButtonTable",
    "Claimed",
    "Election",
    "InboxDepth",
    "RateWindows",
    "SharedInbox",
    "election",
    "leader_of",
    "process_name",
    "shared_buttons",
    "shared_database",
    "shared_inbox",
    "while_leader",
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


def shared_buttons(service: Service) -> ButtonTable | None:
    database = shared_database(service)
    return ButtonTable(database) if database is not None else None

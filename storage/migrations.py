"""Ordered schema migrations, recorded in a ``_migrations`` table, for SQLite and PostgreSQL alike.

Each database (the fact catalog, the user data) has its own list. A migration is a small
function that gets a ``storage.Database``; ``migrate`` runs the ones not yet recorded, in
order, in one transaction, so an old database is upgraded in place without losing rows. The same
functions build the schema on both backends (see ``storage.postgres.to_postgres``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import aiosqlite

from storage.base import Database
from storage.sqlite import SqliteConnection

Migration = Callable[[Database], Awaitable[None]]
MIGRATION_LOCK = 0x46_49_54_42  # "FITB": the advisory lock PostgreSQL migrations take first


async def migrate(db: Database | aiosqlite.Connection, migrations: Sequence[Migration]) -> int:
    """Apply pending migrations; return the schema version (number of applied migrations).

    Everything runs under a write lock taken first (SQLite ``BEGIN IMMEDIATE``, a PostgreSQL
    advisory lock): two processes starting on a fresh database used to both see "nothing
    applied" and race to create the same tables. Now the second waits, then finds the work done.
    """
    if isinstance(db, aiosqlite.Connection):
        db = SqliteConnection(db)
    async with db.transaction() as tx:
        if tx.dialect == "postgresql":
            await tx.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))
        await tx.execute(
            "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT DEFAULT CURRENT_TIMESTAMP)"
        )
        done = {row[0] for row in await tx.fetchall("SELECT name FROM _migrations")}
        for step in migrations:
            if step.__name__ in done:
                continue
            await step(tx)
            await tx.execute("INSERT INTO _migrations (name) VALUES (?)", (step.__name__,))
    return len(migrations)


async def applied(db: Database) -> list[str]:
    """The names of the migrations a database has, in the order they ran."""
    return [row[0] for row in await db.fetchall("SELECT name FROM _migrations ORDER BY applied_at, name")]


# --- the fact catalog -------------------------------------------------------------------------


async def m001_catalog_tables(db: Database) -> None:
    """One table per fact kind; each row keeps the validated model as JSON next to its keys."""
    for table in ("gpus", "models", "quants", "not_devices"):
        await db.execute(f"CREATE TABLE {table} (id TEXT PRIMARY KEY, name TEXT NOT NULL, data TEXT NOT NULL)")
    await db.execute(
        "CREATE TABLE quant_sizes (model_id TEXT NOT NULL, quant_id TEXT NOT NULL, data TEXT NOT NULL,"
        " PRIMARY KEY (model_id, quant_id))"
    )
    await db.execute(
        "CREATE TABLE offers (id INTEGER PRIMARY KEY, gpu_id TEXT NOT NULL, price_per_hour_usd REAL NOT NULL,"
        " data TEXT NOT NULL)"
    )
    await db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


CATALOG_MIGRATIONS: tuple[Migration, ...] = (m001_catalog_tables,)

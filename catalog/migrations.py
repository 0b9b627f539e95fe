"""Ordered schema migrations for FitBot's SQLite files, recorded in a ``_migrations`` table.

Each database (the fact catalog, the user data) has its own list. A migration is a small
function that gets an open connection; ``migrate`` runs the ones not yet recorded, in order,
each in its own transaction, so an old file is upgraded in place without losing rows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import aiosqlite

Migration = Callable[[aiosqlite.Connection], Awaitable[None]]


async def migrate(db: aiosqlite.Connection, migrations: Sequence[Migration]) -> int:
    """Apply pending migrations; return the schema version (number of applied migrations).

    Everything runs under a write lock taken first (``BEGIN IMMEDIATE``): two processes starting
    on a fresh data directory used to both see "nothing applied" and race to create the same
    tables. Now the second waits (up to the connection's busy timeout), then finds the work done.
    """
    await db.execute("BEGIN IMMEDIATE")
    try:
        await db.execute(
            "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT DEFAULT CURRENT_TIMESTAMP)"
        )
        async with db.execute("SELECT name FROM _migrations") as cur:
            done = {row[0] async for row in cur}
        for step in migrations:
            if step.__name__ in done:
                continue
            await step(db)
            await db.execute("INSERT INTO _migrations (name) VALUES (?)", (step.__name__,))
    except BaseException:
        await db.rollback()
        raise
    await db.commit()
    return len(migrations)


# --- the fact catalog -------------------------------------------------------------------------


async def m001_catalog_tables(db: aiosqlite.Connection) -> None:
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

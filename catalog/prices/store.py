"""Refreshed prices with the time seen: ``PriceTables`` on any ``storage`` database, ``PriceStore`` the file.

One table of offers; a refresh replaces one provider's rows in one transaction, so a provider that
failed keeps its last good prices, and a reader always sees a whole refresh or none of it. With
``FITBOT_DATABASE_URL`` the tables are in the shared database (``storage.userdata.m103_live_prices``, one of
the user migrations), where the elected worker refreshes and every worker reads; without one they are in
``prices.sqlite`` in the data directory (``PriceStore``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

import aiosqlite

from core.models import CloudOffer
from storage.base import Database
from storage.migrations import migrate
from storage.sqlite import SqliteConnection
from storage.userdata import m103_live_prices

PRICE_MIGRATIONS = (m103_live_prices,)


class PriceTables:
    """The only SQL for the price tables; times are UTC ISO strings."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @asynccontextmanager
    async def _open(self, create: bool = True) -> AsyncIterator[Database | None]:
        """The database to use (None: nothing stored yet, and ``create`` is False)."""
        yield self.db

    async def replace(self, provider: str, offers: list[CloudOffer], seen_at: datetime) -> None:
        """The provider's prices are now ``offers``, seen at ``seen_at``."""
        async with self._open() as db:
            assert db is not None
            async with db.transaction() as tx:
                await tx.execute("DELETE FROM price_offers WHERE provider = ?", (provider,))
                for offer in offers:
                    await tx.execute(
                        "INSERT INTO price_offers (provider, seen_at, offer) VALUES (?, ?, ?)",
                        (provider, seen_at.isoformat(), offer.model_dump_json()),
                    )
                await tx.execute(
                    "INSERT INTO price_refreshes (provider, ok_at) VALUES (?, ?)"
                    " ON CONFLICT (provider) DO UPDATE SET ok_at = excluded.ok_at",
                    (provider, seen_at.isoformat()),
                )

    async def failed(self, provider: str, at: datetime, error: str) -> None:
        """A refresh of ``provider`` failed; its stored prices stay."""
        await self._execute(
            "INSERT INTO price_refreshes (provider, failed_at, error) VALUES (?, ?, ?) ON CONFLICT (provider)"
            " DO UPDATE SET failed_at = excluded.failed_at, error = excluded.error",
            (provider, at.isoformat(), error[:300]),
        )

    async def last_error(self, provider: str) -> str | None:
        """The error of the provider's last refresh when that one failed (None after a good one)."""
        row = await self._one(
            "SELECT error FROM price_refreshes WHERE provider = ? AND failed_at IS NOT NULL"
            " AND (ok_at IS NULL OR failed_at > ok_at)",
            (provider,),
        )
        return str(row) if row is not None else None

    async def refreshes(self) -> dict[str, tuple[str | None, str | None, str | None]]:
        """Each provider's last good refresh, last failed one and that one's error (UTC ISO strings)."""
        async with self._open(create=False) as db:
            rows = (
                [] if db is None else await db.fetchall("SELECT provider, ok_at, failed_at, error FROM price_refreshes")
            )
        return {str(p): (ok, failed, error) for p, ok, failed, error in rows}

    async def counts(self) -> dict[str, int]:
        """How many prices each provider's last good refresh stored."""
        async with self._open(create=False) as db:
            rows = (
                [] if db is None else await db.fetchall("SELECT provider, COUNT(*) FROM price_offers GROUP BY provider")
            )
        return {str(p): int(n) for p, n in rows}

    async def mark_attempt(self, at: datetime) -> None:
        """A whole refresh ran at ``at`` (good or not): the schedule waits a period from here."""
        await self._execute(
            "INSERT INTO price_meta (key, value) VALUES ('last_attempt', ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (at.isoformat(),),
        )

    async def last_attempt(self) -> datetime | None:
        value = await self._one("SELECT value FROM price_meta WHERE key = 'last_attempt'", ())
        return datetime.fromisoformat(str(value)) if value is not None else None

    async def offers(self) -> list[tuple[CloudOffer, str]]:
        """Every stored price with the UTC time it was seen, by provider."""
        async with self._open(create=False) as db:
            rows = (
                [] if db is None else await db.fetchall("SELECT offer, seen_at FROM price_offers ORDER BY provider, id")
            )
        return [(CloudOffer.model_validate_json(offer), seen_at) for offer, seen_at in rows]

    async def _execute(self, sql: str, args: tuple[str, ...]) -> None:
        async with self._open() as db:
            assert db is not None
            await db.execute(sql, args)

    async def _one(self, sql: str, args: tuple[str, ...]) -> object | None:
        async with self._open(create=False) as db:
            return None if db is None else await db.fetchval(sql, args)


class PriceStore(PriceTables):
    """The tables in ``prices.sqlite`` (one process, no shared database): a connection per call."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @asynccontextmanager
    async def _open(self, create: bool = True) -> AsyncIterator[Database | None]:
        if not create and not self.path.exists():
            yield None
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = await aiosqlite.connect(self.path, isolation_level=None)
        try:
            await migrate(connection, PRICE_MIGRATIONS)
            yield SqliteConnection(connection)
        finally:
            await connection.close()

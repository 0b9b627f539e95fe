"""``PriceStore``: refreshed prices in SQLite (``prices.sqlite`` in the data directory), with the time seen.

One table of offers; a refresh replaces one provider's rows in one transaction, so a provider that
failed keeps its last good prices, and a reader always sees a whole refresh or none of it.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import aiosqlite

from core.models import CloudOffer

SCHEMA = """
CREATE TABLE IF NOT EXISTS live_offer (
    provider TEXT NOT NULL,
    seen_at TEXT NOT NULL,  -- UTC ISO time of the refresh that read it
    offer TEXT NOT NULL     -- the CloudOffer as JSON
);
CREATE INDEX IF NOT EXISTS live_offer_provider ON live_offer (provider);
CREATE TABLE IF NOT EXISTS refresh (
    provider TEXT PRIMARY KEY,
    ok_at TEXT,             -- last refresh that stored prices
    failed_at TEXT,         -- last refresh that did not
    error TEXT
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class PriceStore:
    def __init__(self, path: Path) -> None:
        self.path = path

    async def _db(self) -> aiosqlite.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(self.path)
        await db.executescript(SCHEMA)
        return db

    async def replace(self, provider: str, offers: list[CloudOffer], seen_at: datetime) -> None:
        """The provider's prices are now ``offers``, seen at ``seen_at``."""
        db = await self._db()
        try:
            await db.execute("DELETE FROM live_offer WHERE provider = ?", (provider,))
            await db.executemany(
                "INSERT INTO live_offer (provider, seen_at, offer) VALUES (?, ?, ?)",
                [(provider, seen_at.isoformat(), o.model_dump_json()) for o in offers],
            )
            await db.execute(
                "INSERT INTO refresh (provider, ok_at) VALUES (?, ?)"
                " ON CONFLICT (provider) DO UPDATE SET ok_at = excluded.ok_at",
                (provider, seen_at.isoformat()),
            )
            await db.commit()
        finally:
            await db.close()

    async def failed(self, provider: str, at: datetime, error: str) -> None:
        """A refresh of ``provider`` failed; its stored prices stay."""
        db = await self._db()
        try:
            await db.execute(
                "INSERT INTO refresh (provider, failed_at, error) VALUES (?, ?, ?) ON CONFLICT (provider)"
                " DO UPDATE SET failed_at = excluded.failed_at, error = excluded.error",
                (provider, at.isoformat(), error[:300]),
            )
            await db.commit()
        finally:
            await db.close()

    async def last_error(self, provider: str) -> str | None:
        """The error of the provider's last refresh when that one failed (None after a good one)."""
        row = await self._one(
            "SELECT error FROM refresh WHERE provider = ? AND failed_at IS NOT NULL"
            " AND (ok_at IS NULL OR failed_at > ok_at)",
            (provider,),
        )
        return str(row) if row is not None else None

    async def mark_attempt(self, at: datetime) -> None:
        """A whole refresh ran at ``at`` (good or not): the schedule waits a period from here."""
        db = await self._db()
        try:
            await db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_attempt', ?)", (at.isoformat(),))
            await db.commit()
        finally:
            await db.close()

    async def last_attempt(self) -> datetime | None:
        value = await self._one("SELECT value FROM meta WHERE key = 'last_attempt'", ())
        return datetime.fromisoformat(str(value)) if value is not None else None

    async def _one(self, sql: str, args: tuple[str, ...]) -> object | None:
        if not self.path.exists():
            return None
        db = await self._db()
        try:
            async with db.execute(sql, args) as cursor:
                row = await cursor.fetchone()
        finally:
            await db.close()
        return row[0] if row else None

    async def offers(self) -> list[tuple[CloudOffer, str]]:
        """Every stored price with the UTC time it was seen, by provider."""
        if not self.path.exists():
            return []
        db = await self._db()
        try:
            async with db.execute("SELECT offer, seen_at FROM live_offer ORDER BY provider, rowid") as cursor:
                rows = await cursor.fetchall()
        finally:
            await db.close()
        return [(CloudOffer.model_validate_json(offer), seen_at) for offer, seen_at in rows]

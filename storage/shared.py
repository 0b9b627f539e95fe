"""State that must be one across processes: rate-limit windows and long button payloads.

On SQLite (one process) the bot keeps these in memory as before; with PostgreSQL every worker
counts in, and reads from, the same tables, so a user flooding two workers is limited as one and
a button made by one worker can be pressed on another.
"""

from __future__ import annotations

from collections.abc import Sequence

from storage.base import Database
from storage.queue import now_sql

WINDOW_S = 60.0


async def m102_shared_state(db: Database) -> None:
    """Rate-limit events per key (a sliding window) and button questions by key."""
    await db.execute("CREATE TABLE rate_events (key TEXT NOT NULL, ts REAL NOT NULL)")
    await db.execute("CREATE INDEX rate_events_key ON rate_events (key, ts)")
    await db.execute("CREATE TABLE buttons (key TEXT PRIMARY KEY, query TEXT NOT NULL, expires_at REAL NOT NULL)")


class RateWindows:
    """Sliding one-minute windows in the database; the only SQL for ``rate_events``."""

    def __init__(self, db: Database, window_s: float = WINDOW_S) -> None:
        self.db, self.window_s = db, window_s
        self._now = now_sql(db)

    async def take(self, limits: Sequence[tuple[str, int]]) -> float:
        """Charge one event to every ``(key, per_window)`` if each is under its limit: 0.0.

        Otherwise charge nothing and return the seconds until the first full key has room. One
        transaction; on PostgreSQL the keys' advisory locks (taken in a fixed order, so two
        workers never deadlock) make the count-then-insert atomic across processes.
        """
        limits = [(key, n) for key, n in limits if key]
        if not limits:
            return 0.0
        async with self.db.transaction() as tx:
            if tx.dialect == "postgresql":
                for key, _ in sorted(limits):
                    await tx.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (key,))
            now = float(await tx.fetchval(f"SELECT {self._now}"))
            for key, per_window in limits:
                await tx.execute("DELETE FROM rate_events WHERE key = ? AND ts <= ?", (key, now - self.window_s))
                count, oldest = await tx.fetchone(  # type: ignore[misc]
                    "SELECT COUNT(*), MIN(ts) FROM rate_events WHERE key = ?", (key,)
                )
                if count >= per_window:
                    return max(0.001, self.window_s - (now - float(oldest)))
            for key, _ in limits:
                await tx.execute("INSERT INTO rate_events (key, ts) VALUES (?, ?)", (key, now))
        return 0.0

    async def prune(self) -> int:
        """Drop events older than the window for keys nobody asked with since (a leader's clean-up)."""
        return await self.db.execute(f"DELETE FROM rate_events WHERE ts <= {self._now} - ?", (self.window_s,))


class ButtonTable:
    """Button questions by key, with an expiry; the only SQL for ``buttons``."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._now = now_sql(db)

    async def put(self, key: str, query: str, ttl_s: float) -> None:
        await self.db.execute(
            f"INSERT INTO buttons (key, query, expires_at) VALUES (?, ?, {self._now} + ?)"
            " ON CONFLICT (key) DO UPDATE SET query = excluded.query, expires_at = excluded.expires_at",
            (key, query, ttl_s),
        )

    async def get(self, key: str) -> str | None:
        value = await self.db.fetchval(f"SELECT query FROM buttons WHERE key = ? AND expires_at > {self._now}", (key,))
        return None if value is None else str(value)

    async def prune(self) -> int:
        return await self.db.execute(f"DELETE FROM buttons WHERE expires_at <= {self._now}")

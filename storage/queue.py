"""The shared inbox: Telegram updates any process may ingest and any worker may claim, under a lease.

Ingest (the elected poller, or every webhook worker) inserts an update once (``add``; a second
delivery of the same ``update_id`` is ignored). A worker ``claim``s a batch: one statement marks
the oldest unclaimed rows with its name and a lease, skipping rows another worker is claiming at
that instant (PostgreSQL ``FOR UPDATE SKIP LOCKED``), so two workers never get the same update.
The answered update is marked ``done``. A worker that dies stops renewing: once its lease runs
out the update is claimed again by another worker. So every update is answered; exactly once
normally, twice only when a worker died between sending the answer and marking it done.
On a graceful stop a worker ``release``s what it claimed but did not start. Times come from the
database's clock, so workers on hosts whose clocks differ agree on when a lease ran out.

Fencing: every claim numbers the row anew (``fence``, never decreasing). A worker may send for an
update only while ``hold`` finds that number and its name still on the row, in the statement that
also extends the lease; a worker paused past its lease (SIGSTOP, a long GC, a frozen loop) then
finds the row claimed again by someone else and drops the update instead of answering it twice.
Once the first message of an answer is out, ``began`` records which claim sent it (``sent_fence``):
that claim finishes the answer, and a later claim of the row (its sender stalled past the lease,
or the database's clock jumped) closes it without sending the answer again (``Claimed.begun``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from storage.base import Database, store_errors

CHANNEL = "fitbot_inbox"  # NOTIFY channel: new updates are waiting
DONE_KEEP_S = 86_400.0
LEASE_S = 15.0  # renewed every 5 s while held; a dead worker's updates wait at most this
MAX_CLAIMS = 5  # an update whose worker died this often is set aside (poison), not claimed again


async def m101_inbox_leases(db: Database) -> None:
    """Who claimed an open update, until when, and how often it was claimed."""
    await db.execute("ALTER TABLE tg_inbox ADD COLUMN claimed_by TEXT")
    await db.execute("ALTER TABLE tg_inbox ADD COLUMN lease_until REAL")
    await db.execute("ALTER TABLE tg_inbox ADD COLUMN claims INTEGER NOT NULL DEFAULT 0")
    await db.execute("CREATE INDEX tg_inbox_lease ON tg_inbox (done_at, lease_until)")


async def m104_inbox_fences(db: Database) -> None:
    """The fencing token (raised by every claim, compared before a send) and the claim whose answer went out."""
    await db.execute("ALTER TABLE tg_inbox ADD COLUMN fence INTEGER NOT NULL DEFAULT 0")
    await db.execute("ALTER TABLE tg_inbox ADD COLUMN sent_fence INTEGER")


POSTGRES_NOW = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)"


def now_sql(db: Database) -> str:
    """The database's clock as Unix seconds (with fractions), in its dialect: the only clock leases use."""
    if db.dialect == "postgresql":
        return POSTGRES_NOW
    return "((julianday('now') - 2440587.5) * 86400.0)"


async def _nothing() -> None:
    return None


@dataclass(frozen=True)
class Claimed:
    update_id: int
    user_key: str
    data: str
    claims: int  # 1 the first time; more means an earlier worker died holding it
    fence: int  # this claim's number: sends are allowed only while the row still carries it
    sent_fence: int | None = None  # the earlier claim that began sending the answer, if one did

    @property
    def begun(self) -> bool:
        """An earlier claim sent (part of) the answer and finishes it: close this one, do not answer again."""
        return self.sent_fence is not None


Lease = tuple[int, int]  # (update_id, fence)


@dataclass(frozen=True)
class InboxDepth:
    open: int  # not answered yet
    unclaimed: int  # of those, waiting for a worker (no lease, or a lease that ran out)
    oldest_unclaimed_s: float | None  # how long the oldest of those has waited
    set_aside: int  # poison: claimed MAX_CLAIMS times (workers died or sends failed), never answered


class SharedInbox:
    """The only SQL for claiming from ``tg_inbox``; ``worker`` names this process in the claims."""

    def __init__(self, db: Database, worker: str, lease_s: float = LEASE_S) -> None:
        self.db, self.worker, self.lease_s = db, worker, lease_s
        self._now = now_sql(db)

    async def add(self, items: Sequence[tuple[int, str, str]]) -> int:
        """Store ``(update_id, user_key, data)`` rows in one statement; ids seen before are ignored."""
        if not items:
            return 0
        marks = ", ".join(f"(?, ?, ?, {self._now})" for _ in items)
        values = [v for item in items for v in item]
        added = await self.db.execute(
            f"INSERT INTO tg_inbox (update_id, user_key, data, received_at) VALUES {marks}"
            " ON CONFLICT (update_id) DO NOTHING",
            values,
        )
        if added and self.db.dialect == "postgresql":
            await self.db.execute("SELECT pg_notify(?, '')", (CHANNEL,))
        return added

    async def listen(self, wake: Callable[[], None]) -> Callable[[], Awaitable[None]]:
        """Call ``wake`` whenever any process adds updates (PostgreSQL ``LISTEN``); returns the closer.

        Claiming also polls (a notification sent while reconnecting is missed), so this only saves
        the wait; on SQLite, where one process adds and claims, it does nothing.
        """
        dedicated = getattr(self.db, "dedicated", None)
        if dedicated is None:
            return _nothing
        conn = await dedicated()

        def notified(*_: Any) -> None:
            wake()

        await conn.add_listener(CHANNEL, notified)

        async def close() -> None:
            with contextlib.suppress(*store_errors(), TimeoutError):
                await conn.close(timeout=2)

        return close

    async def last_update_id(self) -> int | None:
        """The highest id ever stored: the poller goes on from there (the newest row is never pruned)."""
        value = await self.db.fetchval("SELECT MAX(update_id) FROM tg_inbox")
        return None if value is None else int(value)

    async def prune(self, keep_s: float = DONE_KEEP_S) -> int:
        """Forget answered updates older than ``keep_s`` (kept meanwhile to recognise a re-delivery)."""
        return await self.db.execute(
            f"DELETE FROM tg_inbox WHERE done_at IS NOT NULL AND done_at < {self._now} - ?"
            " AND update_id < (SELECT MAX(update_id) FROM tg_inbox)",
            (keep_s,),
        )

    async def claim(self, limit: int) -> list[Claimed]:
        """Up to ``limit`` of the oldest claimable updates, now leased to this worker, oldest first."""
        skip_locked = " FOR UPDATE SKIP LOCKED" if self.db.dialect == "postgresql" else ""
        rows = await self.db.fetchall(
            f"UPDATE tg_inbox SET claimed_by = ?, lease_until = {self._now} + ?, claims = claims + 1,"
            " fence = fence + 1"
            " WHERE update_id IN (SELECT update_id FROM tg_inbox WHERE done_at IS NULL AND claims < ?"
            f" AND (lease_until IS NULL OR lease_until < {self._now}) ORDER BY update_id LIMIT ?{skip_locked})"
            " RETURNING update_id, user_key, data, claims, fence, sent_fence",
            (self.worker, self.lease_s, MAX_CLAIMS, limit),
        )
        return sorted((Claimed(*row) for row in rows), key=lambda c: c.update_id)

    async def hold(self, lease: Lease) -> bool:
        """The fence before a send: True, with the lease extended, while the claim is still this one.

        False when another claim came since (the lease ran out and a worker took it over), when the
        update was given back or closed: the caller must not send for it.
        """
        return bool(await self._mine(f"lease_until = {self._now} + ?", (self.lease_s,), [lease]))

    async def began(self, lease: Lease) -> int:
        """The answer's first message went out under this claim: no later claim sends it again."""
        return await self._mine("sent_fence = fence", (), [lease])

    async def renew(self, leases: Sequence[Lease]) -> set[int]:
        """Extend this worker's leases; returns the ids still held (the others are lost: drop them)."""
        if not leases:
            return set()
        where, args = _fenced(leases)
        rows = await self.db.fetchall(
            f"UPDATE tg_inbox SET lease_until = {self._now} + ?"
            f" WHERE claimed_by = ? AND done_at IS NULL AND ({where}) RETURNING update_id",
            [self.lease_s, self.worker, *args],
        )
        return {int(row[0]) for row in rows}

    async def done(self, update_ids: Sequence[int], failed: str | None = None) -> int:
        """Close updates: answered, or given up with the reason in ``failed`` (whoever holds them:
        a late answer still closes the row, so a worker that took it over since does not send again)."""
        if not update_ids:
            return 0
        marks = ", ".join("?" for _ in update_ids)
        return await self.db.execute(
            f"UPDATE tg_inbox SET done_at = {self._now}, lease_until = NULL, failed = ? WHERE update_id IN ({marks})",
            [failed, *update_ids],
        )

    async def retry_later(self, lease: Lease, after_s: float) -> int:
        """Give back an update whose answer failed on the network: any worker claims it after ``after_s``.

        Its claim count stays, so an update that keeps failing is set aside after ``MAX_CLAIMS``.
        """
        return await self._mine(f"claimed_by = NULL, lease_until = {self._now} + ?", (after_s,), [lease])

    async def release(self, leases: Sequence[Lease]) -> int:
        """Give back claimed updates not started (a graceful stop): others claim them at once."""
        return await self._mine("claimed_by = NULL, lease_until = NULL, claims = claims - 1", (), leases)

    async def _mine(self, assignments: str, args: tuple[object, ...], leases: Sequence[Lease]) -> int:
        if not leases:
            return 0
        where, fenced = _fenced(leases)
        return await self.db.execute(
            f"UPDATE tg_inbox SET {assignments} WHERE claimed_by = ? AND done_at IS NULL AND ({where})",
            [*args, self.worker, *fenced],
        )

    async def depth(self) -> InboxDepth:
        """What ``fitbot health`` shows: open, waiting, the oldest wait, and set-aside updates."""
        row = await self.db.fetchone(
            "SELECT COUNT(*),"
            f" COALESCE(SUM(CASE WHEN claims < ? AND (lease_until IS NULL OR lease_until < {self._now}) THEN 1 ELSE 0 END), 0),"
            f" MIN(CASE WHEN claims < ? AND (lease_until IS NULL OR lease_until < {self._now}) THEN received_at END),"
            " COALESCE(SUM(CASE WHEN claims >= ? THEN 1 ELSE 0 END), 0),"
            f" {self._now}"
            " FROM tg_inbox WHERE done_at IS NULL",
            (MAX_CLAIMS, MAX_CLAIMS, MAX_CLAIMS),
        )
        assert row is not None  # an aggregate always has one row
        total, unclaimed, oldest, poison, now = row
        waited = None if oldest is None else max(0.0, float(now) - float(oldest))
        return InboxDepth(int(total), int(unclaimed), waited, int(poison))


def _fenced(leases: Sequence[Lease]) -> tuple[str, list[int]]:
    """``(update_id = ? AND fence = ?) OR …``: rows still under these very claims (portable SQL)."""
    where = " OR ".join("(update_id = ? AND fence = ?)" for _ in leases)
    return where, [value for lease in leases for value in lease]

"""Leader election for the jobs only one process may run (Telegram long polling, the price refresh,
clean-ups), through PostgreSQL session advisory locks and a heartbeat others may break.

Each candidate keeps a connection of its own and asks ``pg_try_advisory_lock`` every ``retry_s``.
When its process dies (SIGKILL, OOM, a lost host: TCP keepalives end the session) PostgreSQL drops
the lock with the session, and the next candidate to ask takes over, so failover takes at most
about ``retry_s``. A process that is alive but makes no progress (SIGSTOP, a long GC, a frozen
event loop) keeps its session, though, and with it the lock: so the holder also beats, every
``check_s`` from its event loop and before each step of its job (``beat``), into ``leader_beats``
by the database's clock. A candidate that finds the beat older than ``lease_s`` ends the holder's
session (``pg_terminate_backend``, only if that session still holds the lock) and takes over; the
stalled leader, once it runs again, finds its session gone and steps down before its next step.
On SQLite there is one process, and it is always the leader (``LocalElection``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

from storage.base import Database, store_errors
from storage.queue import POSTGRES_NOW

log = logging.getLogger(__name__)

RETRY_S = 1.0
CHECK_S = 1.0
LEASE_S = 10.0  # a leader whose beat is older than this is stalled: a candidate breaks its lead
KEEPALIVE = {"tcp_keepalives_idle": "10", "tcp_keepalives_interval": "5", "tcp_keepalives_count": "3"}
Job = Callable[[asyncio.Event], Coroutine[Any, Any, None]]


def _failures() -> tuple[type[BaseException], ...]:
    return (*store_errors(), TimeoutError)


async def m105_leader_beats(db: Database) -> None:
    """Each job's leader: its session (``pg_backend_pid``) and the last time it made progress."""
    await db.execute("CREATE TABLE leader_beats (job TEXT PRIMARY KEY, pid INTEGER NOT NULL, beat_at REAL NOT NULL)")


def lock_key(job: str) -> int:
    """A stable, non-negative 63-bit advisory-lock key per job name."""
    return int.from_bytes(hashlib.blake2b(f"fitbot:{job}".encode(), digest_size=8).digest(), "big") >> 1


class Election(Protocol):
    job: str

    async def lead(self, stop: asyncio.Event) -> bool:
        """Wait until this process leads ``job`` (True), or ``stop`` is set first (False)."""
        ...

    async def lost(self) -> None:
        """Return once leadership is lost (never, on SQLite)."""
        ...

    async def beat(self) -> bool:
        """The job's own progress: still the leader (True, and the lease goes on), or not (stop now)."""
        ...

    async def resign(self) -> None: ...


class LocalElection:
    """One process owns the SQLite data directory, so it leads every job."""

    def __init__(self, job: str) -> None:
        self.job = job

    async def lead(self, stop: asyncio.Event) -> bool:
        return not stop.is_set()

    async def lost(self) -> None:
        await asyncio.Event().wait()

    async def beat(self) -> bool:
        return True

    async def resign(self) -> None:
        return None


class AdvisoryLockElection:
    """Leads ``job`` while holding its advisory lock on a connection of its own and beating in time."""

    def __init__(
        self,
        connect: Callable[[], Awaitable[Any]],
        job: str,
        retry_s: float = RETRY_S,
        check_s: float = CHECK_S,
        lease_s: float = LEASE_S,
    ):
        self._connect, self.job, self.retry_s, self.check_s, self.lease_s = connect, job, retry_s, check_s, lease_s
        self.key = lock_key(job)
        self._conn: Any = None
        self._using = asyncio.Lock()  # one statement at a time on the connection (the job beats too)

    async def lead(self, stop: asyncio.Event) -> bool:
        while not stop.is_set():
            try:
                if self._conn is None or self._conn.is_closed():
                    self._conn = await self._connect()
                async with self._using:
                    if await self._conn.fetchval("SELECT pg_try_advisory_lock($1)", self.key):
                        await self._conn.execute(
                            f"INSERT INTO leader_beats (job, pid, beat_at) VALUES ($1, pg_backend_pid(), {POSTGRES_NOW})"
                            " ON CONFLICT (job) DO UPDATE SET pid = excluded.pid, beat_at = excluded.beat_at",
                            self.job,
                        )
                        log.info("leading %s", self.job, extra={"event": "leader_elected", "job": self.job})
                        return True
                    await self._break_stalled()
            except _failures() as exc:
                log.warning("leader election for %s: %s", self.job, exc.__class__.__name__)
                await self._drop()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.retry_s)
        return False

    async def _break_stalled(self) -> None:
        """End the session of a holder whose beat is older than the lease (it still holds the lock)."""
        broken = await self._conn.fetch(
            "SELECT pg_terminate_backend(CAST(b.pid AS INTEGER)) FROM leader_beats b JOIN pg_locks l ON l.pid = b.pid"
            f" WHERE b.job = $1 AND b.beat_at < {POSTGRES_NOW} - CAST($2 AS DOUBLE PRECISION)"
            " AND l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
            " AND ((CAST(l.classid AS BIGINT) << 32) | CAST(l.objid AS BIGINT)) = CAST($3 AS BIGINT)",
            self.job,
            self.lease_s,
            self.key,
        )
        if broken:
            log.warning(
                "the leader of %s made no progress for %.0f s; ended its session to take over",
                self.job,
                self.lease_s,
                extra={"event": "leader_broken", "job": self.job},
            )

    async def beat(self) -> bool:
        if self._conn is None or self._conn.is_closed():
            return False
        try:
            async with self._using:
                status = await asyncio.wait_for(
                    self._conn.execute(
                        f"UPDATE leader_beats SET beat_at = {POSTGRES_NOW} WHERE job = $1 AND pid = pg_backend_pid()",
                        self.job,
                    ),
                    self.check_s * 5,
                )
        except _failures():
            return False
        return bool(status == "UPDATE 1")

    async def lost(self) -> None:
        while await self.beat():
            await asyncio.sleep(self.check_s)
        log.warning("lost the lead of %s", self.job, extra={"event": "leader_lost", "job": self.job})
        await self._drop()

    async def resign(self) -> None:
        if self._conn is not None and not self._conn.is_closed():
            with contextlib.suppress(*_failures()):
                async with self._using:
                    await self._conn.execute(
                        "DELETE FROM leader_beats WHERE job = $1 AND pid = pg_backend_pid()", self.job
                    )
                    await self._conn.execute("SELECT pg_advisory_unlock($1)", self.key)
        await self._drop()

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(*_failures()):
                await conn.close(timeout=2)


def election(db: Database, job: str, retry_s: float = RETRY_S, lease_s: float = LEASE_S) -> Election:
    """The election for ``job`` on this database: advisory locks and beats on PostgreSQL, always-leader on SQLite."""
    if not db.shared:
        return LocalElection(job)
    from storage.postgres import PostgresDatabase

    if not isinstance(db, PostgresDatabase):
        raise TypeError(f"no leader election on {db.dialect}")
    return AdvisoryLockElection(lambda: db.dedicated(KEEPALIVE), job, retry_s=retry_s, lease_s=lease_s)


async def leader_of(db: Database, job: str) -> str | None:
    """The ``application_name`` (``fitbot@host:pid``) of the process leading ``job``, or None."""
    if not db.shared:
        return "this process"
    key = lock_key(job)
    name = await db.fetchval(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
        " AND ((CAST(l.classid AS BIGINT) << 32) | CAST(l.objid AS BIGINT)) = ?",
        (key,),
    )
    return str(name) if name is not None else None


async def while_leader(elect: Election, stop: asyncio.Event, job: Job) -> None:
    """Run ``job(job_stop)`` whenever this process leads, until ``stop``; it is stopped when the lead is lost.

    ``job`` gets its own stop event, set when ``stop`` is set or the lead is lost; it must return
    soon after. Then, unless ``stop`` is set, the process stands as a candidate again.
    """
    try:
        while await elect.lead(stop):
            job_stop = asyncio.Event()
            lost = asyncio.create_task(elect.lost())
            stopped = asyncio.create_task(stop.wait())
            running = asyncio.create_task(job(job_stop))
            await asyncio.wait({lost, stopped, running}, return_when=asyncio.FIRST_COMPLETED)
            job_stop.set()
            lost.cancel()
            stopped.cancel()
            try:
                await running
            finally:
                await elect.resign()
            if stop.is_set():
                return
    finally:
        await elect.resign()

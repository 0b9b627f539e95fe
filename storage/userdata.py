"""The user-data database (``user.sqlite`` in the data directory): what FitBot learns at run time, not facts.

It is a separate file from ``catalog.sqlite`` because the catalog is rebuilt from the fact files
whenever they change, and nothing a user caused may be lost by that. ``UserDataStore`` owns the
database (``storage``: the SQLite file in WAL mode, so readers never wait for the writer, or
with ``FITBOT_DATABASE_URL`` a PostgreSQL database that many processes share) and hands out one
object per table: ``HubCacheRows``, ``PreferenceStore`` and ``QueryLog`` (storage/prefs.py), ``RunStore``
(storage/runs.py). It also
holds the migrations of tables whose rows other packages give meaning to (the hub cache's JSON,
the refreshed prices): storage knows their SQL, not the hub's or the price feeds' models.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Self

import aiosqlite

from storage.base import Database, is_postgres_url, process_name
from storage.inbox import DeferredJournal, InboxStore, m004_inbox, m005_inbox_failed
from storage.leader import m105_leader_beats
from storage.migrations import Migration, migrate
from storage.prefs import PreferenceStore, QueryLog, m002_preferences, m003_query_log
from storage.queue import m101_inbox_leases, m104_inbox_fences
from storage.runs import RunStore, m106_measured_runs, m107_pooled_runs, m108_run_attention_share
from storage.shared import m102_shared_state
from storage.sqlite import SqliteDatabase

log = logging.getLogger(__name__)


async def m001_hub_cache(db: Database) -> None:
    """Hub look-ups by lower-cased repo id, with the revision and fetch time next to the JSON."""
    await db.execute(
        "CREATE TABLE hub_cache (repo_key TEXT PRIMARY KEY, repo_id TEXT NOT NULL, revision TEXT NOT NULL,"
        " fetched_at TEXT NOT NULL, data TEXT NOT NULL)"
    )


async def m103_live_prices(db: Database) -> None:
    """Offers as JSON with the refresh that read them, each provider's last good and failed refresh, the last run."""
    await db.execute(
        "CREATE TABLE price_offers (id INTEGER PRIMARY KEY, provider TEXT NOT NULL, seen_at TEXT NOT NULL,"
        " offer TEXT NOT NULL)"
    )
    await db.execute("CREATE INDEX price_offers_provider ON price_offers (provider)")
    await db.execute("CREATE TABLE price_refreshes (provider TEXT PRIMARY KEY, ok_at TEXT, failed_at TEXT, error TEXT)")
    await db.execute("CREATE TABLE price_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


USER_MIGRATIONS: tuple[Migration, ...] = (
    m001_hub_cache,
    m002_preferences,
    m003_query_log,
    m004_inbox,
    m005_inbox_failed,
    m101_inbox_leases,
    m102_shared_state,
    m103_live_prices,
    m104_inbox_fences,
    m105_leader_beats,
    m106_measured_runs,
    m107_pooled_runs,
    m108_run_attention_share,
)
LOCKED_RETRIES = 5
MIGRATION_WAIT_MS = 30_000  # another process migrating the same file holds the write lock this long at most
FILE_MODE = 0o600  # preferences are personal data: owner only (SQLite gives -wal/-shm the same mode)


class HubCacheRows:
    """The only SQL that touches ``hub_cache``: one JSON text per lower-cased repo id, with its revision and
    fetch time. What the JSON means is the hub's business (``catalog.hub.cache.HubCache``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, repo_id: str) -> str | None:
        return await self._db.fetchval("SELECT data FROM hub_cache WHERE repo_key = ?", (repo_id.lower(),))  # type: ignore[no-any-return]

    async def put(self, key: str, repo_id: str, revision: str, fetched_at: datetime, data: str) -> None:
        """Store (or replace) the look-up under ``key`` (the id the user asked for)."""
        await self._db.execute(
            "INSERT INTO hub_cache VALUES (?, ?, ?, ?, ?) ON CONFLICT (repo_key) DO UPDATE SET"
            " repo_id = excluded.repo_id, revision = excluded.revision, fetched_at = excluded.fetched_at,"
            " data = excluded.data",
            (key.lower(), repo_id, revision, fetched_at.isoformat(), data),
        )

    async def delete(self, repo_id: str) -> None:
        await self._db.execute("DELETE FROM hub_cache WHERE repo_key = ?", (repo_id.lower(),))

    async def prune(self, older_than: timedelta, now: datetime | None = None) -> int:
        """Delete look-ups fetched longer ago than ``older_than``; return how many went."""
        cutoff = ((now or datetime.now(UTC)) - older_than).isoformat()
        return await self._db.execute("DELETE FROM hub_cache WHERE fetched_at < ?", (cutoff,))


class UserDataStore:
    """Opens the user database (creating and migrating it) and owns its connection(s).

    ``path`` is the SQLite file; with a PostgreSQL ``url`` the database lives there instead and
    ``path`` only names the data directory's side files (the answer and deferral journals).
    """

    def __init__(self, path: Path, busy_timeout_ms: int = 250, url: str | None = None) -> None:
        if url and not is_postgres_url(url):
            raise ValueError("the user database URL must start with postgresql:// (or be empty: the SQLite file)")
        self.path = path
        self.url = url or None
        self.busy_timeout_ms = busy_timeout_ms  # how long a write waits for another writer's lock
        self._db: aiosqlite.Connection | None = None
        self._database: Database | None = None
        self._deferred: DeferredJournal | None = None

    async def open(self) -> Self:
        """Open, creating and migrating; on SQLite see ``_open_sqlite``."""
        if self.url is None:
            self._db = await self._open_sqlite()
            self._database = SqliteDatabase(self._db)
        else:
            from storage import open_database

            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._database = await open_database(self.url, application_name=process_name())
            try:
                await migrate(self._database, USER_MIGRATIONS)
            except BaseException:
                await self.close()
                raise
        return self

    async def _open_sqlite(self) -> aiosqlite.Connection:
        """Open, creating (mode 600) and migrating; a corrupt file is moved aside and a fresh one started.

        The user database holds conveniences (saved defaults, a cache, statistics), so losing it
        must never stop the bot: the broken file is kept next to the new one for inspection.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _create_private(self.path)
        try:
            return await self._connect()
        except sqlite3.DatabaseError as exc:
            if not _corrupt(exc):
                raise
            moved = _move_aside(self.path)
            log.error(
                "user database is corrupt; moved it aside and started a fresh one",
                extra={"event": "user_db_corrupt", "error": str(exc), "moved_to": str(moved)},
            )
            _create_private(self.path)
            return await self._connect()

    async def _connect(self) -> aiosqlite.Connection:
        """Connect and migrate; a start racing another process's is tried again (see ``_connect_once``)."""
        for attempt in range(LOCKED_RETRIES):
            try:
                return await self._connect_once()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == LOCKED_RETRIES - 1:
                    raise
                await asyncio.sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    async def _connect_once(self) -> aiosqlite.Connection:
        """Some lock steps (switching a fresh file to WAL) answer "locked" without waiting the busy timeout."""
        db = await aiosqlite.connect(self.path, isolation_level=None)  # autocommit; migrate() opens its own
        try:
            await db.execute(f"PRAGMA busy_timeout={MIGRATION_WAIT_MS}")  # before anything that takes a lock
            await db.execute("PRAGMA journal_mode=WAL")
            await db.execute("PRAGMA synchronous=FULL")  # an acknowledged write survives a crash
            async with db.execute("PRAGMA quick_check") as cur:
                verdict = [row[0] async for row in cur]
            if verdict != ["ok"]:
                raise sqlite3.DatabaseError(f"database disk image is malformed: {verdict[:3]}")
            await migrate(db, USER_MIGRATIONS)
            await db.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")
        except BaseException:
            await db.close()
            raise
        return db

    async def close(self) -> None:
        database, self._database, self._db = self._database, None, None
        if database is not None:
            await database.close()

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def database(self) -> Database:
        """The database every store uses, on either backend."""
        if self._database is None:
            raise RuntimeError("UserDataStore is not open")
        return self._database

    @property
    def db(self) -> aiosqlite.Connection:
        """The raw SQLite connection (SQLite only: PRAGMAs, the SQLite-only inbox journal)."""
        if self._db is None:
            raise RuntimeError("UserDataStore is not open on SQLite")
        return self._db

    @property
    def hub_cache(self) -> HubCacheRows:
        return HubCacheRows(self.database)

    @property
    def prefs(self) -> PreferenceStore:
        return PreferenceStore(self.database)

    @property
    def runs(self) -> RunStore:
        """Runs users measured on their rigs (``/forget`` deletes them with the preferences)."""
        return RunStore(self.database)

    def query_log(self, retention_days: int = 90) -> QueryLog:
        return QueryLog(self.database, timedelta(days=retention_days))

    @property
    def deferred(self) -> DeferredJournal:
        """Deferred Discord interactions (one journal per data directory, shared by every shard)."""
        if self._deferred is None:
            self._deferred = DeferredJournal(self.path.with_name(self.path.name + ".deferred"))
        return self._deferred

    @property
    def inbox(self) -> InboxStore:
        return InboxStore(self.db, self.path.with_name(self.path.name + ".answered"))


def _create_private(path: Path) -> None:
    """Create ``path`` owner-only if it is missing; tighten an existing file that others could read."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, FILE_MODE)
    except OSError:
        log.warning("could not restrict the permissions of %s", path)


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    """A damaged file, not a busy one: "locked"/"busy" are OperationalErrors that will pass."""
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text or "encrypted" in text


def _move_aside(path: Path) -> Path:
    target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(path) + suffix)
        if src.exists():
            os.replace(src, Path(str(target) + suffix))
    return target

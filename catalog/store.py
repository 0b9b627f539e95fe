"""``CatalogStore``: the only code that reads and writes the fact catalog's SQLite file.

The fact files are the truth; the SQLite file is a build product. On open the store compares the
files' hash with the one recorded in ``meta`` and rebuilds all fact tables in one transaction when
they differ (or when the file is new). The user's own data lives in another file (``user.sqlite``),
so a rebuild can never lose it.

The parser's vocabulary and name index are kept in ``meta`` too, keyed by the facts and by the code
that builds them (``catalog.name_code.names_key``): every process start needs them, and reading them
back costs a tenth of building them. ``read_current`` reads a current file without an event loop,
for one-shot commands; everything else goes through ``load``.
"""

from __future__ import annotations

import gc
import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from catalog.fact_files import FACTS_DIR, facts_hash
from catalog.name_code import names_key
from core.models import Catalog, CloudOffer, Frozen, GpuSpec, ModelSpec, NotADevice, QuantSize, QuantSpec

if TYPE_CHECKING:
    import logging

    import aiosqlite

LOCK_WAIT_MS = 30_000  # another process building the same file holds the write lock this long at most


class CatalogStore:
    """Builds the catalog database from the fact files and loads it as a ``Catalog``."""

    def __init__(self, path: Path, facts_dir: Path = FACTS_DIR) -> None:
        self.path = path
        self.facts_dir = facts_dir

    async def load(self) -> Catalog:
        """Open (building or rebuilding as needed) and return the whole catalog.

        The file is a cache of the fact files: when it is corrupt it is deleted and built again.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return await self._load_retrying()
        except (sqlite3.DatabaseError, ValidationError) as exc:  # ValidationError: a row that cannot be read back
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
            _log().error(
                "catalog database is unreadable; rebuilding it from the fact files",
                extra={"event": "catalog_rebuilt", "error": f"{exc.__class__.__name__}: {str(exc)[:200]}"},
            )
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
            return await self._load()

    async def _load_retrying(self) -> Catalog:
        """``_load``; a start racing another process's that SQLite answers "locked" at once is tried again."""
        import asyncio  # only in the async paths: ``read_current`` serves one-shot commands without it

        loop = asyncio.get_running_loop()
        give_up = loop.time() + LOCK_WAIT_MS / 1000  # as long as a lock is waited for: a loaded box builds slowly
        attempt = 0
        while True:
            try:
                return await self._load()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or loop.time() > give_up:
                    raise
                attempt += 1
                await asyncio.sleep(min(0.2 * attempt, 1.0))

    async def _load(self) -> Catalog:
        import aiosqlite  # only here: ``read_current`` serves one-shot commands without it

        from storage.migrations import CATALOG_MIGRATIONS, migrate

        async with aiosqlite.connect(self.path, isolation_level=None) as db:
            await db.execute(f"PRAGMA busy_timeout={LOCK_WAIT_MS}")
            await migrate(db, CATALOG_MIGRATIONS)
            if await self._version(db) != facts_hash(self.facts_dir):
                await self._rebuild(db)
            return await self._read(db)

    async def _version(self, db: aiosqlite.Connection) -> str | None:
        async with db.execute("SELECT value FROM meta WHERE key = 'facts_hash'") as cur:
            row = await cur.fetchone()
        return row[0] if row else None

    async def _rebuild(self, db: aiosqlite.Connection) -> None:
        from catalog.facts import load_facts

        catalog = load_facts(self.facts_dir)  # validate before touching the database
        await db.execute("BEGIN IMMEDIATE")
        try:
            for table in ("gpus", "models", "quants", "not_devices", "quant_sizes", "offers", "meta"):
                await db.execute(f"DELETE FROM {table}")
            await db.executemany(
                "INSERT INTO gpus VALUES (?, ?, ?)", [(g.id, g.name, g.model_dump_json()) for g in catalog.gpus]
            )
            await db.executemany(
                "INSERT INTO models VALUES (?, ?, ?)", [(m.id, m.name, m.model_dump_json()) for m in catalog.models]
            )
            await db.executemany(
                "INSERT INTO quants VALUES (?, ?, ?)", [(q.id, q.label, q.model_dump_json()) for q in catalog.quants]
            )
            await db.executemany(
                "INSERT INTO not_devices VALUES (?, ?, ?)",
                [(n.name.lower(), n.name, n.model_dump_json()) for n in catalog.not_devices],
            )
            await db.executemany(
                "INSERT INTO quant_sizes VALUES (?, ?, ?)",
                [(s.model_id, s.quant_id, s.model_dump_json()) for s in catalog.sizes],
            )
            await db.executemany(
                "INSERT INTO offers (gpu_id, price_per_hour_usd, data) VALUES (?, ?, ?)",
                [(o.gpu_id, o.price_per_hour_usd, o.model_dump_json()) for o in catalog.offers],
            )
            built = datetime.now(UTC).isoformat(timespec="seconds")
            await db.executemany(
                "INSERT INTO meta VALUES (?, ?)", [("facts_hash", catalog.version), ("built_at", built)]
            )
        except BaseException:
            await db.rollback()
            raise
        await db.commit()

    async def _read(self, db: aiosqlite.Connection) -> Catalog:
        """The catalog and its names from the open file; names built (and stored) when not current."""
        async with db.execute(META) as cur:
            meta: dict[str, str] = {str(k): str(v) async for k, v in cur}
        rows = {}
        for name, (sql, _) in TABLES.items():
            async with db.execute(sql) as cur:
                rows[name] = [row[0] async for row in cur]
        catalog = from_rows(meta, rows)
        if not adopt_stored_names(catalog, meta.get("name_index")):
            import asyncio

            names = await asyncio.to_thread(build_names, catalog)  # a fifth of a second: not on the event loop
            try:
                await db.execute("INSERT OR REPLACE INTO meta VALUES ('name_index', ?)", (names,))
            except sqlite3.OperationalError as exc:  # a read-only or locked file: the next start builds them again
                _log().warning("could not store the name index: %s", exc)
        return catalog

    def read_current(self) -> Catalog | None:
        """The catalog when the file is current, read without an event loop or a write (one-shot CLI
        commands start faster); None when it must be built, rebuilt or migrated first: then ``load``."""
        if not self.path.exists():
            return None
        try:
            with closing(sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)) as db:
                meta = dict(db.execute(META).fetchall())
                if meta.get("facts_hash") != facts_hash(self.facts_dir):
                    return None
                rows = {name: [row[0] for row in db.execute(sql)] for name, (sql, _) in TABLES.items()}
            catalog = from_rows(meta, rows)
        except (sqlite3.Error, ValidationError):  # an older schema, a damaged file: ``load`` deals with it
            return None
        # the names stored for these facts and this code, whole (a cut-short write ends mid-document), are
        # read when first asked for: an estimate given listed names never needs them (``catalog.exact``)
        stored = meta.get("name_index") or ""
        if not (stored.startswith('{"key":' + json.dumps(names_id(catalog)) + ",") and stored.endswith("}}")):
            return None
        catalog.__dict__["_names_later"] = lambda: adopt_stored_names(catalog, stored)
        return catalog


def _log() -> logging.Logger:
    """This module's logger, imported when there is something to say: ``logging`` (and the patterns it
    compiles) would cost every one-shot command a few milliseconds of its start for nothing."""
    import logging

    return logging.getLogger(__name__)


# The fact tables, read in the order they were written, and the metadata kept with them.
TABLES: dict[str, tuple[str, type[Frozen]]] = {
    "gpus": ("SELECT data FROM gpus ORDER BY rowid", GpuSpec),
    "models": ("SELECT data FROM models ORDER BY rowid", ModelSpec),
    "quants": ("SELECT data FROM quants ORDER BY rowid", QuantSpec),
    "sizes": ("SELECT data FROM quant_sizes", QuantSize),
    "offers": ("SELECT data FROM offers ORDER BY price_per_hour_usd", CloudOffer),
    "not_devices": ("SELECT data FROM not_devices", NotADevice),
}
META = "SELECT key, value FROM meta WHERE key IN ('facts_hash', 'built_at', 'name_index')"


@contextmanager
def collector_paused() -> Iterator[None]:
    """Holds the cyclic garbage collector while stored data is read back: the rows, the vocabulary and
    the name index are some 100,000 new objects without cycles, and the collections that creating them
    sets off (each walking all of them again) took a third of a start's reading."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def from_rows(meta: dict[str, str], rows: dict[str, list[str]]) -> Catalog:
    """The catalog from its stored rows (each the JSON of a validated model). Each row is validated as it
    is read; the catalog around them is then constructed, not validated: that would check every row's
    type again and run each model's own checks a second time (a millisecond of every start)."""
    with collector_paused():
        tables = {name: tuple(kind.model_validate_json(d) for d in rows[name]) for name, (_, kind) in TABLES.items()}
    return Catalog.model_construct(**tables, version=meta.get("facts_hash", ""), built_at=meta.get("built_at", ""))  # type: ignore[arg-type]


def adopt_stored_names(catalog: Catalog, stored: str | None) -> bool:
    """Hands the catalog its vocabulary and the parser's name index from their stored JSON, when that
    was built from these facts by this matching code; False when they must be built (``build_names``).
    Reading them back takes a tenth of building them, and every process start needs them."""
    from catalog.lookup import remember
    from core.query.index import adopt, index_from_data
    from core.query.types import Vocabulary

    try:
        with collector_paused():
            data = json.loads(stored) if stored else {}
            if data.get("key") != names_id(catalog):
                return False
            vocab, index = Vocabulary.model_validate(data["vocab"]), index_from_data(data["index"])
    except (ValueError, KeyError, TypeError):  # cut short or damaged: built again
        return False
    adopt(remember(catalog, vocab), index)
    return True


def build_names(catalog: Catalog) -> str:
    """Builds the catalog's vocabulary and name index, hands them over, and returns them as JSON to store."""
    from catalog.lookup import build_vocabulary, remember
    from core.query.index import adopt, build_index, index_data

    vocab = remember(catalog, build_vocabulary(catalog))
    index = adopt(vocab, build_index(vocab))
    data = {"key": names_id(catalog), "vocab": vocab.model_dump(mode="json"), "index": index_data(index)}
    return json.dumps(data, separators=(",", ":"))


def names_id(catalog: Catalog) -> str:
    return f"{catalog.version}:{names_key()}"

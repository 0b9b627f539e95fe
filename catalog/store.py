"""``CatalogStore``: the only code that reads and writes the fact catalog's SQLite file.

The fact files are the truth; the SQLite file is a build product. On open the store compares the
files' hash with the one recorded in ``meta`` and rebuilds all fact tables in one transaction when
they differ (or when the file is new). The user's own data lives in another file (``user.sqlite``),
so a rebuild can never lose it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import aiosqlite
from pydantic import ValidationError

from catalog.facts import FACTS_DIR, facts_hash, load_facts
from catalog.lookup import build_vocabulary, names_key, remember
from catalog.migrations import CATALOG_MIGRATIONS, migrate
from core.models import Catalog, CloudOffer, GpuSpec, ModelSpec, NotADevice, QuantSize, QuantSpec
from core.query import Vocabulary
from core.query_index import adopt, build_index, index_data, index_from_data

log = logging.getLogger(__name__)
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
            log.error(
                "catalog database is unreadable; rebuilding it from the fact files",
                extra={"event": "catalog_rebuilt", "error": f"{exc.__class__.__name__}: {str(exc)[:200]}"},
            )
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
            return await self._load()

    async def _load_retrying(self) -> Catalog:
        """``_load``; a start racing another process's that SQLite answers "locked" at once is tried again."""
        for attempt in range(5):
            try:
                return await self._load()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 4:
                    raise
                await asyncio.sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    async def _load(self) -> Catalog:
        async with aiosqlite.connect(self.path, isolation_level=None) as db:
            await db.execute(f"PRAGMA busy_timeout={LOCK_WAIT_MS}")
            await migrate(db, CATALOG_MIGRATIONS)
            if await self._version(db) != facts_hash(self.facts_dir):
                await self._rebuild(db)
            catalog = await self._read(db)
            await self._names(db, catalog)
            return catalog

    async def _version(self, db: aiosqlite.Connection) -> str | None:
        async with db.execute("SELECT value FROM meta WHERE key = 'facts_hash'") as cur:
            row = await cur.fetchone()
        return row[0] if row else None

    async def _rebuild(self, db: aiosqlite.Connection) -> None:
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

    async def _names(self, db: aiosqlite.Connection, catalog: Catalog) -> None:
        """Hands the catalog its vocabulary and the parser's name index, read from the file; the first
        load after a build (or after the code that builds them changed) builds them and stores them.
        Reading them back takes a tenth of building them, and every process start needs them."""
        key = f"{catalog.version}:{names_key()}"
        async with db.execute("SELECT value FROM meta WHERE key = 'name_index'") as cur:
            row = await cur.fetchone()
        stored = json.loads(row[0]) if row else {}
        if stored.get("key") == key:
            vocab = Vocabulary.model_validate(stored["vocab"])
            adopt(remember(catalog, vocab), index_from_data(stored["index"]))
            return
        vocab = remember(catalog, build_vocabulary(catalog))
        index = adopt(vocab, build_index(vocab))
        data = {"key": key, "vocab": vocab.model_dump(mode="json"), "index": index_data(index)}
        try:
            await db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('name_index', ?)", (json.dumps(data, separators=(",", ":")),)
            )
        except sqlite3.OperationalError as exc:  # a read-only or locked file: the next start builds them again
            log.warning("could not store the name index: %s", exc)

    async def _read(self, db: aiosqlite.Connection) -> Catalog:
        async def column(sql: str) -> list[str]:
            async with db.execute(sql) as cur:
                return [row[0] async for row in cur]

        async with db.execute("SELECT key, value FROM meta WHERE key IN ('facts_hash', 'built_at')") as cur:
            meta: dict[str, str] = {str(k): str(v) async for k, v in cur}
        return Catalog(
            gpus=tuple(GpuSpec.model_validate_json(d) for d in await column("SELECT data FROM gpus ORDER BY rowid")),
            models=tuple(
                ModelSpec.model_validate_json(d) for d in await column("SELECT data FROM models ORDER BY rowid")
            ),
            quants=tuple(
                QuantSpec.model_validate_json(d) for d in await column("SELECT data FROM quants ORDER BY rowid")
            ),
            sizes=tuple(QuantSize.model_validate_json(d) for d in await column("SELECT data FROM quant_sizes")),
            offers=tuple(
                CloudOffer.model_validate_json(d)
                for d in await column("SELECT data FROM offers ORDER BY price_per_hour_usd")
            ),
            not_devices=tuple(NotADevice.model_validate_json(d) for d in await column("SELECT data FROM not_devices")),
            version=meta.get("facts_hash", ""),
            built_at=meta.get("built_at", ""),
        )

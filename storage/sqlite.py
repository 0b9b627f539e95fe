"""The embedded backend: one aiosqlite connection to ``user.sqlite``, for one process.

Statements from the process's tasks share the connection; a lock keeps a transaction's statements
together (another task's statement waits instead of joining the open transaction).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import ClassVar

import aiosqlite

from storage.base import Args, Database, Row


class SqliteConnection(Database):
    """Statements straight on one connection (inside a transaction, or a connection nobody else uses)."""

    dialect: ClassVar[str] = "sqlite"
    shared: ClassVar[bool] = False

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self.connection = connection

    async def execute(self, sql: str, args: Args = ()) -> int:
        cursor = await self.connection.execute(sql, args)
        try:
            return cursor.rowcount
        finally:
            await cursor.close()

    async def fetchall(self, sql: str, args: Args = ()) -> list[Row]:
        async with self.connection.execute(sql, args) as cursor:
            return [tuple(row) for row in await cursor.fetchall()]

    def transaction(self) -> AbstractAsyncContextManager[Database]:
        return self._begin()

    @asynccontextmanager
    async def _begin(self) -> AsyncIterator[Database]:
        """``BEGIN IMMEDIATE``: the write lock first, so two processes never race inside."""
        await self.connection.execute("BEGIN IMMEDIATE")
        try:
            yield SqliteConnection(self.connection)
        except BaseException:
            await self.connection.rollback()
            raise
        await self.connection.commit()

    async def close(self) -> None:
        await self.connection.close()


class SqliteDatabase(SqliteConnection):
    """The process's one connection (opened, in WAL mode and migrated, by ``UserDataStore``)."""

    def __init__(self, connection: aiosqlite.Connection) -> None:
        super().__init__(connection)
        self._lock = asyncio.Lock()

    async def execute(self, sql: str, args: Args = ()) -> int:
        async with self._lock:
            return await super().execute(sql, args)

    async def fetchall(self, sql: str, args: Args = ()) -> list[Row]:
        async with self._lock:
            return await super().fetchall(sql, args)

    def transaction(self) -> AbstractAsyncContextManager[Database]:
        return self._locked()

    @asynccontextmanager
    async def _locked(self) -> AsyncIterator[Database]:
        async with self._lock, self._begin() as tx:
            yield tx

"""What every storage backend offers: statements with ``?`` placeholders, rows as tuples, transactions."""

from __future__ import annotations

import os
import socket
import sqlite3
import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar

Row = tuple[Any, ...]
Args = Sequence[Any]


DATABASE_SCHEMES = ("postgresql", "postgres")  # what FITBOT_DATABASE_URL may start with (asyncpg's)


def is_postgres_url(url: str | None) -> bool:
    return bool(url) and str(url).split("://", 1)[0] in DATABASE_SCHEMES


def process_name() -> str:
    """How this process shows in PostgreSQL (``application_name``, so in the leader report): host and pid."""
    return f"fitbot@{socket.gethostname()}:{os.getpid()}"[:63]


def store_errors() -> tuple[type[BaseException], ...]:
    """The errors a failing database raises, on either backend (asyncpg's only once it is loaded)."""
    errors: tuple[type[BaseException], ...] = (sqlite3.Error, OSError)
    asyncpg = sys.modules.get("asyncpg")
    if asyncpg is not None:
        # InternalClientError: a connection the server cut while it was idle in the pool
        errors += (asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError)
    return errors


def unreachable_errors() -> tuple[type[BaseException], ...]:
    """A server that is down, starting or out of connections (worth waiting for), not a wrong password or
    database name (a setting to fix)."""
    errors: tuple[type[BaseException], ...] = (OSError, TimeoutError)
    asyncpg = sys.modules.get("asyncpg")
    if asyncpg is not None:
        errors += (asyncpg.CannotConnectNowError, asyncpg.TooManyConnectionsError, asyncpg.ConnectionDoesNotExistError)
    return errors


class Database(ABC):
    """One database, shared by every store; ``dialect`` is "sqlite" or "postgresql".

    ``execute`` returns the number of rows a statement changed. A ``transaction()`` yields a
    ``Database`` bound to one connection: its statements commit together or not at all.
    """

    dialect: ClassVar[str]
    shared: ClassVar[bool]  # whether other processes may use the same database at once

    @abstractmethod
    async def execute(self, sql: str, args: Args = ()) -> int: ...

    @abstractmethod
    async def fetchall(self, sql: str, args: Args = ()) -> list[Row]: ...

    async def fetchone(self, sql: str, args: Args = ()) -> Row | None:
        rows = await self.fetchall(sql, args)
        return rows[0] if rows else None

    async def fetchval(self, sql: str, args: Args = ()) -> Any:
        row = await self.fetchone(sql, args)
        return row[0] if row else None

    @abstractmethod
    def transaction(self) -> AbstractAsyncContextManager[Database]: ...

    @abstractmethod
    async def close(self) -> None: ...

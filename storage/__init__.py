"""The mutable-state database behind one interface, on SQLite (default) or PostgreSQL.

``FITBOT_DATABASE_URL`` picks the backend: unset is the embedded SQLite file ``user.sqlite`` in the
data directory, one process, no setup; ``postgresql://…`` is a server that many FitBot processes
share (any other scheme is refused at start-up). Both run the same migrations and the same SQL: stores
write portable SQL with ``?`` placeholders (``ON CONFLICT`` upserts, no ``INSERT OR …``), and the
PostgreSQL backend numbers the placeholders and widens ``INTEGER``/``REAL`` columns in DDL.
The read-only fact catalog is not here: it stays a shipped SQLite file in every process.
"""

from __future__ import annotations

from storage.base import DATABASE_SCHEMES, Database, Row, is_postgres_url, store_errors

__all__ = ["DATABASE_SCHEMES", "Database", "Row", "is_postgres_url", "open_database", "store_errors"]


async def open_database(url: str, application_name: str = "fitbot") -> Database:
    """Connect to a PostgreSQL ``url`` (``postgresql://…``), the only backend opened by URL.

    SQLite is opened by ``storage.userdata.UserDataStore`` from the data directory, because its
    file needs the corruption and permission care that lives there.
    """
    if not is_postgres_url(url):
        raise ValueError("FITBOT_DATABASE_URL must start with postgresql:// or postgres://")
    from storage.postgres import PostgresDatabase

    return await PostgresDatabase.connect(url, application_name=application_name)

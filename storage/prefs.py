"""User and chat preferences and the usage log, in the user-data database.

Preferences fill what a question leaves out ("my GPU is 2x 3090"). Every change is one upsert
naming only the changed columns, so it is atomic on either backend, across processes too. The usage log keeps the
parsed query only (intent, model, GPU, quant, context, whether it was understood) and never the
message text; rows older than the retention limit are deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from storage.base import Database


async def m002_preferences(db: Database) -> None:
    """Per-user defaults and per-chat (group / server) settings."""
    await db.execute(
        "CREATE TABLE user_prefs (user_id TEXT PRIMARY KEY, lang TEXT, gpu_id TEXT, gpu_count INTEGER,"
        " ram_gb REAL, context INTEGER, engine TEXT, updated_at TEXT NOT NULL)"
    )
    await db.execute(
        "CREATE TABLE chat_prefs (chat_id TEXT PRIMARY KEY, lang TEXT, answer_mentions INTEGER NOT NULL DEFAULT 1,"
        " updated_at TEXT NOT NULL)"
    )


async def m003_query_log(db: Database) -> None:
    """Parsed queries for usage statistics; no message text."""
    await db.execute(
        "CREATE TABLE query_log (id INTEGER PRIMARY KEY, ts TEXT NOT NULL, platform TEXT NOT NULL, intent TEXT NOT NULL,"
        " model_id TEXT, gpu_id TEXT, quant TEXT, context INTEGER, understood INTEGER NOT NULL, latency_ms REAL)"
    )
    await db.execute("CREATE INDEX query_log_ts ON query_log (ts)")


@dataclass(frozen=True)
class UserPrefs:
    user_id: str
    lang: str | None = None
    gpu_id: str | None = None
    gpu_count: int = 1
    ram_gb: float | None = None
    context: int | None = None
    engine: str | None = None


@dataclass(frozen=True)
class ChatPrefs:
    chat_id: str
    lang: str | None = None
    answer_mentions: bool = True
    share_runs: bool = False  # members' pasted runs are pooled for the chat (storage/runs.py)


USER_FIELDS = ("lang", "gpu_id", "gpu_count", "ram_gb", "context", "engine")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class PreferenceStore:
    """The only SQL for ``user_prefs`` and ``chat_prefs``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def user(self, user_id: str) -> UserPrefs:
        row = await self._db.fetchone(f"SELECT {', '.join(USER_FIELDS)} FROM user_prefs WHERE user_id = ?", (user_id,))
        if row is None:
            return UserPrefs(user_id)
        values = dict(zip(USER_FIELDS, row, strict=True))
        values["gpu_count"] = values["gpu_count"] or 1
        return UserPrefs(user_id, **values)

    async def set_user(self, user_id: str, **fields: object) -> UserPrefs:
        """Update the given fields (others keep their values) in one atomic statement.

        A single ``INSERT … ON CONFLICT DO UPDATE SET`` naming only the given columns: two changes
        that race (a saved GPU and a language at once) both land, where read-then-replace lost one.
        """
        unknown = set(fields) - set(USER_FIELDS)
        if unknown:
            raise ValueError(f"unknown preference fields: {sorted(unknown)}")
        names = [n for n in USER_FIELDS if n in fields]
        sets = ", ".join([*(f"{n} = excluded.{n}" for n in names), "updated_at = excluded.updated_at"])
        columns = ", ".join(["user_id", *names, "updated_at"])
        marks = ", ".join("?" for _ in range(len(names) + 2))
        await self._db.execute(
            f"INSERT INTO user_prefs ({columns}) VALUES ({marks}) ON CONFLICT (user_id) DO UPDATE SET {sets}",
            (user_id, *(fields[n] for n in names), _now()),
        )
        return await self.user(user_id)

    async def chat(self, chat_id: str) -> ChatPrefs:
        row = await self._db.fetchone(
            "SELECT lang, answer_mentions, share_runs FROM chat_prefs WHERE chat_id = ?", (chat_id,)
        )
        return ChatPrefs(chat_id, row[0], bool(row[1]), bool(row[2])) if row else ChatPrefs(chat_id)

    async def set_chat(
        self,
        chat_id: str,
        lang: str | None = None,
        answer_mentions: bool | None = None,
        share_runs: bool | None = None,
    ) -> ChatPrefs:
        """Change the given chat settings in one atomic statement (see ``set_user``)."""
        fields: dict[str, object] = {}
        if lang is not None:
            fields["lang"] = lang
        if answer_mentions is not None:
            fields["answer_mentions"] = int(answer_mentions)
        if share_runs is not None:
            fields["share_runs"] = int(share_runs)
        sets = ", ".join([*(f"{n} = excluded.{n}" for n in fields), "updated_at = excluded.updated_at"])
        columns = ", ".join(["chat_id", *fields, "updated_at"])
        marks = ", ".join("?" for _ in range(len(fields) + 2))
        await self._db.execute(
            f"INSERT INTO chat_prefs ({columns}) VALUES ({marks}) ON CONFLICT (chat_id) DO UPDATE SET {sets}",
            (chat_id, *fields.values(), _now()),
        )
        return await self.chat(chat_id)

    async def forget(self, user_id: str) -> int:
        """Delete everything stored about a user; return the rows removed."""
        return await self._db.execute("DELETE FROM user_prefs WHERE user_id = ?", (user_id,))


@dataclass(frozen=True)
class LoggedQuery:
    platform: str
    intent: str
    model_id: str | None
    gpu_id: str | None
    quant: str | None
    context: int | None
    understood: bool
    latency_ms: float


class QueryLog:
    """Usage statistics: the parsed query of each answer, kept for ``retention``."""

    def __init__(self, db: Database, retention: timedelta = timedelta(days=90)) -> None:
        self._db = db
        self.retention = retention

    async def record(self, *queries: LoggedQuery) -> None:
        """Write one or many rows in one statement per 500 rows, so one transaction (one fsync) each.

        ``executemany`` in autocommit mode committed every row on its own: a flush of 40 rows held
        the connection for 40 fsyncs, and every other write (the Telegram inbox marks) waited.
        """
        rows = [
            (_now(), q.platform, q.intent, q.model_id, q.gpu_id, q.quant, q.context, int(q.understood), q.latency_ms)
            for q in queries
        ]
        async with self._db.transaction() as db:  # one commit for the batch
            start = 0
            while start < len(rows):
                size = _chunk(len(rows) - start)
                chunk = rows[start : start + size]
                await db.execute(_insert_rows(size), [v for row in chunk for v in row])
                start += size

    async def prune(self, now: datetime | None = None) -> int:
        cutoff = ((now or datetime.now(UTC)) - self.retention).isoformat(timespec="seconds")
        return await self._db.execute("DELETE FROM query_log WHERE ts < ?", (cutoff,))

    async def stats(self, top: int = 10) -> dict[str, object]:
        """Counts for ``fitbot stats``: totals, top models and GPUs, intents, share not understood."""

        async def rows(sql: str) -> list[tuple[object, ...]]:
            return await self._db.fetchall(sql, (top,) if "?" in sql else ())

        total, missed, p50 = (
            await rows(
                "SELECT COUNT(*), CAST(COALESCE(SUM(1 - understood), 0) AS INTEGER), COALESCE(AVG(latency_ms), 0)"
                " FROM query_log"
            )
        )[0]
        return {
            "questions": total,
            "not_understood": missed,
            "mean_latency_ms": round(float(p50), 2),  # type: ignore[arg-type]
            "models": await rows(
                "SELECT model_id, COUNT(*) n FROM query_log WHERE model_id IS NOT NULL"
                " GROUP BY model_id ORDER BY n DESC LIMIT ?"
            ),
            "gpus": await rows(
                "SELECT gpu_id, COUNT(*) n FROM query_log WHERE gpu_id IS NOT NULL"
                " GROUP BY gpu_id ORDER BY n DESC LIMIT ?"
            ),
            "intents": await rows("SELECT intent, COUNT(*) n FROM query_log GROUP BY intent ORDER BY n DESC LIMIT ?"),
            "platforms": await rows(
                "SELECT platform, COUNT(*) n FROM query_log GROUP BY platform ORDER BY n DESC LIMIT ?"
            ),
        }


def _chunk(left: int) -> int:
    """Rows in the next INSERT: 256, else the largest power of two not above ``left``. So only nine
    statement texts ever occur: a driver's statement cache holds each prepared once (one text per batch
    size, up to 500, filled it with large statements and grew the process by megabytes)."""
    return 256 if left >= 256 else 1 << (left.bit_length() - 1)


def _insert_rows(count: int) -> str:
    marks = ", ".join("(?, ?, ?, ?, ?, ?, ?, ?, ?)" for _ in range(count))
    return (
        "INSERT INTO query_log (ts, platform, intent, model_id, gpu_id, quant, context, understood, latency_ms)"
        f" VALUES {marks}"
    )

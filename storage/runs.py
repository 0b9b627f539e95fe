"""Runs users measured on their own rigs ("calibrate to my rig"), in the user-data database.

``measured_runs`` are a user's own (they scale that user's answers); ``pooled_runs`` are the runs posted
in a chat whose admins turned sharing on, with no user id: ``member`` is a one-way hash, so the pool can
count how many people measured a setup and /forget can remove a person's share, but never says who.

Plain columns only: which device, backend, model and quant a run was, what it measured, what FitBot
estimated for that setup when it was pasted, and when. What a run means (an efficiency factor, the
card lines) is ``core.runs``' business; storage knows the SQL. ``/forget`` deletes a user's runs with
their other data; each user keeps the newest ``MAX_RUNS_PER_USER``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple, Protocol

from storage.base import Database

MAX_RUNS_PER_USER = 32
MAX_POOLED_PER_CHAT = 500
POOLED = ("gpu_id", "gpu_count", "backend", "model_id", "quant", "kind", "measured")


async def m106_measured_runs(db: Database) -> None:
    """One row per accepted run of a user: setup, measured and estimated tokens/s, build, date."""
    await db.execute(
        "CREATE TABLE measured_runs (id INTEGER PRIMARY KEY, user_id TEXT NOT NULL, added_at TEXT NOT NULL,"
        " gpu_id TEXT NOT NULL, gpu_count INTEGER NOT NULL, backend TEXT NOT NULL, model_id TEXT NOT NULL,"
        " quant TEXT NOT NULL, kind TEXT NOT NULL, test TEXT NOT NULL, measured REAL NOT NULL,"
        " estimated REAL NOT NULL, build TEXT NOT NULL, source TEXT NOT NULL)"
    )
    await db.execute("CREATE INDEX measured_runs_user ON measured_runs (user_id, added_at)")


async def m107_pooled_runs(db: Database) -> None:
    """A chat's opt-in switch, and the runs its members shared: setup and measured tokens/s, no user id."""
    await db.execute("ALTER TABLE chat_prefs ADD COLUMN share_runs INTEGER NOT NULL DEFAULT 0")
    await db.execute(
        "CREATE TABLE pooled_runs (id INTEGER PRIMARY KEY, chat_id TEXT NOT NULL, member TEXT NOT NULL,"
        " added_at TEXT NOT NULL, gpu_id TEXT NOT NULL, gpu_count INTEGER NOT NULL, backend TEXT NOT NULL,"
        " model_id TEXT NOT NULL, quant TEXT NOT NULL, kind TEXT NOT NULL, measured REAL NOT NULL)"
    )
    await db.execute("CREATE INDEX pooled_runs_chat ON pooled_runs (chat_id, added_at)")


async def m108_run_attention_share(db: Database) -> None:
    """A prompt run's attention share of its estimated time (``core.runs.calibrate``); older runs: 0, a short
    prompt's."""
    await db.execute("ALTER TABLE measured_runs ADD COLUMN attention_share REAL NOT NULL DEFAULT 0")


@dataclass(frozen=True)
class StoredRun:
    gpu_id: str
    gpu_count: int
    backend: str
    model_id: str
    quant: str
    kind: str  # "decode" or "prefill"
    test: str
    measured: float
    estimated: float
    build: str
    source: str  # "llama-bench", "llama-server", "ollama"
    attention_share: float = 0.0  # prefill: attention's share of the estimated prompt time
    added_at: str = ""  # ISO timestamp, set by ``RunStore.add``


class RunRow(Protocol):
    """What ``add`` stores: any object with these attributes (``core.runs.calibrate.AcceptedRun``)."""

    @property
    def gpu_id(self) -> str: ...
    @property
    def gpu_count(self) -> int: ...
    @property
    def backend(self) -> str: ...
    @property
    def model_id(self) -> str: ...
    @property
    def quant(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def test(self) -> str: ...
    @property
    def measured(self) -> float: ...
    @property
    def estimated(self) -> float: ...
    @property
    def build(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def attention_share(self) -> float: ...


COLUMNS = ("gpu_id", "gpu_count", "backend", "model_id", "quant", "kind", "test", "measured", "estimated", "build")
ALL = (*COLUMNS, "source", "attention_share", "added_at")


class RunStore:
    """The only SQL for ``measured_runs``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, user_id: str, runs: Sequence[RunRow], now: datetime | None = None) -> int:
        """Store the runs in one transaction, then drop the user's oldest beyond ``MAX_RUNS_PER_USER``."""
        stamp = (now or datetime.now(UTC)).isoformat(timespec="seconds")
        names = ", ".join(("user_id", *ALL))
        marks = ", ".join("?" for _ in range(len(ALL) + 1))
        async with self._db.transaction() as db:
            for run in runs:
                values = [getattr(run, c) for c in ALL[:-1]]
                await db.execute(f"INSERT INTO measured_runs ({names}) VALUES ({marks})", (user_id, *values, stamp))
            await db.execute(
                "DELETE FROM measured_runs WHERE user_id = ? AND id NOT IN (SELECT id FROM measured_runs"
                " WHERE user_id = ? ORDER BY added_at DESC, id DESC LIMIT ?)",
                (user_id, user_id, MAX_RUNS_PER_USER),
            )
        return len(runs)

    async def runs(self, user_id: str) -> list[StoredRun]:
        """The user's runs, newest first."""
        rows = await self._db.fetchall(
            f"SELECT {', '.join(ALL)} FROM measured_runs WHERE user_id = ? ORDER BY added_at DESC, id DESC",
            (user_id,),
        )
        return [StoredRun(**dict(zip(ALL, row, strict=True))) for row in rows]

    async def added_since(self, user_id: str, since: datetime) -> int:
        """How many of the user's runs were stored at or after ``since`` (flood control)."""
        rows = await self._db.fetchall(
            "SELECT COUNT(*) FROM measured_runs WHERE user_id = ? AND added_at >= ?",
            (user_id, since.isoformat(timespec="seconds")),
        )
        return int(rows[0][0]) if rows else 0

    async def forget(self, user_id: str) -> int:
        """Delete the user's runs and their share of every chat's pool."""
        async with self._db.transaction() as db:
            mine = await db.execute("DELETE FROM measured_runs WHERE user_id = ?", (user_id,))
            shared = await db.execute("DELETE FROM pooled_runs WHERE member = ?", (member_of(user_id),))
        return mine + shared

    async def share(self, chat_id: str, user_id: str, runs: Sequence[RunRow]) -> None:
        """Pool the runs for the chat, under the member's hash (each chat keeps its newest ``MAX_POOLED_PER_CHAT``)."""
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        async with self._db.transaction() as db:
            for run in runs:
                await db.execute(
                    f"INSERT INTO pooled_runs (chat_id, member, added_at, {', '.join(POOLED)})"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (chat_id, member_of(user_id), stamp, *(getattr(run, c) for c in POOLED)),
                )
            await db.execute(
                "DELETE FROM pooled_runs WHERE chat_id = ? AND id NOT IN (SELECT id FROM pooled_runs"
                " WHERE chat_id = ? ORDER BY added_at DESC, id DESC LIMIT ?)",
                (chat_id, chat_id, MAX_POOLED_PER_CHAT),
            )

    async def pooled(self, chat_id: str) -> list[PooledRow]:
        """The chat's pooled runs, newest first: (member hash, gpu_id, gpu_count, backend, model_id, quant,
        kind, measured)."""
        rows = await self._db.fetchall(
            f"SELECT member, {', '.join(POOLED)} FROM pooled_runs WHERE chat_id = ? ORDER BY added_at DESC, id DESC",
            (chat_id,),
        )
        return [PooledRow(*row) for row in rows]


class PooledRow(NamedTuple):
    member: str
    gpu_id: str
    gpu_count: int
    backend: str
    model_id: str
    quant: str
    kind: str
    measured: float


def member_of(user_id: str) -> str:
    """The one-way name a person's pooled runs carry: enough to count people and to forget them."""
    return hashlib.sha256(f"fitbot-pool:{user_id}".encode()).hexdigest()[:20]

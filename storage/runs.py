"""Runs users measured on their own rigs ("calibrate to my rig"), in the user-data database.

Plain columns only: which device, backend, model and quant a run was, what it measured, what FitBot
estimated for that setup when it was pasted, and when. What a run means (an efficiency factor, the
card lines) is ``core.runs``' business; storage knows the SQL. ``/forget`` deletes a user's runs with
their other data; each user keeps the newest ``MAX_RUNS_PER_USER``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from storage.base import Database

MAX_RUNS_PER_USER = 32


async def m106_measured_runs(db: Database) -> None:
    """One row per accepted run of a user: setup, measured and estimated tokens/s, build, date."""
    await db.execute(
        "CREATE TABLE measured_runs (id INTEGER PRIMARY KEY, user_id TEXT NOT NULL, added_at TEXT NOT NULL,"
        " gpu_id TEXT NOT NULL, gpu_count INTEGER NOT NULL, backend TEXT NOT NULL, model_id TEXT NOT NULL,"
        " quant TEXT NOT NULL, kind TEXT NOT NULL, test TEXT NOT NULL, measured REAL NOT NULL,"
        " estimated REAL NOT NULL, build TEXT NOT NULL, source TEXT NOT NULL)"
    )
    await db.execute("CREATE INDEX measured_runs_user ON measured_runs (user_id, added_at)")


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


COLUMNS = ("gpu_id", "gpu_count", "backend", "model_id", "quant", "kind", "test", "measured", "estimated", "build")
ALL = (*COLUMNS, "source", "added_at")


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
        return await self._db.execute("DELETE FROM measured_runs WHERE user_id = ?", (user_id,))

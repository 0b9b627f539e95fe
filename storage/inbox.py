"""Durable hand-over of incoming work, in the user-data database, so a restart or crash loses nothing.

* ``tg_inbox``: every Telegram update is written here before the next ``getUpdates`` confirms it
  to Telegram (confirming is what makes Telegram forget it). A row is marked done once its answer
  went out; rows not done are answered after a restart. Done rows are kept a day so an update that
  Telegram delivers again (fetched, answered, then a crash before the confirmation) is recognised
  by its ``update_id`` and not answered twice. A row that could not be answered is closed with a
  reason in ``failed`` (it failed to parse, its handler raised, its send was given up, or it was
  being handled when the process died twice): recorded, never replayed.
  Answered ids are first appended to a small journal file next to the database (``mark``: one
  ``write``, no lock, no fsync, so it lands microseconds after the answer and survives a killed
  process) and folded into the table in batches (``fold``). Writing each mark to SQLite at once
  queued it behind other writers' locks and fsyncs for up to ~0.3 s, and a SIGKILL in that
  window repeated the answers sent in it. A failed update is journaled the same way, with its reason.
* ``<db>.started``: the same kind of journal, one line each time a worker starts on an update. After
  a crash, an open update with two starts killed the process twice and is quarantined
  (``bot.adapters.telegram.intake``); one with a single start is answered after the others.
* ``DeferredJournal``: Discord interactions that were deferred ("thinking…") and not yet answered,
  in a small file next to the database. A process killed with SIGKILL cannot answer them; the next
  start edits each one that is still young enough (Discord keeps interaction tokens 15 minutes) to
  a short "restarting, ask again".
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import aiosqlite

from storage.base import Database

DONE_KEEP_S = 86_400.0
INTERACTION_TOKEN_S = 15 * 60.0


async def m004_inbox(db: Database) -> None:
    """Telegram updates fetched but not yet answered (and, for a day, the answered ones)."""
    await db.execute(
        "CREATE TABLE tg_inbox (update_id INTEGER PRIMARY KEY, user_key TEXT NOT NULL, data TEXT NOT NULL,"
        " received_at REAL NOT NULL, done_at REAL)"
    )
    await db.execute("CREATE INDEX tg_inbox_open ON tg_inbox (done_at, update_id)")


async def m005_inbox_failed(db: Database) -> None:
    """Why an update was closed without an answer (poison, handler error, send given up, crashed twice)."""
    await db.execute("ALTER TABLE tg_inbox ADD COLUMN failed TEXT")


class InboxItem(NamedTuple):
    update_id: int
    user_key: str  # whose turn it takes: "chat|user" (older rows: one key for both)
    data: str  # the update as Telegram sent it (JSON)


class PendingInteraction(NamedTuple):
    interaction_id: str
    application_id: str
    token: str
    locale: str | None
    created: float


class InboxStore:
    """The only SQL for ``tg_inbox``."""

    def __init__(self, db: aiosqlite.Connection, journal: Path | None = None) -> None:
        self._db = db
        self._owned = False  # a connection this store opened itself (``restore_to``), closed by ``close``
        self.journal = journal
        self.starts = journal.with_suffix(".started") if journal else None  # user.sqlite.started

    # ---- Telegram

    async def add(self, items: Sequence[tuple[int, str, str]]) -> int:
        """Store fetched ``(update_id, user_key, data)`` rows in one statement (atomic, durable); ones seen
        before are ignored."""
        if not items:
            return 0
        now = time.time()
        marks = ", ".join("(?, ?, ?, ?)" for _ in items)
        values = [v for update_id, key, data in items for v in (update_id, key, data, now)]
        cur = await self._db.execute(
            f"INSERT OR IGNORE INTO tg_inbox (update_id, user_key, data, received_at) VALUES {marks}", values
        )
        return cur.rowcount

    async def open_items(self, limit: int = 100_000) -> list[InboxItem]:
        """Updates not answered yet, oldest first."""
        async with self._db.execute(
            "SELECT update_id, user_key, data FROM tg_inbox WHERE done_at IS NULL ORDER BY update_id LIMIT ?",
            (limit,),
        ) as cur:
            return [InboxItem(*row) async for row in cur]

    async def is_new(self, update_ids: list[int]) -> set[int]:
        """Which of these ids were never stored (the others are pending or answered)."""
        if not update_ids:
            return set()
        marks = ", ".join("?" for _ in update_ids)
        async with self._db.execute(f"SELECT update_id FROM tg_inbox WHERE update_id IN ({marks})", update_ids) as cur:
            seen = {row[0] async for row in cur}
        return set(update_ids) - seen

    def mark(self, update_id: int, failed: str | None = None) -> None:
        """Record an answered (or, with a reason, a failed) update in the journal at once (module docstring)."""
        if self.journal is None:
            raise RuntimeError("this inbox has no journal")
        reason = " " + " ".join(failed.split())[:200] if failed else ""
        _append(self.journal, f"{update_id}{reason}\n")

    def started(self, update_id: int) -> None:
        """Record that a worker starts on an update (crash quarantine, see the module docstring)."""
        if self.starts is not None:
            _append(self.starts, f"{update_id}\n")

    def start_counts(self) -> Counter[int]:
        """How often each update was started, over this and earlier processes."""
        try:
            text = self.starts.read_text() if self.starts is not None else ""
        except FileNotFoundError:
            return Counter()
        return Counter(int(word) for word in text.split() if word.isdigit())

    def keep_starts(self, keep: Callable[[int], bool]) -> None:
        """Rewrite the start journal with the starts of the updates ``keep`` names (the others are settled).

        Synchronous on purpose: no worker can append between the read and the replace.
        """
        if self.starts is None:
            return
        counts = self.start_counts()
        lines = "".join(f"{uid}\n" * n for uid, n in counts.items() if keep(uid))
        tmp = self.starts.with_name(self.starts.name + ".tmp")
        tmp.write_text(lines)
        os.replace(tmp, self.starts)

    async def fold(self) -> int:
        """Move the journal's marks into the table; returns how many. Marks written meanwhile stay."""
        if self.journal is None:
            return 0
        folding = self.journal.with_name(self.journal.name + ".folding")
        if not folding.exists():
            if not self.journal.exists():
                return 0
            os.replace(self.journal, folding)  # new marks go to a fresh journal while this one is folded
        ids: list[int] = []
        failed: list[tuple[int, str]] = []
        for line in folding.read_text().splitlines():
            head, _, reason = line.strip().partition(" ")
            if head.isdigit() and reason:
                failed.append((int(head), reason))
            elif head.isdigit():
                ids.append(int(head))
        for start in range(0, len(ids), 500):
            await self.done_many(ids[start : start + 500])
        for update_id, reason in failed:
            await self.fail(update_id, reason)
        folding.unlink()
        settled = {*ids, *(f[0] for f in failed)}
        self.keep_starts(lambda uid: uid not in settled)  # the start journal stays small in a long run
        return len(ids) + len(failed)

    async def done_many(self, update_ids: list[int]) -> None:
        """Mark answered updates, in one statement."""
        marks = ", ".join("?" for _ in update_ids)
        await self._db.execute(
            f"UPDATE tg_inbox SET done_at = ? WHERE update_id IN ({marks})", (time.time(), *update_ids)
        )

    async def fail(self, update_id: int, reason: str, data: str = "{}") -> None:
        """Close an update without an answer, with the reason; stores it first if it was never stored."""
        now = time.time()
        await self._db.execute(
            "INSERT INTO tg_inbox (update_id, user_key, data, received_at, done_at, failed) VALUES (?, '', ?, ?, ?, ?)"
            " ON CONFLICT (update_id) DO UPDATE SET done_at = excluded.done_at, failed = excluded.failed",
            (update_id, data, now, now, reason),
        )

    async def failures(self) -> list[tuple[int, str]]:
        """Updates closed without an answer (kept a day, as answered ones): id and reason."""
        async with self._db.execute(
            "SELECT update_id, failed FROM tg_inbox WHERE failed IS NOT NULL ORDER BY update_id"
        ) as cur:
            return [(row[0], row[1]) async for row in cur]

    async def copy_to(self, path: Path) -> None:
        """Write the whole database to ``path`` (``VACUUM INTO``): restores a file deleted under the process."""
        await self._db.execute("VACUUM INTO ?", (str(path),))

    async def restore_to(self, path: Path) -> InboxStore:
        """The file was deleted under the process: write the open database back to ``path`` and return an
        inbox on that file (its own connection, closed by its ``close``)."""
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        await self.copy_to(path)
        db = await aiosqlite.connect(path, isolation_level=None)
        await db.execute("PRAGMA busy_timeout=250")
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=FULL")
        restored = InboxStore(db, self.journal)
        restored._owned = True
        await self.close()
        return restored

    async def close(self) -> None:
        """Closes the connection if this store opened it; one handed in belongs to its owner."""
        if self._owned:
            await self._db.close()
            self._owned = False

    async def last_update_id(self) -> int | None:
        async with self._db.execute("SELECT MAX(update_id) FROM tg_inbox") as cur:
            row = await cur.fetchone()
        return row[0] if row else None

    async def prune(self, keep_s: float = DONE_KEEP_S) -> int:
        """Forget answered updates older than ``keep_s`` (the newest row stays: it carries the offset)."""
        cur = await self._db.execute(
            "DELETE FROM tg_inbox WHERE done_at IS NOT NULL AND done_at < ?"
            " AND update_id < (SELECT MAX(update_id) FROM tg_inbox)",
            (time.time() - keep_s,),
        )
        return cur.rowcount

    # ---- Discord: a journal file, so a hold is on disk before the defer goes out


class DeferredJournal:
    """Deferred Discord interactions not yet answered, as JSON lines ("hold" / "release") in one file.

    A hold is written (one ``write``, no fsync: it survives a killed process) *before* the defer
    is sent, so no interaction can be on "thinking…" without a record; a record without a defer
    is harmless (its edit fails and is dropped). The file is emptied whenever nothing is held.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.open: set[str] = set()

    def _append(self, record: dict[str, object]) -> None:
        _append(self.path, json.dumps(record) + "\n")

    def hold(self, item: tuple[str, str, str, str | None, float]) -> None:
        """Records ``(interaction_id, application_id, token, locale, created)`` as held."""
        held = PendingInteraction(*item)
        self._append({"op": "hold", **held._asdict()})
        self.open.add(held.interaction_id)

    def release(self, interaction_id: str) -> None:
        self.open.discard(interaction_id)
        if not self.open:
            self.path.unlink(missing_ok=True)  # nothing held: start the file afresh
        else:
            self._append({"op": "release", "interaction_id": interaction_id})

    def held(self) -> list[PendingInteraction]:
        """What an earlier process left held and young enough to edit (Discord keeps tokens 15 minutes)."""
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        holds: dict[str, PendingInteraction] = {}
        for line in lines:
            try:
                record = json.loads(line)
                if record.pop("op") == "hold":
                    holds[record["interaction_id"]] = PendingInteraction(**record)
                else:
                    holds.pop(record["interaction_id"], None)
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by the crash
        young = time.time() - INTERACTION_TOKEN_S
        return [h for h in holds.values() if h.created >= young]

    def clear(self) -> None:
        self.open.clear()
        self.path.unlink(missing_ok=True)


def _append(path: Path, line: str) -> None:
    """One ``write`` in append mode, no lock, no fsync: it survives a killed process (not a power cut)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)

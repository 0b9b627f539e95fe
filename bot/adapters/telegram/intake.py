"""From ``getUpdates`` to the queue: raw updates parsed one by one, stored durably before they are confirmed.

* **Raw fetch, parse per update.** PTB's ``get_updates`` parses the whole batch at once, so one
  update it cannot parse failed every poll of the same batch, for good (the adapter restarted
  every 2 s, nothing after it was answered). Here the batch is fetched as JSON
  (``Bot.do_api_request``) and each update is parsed on its own; one that fails is recorded in the
  inbox as failed ("parse"), reported once, and skipped.
* **Confirm only what is safe.** The next ``getUpdates`` (its offset) confirms a batch to Telegram,
  so the offset moves only after the batch is in the inbox. When the inbox cannot be written
  (locked, disk full, read-only) or its file was deleted under the running process, nothing is
  confirmed: ``Intake.store`` says so, the poller waits and fetches the same batch again, and the
  adapter's health is "degraded" until a write succeeds. A deleted ``user.sqlite`` is restored from
  the open connection (``VACUUM INTO``) and the inbox goes on in the restored file.
* **Crash quarantine.** Each start of work on an update is journaled (``InboxStore.started``); after a
  restart, an open update that was started twice before (two processes died on it) is closed as
  failed, and one started once is a suspect: answered after the others, and one suspect at a time
  (the queue's ``SUSPECTS`` chat), so that a second death is counted against that one alone and
  not against the updates that happened to be in flight beside it.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from telegram import Update
from telegram.warnings import PTBUserWarning

from bot.adapters.telegram.queue import queue_key
from bot.handover import StoredUpdate, UpdateInbox, UpdateRow

if TYPE_CHECKING:
    from telegram import Bot

log = logging.getLogger("bot.adapters.telegram.poller")

CRASHES_TO_QUARANTINE = 2
SUSPECTS = "!suspects"  # the queue key of updates a process died on once: answered one at a time
StateCallback = Callable[..., None]


@dataclass
class Batch:
    """One ``getUpdates`` answer: the updates that parsed, the ones that did not, and the next offset."""

    updates: list[Update] = field(default_factory=list)
    poison: list[tuple[int, str, str]] = field(default_factory=list)  # update_id, raw JSON, reason
    next_offset: int | None = None


async def fetch(bot: Bot, *, offset: int | None, timeout: int, limit: int, allowed: Sequence[str]) -> Batch:
    """One long poll, returned raw and parsed update by update (see the module docstring)."""
    kwargs: dict[str, Any] = {"timeout": timeout, "limit": limit, "allowed_updates": list(allowed)}
    if offset is not None:
        kwargs["offset"] = offset
    with warnings.catch_warnings():  # "use Bot.get_updates": we do not, to parse each update on its own
        warnings.simplefilter("ignore", PTBUserWarning)
        raw = await bot.do_api_request("getUpdates", api_kwargs=kwargs, read_timeout=timeout + 5.0)
    return parse(raw if isinstance(raw, list) else [], bot)


def parse(raw: list[Any], bot: Bot) -> Batch:
    batch = Batch()
    ids: list[int] = []
    for item in raw:
        update_id = item.get("update_id") if isinstance(item, dict) else None
        if not isinstance(update_id, int) or isinstance(update_id, bool):
            log.error("Telegram sent an update without an update_id; skipped", extra={"event": "poison_update"})
            continue
        ids.append(update_id)
        try:
            update = Update.de_json(item, bot)
        except Exception as exc:  # any shape PTB cannot read: this update only
            batch.poison.append((update_id, json.dumps(item), f"parse: {exc.__class__.__name__}"))
            continue
        batch.updates.append(update)
    batch.next_offset = max(ids) + 1 if ids else None
    return batch


def report_poison(update_id: int, reason: str) -> None:
    log.error(
        "update %s cannot be used (%s); recorded and skipped",
        update_id,
        reason,
        extra={"event": "poison_update", "update_id": update_id},
    )


def item_of(update: Update) -> UpdateRow:
    """An inbox row: the id, "chat|user" (whose turn it takes), the update's JSON."""
    chat, user = queue_key(update)
    return update.update_id, f"{chat}|{user}", json.dumps(update.to_dict())


def keys_of(item: StoredUpdate) -> tuple[str, str]:
    chat, _, user = item.user_key.partition("|")
    return chat, user or chat


class InboxLost(OSError):
    """The inbox file is not the one the process opened (deleted or replaced)."""


class Intake:
    """The poller's durable side: stores batches, says whether that is safe, resumes after a restart."""

    def __init__(self, inbox: UpdateInbox, bot: Bot, on_state: StateCallback | None = None) -> None:
        self.inbox, self.bot = inbox, bot
        self.on_state = on_state
        self.path = inbox.journal.with_suffix("") if inbox.journal is not None else None  # user.sqlite
        self.inode = _inode(self.path)
        self.unsafe: str | None = None  # why the inbox cannot be written now (None: it can)

    # ---- storing

    async def store(self, batch: Batch) -> bool:
        """Writes the batch's new updates (and its poison) to the inbox; False when that is not safe now."""
        try:
            await self._check_file()
            ids = [u.update_id for u in batch.updates] + [p[0] for p in batch.poison]
            new = await self.inbox.is_new(ids)
            fresh = [u for u in batch.updates if u.update_id in new]
            await self.inbox.add([item_of(u) for u in fresh])
            poison = [p for p in batch.poison if p[0] in new]
            for update_id, data, reason in poison:
                await self.inbox.fail(update_id, reason, data)
        except (sqlite3.Error, OSError) as exc:
            self._set_unsafe(exc)
            return False
        self._set_safe()
        for update_id, _, reason in poison:  # once: a batch fetched again is not new any more
            report_poison(update_id, reason)
        batch.updates = fresh
        return True

    async def _check_file(self) -> None:
        """Raises ``InboxLost`` unless the inbox file is the one open; restores a deleted one first."""
        if self.path is None or self.inode is None or _inode(self.path) == self.inode:
            return
        if _inode(self.path) is None:
            await self._restore()
            return
        raise InboxLost(f"{self.path} was replaced by another file while running")

    async def _restore(self) -> None:
        """``user.sqlite`` was deleted: write the open (unlinked) database back to its path and use that."""
        assert self.path is not None
        self.inbox = await self.inbox.restore_to(self.path)
        self.inode = _inode(self.path)
        log.error(
            "%s was deleted while running; restored it from the open database. Questions are kept in the"
            " restored file; settings saved from now until the next restart are not. Restart fitbot.",
            self.path,
            extra={"event": "inbox_restored"},
        )
        if self.on_state is not None:
            self.on_state("degraded", error="user database was deleted and restored; restart fitbot")

    def _set_unsafe(self, exc: BaseException) -> None:
        why = f"{exc.__class__.__name__}: {exc}"[:200]
        if self.unsafe is None:
            log.error(
                "the inbox cannot be written (%s); not confirming updates to Telegram until it can",
                why,
                extra={"event": "inbox_unwritable"},
            )
            if self.on_state is not None:
                self.on_state("degraded", error=f"inbox cannot be written: {why}")
        self.unsafe = why

    def _set_safe(self) -> None:
        if self.unsafe is not None:
            log.warning("the inbox can be written again; confirming updates", extra={"event": "inbox_writable"})
            self.unsafe = None
            if self.on_state is not None:
                self.on_state("running")

    # ---- after a restart

    async def resume(self) -> tuple[list[tuple[str, str, Update]], int | None]:
        """Open updates to answer, in order ((chat, user, update); once-crashed ones last), and the next offset.

        Updates started ``CRASHES_TO_QUARANTINE`` times without an answer are closed as failed.
        """
        inbox = self.inbox
        await inbox.fold()  # marks journaled by an earlier process, perhaps a killed one
        starts = inbox.start_counts()
        first: list[tuple[str, str, Update]] = []
        last: list[tuple[str, str, Update]] = []
        for item in await inbox.open_items():
            crashes = starts.get(item.update_id, 0)
            if crashes >= CRASHES_TO_QUARANTINE:
                await inbox.fail(item.update_id, f"quarantined: the process died {crashes} times handling it")
                log.error(
                    "update %s was being handled when the process died %d times; quarantined, not answered",
                    item.update_id,
                    crashes,
                    extra={"event": "update_quarantined", "update_id": item.update_id},
                )
                continue
            try:
                update = Update.de_json(json.loads(item.data), self.bot)
            except Exception as exc:
                await inbox.fail(item.update_id, f"parse: {exc.__class__.__name__}")
                log.error("stored update %s cannot be parsed; recorded and skipped", item.update_id)
                continue
            if crashes:
                last.append((SUSPECTS, keys_of(item)[1], update))
            else:
                first.append((*keys_of(item), update))
        still_open = {u.update_id for _, _, u in first + last}
        inbox.keep_starts(still_open.__contains__)
        highest = await inbox.last_update_id()
        await inbox.prune()
        return first + last, (highest + 1 if highest is not None else None)

    async def close(self) -> None:
        await self.inbox.close()


def _inode(path: Path | None) -> tuple[int, int] | None:
    if path is None:
        return None
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino

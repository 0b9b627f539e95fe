"""The usage log: one structured log line per answer, and a row of the parsed query (never the text).

Rows are queued and written in batches off the answer path; statistics must never cost an answer,
so a locked or full database drops the batch with a warning.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from bot.reply import Reply
from bot.users.user import User
from core.query.parse import Query
from storage.base import store_errors

if TYPE_CHECKING:
    from storage.prefs import LoggedQuery
    from storage.userdata import UserDataStore

log = logging.getLogger("bot.service")
FLUSH_AFTER_S = 1.0
NOT_UNDERSTOOD = ("suggest", "error", "slow_down")


class UsageLog:
    def __init__(self, store: UserDataStore | None) -> None:
        self.store = store
        self._rows: list[LoggedQuery] = []
        self._task: asyncio.Task[None] | None = None

    async def record(self, q: Query | None, reply: Reply, user: User, latency_ms: float) -> None:
        platform = user.id.split(":")[0] or "console"
        understood = reply.kind not in NOT_UNDERSTOOD
        log.info(
            "answered",
            extra={
                "kind": reply.kind,
                "platform": platform,
                "latency_ms": round(latency_ms, 2),
                "understood": understood,
            },
        )
        if self.store is None or q is None:
            return
        from storage.prefs import LoggedQuery

        self._rows.append(
            LoggedQuery(
                platform=platform,
                intent=q.intent.value,
                model_id=q.model.id if q.model else None,
                gpu_id=q.gpu.id if q.gpu else None,
                quant=q.quant,
                context=q.context,
                understood=understood,
                latency_ms=latency_ms,
            )
        )
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._flush_soon())

    async def _flush_soon(self) -> None:
        await asyncio.sleep(FLUSH_AFTER_S)
        await self.flush()

    async def flush(self) -> None:
        """Write the queued rows in one statement."""
        rows, self._rows = self._rows, []
        if not rows or self.store is None:
            return
        try:
            await self.store.query_log().record(*rows)
        except store_errors() + (ValueError,):
            log.warning("usage log: %d rows dropped", len(rows), exc_info=True)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        await self.flush()

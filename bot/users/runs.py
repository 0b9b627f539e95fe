"""A user's measured runs (issue 38): the calibrations every answer of theirs reads, what a pasted run
keeps, /mygpu's list and /forget.

A run counts as measured over the estimate FitBot made for its setup when it was pasted
(``core.runs.calibrate``). Flood control: a user's runs stored in the last day are capped at
``MAX_RUNS_PER_DAY``; past it a paste is read and answered, but nothing is stored, so one user cannot
bury their own calibration under a burst of pastes. A locked or broken database costs the
calibration, never the answer.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from bot.cards.runs import Outcome, runs_card
from core.runs.calibrate import FACTOR_RANGE, AcceptedRun, Calibration, RunFactor, combine
from core.runs.paste import MAX_PASTE_CHARS
from core.runs.pool import Pool, pools
from storage.base import store_errors

if TYPE_CHECKING:
    from bot.answers.runs import RunsRead
    from bot.reply import Reply
    from bot.users.user import User
    from core.models import Lang
    from storage.runs import RunStore, StoredRun

log = logging.getLogger(__name__)
MAX_RUNS_PER_DAY = 24


class RunBook:
    """Reads and keeps a user's runs; without a store every paste is read, never kept."""

    def __init__(self, store: RunStore | None) -> None:
        self.store = store

    async def runs(self, user_id: str) -> list[StoredRun]:
        """The user's runs, newest first (none without a store or when it fails)."""
        if self.store is None or not user_id:
            return []
        try:
            return await self.store.runs(user_id)
        except store_errors():
            log.warning("measured runs unavailable", exc_info=True)
            return []

    async def calibrations(self, user_id: str) -> tuple[Calibration, ...]:
        return calibrations_of(await self.runs(user_id))

    async def pools(self, chat: str) -> tuple[Pool, ...]:
        """What a sharing chat's members measured, per setup (none when the store fails)."""
        if self.store is None:
            return ()
        try:
            return pools(await self.store.pooled(chat))
        except store_errors():
            log.warning("pooled runs unavailable", exc_info=True)
            return ()

    async def keep(self, user_id: str, runs: Sequence[AcceptedRun]) -> tuple[Outcome, Calibration | None, int]:
        """Store the runs; the outcome, the user's calibration on their device afterwards, and the day's count."""
        if self.store is None or not user_id:
            return "not_saved", None, 0
        try:
            today = await self.store.added_since(user_id, datetime.now(UTC) - timedelta(days=1))
            if today + len(runs) > MAX_RUNS_PER_DAY:
                return "flood", None, today
            await self.store.add(user_id, runs)
            after = calibrations_of(await self.store.runs(user_id))
        except store_errors():
            log.warning("measured runs could not be stored", exc_info=True)
            return "storage_error", None, 0
        first = runs[0]
        mine = next(
            (c for c in after if (c.gpu_id, c.gpu_count, c.backend) == (first.gpu_id, first.gpu_count, first.backend)),
            None,
        )
        return "kept", mine, today

    async def answer(self, read: RunsRead, lang: Lang, user: User) -> Reply:
        """The card of a read paste, after keeping what passed (a person's runs only: never an MCP client's)."""
        if not read.kept:
            return runs_card(read, lang, "kept", limit=MAX_PASTE_CHARS)
        if user.anonymous:
            return runs_card(read, lang, "not_saved")
        outcome, calibration, today = await self.keep(user.id, read.kept)
        shared = outcome == "kept" and user.share_runs and bool(user.chat) and await self._share(user, read.kept)
        return runs_card(read, lang, outcome, calibration, today, shared=shared)

    async def _share(self, user: User, runs: Sequence[AcceptedRun]) -> bool:
        assert self.store is not None
        try:
            await self.store.share(user.chat, user.id, runs)
        except store_errors():
            log.warning("runs could not be pooled", exc_info=True)
            return False
        return True

    async def forget(self, user_id: str) -> None:
        if self.store is not None and user_id:
            await self.store.forget(user_id)


def calibrations_of(runs: Sequence[StoredRun]) -> tuple[Calibration, ...]:
    """The stored runs as factors, combined per device (a row out of ``FACTOR_RANGE`` is left out)."""
    factors = []
    for r in runs:
        factor = r.measured / r.estimated if r.estimated > 0 else 0.0
        if r.kind in ("decode", "prefill") and FACTOR_RANGE[0] < factor < FACTOR_RANGE[1]:
            factors.append(
                RunFactor(
                    gpu_id=r.gpu_id,
                    gpu_count=r.gpu_count,
                    backend=r.backend,
                    quant=r.quant,
                    kind=r.kind,  # type: ignore[arg-type]
                    factor=factor,
                    as_of=r.added_at[:10],
                    model_id=r.model_id,
                    attention_share=r.attention_share,
                )
            )
    return combine(factors)

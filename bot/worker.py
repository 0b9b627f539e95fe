"""The one thread that builds answers, with a deadline per answer.

One worker thread computes answers, so the event loop keeps serving heartbeats, deferrals and I/O
while a heavy card (a table over every device) is built; one thread also means the caches are only
ever changed by that thread (the loop only reads them for the fast path).

A Python thread cannot be stopped, so an answer past its deadline is set aside: it may finish in the
background, the work after it goes to a new worker thread, and ``stuck`` (which ``fitbot health``
reports) counts it until it ends. The caches are then briefly shared by two threads; each of their
operations is a single dict operation, atomic under the GIL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

# The heaviest card takes well under a second; past this the answer is set aside.
ANSWER_DEADLINE_S = 10.0


class AnswerTimedOut(Exception):
    """An answer ran past the worker's deadline and was set aside."""


class AnswerWorker:
    def __init__(self, deadline_s: float = ANSWER_DEADLINE_S) -> None:
        self.deadline_s = deadline_s
        self._pool = self._new_pool()
        self._set_aside: list[asyncio.Future[Any]] = []

    @staticmethod
    def _new_pool() -> ThreadPoolExecutor:
        return ThreadPoolExecutor(1, thread_name_prefix="fitbot-answers")

    def submit(self, fn: Callable[[], None]) -> Future[None]:
        """Work without a deadline (the warm-up at start)."""
        return self._pool.submit(fn)

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on the worker thread; ``AnswerTimedOut`` past the deadline."""
        future = asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.deadline_s)
        except TimeoutError:
            self._set_aside.append(future)
            stuck, self._pool = self._pool, self._new_pool()
            stuck.shutdown(wait=False)
            raise AnswerTimedOut from None

    def stuck(self) -> int:
        """Answers set aside at their deadline that are still running."""
        self._set_aside = [f for f in self._set_aside if not f.done()]
        return len(self._set_aside)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False)

"""``Service.answer``: the one use case every adapter calls. Text in, ``Reply`` out.

Flow: rate limits → saved preferences → parse → (Hugging Face look-up) → ``Answers`` builds the
card on the worker thread → usage log. Nothing here knows about Discord or Telegram, and nothing
here raises: every failure becomes a friendly, localized card.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from bot import cards, prefs
from bot.answers import Answers
from bot.hub_models import hub_answers, in_catalog
from bot.limits import Limits
from bot.prefs import Preferences
from bot.reply import Reply
from bot.usage import UsageLog
from bot.user import User
from core.estimate import EstimateError
from core.models import Catalog
from core.query import Query
from locales import Lang, t

if TYPE_CHECKING:
    from catalog.userdata import CachedHubClient, UserDataStore

log = logging.getLogger(__name__)
MAX_QUESTION_CHARS = 2000


class Service:
    """Answers questions for every adapter; owns the worker thread, the stores and the limits."""

    def __init__(
        self,
        catalog: Catalog,
        store: UserDataStore | None = None,
        hub: CachedHubClient | None = None,
        limits: Limits | None = None,
        max_question_chars: int = MAX_QUESTION_CHARS,
    ) -> None:
        self.answers = Answers(catalog)
        self.store, self.hub, self.limits = store, hub, limits
        self.max_question_chars = max_question_chars
        self.prefs = Preferences(store.prefs if store is not None else None)
        self.usage = UsageLog(store)
        # One worker thread computes answers, so the event loop keeps serving heartbeats, deferrals and
        # I/O while a heavy card (a table over every device) is built; one thread also means the caches
        # are only ever changed by that thread (the loop only reads them for the fast path).
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="fitbot-answers")

    @property
    def catalog(self) -> Catalog:
        return self.answers.catalog

    async def close(self) -> None:
        """Write the pending usage log, stop the worker and close the user database."""
        await self.usage.close()
        self._worker.shutdown(wait=False)
        if self.store is not None:
            await self.store.close()

    async def _off_loop(self, fn: Any, *args: Any) -> Any:
        """Runs CPU work on the service's worker thread."""
        return await asyncio.get_running_loop().run_in_executor(self._worker, fn, *args)

    async def answer(self, text: str, locale: str | None = None, user: User | None = None) -> Reply:
        """Answer one question; never raises."""
        started = time.perf_counter()
        user = user or User()
        lang: Lang = user.lang or ("de" if (locale or "").lower().startswith("de") else "en")
        query: Query | None = None
        try:
            wait = self.limits.check(user.id, user.chat) if self.limits else 0.0
            if wait:
                return cards.slow_down_card(lang, int(wait) + 1)
            if len(text) > self.max_question_chars:
                too_long = cards.error_card(lang, t(lang, "ask.too_long", limit=self.max_question_chars))
                return too_long.model_copy(update={"title": t(lang, "ask.too_long_title")})
            user, chat_lang = await self.prefs.fill(user)
            query = await self._parse(text)
            lang = user.lang or chat_lang or query.language or lang
            reply = await self._answer(query, lang, user, text)
        except Exception:
            log.exception("answer failed")
            reply = cards.error_card(lang, t(lang, "error.internal"))
        await self.usage.record(query, reply, user, (time.perf_counter() - started) * 1000)
        return reply

    async def _parse(self, text: str) -> Query:
        cached: Query | None = self.answers.peek(("parse", text))
        return cached or await self._off_loop(self.answers.parse, text)

    async def _answer(self, q: Query, lang: Lang, user: User, text: str) -> Reply:
        if q.intent in prefs.INTENTS:
            return await self.prefs.command(q, lang, user, self.answers)
        answers, model, source = self.answers, None, ""
        if q.hf_repo and self.hub is not None and not in_catalog(self.catalog, q.hf_repo):
            if self.limits and not self.limits.expensive.allow(user.id or "anonymous"):
                return cards.slow_down_card(lang, int(self.limits.expensive.retry_after(user.id or "anonymous")) + 1)
            found = await hub_answers(self.hub, self.answers, q.hf_repo, q.quant, lang)
            if isinstance(found, Reply):
                return found
            answers, model, source = found
        try:
            if answers is self.answers:  # answers are pure functions of the question, language and saved defaults
                key = ("reply", text, lang, repr(dataclasses.replace(user, id="", chat="")))
                reply = self.answers.peek(key) or await self._off_loop(
                    answers.cached, key, lambda: answers.dispatch(q, lang, user, text)
                )
            else:
                reply = await self._off_loop(answers.dispatch, q, lang, user, text, model)
        except (EstimateError, ValidationError) as exc:  # e.g. an engine that cannot run the quant, 32M context
            return cards.error_card(lang, t(lang, "error.estimate", reason=_reason(exc)))
        if source:
            reply = reply.model_copy(update={"footer": f"{source} · {reply.footer}"})
        if reply.chart is not None and self.limits and not self.limits.expensive.allow(user.id or "anonymous"):
            reply = reply.model_copy(update={"chart": None})  # the card still answers; only the picture waits
        return reply

    async def decode_speed(self, text: str) -> float | None:
        """Estimated single-stream tokens/s for a fit question (the "feel the speed" buttons), off the loop."""
        result: float | None = await self._off_loop(self.answers.decode_speed, text)
        return result

    async def answers_mentions(self, chat: str) -> bool:
        """Whether plain mentions in this group/server get answers (commands always do)."""
        return await self.prefs.answers_mentions(chat)


def _reason(exc: Exception) -> str:
    """One readable line for an estimate that cannot be made (pydantic errors name the field)."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    return str(exc)


__all__ = ["Service", "User"]

"""``Service.answer``: the one use case every adapter calls. Text in, ``Reply`` out.

Flow: rate limits → saved preferences → ``understand`` (the message read once, ``bot.understand``) →
(Hugging Face look-up) → ``Answers`` builds the card on the worker thread → usage log. Nothing here
knows about Discord or Telegram, and nothing here raises: every failure becomes a friendly, localized card.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import time
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ValidationError

from bot.answers.hub_models import hub_answers
from bot.answers.route import Answers, feel_rate, understood_key
from bot.answers.runs import RunsRead, read_runs
from bot.answers.unknown_model import memory_only_card, sized_model, stated_row
from bot.answers.unparsed import special_answer
from bot.cards import notices as cards
from bot.cards.parts import with_notes
from bot.reply import Reply, untagged
from bot.understand import MAX_QUESTION_CHARS, Question, in_catalog
from bot.users.limits import Limits
from bot.users.prefs import Preferences
from bot.users.runs import RunBook
from bot.users.usage import UsageLog
from bot.users.user import User
from bot.worker import ANSWER_DEADLINE_S, AnswerTimedOut, AnswerWorker
from catalog.hub.offline import find_in_index, searchable_rows
from core.estimate import EstimateError
from core.models import Backend, Catalog, Engine, KvCacheType, Lang, ModelSpec
from core.notes import Note
from core.quants.ladder import MENU
from core.query.parse import Query, complete
from locales import integer, lang_of, preload_locales, t

if TYPE_CHECKING:
    from bot.handover import InteractionJournal, UpdateInbox
    from catalog.hub.cache import CachedHubClient
    from catalog.hub.search import HubSearch
    from storage.userdata import UserDataStore

log = logging.getLogger(__name__)
# values the adapters offer as fixed choices (Discord option lists), so they need no core types
ENGINE_CHOICES = tuple(e.value for e in Engine)
KV_CACHE_CHOICES = tuple(k.value for k in KvCacheType)
BACKEND_CHOICES = tuple(b.value for b in Backend if b is not Backend.OTHER)  # the ones a question can name
# one card of each kind, about a model and a device that no bench asks about first; the list scans fill the
# per-catalog memo of each model's weights in each quant (they never change with the device asked about).
# Then setups of the other kinds, asked in sentences: a MoE on two cards, a Mac, an offload, vLLM serving users
# (their code paths and per-device memos are otherwise built on a user's first question of that kind).
WARM_UP_QUESTIONS = (
    *(f"/{kind} qwen3-14b rtx 3060 12gb" for kind in ("fit", "speed", "cloud", "quant", "finetune", "tco")),
    "/models rtx 3060 12gb",
    "/gpus qwen3-14b",
    "can I run mixtral 8x22b on two rtx a6000?",
    "passt mistral small 24b auf einen mac mini m4 pro mit 48 gb?",
    "qwen2.5 72b on an rtx 4080 with 64gb ram",
    "/fit llama-3.2-3b-instruct h100 vllm 4 users",
)
WARM_UP_SPECIAL = (
    "llama-server -hf unsloth/Qwen3-14B-GGUF:Q4_K_M -c 8192 on an rtx 3060 12gb",
    "qwen3-14b with whisper on an rtx 3060 12gb",
)
QUANT_CHOICES = MENU  # the one quant ladder's menu (core.quants.ladder)


def build_validators() -> None:
    """Builds every imported model's validator now; ``defer_build`` leaves it to first use otherwise (1-7 ms each)."""
    pending = BaseModel.__subclasses__()
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if not cls.__pydantic_complete__:
            cls.model_rebuild()


class Service:
    """Answers questions for every adapter; owns the worker thread, the stores and the limits."""

    def __init__(
        self,
        catalog: Catalog,
        store: UserDataStore | None = None,
        hub: CachedHubClient | None = None,
        limits: Limits | None = None,
        max_question_chars: int = MAX_QUESTION_CHARS,
        search: HubSearch | None = None,
        answer_deadline_s: float = ANSWER_DEADLINE_S,
    ) -> None:
        self.answers = Answers(catalog)
        self.store, self.hub, self.limits, self.search = store, hub, limits, search
        self.max_question_chars = max_question_chars
        self.prefs = Preferences(store.prefs, RunBook(store.runs)) if store is not None else Preferences(None)
        self.usage = UsageLog(store)
        self.worker = AnswerWorker(answer_deadline_s)  # the one answer thread, with a deadline per answer

    @property
    def catalog(self) -> Catalog:
        return self.answers.catalog

    @property
    def inbox(self) -> UpdateInbox | None:
        """Where the Telegram poller keeps fetched updates until they are answered (None: no user database)."""
        return self.store.inbox if self.store is not None else None

    @property
    def deferred(self) -> InteractionJournal | None:
        """Where the Discord adapter records deferred interactions until they are answered."""
        return self.store.deferred if self.store is not None else None

    def warm_up(self) -> Future[None]:
        """Does, on the worker thread, what the first answer of a process would otherwise wait for: both
        languages' messages and Babel's number data, and one card of each kind in each language (the
        models' validators and each card's parts are built on first use). The chat adapters call it when
        they start; a one-shot ``fitbot ask`` does not."""
        return self.worker.submit(self._warm_up)

    def _warm_up(self) -> None:
        preload_locales()
        searchable_rows()  # the offline index, read on the first name the catalog lacks or holds only with a version
        for text in WARM_UP_QUESTIONS:
            for lang in ("en", "de"):
                self.answers.dispatch(self.answers.understand(text).query, lang, User(), text)
        for text in WARM_UP_SPECIAL:  # a pasted command, models side by side: their modules load on first use
            special_answer(self.answers, self.answers.understand(text), "en", User())
        build_validators()  # the models those cards did not touch (rigs, offload, Macs, ...)
        # What start-up built lives as long as the process: the collector need not walk it again. A full
        # collection walked some 75,000 objects (about 30 ms, paid by whichever question triggered it).
        gc.collect()
        gc.freeze()

    async def close(self) -> None:
        """Write the pending usage log, stop the worker and close the user database."""
        await self.usage.close()
        self.worker.shutdown()
        gc.unfreeze()  # what the warm-up froze may now go (tests and embedders open many services)
        if self.store is not None:
            await self.store.close()

    async def _off_loop(self, fn: Any, *args: Any) -> Any:
        """Runs CPU work on the answer worker, within the answer deadline."""
        return await self.worker.run(fn, *args)

    def stuck_answers(self) -> int:
        """Answers set aside at their deadline that are still running (``fitbot health`` fails)."""
        return self.worker.stuck()

    async def answer(self, text: str, locale: str | None = None, user: User | None = None) -> Reply:
        """Answer one question; never raises. Every button of the reply carries its language (``Action``)."""
        reply = await self._answer_text(*untagged(text), locale, user)
        return reply.with_language_tags()

    async def _answer_text(self, text: str, card_lang: Lang | None, locale: str | None, user: User | None) -> Reply:
        started = time.perf_counter()
        user = user or User()
        lang = choose_language(user.lang, None, None, locale)
        query: Query | None = None
        try:
            wait = await self.limits.acheck(user.id, user.chat) if self.limits else 0.0
            if wait:
                return cards.slow_down_card(lang, int(wait) + 1)
            user, chat_lang = await self.prefs.fill(user)
            question, lang, first = await self._first_pass(text, user, chat_lang, card_lang, locale)
            if question.kind == "runs":  # a pasted benchmark run calibrates this user's answers (issue 38)
                read: RunsRead = await self._off_loop(read_runs, self.answers, question.paste, user)
                lang = choose_language(user.lang, chat_lang, card_lang or read.language, locale)
                runs = await self.prefs.runs.answer(read, lang, user)
                await self.usage.record(None, runs, user, (time.perf_counter() - started) * 1000)
                return runs
            if question.kind in ("paste", "together"):  # a pasted command or log, several models at once
                special: Reply = await self._off_loop(special_answer, self.answers, question, lang, user)
                await self.usage.record(None, special, user, (time.perf_counter() - started) * 1000)
                return special
            if question.kind == "too_long":
                too_long = cards.error_card(lang, t(lang, "ask.too_long", limit=self.max_question_chars))
                return too_long.model_copy(update={"title": t(lang, "ask.too_long_title")})
            query = question.query
            reply = await self._answer(question, lang, user) if first is None else await self._checked(first, user)
        except AnswerTimedOut:
            seconds = self.worker.deadline_s
            log.warning("answer set aside after %.0f s", seconds, extra={"event": "answer_deadline"})
            reply = cards.error_card(lang, t(lang, "error.deadline", seconds=integer(round(seconds), lang)))
        except Exception:
            log.exception("answer failed")
            reply = cards.error_card(lang, t(lang, "error.internal"))
        await self.usage.record(query, reply, user, (time.perf_counter() - started) * 1000)
        return reply

    async def _first_pass(
        self, text: str, user: User, chat_lang: Lang | None, card_lang: Lang | None, locale: str | None
    ) -> tuple[Question, Lang, Card | None]:
        """The message understood and, for a question about catalog names only, its card, in one trip to the
        worker (a repeat from the memo, on the loop). No card where the loop awaits something first: a
        settings command, a name the catalog lacks, a paste."""
        question: Question | None = self.answers.peek(understood_key(text, self.max_question_chars))
        if question is not None:
            lang = choose_language(user.lang, chat_lang, card_lang or question.language, locale)
            if not self._catalog_only(question):
                return question, lang, None
            repeat: Reply | None = self.answers.peek(_reply_key(text, lang, user))
            if repeat is not None:
                return question, lang, Card(question.query, lang, text, repeat, built=True)
        first: tuple[Question, Lang, Card | None] = await self._off_loop(
            self._understand_and_answer, text, user, chat_lang, card_lang, locale
        )
        return first

    def _understand_and_answer(
        self, text: str, user: User, chat_lang: Lang | None, card_lang: Lang | None, locale: str | None
    ) -> tuple[Question, Lang, Card | None]:
        question = self.answers.understand(text, self.max_question_chars)
        lang = choose_language(user.lang, chat_lang, card_lang or question.language, locale)
        if not self._catalog_only(question):
            return question, lang, None
        return question, lang, _card(self.answers, question.query, lang, user, question.text, cached=True)

    def _catalog_only(self, question: Question) -> bool:
        """Whether the card needs the catalog alone: a question with no repo or model name the catalog lacks."""
        q = question.query
        if question.kind != "question":
            return False
        unknown = question.unknown_name is not None or sized_model(q) is not None  # known by its size only too
        return not (q.hf_repo and not in_catalog(self.catalog, q.hf_repo)) and not unknown

    async def _checked(self, card: Card, user: User) -> Reply:
        """A catalog card, rebuilt where the model's live config.json differs from the catalog's (online)."""
        q = card.query
        if self.hub is not None and q.model is not None and q.model.id:
            answers, live = await live_checked(self.hub, self.answers, q.model.id, self.answers, None)
            if live is not None:
                card = await self._off_loop(_card, answers, q, card.lang, user, card.echo)
                return self._finish(card, "", live, user)
        return self._finish(card, "", None, user)

    async def _answer(self, question: Question, lang: Lang, user: User) -> Reply:
        """The card of a question that needs the loop first: a settings command, or a name the catalog lacks
        (the Hugging Face hub, then the offline index)."""
        q, text, session = question.query, question.text, question.session
        if session in ("help", "start"):
            return cards.help_card(lang)
        if session is not None:
            return await self.prefs.command(session, question.command.arg, q, lang, user, self.answers)
        answers, model, source, searched = self.answers, None, "", False
        repo = q.hf_repo if q.hf_repo and not in_catalog(self.catalog, q.hf_repo) else None
        stated = sized_model(q)  # memory_only.toml: its publisher's size only (named, or its repo id pasted)
        phrase = question.unknown_name if repo is None and stated is None else None
        hit = find_in_index(question.index_phrase or "") if phrase else None
        sized_only = hit[0] if hit and hit[1] is None else None  # the index has its size only (Command-R)
        if stated is not None:
            sized_only = stated_row(stated)
        if sized_only is not None and self.hub is not None:
            repo, searched = sized_only.repo, True  # online: that repo's config.json, the one hub look-up path
        elif phrase and self.search is not None and self.hub is not None:
            hits = await self.search.find(phrase)  # "olmo 2 7b": the most downloaded repo that is that model
            repo, searched = (hits[0].repo_id, True) if hits else (None, False)
        indexed: Note | None = None
        if repo and self.hub is not None:
            if self.limits and not self.limits.expensive.allow(user.id or "anonymous"):
                return cards.slow_down_card(lang, int(self.limits.expensive.retry_after(user.id or "anonymous")) + 1)
            found = await hub_answers(self.hub, self.answers, repo, q.quant, lang)
            if isinstance(found, Reply) and sized_only is None:
                if (base := question.offline) is None:
                    return found
                (q, indexed), repo = base, None  # the hub unreachable: the catalog model the repo is a copy of
            elif not isinstance(found, Reply):
                answers, model, source = found
        elif repo and not searched and (base := question.offline) is not None:
            (q, indexed), repo = base, None  # no hub at all: the same
        if model is None and sized_only is not None:  # offline or the hub failed: the weights, marked so
            memory_card: Reply = await self._off_loop(
                memory_only_card, self.answers, sized_only, q, lang, user, text, stated
            )
            return memory_card
        if model is None and repo is None and hit is not None and hit[1] is not None:
            model = hit[1]  # offline, or the hub knew nothing: the offline index, and the card says so
            answers = self.answers.with_model(self.catalog.model_copy(update={"models": (*self.catalog.models, model)}))
            indexed = Note(code="index_only", values={"repo": hit[0].repo})
        if model is None and repo is None and self.hub is not None and q.model and q.model.id:
            answers, indexed = await live_checked(self.hub, self.answers, q.model.id, answers, indexed)
        cached = answers is self.answers
        card: Card = await self._off_loop(_card, answers, q, lang, user, text, None if cached else model, cached)
        if (searched and repo) and indexed is None:  # the card names the repo it used for a name the catalog lacks
            indexed = Note(code="hub_lookup", values={"repo": repo or ""})
        return self._finish(card, source, indexed, user)

    def _finish(self, card: Card, source: str, looked_up: Note | None, user: User) -> Reply:
        """Where the card's model came from (footer and a note), and its chart only within the limits; a card
        that could not be built is the reason, as it is."""
        reply = card.reply
        if not card.built:
            return reply
        if source:
            reply = reply.model_copy(update={"footer": " · ".join(p for p in (source, reply.footer) if p)})
        if looked_up is not None:
            subjects = tuple(s.model_copy(update={"notes": (*s.notes, looked_up)}) for s in reply.subjects)
            reply = with_notes(reply, [looked_up], card.lang).model_copy(update={"subjects": subjects})
        if reply.chart is not None and self.limits and not self.limits.expensive.allow(user.id or "anonymous"):
            reply = reply.model_copy(update={"chart": None})  # the card still answers; only the picture waits
        return reply

    async def decode_speed(self, text: str) -> float | None:
        """Estimated single-stream tokens/s for a fit question (the "feel the speed" buttons), off the loop."""
        question = await self._off_loop(self.answers.understand, untagged(text)[0], self.max_question_chars)
        result: float | None = await self._off_loop(feel_rate, self.answers, question)
        return result

    def complete(self, kind: Literal["model", "gpu"], typed: str, limit: int = 25) -> list[tuple[str, str]]:
        """(id, name) choices for a name being typed, from the one name matcher (Discord autocomplete)."""
        return complete(typed, self.answers.vocab, kind, limit)

    async def answers_mentions(self, chat: str) -> bool:
        """Whether plain mentions in this group/server get answers (commands always do)."""
        return await self.prefs.answers_mentions(chat)


async def live_checked(
    hub: CachedHubClient | None, base: Answers, model_id: str, answers: Answers, note: Note | None
) -> tuple[Answers, Note | None]:
    """A catalog model against its live config.json (cached): where they differ the live one answers (built
    on ``base``, the catalog's answers); else ``answers`` and ``note`` as they were."""
    from catalog.hub.live import live_row

    row = base.catalog.model(model_id)
    if row is None or hub is None:
        return answers, note
    checked, changed = await live_row(hub, row)
    if not changed:
        return answers, note
    models = tuple(checked if m.id == row.id else m for m in base.catalog.models)
    live = Note(code="live_config", values={"model": row.name, "fields": ", ".join(changed)})
    return base.with_model(base.catalog.model_copy(update={"models": models})), live


def choose_language(saved: Lang | None, chat: Lang | None, question: Lang | None, client: str | None) -> Lang:
    """The one rule for the answer's language: the user's saved choice, then the chat's, then the
    question's own words, then the client's language (Telegram ``language_code``, Discord ``locale``),
    then English. A bare command has no words, so it follows the settings and then the client."""
    return saved or chat or question or lang_of(client)


@dataclasses.dataclass(frozen=True)
class Card:
    """A card from ``Answers`` and the question it answers; ``built`` is False for the reason it could not be."""

    query: Query
    lang: Lang
    echo: str
    reply: Reply
    built: bool


def _card(
    answers: Answers,
    q: Query,
    lang: Lang,
    user: User,
    echo: str,
    model: ModelSpec | None = None,
    cached: bool = False,
) -> Card:
    """On the worker: the card (memoised when ``answers`` is the catalog's: answers are pure functions of the
    question, language and saved defaults), or the reason it cannot be built, in the user's language."""
    try:
        if cached:
            reply = answers.cached(_reply_key(echo, lang, user), lambda: answers.dispatch(q, lang, user, echo))
        else:
            reply = answers.dispatch(q, lang, user, echo, model)
    except EstimateError as exc:  # e.g. an engine that cannot run the quant
        return Card(q, lang, echo, cards.estimate_error_card(lang, exc), built=False)
    except ValidationError as exc:  # a value out of range (a 40M context): its limits
        return Card(
            q,
            lang,
            echo,
            cards.error_card(lang, t(lang, "error.estimate", reason=_out_of_range(exc, lang))),
            built=False,
        )
    return Card(q, lang, echo, reply, built=True)


def _reply_key(echo: str, lang: Lang, user: User) -> tuple[str, ...]:
    return ("reply", echo, lang, repr(dataclasses.replace(user, id="", chat="")))


def _out_of_range(exc: ValidationError, lang: Lang) -> str:
    """The first field out of range and its limits, in the user's language."""
    first = exc.errors()[0]
    field = str(first["loc"][-1]) if first["loc"] else ""
    limits = first.get("ctx") or {}
    low = limits.get("ge", limits.get("gt", 1))
    high = limits.get("le", limits.get("lt"))
    if high is None:
        return t(lang, "error.internal")
    name = t(lang, f"resolve.field.{field}")
    return t(lang, "resolve.out_of_range", field=name, low=integer(low, lang), high=integer(high, lang))


__all__ = ["Service", "User"]

"""``Service.answer``: the one use case every adapter calls. Text in, ``Reply`` out.

Flow: parse (core.query) → resolve names against the catalog (or the Hugging Face cache) →
estimate (core) → build a card (bot.cards). Nothing here knows about Discord or Telegram, and
nothing here raises: every failure becomes a friendly, localized card.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sqlite3
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from bot import cards
from bot.limits import Limits
from bot.reply import ChartSpec, Reply
from core.advice import HardwareAdvice, recommend_hardware
from core.analysis import MAX_OFFERS, Cost, advice_for, cost_of
from core.cost import DEFAULT_USERS, OfferQuote, cost_assumptions, quote_offers
from core.estimate import DEFAULT_CONTEXT, EstimateError, FitEstimate, Request, default_quant, estimate, resolve
from core.finetune import estimate_finetune, smallest_hardware, training_fit
from core.fit import Verdict, breakdown
from core.models import Catalog, Engine, GpuSpec, ModelSpec, QuantSize
from core.query import Intent, Match, Query, VocabEntry, Vocabulary, parse
from locales import Lang, context_label, gib, integer, t, tokens_per_s

if TYPE_CHECKING:
    from bot.app.settings import Settings
    from catalog.userdata import CachedHubClient, UserDataStore

log = logging.getLogger(__name__)
PREFS_INTENTS = (Intent.MYGPU, Intent.LANG, Intent.SETTINGS, Intent.FORGET)

MAX_QUESTION_CHARS = 2000
TABLE_CONTEXTS = (8192, 32768)
CHART_CONTEXTS = (4096, 8192, 16384, 32768, 65536, 131072)
CHART_QUANTS = ("Q8_0", "Q6_K", "Q4_K_M", "IQ4_XS", "Q3_K_M", "UD-Q2_K_XL")
SPEED_CHART_GPUS = 12
LOG_FLUSH_S = 1.0  # usage-log rows are written in batches, off the answer path
CACHE_ENTRIES = 2048  # parsed questions, whole answers and per-model scans kept for repeats (LRU)


def vocabulary(catalog: Catalog) -> Vocabulary:
    """The names the parser may recognise, from the catalog (built once per catalog)."""
    return Vocabulary(
        models=tuple(
            VocabEntry(id=m.id, names=(m.name, m.id, *m.aliases, *((m.hf_repo,) if m.hf_repo else ())))
            for m in catalog.models
        ),
        gpus=tuple(
            VocabEntry(
                id=g.id,
                names=(g.short_name, g.name, g.id, *g.aliases),
                memory_gib=round(g.memory_bytes / (1 << 30)),
                group=g.category,
            )
            for g in catalog.gpus
        ),
        quants=tuple(q.id for q in catalog.quants),
        not_devices=tuple(
            VocabEntry(id=f"not:{i}", names=(n.name, *n.aliases)) for i, n in enumerate(catalog.not_devices)
        ),
    )


@dataclass(frozen=True)
class User:
    """Who asks, as ``platform:id`` ("tg:42", "dc:1234"); saved defaults fill what a question leaves out."""

    id: str = ""
    chat: str = ""  # "tg:-1001234" / "dc:guild:5678"; empty in private chats and the console
    lang: Lang | None = None  # an explicit choice (saved, or the console's --lang)
    gpu_id: str | None = None
    gpu_count: int = 1
    ram_gb: float | None = None
    context: int | None = None
    engine: Engine | None = None


@dataclass
class Service:
    catalog: Catalog
    store: UserDataStore | None = None
    hub: CachedHubClient | None = None
    limits: Limits | None = None
    max_question_chars: int = MAX_QUESTION_CHARS
    vocab: Vocabulary = field(default=None)  # type: ignore[assignment]  # built from the catalog when not given
    _scans: OrderedDict[tuple[str, ...], Any] = field(init=False, default_factory=OrderedDict)
    _log_rows: list[Any] = field(init=False, default_factory=list)
    _log_task: asyncio.Task[None] | None = field(init=False, default=None)
    # One worker thread computes answers, so the event loop keeps serving heartbeats, deferrals and
    # I/O while a heavy card (a table over every device) is built; one thread also means the caches
    # are only ever changed by that thread (the loop only reads them for the fast path).
    _worker: ThreadPoolExecutor = field(
        init=False, default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="fitbot-answers")
    )

    def __post_init__(self) -> None:
        if self.vocab is None:
            self.vocab = vocabulary(self.catalog)
            parse("", self.vocab)  # builds the parser's name index now, not on the first question

    def _cached(self, key: tuple[str, ...], compute: Any) -> Any:
        """LRU memo: parses, answers and catalog-wide scans (all pure functions of their key)."""
        if key in self._scans:
            self._scans.move_to_end(key)
            return self._scans[key]
        value = self._scans[key] = compute()
        if len(self._scans) > CACHE_ENTRIES:
            self._scans.popitem(last=False)
        return value

    def _offers(
        self, model: ModelSpec, quant: Any, request: Request, limit: int | None = None
    ) -> tuple[OfferQuote, ...]:
        """Fitting cloud offers, cheapest first; ``limit=1`` is all a fit card needs."""
        key = ("offers", model.id, quant.id, request.model_dump_json(exclude={"gpu_count"}), str(limit))
        measured = self.catalog.size(model.id, quant.id)
        return self._cached(
            key,
            lambda: quote_offers(
                model,
                quant,
                request,
                self.catalog,
                users=request.concurrent or DEFAULT_USERS,
                measured=measured,
                limit=limit,
            ),
        )

    def _hardware(self, model: ModelSpec, quant: Any, request: Request) -> HardwareAdvice:
        key = ("hardware", model.id, quant.id, request.model_dump_json(exclude={"gpu_count"}))
        measured = self.catalog.size(model.id, quant.id)
        offers = self._offers(model, quant, request, limit=1)
        return self._cached(key, lambda: recommend_hardware(model, quant, request, self.catalog, measured, offers))

    @classmethod
    async def open(cls, catalog: Catalog, settings: Settings) -> Service:
        """The production service: user data, hub cache and limits from the settings."""
        from datetime import timedelta

        from catalog.hub import HubClient
        from catalog.userdata import CachedHubClient, UserDataStore

        store = await UserDataStore().open()  # data_dir(): $FITBOT_DATA_DIR, set from the settings by `fitbot run`
        hub = CachedHubClient(
            HubClient(timeout_s=settings.hub_timeout_s),
            store.hub_cache,
            max_age=timedelta(days=settings.hub_cache_days),
        )
        limits = Limits.per_minute(
            settings.rate_user_per_minute, settings.rate_chat_per_minute, settings.rate_expensive_per_minute
        )
        return cls(catalog, store=store, hub=hub, limits=limits, max_question_chars=settings.max_question_chars)

    async def close(self) -> None:
        """Write the pending usage log, stop the worker and close the user database."""
        if self._log_task is not None:
            self._log_task.cancel()
        await self.flush_log()
        self._worker.shutdown(wait=False)
        if self.store is not None:
            await self.store.close()

    async def _off_loop(self, fn: Any, *args: Any) -> Any:
        """Runs CPU work on the service's worker thread."""
        return await asyncio.get_running_loop().run_in_executor(self._worker, fn, *args)

    def _parse(self, text: str) -> Query:
        return self._cached(("parse", text), lambda: parse(text, self.vocab))  # type: ignore[no-any-return]

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
                return cards.error_card(lang, t(lang, "ask.too_long", limit=self.max_question_chars))
            user, chat_lang = await self._with_prefs(user)
            query = self._scans.get(("parse", text)) or await self._off_loop(self._parse, text)
            lang = user.lang or chat_lang or query.language or lang
            reply = await self._answer(query, lang, user, text)
        except Exception:
            log.exception("answer failed")
            reply = cards.error_card(lang, t(lang, "error.internal"))
        await self._log(query, reply, user, (time.perf_counter() - started) * 1000)
        return reply

    async def _answer(self, q: Query, lang: Lang, user: User, text: str) -> Reply:
        if q.intent in PREFS_INTENTS:
            return await self._prefs_command(q, lang, user)
        service: Service = self
        model: ModelSpec | None = None
        source = ""
        if q.hf_repo and self.hub is not None and not self._catalog_repo(q.hf_repo):
            if self.limits and not self.limits.expensive.allow(user.id or "anonymous"):
                return cards.slow_down_card(lang, int(self.limits.expensive.retry_after(user.id or "anonymous")) + 1)
            found = await self._hub_model(q.hf_repo, q.quant, lang)
            if isinstance(found, Reply):
                return found
            service, model, source = found
        try:
            if service is self:  # answers are pure functions of the question, language and saved defaults
                key = ("reply", text, lang, repr(dataclasses.replace(user, id="", chat="")))
                reply = self._scans.get(key) or await self._off_loop(
                    self._cached, key, lambda: self._dispatch(q, lang, user, text)
                )
            else:
                reply = await self._off_loop(service._dispatch, q, lang, user, text, model)
        except (EstimateError, ValidationError) as exc:  # e.g. an engine that cannot run the quant, 32M context
            return cards.error_card(lang, t(lang, "error.estimate", reason=_reason(exc)))
        if source:
            reply = reply.model_copy(update={"footer": f"{source} · {reply.footer}"})
        if reply.chart is not None and self.limits and not self.limits.expensive.allow(user.id or "anonymous"):
            reply = reply.model_copy(update={"chart": None})  # the card still answers; only the picture waits
        return reply

    def _dispatch(self, q: Query, lang: Lang, user: User, text: str, model_override: ModelSpec | None = None) -> Reply:
        if q.intent in (Intent.HELP, Intent.START):
            return cards.help_card(lang)
        if q.intent is Intent.MODELS:
            return self._models_for_gpu(q, lang, user, text)
        model = model_override or self._model(q, lang, text)
        if isinstance(model, Reply):
            return model
        if q.intent is Intent.GPUS:
            return self._gpus_for_model(model, q, lang)
        if q.intent is Intent.CLOUD:
            return self._cloud(model, q, lang, user)
        if q.intent is Intent.COMPARE:
            return self._compare(model, q, lang, user, text)
        gpu = self._gpu(q, lang, user, text, model)
        if isinstance(gpu, Reply):
            return gpu
        hw, count = gpu
        if q.intent is Intent.QUANT:
            return self._quant_matrix(model, hw, count, q, lang, user)
        if q.intent is Intent.FINETUNE:
            return self._finetune(model, hw, count, q, lang)
        if q.intent is Intent.TCO:
            return self._tco(model, hw, count, q, lang, user)
        return self._fit(model, hw, count, q, lang, user, text)

    # --- name resolution ----------------------------------------------------------------------

    def _model(self, q: Query, lang: Lang, text: str) -> ModelSpec | Reply:
        match = q.model
        if match and match.id and not match.ambiguous:
            found = self.catalog.model(match.id)
            if found:
                return found
        if match and match.suggestions:
            return self._suggest(lang, t(lang, "ask.unknown_model", text=match.text), match, "model", q, text)
        return cards.ask_card(lang, t(lang, "ask.model_missing"), echo=text)

    def _gpu(self, q: Query, lang: Lang, user: User, text: str, model: ModelSpec | None) -> tuple[GpuSpec, int] | Reply:
        if q.not_device:
            ghost = self.catalog.not_devices[int(q.not_device.split(":")[1])]
            return cards.ask_card(lang, t(lang, "ask.not_a_device", name=ghost.name, note=ghost.note), echo=text)
        match = q.gpu
        if match and match.id and not match.ambiguous:
            gpu = self.catalog.gpu(match.id)
            if gpu:
                return gpu, q.gpu_count
        if match and match.suggestions:
            return self._suggest(lang, t(lang, "ask.unknown_gpu", text=match.text), match, "gpu", q, text)
        if user.gpu_id and self.catalog.gpu(user.gpu_id):
            return self.catalog.gpu(user.gpu_id), user.gpu_count  # type: ignore[return-value]
        if model is None:
            return cards.ask_card(lang, t(lang, "ask.gpu_missing_models"), echo=text)
        return cards.ask_card(lang, t(lang, "ask.gpu_missing", model=model.id), echo=text)

    def _suggest(self, lang: Lang, message: str, match: Match, kind: str, q: Query, text: str) -> Reply:
        names, queries = [], []
        for sid in match.suggestions[:3]:
            item = self.catalog.model(sid) if kind == "model" else self.catalog.gpu(sid)
            if item is None:
                continue
            names.append(item.name if kind == "model" else item.short_name)
            other = q.gpu.id if kind == "model" and q.gpu and q.gpu.id else ""
            model = q.model.id if kind == "gpu" and q.model and q.model.id else ""
            queries.append(f"/{q.intent.value} {model or sid} {other or (sid if model else '')}".strip())
        return cards.ask_card(lang, message, names, queries, echo=text)

    # --- estimates ----------------------------------------------------------------------------

    def _request(self, q: Query, user: User, count: int) -> Request:
        return Request(
            quant=q.quant,
            context=q.context or user.context,
            kv_cache=q.kv_cache,
            engine=q.engine or user.engine,
            gpu_count=count,
            ram_gb=q.ram_gb if q.ram_gb is not None else user.ram_gb,
            prompt_tokens=q.prompt_tokens,
            concurrent=q.users,
        )

    def _estimate(self, model: ModelSpec, gpu: GpuSpec, request: Request, quant_id: str | None = None) -> FitEstimate:
        qid = quant_id or request.quant or default_quant(model, request.engine or Engine.LLAMA_CPP)
        quant = self.catalog.quant(qid)
        if quant is None:
            raise EstimateError(f"unknown quant {qid}")
        measured: QuantSize | None = self.catalog.size(model.id, quant.id)
        return estimate(model, gpu, quant, request, measured)

    def _fit(self, model: ModelSpec, gpu: GpuSpec, count: int, q: Query, lang: Lang, user: User, text: str) -> Reply:
        request = self._request(q, user, count)
        est = self._estimate(model, gpu, request)
        quant = self.catalog.quant(est.quant)
        assert quant is not None
        measured = self.catalog.size(model.id, quant.id)
        cost = cost_of(model, gpu, quant, request, self.catalog, est, measured, self._offers(model, quant, request, 1))
        advice = advice_for(
            model,
            gpu,
            quant,
            request,
            self.catalog,
            est,
            measured,
            cost.offers[0] if cost.offers else None,
            self._hardware(model, quant, request),
        )
        extra = [cards.advice_section(est, advice, lang)]
        if est.verdict is not Verdict.NO_FIT:  # no speed for a setup that cannot run
            extra.insert(0, cards.speed_section(est, lang))
        cost_section = cards.cost_section(cost, lang)
        if cost_section:
            extra.append(cost_section)
        speed_card = q.intent is Intent.SPEED
        chart = self._speed_chart(model, request, lang) if speed_card else self._memory_chart(model, gpu, request, lang)
        card = cards.fit_card(
            est, self.catalog, lang, extra=extra, code=cards.command_blocks(advice), chart=chart, echo=text
        )
        return card.model_copy(update={"kind": "speed" if speed_card else "fit"})

    def decode_speed(self, text: str) -> float | None:
        """Estimated single-stream tokens/s for a fit question (the "feel the speed" buttons)."""
        return self._worker.submit(self._decode_speed, text).result()  # type: ignore[no-any-return]

    def _decode_speed(self, text: str) -> float | None:
        query = parse(text.removeprefix("/feel").strip(), self.vocab)
        model = self._model(query, "en", text)
        if isinstance(model, Reply):
            return None
        gpu = self._gpu(query, "en", User(), text, model)
        if isinstance(gpu, Reply):
            return None
        try:
            est = self._estimate(model, gpu[0], self._request(query, User(), gpu[1]))
        except EstimateError:
            return None
        return est.speed.decode_tokens_per_s if est.verdict is not Verdict.NO_FIT else None

    def _memory_chart(self, model: ModelSpec, gpu: GpuSpec, request: Request, lang: Lang) -> ChartSpec:
        curves = []
        engine = request.engine or Engine.LLAMA_CPP
        usable = 0
        for qid in CHART_QUANTS if engine is Engine.LLAMA_CPP else ("BF16", "FP8", "AWQ"):
            quant = self.catalog.quant(qid)
            if quant is None:
                continue
            hardware, workload, _, _, _ = resolve(model, gpu, request.model_copy(update={"quant": qid}))
            points = []
            for ctx in CHART_CONTEXTS:
                mem, _ = breakdown(model, quant, hardware, workload, self.catalog.size(model.id, qid), ctx)
                points.append((ctx, mem.total_bytes))
                usable = mem.usable_bytes
            curves.append((qid, points))
        return cards.memory_chart(model.name, usable, curves, lang)

    def _speed_chart(self, model: ModelSpec, request: Request, lang: Lang) -> ChartSpec:
        bars = []
        for gpu in self.catalog.gpus:
            est = self._estimate(model, gpu, request.model_copy(update={"gpu_count": 1}))
            if est.verdict in (Verdict.FITS, Verdict.TIGHT):
                bars.append((gpu.short_name, round(est.speed.decode_tokens_per_s, 1)))
        bars.sort(key=lambda b: -b[1])
        return ChartSpec(
            kind="speed_per_gpu", title=model.name, x_label="tok/s", y_label="", bars=tuple(bars[:SPEED_CHART_GPUS])
        )

    def _cloud(self, model: ModelSpec, q: Query, lang: Lang, user: User) -> Reply:
        request = self._request(q, user, 1)
        quant = self.catalog.quant(request.quant or default_quant(model, request.engine or Engine.LLAMA_CPP))
        if quant is None:
            raise EstimateError(f"unknown quant {request.quant}")
        users = request.concurrent or DEFAULT_USERS
        cost = Cost(
            offers=self._offers(model, quant, request)[:MAX_OFFERS],
            rent_vs_buy=None,
            assumptions=cost_assumptions(users),
        )
        return cards.cloud_card(model.name, quant.id, cost, self.catalog, lang)

    def _tco(self, model: ModelSpec, gpu: GpuSpec, count: int, q: Query, lang: Lang, user: User) -> Reply:
        request = self._request(q, user, count)
        est = self._estimate(model, gpu, request)
        quant = self.catalog.quant(est.quant)
        assert quant is not None
        cost = cost_of(
            model,
            gpu,
            quant,
            request,
            self.catalog,
            est,
            self.catalog.size(model.id, quant.id),
            self._offers(model, quant, request),
        )
        return cards.tco_card(model.name, est, cost, self.catalog, lang)

    def _finetune(self, model: ModelSpec, gpu: GpuSpec, count: int, q: Query, lang: Lang) -> Reply:
        methods = (q.finetune_method,) if q.finetune_method else ("qlora", "lora", "full")
        seq = q.context or 2048
        results = []
        for method in methods:
            est = estimate_finetune(model, method, seq_len=seq)
            results.append(
                (est, training_fit(est, gpu, count), smallest_hardware(model, method, self.catalog, seq_len=seq))
            )
        label = f"{count}x {gpu.short_name}" if count > 1 else gpu.short_name
        return cards.finetune_card(model.name, label, results, self.catalog, lang)

    def _compare(self, model: ModelSpec, q: Query, lang: Lang, user: User, text: str) -> Reply:
        pairs: list[tuple[ModelSpec, GpuSpec, int]] = []
        gpu = self._gpu(q, lang, user, text, model)
        if isinstance(gpu, Reply):
            return gpu
        pairs.append((model, gpu[0], gpu[1]))
        second_model = self.catalog.model(q.model2.id) if q.model2 and q.model2.id else None
        second_gpu = self.catalog.gpu(q.gpu2.id) if q.gpu2 and q.gpu2.id else None
        if second_gpu:
            pairs.append((model, second_gpu, q.gpu2_count))
        elif second_model:
            pairs.append((second_model, gpu[0], gpu[1]))
        estimates = [self._estimate(m, g, self._request(q, user, n)) for m, g, n in pairs]
        return cards.compare_card(t(lang, "compare.title"), estimates, self.catalog, lang)

    def _quant_matrix(self, model: ModelSpec, gpu: GpuSpec, count: int, q: Query, lang: Lang, user: User) -> Reply:
        request = self._request(q, user, count)
        engine = request.engine or Engine.LLAMA_CPP
        rows = []
        for quant in sorted(self.catalog.quants, key=lambda x: -x.bits):
            if engine not in quant.engines or (quant.id == "MXFP4" and model.native_dtype != "mxfp4"):
                continue
            est = self._estimate(model, gpu, request.model_copy(update={"quant": quant.id}))
            mem = est.memory
            rows.append(
                (
                    quant.id,
                    gib(mem.weights_bytes, lang),
                    gib(mem.kv_cache_bytes, lang),
                    gib(mem.total_bytes, lang),
                    _speed(est, lang),
                    cards.verdict_label(est.verdict, lang),
                )
            )
        ctx = request.context or DEFAULT_CONTEXT
        title = t(
            lang,
            "quant.title",
            model=model.name,
            gpu=f"{count}x {gpu.short_name}" if count > 1 else gpu.short_name,
            context=context_label(ctx),
        )
        return cards.table_card("quant", title, t(lang, "quant.headers"), rows, self.catalog, lang)

    def _gpus_for_model(self, model: ModelSpec, q: Query, lang: Lang) -> Reply:
        rows = []
        request = self._request(q, User(), 1)
        for gpu in self.catalog.gpus:
            ests = [self._estimate(model, gpu, request.model_copy(update={"context": c})) for c in TABLE_CONTEXTS]
            rows.append(
                (
                    gpu.short_name,
                    gib(gpu.memory_bytes, lang, 0),
                    gib(ests[0].memory.total_bytes, lang, 1),
                    gib(ests[1].memory.total_bytes, lang, 1),
                    _speed(ests[0], lang),
                    cards.verdict_label(ests[0].verdict, lang),
                )
            )
        quant = request.quant or default_quant(model, request.engine or Engine.LLAMA_CPP)
        title = t(lang, "gpus.title", model=model.name, count=len(rows), quant=quant)
        headers = t(lang, "gpus.headers", ctx1=context_label(TABLE_CONTEXTS[0]), ctx2=context_label(TABLE_CONTEXTS[1]))
        return cards.table_card("gpus", title, headers, rows, self.catalog, lang)

    def _models_for_gpu(self, q: Query, lang: Lang, user: User, text: str) -> Reply:
        gpu = self._gpu(q, lang, user, text, None)
        if isinstance(gpu, Reply):
            return gpu
        hw, count = gpu
        request = self._request(q, user, count)
        rows = []
        for model in self.catalog.models:
            est = self._estimate(model, hw, request)
            if est.verdict in (Verdict.FITS, Verdict.TIGHT):
                rows.append(
                    (
                        est.model.name,
                        f"{integer(round(model.total_params / 1e9), lang)}B",
                        gib(est.memory.total_bytes, lang, 1),
                        _speed(est, lang),
                        cards.verdict_label(est.verdict, lang),
                    )
                )
        title = t(
            lang,
            "models.title",
            gpu=f"{count}x {hw.short_name}" if count > 1 else hw.short_name,
            quant=request.quant or t(lang, "models.default_quant"),
            context=context_label(request.context or DEFAULT_CONTEXT),
        )
        return cards.table_card(
            "models",
            title,
            t(lang, "models.headers"),
            rows,
            self.catalog,
            lang,
            summary="" if rows else t(lang, "models.none"),
        )

    # --- preferences, Hugging Face, usage log ---------------------------------------------------

    async def _with_prefs(self, user: User) -> tuple[User, Lang | None]:
        """The user with saved defaults filled in, and the chat's language if one was chosen."""
        if self.store is None or not user.id:
            return user, None
        try:
            saved = await self.store.prefs.user(user.id)
            chat_lang = (await self.store.prefs.chat(user.chat)).lang if user.chat else None
        except (sqlite3.Error, OSError):  # a locked or broken database costs the defaults, not the answer
            log.warning("preferences unavailable", exc_info=True)
            return user, None
        return dataclasses.replace(
            user,
            lang=user.lang or _lang(saved.lang),
            gpu_id=saved.gpu_id,
            gpu_count=saved.gpu_count,
            ram_gb=saved.ram_gb,
            context=saved.context,
            engine=Engine(saved.engine) if saved.engine else None,
        ), _lang(chat_lang)

    async def _prefs_command(self, q: Query, lang: Lang, user: User) -> Reply:
        if self.store is None or not user.id:
            return cards.error_card(lang, t(lang, "prefs.unavailable"))
        try:
            return await self._prefs_change(q, lang, user)
        except (sqlite3.Error, OSError):
            log.exception("preferences could not be saved")
            return cards.error_card(lang, t(lang, "prefs.storage_error"))

    async def _prefs_change(self, q: Query, lang: Lang, user: User) -> Reply:
        prefs = self.store.prefs
        if q.intent is Intent.FORGET:
            await prefs.forget(user.id)
            return cards.info_card(lang, t(lang, "prefs.title"), t(lang, "prefs.forgotten"))
        if q.intent is Intent.LANG:
            choice = _lang((q.lang_arg or "").lower())
            if choice is None:
                return cards.info_card(lang, t(lang, "prefs.title"), t(lang, "prefs.lang_usage"))
            if user.chat:  # in a group or server the setting is the chat's default
                await prefs.set_chat(user.chat, lang=choice)
                return cards.info_card(choice, t(choice, "prefs.title"), t(choice, "prefs.chat_lang_saved"))
            await prefs.set_user(user.id, lang=choice)
            return cards.info_card(choice, t(choice, "prefs.title"), t(choice, "prefs.lang_saved"))
        if q.intent is Intent.MYGPU and q.gpu and q.gpu.id and not q.gpu.ambiguous:
            gpu = self.catalog.gpu(q.gpu.id)
            assert gpu is not None
            fields: dict[str, Any] = {"gpu_id": gpu.id, "gpu_count": q.gpu_count}
            if q.ram_gb is not None:
                fields["ram_gb"] = q.ram_gb
            await prefs.set_user(user.id, **fields)
            label = f"{q.gpu_count}x {gpu.short_name}" if q.gpu_count > 1 else gpu.short_name
            return cards.info_card(lang, t(lang, "prefs.title"), t(lang, "prefs.gpu_saved", gpu=label))
        if q.intent is Intent.MYGPU and q.gpu and q.gpu.suggestions:
            return self._suggest(lang, t(lang, "ask.unknown_gpu", text=q.gpu.text), q.gpu, "gpu", q, "")
        switch = _mention_switch(q.leftovers)
        if q.intent is Intent.SETTINGS and switch is not None and user.chat:
            await prefs.set_chat(user.chat, answer_mentions=switch)
            return cards.info_card(
                lang, t(lang, "prefs.title"), t(lang, "prefs.mentions_on" if switch else "prefs.mentions_off")
            )
        saved = await prefs.user(user.id)
        gpu = self.catalog.gpu(saved.gpu_id) if saved.gpu_id else None
        rows = {
            "prefs.gpu": (f"{saved.gpu_count}x " if saved.gpu_count > 1 else "") + gpu.short_name if gpu else "–",
            "prefs.ram": f"{saved.ram_gb:g} GB" if saved.ram_gb else "–",
            "prefs.lang": saved.lang or "–",
        }
        return cards.settings_card(lang, {t(lang, k): v for k, v in rows.items()})

    async def answers_mentions(self, chat: str) -> bool:
        """Whether plain mentions in this group/server get answers (commands always do)."""
        if not chat or self.store is None:
            return True
        try:
            return (await self.store.prefs.chat(chat)).answer_mentions
        except (sqlite3.Error, OSError):
            return True

    def _catalog_repo(self, repo: str) -> bool:
        return any((m.hf_repo or "").lower() == repo.lower() for m in self.catalog.models)

    async def _hub_model(self, repo: str, quant: str | None, lang: Lang) -> tuple[Service, ModelSpec, str] | Reply:
        """Look a repo up on Hugging Face (through the cache) and answer with a catalog that knows it."""
        from catalog.hub import HubError

        assert self.hub is not None
        try:
            found = await self.hub.lookup(f"{repo}:{quant}" if quant and ":" not in repo else repo)
        except HubError as exc:
            return cards.error_card(lang, t(lang, exc.key, **{k: v for k, v in exc.params.items()}))
        except (sqlite3.Error, OSError):  # the cache is unusable: say so instead of failing the answer
            log.exception("hub cache failed")
            return cards.error_card(lang, t(lang, "hub.error", repo=repo))
        extended = self.catalog.model_copy(
            update={
                "models": (*self.catalog.models, found.spec),
                "sizes": (*self.catalog.sizes, *(sz for sz in found.sizes if self.catalog.quant(sz.quant_id))),
            }
        )
        key, params = found.card_source()
        params["fetched_at"] = params["fetched_at"].strftime("%Y-%m-%d %H:%M UTC")
        # the question was parsed already: the extended service shares the vocabulary and its index
        return Service(extended, vocab=self.vocab), found.spec, t(lang, key, **params)

    async def _log(self, q: Query | None, reply: Reply, user: User, latency_ms: float) -> None:
        """One structured log line per answer and a usage-log row: the parsed query, never the text."""
        model_id = q.model.id if q and q.model else None
        gpu_id = q.gpu.id if q and q.gpu else None
        understood = reply.kind not in ("suggest", "error", "slow_down")
        log.info(
            "answered",
            extra={
                "kind": reply.kind,
                "platform": user.id.split(":")[0] or "console",
                "latency_ms": round(latency_ms, 2),
                "understood": understood,
            },
        )
        if self.store is None or q is None:
            return
        from catalog.userprefs import LoggedQuery

        self._log_rows.append(
            LoggedQuery(
                platform=user.id.split(":")[0] or "console",
                intent=q.intent.value,
                model_id=model_id,
                gpu_id=gpu_id,
                quant=q.quant,
                context=q.context,
                understood=understood,
                latency_ms=latency_ms,
            )
        )
        if self._log_task is None or self._log_task.done():
            self._log_task = asyncio.get_running_loop().create_task(self._flush_soon())

    async def _flush_soon(self) -> None:
        await asyncio.sleep(LOG_FLUSH_S)
        await self.flush_log()

    async def flush_log(self) -> None:
        """Write the queued usage-log rows in one statement; the answer path never waits for it.

        Statistics must never cost an answer: a locked or full database drops the batch with a warning.
        """
        rows, self._log_rows = self._log_rows, []
        if not rows or self.store is None:
            return
        try:
            await self.store.query_log().record(*rows)
        except (sqlite3.Error, OSError, ValueError):
            log.warning("usage log: %d rows dropped", len(rows), exc_info=True)


def _mention_switch(words: tuple[str, ...]) -> bool | None:
    """ "/settings mentions off" (or "erwähnungen aus") → False; "mentions on"/"an" → True; else None.

    The parser drops short words like "an", so a mention switch without an "off" word means on.
    """
    if not {"mentions", "mention", "erwähnungen", "erwaehnungen"} & set(words):
        return None
    return not {"off", "aus", "no", "nein"} & set(words)


def _reason(exc: Exception) -> str:
    """One readable line for an estimate that cannot be made (pydantic errors name the field)."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    return str(exc)


def _lang(code: str | None) -> Lang | None:
    return code if code in ("de", "en") else None  # type: ignore[return-value]


def _speed(est: FitEstimate, lang: Lang) -> str:
    return "–" if est.verdict is Verdict.NO_FIT else tokens_per_s(est.speed.decode_tokens_per_s, lang)


__all__ = ["Service", "User", "vocabulary"]

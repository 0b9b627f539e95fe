"""Answers: a parsed question becomes a card, from one catalog.

Pure and synchronous: every method is a function of the question, the language and the user's saved
defaults, so results are memoised (LRU) and the service runs them on its worker thread.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from bot import answer_tables as tables
from bot import cards
from bot.card_parts import flags_of
from bot.reply import Reply
from bot.user import User
from catalog.lookup import vocabulary
from core.advice import HardwareAdvice, recommend_hardware
from core.analysis import MAX_OFFERS, Cost, advice_for, cost_of
from core.cost import DEFAULT_USERS, OfferQuote, cost_assumptions, cost_notes, quote_offers
from core.estimate import EstimateError, FitEstimate, Request, default_quant, estimate
from core.finetune import estimate_finetune, smallest_setups, training_fit
from core.fit import Verdict
from core.models import Catalog, Engine, GpuSpec, ModelSpec, QuantSize
from core.query import Intent, Match, Query, Vocabulary, parse
from core.regions import restricted
from locales import Lang, t

CACHE_ENTRIES = 2048  # parsed questions, whole answers and per-model scans kept for repeats (LRU)


class Answers:
    """Builds every card kind for one catalog (a Hugging Face model gets a copy that knows it)."""

    def __init__(self, catalog: Catalog, vocab: Vocabulary | None = None) -> None:
        self.catalog = catalog
        self.vocab = vocab or vocabulary(catalog)
        self._scans: OrderedDict[tuple[str, ...], Any] = OrderedDict()
        if vocab is None:
            parse("", self.vocab)  # builds the parser's name index now, not on the first question

    def with_model(self, catalog: Catalog) -> Answers:
        """Answers over an extended catalog that share this one's vocabulary (the question was parsed already)."""
        return Answers(catalog, self.vocab)

    def cached(self, key: tuple[str, ...], compute: Any) -> Any:
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
        return self.cached(
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

    def _hardware(self, model: ModelSpec, quant: Any, request: Request, own: GpuSpec | None = None) -> HardwareAdvice:
        """Hardware picks; region-restricted parts only when the asked device is one of them."""
        allow = own is not None and restricted(own)
        key = ("hardware", model.id, quant.id, request.model_dump_json(exclude={"gpu_count"}), str(allow))
        measured = self.catalog.size(model.id, quant.id)
        offers = self._offers(model, quant, request, limit=1)
        return self.cached(
            key,
            lambda: recommend_hardware(model, quant, request, self.catalog, measured, offers, allow_restricted=allow),
        )

    def peek(self, key: tuple[str, ...]) -> Any:
        """A memoised value without computing it (the event loop's fast path for repeats)."""
        return self._scans.get(key)

    def parse(self, text: str) -> Query:
        return self.cached(("parse", text), lambda: parse(text, self.vocab))  # type: ignore[no-any-return]

    def dispatch(self, q: Query, lang: Lang, user: User, text: str, model_override: ModelSpec | None = None) -> Reply:
        if q.intent in (Intent.HELP, Intent.START):
            return cards.help_card(lang)
        if q.intent is Intent.MODELS:
            return tables.models_for_gpu(self, q, lang, user, text)
        model = model_override or self.model(q, lang, text)
        if isinstance(model, Reply):
            return model
        try:
            if q.intent is Intent.GPUS:
                return tables.gpus_for_model(self, model, q, lang, text)
            if q.intent is Intent.CLOUD:
                return self._cloud(model, q, lang, user, text)
            if q.intent is Intent.COMPARE:
                return self._compare(model, q, lang, user, text)
            if q.intent is Intent.FINETUNE and not (q.gpu and q.gpu.id) and not user.gpu_id and not q.not_device:
                return self._finetune(model, None, 0, q, lang, text)  # no hardware: name the smallest setups
            gpu = self.gpu(q, lang, user, text, model)
            if isinstance(gpu, Reply):
                return gpu
            hw, count = gpu
            if q.intent is Intent.QUANT:
                return tables.quant_matrix(self, model, hw, count, q, lang, user, text)
            if q.intent is Intent.FINETUNE:
                return self._finetune(model, hw, count, q, lang, text)
            if q.intent is Intent.TCO:
                return self._tco(model, hw, count, q, lang, user)
            if q.intent is Intent.SPEED:
                return tables.speed_answer(self, model, hw, count, q, lang, user, text)
            return self._fit(model, hw, count, q, lang, user, text)
        except EstimateError as exc:  # e.g. a quant the engine cannot serve: the reason in the user's language
            return cards.estimate_error_card(lang, exc)

    # --- name resolution ----------------------------------------------------------------------

    def model(self, q: Query, lang: Lang, text: str) -> ModelSpec | Reply:
        match = q.model
        if match and match.id and not match.ambiguous:
            found = self.catalog.model(match.id)
            if found:
                return found
        if match and match.suggestions:
            return self.suggest(lang, t(lang, "ask.unknown_model", text=match.text), match, "model", q, text)
        return cards.ask_card(lang, t(lang, "ask.model_missing"), echo=text)

    def gpu(self, q: Query, lang: Lang, user: User, text: str, model: ModelSpec | None) -> tuple[GpuSpec, int] | Reply:
        if q.not_device:
            ghost = self.catalog.not_devices[int(q.not_device.split(":")[1])]
            return cards.ask_card(lang, t(lang, "ask.not_a_device", name=ghost.name, note=ghost.note), echo=text)
        match = q.gpu
        if match and match.id and not match.ambiguous:
            gpu = self.catalog.gpu(match.id)
            if gpu:
                return gpu, q.gpu_count
        if match and match.suggestions:
            return self.suggest(lang, t(lang, "ask.unknown_gpu", text=match.text), match, "gpu", q, text)
        if user.gpu_id and self.catalog.gpu(user.gpu_id):
            return self.catalog.gpu(user.gpu_id), user.gpu_count  # type: ignore[return-value]
        if model is None:
            return cards.ask_card(lang, t(lang, "ask.gpu_missing_models"), echo=text)
        return cards.ask_card(lang, t(lang, "ask.gpu_missing", model=model.id), echo=text)

    def suggest(self, lang: Lang, message: str, match: Match, kind: str, q: Query, text: str) -> Reply:
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

    def request(self, q: Query, user: User, count: int) -> Request:
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

    def estimate(self, model: ModelSpec, gpu: GpuSpec, request: Request, quant_id: str | None = None) -> FitEstimate:
        qid = quant_id or request.quant or default_quant(model, request.engine or Engine.LLAMA_CPP)
        quant = self.catalog.quant(qid)
        if quant is None:
            raise EstimateError(f"unknown quant {qid}")
        measured: QuantSize | None = self.catalog.size(model.id, quant.id)
        return estimate(model, gpu, quant, request, measured)

    def _fit(self, model: ModelSpec, gpu: GpuSpec, count: int, q: Query, lang: Lang, user: User, text: str) -> Reply:
        request = self.request(q, user, count)
        flags = flags_of(q, text)
        est = self.estimate(model, gpu, request)
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
            self._hardware(model, quant, request, gpu),
        )
        chart = tables.memory_chart(self, model, gpu, request, lang)
        return cards.fit_card(
            est, advice, cost, self.catalog, lang, chart=chart, echo=text, details=flags.details, monthly=flags.monthly
        )

    def _cloud(self, model: ModelSpec, q: Query, lang: Lang, user: User, text: str = "") -> Reply:
        request = self.request(q, user, 1)
        flags = flags_of(q, text)
        quant = self.catalog.quant(request.quant or default_quant(model, request.engine or Engine.LLAMA_CPP))
        if quant is None:
            raise EstimateError("unknown_quant", f"unknown quant {request.quant}", quant=str(request.quant))
        users = request.concurrent or DEFAULT_USERS
        offers = self._offers(model, quant, request)
        cost = Cost(
            offers=offers if flags.more else offers[:MAX_OFFERS],
            rent_vs_buy=None,
            assumptions=cost_assumptions(users),
            notes=cost_notes(users),
        )
        return cards.cloud_card(
            model.name, model.id, quant.id, cost, self.catalog, lang, monthly=flags.monthly, more=flags.more, echo=text
        )

    def _tco(self, model: ModelSpec, gpu: GpuSpec, count: int, q: Query, lang: Lang, user: User) -> Reply:
        request = self.request(q, user, count)
        est = self.estimate(model, gpu, request)
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
        cheapest: tuple[str, str] | None = None
        if est.verdict is Verdict.NO_FIT and (setup := self._hardware(model, quant, request, gpu).cheapest):
            prefix = f"{setup.count}x " if setup.count > 1 else ""
            cheapest = (prefix + setup.gpu_name, prefix + setup.gpu_id)
        return cards.tco_card(model.name, est, cost, self.catalog, lang, cheapest_setup=cheapest)

    def _finetune(
        self, model: ModelSpec, gpu: GpuSpec | None, count: int, q: Query, lang: Lang, text: str = ""
    ) -> Reply:
        methods = (q.finetune_method,) if q.finetune_method else ("qlora", "lora", "full")
        seq = q.context or 2048
        allow = gpu is not None and restricted(gpu)
        results = []
        for method in methods:
            est = estimate_finetune(model, method, seq_len=seq)
            mine = training_fit(est, gpu, count) if gpu is not None else None
            smallest = self.cached(
                ("ft-smallest", model.id, method, str(seq), str(allow)),
                lambda m=method: smallest_setups(model, m, self.catalog, 3, allow, seq_len=seq),
            )
            results.append((est, mine, smallest))
        label = (f"{count}x {gpu.short_name}" if count > 1 else gpu.short_name) if gpu is not None else None
        details = flags_of(q, text).details
        return cards.finetune_card(model.name, label, results, self.catalog, lang, details=details, echo=text)

    def _compare(self, model: ModelSpec, q: Query, lang: Lang, user: User, text: str) -> Reply:
        pairs: list[tuple[ModelSpec, GpuSpec, int]] = []
        gpu = self.gpu(q, lang, user, text, model)
        if isinstance(gpu, Reply):
            return gpu
        pairs.append((model, gpu[0], gpu[1]))
        second_model = self.catalog.model(q.model2.id) if q.model2 and q.model2.id else None
        second_gpu = self.catalog.gpu(q.gpu2.id) if q.gpu2 and q.gpu2.id else None
        if second_gpu:
            pairs.append((model, second_gpu, q.gpu2_count))
        elif second_model:
            pairs.append((second_model, gpu[0], gpu[1]))
        estimates = [self.estimate(m, g, self.request(q, user, n)) for m, g, n in pairs]
        return cards.compare_card(t(lang, "compare.title"), estimates, self.catalog, lang)

    def decode_speed(self, text: str) -> float | None:
        """Estimated single-stream tokens/s for a fit question (the "feel the speed" buttons)."""
        query = self.parse(text)
        model = self.model(query, "en", text)
        if isinstance(model, Reply):
            return None
        gpu = self.gpu(query, "en", User(), text, model)
        if isinstance(gpu, Reply):
            return None
        try:
            est = self.estimate(model, gpu[0], self.request(query, User(), gpu[1]))
        except EstimateError:
            return None
        return est.speed.decode_tokens_per_s if est.verdict is not Verdict.NO_FIT else None

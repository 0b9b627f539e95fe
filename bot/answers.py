"""Answers: a parsed question becomes a card, from one catalog.

Pure and synchronous: every method is a function of the question, the language and the user's saved
defaults, so results are memoised (LRU) and the service runs them on its worker thread.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import Any, Literal, TypeVar

from bot import answer_tables as tables
from bot import biggest, cards, commands, rigs, variants, wording
from bot.answer_multi import compare, subject_of, with_notes
from bot.card_parts import flags_of, setup_label
from bot.reply import Action, Note, Reply
from bot.resolve import Resolver, build_request
from bot.user import User
from catalog.lookup import vocabulary
from core.advice import HardwareAdvice, recommend_hardware
from core.analysis import Cost, advice_for, cost_of
from core.cost import DEFAULT_USERS, OfferQuote, cost_assumptions, cost_notes, quote_offers
from core.devices import GenericDevice, widened
from core.estimate import EstimateError, FitEstimate, Request, default_quant, estimate
from core.finetune import estimate_finetune, smallest_setups, training_fit
from core.fit import Verdict
from core.models import Catalog, Engine, GpuSpec, ModelSpec, QuantSize
from core.query import Intent, Match, Query, Vocabulary, parse
from core.regions import restricted
from locales import Lang

CACHE_ENTRIES = 2048
T = TypeVar("T")
Method = Literal["qlora", "lora", "full"]  # parsed questions, whole answers and per-model scans kept for repeats (LRU)


class Answers:
    """Builds every card kind for one catalog (a Hugging Face model gets a copy that knows it)."""

    def __init__(self, catalog: Catalog, vocab: Vocabulary | None = None) -> None:
        self.catalog = catalog
        self.vocab = vocab or vocabulary(catalog)
        self._scans: OrderedDict[tuple[str, ...], Any] = OrderedDict()
        self._notes: list[Note] = []  # what the current dispatch assumed (one worker thread: no sharing)
        self._actions: list[Action] = []  # buttons for the other readings of a name (bot.resolve)
        self._generic: GenericDevice | None = None  # the generic device of the current question, if any
        if vocab is None:
            parse("", self.vocab)  # builds the parser's name index now, not on the first question

    def with_model(self, catalog: Catalog) -> Answers:
        """Answers over an extended catalog that share this one's vocabulary (the question was parsed already)."""
        return Answers(catalog, self.vocab)

    def cached(self, key: tuple[str, ...], compute: Callable[[], T]) -> T:
        """LRU memo: parses, answers and catalog-wide scans (all pure functions of their key)."""
        if key in self._scans:
            self._scans.move_to_end(key)
            return self._scans[key]  # type: ignore[no-any-return]
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
        """The question without its /command (read on the chat side), parsed with the command's intent."""
        command = commands.read(text)
        return self.cached(("parse", text), lambda: parse(command.rest, self.vocab, command.intent))

    def dispatch(self, q: Query, lang: Lang, user: User, text: str, model_override: ModelSpec | None = None) -> Reply:
        """The card for a parsed question, with what was assumed on one visible line and in ``subjects``."""
        self.fresh()
        reply = self._route(q, lang, user, text, model_override)
        if self._actions and reply.kind not in ("suggest", "error"):
            reply = reply.model_copy(update={"actions": (*self._actions, *reply.actions)})
        if self._generic is not None and wording.has_no_gpu(self._generic.gpu):  # a Pi or a CPU has no GPU memory
            reply = wording.without_gpu_words(reply, lang)
        return with_notes(reply, self._notes, lang)

    def _route(self, q: Query, lang: Lang, user: User, text: str, model_override: ModelSpec | None) -> Reply:
        if q.intent is Intent.MODELS:
            device = self.gpu(q, lang, user, text, None)
            if isinstance(device, Reply):
                return device
            flags = flags_of(q, text)
            hw, count = device
            request = self.request(q, user, count)
            if q.biggest:  # "biggest model I can run": by size, only what runs at a usable speed
                reply = biggest.biggest_models(self, hw, count, request, lang, text)
            else:
                reply = tables.recommend_models(self, hw, count, request, lang, flags.model_filter, flags.more, text)
            subject = subject_of(None, hw, count, request, tuple(self._notes))
            return reply.model_copy(update={"subjects": (subject,)})
        model = model_override or self.model(q, lang, text)
        if isinstance(model, Reply):
            return model
        try:
            if q.intent is Intent.GPUS or (q.memory_only and q.gpu is None and q.device_kind is None):
                return self._subjects(tables.gpus_for_model(self, model, q, lang, text), model, None, 1, q, user)
            if q.intent is Intent.CLOUD:
                return self._subjects(self._cloud(model, q, lang, user, text), model, None, 1, q, user)
            if q.intent is Intent.COMPARE:
                return compare(self, model, q, lang, user, text)
            if q.intent is Intent.FINETUNE and not (q.gpu and q.gpu.id) and not user.gpu_id and not q.not_device:
                # no hardware named or saved: the card names the smallest setups instead of asking
                return self._subjects(self._finetune(model, None, 0, q, lang, text), model, None, 1, q, user)
            if variants.spans(q):  # "M3 Max" with 36-128 GB and none usual: every size in one card
                return variants.span_card(self, model, q, lang, user, text)
            gpu = rigs.device(self, q, lang, user, text, model) if q.rig else self.gpu(q, lang, user, text, model)
            if isinstance(gpu, Reply):
                return gpu
            hw, count = gpu
            if q.intent is Intent.QUANT:
                reply = tables.quant_matrix(self, model, hw, count, q, lang, user, text)
            elif q.intent is Intent.FINETUNE:
                reply = self._finetune(model, hw, count, q, lang, text)
            elif q.intent is Intent.TCO:
                reply = self._tco(model, hw, count, q, lang, user)
            elif q.intent is Intent.SPEED:
                reply = tables.speed_answer(self, model, hw, count, q, lang, user, text)
            else:
                reply = self._fit(model, hw, count, q, lang, user, text)
            if q.rig:  # "4090 + 3090": what each card holds, and the split in the command
                reply = rigs.placement(self, reply, model, hw, q, lang, user)
            return self._subjects(reply, model, hw, count, q, user)
        except EstimateError as exc:  # e.g. a quant the engine cannot serve: the reason in the user's language
            return cards.estimate_error_card(lang, exc)

    # --- name resolution (bot.resolve); what it assumes is collected for the card --------------

    def model(self, q: Query, lang: Lang, text: str, match: Match | None = None) -> ModelSpec | Reply:
        resolver = Resolver(self.catalog)
        found = resolver.model(q, lang, text, match)
        self._notes.extend(resolver.notes)
        return found

    def gpu(self, q: Query, lang: Lang, user: User, text: str, model: ModelSpec | None) -> tuple[GpuSpec, int] | Reply:
        resolver = Resolver(self.catalog)
        found = resolver.device(q, lang, user, text, need=model is not None)
        self._notes.extend(resolver.notes)
        self._actions.extend(a for a in resolver.actions if a not in self._actions)
        if resolver.generic is not None and not isinstance(found, Reply):
            self._generic = resolver.generic
        return found

    def _subjects(self, reply: Reply, model: ModelSpec, gpu: GpuSpec | None, count: int, q: Query, user: User) -> Reply:
        if reply.kind in ("suggest", "error"):
            return reply
        request = self.request(q, user, count)
        subject = subject_of(model, gpu, count, request, tuple(self._notes))
        return reply.model_copy(update={"subjects": (subject,)})

    # --- estimates ----------------------------------------------------------------------------

    def request(self, q: Query, user: User, count: int) -> Request:
        request, notes = build_request(q, user, count, self.catalog.quants)
        for note in notes:
            self._note(note)
        return request

    def estimate(self, model: ModelSpec, gpu: GpuSpec, request: Request, quant_id: str | None = None) -> FitEstimate:
        qid = quant_id or request.quant or default_quant(model, request.engine or Engine.LLAMA_CPP)
        quant = self.catalog.quant(qid)
        if quant is None:
            raise EstimateError("unknown_quant", f"unknown quant {qid}", quant=qid)
        measured: QuantSize | None = self.catalog.size(model.id, quant.id)
        est = estimate(model, gpu, quant, request, measured)
        if self._generic is not None and gpu.id == self._generic.gpu.id:
            est = widened(est, model, self._generic, quant, request, measured)
        return est

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
        chart = None if flags.details else tables.memory_chart(self, model, gpu, request, lang)
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
            offers=offers,  # the card shows the cheapest few and a More button
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
            cheapest = (setup_label(setup.gpu_name, setup.count), setup_label(setup.gpu_id, setup.count))
        return cards.tco_card(model.name, est, cost, self.catalog, lang, cheapest_setup=cheapest)

    def _finetune(
        self, model: ModelSpec, gpu: GpuSpec | None, count: int, q: Query, lang: Lang, text: str = ""
    ) -> Reply:
        methods: tuple[Method, ...] = (q.finetune_method,) if q.finetune_method else ("qlora", "lora", "full")
        seq = q.context or 2048
        allow = gpu is not None and restricted(gpu)
        results = []
        for method in methods:
            est = estimate_finetune(model, method, seq_len=seq)
            mine = training_fit(est, gpu, count) if gpu is not None else None
            key = ("ft-smallest", model.id, method, str(seq), str(allow))
            smallest = self.cached(key, partial(smallest_setups, model, method, self.catalog, 3, allow, seq_len=seq))
            results.append((est, mine, smallest))
        label = setup_label(gpu.short_name, count) if gpu is not None else None
        details = flags_of(q, text).details
        return cards.finetune_card(model.name, label, results, self.catalog, lang, details=details, echo=text)

    def fresh(self) -> None:
        """A new question: nothing assumed, no generic device yet."""
        self._notes, self._generic, self._actions = [], None, []

    def note(self, note: Note) -> None:
        """Adds an assumption to the current card's line (bot.rigs, bot.resolve)."""
        self._note(note)

    def _note(self, note: Note) -> None:
        if note not in self._notes:
            self._notes.append(note)


def feel_rate(answers: Answers, text: str) -> float | None:
    """Estimated single-stream tokens/s for a fit question (the "feel the speed" buttons)."""
    answers.fresh()
    query = answers.parse(text)
    model = answers.model(query, "en", text)
    if isinstance(model, Reply):
        return None
    gpu = answers.gpu(query, "en", User(), text, model)
    if isinstance(gpu, Reply):
        return None
    try:
        est = answers.estimate(model, gpu[0], answers.request(query, User(), gpu[1]))
    except EstimateError:
        return None
    return est.speed.decode_tokens_per_s if est.verdict is not Verdict.NO_FIT else None

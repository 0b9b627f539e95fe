"""Answers: a parsed question becomes a card, from one catalog.

Pure and synchronous: every answer is a function of the question, the language and the user's saved
defaults, so results are memoised (LRU) and the service runs them on its worker thread. What one
question assumed lives on its ``Ask``, never on the shared ``Answers``; a name that needs asking
back ends the answer with ``AskBack`` (the card that asks).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import Any, Literal, TypeVar

from bot.answers import biggest, rig_picks, rigs, variants
from bot.answers import lists as tables
from bot.answers.compare import compare, subject_of
from bot.answers.fit_extras import extend_fit
from bot.answers.resolve import Resolver, build_request
from bot.cards import notices as cards
from bot.cards import wording
from bot.cards.launch import checkpoints, with_quantized_repos
from bot.cards.measured import runs_for, with_measured
from bot.cards.parts import with_notes
from bot.question import Ask, AskBack
from bot.reply import Reply, setup_label
from bot.understand import MAX_QUESTION_CHARS, Question, understand
from bot.users.user import User
from catalog.lookup import vocabulary
from core.advice import HardwareAdvice, recommend_hardware
from core.analysis import Analysis, Cost, analyse, cost_of
from core.cost import OfferQuote, cost_notes, quote_offers
from core.devices import widened
from core.estimate import EstimateError, Request, Scenario, estimate_of, scenario
from core.figures import cost_figures, figures_of
from core.finetune import estimate_finetune, smallest_setups, training_fit
from core.fit import Verdict
from core.models import Catalog, GpuSpec, Lang, ModelSpec
from core.query.parse import Intent, Match, Query, Vocabulary, parse
from core.regions import restricted
from core.runs.calibrate import applied
from core.runs.pool import pool_notes

CACHE_ENTRIES = 2048
T = TypeVar("T")
Method = Literal["qlora", "lora", "full"]


def _asks_for_devices(q: Query) -> bool:
    """ "Which GPU for X?", or how much memory X needs to run with no device named ("how much vram to
    finetune X" asks about training, answered by the fine-tuning card)."""
    return q.intent is Intent.GPUS or (
        q.memory_only and q.intent is not Intent.FINETUNE and q.gpu is None and q.device_kind is None
    )


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

    def cached(self, key: tuple[str, ...], compute: Callable[[], T]) -> T:
        """LRU memo: parses, answers and catalog-wide scans (all pure functions of their key)."""
        if key in self._scans:
            self._scans.move_to_end(key)
            return self._scans[key]  # type: ignore[no-any-return]
        value = self._scans[key] = compute()
        if len(self._scans) > CACHE_ENTRIES:
            self._scans.popitem(last=False)
        return value

    def peek(self, key: tuple[str, ...]) -> Any:
        """A memoised value without computing it (the event loop's fast path for repeats)."""
        return self._scans.get(key)

    def understand(self, text: str, max_chars: int = MAX_QUESTION_CHARS) -> Question:  # memoised: bot.understand
        key = understood_key(text, max_chars)
        return self.cached(key, partial(understand, text, self.vocab, self.catalog, max_chars))

    # --- catalog-wide scans, memoised: they depend on the question, not on the user's device ---

    @staticmethod
    def _scan_key(kind: str, s: Scenario, *extra: str) -> tuple[str, ...]:
        asked = s.request.model_dump_json(exclude={"gpu_count", "backend"})
        return (kind, s.model.id, s.quant.id, asked, *extra)

    def offers(self, s: Scenario, limit: int | None = None) -> tuple[OfferQuote, ...]:
        """Fitting cloud offers, cheapest first; ``limit=1`` is all a fit card needs."""
        return self.cached(self._scan_key("offers", s, str(limit)), lambda: quote_offers(s, self.catalog, limit=limit))

    def hardware(self, s: Scenario) -> HardwareAdvice:
        """Hardware picks; region-restricted parts only when the asked device is one of them."""
        allow = s.gpu is not None and restricted(s.gpu)
        offers = self.offers(s, limit=1)
        return self.cached(
            self._scan_key("hardware", s, str(allow)),
            lambda: recommend_hardware(s, self.catalog, offers, allow_restricted=allow),
        )

    # --- one question ----------------------------------------------------------------------

    def dispatch(self, q: Query, lang: Lang, user: User, echo: str, model_override: ModelSpec | None = None) -> Reply:
        """The card for a parsed question, with what was assumed on one visible line and in ``subjects``."""
        ask = Ask(q, lang, user, echo)
        try:
            reply = self._route(ask, model_override)
        except AskBack as back:
            reply = back.reply
        except EstimateError as exc:  # e.g. a quant the engine cannot serve: the reason in the user's language
            reply = cards.estimate_error_card(lang, exc)
        if ask.actions and reply.kind not in ("suggest", "error"):  # "3060": the 8 GB card one tap away
            reply = reply.model_copy(update={"actions": (*ask.actions, *reply.actions)})
        if ask.generic is not None and wording.has_no_gpu(ask.generic.gpu):  # a Pi or a CPU has no GPU memory
            reply = wording.without_gpu_words(reply, lang)
        return with_notes(reply, ask.notes, lang)

    def _route(self, ask: Ask, model_override: ModelSpec | None) -> Reply:
        q = ask.query
        if q.intent is Intent.MODELS:
            hw, count = self.device(ask, None)
            request = self.request(ask, count)
            flags = ask.flags
            if q.biggest:  # "biggest model I can run": by size, only what runs at a usable speed
                reply = biggest.biggest_models(self, hw, count, request, ask.lang, ask.echo)
            else:
                reply = tables.recommend_models(
                    self, hw, count, request, ask.lang, flags.model_filter, flags.more, ask.echo, q.model_size
                )
            return self._about(reply, ask, None, hw, count)
        model = model_override or self.model(ask)
        if _asks_for_devices(q):
            reply = tables.gpus_for_model(self, model, ask)
            if not ask.flags.more:  # 2, 4, 8 cards of what rigs are built from, priced
                reply = rig_picks.with_rigs(self, reply, model, self.scenario(ask, model, None), ask.lang)
            return self._about(reply, ask, model)
        if q.intent is Intent.CLOUD:
            return self._cloud(model, ask)
        if q.intent is Intent.COMPARE:
            return compare(self, model, ask)
        if q.intent is Intent.FINETUNE and not (q.gpu and q.gpu.id) and not ask.user.gpu_id and not q.not_device:
            # no hardware named or saved: the card names the smallest setups instead of asking
            return self._about(self._finetune(model, None, 0, ask), ask, model)
        if variants.spans(q):  # "M3 Max" with 36-128 GB and none usual: every size in one card
            return variants.span_card(self, model, ask)
        if q.rig:  # "4090 + 3090": one machine; the card shows what each card holds
            hw, count = rigs.device(self, ask, model)
            return rigs.placement(self, self._on(ask, model, hw, count), model, hw, ask)
        hw, count = self.device(ask, model)
        return self._on(ask, model, hw, count)

    def _on(self, ask: Ask, model: ModelSpec, hw: GpuSpec, count: int) -> Reply:
        """The card of the question's kind for ``model`` on ``count`` x ``hw``."""
        q = ask.query
        if q.intent is Intent.QUANT:  # its figures: the quant it recommends
            s = self.scenario(ask, model, hw, count)
            card = tables.quant_matrix(self, s, ask)
            return (
                card
                if card.kind in ("suggest", "error")
                else self.about(card, ask, self.analyse(tables.recommended(self, s), ask))
            )
        if q.intent is Intent.FINETUNE:
            return self._about(self._finetune(model, hw, count, ask), ask, model, hw, count)
        if q.intent is Intent.TCO:
            return self._tco(self.scenario(ask, model, hw, count), ask)
        if q.intent is Intent.SPEED:
            return tables.speed_answer(self, self.scenario(ask, model, hw, count), ask)
        return self._fit(self.scenario(ask, model, hw, count), ask)

    def _about(
        self, reply: Reply, ask: Ask, model: ModelSpec | None, gpu: GpuSpec | None = None, count: int = 1
    ) -> Reply:
        """The card with the model × hardware it is about (a list card: no figures)."""
        if reply.kind in ("suggest", "error"):
            return reply
        request = self.request(ask, count)
        settled = scenario(model, gpu, request, self.catalog) if model is not None else None
        subject = subject_of(model, gpu, count, request, tuple(ask.notes), settled)
        return reply.model_copy(update={"subjects": (subject,)})

    def about(self, reply: Reply, ask: Ask, analysis: Analysis) -> Reply:
        """The card with its subject and the Analysis' figures, the numbers the card shows."""
        s = analysis.scenario
        subject = subject_of(s.model, s.gpu, s.count, s.request, tuple(ask.notes), s)
        subject = subject.model_copy(update={"figures": figures_of(analysis)})
        return reply.model_copy(update={"subjects": (subject,)})

    # --- name resolution (bot.answers.resolve); what it assumes is collected on the question --------

    def model(self, ask: Ask, match: Match | None = None) -> ModelSpec:
        resolver = Resolver(self.catalog)
        found = resolver.model(ask.query, ask.lang, ask.echo, match)
        ask.notes.extend(resolver.notes)
        ask.actions.extend(a for a in resolver.actions if a not in ask.actions)  # "an 8b model": the other 8Bs
        if isinstance(found, Reply):
            raise AskBack(found)
        return found

    def device(self, ask: Ask, model: ModelSpec | None, query: Query | None = None) -> tuple[GpuSpec, int]:
        resolver = Resolver(self.catalog)
        found = resolver.device(query or ask.query, ask.lang, ask.user, ask.echo, need=model is not None)
        ask.notes.extend(resolver.notes)
        ask.actions.extend(a for a in resolver.actions if a not in ask.actions)
        if isinstance(found, Reply):
            raise AskBack(found)
        if resolver.generic is not None:
            ask.generic = resolver.generic
        return found

    # --- the scenario and its analysis -------------------------------------------------------

    def request(self, ask: Ask, count: int) -> Request:
        request, notes = build_request(ask.query, ask.user, count, self.catalog.quants)
        for n in notes:
            ask.note(n)
        return request

    def scenario(self, ask: Ask, model: ModelSpec, gpu: GpuSpec | None, count: int = 1) -> Scenario:
        """The question resolved once: every card of it reads this scenario."""
        return scenario(model, gpu, self.request(ask, count), self.catalog)

    def analyse(
        self,
        s: Scenario,
        ask: Ask | None = None,
        full: bool = False,
        picks_for: tuple[Verdict, ...] = tuple(Verdict),
    ) -> Analysis:
        """``core.analysis.analyse`` with the memoised scans, and a generic device's wide speed band; the
        hardware picks (a scan of every device) only for a verdict in ``picks_for``."""
        est, scaled = applied(ask.user.calibrations if ask is not None else (), s, estimate_of(s))
        generic = ask.generic if ask is not None else None
        if ask is not None:  # the user's own runs on this device, what the chat's members measured (issue 38)
            for n in (scaled, *pool_notes(ask.user.pools, s)):
                if n is not None:
                    ask.note(n)
        if generic is not None and s.gpu is not None and s.gpu.id == generic.gpu.id:
            est = widened(est, s, generic)
        if not full:
            return analyse(s, self.catalog, full=False, estimate=est)
        picks = est.verdict in picks_for
        hardware = self.hardware(s) if picks else None
        quotes, known = self.offers(s, 1), checkpoints()
        return analyse(s, self.catalog, quotes=quotes, hardware=hardware, estimate=est, picks=picks, checkpoints=known)

    def _fit(self, s: Scenario, ask: Ask) -> Reply:
        flags = ask.flags
        # the first page shows hardware picks only as the tip of a setup that offloads (``cards_fit.one_tip``)
        picks_for = tuple(Verdict) if flags.details else (Verdict.OFFLOAD,)
        analysis = with_quantized_repos(
            self.analyse(s, ask, full=True, picks_for=picks_for)
        )  # vLLM: AWQ/GPTQ/FP8 repos
        chart = None if flags.details else tables.memory_chart(self, s, ask.lang)
        reply = cards.fit_card(
            analysis, self.catalog, ask.lang, chart=chart, echo=ask.echo, details=flags.details, monthly=flags.monthly
        )
        reply = extend_fit(reply, analysis, self.catalog, ask.lang, ask.query)  # issue 26
        return with_measured(self.about(reply, ask, analysis), runs_for(analysis, self.catalog), ask.lang)

    def _cloud(self, model: ModelSpec, ask: Ask) -> Reply:
        s = self.scenario(ask, model, None)
        flags = ask.flags
        cost = Cost(offers=self.offers(s), rent_vs_buy=None, users=s.cost_users, notes=cost_notes(s.cost_users))
        reply = cards.cloud_card(
            model.name, model.id, s.quant.id, cost, self.catalog, ask.lang, monthly=flags.monthly, more=flags.more,
            echo=ask.echo, provider=ask.query.provider,
        )  # fmt: skip
        subject = subject_of(model, None, 1, s.request, tuple(ask.notes), s)
        return reply.model_copy(update={"subjects": (subject.model_copy(update={"figures": cost_figures(cost)}),)})

    def _tco(self, s: Scenario, ask: Ask) -> Reply:
        analysis = self.analyse(s, ask)
        est = analysis.estimate
        analysis = analysis.model_copy(update={"cost": cost_of(s, self.catalog, est, self.offers(s))})
        cheapest: tuple[str, str] | None = None
        if est.verdict is Verdict.NO_FIT and (setup := self.hardware(s).cheapest):
            cheapest = (setup_label(setup.gpu_name, setup.count), setup_label(setup.gpu_id, setup.count))
        reply = cards.tco_card(s.model.name, analysis, self.catalog, ask.lang, cheapest_setup=cheapest)
        return self.about(reply, ask, analysis)

    def _finetune(self, model: ModelSpec, gpu: GpuSpec | None, count: int, ask: Ask) -> Reply:
        q = ask.query
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
        return cards.finetune_card(
            model.name, label, results, self.catalog, ask.lang, details=ask.flags.details, echo=ask.echo
        )


def understood_key(text: str, max_chars: int) -> tuple[str, ...]:
    """The memo key of a message's reading (``Answers.understand``; the service peeks at it on the loop)."""
    return ("understand", text, str(max_chars))


def feel_rate(answers: Answers, question: Question) -> float | None:
    """Tokens/s one user gets for a fit question (the "feel the speed" buttons): the fit card's figure, at
    the asked context and, with several users, each user's share (``core.speed.serving``)."""
    ask = Ask(question.query, "en", User(), question.text)
    try:
        model = answers.model(ask)
        gpu, count = answers.device(ask, model)
        est = answers.analyse(answers.scenario(ask, model, gpu, count), ask).estimate
    except (AskBack, EstimateError):
        return None
    return est.serving.per_user_tokens_per_s if est.verdict is not Verdict.NO_FIT else None

"""The list and chart answers: one model across devices or quants, one device across models, /speed.

Functions of an ``Answers`` (its catalog, estimate and memo); each scans a whole catalog column.
``recommend_models`` is the entry point for "best model for 24 GB" / "bestes Modell für meine 3090":
it takes a device (a catalog GPU or a generic "N GB" one), a count, a ``Request`` and a filter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot import cards
from bot.answer_quality import with_quality
from bot.card_parts import LIST_TOP, VERDICT_EMOJI, flags_of, setup_label
from bot.reply import ChartSpec, Reply
from bot.user import User
from core.advice import choose_quant
from core.estimate import DEFAULT_CONTEXT, FitEstimate, Request, default_quant, resolve
from core.fit import Verdict, breakdown
from core.models import Backend, Engine, GpuSpec, ModelSpec
from core.query import Query
from core.recommend import FILTERS, rank_models
from core.regions import restricted
from locales import Lang, context_label, gib, t, tokens_per_s

if TYPE_CHECKING:
    from bot.answers import Answers

CHART_CONTEXTS = (4096, 8192, 16384, 32768, 65536, 131072)
CHART_QUANTS = ("Q8_0", "Q6_K", "Q4_K_M", "IQ4_XS", "Q3_K_M", "UD-Q2_K_XL")
SPEED_CHART_GPUS = 12
SPEED_CONTEXTS = (4096, 8192, 32768, 131072)
SPEED_USERS = (1, 4, 16)
# The same model on the GPUs local-LLM users own most: the 24 GB cards (3090, 4090), the current
# flagship (5090), the 12 GB entry card (3060) and the 128 GB Mac laptop (M4 Max).
COMMON_GPUS = ("rtx-3060-12gb", "rtx-3090", "rtx-4090", "rtx-5090", "macbook-pro-m4-max-128")


def _gpu_label(gpu: GpuSpec, count: int) -> str:
    return setup_label(gpu.short_name, count)


def quant_matrix(
    answers: Answers, model: ModelSpec, gpu: GpuSpec, count: int, q: Query, lang: Lang, user: User, text: str = ""
) -> Reply:
    """Recommended quant in one line, then the ladder (or every quant with "More")."""
    request = answers.request(q, user, count)
    engine = request.engine or Engine.LLAMA_CPP
    more = flags_of(q, text).more
    quants = sorted(answers.catalog.quants, key=lambda x: -x.bits)
    ladder_ids = (
        "MXFP4",
        "BF16",
        "Q8_0",
        "Q6_K",
        "Q5_K_M",
        "Q4_K_M",
        "IQ4_XS",
        "Q3_K_M",
        "IQ3_XXS",
        "UD-Q2_K_XL",
        "IQ2_M",
    )
    rows = []
    for quant in quants:
        if engine not in quant.engines or (quant.id == "MXFP4" and model.native_dtype != "mxfp4"):
            continue
        if not more and quant.id not in ladder_ids and quant.id != request.quant:
            continue
        est = answers.estimate(model, gpu, request.model_copy(update={"quant": quant.id}))
        speed = est.speed.decode_tokens_per_s if est.verdict is not Verdict.NO_FIT else None
        rows.append((quant.id, est.gpu_bytes + est.ram_bytes, speed, est.verdict))
    choice = answers.cached(
        ("choose", model.id, gpu.id, request.model_dump_json()),
        lambda: choose_quant(model, gpu, request, answers.catalog),
    )
    if choice is None:
        recommended = t(lang, "quant.none")
    else:
        kv = t(lang, "tip.with_kv", kv=choice.kv_cache.value) if choice.kv_cache else ""
        recommended = t(
            lang,
            f"tip.quant_{choice.reason}",
            quant=choice.quant,
            kv=kv,
            verdict=VERDICT_EMOJI[choice.verdict],
        )
    title = t(
        lang,
        "quant.title",
        model=model.name,
        gpu=_gpu_label(gpu, count),
        context=context_label(request.context or DEFAULT_CONTEXT),
    )
    more_query = "" if more else f"/quant {model.id} {setup_label(gpu.id, count)} more"
    card = cards.quant_card(title, rows, recommended, answers.catalog, lang, more_query=more_query)
    return with_quality(card, model, rows, lang, more)  # published KLD/perplexity per quant (issue 26)


def gpus_for_model(answers: Answers, model: ModelSpec, q: Query, lang: Lang, text: str = "") -> Reply:
    """ "Any 16 GB GPU works; fastest: …", then the smallest devices that hold it (top 10), "More" for all."""
    request = answers.request(q, User(), 1)
    more = flags_of(q, text).more
    asked = {q.gpu.id} if q.gpu and q.gpu.id else set()
    found: list[tuple[GpuSpec, FitEstimate]] = []
    for gpu in answers.catalog.gpus:
        if not more and (gpu.backend is Backend.OTHER or (restricted(gpu) and gpu.id not in asked)):
            continue
        found.append((gpu, answers.estimate(model, gpu, request)))
    fits = [(g, e) for g, e in found if e.verdict in (Verdict.FITS, Verdict.TIGHT)]
    runs = [(g, e) for g, e in found if e.verdict is Verdict.OFFLOAD]
    ranked = sorted(fits, key=lambda ge: (ge[0].memory_bytes, -ge[1].speed.decode_tokens_per_s))
    if more:
        ranked += sorted(runs, key=lambda ge: -ge[1].speed.decode_tokens_per_s)
        ranked += [(g, e) for g, e in found if e.verdict is Verdict.NO_FIT]
    shown = ranked if more else ranked[:LIST_TOP]
    rows = [
        (
            g.short_name,
            g.memory_bytes,
            e.gpu_bytes + e.ram_bytes,
            e.speed.decode_tokens_per_s if e.verdict is not Verdict.NO_FIT else None,
            e.verdict,
        )
        for g, e in shown
    ]
    if fits:
        need = min(fits, key=lambda ge: ge[0].memory_bytes)
        fastest = max(fits, key=lambda ge: ge[1].speed.decode_tokens_per_s)
        summary = t(
            lang,
            "gpus.summary",
            memory=gib(need[0].memory_bytes, lang, 0),
            smallest=need[0].short_name,
            fastest=fastest[0].short_name,
            rate=tokens_per_s(fastest[1].speed.decode_tokens_per_s, lang),
            count=len(fits),
        )
    elif runs:
        summary = t(lang, "gpus.summary_offload", count=len(runs))
    else:
        summary = t(lang, "gpus.summary_none")
    quant = request.quant or default_quant(model, request.engine or Engine.LLAMA_CPP)
    title = t(
        lang, "gpus.title", model=model.name, quant=quant, context=context_label(request.context or DEFAULT_CONTEXT)
    )
    more_query = "" if more or len(found) <= LIST_TOP else f"/gpus {model.id} more"
    return cards.gpus_card(title, summary, rows, answers.catalog, lang, more_query=more_query)


def recommend_models(
    answers: Answers,
    gpu: GpuSpec,
    count: int,
    request: Request,
    lang: Lang,
    model_filter: str | None = None,
    more: bool = False,
    echo: str = "",
) -> Reply:
    """Models ranked for ``count`` x ``gpu`` (``core.recommend.rank_models``); filter: coding, reasoning,
    vision or small (anything else is ignored). Works with a generic "N GB" GpuSpec as well."""
    chosen = model_filter if model_filter in FILTERS else None
    req = request.model_copy(update={"gpu_count": count})
    picks = answers.cached(
        ("rank", gpu.model_dump_json(), req.model_dump_json(), str(chosen)),
        lambda: rank_models(answers.catalog, gpu, req, chosen),
    )
    shown = picks if more else picks[:LIST_TOP]
    title = t(
        lang,
        "models.title",
        gpu=_gpu_label(gpu, count),
        context=context_label(request.context or DEFAULT_CONTEXT),
    )
    target = setup_label(gpu.id, count)
    base = f"/models {target}" + (f" {chosen}" if chosen else "")
    more_query = "" if more or len(picks) <= LIST_TOP else f"{base} more"
    return cards.models_card(
        title, shown, answers.catalog, lang, more_query=more_query, model_filter=chosen, echo=echo, base_query=base
    )


def speed_answer(
    answers: Answers, model: ModelSpec, gpu: GpuSpec, count: int, q: Query, lang: Lang, user: User, text: str
) -> Reply:
    """/speed: decode and prefill across contexts and users, and the same model on common GPUs."""
    request = answers.request(q, user, count)
    est = answers.estimate(model, gpu, request)
    contexts = [
        answers.estimate(model, gpu, request.model_copy(update={"context": c}))
        for c in SPEED_CONTEXTS
        if c <= model.max_context
    ]
    users = [answers.estimate(model, gpu, request.model_copy(update={"concurrent": n})) for n in SPEED_USERS]
    others = []
    for gid in COMMON_GPUS:
        other = answers.catalog.gpu(gid)
        if other is not None and other.id != gpu.id:
            others.append(
                (other.short_name, answers.estimate(model, other, request.model_copy(update={"gpu_count": 1})))
            )
    chart = speed_chart(answers, model, request, lang)
    return cards.speed_card(est, contexts, users, others[:5], answers.catalog, lang, chart=chart, echo=text)


def memory_chart(answers: Answers, model: ModelSpec, gpu: GpuSpec, request: Request, lang: Lang) -> ChartSpec:
    curves = []
    engine = request.engine or Engine.LLAMA_CPP
    usable = 0
    for qid in CHART_QUANTS if engine is Engine.LLAMA_CPP else ("BF16", "FP8", "AWQ"):
        quant = answers.catalog.quant(qid)
        if quant is None:
            continue
        hardware, workload, _, _, _ = resolve(model, gpu, request.model_copy(update={"quant": qid}))
        points = []
        for ctx in CHART_CONTEXTS:
            mem, _ = breakdown(model, quant, hardware, workload, answers.catalog.size(model.id, qid), ctx)
            points.append((ctx, mem.total_bytes))
            usable = mem.usable_bytes
        curves.append((qid, points))
    return cards.memory_chart(model.name, usable, curves, lang)


def speed_chart(answers: Answers, model: ModelSpec, request: Request, lang: Lang) -> ChartSpec:
    bars = []
    for gpu in answers.catalog.gpus:
        est = answers.estimate(model, gpu, request.model_copy(update={"gpu_count": 1}))
        if est.verdict in (Verdict.FITS, Verdict.TIGHT):
            bars.append((gpu.short_name, round(est.speed.decode_tokens_per_s, 1)))
    bars.sort(key=lambda b: -b[1])
    return ChartSpec(
        kind="speed_per_gpu", title=model.name, x_label="tok/s", y_label="", bars=tuple(bars[:SPEED_CHART_GPUS])
    )

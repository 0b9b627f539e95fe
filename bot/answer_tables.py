"""The table and chart cards: one model across devices or quants, or one device across models.

Functions of an ``Answers`` (its catalog, estimate and memo); each scans a whole catalog column.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot import cards
from bot.reply import ChartSpec, Reply
from bot.user import User
from core.estimate import DEFAULT_CONTEXT, FitEstimate, Request, default_quant, resolve
from core.fit import Verdict, breakdown
from core.models import Engine, GpuSpec, ModelSpec
from core.query import Query
from locales import Lang, context_label, gib, integer, t, tokens_per_s

if TYPE_CHECKING:
    from bot.answers import Answers

TABLE_CONTEXTS = (8192, 32768)
CHART_CONTEXTS = (4096, 8192, 16384, 32768, 65536, 131072)
CHART_QUANTS = ("Q8_0", "Q6_K", "Q4_K_M", "IQ4_XS", "Q3_K_M", "UD-Q2_K_XL")
SPEED_CHART_GPUS = 12


def quant_matrix(
    answers: Answers, model: ModelSpec, gpu: GpuSpec, count: int, q: Query, lang: Lang, user: User
) -> Reply:
    request = answers.request(q, user, count)
    engine = request.engine or Engine.LLAMA_CPP
    rows = []
    for quant in sorted(answers.catalog.quants, key=lambda x: -x.bits):
        if engine not in quant.engines or (quant.id == "MXFP4" and model.native_dtype != "mxfp4"):
            continue
        est = answers.estimate(model, gpu, request.model_copy(update={"quant": quant.id}))
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
    return cards.table_card("quant", title, t(lang, "quant.headers"), rows, answers.catalog, lang)


def gpus_for_model(answers: Answers, model: ModelSpec, q: Query, lang: Lang) -> Reply:
    rows = []
    request = answers.request(q, User(), 1)
    for gpu in answers.catalog.gpus:
        ests = [answers.estimate(model, gpu, request.model_copy(update={"context": c})) for c in TABLE_CONTEXTS]
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
    return cards.table_card("gpus", title, headers, rows, answers.catalog, lang)


def models_for_gpu(answers: Answers, q: Query, lang: Lang, user: User, text: str) -> Reply:
    gpu = answers.gpu(q, lang, user, text, None)
    if isinstance(gpu, Reply):
        return gpu
    hw, count = gpu
    request = answers.request(q, user, count)
    rows = []
    for model in answers.catalog.models:
        est = answers.estimate(model, hw, request)
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
        answers.catalog,
        lang,
        summary="" if rows else t(lang, "models.none"),
    )


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


def _speed(est: FitEstimate, lang: Lang) -> str:
    return "–" if est.verdict is Verdict.NO_FIT else tokens_per_s(est.speed.decode_tokens_per_s, lang)

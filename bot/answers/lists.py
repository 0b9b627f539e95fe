"""The list and chart answers: one model across devices or quants, one device across models, /speed.

Functions of an ``Answers`` (its catalog and memo) and the question's ``Scenario``; each scans a whole
catalog column, memory first (``advice.quick_fit``): speed is estimated only for setups that run.
``recommend_models`` is the entry point for "best model for 24 GB" / "bestes Modell für meine 3090":
it takes a device (a catalog GPU or a generic "N GB" one), a count, a ``Request`` and a filter.
"""

from __future__ import annotations

from dataclasses import replace

from bot.cards import notices as cards
from bot.cards.launch import checkpoints
from bot.cards.lists import gpus_summary, gpus_title, models_title, quant_recommendation, quant_title
from bot.cards.parts import LIST_TOP
from bot.cards.quality import with_quality
from bot.question import Answering, Ask
from bot.reply import ChartSpec, Reply, setup_label
from bot.users.user import User
from core.advice import (
    FULL_FIT,
    RUNS,
    QuickFit,
    choose_quant,
    chosen_scenario,
    fits_on,
    full_fit_speeds,
    quick_fit,
    with_quant,
)
from core.estimate import DEFAULT_CONTEXT, FitEstimate, Request, Scenario, estimate_of, hardware_on, on_device, varied
from core.fit import Verdict, memory_table
from core.launch.vllm_hardware import engine_runs
from core.model_sizes import of_size
from core.models import Backend, Engine, GpuSpec, Lang, ModelSpec
from core.quants.choice import QuantChoice
from core.quants.ladder import chart_ids, table_ids
from core.query.names import typed
from core.recommend import FILTERS, rank_models
from core.regions import restricted
from core.runs.calibrate import applied

SPEED_CHART_GPUS = 12
CHART_CONTEXTS = (4096, 8192, 16384, 32768, 65536, 131072)
VLLM_CHART_QUANTS = ("BF16", "FP8", "AWQ")
SPEED_CONTEXTS = (4096, 8192, 32768, 131072)
SPEED_USERS = (1, 4, 16)
# The same model on the GPUs local-LLM users own most: the 24 GB cards (3090, 4090), the current
# flagship (5090), the 12 GB entry card (3060) and the 128 GB Mac laptop (M4 Max).
COMMON_GPUS = ("rtx-3060-12gb", "rtx-3090", "rtx-4090", "rtx-5090", "macbook-pro-m4-max-128")


def _gpu_label(gpu: GpuSpec, count: int) -> str:
    return setup_label(gpu.short_name, count)


def quant_matrix(answers: Answering, s: Scenario, ask: Ask) -> Reply:
    """Recommended quant in one line, then the ladder (or every quant with "More")."""
    model, lang = s.model, ask.lang
    more = ask.flags.more
    shown = set(table_ids(model))
    rows = []
    for quant in sorted(answers.catalog.quants, key=lambda x: -x.bits):
        if s.engine not in quant.engines or (quant.id == "MXFP4" and model.native_dtype != "mxfp4"):
            continue
        if not more and quant.id not in shown and quant.id != s.request.quant:
            continue
        row = quick_fit(with_quant(s, quant, answers.catalog))
        rows.append((quant.id, row.need_bytes, row.decode_tokens_per_s, row.verdict))
    recommended = quant_recommendation(_choice(answers, s), lang)
    title = quant_title(model.name, _gpu_label(s.device, s.count), s.context, lang)
    more_query = "" if more else f"/quant {model.id} {setup_label(s.device.id, s.count)} more"
    card = cards.quant_card(title, rows, recommended, answers.catalog, lang, more_query=more_query)
    return with_quality(card, model, rows, lang, more)  # published KLD/perplexity per quant (issue 26)


def _choice(answers: Answering, s: Scenario) -> QuantChoice | None:
    return answers.cached(
        ("choose", s.model.id, s.device.id, s.request.model_dump_json()),
        lambda: choose_quant(s, answers.catalog, checkpoints()),
    )


def recommended(answers: Answering, s: Scenario) -> Scenario:
    """The scenario with the quant the /quant card recommends (the asked one where it recommends none)."""
    choice = _choice(answers, s)
    return chosen_scenario(s, answers.catalog, choice) if choice is not None else s


def device_rows(answers: Answering, s: Scenario, more: bool, asked: frozenset[str]) -> list[tuple[GpuSpec, QuickFit]]:
    """The model on every catalog device (memoised per catalog and question): memory first, speed for
    the setups that run."""

    def scan() -> list[tuple[GpuSpec, QuickFit]]:
        gpus = [
            gpu
            for gpu in answers.catalog.gpus
            if (more or not (gpu.backend is Backend.OTHER or (restricted(gpu) and gpu.id not in asked)))
            and engine_runs(s.engine, s.quant.id, gpu)
        ]
        return list(zip(gpus, fits_on(s, gpus, RUNS if more else FULL_FIT), strict=True))

    key = ("gpus", s.model.id, s.quant.id, s.request.model_dump_json(), str(more), ",".join(sorted(asked)))
    return answers.cached(key, scan)


def gpus_for_model(answers: Answering, model: ModelSpec, ask: Ask) -> Reply:
    """ "Any 16 GB GPU works; fastest: …", then the smallest devices that hold it (top 10), "More" for all."""
    q, lang = ask.query, ask.lang
    s = answers.scenario(replace(ask, user=User()), model, None)  # about the model, not the saved device
    more = ask.flags.more
    asked = frozenset({q.gpu.id} if q.gpu and q.gpu.id else ())
    found = device_rows(answers, s, more, asked)
    fits = [(g, e) for g, e in found if e.verdict in (Verdict.FITS, Verdict.TIGHT)]
    runs = [(g, e) for g, e in found if e.verdict is Verdict.OFFLOAD]

    def speed(pair: tuple[GpuSpec, QuickFit]) -> float:
        return pair[1].decode_tokens_per_s or 0.0

    ranked = sorted(fits, key=lambda ge: (ge[0].memory_bytes, -speed(ge)))
    if more:
        ranked += sorted(runs, key=lambda ge: -speed(ge))
        ranked += [(g, e) for g, e in found if e.verdict is Verdict.NO_FIT]
    shown = ranked if more else ranked[:LIST_TOP]
    rows = [(g.short_name, g.memory_bytes, e.need_bytes, e.decode_tokens_per_s, e.verdict) for g, e in shown]
    smallest = min(fits, key=lambda ge: ge[0].memory_bytes)[0] if fits else None
    fastest = max(fits, key=speed) if fits else None
    top = (fastest[0].short_name, speed(fastest)) if fastest else None
    summary = gpus_summary(len(fits), len(runs), smallest, top, lang)
    title = gpus_title(model.name, s.quant.id, s.context, lang)
    more_query = "" if more or len(found) <= LIST_TOP else f"/gpus {model.id} more"
    needs = estimate_of(on_device(s, smallest, 1)).memory if smallest is not None else None
    return cards.gpus_card(title, summary, rows, answers.catalog, lang, more_query=more_query, needs=needs)


def recommend_models(
    answers: Answering,
    gpu: GpuSpec,
    count: int,
    request: Request,
    lang: Lang,
    model_filter: str | None = None,
    more: bool = False,
    echo: str = "",
    size: str | None = None,
) -> Reply:
    """Models ranked for ``count`` x ``gpu`` (``core.recommend.rank_models``); filter: coding, reasoning,
    vision or small (anything else is ignored); ``size`` ("8b", "best 8b model for my 4090"): only the
    models of that size (``core.model_sizes``). Works with a generic "N GB" GpuSpec as well."""
    chosen = model_filter if model_filter in FILTERS else None
    req = request.model_copy(update={"gpu_count": count})
    picks = answers.cached(
        ("rank", gpu.model_dump_json(), req.model_dump_json(), str(chosen)),
        lambda: rank_models(answers.catalog, gpu, req, chosen, checkpoints=checkpoints()),
    )
    said = typed(size) if size else None
    if said is not None and said.size_b:
        sized = {m.id for m in of_size(answers.catalog, said.size_b, said.active_b)}
        picks = tuple(p for p in picks if p.model_id in sized)
    shown = picks if more else picks[:LIST_TOP]
    sized_b = said.size_b if said is not None and said.size_b else None
    title = models_title(_gpu_label(gpu, count), req.context or DEFAULT_CONTEXT, sized_b, lang)
    target = setup_label(gpu.id, count)
    sized_words = (
        f" {said.size_b:g}b" + (f"-a{said.active_b:g}b" if said.active_b else "") if said and said.size_b else ""
    )
    base = f"/models {target}" + (f" {chosen}" if chosen else "") + sized_words
    more_query = "" if more or len(picks) <= LIST_TOP else f"{base} more"
    return cards.models_card(
        title, shown, answers.catalog, lang, more_query=more_query, model_filter=chosen, echo=echo, base_query=base
    )


def speed_answer(answers: Answering, s: Scenario, ask: Ask) -> Reply:
    """/speed: decode, prefill and TTFT across contexts (each with a prompt that fills it), per-user and
    total speed across users (the asked number among them), and the same model on common GPUs."""
    main = answers.analyse(s, ask)
    mine = ask.user.calibrations  # the asking user's runs scale every row of their device, as ``analyse`` does

    def estimated(varied_s: Scenario) -> FitEstimate:
        return applied(mine, varied_s, estimate_of(varied_s))[0]

    contexts = [
        estimated(varied(s, context=c, prompt_tokens=c, concurrent=None))
        for c in SPEED_CONTEXTS
        if c <= s.model.max_context
    ]
    users = []
    for n in sorted({*SPEED_USERS, s.users}):
        users.append(main.estimate if n == s.users else estimated(varied(s, concurrent=n)))
    others = []
    for gid in COMMON_GPUS:
        other = answers.catalog.gpu(gid)
        if other is not None and other.id != s.device.id:
            others.append((other.short_name, quick_fit(s, hardware=hardware_on(s, other))))
    chart = speed_chart(answers, s, ask.lang)
    reply = cards.speed_card(main, contexts, users, others[:5], answers.catalog, ask.lang, chart=chart, echo=ask.echo)
    return answers.about(reply, ask, main)


def memory_chart(answers: Answering, s: Scenario, lang: Lang) -> ChartSpec:
    """Memory against context for the chart's quants (those the engine serves) on the asked setup."""
    catalog = answers.catalog
    ids = chart_ids(s.model) if s.engine is Engine.LLAMA_CPP else VLLM_CHART_QUANTS
    served = [(qid, q) for qid in ids if (q := catalog.quant(qid)) is not None and s.engine in q.engines]
    quants = [(q, catalog.size(s.model.id, q.id)) for _, q in served]
    usable, table = memory_table(s.model, quants, s.hardware, s.workload, CHART_CONTEXTS)
    curves = [
        (qid, list(zip(CHART_CONTEXTS, totals, strict=True))) for (qid, _), totals in zip(served, table, strict=True)
    ]
    return cards.memory_chart(s.model.name, usable if served else 0, curves, lang)


def speed_chart(answers: Answering, s: Scenario, lang: Lang) -> ChartSpec:
    """The model's decode speed on the fastest catalog devices that hold it (memoised per question)."""

    def bars() -> tuple[tuple[str, float], ...]:
        gpus = [gpu for gpu in answers.catalog.gpus if engine_runs(s.engine, s.quant.id, gpu)]
        found = [
            (gpu.short_name, round(speed, 1))
            for gpu, speed in zip(gpus, full_fit_speeds(s, gpus), strict=True)
            if speed is not None
        ]
        found.sort(key=lambda b: -b[1])
        return tuple(found[:SPEED_CHART_GPUS])

    key = ("speed-chart", s.model.id, s.quant.id, s.request.model_dump_json(exclude={"gpu_count", "backend"}))
    return ChartSpec(
        kind="speed_per_gpu", title=s.model.name, x_label="tok/s", y_label="", bars=answers.cached(key, bars)
    )

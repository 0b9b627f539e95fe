"""Comparisons of 2–4 devices or models, and what every card says about its subjects.

``compare`` answers "4090 or 5090 for X?", "X on A vs B vs C" and "X vs Y on a 4090": each name is
resolved on its own (an unknown one is asked about, never dropped). ``subject_of`` fills
``Reply.subjects``.
"""

from __future__ import annotations

from bot.answers.resolve import replace_name
from bot.cards import notices as cards
from bot.question import Answering, Ask
from bot.reply import Action, Reply, Subject
from catalog.lookup import sized_name
from core.estimate import DEFAULT_CONTEXT, DEFAULT_ENGINE, Request, Scenario, default_quant
from core.figures import figures_of
from core.fit import Verdict
from core.models import GIB, GpuSpec, ModelSpec
from core.notes import Note
from core.query.parse import Match

MAX_COMPARED = 4


def compare(answers: Answering, model: ModelSpec, ask: Ask) -> Reply:
    """One row per device (same model) or per model (same device), up to four."""
    q = ask.query
    devices: list[tuple[Match, int]] = [
        (m, n)
        for m, n in ((q.gpu, q.gpu_count), (q.gpu2, q.gpu2_count), *zip(q.more_gpus, q.more_gpu_counts, strict=False))
        if m is not None
    ]
    models: list[ModelSpec] = [model]
    models += [answers.model(ask, match) for match in (q.model2, *q.more_models) if match is not None]
    pairs: list[tuple[ModelSpec, GpuSpec, int]] = []
    if len(devices) > 1:
        for match, count in devices[:MAX_COMPARED]:
            match = _sized(answers, ask, model, match, count)
            pairs.append((model, *answers.device(ask, model, q.model_copy(update={"gpu": match, "gpu_count": count}))))
    else:
        gpu, count = answers.device(ask, model)
        pairs.extend((m, gpu, count) for m in models[:MAX_COMPARED])
    analyses = [answers.analyse(answers.scenario(ask, m, g, n), ask) for m, g, n in pairs]
    reply = cards.compare_card([a.estimate for a in analyses], answers.catalog, ask.lang)
    subjects = tuple(
        subject_of(a.scenario.model, a.scenario.gpu, a.scenario.count, a.scenario.request, (), a.scenario).model_copy(
            update={"figures": figures_of(a)}
        )
        for a in analyses
    )
    return reply.model_copy(update={"subjects": subjects})


def _sized(answers: Answering, ask: Ask, model: ModelSpec, match: Match, count: int) -> Match:
    """A compared device that comes in several memory sizes, none usual ("m4 pro"), as the smallest that holds
    the model (the largest if none does): a row of the comparison, not a question back; the resolver says
    which size was read, and the others are a tap away."""
    if match.id is not None or not match.choices:
        return match
    sizes = sorted((g for c in match.choices if (g := answers.catalog.gpu(c))), key=lambda g: g.memory_bytes)
    if not sizes:
        return match
    fitting = (Verdict.FITS, Verdict.TIGHT)
    holds = (g for g in sizes if answers.analyse(answers.scenario(ask, model, g, count)).estimate.verdict in fitting)
    chosen = next(holds, sizes[-1])
    others = [g for g in sizes if g.id != chosen.id]
    names = ", ".join(sized_name(g) for g in others)
    ask.note(Note(code="sized_variant", values={"gpu": sized_name(chosen), "text": match.text, "others": names}))
    ask.actions.extend(Action(label=sized_name(g), query=replace_name(ask.echo, match.text, g.id)) for g in others)
    return match.model_copy(update={"id": chosen.id, "choices": ()})


def subject_of(
    model: ModelSpec | None,
    gpu: GpuSpec | None,
    count: int,
    request: Request,
    notes: tuple[Note, ...],
    s: Scenario | None = None,
) -> Subject:
    """One model × hardware of a card; a /models answer has hardware only, a /gpus answer a model only.
    With the scenario, the settings are the resolved ones (quant, context, engine, RAM)."""
    engine = s.engine if s is not None else request.engine or DEFAULT_ENGINE
    if s is not None:
        quant: str | None = s.quant.id
    else:
        quant = request.quant or (default_quant(model, engine) if model else None)
    return Subject(
        model_id=model.id if model else None,
        model_name=model.name if model else None,
        hf_repo=model.hf_repo if model else None,
        total_params_b=round(model.total_params / 1e9, 2) if model else None,
        gpu_id=gpu.id if gpu else None,
        gpu_name=gpu.short_name if gpu else None,
        gpu_count=count,
        gpu_memory_gb=float(round(gpu.memory_bytes / GIB)) if gpu else None,
        ram_gb=request.ram_gb,
        quant=quant,
        context=s.context if s is not None else request.context or DEFAULT_CONTEXT,
        engine=engine.value,
        notes=notes,
    )

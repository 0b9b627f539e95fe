"""Comparisons of 2–4 devices or models, and what every card says about its subjects.

``compare`` answers "4090 or 5090 for X?", "X on A vs B vs C" and "X vs Y on a 4090": each name is
resolved on its own (an unknown one is asked about, never dropped). ``with_notes`` puts what
resolution assumed on one visible line; ``subject_of`` fills ``Reply.subjects``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot import cards
from bot.reply import Note, Reply, Subject
from bot.user import User
from core.estimate import DEFAULT_CONTEXT, FitEstimate, Request, default_quant
from core.models import GIB, Engine, GpuSpec, ModelSpec
from core.query import Match, Query
from locales import Lang, t

if TYPE_CHECKING:
    from bot.answers import Answers

MAX_COMPARED = 4


def compare(answers: Answers, model: ModelSpec, q: Query, lang: Lang, user: User, text: str) -> Reply:
    """One row per device (same model) or per model (same device), up to four."""
    devices: list[tuple[Match, int]] = [
        (m, n)
        for m, n in ((q.gpu, q.gpu_count), (q.gpu2, q.gpu2_count), *zip(q.more_gpus, q.more_gpu_counts, strict=False))
        if m is not None
    ]
    models: list[ModelSpec] = [model]
    for match in (q.model2, *q.more_models):
        if match is None:
            continue
        other = answers.model(q, lang, text, match)
        if isinstance(other, Reply):
            return other
        models.append(other)
    pairs: list[tuple[ModelSpec, GpuSpec, int]] = []
    if len(devices) > 1:
        for match, count in devices[:MAX_COMPARED]:
            found = answers.gpu(q.model_copy(update={"gpu": match, "gpu_count": count}), lang, user, text, model)
            if isinstance(found, Reply):
                return found
            pairs.append((model, *found))
    else:
        found = answers.gpu(q, lang, user, text, model)
        if isinstance(found, Reply):
            return found
        pairs.extend((m, *found) for m in models[:MAX_COMPARED])
    estimates = [answers.estimate(m, g, answers.request(q, user, n)) for m, g, n in pairs]
    reply = cards.compare_card(t(lang, "compare.title"), estimates, answers.catalog, lang)
    subjects = tuple(subject_of_estimate(e, m, g) for e, (m, g, _) in zip(estimates, pairs, strict=True))
    return reply.model_copy(update={"subjects": subjects})


def subject_of(
    model: ModelSpec | None, gpu: GpuSpec | None, count: int, request: Request, notes: tuple[Note, ...]
) -> Subject:
    """One model × hardware of a card; a /models answer has hardware only, a /gpus answer a model only."""
    engine = request.engine or Engine.LLAMA_CPP
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
        quant=request.quant or (default_quant(model, engine) if model else None),
        context=request.context or DEFAULT_CONTEXT,
        engine=engine.value,
        notes=notes,
    )


def subject_of_estimate(est: FitEstimate, model: ModelSpec, gpu: GpuSpec) -> Subject:
    return Subject(
        model_id=model.id,
        model_name=model.name,
        hf_repo=model.hf_repo,
        total_params_b=round(model.total_params / 1e9, 2),
        gpu_id=gpu.id,
        gpu_name=gpu.short_name,
        gpu_count=est.hardware.count,
        gpu_memory_gb=float(round(gpu.memory_bytes / GIB)),
        ram_gb=round(est.hardware.system_ram_bytes / 1e9, 1),
        quant=est.quant,
        context=est.context,
        engine=est.engine.value,
    )


def with_notes(reply: Reply, notes: list[Note], lang: Lang) -> Reply:
    """What was assumed, as one line above the card's summary."""
    if not notes or reply.kind == "suggest":
        return reply
    line = " ".join(t(lang, f"resolve.note.{n.code}", **n.values) for n in notes)
    summary = f"ℹ️ {line}\n{reply.summary}" if reply.summary else f"ℹ️ {line}"
    return reply.model_copy(update={"summary": summary})

"""Several models on one GPU: "LLM + embedder + Whisper on one 24 GB card".

The side models (speech, embedders) are read from the question by their names in
``catalog/facts/side_models.toml`` (``bot.understand``; a bare "embedder" or "whisper" gets the default named on the card);
the LLM is what the rest of the question names, estimated as usual; the hardware as in any question.
Without a named LLM the card says how much memory is left for one and which catalog models fit there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.answers.compare import subject_of
from bot.answers.resolve import Resolver
from bot.cards.diagnose import failure_card
from bot.cards.together import llm_room_name, together_card
from bot.reply import Reply
from bot.users.user import User
from core.estimate import DEFAULT_RAM_GB, EstimateError, Request, estimate, scenario
from core.figures import figures_of
from core.fit import Verdict, comfortable_reserve
from core.memory import usable_bytes
from core.models import GpuSpec, Hardware, Lang, Workload
from core.multi_model import Part, side_part, together
from core.notes import Note

if TYPE_CHECKING:
    from bot.answers.route import Answers
    from bot.understand import Question

DEFAULT_QUANT = "Q4_K_M"
SUGGESTIONS = 3


def together_answer(answers: Answers, question: Question, lang: Lang, user: User) -> Reply:
    """The card for side models next to an LLM; ``question.query`` is the question without its side models."""
    sides, defaults, q, echo = question.sides, question.side_defaults, question.query, question.text
    resolver = Resolver(answers.catalog)
    device = resolver.device(q, lang, user, echo)
    if isinstance(device, Reply):
        return device
    gpu, count = device
    request = Request(gpu_count=count, ram_gb=q.ram_gb if q.ram_gb is not None else user.ram_gb or DEFAULT_RAM_GB)
    parts = [side_part(s) for s in sides]
    notes = [Note(code="together_default", values={"model": name}) for name in defaults]
    llm_part: Part | None = None
    model = resolver.model(q, lang, echo) if (q.model is not None and q.model.id) else None
    if isinstance(model, Reply):
        return model
    suggestions: list[tuple[str, float]] | None = None
    subject = subject_of(None, gpu, count, request, ())
    if model is not None:
        quant = answers.catalog.quant(q.quant or DEFAULT_QUANT)
        if quant is None:
            return failure_card(lang, "no_command")
        asked = request.model_copy(update={"quant": quant.id, "context": q.context})
        try:
            settled = scenario(model, gpu, asked, answers.catalog)
            analysis = answers.analyse(settled)
        except EstimateError:
            return failure_card(lang, "no_command")
        est = analysis.estimate
        subject = subject_of(model, gpu, count, asked, (), settled).model_copy(
            update={"figures": figures_of(analysis)}  # the LLM's own numbers; the card adds the side models
        )
        other = est.memory.kv_cache_bytes + est.memory.overhead_bytes
        llm_part = Part(
            name=f"{model.name} {quant.id}",
            runtime="llama.cpp",
            weights_bytes=max(est.gpu_bytes - other, 0),
            other_bytes=other,
        )
        if est.verdict is Verdict.OFFLOAD:
            notes.append(Note(code="together_offload", values={"model": model.name}))
    usable = usable_bytes(Hardware(gpu=gpu, count=count), Workload())
    if llm_part is None:
        side_total = sum(p.total_bytes for p in parts)
        budget = usable - comfortable_reserve(usable, count) - side_total
        suggestions = _suggestions(answers, gpu, count, budget, request)
        llm_part = Part(name=llm_room_name(lang), runtime="llama.cpp", weights_bytes=max(budget, 0), other_bytes=0)
    result = together(llm_part, parts, usable, count)
    sources = [s.provenance.source for s in sides]
    room = llm_part.weights_bytes
    return together_card(result, usable, sources, suggestions, room, notes, gpu, count, subject, lang, echo)


def _suggestions(answers: Answers, gpu: GpuSpec, count: int, budget: int, request: Request) -> list[tuple[str, float]]:
    """The largest catalog LLMs (name, decode tok/s) that fit in the room the side models leave (Q4_K_M, 8K, fully
    on the GPU); none where there is no room."""
    if budget <= 0:
        return []
    quant = answers.catalog.quant(DEFAULT_QUANT)
    assert quant is not None
    room = gpu.model_copy(update={"memory_bytes": max(1, (budget + comfortable_reserve(budget, count)) // count)})
    found: list[tuple[str, float]] = []
    for m in sorted(answers.catalog.models, key=lambda m: -m.total_params):
        if m.variant in ("base", "embedding") or m.total_params * 0.45 > budget:
            continue
        est = estimate(
            m, room, quant, request.model_copy(update={"quant": quant.id}), answers.catalog.size(m.id, quant.id)
        )
        if est.verdict is Verdict.FITS:
            found.append((m.name, est.speed.decode_tokens_per_s))
        if len(found) >= SUGGESTIONS:
            break
    return found


__all__ = ["together_answer"]

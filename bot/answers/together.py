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
from bot.reply import Reply, Row, Section, Tone
from bot.users.user import User
from core.estimate import DEFAULT_RAM_GB, EstimateError, Request, estimate, scenario
from core.figures import figures_of
from core.fit import Verdict, comfortable_reserve
from core.memory import usable_bytes
from core.models import GpuSpec, Hardware, Lang, Workload
from core.multi_model import Part, side_part, together
from core.notes import Note
from locales import gib, t, tokens_per_s

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
    rows: list[Row] = []
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
        rows = _suggestions(answers, gpu, count, budget, request, lang)
        llm_part = Part(
            name=t(lang, "together.llm_room"), runtime="llama.cpp", weights_bytes=max(budget, 0), other_bytes=0
        )
    result = together(llm_part, parts, usable, count)
    memory_rows = [
        Row(
            label=f"{p.name} ({p.runtime})",
            value=t(
                lang,
                "together.part",
                total=gib(p.total_bytes, lang),
                weights=gib(p.weights_bytes, lang),
                other=gib(p.other_bytes, lang),
            ),
        )
        for p in result.parts
    ]
    memory_rows.append(
        Row(
            label=t(lang, "together.sum"),
            value=t(lang, "spec.total_value", total=gib(result.total_bytes, lang), usable=gib(usable, lang)),
        )
    )
    memory_rows += [Row(label=t(lang, "quality.source"), value=s.provenance.source) for s in sides]
    if result.fits:
        summary, tone = t(lang, "together.fits"), Tone.GOOD
    else:
        summary, tone = t(lang, "together.swap", names=", ".join(result.swap)), Tone.WARN
    sections = [Section(title=t(lang, "section.memory"), rows=tuple(memory_rows))]
    if rows:
        sections.append(
            Section(
                title=t(lang, "together.suggest_title", room=gib(max(llm_part.weights_bytes, 0), lang)),
                rows=tuple(rows),
            )
        )
    assumed = [t(lang, f"together.note.{n.code}", **n.values) for n in notes] + [t(lang, "together.assumption")]
    label = f"{count}x {gpu.short_name}" if count > 1 else gpu.short_name
    return Reply(
        kind="together",
        locale=lang,
        title=t(lang, "together.title", gpu=label),
        tone=tone,
        summary=summary,
        sections=tuple(sections),
        assumptions=f"{t(lang, 'assumptions.prefix')}: " + "; ".join(assumed),
        echo=echo[:300],
        subjects=(subject.model_copy(update={"notes": tuple(notes)}),),
    )


def _suggestions(answers: Answers, gpu: GpuSpec, count: int, budget: int, request: Request, lang: Lang) -> list[Row]:
    """The largest catalog LLMs that fit in the room the side models leave (Q4_K_M, 8K, fully on the GPU)."""
    if budget <= 0:
        return [Row(label="–", value=t(lang, "together.no_room"))]
    quant = answers.catalog.quant(DEFAULT_QUANT)
    assert quant is not None
    room = gpu.model_copy(update={"memory_bytes": max(1, (budget + comfortable_reserve(budget, count)) // count)})
    found = []
    for m in sorted(answers.catalog.models, key=lambda m: -m.total_params):
        if m.variant in ("base", "embedding") or m.total_params * 0.45 > budget:
            continue
        est = estimate(
            m, room, quant, request.model_copy(update={"quant": quant.id}), answers.catalog.size(m.id, quant.id)
        )
        if est.verdict is Verdict.FITS:
            found.append(Row(label=m.name, value=tokens_per_s(est.speed.decode_tokens_per_s, lang)))
        if len(found) >= SUGGESTIONS:
            break
    return found or [Row(label="–", value=t(lang, "together.no_room"))]


__all__ = ["together_answer"]

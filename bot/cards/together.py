"""The words of the card for several models on one GPU (``bot.answers.together``)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.reply import Reply, Row, Section, Subject, Tone, setup_label
from core.models import GpuSpec, Lang
from core.multi_model import Together
from core.notes import Note
from locales import gib, t, tokens_per_s


def llm_room_name(lang: Lang) -> str:
    """The name of the memory left for an LLM where the question names none (a part of the sum)."""
    return t(lang, "together.llm_room")


def together_card(
    result: Together,
    usable: int,
    sources: Sequence[str],
    suggestions: Sequence[tuple[str, float]] | None,
    room: int,
    notes: Sequence[Note],
    gpu: GpuSpec,
    count: int,
    subject: Subject,
    lang: Lang,
    echo: str,
) -> Reply:
    """The parts and their sum against ``usable``, the side models' ``sources``; where the question names no LLM,
    the ``suggestions`` (name, decode tok/s) that fit the ``room`` left (none: no room)."""
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
    memory_rows += [Row(label=t(lang, "quality.source"), value=source) for source in sources]
    if result.fits:
        summary, tone = t(lang, "together.fits"), Tone.GOOD
    else:
        summary, tone = t(lang, "together.swap", names=", ".join(result.swap)), Tone.WARN
    sections = [Section(title=t(lang, "section.memory"), rows=tuple(memory_rows))]
    if suggestions is not None:
        rows = [Row(label=name, value=tokens_per_s(decode, lang)) for name, decode in suggestions]
        sections.append(
            Section(
                title=t(lang, "together.suggest_title", room=gib(max(room, 0), lang)),
                rows=tuple(rows or [Row(label="–", value=t(lang, "together.no_room"))]),
            )
        )
    assumed = [t(lang, f"together.note.{n.code}", **n.values) for n in notes] + [t(lang, "together.assumption")]
    return Reply(
        kind="together",
        locale=lang,
        title=t(lang, "together.title", gpu=setup_label(gpu.short_name, count)),
        tone=tone,
        summary=summary,
        sections=tuple(sections),
        assumptions=f"{t(lang, 'assumptions.prefix')}: " + "; ".join(assumed),
        echo=echo[:300],
        subjects=(subject.model_copy(update={"notes": tuple(notes)}),),
    )

"""What a fit card adds where a published run matches the setup: the measured speed beside the estimate.

The rows go into the card's speed section (both pages: the number a user can check), and the runs
into the subject's ``figures.measured`` for ``--json``. Runs are llama-bench's, so only llama.cpp
setups get them (``core.measured``).
"""

from __future__ import annotations

from bot.reply import Reply, Row, Section
from catalog.extra_facts import measurements
from core.analysis import Analysis
from core.measured import MeasuredSpeed, measured
from core.models import Catalog, Engine, Lang
from core.weights import weights
from locales import t, tokens_per_s


def runs_for(analysis: Analysis, catalog: Catalog) -> tuple[MeasuredSpeed, ...]:
    """The decode and prefill runs to show for the card's setup, if any."""
    s, est = analysis.scenario, analysis.estimate
    if s.gpu is None or est.engine is not Engine.LLAMA_CPP or est.offload.mode != "none":
        return ()

    def weight_bytes(quant_id: str) -> int | None:
        quant = catalog.quant(quant_id)
        return weights(s.model, quant, catalog.size(s.model.id, quant.id)).total_bytes if quant else None

    found = (
        measured(measurements(), s.model.id, s.quant.id, s.gpu.id, s.count, s.gpu.backend.value, kind, weight_bytes)
        for kind in ("decode", "prefill")
    )
    return tuple(m for m in found if m is not None)


def with_measured(reply: Reply, runs: tuple[MeasuredSpeed, ...], lang: Lang) -> Reply:
    """The speed section with a row per run, and the subject's figures with the runs."""
    if not runs or not reply.subjects:
        return reply
    rows = tuple(_row(m, lang) for m in runs)
    sections = tuple(
        s.model_copy(update={"rows": (*s.rows, *rows)}) if s.title == t(lang, "section.speed") else s
        for s in reply.sections
    )
    if sections == reply.sections:
        sections = (*sections, Section(title=t(lang, "section.speed"), rows=rows))
    subject = reply.subjects[0]
    if subject.figures is not None:
        subject = subject.model_copy(update={"figures": subject.figures.model_copy(update={"measured": runs})})
    return reply.model_copy(update={"sections": sections, "subjects": (subject, *reply.subjects[1:])})


def _row(m: MeasuredSpeed, lang: Lang) -> Row:
    details = "".join(
        (
            t(lang, "measured.build", build=m.build) if m.build else "",
            t(lang, "measured.date", as_of=m.as_of) if m.as_of else "",
            t(lang, "measured.scaled", quant=m.from_quant) if m.from_quant else "",
            t(lang, "measured.runs", runs=m.runs) if m.runs > 1 else "",
        )
    )
    value = t(
        lang,
        "measured.value",
        rate=tokens_per_s(m.tokens_per_s, lang),
        test=m.test.split(" (")[0],
        details=details,
        source=m.source_label,
    )
    return Row(label=t(lang, f"measured.{m.kind}"), value=value)


__all__ = ["runs_for", "with_measured"]

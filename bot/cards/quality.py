"""The quant card with published quality figures: the loss of each quant, and the best quality that fits.

Figures come from ``catalog/facts/quant_quality.toml`` through ``core.quants.quality`` (one family,
one metric, each row with its source). A family without a published table shows no figures; the
"More" page says that none are published, so a plain card never implies a quality it cannot back.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.reply import Reply, Row, Section
from catalog.extra_facts import quant_quality
from core.fit import Verdict
from core.models import Lang, ModelSpec
from core.quants.quality import QualityRow, best_quality, family_quality
from locales import num, t


def quality_value(row: QualityRow, lang: Lang) -> str:
    if row.metric == "kld":
        return t(lang, "quality.kld", value=num(row.value, lang, 4))
    return t(lang, "quality.ppl", value=num(row.value, lang, 2))


def with_quality(
    reply: Reply,
    model: ModelSpec,
    rows: Sequence[tuple[str, int, float | None, Verdict]],
    lang: Lang,
    more: bool,
) -> Reply:
    """Adds the family's published figures for the card's quants and the best quality that fits."""
    quality = family_quality(model, quant_quality())
    if not quality:
        if not more:
            return reply
        none = Section(
            title=t(lang, "quality.section"), rows=(Row(label="–", value=t(lang, "quality.none", family=model.family)),)
        )
        return reply.model_copy(update={"sections": (*reply.sections, none)})
    shown = [quality[q.upper()] for q, _, _, _ in rows if q.upper() in quality]
    if not shown:
        return reply
    first = shown[0]
    lines = [Row(label=r.quant, value=quality_value(r, lang)) for r in shown]
    lines.append(Row(label=t(lang, "quality.source"), value=first.provenance.source))
    title = t(lang, f"quality.title_{first.metric}", model=first.measured_on)
    summary = reply.summary
    # as the ladder's pick: a quant that fits with reserve first, a tight one only when none does
    best = best_quality((q for q, _, _, v in rows if v is Verdict.FITS), quality) or best_quality(
        (q for q, _, _, v in rows if v is Verdict.TIGHT), quality
    )
    if best is not None:
        summary = f"{summary}\n{t(lang, 'quality.best', quant=best.quant, value=quality_value(best, lang))}"
    section = Section(title=title, rows=tuple(lines))
    return reply.model_copy(update={"sections": (*reply.sections, section), "summary": summary})


__all__ = ["quality_value", "with_quality"]

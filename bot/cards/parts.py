"""Pieces every card uses: labels, notes rendered from codes, follow-up questions.

``core`` hands over assumptions and reasons as ``Note(code, values)``; ``note_text`` turns one into a
sentence of the user's language (``locales/*.toml``, ``note.<code>``), formatting each value by its
name (shares as percent, money as dollars, contexts as "32K"), so no English from ``core`` reaches a
German card.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bot.cards.notes import note_text, note_value, percent
from bot.reply import Reply, setup_label
from core.estimate import FitEstimate
from core.fit import Verdict
from core.models import Catalog, Lang
from core.notes import Note
from locales import t

VERDICT_EMOJI = {Verdict.FITS: "🟢", Verdict.TIGHT: "🟡", Verdict.OFFLOAD: "🟠", Verdict.NO_FIT: "🔴"}
MAX_FOOTNOTE = 200  # characters of a card's footnote (assumptions line): one phone line or two
LIST_TOP = 10  # rows a list answer shows before its "More" button


def hardware_label(est: FitEstimate) -> str:
    return setup_label(est.hardware.gpu_name, est.hardware.count)


def verdict_label(verdict: Verdict, lang: Lang) -> str:
    return f"{VERDICT_EMOJI[verdict]} {t(lang, f'verdict.{verdict.value}')}"


def footer(catalog: Catalog, lang: Lang) -> str:
    return t(lang, "footer.catalog", version=catalog.version[:8] or "dev", date=catalog.built_at[:10] or "–")


# the defaults a setup was filled with: on a phone's first page one short list ("llama.cpp · Q4_K_M · 8K
# (defaults)"), the sentences on the details page
DEFAULT_CODES = ("engine_default", "backend_default", "quant_default", "context_default", "kv_default", "ram_default")


def notes_line(
    notes: Iterable[Note], lang: Lang, limit: int = MAX_FOOTNOTE, prefix: bool = True, compact: bool = False
) -> str:
    """Notes joined into one footnote of at most ``limit`` characters; what does not fit is left out
    whole (the details page has room for all of them), never cut mid-sentence. ``compact`` lists the
    defaults by their values alone, in one part."""
    head = f"{t(lang, 'assumptions.prefix')}: " if prefix else ""
    parts: list[str] = []
    notes = list(notes)
    if compact and (defaults := [n for n in notes if n.code in DEFAULT_CODES]):
        items = " · ".join(
            t(lang, f"note.compact.{n.code}", **{k: note_value(k, v, lang) for k, v in n.values.items()})
            for n in defaults
        )
        parts.append(t(lang, "note.compact.defaults", items=items))
        notes = [n for n in notes if n.code not in DEFAULT_CODES]
    for n in notes:
        text = note_text(n, lang)
        if len(head) + len("; ".join([*parts, text])) > limit:
            continue
        parts.append(text)
    return head + "; ".join(parts) if parts else ""


def short_lines(texts: Sequence[str], limit: int = MAX_FOOTNOTE) -> str:
    """Whole sentences joined with " · " up to ``limit`` characters."""
    kept: list[str] = []
    for text in texts:
        if text and len(" · ".join([*kept, text])) <= limit:
            kept.append(text)
    return " · ".join(kept)


__all__ = [
    "DEFAULT_CODES",
    "LIST_TOP",
    "MAX_FOOTNOTE",
    "VERDICT_EMOJI",
    "footer",
    "hardware_label",
    "note_text",
    "notes_line",
    "percent",
    "short_lines",
    "verdict_label",
]


def with_notes(reply: Reply, notes: list[Note], lang: Lang) -> Reply:
    """What was assumed, as one line above the card's summary."""
    if not notes or reply.kind == "suggest":
        return reply
    line = " ".join(note_text(n, lang) for n in notes)
    summary = f"ℹ️ {line}\n{reply.summary}" if reply.summary else f"ℹ️ {line}"
    return reply.model_copy(update={"summary": summary})

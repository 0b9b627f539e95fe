"""The one renderer of notes (``core.notes.Note``: a code and its values) as sentences in a language, and
the formats of the values they carry. Apart from the card parts so a one-shot command that prints notes
(``fitbot estimate``) imports no reply model."""

from __future__ import annotations

from core.models import Lang
from core.notes import Note, NoteValue
from locales import context_label, gib, messages, num, t, usd


def note_text(note: Note, lang: Lang) -> str:
    """The one renderer of notes, for every card, adapter and the CLI: the sentence for ``note`` in
    ``lang``. Assumptions and reasons read ``note.<code>``; what resolving a name assumed reads
    ``resolve.note.<code>`` (whole sentences, shown above a card's summary)."""
    key = f"note.{note.code}"
    if key not in messages(lang):
        key = f"resolve.note.{note.code}"
    return t(lang, key, **{k: note_value(k, v, lang) for k, v in note.values.items()})


def note_value(name: str, value: NoteValue, lang: Lang) -> str:
    """One note value, formatted by what its name says it is."""
    if name == "doubts" and isinstance(value, str):  # catalog field names (core.notes.unverified_note)
        return ", ".join(t(lang, f"fact_field.{f}") for f in value.split(",") if f)
    if isinstance(value, str):
        return value
    if name in ("share",):
        return percent(float(value), lang)
    if name in ("tariff", "usd", "price"):
        return usd(float(value), lang)
    if name in ("context", "max", "rope", "seq") or (name == "value" and isinstance(value, int) and value >= 1024):
        return context_label(int(value))
    if name.endswith("bytes"):
        return gib(float(value), lang)
    if name.endswith(("_factor", "bpw")):  # a calibration's measured / estimated; bits per weight
        return num(float(value), lang, 2).rstrip("0").rstrip(",.") if name == "bpw" else num(float(value), lang, 2)
    if isinstance(value, float):
        return num(value, lang, 0 if value == int(value) else 1)
    return num(value, lang, 0)


def percent(share: float, lang: Lang) -> str:
    return f"{num(100 * share, lang, 0)} %"

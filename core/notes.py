"""Structured assumptions and reasons: a code plus values, never a sentence.

``core`` says *what* it assumed or why it refused (``Note(code="kv_default", values={"kv": "f16"})``);
the cards turn each code into a sentence in the user's language (``locales/*.toml``, key
``note.<code>``), so no English text from ``core`` reaches a German card.
"""

# no ``from __future__ import annotations``: pydantic reads these models' field types as objects instead of
# compiling each from a string, a few milliseconds of every start (``fitbot estimate``, issue 33)

from pydantic import Field

from core.models import Frozen, ModelSpec

NoteValue = str | int | float


class Note(Frozen):
    """One assumption or reason: ``code`` names the locale message, ``values`` fill its placeholders."""

    code: str
    values: dict[str, NoteValue] = Field(default_factory=dict)


def note(code: str, **values: NoteValue) -> Note:
    """A note from typed arguments (no validation needed: the signature is the schema).

    Notes are immutable and the same few come back with every estimate (the engine, backend and RAM
    defaults, ...): one object per code and values, each value's type in the key so 1, 1.0 and True stay
    apart."""
    key = (code, *[(name, value.__class__, value) for name, value in values.items()])
    shared = _NOTES.get(key)
    if shared is None:
        if len(_NOTES) >= _NOTES_ENTRIES:
            _NOTES.clear()
        shared = _NOTES[key] = Note.model_construct(code=code, values=values)
    return shared


_NOTES: dict[tuple[object, ...], Note] = {}
_NOTES_ENTRIES = 1024

GEOMETRY_MARK = "geometry"  # a row's unverified marker: no stored config.json behind its layer numbers
# unverified fields that change no answer, so a card need not name them
NOT_IN_ANSWER = frozenset({"release", "license", "gguf_repo", "hf_repo", "hf_downloads", "architecture", "variant"})


def answer_doubts(model: ModelSpec) -> tuple[str, ...]:
    """The row's unverified fields that an answer is built on (``provenance.unverified``, marker and
    bookkeeping fields left out), in the row's order."""
    return tuple(f for f in model.provenance.unverified if f not in NOT_IN_ANSWER and f != GEOMETRY_MARK)


def unverified_note(model: ModelSpec) -> Note | None:
    """What a card must say about a catalog row without a primary source: no checked config.json
    (``geometry_unverified``), and which of the fields its answer uses nobody could check (``doubts``: comma-joined field names; the card names each in its language). None for a fully sourced row."""
    fields = answer_doubts(model)
    typed = GEOMETRY_MARK in model.provenance.unverified
    if not fields:
        return note("geometry_unverified", model=model.name) if typed else None
    return note(
        "geometry_fields_unverified" if typed else "fields_unverified", model=model.name, doubts=",".join(fields)
    )


UNVERIFIED_CODES = frozenset({"geometry_unverified", "geometry_fields_unverified", "fields_unverified"})


class CodedError(ValueError):
    """An error with a locale code: ``str(exc)`` stays a readable English line for logs and ``--json``."""

    def __init__(self, code: str, message: str | None = None, **values: NoteValue) -> None:
        if message is None:  # the older one-argument form: the message is all there is
            code, message, values = "generic", code, {"reason": code}
        super().__init__(message)
        self.note = Note(code=code, values=values)


__all__ = [
    "GEOMETRY_MARK",
    "NOT_IN_ANSWER",
    "UNVERIFIED_CODES",
    "CodedError",
    "Note",
    "NoteValue",
    "answer_doubts",
    "note",
    "unverified_note",
]

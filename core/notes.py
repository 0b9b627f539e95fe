"""Structured assumptions and reasons: a code plus values, never a sentence.

``core`` says *what* it assumed or why it refused (``Note(code="kv_default", values={"kv": "f16"})``);
the cards turn each code into a sentence in the user's language (``locales/*.toml``, key
``note.<code>``), so no English text from ``core`` reaches a German card.
"""

from __future__ import annotations

from pydantic import Field

from core.models import Frozen

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
_NOTES_ENTRIES = 4096


class CodedError(ValueError):
    """An error with a locale code: ``str(exc)`` stays a readable English line for logs and ``--json``."""

    def __init__(self, code: str, message: str | None = None, **values: NoteValue) -> None:
        if message is None:  # the older one-argument form: the message is all there is
            code, message, values = "generic", code, {"reason": code}
        super().__init__(message)
        self.note = Note(code=code, values=values)


__all__ = ["CodedError", "Note", "NoteValue", "note"]

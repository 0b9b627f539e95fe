"""The text as the parser reads it: Unicode normalised, control and invisible characters gone, capped, an
Ollama tag's colon a space; lower-cased without changing its length (every offset into it stays valid)."""

from __future__ import annotations

import re
import unicodedata

MAX_CHARS = 2000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
# zero-width and bidi controls vanish: "qw\u200ben3" is "qwen3", as the echo shows it
_INVISIBLE = re.compile(r"[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")


# an Ollama tag ("qwen3:32b", "llama3.1:8b-instruct-q4_K_M", "llama4:scout", "gemma3:latest"): the colon is
# a space, so what follows is read as part of the name (same length: offsets stay valid); not a repo id's
# ":Q4_K_M" (a "/" before the name) nor a time ("12:30": the name starts with a letter)
_TAG_COLON = re.compile(r"(?<![\w./-])([a-z][\w.-]*)[:](?=[a-z0-9])", re.ASCII | re.I)


def clean(text: str) -> str:
    """Normalises Unicode, drops control characters and caps the length."""
    text = unicodedata.normalize("NFKC", _INVISIBLE.sub("", text[: MAX_CHARS * 2]))[:MAX_CHARS]
    text = _TAG_COLON.sub(lambda m: f"{m[1]} ", text)
    return _CONTROL.sub(" ", text).replace("\t", " ").replace("\n", " ").replace("\r", " ")


def lower_keep_length(text: str) -> str:
    """Lower-cases without changing the length (offsets must stay valid)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)

"""Telling pastes and side-model questions from the rest, cheaply (``bot.understand`` asks of every message),
so this module keeps only the tests; the modules that answer them are imported when one is asked."""

from __future__ import annotations

import re

from core.diagnose.flags import MAX_PASTE_CHARS, find_command, spoken_command
from core.diagnose.log import looks_like_log

PASTE_PREFIX = re.compile(r"^\s*/(?:diagnose|check|diagnose@\w+|check@\w+)\b", re.I)
_TOGETHER = re.compile(r"\b(?:whisper|embedd?(?:er|ing|ings)?|bge[- ]?m3|nomic[- ]embed\S*|einbettungsmodell)\b", re.I)


def is_paste(text: str) -> bool:
    """Whether a message is a pasted command or log (or asks /diagnose explicitly); a command word in a
    sentence ("ollama run qwen3 8b on a 3060") is a question naming its engine."""
    if PASTE_PREFIX.match(text):
        return True
    head = text[:MAX_PASTE_CHARS]
    return (find_command(head) is not None and not spoken_command(head)) or looks_like_log(head)


def asks_together(text: str) -> bool:
    """Whether a message asks for side models (speech, embeddings) next to the LLM on one device."""
    return bool(_TOGETHER.search(text))

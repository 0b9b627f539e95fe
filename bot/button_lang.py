"""A button carries the language of the card it sits on.

A card's language may come from the words the user wrote; a button's question ("/fit qwen3-32b
rtx-4090 32k") has no such words, so on its own it would follow the client's language and a German
card's buttons could answer in English. Each button's question therefore ends in a short tag naming
the card's language; the service reads and drops it before anything else sees the text, and it
stands in for the words' language (the saved and the chat's choice still come first).
"""

from __future__ import annotations

import re

from bot.reply import Reply
from locales import Lang

_TAG = re.compile(r" \|(de|en)$")


def stamp(reply: Reply) -> Reply:
    """The reply with each button's question tagged with the reply's language."""
    if not reply.actions:
        return reply
    lang = reply.locale if reply.locale in ("de", "en") else "en"
    actions = tuple(a.model_copy(update={"query": f"{_TAG.sub('', a.query)} |{lang}"}) for a in reply.actions)
    return reply.model_copy(update={"actions": actions})


def unstamp(text: str) -> tuple[str, Lang | None]:
    """(the question without its tag, the language of the card its button sat on, if any)."""
    m = _TAG.search(text)
    if m is None:
        return text, None
    lang: Lang = "de" if m[1] == "de" else "en"
    return text[: m.start()], lang

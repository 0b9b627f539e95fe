"""The words of a Hugging Face look-up: why it failed, and the card's source line for a model read from a repo."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.cards.notices import error_card
from bot.reply import Reply
from core.models import Lang
from locales import t


def hub_error_card(lang: Lang, key: str, params: Mapping[str, Any]) -> Reply:
    """A failed look-up, said by its message ``key`` (``catalog.hub.refs.HubError.key``) and params."""
    return error_card(lang, t(lang, key, **dict(params.items())))


def hub_source_line(lang: Lang, key: str, params: Mapping[str, Any]) -> str:
    """ "From Hugging Face, revision X, fetched at T" (``HubModel.card_source``), the time to the minute in UTC."""
    values = dict(params)
    values["fetched_at"] = values["fetched_at"].strftime("%Y-%m-%d %H:%M UTC")
    return t(lang, key, **values)

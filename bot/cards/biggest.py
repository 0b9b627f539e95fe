"""The words of the "biggest model I can run on X" card: its title and the summary naming the biggest pick."""

from __future__ import annotations

from collections.abc import Sequence

from bot.cards.lists import models_card
from bot.reply import Reply
from core.models import Catalog, Lang
from core.recommend import ModelPick
from locales import context_label, num, t, tokens_per_s


def biggest_card(
    setup: str, context: int, runs: Sequence[ModelPick], floor: float, catalog: Catalog, lang: Lang, echo: str = ""
) -> Reply:
    """The /models card of ``runs`` (biggest first) on ``setup``, its summary naming the first; ``floor`` is the
    reading speed below which a model was left out."""
    title = t(lang, "biggest.title", gpu=setup, context=context_label(context))
    reply = models_card(title, runs, catalog, lang, echo=echo)
    if not runs:
        return reply.model_copy(update={"summary": t(lang, "biggest.none", rate=f"{floor:g}")})
    top = runs[0]
    summary = t(
        lang,
        "biggest.summary",
        model=top.name,
        params=num(top.total_params / 1e9, lang, 0 if top.total_params >= 10e9 else 1),
        quant=top.quant,
        rate=tokens_per_s(top.decode_tokens_per_s, lang),
        floor=f"{floor:g}",
    )
    return reply.model_copy(update={"summary": summary})

"""A Hugging Face repo named in a question: looked up (through the cache) and answered over a catalog that knows it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bot.answers.route import Answers
from bot.cards import notices as cards
from bot.reply import Reply
from core.models import Lang, ModelSpec
from locales import t
from storage.base import store_errors

if TYPE_CHECKING:
    from catalog.hub.cache import CachedHubClient

log = logging.getLogger("bot.service")


async def hub_answers(
    hub: CachedHubClient, answers: Answers, repo: str, quant: str | None, lang: Lang
) -> tuple[Answers, ModelSpec, str] | Reply:
    """Answers that know the repo's model, the model, and the card's source line; or an error card."""
    from catalog.hub.client import HubError

    try:
        found = await hub.lookup(f"{repo}:{quant}" if quant and ":" not in repo else repo)
    except HubError as exc:
        return cards.error_card(lang, t(lang, exc.key, **dict(exc.params.items())))
    except store_errors():  # the cache is unusable: say so instead of failing the answer
        log.exception("hub cache failed")
        return cards.error_card(lang, t(lang, "hub.error", repo=repo))
    catalog = answers.catalog
    extended = catalog.model_copy(
        update={
            "models": (*catalog.models, found.spec),
            "sizes": (*catalog.sizes, *(sz for sz in found.sizes if catalog.quant(sz.quant_id))),
        }
    )
    key, params = found.card_source()
    params["fetched_at"] = params["fetched_at"].strftime("%Y-%m-%d %H:%M UTC")
    return answers.with_model(extended), found.spec, t(lang, key, **params)

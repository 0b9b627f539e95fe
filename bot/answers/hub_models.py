"""A Hugging Face repo named in a question: looked up (through the cache) and answered over a catalog that knows it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bot.answers.route import Answers
from bot.cards.hub import hub_error_card, hub_source_line
from bot.reply import Reply
from core.models import Lang, ModelSpec
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
        return hub_error_card(lang, exc.key, exc.params)
    except store_errors():  # the cache is unusable: say so instead of failing the answer
        log.exception("hub cache failed")
        return hub_error_card(lang, "hub.error", {"repo": repo})
    catalog = answers.catalog
    extended = catalog.model_copy(
        update={
            "models": (*catalog.models, found.spec),
            "sizes": (*catalog.sizes, *(sz for sz in found.sizes if catalog.quant(sz.quant_id))),
        }
    )
    key, params = found.card_source()
    return answers.with_model(extended), found.spec, hub_source_line(lang, key, params)

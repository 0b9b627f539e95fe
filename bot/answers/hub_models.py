"""A Hugging Face repo named in a question: looked up (through the cache) and answered over a catalog that knows it."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from bot.answers.route import Answers
from bot.cards import notices as cards
from bot.reply import Reply
from core.diagnose.flags import ollama_model_name
from core.models import Catalog, Lang, ModelSpec
from core.notes import Note
from core.query.parse import Query
from locales import t
from storage.base import store_errors

if TYPE_CHECKING:
    from catalog.hub.cache import CachedHubClient

log = logging.getLogger("bot.service")


def repo_base(answers: Answers, repo: str, text: str) -> tuple[Query, Note] | None:
    """Without the hub: the question read with the repo id replaced by the model it names
    ("unsloth/Qwen3.5-27B-GGUF Q6_K" is Qwen3.5-27B at Q6_K, "Qwen/Qwen3-14B-AWQ" Qwen3-14B at AWQ),
    when that is a catalog model; with a note naming the repo and the model it was read as."""
    typed = re.compile(
        r"(?:https?://)?(?:www\.)?(?:(?:hf\.co|huggingface\.co)/)?(?:models/)?" + re.escape(repo) + r"(?::([\w.-]+))?",
        re.I,
    )
    m = typed.search(text)
    if m is None:
        return None
    copied = copy_of(answers.catalog, repo)
    if copied is not None:  # its id, and what the copy's name says of its format ("awq", "fp8 dynamic", "4bit")
        suffix = _COPY_SUFFIX.search(repo.rsplit("/", 1)[-1])
        words = f"{copied.id} {suffix[0].replace('-', ' ').replace('_', ' ') if suffix else ''}"
    else:
        words = ollama_model_name(f"hf.co/{repo}").replace("_", " ")
    q = answers.parse(f"{text[: m.start()]} {words} {m[1] or ''} {text[m.end() :]}")
    if q.model is None or not q.model.id or q.hf_repo:
        return None
    model = answers.catalog.model(q.model.id)
    name = model.name if model else q.model.id
    return q, Note(code="repo_offline", values={"repo": repo, "model": name})


# what quantizers append to a model's repo name (bartowski, unsloth, mlx-community, RedHatAI, the publishers)
_COPY_SUFFIX = re.compile(
    r"(?:[-_.](?:gguf|awq|gptq(?:[-_]int[48])?|fp8(?:[-_]dynamic)?|w4a16|w8a8|nvfp4|mlx|bnb|\d+[-_]?bits?))+$", re.I
)


def copy_of(catalog: Catalog, repo: str) -> ModelSpec | None:
    """The catalog model a repo is a copy of, by name alone: a row's own GGUF repo, or a repo whose
    name is a row's repo name plus what quantizers append ("-GGUF", "-AWQ", "-FP8-dynamic", "-4bit")."""
    low = repo.lower()
    name = _COPY_SUFFIX.sub("", low.rsplit("/", 1)[-1])
    for model in catalog.models:
        if (model.gguf_repo or "").lower() == low:
            return model
    return next((m for m in catalog.models if (m.hf_repo or "").lower().rsplit("/", 1)[-1] == name), None)


def in_catalog(catalog: Catalog, repo: str) -> bool:
    return any((m.hf_repo or "").lower() == repo.lower() for m in catalog.models)


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

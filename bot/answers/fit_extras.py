"""What a fit card adds for the questions of issue 26: Ollama / LM Studio / --fit commands, speculative
decoding, images. One hook, so ``answers.py`` carries one line for all of them."""

from __future__ import annotations

from bot.cards.launch import with_tools
from bot.cards.speculative import with_speculative
from bot.cards.vision import with_vision
from bot.reply import Reply
from core.analysis import Analysis
from core.models import Catalog, Lang
from core.query.parse import Query


def extend_fit(card: Reply, analysis: Analysis, catalog: Catalog, lang: Lang, q: Query) -> Reply:
    advice, est, s = analysis.advice, analysis.estimate, analysis.scenario
    if advice is None or s.gpu is None:
        return card
    card = with_tools(card, est, advice, s.model, catalog, lang, q.asks)
    card = with_speculative(card, est, advice, s.model, s.gpu, catalog, lang, q, q.asks.details)
    return with_vision(card, est, advice, s.model, s.gpu, catalog, lang, q.asks)


__all__ = ["extend_fit"]

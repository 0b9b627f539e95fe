"""A language the model should write ("a good model for german text", "welches Modell für deutsche Texte")
is what the question is for, never a model's name, however close it scores to one ("german" / "gemma").
Generated over every language word of ``core.query.lexicon.LANGUAGE_WORDS``, phrasings in both languages,
with and without a model named."""

from __future__ import annotations

import pytest

from catalog.facts import load_facts
from catalog.lookup import vocabulary
from core.query.lexicon import LANGUAGE_WORDS
from core.query.parse import Intent, parse

WITHOUT_MODEL = (
    "good model for {lang} text on my rtx 3090",
    "best model for {lang} on an rtx 4090",
    "which llm writes {lang} well on my rtx 3060 12gb?",
    "gutes Modell für {lang} auf meiner RTX 3090",
    "welches Modell kann {lang} auf einer RTX 4090?",
)
WITH_MODEL = (
    "qwen3 8b for {lang} text on an rtx 3060 12gb",
    "is gemma 3 27b good at {lang} on my rtx 4090?",
    "taugt llama 3.1 8b für {lang} auf meiner rtx 3060 12gb?",
)


@pytest.fixture(scope="module")
def vocab():
    return vocabulary(load_facts())


@pytest.mark.parametrize("lang", sorted(LANGUAGE_WORDS))
def test_a_language_is_no_model(vocab, lang):
    for phrasing in WITHOUT_MODEL:
        q = parse(phrasing.format(lang=lang), vocab)
        assert q.model is None and q.model_text is None and q.gpu is not None, phrasing
        assert q.intent in (Intent.MODELS, Intent.FIT), phrasing
    for phrasing, model in zip(WITH_MODEL, ("qwen3-8b", "gemma-3-27b-it", "llama-3.1-8b-instruct"), strict=True):
        q = parse(phrasing.format(lang=lang), vocab)
        assert q.model is not None and q.model.id == model and q.model2 is None, phrasing

"""Everyday words in catalog names never make a question about another model (issue 34, issue 33).

The class is every word of every catalog model name that is also an everyday English or German word
(``core/query/ordinary_words.py``, generated from the catalog): each is put beside a real model name in many
phrasings in both languages, and alone where it is only one word of a longer name.
"""

from __future__ import annotations

import pytest

from catalog.facts import load_facts
from catalog.importers.ordinary_words_build import OUT, model_words, ordinary, render
from catalog.lookup import vocabulary
from core.query.index import index_for
from core.query.ordinary_words import ORDINARY_WORDS
from core.query.parse import parse

VOCAB = vocabulary(load_facts())
INDEX = index_for(VOCAB)
# (typed name, catalog id): names with a number, as people type them
MODELS = (("qwen3 8b", "qwen3-8b"), ("llama 3.1 8b", "llama-3.1-8b-instruct"), ("gpt-oss-20b", "gpt-oss-20b"))
TEMPLATES = (
    "{w} question: can I run {m} on a {g}?",
    "ollama {w} for {m} on a {g}",
    "what's the {w} for {m} on my {g}",
    "{m} on my {g}, {w} setup",
    "{w}: passt {m} auf meine {g}?",
    "welcher {w} für {m} auf einer {g}",
    "läuft {m} auf meiner {g}? {w} frage",
)
GPU = ("rtx 4090", "rtx-4090")


def test_the_list_is_the_catalogs_everyday_words():
    """Fails when a catalog name adds or drops an everyday word: run the build script."""
    assert render(ordinary(model_words())) == OUT.read_text(encoding="utf-8")


@pytest.mark.parametrize("word", sorted(w for w in ORDINARY_WORDS if len(w) > 1))
@pytest.mark.parametrize("template", TEMPLATES)
def test_an_everyday_word_beside_a_model_name_is_not_a_second_model(word, template):
    for typed, expected in MODELS:
        q = parse(template.format(w=word, m=typed, g=GPU[0]), VOCAB)
        assert q.model is not None and q.model.id == expected, (word, template, q.model)
        assert q.model2 is None, (word, template, q.model2)
        assert q.gpu is not None and q.gpu.id == GPU[1]


def _only_part_of_names(word: str) -> bool:
    """A word that is neither a whole alias nor the family word a name starts with ("dev", "air")."""
    whole = any(a.kind == "model" and a.words == (word,) and not a.nums for a in INDEX.aliases)
    family = any(t.words[:1] == (word,) for t in INDEX.identity.values())
    return not whole and not family


@pytest.mark.parametrize("word", sorted(w for w in ORDINARY_WORDS if len(w) > 1 and _only_part_of_names(w)))
@pytest.mark.parametrize("template", ("can I run {w} on a {g}?", "{w} setup on my {g}", "passt {w} auf meine {g}?"))
def test_one_word_from_the_middle_of_a_name_is_no_name_alone(word, template):
    q = parse(template.format(w=word, g=GPU[0]), VOCAB)
    assert q.model is None or q.model.id is None, (word, q.model)


@pytest.mark.parametrize(
    "text", ["ollama command for a 3060", "vllm command for an rtx 4090", "llama.cpp flash für eine 4090"]
)
def test_a_word_right_after_an_engine_is_the_engines(text):
    q = parse(text, VOCAB)
    assert q.model is None or q.model.id is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cohere command a on 2x h100", "command-a"),
        ("command on 2x h100", "command-a"),
        ("glm 4.5 air on a 4090", "glm-4.5-air"),
        ("kimi dev on an h100", "kimi-dev-72b"),
        ("qwen3 next on a 5090", "qwen3-next-80b-a3b"),
        ("magistral small on a 4090", "magistral-small-2509"),
    ],
)
def test_names_made_of_everyday_words_still_name_their_model(text, expected):
    q = parse(text, VOCAB)
    assert q.model is not None and q.model.id == expected

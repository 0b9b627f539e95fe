"""A typo in a model's family word ("quen3 32b", "qwem2.5 7b") is answered for that model when the parser's
typo rule takes it, or offered as a "did you mean" (``core.query.names.near_family``); never another model.
Generated over every catalog model whose family word has four letters or more, one letter replaced at
the second and at the second-to-last place of that word."""

from __future__ import annotations

import pytest

from catalog.facts import load_facts
from catalog.lookup import vocabulary
from core.query.names import typed
from core.query.parse import parse

PLACES = {"second letter": lambda w: 1, "second-to-last letter": lambda w: len(w) - 2}


@pytest.fixture(scope="module")
def vocab():
    return vocabulary(load_facts())


def _typos(vocab, place):
    for entry in vocab.models:
        name = entry.names[0]
        words = typed(name).words
        start = name.lower().find(words[0]) if words and len(words[0]) >= 4 else -1
        if start < 0:
            continue
        at = start + PLACES[place](words[0])
        letter = next(x for x in "xzq" if x != name[at].lower())
        yield entry.id, name[:at] + letter + name[at + 1 :]


@pytest.mark.parametrize("place", PLACES)
def test_a_family_typo_is_the_model_or_its_did_you_mean(vocab, place):
    typos = list(_typos(vocab, place))
    missed, wrong = [], []
    for model_id, typo in typos:
        for sentence in (f"can I run {typo} on an rtx 4090?", f"passt {typo} auf eine rtx 4090?"):
            match = parse(sentence, vocab).model
            if match is not None and match.id not in (None, model_id):
                wrong.append((sentence, match.id))
            elif match is None or (match.id != model_id and model_id not in match.suggestions):
                missed.append(sentence)
    assert wrong == []
    # one known miss: "Ixkling-Small", whose "small" is an everyday word once the name before it is not read
    assert len(missed) <= len(typos) // 100, missed

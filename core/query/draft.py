"""Speculative decoding in a question: whether it asks for it, and which named model is the draft.

"llama 3.3 70b with llama 3.2 1b as draft model", "qwen3 32b + qwen3 0.6b draft", "speculative
decoding for X using Y": two model names and a draft word make one model and its draft, not a
comparison. The draft is the smaller model (a draft is always much smaller than the model it drafts
for); where a size is unknown, the name nearest the draft word. The answer then uses the draft the
user named, never one it picks itself.
"""

from __future__ import annotations

import re

from core.query import lexicon as L
from core.query.asks import EAGLE_HEAD, MTP_HEAD
from core.query.index import Candidate, NameIndex

MODEL_SLOTS = ("model", "model2", "model3", "model4")
DRAFT_WORDS = re.compile(r"\b(?:draft\w*|speculative|spekulativ\w*|entwurfs?modell\w*)\b", re.I)


def asks_speculative(low: str) -> bool:
    """A draft word, or a model's own head named (MTP, EAGLE: ``core.query.asks``)."""
    return bool(DRAFT_WORDS.search(low) or MTP_HEAD.search(low) or EAGLE_HEAD.search(low))


def take_draft(chosen: dict[str, Candidate], toks: list[L.Tok], low: str, idx: NameIndex) -> Candidate | None:
    """Removes the draft from the model slots and returns it; None unless a draft word and two names."""
    word = DRAFT_WORDS.search(low)
    models = [chosen[s] for s in MODEL_SLOTS if s in chosen]
    if word is None or len(models) < 2:
        return None

    def distance(c: Candidate) -> int:
        start, end = toks[c.span.first].start, toks[c.span.last].end
        return 0 if start <= word.start() <= end else min(abs(word.start() - end), abs(start - word.end()))

    def size(c: Candidate) -> float | None:
        entry, score = c.ranking[0] if c.ranking else ("", 0.0)
        return idx.params.get(entry, (0.0, 0.0))[0] or None if score >= c.score - 1.0 else None

    sizes = [size(c) for c in models]
    if all(sizes):
        draft = min(models, key=lambda c: size(c) or 0.0)
    else:
        draft = min(models[1:], key=distance) if distance(models[0]) > min(map(distance, models[1:])) else models[1]
    kept = [c for c in models if c is not draft]
    for slot in MODEL_SLOTS:
        chosen.pop(slot, None)
    chosen.update(zip(MODEL_SLOTS, kept, strict=False))
    return draft

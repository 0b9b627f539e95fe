"""What the parser keeps on its index across questions (word and number parts of scores, rankings, the entries a
span resolves to) never changes an answer: questions parsed one after another with one index read as each reads
with an index of its own."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from catalog.facts import load_facts
from catalog.lookup import build_vocabulary
from core.query.index import adopt, build_index, index_for, near_in_length
from core.query.parse import parse

VOCAB = build_vocabulary(load_facts())
# names recur with other text around them: the same span, other memory sizes, counts, cores and suffixes
QUESTIONS = [
    "/fit qwen3-32b 2x3090 q4_k_m 16k kv q8",
    "/quant qwen3-32b 4090",
    "qwen3-32b-instruct on a 4090",
    "can I run qwen3 32b on a rtx 4090 with 64 GB RAM?",
    "can I run gpt-oss-120b on a mac studio with 128gb?",
    "gpt-oss-120b on a mac studio",
    "gpt oss on a mac studio with 192gb",
    "m3 ultra 512 with deepseek r1",
    "deepseek r1 on an m3 ultra 60-core",
    "deepseek r1 on 8x h200",
    "passt gemma 3 27b auf eine 7900 xtx?",
    "gemma 3 auf eine 7900 xt",
    "rtx-3080-laptop with llama 3.1 8b",
    "llama 3.1 8b on a 3080 laptop",
    "llama 3.1 8b on a 4060 ti 16gb",
    "llama 3.1 8b on a 4060 ti",
    "4060 ti 8gb, llama 3.1 8b",
    "glm 4.5 air vs qwen3 30b a3b on a 3090",
    "/fit glm-4.5-air rtx 5090 32k",
    "mixtral 8x7b on 2x 4090 + 3090",
]


def _fresh(question: str) -> object:
    vocab = VOCAB.model_copy()  # another object: ``index_for`` builds it an index of its own
    adopt(vocab, build_index(vocab))
    return parse(question, vocab)


def test_one_index_for_many_questions_reads_each_as_a_fresh_one_does() -> None:
    expected = {q: _fresh(q) for q in QUESTIONS}
    shared = VOCAB.model_copy()
    adopt(shared, build_index(shared))
    order = QUESTIONS * 2
    random.Random(3).shuffle(order)
    for question in order:
        assert parse(question, shared) == expected[question], question


@settings(max_examples=300, deadline=None)
@given(st.text("abcdeilmnorstuwxyz", min_size=1, max_size=16), st.sampled_from([75, 85]))
def test_the_words_near_in_length_hold_every_word_that_reaches_the_cutoff(word: str, cutoff: int) -> None:
    idx = index_for(VOCAB)
    # the drawn word, and catalog words with their last letter changed to its first (hits above the cutoff)
    for typed in (word, *(w[:-1] + word[0] for w in idx.words[::40])):
        words, places = near_in_length(idx, len(typed), cutoff)
        assert len(set(places)) == len(places)  # each word once
        assert [idx.words[p] for p in places] == words
        reaching = {w for w in idx.words if fuzz.ratio(typed, w) >= cutoff}
        assert reaching <= set(words)

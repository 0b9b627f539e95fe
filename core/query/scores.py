"""How well a span of a question and one way of writing a name agree: the score, its word and number
parts, the bounds that let most aliases go unscored, and the rankings a chosen span gives.

Numbers inside names ("8b", "3.1", "4090", "m3") are identity and must agree, so they are compared apart
from the words, and a wrong size costs more than any spelling can earn back. Spans and aliases with the
same words or numbers share those parts of the score (``Memo``); ``core.query.index`` finds the spans.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from rapidfuzz import fuzz

from core.query import lexicon as L
from core.query.types import Match

SUGGEST_MIN = 60.0  # below this a candidate is not worth a "did you mean"


class Alias(NamedTuple):  # a tuple: every start reads thousands of them back (``index_from_data``)
    """One way of writing names, shared by every entry written so (an id and a display name often
    read the same): a span is scored once per alias, not once per entry and name."""

    kind: str  # model, gpu, not
    words: tuple[str, ...]
    compact: str
    nums: tuple[str, ...]
    has_size: bool
    memory: int | None
    unmatched: float  # what its numbers score against a span that states none (``num_score``)
    entries: tuple[str, ...]


@dataclass(slots=True)
class Span:
    first: int
    last: int
    words: tuple[str, ...]
    nums: tuple[str, ...]
    mems: tuple[int, ...]
    compact: str = ""  # the words run together

    def __post_init__(self) -> None:
        self.compact = "".join(self.words)


def _ratio(a: str, b: str, memo: dict[tuple[str, str], float]) -> float:
    """Spelling similarity of two words, 0 below 60 so that unrelated words earn nothing."""
    hit = memo.get((a, b))
    if hit is None:
        r = fuzz.ratio(a, b)
        hit = memo[(a, b)] = r if r >= 60 else 0.0
    return hit


def _word_sim(span: Span, alias: Alias, memo: dict[tuple[str, str], float]) -> float:
    """How well the span's words cover the alias's words (and the reverse, weighted less)."""
    qw, aw = span.words, alias.words
    if not qw:
        return 100.0 - 25.0 * len(aw)
    if not aw:
        return max(0.0, 100.0 - 35.0 * len(qw))
    # sims[j][i]: span word j against alias word i (the ratio is symmetric: one call per pair)
    sims = [[_ratio(q, a, memo) for a in aw] for q in qw]
    q_cov = sum(max(row) for row in sims) / len(qw)
    best = sims[0] if len(qw) == 1 else [max(col) for col in zip(*sims, strict=True)]
    a_len = sum(len(a) for a in aw)
    a_cov = sum(len(a) * b for a, b in zip(aw, best, strict=True)) / a_len
    return max(fuzz.ratio(span.compact, alias.compact), 0.7 * q_cov + 0.3 * a_cov)


def num_score(span: Span, alias: Alias) -> float:
    """Penalties for numbers that disagree; a wrong size ("8b" for "70b") costs the most."""
    left = list(alias.nums)
    score = 0.0
    for t in span.nums:
        if t in left:
            left.remove(t)
        elif t.endswith("s") and t[:-1] in left:  # "h100s"
            left.remove(t[:-1])
        elif t.isdecimal() and alias.memory is not None and int(t) == alias.memory:
            score += 10.0
        elif (prefix := next((a for a in left if _version_prefix(t, a)), None)) is not None:
            left.remove(prefix)  # "llama 3 70b" for "llama 3.1 70b": a version left short
            score -= 8.0
        elif (alt := _with_or_without_b(t)) and alt in left:
            left.remove(alt)
        else:
            score -= 30.0
            if alias.has_size and (L.SIZE.fullmatch(t) or (t.isdecimal() and int(t) < 1000)):
                score -= 30.0
    for m in span.mems:
        score += 10.0 if m == alias.memory else -30.0
    # a GPU is its number ("pro" alone is not an RTX PRO 6000); a model name often omits one, but not an
    # identifier ("r1", "k2"): every part is a whole number, so the sum is exact in any order
    if alias.kind != "model":
        return score - 25.0 * len(left)
    return score - sum(20.0 if L.SHORT_ID.fullmatch(a) else 10.0 for a in left)


def _with_or_without_b(t: str) -> str:
    """ "70" for "70b" and "70b" for "70": a size written with or without its unit."""
    return t + "b" if t.isdecimal() else (t[:-1] if t.endswith("b") and t[:-1].isdecimal() else "")


def _version_prefix(t: str, a: str) -> bool:
    """Says whether ``t`` is a version written short ("3" for "3.1", stored as "31")."""
    return len(a) == len(t) + 1 and a.startswith(t) and t.isdecimal() and a.isdecimal()


RANKED = 12  # entries kept per span and kind: the identity check may pass over the closest spellings


Bound = tuple[float, int, float]  # (minus the most an alias can score, its place, the score of its numbers)


@dataclass(slots=True)
class Memo:
    """What the spans of one question share: word ratios, the word and number parts of scores (the index's,
    which outlive the question: they depend on the words and numbers alone), and each span's aliases in the
    order of the most they can score (``alias_bounds``), kept for its ranking."""

    ratios: dict[tuple[str, str], float] = field(default_factory=dict)
    words: dict[tuple[str, ...], dict[tuple[str, ...], float]] = field(default_factory=dict)
    nums: dict[tuple[object, ...], dict[tuple[object, ...], float]] = field(default_factory=dict)
    # id(Ranked) -> its bounds and the scores taken so far (unique: a question's candidates keep their Ranked alive)
    bounds: dict[int, list[Bound]] = field(default_factory=dict)
    scored: dict[int, dict[int, float]] = field(default_factory=dict)


def alias_bounds(span: Span, pool: Iterable[int], aliases: list[Alias], memo: Memo) -> tuple[list[Bound], list[str]]:
    """The aliases of the pool that may name the span as (minus the most they can score, place, number part),
    highest first, and their kinds in the order the pool holds them. The words add at most 100, so an
    alias can score no more than its numbers leave."""
    # a model is named by a word or an identifier ("k2", "r1"), never by a bare size: "7b" alone is no model
    model_ok = bool(span.words) or any(not L.SIZE.fullmatch(n) and not n.isdecimal() for n in span.nums)
    # aliases with the same numbers ("qwen3 8b", "qwen 3 8b") and spans with the same numbers share that part
    by_nums = memo.nums.setdefault((span.nums, span.mems), {})
    bare = not span.nums and not span.mems
    bounds: list[Bound] = []
    kinds: dict[str, None] = {}
    for pos in pool:
        alias = aliases[pos]
        is_model = alias.kind == "model"
        if is_model and not model_ok:
            continue
        num = alias.unmatched if bare else by_nums.get(key := (alias.nums, alias.memory, is_model))
        if num is None:
            num = by_nums[key] = num_score(span, alias)
        kinds[alias.kind] = None
        top = num + 100.0
        bounds.append((-100.0 if top > 100.0 else -top, pos, num))
    bounds.sort()
    return bounds, list(kinds)


def alias_score(span: Span, alias: Alias, num: float, memo: Memo) -> float:
    """Similarity of a span and one alias, roughly 0–100, given the alias's number part; the word part is
    shared by aliases with the same words and by spans with the same words ("qwen" and "qwen 3")."""
    if num + 100.0 < SUGGEST_MIN:  # wrong numbers: no spelling can lift it to a suggestion, skip the word work
        return num + 100.0
    by_words = memo.words.get(span.words)
    if by_words is None:
        by_words = memo.words[span.words] = {}
    words = by_words.get(alias.words)
    if words is None:
        words = by_words[alias.words] = _word_sim(span, alias, memo.ratios)
    return min(100.0, words + num)


def best_scores(
    span: Span, bounds: list[Bound], kinds: list[str], aliases: list[Alias], memo: Memo, scored: dict[int, float]
) -> dict[str, float]:
    """The best score of each kind that reaches SUGGEST_MIN; an alias that cannot beat its kind's best so
    far is not scored. The scores it takes go into ``scored`` (alias place -> score) for the rankings."""
    best = dict.fromkeys(kinds, -1e9)
    for bound, pos, num in bounds:
        alias = aliases[pos]
        if -bound > best[alias.kind]:
            s = scored[pos] = alias_score(span, alias, num, memo)
            best[alias.kind] = max(best[alias.kind], s)
    return {kind: score for kind, score in best.items() if score >= SUGGEST_MIN}


@dataclass(slots=True)
class Ranked:
    """What one span's contents rank: the best score of each kind, each kind's ranking once asked for, and
    the entries a chosen span resolves to (``core.query.resolve``: it depends on the ranking and the text)."""

    span: Span
    pool: frozenset[int]
    best: dict[str, float]
    rankings: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    matches: dict[tuple[object, ...], Match] = field(default_factory=dict)

    def ranking(self, kind: str, aliases: list[Alias], memo: Memo) -> list[tuple[str, float]]:
        ranking = self.rankings.get(kind)
        if ranking is None:
            bounds = memo.bounds.get(id(self)) or alias_bounds(self.span, self.pool, aliases, memo)[0]
            scored = memo.scored.setdefault(id(self), {})
            ranking = self.rankings[kind] = _ranking(self.span, bounds, kind, aliases, memo, scored)
        return ranking


def _ranking(
    span: Span, bounds: list[Bound], kind: str, aliases: list[Alias], memo: Memo, scored: dict[int, float]
) -> list[tuple[str, float]]:
    """The entries of one kind, best first: an entry scores its best alias. Once as many entries as are kept
    score more than an alias can, the aliases after it are not scored."""
    # devices keep a longer list: "mac with 128gb" filters many Macs by memory after ranking
    kept = RANKED if kind == "model" else 4 * RANKED
    scores: dict[str, float] = {}
    floor, level = -1e9, 1.0  # the kept-th best score so far; the bound it was taken at
    for bound, pos, num in bounds:
        alias = aliases[pos]
        if alias.kind != kind:
            continue
        if bound != level:
            level = bound
            if len(scores) >= kept:
                floor = heapq.nlargest(kept, scores.values())[-1]
        if -bound < floor:
            break
        s = scored.get(pos)
        if s is None:
            s = scored[pos] = alias_score(span, alias, num, memo)
        for entry in alias.entries:
            if s > scores.get(entry, -1e9):
                scores[entry] = s
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:kept]

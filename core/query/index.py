"""Where names are in a question: the vocabulary index and the choice of spans.

Runs of tokens that hit the index are scored as n-gram spans against every alias they touch
(``core.query.scores``); the best non-overlapping spans become model and device slots (2–4 each for
comparisons).

The work is the one scoring every span against every alias would do, with what cannot change the
result left out: names written alike share one alias, spans and aliases with the same words or
numbers share those parts of the score (kept on the index across questions, as rankings are),
spans are made and scored best first and not at all once a chosen name covers them, and an alias
whose numbers leave it no chance of the best (or a kept) place is not scored. ``span_score`` is that
score done plainly; the tests hold the shortcuts to it.
"""

from __future__ import annotations

import heapq
import unicodedata
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from rapidfuzz import fuzz, process

from core.models import GIB
from core.query import lexicon as L
from core.query import names as N
from core.query.ordinary_words import ORDINARY_WORDS
from core.query.scores import Alias, Memo, Ranked, Span, alias_bounds, alias_score, best_scores, num_score
from core.query.types import VocabEntry, Vocabulary

CONFIDENT = 80.0  # a best score at or above this, with MARGIN to the runner-up, is an answer
MARGIN = 4.0
MAX_SPAN = 7
MAX_NAME_TOKENS = 64  # a question names things early; this bounds the work on a wall of text


# --- index -------------------------------------------------------------------------------


@dataclass(slots=True)
class NameIndex:
    aliases: list[Alias] = field(default_factory=list)
    keys: dict[str, set[int]] = field(default_factory=dict)
    words: list[str] = field(default_factory=list)
    quants: dict[str, str] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    memory: dict[str, float | None] = field(default_factory=dict)
    identity: dict[str, N.Typed] = field(default_factory=dict)  # an entry's facets, from its name and id
    params: dict[str, tuple[float, float]] = field(default_factory=dict)  # models: total, active (billions)
    laptop: dict[str, bool] = field(default_factory=dict)
    chip: dict[str, str] = field(default_factory=dict)
    by_chip: dict[str, list[tuple[int, str]]] = field(default_factory=dict)  # chip -> (place in ``chip``, entry)
    bare: dict[str, str] = field(default_factory=dict)  # devices: the short name without its memory size
    dominant: set[str] = field(default_factory=set)  # devices: the variant a bare chip name means
    cores: dict[str, int] = field(default_factory=dict)  # Apple: GPU cores of the bin
    lineups: dict[str, list[str]] = field(default_factory=dict)  # compact product line -> its configurations
    exact: dict[str, str] = field(default_factory=dict)  # "kind:compact name" -> id, for names typed in full
    primary: dict[str, str] = field(default_factory=dict)  # the same for ids and display names only
    labels: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # kind -> (id, display name)
    spelled: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # kind -> (compact alias, id)
    rankings: OrderedDict[tuple[object, ...], Ranked] = field(
        default_factory=OrderedDict
    )  # span contents + candidate pool -> what they rank (names recur in chats)
    fuzzy: OrderedDict[tuple[str, int], set[int]] = field(default_factory=OrderedDict)  # ``_fuzzy_hits``, kept
    # length -> the words of that length and their places in ``words`` (``near_in_length``): derived
    by_length: dict[int, tuple[list[str], list[int]]] = field(default_factory=dict)
    # word ratios and the word and number parts of span scores (``Memo``), kept across questions as well
    ratios: dict[tuple[str, str], float] = field(default_factory=dict)
    word_parts: dict[tuple[str, ...], dict[tuple[str, ...], float]] = field(default_factory=dict)
    num_parts: dict[tuple[object, ...], dict[tuple[object, ...], float]] = field(default_factory=dict)


_INDEXES: OrderedDict[int, tuple[Vocabulary, NameIndex]] = OrderedDict()


def index_for(vocab: Vocabulary) -> NameIndex:
    """Returns the index of a vocabulary, building it on first use (a small id-keyed memo)."""
    hit = _INDEXES.get(id(vocab))
    if hit is not None and hit[0] is vocab:
        return hit[1]
    return adopt(vocab, build_index(vocab))


def adopt(vocab: Vocabulary, index: NameIndex) -> NameIndex:
    """Makes ``index`` the one ``parse`` uses for ``vocab`` (one stored with the catalog, not built again)."""
    _INDEXES[id(vocab)] = (vocab, index)
    while len(_INDEXES) > 8:
        _INDEXES.popitem(last=False)
    return index


# --- storing: plain lists and dicts (JSON), so the catalog build can keep the index next to the facts

_TABLES = (
    "quants",
    "groups",
    "memory",
    "params",
    "laptop",
    "chip",
    "bare",
    "cores",
    "lineups",
    "exact",
    "primary",
    "labels",
    "spelled",
)


def index_data(idx: NameIndex) -> dict[str, Any]:
    """The index as plain data; ``index_from_data`` reads it back into an equal index."""
    data: dict[str, Any] = {name: getattr(idx, name) for name in _TABLES}
    data["aliases"] = [tuple(a) for a in idx.aliases]
    data["keys"] = {k: sorted(v) for k, v in idx.keys.items()}
    data["words"] = idx.words
    data["dominant"] = sorted(idx.dominant)
    data["identity"] = {
        k: (t.words, t.numbers, t.size_b, t.active_b, sorted(t.variants), sorted(t.tiers), t.laptop, t.memory_gib)
        for k, t in idx.identity.items()
    }
    return data


def index_from_data(data: dict[str, Any]) -> NameIndex:
    """The index stored by ``index_data`` (after a JSON round trip: tuples come back as lists)."""
    idx = NameIndex(**{name: data[name] for name in _TABLES})
    idx.params = {k: (v[0], v[1]) for k, v in idx.params.items()}
    idx.labels = {k: [(a, b) for a, b in v] for k, v in idx.labels.items()}
    idx.spelled = {k: [(a, b) for a, b in v] for k, v in idx.spelled.items()}
    idx.aliases = [Alias(k, tuple(w), c, tuple(n), s, m, u, tuple(e)) for k, w, c, n, s, m, u, e in data["aliases"]]
    idx.keys = {k: set(v) for k, v in data["keys"].items()}
    idx.words = data["words"]
    idx.dominant = set(data["dominant"])
    idx.identity = {
        k: N.Typed(tuple(w), tuple(n), s, a, frozenset(v), frozenset(t), lap, mem)
        for k, (w, n, s, a, v, t, lap, mem) in data["identity"].items()
    }
    _derive(idx)
    return idx


def _derive(idx: NameIndex) -> None:
    """Fills ``by_chip`` from ``chip`` and ``by_length`` from ``words`` (derived, not stored)."""
    for place, (entry, chip) in enumerate(idx.chip.items()):
        idx.by_chip.setdefault(chip, []).append((place, entry))
    for place, w in enumerate(idx.words):
        same = idx.by_length.setdefault(len(w), ([], []))
        same[0].append(w)
        same[1].append(place)


def build_index(vocab: Vocabulary) -> NameIndex:
    """Normalises every alias and maps its tokens back to it."""
    idx = NameIndex()
    shared: dict[tuple[object, ...], int] = {}  # an alias without its entries -> its position
    for kind, entries in (("model", vocab.models), ("gpu", vocab.gpus), ("not", vocab.not_devices)):
        for entry in entries:
            idx.groups[entry.id] = entry.group.lower()
            idx.memory[entry.id] = entry.memory_gib
            # a model's id carries its size ("qwen3-30b-a3b"); a device's may carry its memory as a bare number
            own = (entry.names[0], entry.id) if kind == "model" else entry.names[:2]
            idx.identity[entry.id] = N.typed(" ".join(own))
            idx.params[entry.id] = (entry.total_b or 0.0, entry.active_b or entry.total_b or 0.0)
            idx.laptop[entry.id] = entry.laptop
            idx.chip[entry.id] = entry.chip or entry.id
            if entry.dominant:
                idx.dominant.add(entry.id)
            if entry.gpu_cores:
                idx.cores[entry.id] = entry.gpu_cores
            for line in entry.lineups:
                idx.lineups.setdefault(L.compact(line.lower()), []).append(entry.id)
            idx.bare[entry.id] = L.compact(L.MEM_IN_NAME.sub("", entry.names[0].lower())) if entry.names else entry.id
            idx.labels.setdefault(kind, []).append((entry.id, entry.names[0] if entry.names else entry.id))
            for name in (entry.id, *entry.names[:1]):
                idx.primary.setdefault(f"{kind}:{L.compact(name)}", entry.id)
            for name in (entry.id, *entry.names):
                idx.exact.setdefault(f"{kind}:{L.compact(name)}", entry.id)
                if kind == "model" and "/" in name:  # a repo's name without its owner: "Qwen2.5-7B" of "Qwen/…"
                    idx.exact.setdefault(f"repo:{L.compact(name.split('/', 1)[1])}", entry.id)
                idx.spelled.setdefault(kind, []).append((L.compact(name), entry.id))
                alias = _make_alias(entry, kind, name)
                if alias.words or alias.nums:
                    _add_alias(idx, alias, shared)
    idx.words = sorted(k for k in idx.keys if not any(c.isdecimal() for c in k))
    idx.quants = {L.compact(q): q for q in vocab.quants}
    _derive(idx)
    return idx


def _make_alias(entry: VocabEntry, kind: str, name: str) -> Alias:
    """Turns one display name or alias into comparable parts."""
    text = unicodedata.normalize("NFKC", name).lower().replace("_", " ")
    toks = L.tokenize(text)
    words = tuple(t.key for t in toks if t.kind in ("word", "count"))
    nums = tuple(t.key for t in toks if t.kind == "num")
    mems = [t.value for t in toks if t.kind == "mem"]
    memory = int(entry.memory_gib) if entry.memory_gib else (mems[0] if mems else None)
    has_size = any(L.SIZE.fullmatch(n) for n in nums)
    alias = Alias(kind, words, "".join(words), nums, has_size, memory, 0.0, (entry.id,))
    return alias._replace(unmatched=num_score(Span(0, 0, (), (), ()), alias))


def _add_alias(idx: NameIndex, alias: Alias, shared: dict[tuple[object, ...], int]) -> None:
    """Registers an alias under its words, word pairs, numbers and memory size (or adds its entry to
    the alias written the same way)."""
    form = alias[:-1]
    pos = shared.get(form)
    if pos is not None:
        known = idx.aliases[pos]
        if alias.entries[0] not in known.entries:
            idx.aliases[pos] = known._replace(entries=known.entries + alias.entries)
        return
    pos = shared[form] = len(idx.aliases)
    idx.aliases.append(alias)
    keys = set(alias.words) | set(alias.nums)
    keys |= {a + b for a, b in pairwise(alias.words)}
    keys |= {n[:-1] for n in alias.nums if n[:-1].isdecimal() and (n.endswith("b") or n.isdecimal())}
    if alias.memory:
        keys.add(str(alias.memory))
        keys.add(str(round(alias.memory * GIB / 1e9)))  # "288 GB" for 268 GiB: spec sheets mix the units
    for key in keys:
        idx.keys.setdefault(key, set()).add(pos)


# --- finding names -----------------------------------------------------------------------


@dataclass(slots=True)
class Candidate:
    score: float
    span: Span
    kind: str
    ranked: Ranked
    idx: NameIndex
    memo: Memo

    @property
    def ranking(self) -> list[tuple[str, float]]:
        """The entries of this kind the span's words rank, best first (worked out when first asked for:
        most spans lose to a longer or better one and need only their best score)."""
        return self.ranked.ranking(self.kind, self.idx.aliases, self.memo)


def _relevance(toks: list[L.Tok], seq: list[int], idx: NameIndex) -> dict[int, set[int]]:
    """Maps each token position to the aliases it may belong to (exact, fuzzy or joined)."""
    rel: dict[int, set[int]] = {}
    for i in seq:
        t = toks[i]
        keys = [str(t.value)] if t.kind == "mem" else [t.key]
        if t.kind == "num" and t.key.isdecimal():
            keys.append(t.key + "b")
        if t.kind == "num" and t.key.endswith("s"):
            keys.append(t.key[:-1])  # "h100s"
        found = [idx.keys[key] for key in keys if key in idx.keys]
        # the index's own set when one key hits (these sets are read, never changed)
        hits = found[0] if len(found) == 1 else set().union(*found)
        if not hits and t.kind == "word" and len(t.key) >= 4:
            hits = _fuzzy_hits(t.key, idx, 75)
        if hits:
            rel[i] = hits
    for a, b in pairwise(seq):
        if toks[a].kind == toks[b].kind == "word" and toks[a].key not in L.FILLER and toks[b].key not in L.FILLER:
            joined = _fuzzy_hits(toks[a].key + toks[b].key, idx, 85)  # "vs" + "jetson" is no "jetson"
            if joined:
                rel[a] = rel.get(a, set()) | joined
                rel[b] = rel.get(b, set()) | joined
    return rel


def _fuzzy_hits(word: str, idx: NameIndex, cutoff: int) -> set[int]:
    """Aliases holding a word spelt like this one (memoised: words recur in chats; not to be changed)."""
    hits = idx.fuzzy.get((word, cutoff))
    if hits is None:
        hits = idx.fuzzy[(word, cutoff)] = set()
        words, places = near_in_length(idx, len(word), cutoff)
        found = process.extract(word, words, scorer=fuzz.ratio, score_cutoff=cutoff, limit=None)
        # the six best, ties in the index's order: what the same look-up over every word gives
        for key, _, _ in sorted(found, key=lambda f: (-f[1], places[f[2]]))[:6]:
            hits |= idx.keys[key]
        if len(idx.fuzzy) > RANKING_CACHE:
            idx.fuzzy.popitem(last=False)
    return hits


def near_in_length(idx: NameIndex, n: int, cutoff: int) -> tuple[list[str], list[int]]:
    """The index's words whose length lets them reach ``cutoff`` against a word of ``n`` letters, and their
    places in the index (``fuzz.ratio`` is at most 200·min(n, m) / (n + m): no edit makes up a length apart)."""
    words: list[str] = []
    places: list[int] = []
    for m in range(-(-cutoff * n // (200 - cutoff)), (200 - cutoff) * n // cutoff + 1):
        if bucket := idx.by_length.get(m):
            words += bucket[0]
            places += bucket[1]
    return words, places


def _runs(seq: list[int], rel: dict[int, set[int]], joined: set[int]) -> Iterator[list[int]]:
    """Yields maximal runs of relevant tokens whose neighbours share an alias (none across a joiner)."""
    run: list[int] = []
    for i in seq:
        if i in rel and run and rel[run[-1]] & rel[i] and i not in joined:
            run.append(i)
            continue
        if run:
            yield run
        run = [i] if i in rel else []
    if run:
        yield run


# words no name holds, that end one ("vl for qwen3 8b" is "vl", then "qwen3 8b")
NAME_BREAKS = frozenset(["for", "für", "fuer", "on", "auf", "with", "mit", "in", "im", "at", "bei", "to", "zu", "from",
                         "using", "as", "als", "than",
                         # and the verbs between a device and a model: "can my 4090 D run deepseek r1"
                         "run", "runs", "running", "fit", "fits", "handle", "handles", "load", "läuft", "laufen",
                         "passt", "schafft"])  # fmt: skip


def _after_break(toks: list[L.Tok], seq: list[int], breaks: frozenset[int]) -> set[int]:
    """Name tokens with one of ``NAME_BREAKS``, or a break the parser found, between them and the
    name token before."""
    out: set[int] = set()
    for before, i in pairwise(seq):
        if any(toks[j].key in NAME_BREAKS or j in breaks for j in range(before + 1, i + 1)):
            out.add(i)
    return out


def candidates(
    toks: list[L.Tok],
    idx: NameIndex,
    used: set[int],
    breaks: frozenset[int] = frozenset(),
    glued: frozenset[int] = frozenset(),
) -> Iterator[Candidate]:
    """Yields one candidate per span and kind, best first (``_place``).

    A span is scored only when its turn may have come: no candidate of it can be placed better than a
    score of 100 would place it. By then a span that overlaps ``used`` (the positions the caller has
    taken so far) is dropped unscored: the caller passes over every candidate that overlaps them, and
    its turn comes later still. The order is the one sorting every scored candidate would give."""
    seq = [i for i, t in enumerate(toks) if t.kind in ("word", "num", "mem")][:MAX_NAME_TOKENS]
    rel = _relevance(toks, seq, idx)
    if len(idx.ratios) > PARTS_KEPT:
        for parts in (idx.ratios, idx.word_parts, idx.num_parts):
            parts.clear()
    memo = Memo(idx.ratios, idx.word_parts, idx.num_parts)
    # (place, first position, span number, kind number or -1 for a span not made yet, candidate or positions)
    queue: list[tuple[float, int, int, int, Candidate | list[int]]] = []
    for run in _runs(seq, rel, {i for i in seq if toks[i].joined} | _after_break(toks, seq, breaks)):
        numbered = [toks[i].kind == "num" for i in run]
        for a in range(len(run)):
            if a + 1 < len(run) and _stray_number(toks, run[a]):
                continue  # "phi-4 on a mac mini m4 pro": the 4 is the model's, not the Mac's
            if run[a] in glued:
                continue  # "MiniMax-M2 RTX PRO 4000": a hyphen joins "m2" to the name before it
            for b in range(a, min(len(run), a + MAX_SPAN)):
                top = _order(100.0, run[b] - run[a], True in numbered[a : b + 1])
                queue.append((top, run[a], len(queue), -1, run[a : b + 1]))
    heapq.heapify(queue)
    while queue:
        _, first, number, _, item = heapq.heappop(queue)
        if isinstance(item, Candidate):
            yield item
            continue
        if not used.isdisjoint(range(first, item[-1] + 1)):
            continue
        pool = rel[first] & rel[item[-1]]  # an alias that misses an edge token scores better on the shorter span
        if not pool:
            continue
        span = make_span(toks, item)  # made only now: most spans overlap a name taken before their turn
        if span.words or any(not n.isdecimal() or int(n) >= 100 for n in span.nums):
            for k, c in enumerate(_rank(span, pool, idx, memo)):
                heapq.heappush(queue, (_place(c.score, c.span, c.kind), first, number, k, c))


def _place(score: float, span: Span, kind: str) -> float:
    """Orders candidates, lowest first. A longer span wins a near tie: "m3 ultra 512" beats "ultra" alone;
    a device named by its number beats one named by words: "B300" over "Blackwell Ultra"."""
    return _order(score, span.last - span.first, kind != "model" and bool(span.nums))


def _stray_number(toks: list[L.Tok], i: int) -> bool:
    """A small bare number followed by a word like "on" or "auf": the end of one name, never the start of
    a longer one (it still forms a span of its own); or a count before a model number ("3 m2 max")."""
    t = toks[i]
    if not (t.kind == "num" and t.key.isdecimal() and int(t.key) < 100 and i + 1 < len(toks)):
        return False
    after = toks[i + 1]
    # "on 3 m2 max", "4 jetson orin": a small number no word stands before, then a model number or a word, is a count
    counted = (i == 0 or toks[i - 1].kind == "skip") and (
        (after.kind == "num" and not after.key.isdecimal()) or after.kind == "word"
    )
    return after.kind == "skip" or counted


def _order(score: float, width: int, numbered: bool) -> float:
    return -score - 1.5 * width - (1.0 if numbered else 0.0)


def make_span(toks: list[L.Tok], positions: list[int]) -> Span:
    """Collects the words, numbers and GB figures of some token positions."""
    words: list[str] = []
    nums: list[str] = []
    mems: list[int] = []
    for i in positions:
        t = toks[i]
        if t.kind == "word":
            words.append(t.key)
        elif t.kind == "num":
            nums.append(t.key)
        elif t.kind == "mem":
            mems.append(t.value)
    return Span(positions[0], positions[-1], tuple(words), tuple(nums), tuple(mems))


RANKING_CACHE = 4096
PARTS_KEPT = 1 << 16  # word ratios kept, and with them the score parts (a few MB)


def _rank(span: Span, pool: set[int], idx: NameIndex, memo: Memo) -> list[Candidate]:
    """The best score of each kind for one span (memoised: the result depends on the span's
    contents and the pool only, not on where the span stands in the text)."""
    key = (span.words, span.nums, span.mems, frozenset(pool))
    ranked = idx.rankings.get(key)
    if ranked is None:
        bounds, kinds = alias_bounds(span, pool, idx.aliases, memo)
        scored: dict[int, float] = {}
        ranked = idx.rankings[key] = Ranked(span, key[3], best_scores(span, bounds, kinds, idx.aliases, memo, scored))
        memo.bounds[id(ranked)], memo.scored[id(ranked)] = bounds, scored
        if len(idx.rankings) > RANKING_CACHE:
            idx.rankings.popitem(last=False)
    return [Candidate(score, span, kind, ranked, idx, memo) for kind, score in ranked.best.items()]


def span_score(span: Span, alias: Alias) -> float:
    """Similarity of a span and one alias, scored afresh: what every ranking orders by (the memoised and
    pruned paths of ``candidates`` must agree with it)."""
    return alias_score(span, alias, num_score(span, alias), Memo())


def select_names(
    toks: list[L.Tok],
    idx: NameIndex,
    after_tool: frozenset[int] = frozenset(),
    breaks: frozenset[int] = frozenset(),
    glued: frozenset[int] = frozenset(),
) -> dict[str, Candidate]:
    """Takes the best non-overlapping spans: model, model2, gpu, gpu2 and not (a non-device).

    A model name made only of everyday words ("command", "air", "dev setup", "step by step") is a
    name only where the sentence uses it as one: never beside another model name, only when it is a
    whole alias (not one word of a longer name), and not right after an engine ("ollama command").
    ``after_tool`` holds the positions an engine's name stood right before; no name runs across
    ``breaks`` (punctuation or a word the parser read as something else stood there)."""
    chosen: dict[str, Candidate] = {}
    used: set[int] = set()
    slots = {"model": ("model", "model2", "model3", "model4"), "gpu": ("gpu", "gpu2", "gpu3", "gpu4"), "not": ("not",)}
    for c in candidates(toks, idx, used, breaks, glued):
        span_pos = set(range(c.span.first, c.span.last + 1))
        if span_pos & used:
            continue
        free = [s for s in slots[c.kind] if s not in chosen]
        if not free or (free[0] != slots[c.kind][0] and not _second_ok(c, chosen[slots[c.kind][0]])):
            continue
        if (c.kind == "not" and c.score < CONFIDENT) or _filler_only(c, toks, idx):
            continue
        chosen[free[0]] = c
        used |= span_pos
    for kind in ("model", "gpu"):
        taken = [chosen.pop(s) for s in slots[kind] if s in chosen]
        real = any(not _everyday(c, toks, idx) for c in taken)
        # "for X" is what a device or the model asked for is for ("is my 4090 good for scout", "welches modell
        # für seed"); with neither, X is the model the question is about ("what gpu for scout")
        purpose = any(s in chosen for s in slots["gpu"]) or any(t.key in MODEL_WORDS for t in toks)
        kept = [c for c in taken if not _not_a_name(c, real, toks, idx, after_tool, purpose)]
        chosen.update(zip(slots[kind], kept, strict=False))
    for kind in ("model", "gpu"):  # slots in the order the names were written
        names = [s for s in slots[kind] if s in chosen]
        ordered = sorted((chosen[s] for s in names), key=lambda c: c.span.first)
        chosen.update(zip(names, ordered, strict=True))
    return chosen


COMPARE_WORDS = frozenset(["vs", "versus", "or", "oder", "gegen", "gegenüber", "and", "und"])


def _not_a_name(
    c: Candidate, beside_real: bool, toks: list[L.Tok], idx: NameIndex, after: frozenset[int], purpose: bool = False
) -> bool:
    """An everyday-word span the sentence does not use as a name: beside a real name of its kind, one
    word from the middle of a longer name ("air", "dev"), right after an engine's name, or after a word
    that makes it a noun ("which seed") or, where ``purpose``, a purpose ("good for scout work")."""
    if not _everyday(c, toks, idx) or _listed_name(c, toks):
        return False
    if beside_real or not (c.score >= 100.0 or _family_word(c, toks, idx)) or c.span.first in after:
        return True
    if c.kind != "model" or c.span.first == 0 or _named_after(c, toks):
        return False  # "für phi-3 medium", "for command a": a version, size or letter right after makes it a name
    before = toks[c.span.first - 1].key
    return before in NOUN_BEFORE or (purpose and before in PURPOSE_BEFORE)


def _named_after(c: Candidate, toks: list[L.Tok]) -> bool:
    """A version, size or name letter right after the span ("phi-3", "seed 36b", "command r"): a name's words."""
    j = c.span.last + 1
    if j >= len(toks) or toks[j].start - toks[j - 1].end > 1:
        return False
    return toks[j].kind == "num" or (len(toks[j].key) == 1 and toks[j].key.isalpha())


MODEL_WORDS = frozenset(["model", "models", "modell", "modelle", "llm", "llms"])


# words after which an everyday word is what the thing is for, not a model ("good for seed work", "gut für scout")
PURPOSE_BEFORE = frozenset(["for", "für", "fuer", "zum", "zur"])


# words after which an everyday word is the everyday noun ("which seed", "the command")
NOUN_BEFORE = frozenset(["which", "what", "the", "a", "an", "my", "your", "this", "that", "some", "any", "welche",
                         "welcher", "welches", "welchen", "der", "die", "das", "den", "dem", "ein", "eine", "einen",
                         "mein", "meine"])  # fmt: skip


def _listed_name(c: Candidate, toks: list[L.Tok]) -> bool:
    """A name set against another ("granite vs qwen3 8b", "qwen3 8b oder phi"); a comma is not enough."""
    around = toks[max(c.span.first - 1, 0) : c.span.first] + toks[c.span.last + 1 : c.span.last + 2]
    return any(t.key in COMPARE_WORDS for t in around)


def _family_word(c: Candidate, toks: list[L.Tok], idx: NameIndex) -> bool:
    """The span starts with the family word its best entries' names start with ("granite", "phi"):
    a family named, asked about by size; not one word from the middle of a name ("dev", "air")."""
    first = toks[c.span.first].key
    best = [entry for entry, score in c.ranking[:3] if score >= c.score - 1.0]
    return any((typed := idx.identity.get(entry)) is not None and typed.words[:1] == (first,) for entry in best)


def _everyday(c: Candidate, toks: list[L.Tok], idx: NameIndex) -> bool:
    """A model or device span of everyday words only: one or more of ``ORDINARY_WORDS`` and otherwise
    words no name has ("by" in "step by step"); a number, or any word only a name has, makes it a name."""
    if c.kind == "not":
        return False
    if c.kind == "gpu" and c.span.first > 0 and toks[c.span.first - 1].key in L.VENDOR_WORDS:
        return False  # "Radeon VII", "RTX Spark": a vendor's word before it makes it a name
    named = [t for t in toks[c.span.first : c.span.last + 1] if t.kind in ("word", "num", "mem")]
    return any(t.key in ORDINARY_WORDS for t in named) and all(
        t.kind == "word" and (t.key in ORDINARY_WORDS or t.key not in idx.keys) for t in named
    )


def _filler_only(c: Candidate, toks: list[L.Tok], idx: NameIndex) -> bool:
    """A span of the parser's filler words that no name has ("german" in "a model for german text", "cheapest"):
    what the question is about or for, never a name, however near a name it scores."""
    named = [t for t in toks[c.span.first : c.span.last + 1] if t.kind in ("word", "num", "mem")]
    return bool(named) and all(t.kind == "word" and t.key in L.FILLER and t.key not in idx.keys for t in named)


def _second_ok(c: Candidate, first: Candidate) -> bool:
    """A second model or GPU must be a confident, different name."""
    return c.score >= CONFIDENT and c.ranking[0][0] != first.ranking[0][0]

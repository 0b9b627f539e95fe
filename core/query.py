"""Free text (German or English) → ``Query``: what the user asked and about which model and GPU.

How it works, in three passes over one cleaned, lower-cased string:

1. Patterns (``core.query_lexicon``) take out what has a fixed shape: the /command, a Hugging
   Face repo id, engine, KV-cache type, prompt length, users, system RAM, context and quant.
   Each match is blanked with spaces, so character offsets keep pointing into the user's text.
2. The rest is cut into tokens. Words may be misspelt; numbers inside names ("8b", "3.1", "4090",
   "m3") are identity and must agree, so they are compared apart from the words and a wrong
   size costs more than any spelling can earn back.
3. Runs of tokens that hit the vocabulary index are scored as n-gram spans against every alias
   they touch; the best non-overlapping spans become model, GPU and (for compare) a second of
   each. A weak or close best gives ``ambiguous=True`` and up to three suggestions.

Pure: no I/O, no env, no clock. ``parse`` never raises; the index is built once per vocabulary.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import pairwise
from typing import Literal

from rapidfuzz import fuzz, process

from core import names as N
from core import query_lexicon as L
from core.models import GIB, Engine, Frozen, KvCacheType

CONFIDENT = 80.0  # a best score at or above this, with MARGIN to the runner-up, is an answer
MARGIN = 4.0
SUGGEST_MIN = 60.0  # below this a candidate is not worth a "did you mean"
MAX_SPAN = 7
MAX_NAME_TOKENS = 64  # a question names things early; this bounds the work on a wall of text


class VocabEntry(Frozen):
    """One nameable thing: a model, a GPU or a device that does not exist."""

    id: str
    names: tuple[str, ...]  # display name first, then aliases
    memory_gib: float | None = None  # GPUs: picks the memory config ("mac studio 128gb")
    group: str = ""  # e.g. GPU category "apple"
    total_b: float | None = None  # models: parameters in billions, the size a user names
    active_b: float | None = None
    laptop: bool = False  # devices: a laptop part is not its desktop namesake
    chip: str = ""  # devices: memory variants of one chip share it


class Vocabulary(Frozen):
    """Everything the parser may recognise by name; the caller builds it from the catalog."""

    models: tuple[VocabEntry, ...]
    gpus: tuple[VocabEntry, ...]
    quants: tuple[str, ...]
    not_devices: tuple[VocabEntry, ...] = ()


class Intent(StrEnum):
    FIT = "fit"
    SPEED = "speed"
    CLOUD = "cloud"
    QUANT = "quant"
    GPUS = "gpus"
    MODELS = "models"
    FINETUNE = "finetune"
    TCO = "tco"
    COMPARE = "compare"


class Match(Frozen):
    """A name the user wrote and what it resolved to; ``id`` is None when it did not resolve.

    ``suggestions`` are "did you mean" entries (same family only); ``choices`` are entries that
    differ only in memory, to be asked about with buttons; ``unknown`` says that nothing in the
    catalog is the thing typed (look it up, or say "I don't know"); ``memory_gib`` is a memory size
    the user gave for a device; ``assumed`` names the entry picked for a bare name that has siblings
    ("h100" → the SXM board).
    """

    id: str | None
    text: str
    score: float
    suggestions: tuple[str, ...] = ()
    ambiguous: bool = False
    choices: tuple[str, ...] = ()
    unknown: bool = False
    memory_gib: int | None = None
    assumed: bool = False


class Query(Frozen):
    """What one message asks; ``explicit`` names the fields the user set."""

    intent: Intent = Intent.FIT
    model: Match | None = None
    model2: Match | None = None
    gpu: Match | None = None
    gpu2: Match | None = None
    gpu_count: int = 1
    gpu2_count: int = 1
    memory_gib: float | None = None
    not_device: str | None = None
    hf_repo: str | None = None
    quant: str | None = None
    context: int | None = None
    kv_cache: KvCacheType | None = None
    ram_gb: float | None = None
    engine: Engine | None = None
    prompt_tokens: int | None = None
    users: int | None = None
    language: Literal["de", "en"] | None = None
    finetune_method: Literal["qlora", "lora", "full"] | None = None
    more_models: tuple[Match, ...] = ()  # a third and fourth model of a comparison
    more_gpus: tuple[Match, ...] = ()  # a third and fourth device
    more_gpu_counts: tuple[int, ...] = ()
    device_kind: Literal["gpu", "laptop", "cpu"] | None = None  # a device named only by its memory
    device_memory_gib: float | None = None  # "16 GB VRAM", "a GPU with 24 GB"
    memory_only: bool = False  # "how much VRAM do I need for ...": no device wanted
    other_engine: str | None = None  # an engine FitBot does not model (exl2, MLX, SGLang)
    model_text: str | None = None  # a model-like phrase that matched nothing ("olmo 2 7b")
    gpu_text: str | None = None  # a device-like phrase that matched nothing ("rtx 3070")
    leftovers: tuple[str, ...] = ()
    explicit: frozenset[str] = frozenset()


# --- index -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Alias:
    entry: str
    kind: str  # model, gpu, not
    words: tuple[str, ...]
    compact: str
    nums: tuple[str, ...]
    has_size: bool
    memory: int | None


@dataclass(slots=True)
class _Index:
    aliases: list[_Alias] = field(default_factory=list)
    keys: dict[str, set[int]] = field(default_factory=dict)
    words: list[str] = field(default_factory=list)
    quants: dict[str, str] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    memory: dict[str, float | None] = field(default_factory=dict)
    identity: dict[str, N.Typed] = field(default_factory=dict)  # an entry's facets, from its name and id
    params: dict[str, tuple[float, float]] = field(default_factory=dict)  # models: total, active (billions)
    laptop: dict[str, bool] = field(default_factory=dict)
    chip: dict[str, str] = field(default_factory=dict)
    bare: dict[str, str] = field(default_factory=dict)  # devices: the short name without its memory size
    exact: dict[str, str] = field(default_factory=dict)  # "kind:compact name" -> id, for names typed in full
    primary: dict[str, str] = field(default_factory=dict)  # the same for ids and display names only
    labels: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # kind -> (id, display name)
    spelled: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # kind -> (compact alias, id)
    rankings: OrderedDict[tuple[object, ...], list[tuple[str, list[tuple[str, float]]]]] = field(
        default_factory=OrderedDict
    )  # span contents + candidate pool -> ranking per kind (names recur in chats)


_INDEXES: OrderedDict[int, tuple[Vocabulary, _Index]] = OrderedDict()


def _index_for(vocab: Vocabulary) -> _Index:
    """Returns the index of a vocabulary, building it on first use (a small id-keyed memo)."""
    hit = _INDEXES.get(id(vocab))
    if hit is not None and hit[0] is vocab:
        return hit[1]
    index = _build_index(vocab)
    _INDEXES[id(vocab)] = (vocab, index)
    while len(_INDEXES) > 8:
        _INDEXES.popitem(last=False)
    return index


def _build_index(vocab: Vocabulary) -> _Index:
    """Normalises every alias and maps its tokens back to it."""
    idx = _Index()
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
            idx.bare[entry.id] = L.compact(L.MEM_IN_NAME.sub("", entry.names[0].lower())) if entry.names else entry.id
            idx.labels.setdefault(kind, []).append((entry.id, entry.names[0] if entry.names else entry.id))
            for name in (entry.id, *entry.names[:1]):
                idx.primary.setdefault(f"{kind}:{L.compact(name)}", entry.id)
            for name in (entry.id, *entry.names):
                idx.exact.setdefault(f"{kind}:{L.compact(name)}", entry.id)
                idx.spelled.setdefault(kind, []).append((L.compact(name), entry.id))
                alias = _make_alias(entry, kind, name)
                if alias.words or alias.nums:
                    _add_alias(idx, alias)
    idx.words = sorted(k for k in idx.keys if not any(c.isdecimal() for c in k))
    idx.quants = {L.compact(q): q for q in vocab.quants}
    return idx


def _make_alias(entry: VocabEntry, kind: str, name: str) -> _Alias:
    """Turns one display name or alias into comparable parts."""
    text = unicodedata.normalize("NFKC", name).lower().replace("_", " ")
    toks = L.tokenize(text)
    words = tuple(t.key for t in toks if t.kind in ("word", "count"))
    nums = tuple(t.key for t in toks if t.kind == "num")
    mems = [t.value for t in toks if t.kind == "mem"]
    memory = int(entry.memory_gib) if entry.memory_gib else (mems[0] if mems else None)
    has_size = any(L.SIZE.fullmatch(n) for n in nums)
    return _Alias(entry.id, kind, words, "".join(words), nums, has_size, memory)


def _add_alias(idx: _Index, alias: _Alias) -> None:
    """Registers an alias under its words, word pairs, numbers and memory size."""
    pos = len(idx.aliases)
    idx.aliases.append(alias)
    keys = set(alias.words) | set(alias.nums)
    keys |= {a + b for a, b in pairwise(alias.words)}
    keys |= {n[:-1] for n in alias.nums if n[:-1].isdecimal() and (n.endswith("b") or n.isdecimal())}
    if alias.memory:
        keys.add(str(alias.memory))
        keys.add(str(round(alias.memory * GIB / 1e9)))  # "288 GB" for 268 GiB: spec sheets mix the units
    for key in keys:
        idx.keys.setdefault(key, set()).add(pos)


# --- scoring -----------------------------------------------------------------------------


@dataclass(slots=True)
class _Span:
    first: int
    last: int
    words: tuple[str, ...]
    nums: tuple[str, ...]
    mems: tuple[int, ...]

    @property
    def compact(self) -> str:
        return "".join(self.words)


def _ratio(a: str, b: str, memo: dict[tuple[str, str], float]) -> float:
    """Spelling similarity of two words, 0 below 60 so that unrelated words earn nothing."""
    hit = memo.get((a, b))
    if hit is None:
        r = fuzz.ratio(a, b)
        hit = memo[(a, b)] = r if r >= 60 else 0.0
    return hit


def _word_sim(span: _Span, alias: _Alias, memo: dict[tuple[str, str], float]) -> float:
    """How well the span's words cover the alias's words (and the reverse, weighted less)."""
    qw, aw = span.words, alias.words
    if not qw:
        return 100.0 - 25.0 * len(aw)
    if not aw:
        return max(0.0, 100.0 - 35.0 * len(qw))
    q_cov = sum(max(_ratio(q, a, memo) for a in aw) for q in qw) / len(qw)
    a_len = sum(len(a) for a in aw)
    a_cov = sum(len(a) * max(_ratio(a, q, memo) for q in qw) for a in aw) / a_len
    return max(fuzz.ratio(span.compact, alias.compact), 0.7 * q_cov + 0.3 * a_cov)


def _num_score(span: _Span, alias: _Alias) -> float:
    """Penalties for numbers that disagree; a wrong size ("8b" for "70b") costs the most."""
    left = list(alias.nums)
    score = 0.0
    for t in span.nums:
        alt = t + "b" if t.isdecimal() else (t[:-1] if t.endswith("b") and t[:-1].isdecimal() else "")
        prefix = next((a for a in left if _version_prefix(t, a)), None)
        if t in left:
            left.remove(t)
        elif t.endswith("s") and t[:-1] in left:  # "h100s"
            left.remove(t[:-1])
        elif t.isdecimal() and alias.memory is not None and int(t) == alias.memory:
            score += 10.0
        elif prefix is not None:  # "llama 3 70b" for "llama 3.1 70b": a version left short
            left.remove(prefix)
            score -= 8.0
        elif alt and alt in left:
            left.remove(alt)
        else:
            score -= 30.0
            if alias.has_size and (L.SIZE.fullmatch(t) or (t.isdecimal() and int(t) < 1000)):
                score -= 30.0
    for m in span.mems:
        score += 10.0 if m == alias.memory else -30.0
    # a GPU is its number ("pro" alone is not an RTX PRO 6000); a model name often omits one
    miss = 25.0 if alias.kind != "model" else 10.0
    return score - sum(max(miss, 20.0) if L.SHORT_ID.fullmatch(a) else miss for a in left)


def _version_prefix(t: str, a: str) -> bool:
    """Says whether ``t`` is a version written short ("3" for "3.1", stored as "31")."""
    return len(a) == len(t) + 1 and a.startswith(t) and t.isdecimal() and a.isdecimal()


def _score(span: _Span, alias: _Alias, memo: dict[tuple[str, str], float]) -> float:
    """Similarity of a span of the user's tokens and one alias, roughly 0–100."""
    num = _num_score(span, alias)
    if num + 100.0 < SUGGEST_MIN:  # wrong numbers: no spelling can lift it to a suggestion, skip the word work
        return num + 100.0
    return min(100.0, _word_sim(span, alias, memo) + num)


# --- finding names -----------------------------------------------------------------------


@dataclass(slots=True)
class _Cand:
    score: float
    span: _Span
    kind: str
    ranking: list[tuple[str, float]]


def _relevance(toks: list[L.Tok], seq: list[int], idx: _Index) -> dict[int, set[int]]:
    """Maps each token position to the aliases it may belong to (exact, fuzzy or joined)."""
    rel: dict[int, set[int]] = {}
    for i in seq:
        t = toks[i]
        hits: set[int] = set()
        keys = [str(t.value)] if t.kind == "mem" else [t.key]
        if t.kind == "num" and t.key.isdecimal():
            keys.append(t.key + "b")
        if t.kind == "num" and t.key.endswith("s"):
            keys.append(t.key[:-1])  # "h100s"
        for key in keys:
            hits |= idx.keys.get(key, set())
        if not hits and t.kind == "word" and len(t.key) >= 4:
            hits = _fuzzy_hits(t.key, idx, 75)
        if hits:
            rel[i] = hits
    for a, b in pairwise(seq):
        if toks[a].kind == toks[b].kind == "word":
            joined = _fuzzy_hits(toks[a].key + toks[b].key, idx, 85)
            if joined:
                rel[a] = rel.get(a, set()) | joined
                rel[b] = rel.get(b, set()) | joined
    return rel


def _fuzzy_hits(word: str, idx: _Index, cutoff: int) -> set[int]:
    """Aliases holding a word spelt like this one."""
    hits: set[int] = set()
    for key, _, _ in process.extract(word, idx.words, scorer=fuzz.ratio, score_cutoff=cutoff, limit=6):
        hits |= idx.keys[key]
    return hits


def _runs(seq: list[int], rel: dict[int, set[int]]) -> Iterator[list[int]]:
    """Yields maximal runs of relevant tokens whose neighbours share an alias."""
    run: list[int] = []
    for i in seq:
        if i in rel and run and rel[run[-1]] & rel[i]:
            run.append(i)
            continue
        if run:
            yield run
        run = [i] if i in rel else []
    if run:
        yield run


def _candidates(toks: list[L.Tok], idx: _Index) -> list[_Cand]:
    """Scores every span of every run; one candidate per span and kind, best first."""
    seq = [i for i, t in enumerate(toks) if t.kind in ("word", "num", "mem")][:MAX_NAME_TOKENS]
    rel = _relevance(toks, seq, idx)
    memo: dict[tuple[str, str], float] = {}
    cands: list[_Cand] = []
    for run in _runs(seq, rel):
        for a in range(len(run)):
            for b in range(a, min(len(run), a + MAX_SPAN)):
                # an alias that misses an edge token scores better on the shorter span
                pool = rel[run[a]] & rel[run[b]]
                if not pool:
                    continue
                span = _make_span(toks, run[a : b + 1])
                if span.words or any(not n.isdecimal() or int(n) >= 100 for n in span.nums):
                    cands.extend(_rank(span, pool, idx, memo))
    # a longer span wins a near tie: "m3 ultra 512" beats "ultra" alone
    # a device named by its number beats one named by words: "B300" over "Blackwell Ultra"
    cands.sort(
        key=lambda c: (-c.score - 1.5 * (c.span.last - c.span.first) - (1.0 if c.kind != "model" and c.span.nums else 0.0),
                       c.span.first)
    )  # fmt: skip
    return cands


def _make_span(toks: list[L.Tok], positions: list[int]) -> _Span:
    """Collects the words, numbers and GB figures of some token positions."""
    ts = [toks[i] for i in positions]
    return _Span(
        positions[0],
        positions[-1],
        tuple(t.key for t in ts if t.kind == "word"),
        tuple(t.key for t in ts if t.kind == "num"),
        tuple(t.value for t in ts if t.kind == "mem"),
    )


RANKING_CACHE = 4096
RANKED = 12  # entries kept per span and kind: the identity check may pass over the closest spellings


def _rank(span: _Span, pool: set[int], idx: _Index, memo: dict[tuple[str, str], float]) -> list[_Cand]:
    """Ranks the entries of each kind for one span (memoised: the result depends on the span's
    contents and the pool only, not on where the span stands in the text)."""
    key = (span.words, span.nums, span.mems, frozenset(pool))
    cached = idx.rankings.get(key)
    if cached is None:
        cached = idx.rankings[key] = _rank_uncached(span, pool, idx, memo)
        if len(idx.rankings) > RANKING_CACHE:
            idx.rankings.popitem(last=False)
    return [_Cand(ranking[0][1], span, kind, ranking) for kind, ranking in cached]


def _rank_uncached(
    span: _Span, pool: set[int], idx: _Index, memo: dict[tuple[str, str], float]
) -> list[tuple[str, list[tuple[str, float]]]]:
    best: dict[str, dict[str, float]] = {}
    # a model is named by a word or an identifier ("k2", "r1"), never by a bare size: "7b" alone is no model
    model_ok = bool(span.words) or any(not L.SIZE.fullmatch(n) and not n.isdecimal() for n in span.nums)
    for pos in pool:
        alias = idx.aliases[pos]
        if alias.kind == "model" and not model_ok:
            continue
        s = _score(span, alias, memo)
        per_kind = best.setdefault(alias.kind, {})
        if s > per_kind.get(alias.entry, -1e9):
            per_kind[alias.entry] = s
    out = []
    for kind, scores in best.items():
        # devices keep a longer list: "mac with 128gb" filters many Macs by memory after ranking
        ranking = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[: RANKED if kind == "model" else 4 * RANKED]
        if ranking[0][1] >= SUGGEST_MIN:
            out.append((kind, ranking))
    return out


def _select(cands: list[_Cand]) -> dict[str, _Cand]:
    """Takes the best non-overlapping spans: model, model2, gpu, gpu2 and not (a non-device)."""
    chosen: dict[str, _Cand] = {}
    used: set[int] = set()
    slots = {"model": ("model", "model2", "model3", "model4"), "gpu": ("gpu", "gpu2", "gpu3", "gpu4"), "not": ("not",)}
    for c in cands:
        span_pos = set(range(c.span.first, c.span.last + 1))
        if span_pos & used:
            continue
        free = [s for s in slots[c.kind] if s not in chosen]
        if not free or (free[0] != slots[c.kind][0] and not _second_ok(c, chosen[slots[c.kind][0]])):
            continue
        if c.kind == "not" and c.score < CONFIDENT:
            continue
        chosen[free[0]] = c
        used |= span_pos
    for kind in ("model", "gpu"):  # slots in the order the names were written
        names = [s for s in slots[kind] if s in chosen]
        ordered = sorted((chosen[s] for s in names), key=lambda c: c.span.first)
        chosen.update(zip(names, ordered, strict=True))
    return chosen


def _second_ok(c: _Cand, first: _Cand) -> bool:
    """A second model or GPU must be a confident, different name."""
    return c.score >= CONFIDENT and c.ranking[0][0] != first.ranking[0][0]


def _to_match(c: _Cand, text: str, toks: list[L.Tok], idx: _Index, memory: int | None = None) -> Match:
    """Turns a chosen span into a Match: only an entry that *is* what was typed may answer.

    The ranking orders entries by spelling; ``core.names`` then drops every entry that disagrees
    on a stated facet (size, version, variant, tier, form factor) or has one the user did not state.
    """
    words = text[toks[c.span.first].start : toks[c.span.last].end]
    score = round(max(0.0, c.ranking[0][1]), 1)
    if c.kind == "not":
        return Match(id=c.ranking[0][0], text=words, score=score)
    said = N.typed(words)
    if c.kind == "gpu" and said.memory_gib is None:
        said = _bare_memory(said, [e for e, _ in c.ranking], idx)
    memory = said.memory_gib or memory
    whole = _whole_name(c, text, toks)  # with "instruct", "it", "hf" around it, as a catalog alias may be
    exact = idx.exact.get(f"{c.kind}:{L.compact(whole)}") or idx.exact.get(f"{c.kind}:{L.compact(words)}")
    accepted = [(e, s) for e, s in c.ranking if _agrees(c.kind, said, e, idx)]
    if c.kind == "gpu":  # an exact model number beats a plural reading ("L40S" is no plural of "L40")
        literal = [(e, s) for e, s in accepted if all(n in idx.identity[e].numbers for n in said.numbers)]
        accepted = literal or accepted
    keys = (f"{c.kind}:{L.compact(whole)}", f"{c.kind}:{L.compact(words)}")
    typed_id = idx.primary.get(keys[0]) or idx.primary.get(keys[1])
    if c.kind == "model" and whole != words:  # "qwen3-4b-instruct" is an alias of its own model
        typed_id = idx.primary.get(keys[0]) or idx.exact.get(keys[0]) or typed_id
    if typed_id is not None and typed_id in {e for e, _ in accepted}:
        return Match(id=typed_id, text=words, score=score)  # an id or full name typed out: exactly that entry
    if exact and c.kind == "model" and said.size_b is None and _other_sizes(exact, accepted, idx):
        exact = None  # "gemma 3" names a family of several sizes: ask, even if an alias says one of them
    if exact and (exact in {e for e, _ in accepted} or not accepted):
        accepted = [(exact, 100.0)] + [(e, s) for e, s in accepted if e != exact]
    if not accepted:
        family = tuple(e for e, s in c.ranking if s >= SUGGEST_MIN and N.same_family(said, idx.identity[e]))[:3]
        return Match(id=None, text=words, score=score, suggestions=family, unknown=True, memory_gib=memory)
    if c.kind == "gpu":
        return _device_match(accepted, said, words, score, memory, exact, idx)
    (best, s1), s2 = accepted[0], (accepted[1][1] if len(accepted) > 1 else 0.0)
    if said.size_b is None and _other_sizes(best, accepted, idx):  # "gpt oss": 20b or 120b? ask
        sizes = tuple(dict.fromkeys(e for e, _ in accepted))[:3]
        return Match(id=None, text=words, score=score, suggestions=sizes, ambiguous=True)
    if best == exact or len(accepted) == 1 or (s1 >= CONFIDENT - 10 and s1 - s2 >= MARGIN):
        return Match(id=best, text=words, score=score)
    return Match(id=None, text=words, score=score, suggestions=tuple(e for e, _ in accepted[:3]), ambiguous=True)


def _join_split_name(chosen: dict[str, _Cand], toks: list[L.Tok]) -> None:
    """ "gemma 3" + "coder 7b": a second model span right after a first one that names no size, and that
    starts with a variant or a size, is the rest of the same name, not a second model."""
    first, second = chosen.get("model"), chosen.get("model2")
    if first is None or second is None or second.span.first != first.span.last + 1:
        return
    if any(N.MODEL_SIZE.fullmatch(n) for n in first.span.nums):
        return
    head = toks[second.span.first]
    if head.key in N.MODEL_VARIANTS or (head.kind == "num" and N.MODEL_SIZE.fullmatch(head.text.lower())):
        first.span = _make_span(toks, list(range(first.span.first, second.span.last + 1)))
        del chosen["model2"]
        for later in ("model3", "model4"):
            if later in chosen:
                chosen["model2" if "model2" not in chosen else later] = chosen.pop(later)


def _whole_name(c: _Cand, text: str, toks: list[L.Tok]) -> str:
    """The span's text plus the filler-free name words right after it ("qwen3-4b" + "-instruct")."""
    end = c.span.last
    while end + 1 < len(toks) and toks[end + 1].key in L.NOISE_WORDS and toks[end + 1].start - toks[end].end <= 1:
        end += 1
    return text[toks[c.span.first].start : toks[end].end]


def _extend(c: _Cand, toks: list[L.Tok], used: set[int]) -> None:
    """Widens a chosen span over the tokens right after it that carry identity but matched no alias:
    "gemma 3" + "1b", "qwen2.5 coder" + "7b", "4060 ti" + "8gb", "4090" + "laptop"."""
    i = c.span.last + 1
    while i < len(toks) and i not in used and toks[i].start - toks[i - 1].end <= 2 and N.name_token(toks[i], c.kind):
        used.add(i)
        i += 1
    if c.kind == "gpu" and not c.span.nums:  # "jetson" + "orin nano": a name matched by a word alone goes on
        tail = []
        j = i
        while j < len(toks) and j not in used and toks[j].kind in ("word", "num") and toks[j].key not in L.FILLER:
            tail.append(j)
            j += 1
        if tail and not any(N.MODEL_SIZE.fullmatch(toks[k].text.lower()) for k in tail):
            used.update(tail)
            i = tail[-1] + 1
    if i - 1 > c.span.last:
        c.span = _make_span(toks, list(range(c.span.first, i)))


def _bare_memory(said: N.Typed, ranked: list[str], idx: _Index) -> N.Typed:
    """Reads "m3 ultra 512" as 512 GB: a bare number that is no device's model number but some
    ranked device's memory size."""
    sizes = [m for e in ranked if (m := idx.memory.get(e))]
    model_numbers = {n for e in ranked for n in idx.identity[e].numbers}
    for n in said.numbers:
        if n.isdecimal() and n not in model_numbers and any(N.same_memory(int(n), m) for m in sizes):
            rest = tuple(x for x in said.numbers if x != n)
            return dataclasses.replace(said, numbers=rest, memory_gib=int(n))
    return said


def _other_sizes(exact: str, accepted: list[tuple[str, float]], idx: _Index) -> bool:
    size = idx.params[exact][0]
    return any(abs(idx.params[e][0] - size) > 0.25 * size for e, _ in accepted if e != exact)


def _agrees(kind: str, said: N.Typed, entry: str, idx: _Index) -> bool:
    if kind == "model":
        total, active = idx.params[entry]
        return N.model_agrees(said, idx.identity[entry], total, active)
    return N.device_agrees(said, idx.identity[entry], idx.laptop[entry])


def _device_match(
    accepted: list[tuple[str, float]],
    said: N.Typed,
    words: str,
    score: float,
    memory: int | None,
    exact: str | None,
    idx: _Index,
) -> Match:
    """A device: the memory the user gave wins; memory variants of one chip are asked about, not guessed."""
    if memory is not None:
        sized = [e for e, _ in accepted if (m := idx.memory.get(e)) is not None and N.same_memory(memory, m)]
        if sized:
            return Match(id=sized[0], text=words, score=score, memory_gib=memory)
        if not said.numbers:  # "mac studio with 192gb": no chip named, and no such configuration
            near = tuple(e for e, _ in accepted[:3])
            return Match(id=None, text=words, score=score, suggestions=near, ambiguous=True, memory_gib=memory)
        # the chip is known, the memory size is not in the catalog: same chip, the user's memory
        return Match(id=accepted[0][0], text=words, score=score, memory_gib=memory, assumed=True)
    best = accepted[0][0]
    siblings = [e for e, _ in accepted if idx.chip[e] == idx.chip[best] or idx.bare[e] == idx.bare[best]]
    sizes = {idx.memory.get(e) for e in siblings}
    if len(sizes) > 1:  # the same chip with several memory sizes, and the user named none: ask
        ordered = tuple(sorted(siblings, key=lambda e: idx.memory.get(e) or 0.0))
        return Match(id=None, text=words, score=score, choices=ordered, ambiguous=True)
    if exact is not None and exact == best:
        return Match(id=best, text=words, score=score, assumed=len(siblings) > 1)
    if len(siblings) > 1:
        ordered = tuple(sorted(siblings, key=lambda e: idx.memory.get(e) or 0.0))
        return Match(id=None, text=words, score=score, choices=ordered, ambiguous=True)
    others = [e for e, _ in accepted if e != best]
    if others and accepted[0][1] - accepted[1][1] < MARGIN:
        return Match(id=None, text=words, score=score, suggestions=(best, *others[:2]), ambiguous=True)
    return Match(id=best, text=words, score=score)


def complete(text: str, vocab: Vocabulary, kind: Literal["model", "gpu"], limit: int = 25) -> list[tuple[str, str]]:
    """(id, display name) of entries for a name being typed: prefix matches first, then
    substrings, then the parser's own ranking of the text. Discord autocomplete uses it."""
    idx = _index_for(vocab)
    typed = L.compact(L.clean(text))
    labels = dict(idx.labels.get(kind, []))
    if not typed:
        return list(labels.items())[:limit]
    best: dict[str, float] = {}
    for alias, entry in idx.spelled.get(kind, []):
        if alias.startswith(typed):
            score = 200.0 - len(alias) / 10
        elif typed in alias:
            score = 150.0 - len(alias) / 10
        else:
            continue
        best[entry] = max(best.get(entry, 0.0), score)
    query = parse(text if kind == "model" else f"x {text}", vocab, Intent.FIT)
    match = query.model if kind == "model" else query.gpu
    if match is not None:
        for rank, found in enumerate((match.id, *match.choices, *match.suggestions)):
            if found:
                best[found] = max(best.get(found, 0.0), 100.0 - rank)
    ranked = sorted(best, key=lambda e: -best[e])[:limit]
    return [(e, labels.get(e, e)) for e in ranked]


# --- intent, language, counts ------------------------------------------------------------


def _intent(low: str, found: L.Found, chosen: dict[str, _Cand]) -> tuple[Intent, bool]:
    """Picks the intent: the command if any, else the first intent whose words appear."""
    if isinstance(cmd := found.get("command"), str):
        return Intent(cmd), True
    has = {k: k in chosen for k in ("model", "model2", "gpu", "gpu2")}
    needs = {
        "compare": has["model2"] or has["gpu2"],
        "gpus": not has["gpu"],
        "models": (has["gpu"] or "device_kind" in found) and not has["model"],
    }
    for name, pattern in L.INTENT_WORDS:
        if needs.get(name, True) and pattern.search(low):
            return Intent(name), True
    return Intent.FIT, False


def _count_near(toks: list[L.Tok], c: _Cand, used: set[int]) -> int | None:
    """Reads a GPU count written just before ("2x", "zwei", "4 x") or after ("x2") a GPU."""
    i = c.span.first - 1
    while i >= 0 and (toks[i].key in L.COUNT_GLUE or toks[i].key in L.VENDOR_WORDS):
        i -= 1
    if i >= 0 and i not in used and (n := _count_value(toks[i], "count")):
        used.add(i)
        return n
    j = c.span.last + 1
    if j < len(toks) and (n := _count_value(toks[j], "post")):
        used.add(j)
        return n
    if j + 1 < len(toks) and toks[j].key == "x" and (n := _count_value(toks[j + 1], "")):
        used.update((j, j + 1))
        return n
    return None


def _count_value(t: L.Tok, kind: str) -> int | None:
    """The GPU count a token states (a count word or a bare 1–64), or None."""
    n = t.value if t.kind == kind else int(t.key) if t.kind == "num" and t.key.isdecimal() else 0
    return n if 1 <= n <= 64 else None


# --- parse -------------------------------------------------------------------------------


def parse(text: str, vocab: Vocabulary, intent: Intent | None = None) -> Query:
    """Reads one question into a Query; never raises on any string.

    ``intent`` is the question kind when the caller knows it (a chat /command, read on the chat side
    of the parser in ``bot.commands``); otherwise the words of the question decide.
    """
    idx = _index_for(vocab)
    found: L.Found = {}
    clean = L.read_repo(L.clean(text if isinstance(text, str) else ""), found)
    low = L.lower_keep_length(clean)
    full_low = low
    if intent is not None:
        found["command"] = intent.value
    unknown: list[str] = []
    low = L.read_devices(low, found)
    low = L.read_params(low, found, idx.quants, unknown)
    fm = L.FINETUNE.search(low)
    if fm and not fm.group(1).startswith("voll"):  # "voll" alone may just mean "totally"
        low = low[: fm.start()] + L.blank(fm) + low[fm.end() :]
    toks = L.tokenize(low)
    chosen = _select(_candidates(toks, idx))
    intent, intent_set = _intent(full_low, found, chosen)
    used = {i for c in chosen.values() for i in range(c.span.first, c.span.last + 1)}
    fields = _name_fields(chosen, clean, toks, used, idx, full_low)
    if fm and (intent is Intent.FINETUNE or "lora" in fm.group(1)):
        found["finetune_method"] = _finetune_method(fm.group(1))
    _bare_context(toks, used, found)
    repo = found.get("hf_repo")
    if isinstance(repo, str) and (known := idx.exact.get(f"model:{L.compact(repo)}")):
        fields["model"] = Match(id=known, text=repo, score=100.0)  # a catalog model's own repo id
    known_gpu = isinstance(g := fields.get("gpu"), Match) and not g.unknown
    fields.update(_unknown_phrases(toks, used, clean, "model" in fields, known_gpu))
    if isinstance(g, Match) and g.unknown and isinstance(phrase := fields.get("gpu_text"), str):
        fields["gpu"] = g.model_copy(update={"text": _joined(clean, phrase, g.text)})  # "rx 5500" + "xt"
    loose = fields.pop("loose_memory_gib", None)
    unknown_gpu = "gpu_text" in fields or (isinstance(g := fields.get("gpu"), Match) and g.unknown)
    if loose is not None and unknown_gpu and "device_memory_gib" not in found:
        found["device_memory_gib"] = loose  # "rtx 3070 with 8 GB": a device the catalog lacks, and its memory
    elif loose is not None and "gpu" not in fields and "device_kind" not in found and not fields.get("memory_gib"):
        found.update(device_kind="gpu", device_memory_gib=loose)  # "best model for 24 GB": memory is the device
        if not intent_set:
            intent, intent_set = _intent(full_low, found, chosen)
    elif isinstance(g, Match) and g.id and g.assumed and loose and _is_ram(loose, g.id, idx) and "ram_gb" not in found:
        fields["gpu"] = g.model_copy(update={"memory_gib": None, "assumed": False})
        found["ram_gb"] = loose  # "4090 with 64 GB": far more than any 4090 has, so the machine's RAM
    fields.update({k: v for k, v in found.items() if k in Query.model_fields})
    explicit = {k for k, v in fields.items() if v is not None}
    if intent_set:
        explicit.add("intent")
    return Query(
        intent=intent,
        language=L.guess_language(low),
        leftovers=_leftovers(toks, used, unknown),
        explicit=frozenset(explicit),
        **fields,  # type: ignore[arg-type]
    )


def _finetune_method(word: str) -> Literal["qlora", "lora", "full"]:
    """Maps "qlora", "lora", "full fine-tune" or "voll…" to a method."""
    return "qlora" if word == "qlora" else "lora" if word == "lora" else "full"


def _name_fields(
    chosen: dict[str, _Cand], clean: str, toks: list[L.Tok], used: set[int], idx: _Index, low: str
) -> dict[str, object]:
    """Builds the model/GPU fields, GPU counts and a unified-memory size from the chosen spans."""
    out: dict[str, object] = {}
    slots = ("model", "model2", "model3", "model4", "gpu", "gpu2", "gpu3", "gpu4")
    _join_split_name(chosen, toks)
    for slot in slots:
        if slot in chosen:
            _extend(chosen[slot], toks, used)
    out["memory_gib"] = _memory(chosen, toks, used, idx, low)
    loose = out["memory_gib"] or _loose_memory(toks, used)  # "4060 ti with 8 GB", "rtx 3070 mit 8 GB"
    if isinstance(loose, float):
        out["loose_memory_gib"] = loose
    matches: dict[str, Match] = {}
    for slot in slots:
        if slot in chosen:
            memory = int(loose) if slot == "gpu" and isinstance(loose, float) else None
            matches[slot] = _to_match(chosen[slot], clean, toks, idx, memory)
    out.update({k: v for k, v in matches.items() if k in ("model", "model2", "gpu", "gpu2")})
    out["more_models"] = tuple(matches[s] for s in ("model3", "model4") if s in matches)
    out["more_gpus"] = tuple(matches[s] for s in ("gpu3", "gpu4") if s in matches)
    if "not" in chosen:
        out["not_device"] = chosen["not"].ranking[0][0]
    counts: dict[str, int | None] = {
        s: _count_near(toks, chosen[s], used) for s in ("gpu", "gpu2", "gpu3", "gpu4") if s in chosen
    }
    for slot in ("gpu", "gpu2"):
        if counts.get(slot) is not None:
            out[slot + "_count"] = counts[slot]
    out["more_gpu_counts"] = tuple(counts[s] or 1 for s in ("gpu3", "gpu4") if s in chosen)
    return out


def _memory(chosen: dict[str, _Cand], toks: list[L.Tok], used: set[int], idx: _Index, low: str) -> float | None:
    """Returns the memory size the user named for a unified-memory machine (Mac, APU)."""
    c = chosen.get("gpu") or chosen.get("not")
    unified = bool(L.MAC_WORDS.search(low))
    if c is not None:
        best = c.ranking[0][0]
        unified = unified or idx.groups.get(best, "") in L.UNIFIED_GROUPS
        span = toks[c.span.first : c.span.last + 1]
        sizes = [t.value for t in span if t.kind == "mem"]
        mem = idx.memory.get(best)
        sizes += [int(t.key) for t in span if t.kind == "num" and mem and t.key == str(int(mem))]
        if sizes and unified:
            return float(sizes[0])
    loose = [i for i, t in enumerate(toks) if t.kind == "mem" and i not in used]
    if loose and unified:
        used.add(loose[0])
        return float(toks[loose[0]].value)
    return None


def _loose_memory(toks: list[L.Tok], used: set[int]) -> float | None:
    """A GB figure no name and no parameter took ("… with 8 GB"): the device's memory."""
    for i, t in enumerate(toks):
        if t.kind == "mem" and i not in used:
            used.add(i)
            return float(t.value)
    return None


def _bare_context(toks: list[L.Tok], used: set[int], found: L.Found) -> None:
    """Reads a lone round number like 32768 or 16000 as the context length."""
    for i, t in enumerate(toks):
        if "context" in found:
            return
        if i in used or t.kind != "num" or not t.key.isdecimal() or len(t.key) > 8:
            continue
        n = int(t.key)
        if L.BARE_CONTEXT_MIN <= n <= 1 << 25 and (n % 1024 == 0 or n % 1000 == 0):
            found["context"] = n
            used.add(i)


def _unknown_phrases(toks: list[L.Tok], used: set[int], text: str, has_model: bool, has_gpu: bool) -> dict[str, str]:
    """Model- or device-shaped phrases that matched nothing: "olmo 2 7b", "rtx 3070", "tesla p40".

    They are what an "I don't know X" answer quotes, and what a Hugging Face search looks for.
    """
    out: dict[str, str] = {}
    run: list[int] = []
    for i in [*range(len(toks)), -1]:
        t = toks[i] if i >= 0 else None
        part = (
            t is not None
            and i not in used
            and (
                (t.kind in ("word", "num") and t.key not in L.FILLER) or (t.kind == "skip" and t.key in L.VENDOR_WORDS)
            )
        )
        if part and run and t is not None and t.start - toks[run[-1]].end > 2:
            part = False
            i -= 0
        if part:
            run.append(i)
            continue
        if run:
            kind = _phrase_kind([toks[j] for j in run])
            key = f"{kind}_text"
            if kind and key not in out and not (has_model if kind == "model" else has_gpu):
                out[key] = text[toks[run[0]].start : toks[run[-1]].end]
        run = [i] if t is not None and i not in used and t.kind in ("word", "num") and t.key not in L.FILLER else []
    return out


def _is_ram(gb: float, gpu_id: str, idx: _Index) -> bool:
    """A GB figure next to a discrete card that is far above its memory is the machine's RAM."""
    memory = idx.memory.get(gpu_id) or 0.0
    return idx.groups.get(gpu_id, "") not in L.UNIFIED_GROUPS and gb > 1.5 * memory


def _joined(text: str, a: str, b: str) -> str:
    """Two pieces of one name that the parser saw apart, as the user wrote them together."""
    i, j = text.find(a), text.find(b)
    if i < 0 or j < 0:
        return b
    start, end = min(i, j), max(i + len(a), j + len(b))
    return text[start:end] if end - start <= len(a) + len(b) + 3 else b


def _phrase_kind(ts: list[L.Tok]) -> str:
    """Says whether some unmatched tokens look like a device ("rtx 3070", "p40") or a model ("olmo 2 7b")."""
    has_size = any(t.kind == "num" and N.MODEL_SIZE.fullmatch(t.text.lower()) for t in ts)
    vendor = any(t.kind == "skip" for t in ts)
    device_number = any(
        t.kind == "num"
        and not N.MODEL_SIZE.fullmatch(t.text.lower())
        and ((t.key.isdecimal() and 3 <= len(t.key) <= 5) or (L.SHORT_ID.fullmatch(t.key) and not t.key.isdecimal()))
        for t in ts
    )
    words = [t for t in ts if t.kind == "word" and len(t.key) >= 2]
    if has_size and words:
        return "model"
    if vendor or (device_number and not words) or (device_number and all(w.key in N.DEVICE_TIERS for w in words)):
        return "gpu" if device_number else ""
    if words and any(t.kind == "num" for t in ts):
        return "model"
    return ""


def _leftovers(toks: list[L.Tok], used: set[int], unknown: list[str]) -> tuple[str, ...]:
    """Lists the words the parser did not understand (at most ten)."""
    out = list(unknown)
    for i, t in enumerate(toks):
        if i in used or t.kind == "skip" or t.key in L.FILLER or t.kind in ("count", "post"):
            continue
        out.append(t.text[:40])
    return tuple(out[:10])

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

import unicodedata
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import pairwise
from typing import Literal

from rapidfuzz import fuzz, process

from core import query_lexicon as L
from core.models import Engine, Frozen, KvCacheType

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
    HELP = "help"
    START = "start"
    MYGPU = "mygpu"
    LANG = "lang"
    SETTINGS = "settings"
    FORGET = "forget"


class Match(Frozen):
    """A name the user wrote and what it resolved to; ``id`` is None when ambiguous."""

    id: str | None
    text: str
    score: float
    suggestions: tuple[str, ...] = ()
    ambiguous: bool = False


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
    lang_arg: str | None = None
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
            for name in (entry.id, *entry.names):
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
    cands.sort(key=lambda c: (-c.score - 1.5 * (c.span.last - c.span.first), c.span.first))
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
    for pos in pool:
        alias = idx.aliases[pos]
        s = _score(span, alias, memo)
        per_kind = best.setdefault(alias.kind, {})
        if s > per_kind.get(alias.entry, -1e9):
            per_kind[alias.entry] = s
    out = []
    for kind, scores in best.items():
        ranking = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:4]
        if ranking[0][1] >= SUGGEST_MIN:
            out.append((kind, ranking))
    return out


def _select(cands: list[_Cand]) -> dict[str, _Cand]:
    """Takes the best non-overlapping spans: model, model2, gpu, gpu2 and not (a non-device)."""
    chosen: dict[str, _Cand] = {}
    used: set[int] = set()
    slots = {"model": ("model", "model2"), "gpu": ("gpu", "gpu2"), "not": ("not",)}
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
    for a, b in (("model", "model2"), ("gpu", "gpu2")):
        if b in chosen and chosen[b].span.first < chosen[a].span.first:
            chosen[a], chosen[b] = chosen[b], chosen[a]
    return chosen


def _second_ok(c: _Cand, first: _Cand) -> bool:
    """A second model or GPU must be a confident, different name."""
    return c.score >= CONFIDENT and c.ranking[0][0] != first.ranking[0][0]


def _to_match(c: _Cand, text: str, toks: list[L.Tok]) -> Match:
    """Turns a chosen span into a Match; a weak or close best becomes suggestions."""
    (best, s1), s2 = c.ranking[0], (c.ranking[1][1] if len(c.ranking) > 1 else 0.0)
    sure = s1 >= CONFIDENT and s1 - s2 >= MARGIN
    words = text[toks[c.span.first].start : toks[c.span.last].end]
    suggestions = () if sure else tuple(i for i, s in c.ranking[:3] if s >= SUGGEST_MIN)
    return Match(
        id=best if sure else None,
        text=words,
        score=round(max(0.0, s1), 1),
        suggestions=suggestions,
        ambiguous=not sure,
    )


# --- intent, language, counts ------------------------------------------------------------


def _intent(low: str, found: L.Found, chosen: dict[str, _Cand]) -> tuple[Intent, bool]:
    """Picks the intent: the command if any, else the first intent whose words appear."""
    if isinstance(cmd := found.get("command"), str):
        return Intent(cmd), True
    has = {k: k in chosen for k in ("model", "model2", "gpu", "gpu2")}
    needs = {
        "compare": has["model2"] or has["gpu2"],
        "gpus": not has["gpu"],
        "models": has["gpu"] and not has["model"],
        "mygpu": has["gpu"] and not has["model"],
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


def parse(text: str, vocab: Vocabulary) -> Query:
    """Reads one chat message into a Query; never raises on any string."""
    idx = _index_for(vocab)
    found: L.Found = {}
    clean = L.read_repo(L.clean(text if isinstance(text, str) else ""), found)
    low = L.lower_keep_length(clean)
    full_low = low
    low = L.read_command(low, found)
    unknown: list[str] = []
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
    for slot in ("model", "model2", "gpu", "gpu2"):
        if slot in chosen:
            out[slot] = _to_match(chosen[slot], clean, toks)
    if "not" in chosen:
        out["not_device"] = chosen["not"].ranking[0][0]
    for slot in ("gpu", "gpu2"):
        if slot in chosen and (n := _count_near(toks, chosen[slot], used)) is not None:
            out[slot + "_count"] = n
    out["memory_gib"] = _memory(chosen, toks, used, idx, low)
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


def _leftovers(toks: list[L.Tok], used: set[int], unknown: list[str]) -> tuple[str, ...]:
    """Lists the words the parser did not understand (at most ten)."""
    out = list(unknown)
    for i, t in enumerate(toks):
        if i in used or t.kind == "skip" or t.key in L.FILLER or t.kind in ("count", "post"):
            continue
        out.append(t.text[:40])
    return tuple(out[:10])

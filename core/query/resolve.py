"""Which entry a chosen span *is*: identity checks (``core.query.names``), memory variants, and completion.

A span ranked by spelling resolves only to an entry that agrees on every stated facet; devices
whose siblings differ only in memory become a choice; an exact id or full name always wins.
"""

from __future__ import annotations

import dataclasses
import re

from core.query import devices as D
from core.query import lexicon as L
from core.query import names as N
from core.query.index import CONFIDENT, MARGIN, Candidate, NameIndex, make_span
from core.query.scores import SUGGEST_MIN
from core.query.types import Match


def to_match(
    c: Candidate, text: str, toks: list[L.Tok], idx: NameIndex, memory: int | None = None, cores: int | None = None
) -> Match:
    """Turns a chosen span into a Match: only an entry that *is* what was typed may answer.

    The ranking orders entries by spelling; ``core.query.names`` then drops every entry that disagrees
    on a stated facet (size, version, variant, tier, form factor) or has one the user did not state.
    """
    words = text[toks[c.span.first].start : toks[c.span.last].end]
    whole = _whole_name(c, text, toks)  # with "instruct", "it", "hf" around it, as a catalog alias may be
    vendor = _with_vendor(c, text, toks) if c.kind == "gpu" else ""
    keyed = "".join(t.key for t in toks[c.span.first : c.span.last + 1])  # "4090er", "h100s": the card's own name
    # all the match depends on besides the ranking (names recur in chats)
    key = (c.kind, words, whole, vendor, keyed, c.span.words, memory, cores)
    match = c.ranked.matches.get(key)
    if match is None:
        match = c.ranked.matches[key] = _resolve(c, words, whole, vendor, keyed, idx, memory, cores)
    return match


# a tier word's plural after a space ("4070 Tis", "7900 XTXs"): the plural of that tier (``lexicon.SAME_WORD``)
_TIER_PLURALS = sorted(k for k, v in L.SAME_WORD.items() if v in N.DEVICE_TIERS)
_SPACED_PLURAL = re.compile(r"\s(?:" + "|".join(map(re.escape, _TIER_PLURALS)) + r")\b", re.I)


def _resolve(
    c: Candidate,
    words: str,
    whole: str,
    vendor: str,
    keyed: str,
    idx: NameIndex,
    memory: int | None,
    cores: int | None,
) -> Match:
    """``to_match`` for a span written ``words`` (``whole`` with the noise words after it, ``vendor`` with the
    vendor word hyphenated before it, ``keyed`` its tokens' keys run together: a plural's "4090er" is the
    exact name "4090", so it means what "4090" means)."""
    score = round(max(0.0, c.ranking[0][1]), 1)
    if c.kind == "not":
        return Match(id=c.ranking[0][0], text=words, score=score)
    said = N.typed(D.CORES.sub(" ", words.lower()) if c.kind == "gpu" else words)
    if c.kind == "gpu" and said.memory_gib is None:
        said = _bare_memory(said, [e for e, _ in c.ranking], idx)
    memory = said.memory_gib or memory
    line = idx.lineups.get("".join(c.span.words)) if c.kind == "gpu" else None
    if line and not said.numbers:  # "Mac Studio": a product line, sold with several chips and sizes
        return _lineup_match(line, words, score, memory, idx)
    keys = (f"{c.kind}:{L.compact(whole)}", f"{c.kind}:{L.compact(words)}", f"{c.kind}:{L.compact(keyed)}")
    exact = idx.exact.get(keys[0]) or idx.exact.get(keys[1]) or idx.exact.get(keys[2])
    if c.kind == "gpu" and _SPACED_PLURAL.search(words) and idx.exact.get(keys[2]):
        exact = idx.exact[keys[2]]  # "4 RTX 4070 Tis" are 4070 Tis: the glued alias "4070TiS" (Ti Super) is typed glued
    # "rtx spark": a full name whose vendor word is part of it is that device (RTX Spark, not the DGX Spark of "spark")
    named = idx.exact.get(f"gpu:{L.compact(vendor)}") if c.kind == "gpu" and vendor != words else None
    accepted = [(e, s) for e, s in c.ranking if _agrees(c.kind, said, e, idx)]
    if c.kind == "gpu":  # an exact model number beats a plural reading ("L40S" is no plural of "L40")
        literal = [(e, s) for e, s in accepted if all(n in idx.identity[e].numbers for n in said.numbers)]
        accepted = literal or accepted
    typed_id = idx.primary.get(keys[0]) or idx.primary.get(keys[1])
    if c.kind == "gpu" and typed_id is None:  # "rtx-3080-laptop": an id whose vendor word the span left out
        typed = vendor.lower()
        typed_id = typed if idx.primary.get(f"gpu:{L.compact(typed)}") == typed else None
    if c.kind == "model" and whole != words:  # "qwen3-4b-instruct" is an alias of its own model
        typed_id = idx.primary.get(keys[0]) or idx.exact.get(keys[0]) or typed_id
    if c.kind == "model" and typed_id is None and exact is None:
        typed_id = _typo_of_name(words, accepted, idx)  # "Inkilng": a typo of one entry's whole name
    if typed_id is not None and typed_id in {e for e, _ in accepted}:
        return Match(id=typed_id, text=words, score=score)  # an id or full name typed out: exactly that entry
    if exact and c.kind == "model" and said.size_b is None and _other_sizes(exact, accepted, idx):
        exact = None  # "gemma 3" names a family of several sizes: ask, even if an alias says one of them
    if named is not None and named != exact:
        exact, accepted = named, [(named, 100.0)]
    if exact and (exact in {e for e, _ in accepted} or (not accepted and _size_as_typed(exact, words, idx))):
        accepted = [(exact, 100.0)] + [(e, s) for e, s in accepted if e != exact]
    if not accepted:
        family = [e for e, s in c.ranking if s >= SUGGEST_MIN and N.same_family(said, idx.identity[e])]
        if not family and c.kind == "model":  # "quen3 32b": a family one letter off, offered, never answered
            family = [e for e, s in c.ranking if s >= SUGGEST_MIN and N.near_family(said, idx.identity[e])]
        if said.size_b:  # "qwen3-23b": the family's nearest sizes first (the typed name is one of its siblings)
            family.sort(key=lambda e: _size_gap(said.size_b, idx.identity[e].size_b))
        return Match(id=None, text=words, score=score, suggestions=tuple(family[:3]), unknown=True, memory_gib=memory)
    if c.kind == "gpu":
        accepted = _with_siblings(accepted, said, idx)
        # a GPU core count picks the chip (its bandwidth tier), never a memory size: "m2 ultra 60-core" is
        # every M2 Ultra size, "m3 max 30-core" only the 30-core chip's
        bins = {idx.chip[e] for e, _ in accepted if cores is not None and idx.cores.get(e) == cores}
        binned = [(e, s) for e, s in accepted if idx.chip[e] in bins]
        return _device_match(binned or accepted, said, words, score, memory, exact, idx)
    (best, s1), s2 = accepted[0], (accepted[1][1] if len(accepted) > 1 else 0.0)
    if said.size_b is None and _other_sizes(best, accepted, idx):  # "gpt oss": 20b or 120b? ask
        sizes = tuple(dict.fromkeys(e for e, _ in accepted))[:3]
        return Match(id=None, text=words, score=score, suggestions=sizes, ambiguous=True)
    if best == exact or len(accepted) == 1 or (s1 >= CONFIDENT - 10 and s1 - s2 >= MARGIN):
        return Match(id=best, text=words, score=score)
    return Match(id=None, text=words, score=score, suggestions=tuple(e for e, _ in accepted[:3]), ambiguous=True)


# what a quantized or converted copy adds to the name of the repo it copies ("-GGUF", "-AWQ", "-4bit", "-PT")
COPY_SUFFIX = re.compile(
    r"[-_.](?:gguf|ggml|awq|gptq|exl2|exl3|mlx|fp8|fp16|bf16|fp4|nvfp4|mxfp4|int4|int8|w4a16|w8a8|bnb|\d{1,2}-?bits?"
    r"|dynamic|ud|imatrix|i?q\d(?:_[a-z0-9]+)*|pt)$",
    re.I,
)


def repo_model(repo: str, idx: NameIndex) -> str | None:
    """The catalog model a repo id names: its own repo, or a copy of one ("unsloth/Qwen3-8B-GGUF",
    "mlx-community/Mistral-7B-v0.3-4bit", "Qwen/Qwen3-14B-AWQ"). The copy suffixes and the owner come off
    one at a time; a name left that is a catalog repo's name is that model (so "Qwen2.5-7B" without
    "-Instruct" is the base model where the catalog has it), else a catalog id ("ERNIE-4.5-21B-A3B")."""
    owner, _, name = repo.partition("/")
    while True:
        for key in (f"model:{L.compact(f'{owner}/{name}')}", f"repo:{L.compact(name)}", f"model:{L.compact(name)}"):
            if (hit := idx.exact.get(key)) is not None:
                return hit
        shorter = COPY_SUFFIX.sub("", name)
        if shorter == name or not shorter:
            return None
        name = shorter


def join_split_name(chosen: dict[str, Candidate], toks: list[L.Tok]) -> None:
    """ "gemma 3" + "coder 7b": a second model span right after a first one that names no size, and that
    starts with a variant or a size, is the rest of the same name, not a second model."""
    first, second = chosen.get("model"), chosen.get("model2")
    if first is None or second is None or second.span.first != first.span.last + 1:
        return
    if any(N.MODEL_SIZE.fullmatch(n) for n in first.span.nums):
        return
    head = toks[second.span.first]
    if head.key in N.MODEL_VARIANTS or (head.kind == "num" and N.MODEL_SIZE.fullmatch(head.text.lower())):
        first.span = make_span(toks, list(range(first.span.first, second.span.last + 1)))
        del chosen["model2"]
        for later in ("model3", "model4"):
            if later in chosen:
                chosen["model2" if "model2" not in chosen else later] = chosen.pop(later)


def _with_vendor(c: Candidate, text: str, toks: list[L.Tok]) -> str:
    """The span's text with the vendor words right before it ("rtx-" + "3080-laptop", "rtx " + "spark")."""
    first = c.span.first
    while (
        first > 0
        and toks[first - 1].key in L.VENDOR_WORDS
        and text[toks[first - 1].end : toks[first].start] in ("-", " ")
    ):
        first -= 1
    return text[toks[first].start : toks[c.span.last].end]


def _whole_name(c: Candidate, text: str, toks: list[L.Tok]) -> str:
    """The span's text plus the filler-free name words right after it ("qwen3-4b" + "-instruct")."""
    end = c.span.last
    while end + 1 < len(toks) and toks[end + 1].key in L.NOISE_WORDS and toks[end + 1].start - toks[end].end <= 1:
        end += 1
    return text[toks[c.span.first].start : toks[end].end]


def extend_name(
    c: Candidate, toks: list[L.Tok], used: set[int], breaks: frozenset[int] = frozenset(), known: object = None
) -> None:
    """Widens a chosen span over the tokens right after it that carry identity but matched no alias:
    "gemma 3" + "1b", "qwen2.5 coder" + "7b", "4060 ti" + "8gb", "4090" + "laptop"; never across a
    break ("4090? pro"). ``known`` (the index's words, when given): a device named by words alone goes on
    only over words some name has ("jetson" + "orin nano", not "titan xp" + "gut")."""
    i = c.span.last + 1
    while (
        i < len(toks)
        and i not in used
        and i not in breaks
        and toks[i].start - toks[i - 1].end <= 2
        and N.name_token(toks[i], c.kind)
        and not _intensifier(toks, i)
    ):
        used.add(i)
        i += 1
    # "jetson" + "orin nano": a name matched by a word alone goes on, but not past its memory size ("snapdragon x
    # elite 32gb" + "good")
    if c.kind == "gpu" and not c.span.nums and toks[i - 1].kind != "mem":
        tail = []
        j = i
        while (
            j < len(toks)
            and j not in used
            and j not in breaks
            and toks[j].kind in ("word", "num")
            and toks[j].key not in L.FILLER
            and (known is None or toks[j].key in known)  # type: ignore[operator]
        ):
            tail.append(j)
            j += 1
        if tail and not any(N.MODEL_SIZE.fullmatch(toks[k].text.lower()) for k in tail):
            used.update(tail)
            i = tail[-1] + 1
    if i - 1 > c.span.last:
        c.span = make_span(toks, list(range(c.span.first, i)))


def _intensifier(toks: list[L.Tok], i: int) -> bool:
    """ "super" in "3090 super slow": a tier word before a word of degree says "very", it names no tier (a
    card whose name has the tier, "4070 super", was matched as a whole before any name is extended)."""
    return toks[i].key in N.DEVICE_TIERS and i + 1 < len(toks) and toks[i + 1].key in L.DEGREE_WORDS


def _typo_of_name(words: str, accepted: list[tuple[str, float]], idx: NameIndex) -> str | None:
    """The entry whose id or display name the words are, once each misspelt word is the word of an
    accepted entry it is one typo of ("Inkilng" is "Inkling", not Inkling-Small)."""
    known = {w for e, _ in accepted[:5] for w in (*idx.identity[e].words, *idx.identity[e].variants)}
    parts = re.split(r"([^\W\d_]+)", words.lower())
    fixed = [
        next((k for k in sorted(known) if N.one_typo(p, k)), p) if p.isalpha() and p not in known else p for p in parts
    ]
    return idx.primary.get(f"model:{L.compact(''.join(fixed))}") if fixed != parts else None


def _bare_memory(said: N.Typed, ranked: list[str], idx: NameIndex) -> N.Typed:
    """Reads "m3 ultra 512" as 512 GB: a bare number that is no device's model number but some
    ranked device's memory size."""
    sizes = [m for e in ranked if (m := idx.memory.get(e))]
    model_numbers = {n for e in ranked for n in idx.identity[e].numbers}
    for n in said.numbers:
        if n.isdecimal() and n not in model_numbers and any(N.same_memory(int(n), m) for m in sizes):
            rest = tuple(x for x in said.numbers if x != n)
            return dataclasses.replace(said, numbers=rest, memory_gib=int(n))
    return said


def _other_sizes(exact: str, accepted: list[tuple[str, float]], idx: NameIndex) -> bool:
    size = idx.params[exact][0]
    return any(abs(idx.params[e][0] - size) > 0.25 * size for e, _ in accepted if e != exact)


def _agrees(kind: str, said: N.Typed, entry: str, idx: NameIndex) -> bool:
    if kind == "model":
        total, active = idx.params[entry]
        return N.model_agrees(said, idx.identity[entry], total, active)
    return N.device_agrees(said, idx.identity[entry], idx.laptop[entry])


def _with_siblings(accepted: list[tuple[str, float]], said: N.Typed, idx: NameIndex) -> list[tuple[str, float]]:
    """The accepted devices and every other memory size of their chips, which spelling may rank lower:
    "macbook pro m3 pro 36gb" is the 36 GB M3 Pro though only the 18 GB row has a "macbook pro" alias.
    A size sold only in a product the user did not name ("mac studio") is not added."""
    have = {e for e, _ in accepted}
    chips = {idx.chip[e] for e, _ in accepted}
    low, named = accepted[-1][1], set(said.words)
    kin = [
        (e, low)
        for _, e in sorted(member for chip in chips for member in idx.by_chip[chip])
        if e not in have and idx.memory.get(e) and set(idx.identity[e].words) <= named and _agrees("gpu", said, e, idx)
    ]
    return accepted + kin


def _lineup_match(line: list[str], words: str, score: float, memory: int | None, idx: NameIndex) -> Match:
    """Every configuration of a product line, or the one with the memory given ("mac studio 128gb")."""
    ordered = tuple(sorted(line, key=lambda e: (idx.memory.get(e) or 0.0, line.index(e))))
    if memory is None:
        return Match(id=None, text=words, score=score, choices=ordered, ambiguous=True)
    sized = [e for e in ordered if (m := idx.memory.get(e)) is not None and N.same_memory(memory, m)]
    if sized:
        return Match(id=sized[0], text=words, score=score, memory_gib=memory)
    return Match(id=None, text=words, score=score, suggestions=ordered[:3], ambiguous=True, memory_gib=memory)


def _device_match(
    accepted: list[tuple[str, float]],
    said: N.Typed,
    words: str,
    score: float,
    memory: int | None,
    exact: str | None,
    idx: NameIndex,
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
    if len(sizes) > 1:  # the same chip with several memory sizes, and the user named none
        ordered = tuple(sorted(siblings, key=lambda e: idx.memory.get(e) or 0.0))
        if dominant := [e for e in ordered if e in idx.dominant]:  # "3060": the 12 GB card, the 8 GB one a tap away
            rest = tuple(e for e in ordered if e != dominant[0])
            return Match(id=dominant[0], text=words, score=score, choices=rest, assumed=True)
        return Match(id=None, text=words, score=score, choices=ordered, ambiguous=True)
    same_chip = len(siblings) > 1 and len({idx.chip[e] for e in siblings}) == 1
    if (exact is not None and exact == best) or same_chip:  # one chip, one memory size: MacBook or Studio alike
        return Match(id=best, text=words, score=score, assumed=len(siblings) > 1)
    if len(siblings) > 1:
        ordered = tuple(sorted(siblings, key=lambda e: idx.memory.get(e) or 0.0))
        return Match(id=None, text=words, score=score, choices=ordered, ambiguous=True)
    others = [e for e, _ in accepted if e != best]
    if others and accepted[0][1] - accepted[1][1] < MARGIN:
        return Match(id=None, text=words, score=score, suggestions=(best, *others[:2]), ambiguous=True)
    return Match(id=best, text=words, score=score)


def sized_by_ram(match: Match, gb: float, idx: NameIndex) -> str | None:
    """ "780M with 64 GB RAM": on a chip whose memory is the system's (an iGPU, a Mac), the RAM given is the size
    meant; None when the chip comes with no such size."""
    for entry in match.choices:
        if idx.groups.get(entry, "") in L.UNIFIED_GROUPS and N.same_memory(gb, idx.memory.get(entry) or 0.0):
            return entry
    return None


def is_ram(gb: float, gpu_id: str, idx: NameIndex) -> bool:
    """A GB figure next to a discrete card that is far above its memory is the machine's RAM."""
    memory = idx.memory.get(gpu_id) or 0.0
    return idx.groups.get(gpu_id, "") not in L.UNIFIED_GROUPS and gb > 1.5 * memory


def joined_text(text: str, a: str, b: str) -> str:
    """Two pieces of one name that the parser saw apart, as the user wrote them together."""
    i, j = text.find(a), text.find(b)
    if i < 0 or j < 0:
        return b
    start, end = min(i, j), max(i + len(a), j + len(b))
    return text[start:end] if end - start <= len(a) + len(b) + 3 else b


def _size_gap(said: float | None, size: float | None) -> float:
    """How far an entry's size is from the one typed, as a ratio (no size: last)."""
    if not said or not size:
        return float("inf")
    return max(size / said, said / size)


def _size_as_typed(entry: str, words: str, idx: NameIndex) -> bool:
    """Whether an exact key's entry has the size the words state (or no size): the keys drop dots, so
    "qwen2.5 15b" and "qwen2.5-1.5b" share one; the entry's own size must be in the words."""
    size = idx.identity[entry].size_b
    if size is None or not re.search(r"\d\s?[bm]\b", words, re.I):
        return True
    return re.search(rf"(?<![\d.]){re.escape(f'{size:g}')}\s?b\b", words, re.I) is not None

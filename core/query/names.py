"""Identity of a name: what must agree before a typed name may stand for a catalog entry.

The question parser (``core.query.parse``) finds *where* a name is and ranks catalog entries by
similarity; this module decides whether an entry *is* what was typed. Similar is not enough:
"gemma 3 1b" is close to "Gemma 3 27B" in spelling, but a different model. So a typed name and an
entry must agree on every facet the user stated, and the user must have stated every facet that
tells the entry apart from its siblings:

* models: family words, version numbers, parameter size (total, or active for MoE) and variant
  words (coder, vision, distill, mini, thinking, ...);
* devices: model numbers (3070, h100, m3), tier words (Ti, Super, XT, Pro, Max, Ultra), form
  factor (laptop) and memory size, when the user gave one.

Pure functions over token lists; no catalog, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from core.query import lexicon as L

# words that make a model a different model of the same family and size
MODEL_VARIANTS = frozenset(
    [
        "coder",
        "code",
        "vl",
        "v",
        "vision",
        "omni",
        "audio",
        "base",
        "thinking",
        "reasoning",
        "distill",
        "mini",
        "nano",
        "micro",
        "tiny",
        "math",
        "guard",
        "embed",
        "flash",
        "air",
        "lite",
        "turbo",
        "preview",
        "abliterated",
        "uncensored",
    ]
)
# variant words a user may leave out when the catalog has only that one ("mistral 24b" is Small)
SOFT_VARIANTS = frozenset(["small", "medium", "large", "plus", "pro", "max"])
# words that make a device a different device (a 3090 Ti is not a 3090)
DEVICE_TIERS = frozenset(["ti", "super", "xt", "xtx", "gre", "d", "pro", "max", "ultra"])
LAPTOP_WORDS = frozenset(["laptop", "mobile", "notebook", "max-q"])
# a card with more memory soldered on than it shipped with ("4090 48gb modded"): the memory says which
MOD_WORDS = frozenset(["modded", "mod", "modified", "gemoddet", "umgebaut"])
# datacenter board forms: the catalog's alias picks the usual one, and the card says so
DEVICE_FORMS = frozenset(["sxm", "pcie", "nvl", "sxm5", "sxm4", "oam"])
MODEL_SIZE = re.compile(r"(\d+(?:\.\d+)?)([bm])", re.A)
MOE_TOTAL = re.compile(r"(\d+)x(\d+(?:\.\d+)?)b", re.A)
ACTIVE = re.compile(r"a(\d+(?:\.\d+)?)b", re.A)
APPLE_CHIP = re.compile(r"m[1-9]", re.A)
MAC_PRODUCT_WORDS = frozenset(["mac", "macbook", "studio", "mini", "imac", "desktop", "computer", "pc"])
SIZE_TOLERANCE = 0.10  # a size typed for a model whose name states none, against its parameter count


@dataclass(frozen=True, slots=True)
class Typed:
    """The facets of a name as the user typed it."""

    words: tuple[str, ...]  # family words (no variants, tiers, vendors or filler)
    numbers: tuple[str, ...]  # versions and model numbers ("3", "31", "4090", "m3", "h100")
    size_b: float | None  # total parameters in billions ("8b", "270m", "8x7b")
    active_b: float | None  # active parameters ("a3b")
    variants: frozenset[str]
    tiers: frozenset[str]
    laptop: bool
    memory_gib: int | None


@lru_cache(maxsize=16384)  # pure, and the same names are read again and again (catalog aliases, chats)
def typed(text: str) -> Typed:
    """Reads the facets of one typed or catalog name."""
    toks = L.tokenize(text.lower().replace("_", " "))
    words, numbers, variants, tiers = [], [], set(), set()
    size = active = None
    memory = None
    laptop = False
    for i, t in enumerate(toks):
        key = t.key
        if t.kind == "mem":
            memory = t.value
            continue
        if t.kind != "num" and key in LAPTOP_WORDS:
            laptop = True
            continue
        if t.kind == "num":
            key = t.text.lower()
            if m := MOE_TOTAL.fullmatch(key):
                size = float(m.group(1)) * float(m.group(2))
            elif m := ACTIVE.fullmatch(key):
                active = float(m.group(1))
            elif L.EXPERTS.fullmatch(key):
                continue  # "16e": how many experts, said beside the size; the family words tell such models apart
            elif (m := MODEL_SIZE.fullmatch(key)) and not APPLE_CHIP.fullmatch(key):
                value = float(m.group(1)) / (1000.0 if m.group(2) == "m" else 1.0)
                if size is None:
                    size = value
                else:
                    active = value
            else:
                numbers.append(t.key)
            continue
        if t.kind != "word":
            continue
        if key in ("pro", "air") and i > 0 and toks[i - 1].key in ("macbook", "mac"):
            continue  # "MacBook Pro M3" is a base M3 in a MacBook Pro: product words, not the chip tier
        if key in MODEL_VARIANTS or key in SOFT_VARIANTS:
            variants.add(key)
        if key in DEVICE_TIERS and (i > 0 and toks[i - 1].kind == "num"):
            tiers.add(key)
        elif key not in MODEL_VARIANTS and key not in DEVICE_FORMS and key not in MOD_WORDS:
            words.append(key)
    return Typed(tuple(words), tuple(numbers), size, active, frozenset(variants), frozenset(tiers), laptop, memory)


def _words_agree(said: tuple[str, ...], entry: Typed) -> bool:
    """Every family word the user wrote is a word of the entry, or that word with one typo ("lama")."""
    for w in said:
        if w in entry.words or w in entry.variants or w in entry.tiers:
            continue
        if not any(_typo(w, e) for e in (*entry.words, *entry.variants, *entry.tiers)):
            return False
    return True


def _typo(a: str, b: str) -> bool:
    """One letter wrong, missing, extra or swapped in a word of four or more: "olmo" is no typo of
    "olmocr", and "codestral" (three edits) is not "devstral", a different model of the same maker."""
    return len(a) >= 4 and abs(len(a) - len(b)) <= 1 and fuzz.ratio(a, b) >= 80 and OSA.distance(a, b) <= 1


one_typo = _typo


def name_token(t: L.Tok, kind: str) -> bool:
    """Whether a token right after a matched name still belongs to the name the user wrote: "1b" in
    "gemma 3 1b", "r 35b" in "command r 35b", "8gb" in "4060 ti 8gb". Filler and the words around a
    name ("on", "auf", "gpu") end it."""
    if kind != "model":
        return t.kind == "mem" or t.key in LAPTOP_WORDS | DEVICE_TIERS | DEVICE_FORMS
    if t.kind == "num":
        return not (t.key.isdecimal() and int(t.key) >= 100)  # "32768" after a name is a context
    return t.kind == "word" and (
        t.key in MODEL_VARIANTS or t.key in SOFT_VARIANTS or (len(t.key) <= 2 and t.key not in L.FILLER)
    )


def same_family(said: Typed, entry: Typed) -> bool:
    """A "did you mean" must share the family: a Gemma for a Gemma, never a distill for an OLMo."""
    return bool(said.words) and _words_agree(said.words, entry)


def near_family(said: Typed, entry: Typed) -> bool:
    """For a "did you mean" only, where no entry is of the family typed: each family word is the entry's or
    one edit from one of its words with the same first letter ("quen3 32b": Qwen3-32B?); never answered."""
    return (
        bool(said.words)
        and all(n in entry.numbers for n in said.numbers)
        and all(
            w in entry.words or any(len(w) >= 4 and w[0] == e[0] and OSA.distance(w, e) <= 1 for e in entry.words)
            for w in said.words
        )
    )


def model_agrees(said: Typed, entry: Typed, total_b: float, active_b: float) -> bool:
    """Whether a model entry (its name's facets and parameter counts) is the model the user named."""
    if not _words_agree(said.words, entry):
        return False
    if any(t not in entry.tiers and t not in entry.words for t in said.tiers):
        return False  # "nemotron 3 super" is not Nemotron 3 Ultra
    size = said.size_b
    for n in said.numbers:
        if n in entry.numbers:
            continue
        if size is None and n.isdecimal() and _size_agrees(float(n), entry, total_b):
            size = float(n)  # "gpt oss 120", "llama 3.3 70": a size without its "b"
            continue
        return False  # "qwen 2.5" is not Qwen3; "llama 3" is not Llama 3.1
    if size is not None and not _size_agrees(size, entry, total_b):
        return False
    if said.active_b is not None and not (
        (entry.active_b is not None and abs(said.active_b - entry.active_b) < 0.051)
        or (active_b > 0 and abs(said.active_b - active_b) / active_b <= SIZE_TOLERANCE)
    ):
        return False
    if said.variants - entry.variants:
        return False  # the user asked for a coder / vision / mini model this one is not
    return not ((entry.variants - said.variants) - SOFT_VARIANTS)


def device_agrees(said: Typed, entry: Typed, laptop: bool) -> bool:
    """Whether a device entry is the device the user named (memory is checked apart)."""
    if any(n not in entry.numbers and n.removesuffix("s") not in entry.numbers for n in said.numbers):
        return False  # "h100s" is the plural of an H100
    product_only = not said.numbers and bool(set(said.words) & MAC_PRODUCT_WORDS)
    if not product_only and (
        entry.tiers - said.tiers or any(t not in entry.tiers and t not in entry.words for t in said.tiers)
    ):  # a 3090 is not a 3090 Ti, an M3 is not an M3 Max ("mac studio 128gb" names no chip); a tier word the
        return False  # name has before its number is the same word after it ("rtx6000pro" is the RTX PRO 6000)
    if said.laptop != laptop:
        return False
    said_words = said.words + tuple(said.variants - said.tiers)
    return all(
        w in entry.words or w in entry.variants or w in entry.tiers or w in MAC_PRODUCT_WORDS for w in said_words
    )


def same_memory(said_gb: float, catalog_gib: float) -> bool:
    """A memory size as the user wrote it and as the catalog holds it (GiB): "80GB" is an H100's 79.6
    GiB, "288GB" a B300's 268 GiB; 8 and 16, 10 and 12, 32 and 36 stay apart."""
    return abs(said_gb - catalog_gib) <= max(1.0, 0.08 * catalog_gib)


def _size_agrees(said: float, entry: Typed, total_b: float) -> bool:
    """A size agrees with the one in the entry's name ("7b" for Qwen2.5-7B at 7.6B), else with
    its parameter count within 10 %; "9b" is not Llama 3.1 8B and "121b" is not gpt-oss-120b."""
    if entry.size_b is not None:
        return abs(said - entry.size_b) < 0.051 or (said < 1 and abs(said - entry.size_b) < 0.0051)
    return total_b > 0 and abs(said - total_b) / total_b <= SIZE_TOLERANCE

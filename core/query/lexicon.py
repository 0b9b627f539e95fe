"""The words of the question parser (``core.query.parse``), German and English.

Word lists, the patterns of fixed-shape parameters with their readers (``READERS``), how a
name is cut into tokens (``tokenize``) and a language guess. Kept apart from the matching logic
so that a new phrasing is mostly a data change. Every pattern runs on lower-cased,
NFKC-normalised text; the numeric ones use ``re.ASCII`` so that only ASCII digits are numbers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from rapidfuzz.distance import OSA

from core.models import Engine, KvCacheType
from core.query.amounts import prompt_length, ram_size, token_count, user_count
from core.query.literals import Quick, quick

A = re.ASCII


def _words(text: str) -> frozenset[str]:
    """Splits a whitespace-separated word list."""
    return frozenset(text.split())


# --- names -------------------------------------------------------------------------------

VENDOR_WORDS = _words("nvidia geforce amd radeon instinct apple rtx gtx rx tesla intel arc")
# words that carry no identity in a model or GPU name
NOISE_WORDS = _words(
    "instruct chat it hf gguf the model modell llm gpu gpus grafikkarte"
)  # "A16 (per GPU)" is no "gpu"
# runs of letters and digits, and "3.1", "v3.1b", "1.5.2" across their dots: the same cuts as
# r"[^\W_]*\d+(?:\.\d+)+[^\W_]*|[^\W_]+" without its backtracking (a dotted run needs a digit before the dot)
NAME_SPLIT = re.compile(r"[^\W_]+(?:(?<=\d)(?:\.\d+)+[^\W_]*)?")
# h100, m3, r1, a3b, mi300x, l40s, k2, v3.1, e4b: letters+digits that are one identifier
SHORT_ID = re.compile(r"[a-z]{1,2}\d+(?:\.\d+)?[a-z]?(?:\d+b)?", A)
PIECES = re.compile(r"\d+(?:\.\d+)?[bm](?![a-z])|\d+(?:\.\d+)?|[^\W\d_]+")
EXPERTS = re.compile(r"\d{1,3}e", A)  # "Llama 4 Scout 17B-16E"
MOE_SIZE = re.compile(r"\d+x\d+(?:\.\d+)?b", A)  # mixtral 8x7b
COUNT_PREFIX = re.compile(r"(\d{1,3})[x×](.*)")  # 2x, 2x3090, 8xh200, 100x; "4090x" is a typo of a 4090
COUNT_SUFFIX = re.compile(r"[x×](\d{1,2})", A)  # 3090 x2
MEM_TOKEN = re.compile(r"(\d{1,4})(?:gbs?|gib|g)", A)  # "32GBs": a plural's -s ("3 M2 Max 32GBs")
MEM_IN_NAME = re.compile(r"\b\d{1,4}\s*(?:gb|gib)\b", A)  # "M3 Max 128GB" → "M3 Max"
PLURAL_GPU = re.compile(r"(\d{3,5})(?:s|er|ern)", A)  # 5090s, 3090er
# a line's letters glued to the model number: "rtx4090", "rtxa4000", "rtxpro6000", "arcb580", "rx7900xtx"
VENDOR_PREFIX = re.compile(r"(?:rtx|gtx|rx|arc)(\d.*|[ab]\d{3,4}m?|pro\d.*)", A)
SIZE = re.compile(r"\d+(?:\.\d+)?[bm]|\d+x\d+(?:\.\d+)?b", A)

COUNT_WORDS = {
    "single": 1, "einzelne": 1, "einer": 1, "eine": 1, "one": 1,
    "two": 2, "zwei": 2, "dual": 2, "double": 2, "doppel": 2, "doppelte": 2, "pair": 2,
    "three": 3, "drei": 3, "triple": 3, "four": 4, "vier": 4, "quad": 4, "five": 5, "fünf": 5,
    "six": 6, "sechs": 6, "seven": 7, "sieben": 7, "eight": 8, "acht": 8, "ten": 10, "zehn": 10,
    "twelve": 12, "zwölf": 12, "sixteen": 16, "sechzehn": 16,
}  # fmt: skip
COUNT_GLUE = _words("x × mal of von my meine meiner meinen meinem stück stueck stk pcs")  # "2 Stück 4090"
TIMES = _words("x × mal")  # "200 x 3090": an explicit count, however large

STOPWORDS = _words(
    """a an the my our your on with and or of for to in at by is are be i me we you it this that
    can could will would should do does did run running runs fit fits use using have has get
    what which how much many about please just also than then there here into onto from
    ein einen einem eines der die das den dem des und oder mit auf für fuer von zu im in am
    ist sind kann können könnte läuft laufen passt passen geht gehen habe hab hat ich mein
    meine meiner meinem meinen wir du es mir bei wie was welche welcher welches wieviel viel
    bitte noch auch als dann da hier mal so x via using über ueber as
    thing things anything something everything stuff etwas alles irgendwas more mehr details detail
    recommend recommended recommendation recommendations suggest suggestion suggestions empfiehl empfehle
    empfehlen empfehlung empfehlungen vorschlag vorschläge"""
)
# what joins two cards of one machine ("4090 + 3090", "3090 and a 3060", "4090 und eine 3090", "4090, 3090")
RIG_JOINER = quick(
    r"\s*(?:\+|&|,|and|und|plus|sowie)\s*(?:(?:an?|one|another|eine[rnm]?|ein|noch|zusätzlich|also|auch)\s+)*"
    r"(?:\d{1,2}\s*[x×]\s*|(?:two|three|four|zwei|drei|vier)\s+)?"  # "3090 + 2x 3060": a count of the next card
    r"(?:(?:rtx|gtx|rx|nvidia|geforce|amd|radeon|tesla|intel|arc)[\s-]*)*",
)
# "3090 + 3090 (+ 3090)": N of the same card ("2x 3090"), right-aligned so the offsets of the name stay put
SAME_CARDS = quick(
    r"\b((?:(?:rtx|gtx|rx)\s*)?[a-z]{0,2}\d{3,4}(?:\s*(?:ti|super|xtx|xt))?(?:\s*\d{1,3}\s*gb)?)"
    r"(?:\s*(?:\+|&|,|and|und|plus)\s*\1\b(?!\s*(?:ti|super|xtx|xt|\d{1,3}\s*gb)\b))+",
    A,
)
_SAME_JOINER = re.compile(r"\s*(?:\+|&|,|and|und|plus)\s*", A)


def same_cards(low: str) -> str:
    """Reads "3090 + 3090" as "2x 3090" and "3090 & 3090 & 3090" as "3x 3090"."""

    def one(m: re.Match[str]) -> str:
        new = f"{len(_SAME_JOINER.findall(m.group()[len(m.group(1)) :])) + 1}x {m.group(1)}"
        return new.rjust(len(m.group())) if len(new) <= len(m.group()) else m.group()

    return SAME_CARDS.sub(one, low)


UNIFIED_GROUPS = frozenset({"apple", "apu", "unified"})
MAC_WORDS = quick(r"\b(?:mac|macbook|imac|mac ?studio|mac ?mini|mac ?pro)\b")

# --- name tokens -------------------------------------------------------------------------


@dataclass(slots=True)
class Tok:
    """One piece of a name or of a question, as the matcher sees it."""

    text: str  # the piece as typed (lower-case)
    key: str  # normalised: a word, or a number without dots ("3.1" → "31")
    kind: str  # word, num, mem (a GB figure), count ("2x", "zwei"), post ("x2"), skip
    start: int
    end: int
    value: int = 0  # count or GiB
    joined: bool = False  # a joiner ("+", "&", ",", "and", "oder", "vs") stands before it: no name runs across


# "Titan RTX", "Titan X", "Titan Xp", "Titan V": the word after "titan" is the name, not a vendor word
TITAN_SUFFIXES = frozenset({"rtx", "xp", "x", "v"})


SAME_WORD = {"notebook": "laptop"}  # words names use in one spelling only ("RTX 4060 Laptop")
# "two 4060 tis", "2x 4070 supers", "dual 7900 xtxs": the plural of a card named with its tier is that tier
SAME_WORD |= {"tis": "ti", "supers": "super", "xts": "xt", "xtxs": "xtx", "gres": "gre"}
JOINER_WORDS = _words("and und plus sowie or oder vs versus gegen gegenüber gegenueber against")
# "+" joins two names unless it ends one ("Ryzen AI Max+ 395", "Command R+ on"): after a letter, before a space
JOINER_MARK = re.compile(r"[&,]|(?<![^\W\d_])\+|\+(?!\s)")
CONTRACTIONS = frozenset({"s", "t", "re", "ll", "ve", "d", "m"})


def tokenize(text: str) -> list[Tok]:
    """Cuts text into name tokens; counts, GB figures and filler words are marked as such."""
    toks: list[Tok] = []
    for m in NAME_SPLIT.finditer(text):
        raw, start = m.group(), m.start()
        if start > 0 and text[start - 1] in "'’" and raw.lower() in CONTRACTIONS:
            continue  # the "s" of "what's", the "t" of "can't": no name
        if raw.isdecimal() and text[m.end() : m.end() + 1] == "×" and 1 <= int(raw) <= 999:
            toks.append(Tok(raw, raw, "count", start, m.end() + 1, int(raw)))  # "2× m5": × is no word character
            continue
        if raw in ("gb", "gib", "gbs") and toks and toks[-1].kind == "num" and toks[-1].key.isdecimal():
            last = toks[-1]  # "24 gb": the number before is a GB figure
            toks[-1] = Tok(last.text, last.key, "mem", last.start, m.end(), int(last.key))
            continue
        for t, k, kind, s, e, v, _ in _pieces(raw):
            toks.append(Tok(t, k, kind, start + s, start + e, v))
    if "titan" in text:  # a token "titan" is a piece of the text
        _join_titans(toks)
    pending = False  # "7900 xtx and 7900 xt", "4060 ti + rtx 4060": two names, never "xtx and 7900"
    marks = "&" in text or "," in text or "+" in text  # a JOINER_MARK match holds one of them
    for i in range(1, len(toks)):
        pending = (
            pending
            or toks[i - 1].key in JOINER_WORDS
            or (marks and bool(JOINER_MARK.search(text, toks[i - 1].end, toks[i].start)))
        )
        if pending and toks[i].kind in ("word", "num", "mem"):
            toks[i].joined, pending = True, False
    return toks


def _join_titans(toks: list[Tok]) -> None:
    """ "Titan X", "Titan RTX": the word after "titan" is part of one name, not a vendor word."""
    for i in range(len(toks) - 2, -1, -1):
        if toks[i].key != "titan":
            continue
        suffix = toks[i + 1].key
        if suffix[-1:] == "s" and suffix[:-1] in TITAN_SUFFIXES and _counted(toks, i):
            suffix = suffix[:-1]  # "4 Titan Xps", "2 Titan Vs": a count's plural (alone, "titan vs" is "titan versus")
        if suffix in TITAN_SUFFIXES:
            gtx = i > 0 and toks[i - 1].key == "gtx"  # "GTX Titan X" is the Maxwell card, "Titan X" the Pascal one
            key = ("gtx" if gtx else "") + "titan" + suffix
            first = i - 1 if gtx else i
            toks[first : i + 2] = [Tok(key, key, "word", toks[first].start, toks[i + 1].end)]


def _counted(toks: list[Tok], i: int) -> bool:
    """A count stands right before the name at ``i`` ("4 titan", "2x gtx titan", "zwei titan")."""
    j = i - 1 - (i > 0 and toks[i - 1].key == "gtx")
    if j < 0:
        return False
    return toks[j].kind == "count" or (
        toks[j].kind == "num" and toks[j].key.isdecimal() and 2 <= int(toks[j].key) <= 64
    )


_PIECES: dict[str, tuple[tuple[str, str, str, int, int, int, bool], ...]] = {}
PIECES_KEPT = 2048  # tokenised texts: keyed by the whole question, so distinct questions fill it (issue 40: RSS flat)


def _pieces(raw: str) -> tuple[tuple[str, str, str, int, int, int, bool], ...]:
    """The tokens of one raw piece, offsets from its start (memoised: questions repeat their words)."""
    hit = _PIECES.get(raw)
    if hit is None:
        toks: list[Tok] = []
        _add_raw(raw, 0, len(raw), toks)
        if len(_PIECES) >= PIECES_KEPT:
            _PIECES.clear()
        hit = _PIECES[raw] = tuple((t.text, t.key, t.kind, t.start, t.end, t.value, t.joined) for t in toks)
    return hit


# words that say no more of a model than its size ("a 70b dense model", "best 8b model", "ein gutes 8b")
SIZE_WORDS = _words(
    """dense moe param params parameter parameters parametern sized class best good decent solid strong smart
    great top nice general allround all round purpose beste bestes besten bester gutes guter gute gutem
    ordentliches starkes schlaues coding code coder programming programmieren reasoning thinking denken vision
    image bild small klein kleines fast schnell schnelles tiny light"""
)
# "n 8b modell", "'n 70b": the colloquial German article, a word of its own ("gemma 3n" keeps its "n")
COLLOQUIAL_ARTICLES = frozenset({"n", "ne", "nen", "ner", "nem"})


def _add_raw(raw: str, s: int, e: int, toks: list[Tok]) -> None:
    """Appends the token(s) of one raw piece."""
    if raw in COLLOQUIAL_ARTICLES:
        toks.append(Tok(raw, raw, "skip", s, e))
    elif raw in COUNT_WORDS:
        toks.append(Tok(raw, raw, "count", s, e, COUNT_WORDS[raw]))
    elif raw.isalpha():  # letters only: one word, as the patterns below (each needs a digit or an "x") would find
        key = SAME_WORD.get(raw) or _noise_typo(raw) or raw
        toks.append(Tok(raw, key, _word_kind(key), s, e))
    elif raw.isdecimal():  # digits only: one number
        toks.append(Tok(raw, raw, "num", s, e))
    elif m := COUNT_SUFFIX.fullmatch(raw):
        toks.append(Tok(raw, raw, "post", s, e, int(m.group(1))))
    elif MOE_SIZE.fullmatch(raw):
        toks.append(Tok(raw, raw.replace(".", ""), "num", s, e))
    elif m := COUNT_PREFIX.fullmatch(raw):
        toks.append(Tok(raw, raw, "count", s, e, int(m.group(1))))
        if m.group(2):
            _add_raw(m.group(2), s + m.start(2), e, toks)
    elif m := MEM_TOKEN.fullmatch(raw):
        toks.append(Tok(raw, m.group(1), "mem", s, e, int(m.group(1))))
    elif raw in ("gb", "gib") and toks and toks[-1].kind == "num" and toks[-1].key.isdecimal():
        last = toks[-1]
        toks[-1] = Tok(last.text, last.key, "mem", last.start, e, int(last.key))
    elif m := PLURAL_GPU.fullmatch(raw):
        toks.append(Tok(raw, m.group(1), "num", s, e))
    elif m := VENDOR_PREFIX.fullmatch(raw):
        _add_raw(m.group(1), s + m.start(1), e, toks)
    elif SHORT_ID.fullmatch(raw):
        toks.append(Tok(raw, raw.replace(".", ""), "num", s, e))
    elif raw.endswith("s") and SHORT_ID.fullmatch(raw[:-1]):  # "h100s", "a100s": a plural is a count's noun
        toks.append(Tok(raw, raw[:-1].replace(".", ""), "num", s, e))
    elif EXPERTS.fullmatch(raw):  # "17b-16e": the experts of a MoE, one piece of its name (no "e" word)
        toks.append(Tok(raw, raw, "num", s, e))
    else:
        for p in PIECES.finditer(raw):
            piece = p.group()
            kind = "num" if piece[0].isdecimal() else _word_kind(piece)
            key = SAME_WORD.get(piece, piece.replace(".", ""))
            toks.append(Tok(piece, key, kind, s + p.start(), s + p.end()))


_LONG_NOISE = tuple(sorted(w for w in NOISE_WORDS if len(w) >= 6))


def _noise_typo(word: str) -> str | None:
    """The noise word of six letters or more this word is one typo of ("intsruct", "insturct"), else None."""
    if len(word) < 6 or word in NOISE_WORDS:
        return None
    return next((n for n in _LONG_NOISE if abs(len(n) - len(word)) <= 1 and OSA.distance(word, n) <= 1), None)


def _word_kind(word: str) -> str:
    """Says whether a word may be part of a name ("word") or is transparent ("skip")."""
    if word in VENDOR_WORDS or word in NOISE_WORDS or word in STOPWORDS:
        return "skip"
    return "word"


# --- parameters --------------------------------------------------------------------------

HF_URL = quick(
    r"(?:https?://)?(?:www\.)?(?:hf\.co|huggingface\.co)/(?:models/)?"
    r"([A-Za-z0-9][\w.-]{0,95})/([\w.-]{1,95}?)(?::([\w.-]{1,40}))?(?=[/?#\s]|$)",
    A,
)
HF_ID = quick(
    r"(?<![\w/.:-])([A-Za-z][\w.-]{1,95})/([A-Za-z0-9][\w.-]{2,95})(?::([\w.-]{1,40}))?(?![\w/])",
    A,
)
ENGINE = quick(
    r"\b(?P<e>vllm|llama[ .-]?cpp|llama-(?:server|cli|bench|run|mtmd-cli)|ollama|lm[ -]?studio|lmstudio)\b", A
)
_KV = r"(?P<kv>q8_0|q8|q4_0|q4|fp8|f8|f16|fp16|bf16)"
KV_TYPES = {
    "q8": "q8_0", "q8_0": "q8_0", "q4": "q4_0", "q4_0": "q4_0", "fp8": "fp8", "f8": "fp8",
    "f16": "f16", "fp16": "f16", "bf16": "bf16",
}  # fmt: skip
_NUM = r"(?P<num>\d{1,7}(?:[.,]\d{1,3})?)"
_USERS = (
    r"(?:users?|nutzer\w*|benutzer\w*|anwender\w*|clients?|sessions?|requests?|anfragen|personen|people|persons"
    r"|leute|menschen|colleagues|kollegen|kolleginnen|coworkers|mitarbeiter\w*|devs|developers|entwickler\w*)"
)
_PARALLEL = r"(?:concurrent|gleichzeitig\w*|parallel\w*|simultaneous)"
_RAM = r"(?:ram|arbeitsspeicher|hauptspeicher|(?:lp)?ddr\d\w{0,3}(?:\s*ram)?)"
_CTX = r"(?:ctx|context|kontext)"
_BIG = r"(?P<num>\d{1,13}(?:[.,]\d{1,3})?)"  # after a context keyword: out-of-range values are named, not dropped


def _kv(m: re.Match[str]) -> KvCacheType:
    return KvCacheType(KV_TYPES[m["kv"]])


Reader = Callable[[re.Match[str]], object]
# (pattern, Query field, reader); run in this order, each match is blanked once read, so
# "kv q8" is gone before quants are looked for and "context 16000" before "3090 context"
READERS: tuple[tuple[Quick, str, Reader], ...] = (
    (ENGINE, "engine", lambda m: Engine.VLLM if m["e"] == "vllm" else Engine.LLAMA_CPP),
    (quick(r"\b(?:kv[ -]?cache|kv|k/v|cache[ -]?type(?:[ -]?[kv])?)\s*[:=-]?\s*" + _KV + r"\b", A),
     "kv_cache", _kv),
    (quick(r"\b" + _KV + r"[ -]?(?:kv[ -]?cache|kv|k/v)\b", A), "kv_cache", _kv),
    (quick(r"\bprompts?\s*(?:of|von|mit|with|=|:)?\s*" + _NUM + r"\s*(?P<suf>k?)\b(?:\s*tokens?)?", A),
     "prompt_tokens", prompt_length),
    (quick(r"\b" + _NUM + r"\s*(?P<suf>k?)[ -]?(?:tokens?|tok)?[ -]?(?:prompt|eingabe)s?\b", A),
     "prompt_tokens", prompt_length),
    (quick(r"--?(?:concurrent|users|parallel)\s*[= ]\s*(?P<num>\d{1,5})\b", A), "users", user_count),
    (quick(r"\b(?P<num>\d{1,9})\s*(?:" + _PARALLEL + r"\s*" + _USERS + r"?|" + _USERS + r")\b", A),
     "users", user_count),
    # "two people at once", "for three colleagues", "fünf Nutzer": a count word before the people
    (quick(r"\b(?P<w>" + "|".join(w for w, n in COUNT_WORDS.items() if n > 1 and w.isalpha() and w not in
                                  ("dual", "double", "doppel", "doppelte", "pair", "triple", "quad")) + r")\s+"
           r"(?:" + _PARALLEL + r"\s+)?" + _USERS + r"\b", A), "users", lambda m: COUNT_WORDS[m["w"].lower()]),
    (quick(r"\b" + _RAM + r"\s*[:=]?\s*(?:von\s+|of\s+)?" + _NUM + r"\s*(?P<unit>gb|gib|gigs?|g|tb)?\b"
                r"(?!\s*(?:of\s+)?(?:vram|gpu|video|grafik))", A), "ram_gb", ram_size),
    (quick(r"\b" + _NUM + r"\s*(?P<unit>gb|gib|gigs?|g|tb)?\s*(?:of\s+)?(?:ddr\d\s*)?(?:system\s*)?"
                r"(?:" + _RAM + r"|system\s*memory)\b", A), "ram_gb", ram_size),
    (quick(r"\b" + _CTX + r"(?:[ -]?(?:window|length|länge|size|fenster))?\s*(?:of|von|mit|with|=|:)?\s*"
                + _BIG + r"\s*(?P<suf>k|m)?\b(?:\s*tokens?)?", A), "context", token_count),
    # a context said as one ("8k kontext", "8192 context") before one that may be a name's ("Phi-3-mini-128k")
    (quick(r"\b" + _NUM + r"\s*(?P<suf>k\b|m\b)\s*(?:tokens?|" + _CTX + r")\b", A),
     "context", lambda m: token_count(m, keyword=False)),
    (quick(r"(?<!\d[.,])\b(?P<num>\d{1,3}(?:[.,]\d{3})+|\d{3,13})\s*(?:tokens?|" + _CTX + r")\b", A),
     "context", token_count),
    (quick(r"\b" + _NUM + r"\s*(?P<suf>k\b|m\b)", A), "context", lambda m: token_count(m, keyword=False)),
)  # fmt: skip
QUANT_GGUF = quick(r"\b((?:ud[-_])?[it]?q[1-8](?:[_-]?(?:k|0|1|xxs|xs|s|m|l|xl|nl))*(?:[_-][48][_-][48])?)\b", A)
# anything else shaped like a GGUF quant name ("q7_k_z", "iq3_kt"): named as unknown, never dropped
QUANT_SHAPED = quick(r"\b((?:ud[-_])?[it]?q[1-8](?:[_-][a-z0-9]{1,4}){1,4})\b", A)
QUANT_WORD = quick(
    r"\b(fp8|f8|w8a8|awq|gptq|mxfp4|nvfp4|bf16|fp16|f16|int4|int8|4[- ]?bits?|8[- ]?bits?"
    r"|native|nativ|unquantized|unquantised|unquantisiert|full precision)\b"
)
QUANT_ALIASES = {
    "q4": ("Q4_K_M",), "q5": ("Q5_K_M",), "q6": ("Q6_K",), "q3": ("Q3_K_M",), "q2": ("Q2_K",),
    "q8": ("Q8_0",), "int4": ("Q4_K_M",), "4bit": ("Q4_K_M",), "4bits": ("Q4_K_M",),
    "int8": ("Q8_0",), "8bit": ("Q8_0",), "8bits": ("Q8_0",), "f8": ("FP8",), "w8a8": ("FP8",),
    "fp16": ("BF16", "F16"), "f16": ("BF16", "F16"), "native": ("BF16",), "nativ": ("BF16",),
    "unquantized": ("BF16",), "unquantised": ("BF16",), "unquantisiert": ("BF16",),
    "fullprecision": ("BF16",), "q4k": ("Q4_K_M",), "q5k": ("Q5_K_M",), "q3k": ("Q3_K_M",),
}  # fmt: skip
# names that stand for another catalog quant, said on the card ("Q2_K_XL read as UD-Q2_K_XL"): unsloth
# dynamic quants without their "UD-" (LM Studio and Ollama tags drop it), and the ARM repacks of Q4_0,
# which hold the same bytes (llama.cpp now repacks Q4_0 at load time and removed these types)
READ_AS = {
    **{f"q{n}kxl": f"UD-Q{n}_K_XL" for n in (2, 3, 4, 5, 6, 8)},
    "iq1m_ud": "UD-IQ1_M", "q4044": "Q4_0", "q4048": "Q4_0", "q4088": "Q4_0",
}  # fmt: skip
FINETUNE = quick(r"\b(qlora|lora|full[ -]?(?:fine[ -]?tun\w*|finetun\w*|ft|parameter)|voll\w*)\b")
BARE_CONTEXT_MIN = 1024
# phrases that only say "per time" and must not be read as names ("pro" in "tokens pro sekunde")
FILLER_PHRASES = quick(
    r"\b(?:tokens?|tok|t)\s*(?:/|per|pro)\s*(?:sekunde|second|sec|s)\b"
    r"|\b(?:pro|per) (?:stunde|hour|monat|month)\b"
)

# words "super", "ultra", "max" intensify ("super slow", "ultra schnell"): then they are no tier of the card before
DEGREE_WORDS = _words(
    "slow fast quick laggy sluggish snappy smooth good bad cool fine long short langsam schnell lahm flott träge gut"
    " schlecht lang kurz"
)

# quants only vLLM (or another checkpoint server) serves: asking for one switches the engine
VLLM_QUANTS = frozenset({"AWQ", "GPTQ", "FP8", "NVFP4", "W8A8"})


# --- intents -----------------------------------------------------------------------------

INTENT_WORDS: tuple[tuple[str, Quick], ...] = (
    (
        "tco",
        quick(
            r"\b(?:buy (?:vs\.?|or|oder) rent|rent (?:vs\.?|or) buy|kaufen oder mieten|mieten oder kaufen"
            r"|tco|lohnt (?:sich|es sich)|worth buying|break[ -]?even|amortis\w*|total cost)\b"
        ),
    ),
    (
        "finetune",
        quick(r"\b(?:fine[ -]?tun\w*|finetun\w*|q?lora|training|trainieren|train|nachtrainieren)\b"),
    ),
    (
        "compare",
        quick(
            r"\b(?:compare|comparison|compared (?:to|with)|vergleich\w*|vs|versus|gegen|gegenüber|gegenueber|against|or|oder|oder lieber"
            r"|faster than|schneller als|better than|besser als)\b"
        ),
    ),
    (
        "speed",
        quick(
            r"\b(?:wie schnell|how fast|fast enough|speed|geschwindigkeit|tokens? (?:per|pro) s\w*"
            r"|throughput|durchsatz|latency|latenz|ttft|schnell)\b|\btok(?:ens?)?/s|\bt/s"
        ),
    ),
    (
        "gpus",  # "cheapest gpu / hardware for X" is a pick to buy, unless renting is said
        quick(
            r"^(?!.*\b(?:cloud|rent\w*|mieten|miete|per hour|pro stunde|runpod|vast\.ai)\b)"
            r".*\b(?:cheapest|günstigste\w*|billigste\w*) (?:gpus?|graphics cards?|grafikkarten?|karten?|hardware"
            r"|setup|rig|computer|pc|mac)\b"
        ),
    ),
    (
        "cloud",
        quick(
            r"\b(?:cheapest|günstigste\w*|billigste\w*|was kostet|kostet|how much does|cost\w*|kosten"
            r"|cloud|rent\w*|mieten|miete|price\w*|preis\w*|per hour|pro stunde|runpod|vast\.ai)\b"
        ),
    ),
    (
        "gpus",
        quick(
            r"\b(?:which|what|best|welche\w*|beste\w*) (?:gpus?|graphics cards?|grafikkarten?|karten?"
            r"|hardware)\b"
            r"|\b(?:recommend|suggest|empfiehl|empfehle|empfehlen) (?:me )?(?:an? |some |eine[nm]? |mir eine[nm]? )?"
            r"(?:gpus?|graphics cards?|grafikkarten?|karten?|hardware|card)\b|\b(?:gpu|hardware)[ -]?(?:recommendation|empfehlung)"
            r"|\bwhat (?:do|would|will|should) i (?:\w+ )?need (?:to run|for)\b|\bwas brauche? ich,? (?:\w+ )?(?:für|um)\b"
            # "minimum gpu for X", "mindestens", "smallest card that runs X": the cheapest hardware that holds it
            r"|\b(?:minimum|minimal|min|mindest\w*|kleinste\w*|smallest|least) (?:\w+ )?(?:gpus?|graphics cards?"
            r"|grafikkarten?|karten?|cards?|hardware|setup|rig|vram|requirements?|anforderung\w*|specs?)\b"
            r"|\b(?:minimum|mindestens|at least) (?:for|to run|needed|required|für|um)\b|\bmindestanforderung"
        ),
    ),
    (
        "models",
        quick(
            r"\b(?:which|what) (?:\d+(?:\.\d+)?b )?(?:models?|llms?)\b|\bwelche\w* (?:\d+(?:\.\d+)?b[ -])?(?:modelle?|llms?)\b"
            r"|what can i run"
            r"|was (?:kann ich|läuft|passt)|\bbest\w* (?:[\w.-]+ ){0,2}(?:models?|modell\w*|llms?)\b|what should i run"
            r"|\bwhat(?:'?s| is)? (?:\w+ )?(?:fits?|runs?|will (?:fit|run)|would (?:fit|run)|can (?:fit|run))\b"
            r"|\bwas geht\b|\bwas für (?:\w+ )?(?:modelle?|llms?)\b|\b(?:can|could) (?:i|we) run (?:anything|something|on|with|in)\b"
            r"|\b(?:i|we) can run\b"
            r"|\b(?:llms|models|modelle) (?:for|für|on|auf)\b"  # plural: "ein 8b modell auf meiner 4090" is one model
            # "suggest a model for my 4060", "empfehlung für 16gb", "good model for coding on 16gb": no model
            # named, so a model is what is asked for (a device asked for is a /gpus question, read before)
            r"|\b(?:recommend|suggest|empfiehl|empfehl|vorschl)\w*"
            r"|\b(?:good|decent|solid|great|nice|strong|gute[nrs]?|ordentliche[nrs]?) (?:[\w.-]+ )?(?:models?|modell\w*|llms?)\b"
            r"|\b(?:latest|newest|neueste[nrs]?|aktuellste[nrs]?) (?:[\w.-]+ )?(?:models?|modell\w*|llms?)\b"
            r"|\b(?:biggest|largest|gr(?:ö|oe|o)(?:ß|ss)te[snrm]?)\b"
            r"|\bwas soll ich\b.*\blaufen"
        ),
    ),
    ("quant", quick(r"\b(?:quant\w*|welche quant\w*|which quant\w*)\b")),
)

# --- language ----------------------------------------------------------------------------

GERMAN_WORDS = _words(
    """ist passt auf meine meiner meinem mein mit wie schnell kostet was welche welches welcher der
    die das und oder ich kann läuft laufen zwei drei vier nutzer für grafikkarte grafikkarten
    kontext modelle brauche reicht geht bei mir nicht ein eine einer lohnt sich kaufen mieten
    vergleich wieviel viel hilfe genug habe hab reichen passen sind schneller günstigste billigste
    mal bitte"""
)
ENGLISH_WORDS = _words(
    """can i run on my with how fast is the what which cheapest does cost will fit for and or two
    three users need enough it a to do buy rent help have much many speed would could are this
    fits runs best compare"""
)
# languages a model should write ("a good model for german text"): no model is named by one
LANGUAGE_WORDS = _words(
    """english german french spanish italian portuguese dutch polish russian ukrainian turkish arabic hindi
    japanese chinese korean vietnamese indonesian englisch deutsch deutsche deutschen deutscher französisch
    spanisch italienisch japanisch chinesisch koreanisch russisch"""
)
# words that are understood without being a parameter (never reported as leftovers)
FILLER = (
    STOPWORDS
    | _words(
        """vs versus gegen gegenüber gegenueber against compare vergleich vergleiche cheapest cloud rent mieten kaufen buy
    kostet kosten cost price preis speed schnell fast wie how tokens token tok per pro second
    sekunde gpu gpus grafikkarte grafikkarten karte card hardware modelle models llms welche
    which lohnt sich tco worth fine tune tuning finetune finetuning training quant quants
    quantization quantisierung brauche need enough genug reicht reichen help hilfe ram
    vram memory speicher mac studio system setup machine rechner pc laptop server local lokal
    with gb gib s t ja yes no nein hi hallo hello hey thanks danke ok okay voll full finetunen
    buying lassen viele schafft schaffen bekomme bekommen kriege möglich possible"""
    )
    | LANGUAGE_WORDS
)


_LETTERS = re.compile(r"[^\W\d_]+")
_UMLAUT = quick("[äöüß]")


def guess_language(low: str) -> Literal["de", "en"] | None:
    """Guesses German or English from common words; None when unsure."""
    words = _LETTERS.findall(low)
    de = sum(map(GERMAN_WORDS.__contains__, words)) + (2 if _UMLAUT.search(low) else 0)
    en = sum(map(ENGLISH_WORDS.__contains__, words))
    return "de" if de > en else "en" if en > de else None


# --- reading the text ------------------------------------------------------------------

Found = dict[str, object]  # Query field → value read from the text (plus "command", "repo_tag")


_NOT_ALNUM = re.compile(r"[^a-z0-9]")


def compact(text: str) -> str:
    """Lower-cases and drops everything but letters and digits."""
    return _NOT_ALNUM.sub("", text.lower())


def blank(m: re.Match[str]) -> str:
    """Replaces a match by as many spaces, so offsets into the text stay valid."""
    return " " * len(m.group())


def _read(pattern: Quick, text: str, found: Found, field: str, reader: Reader) -> str:
    """Stores the first readable match of a pattern in ``found`` and blanks every readable one."""
    if not pattern.may(text):
        return text

    def one(m: re.Match[str]) -> str:
        value = reader(m)
        if value is None:
            return m.group()
        found.setdefault(field, value)
        return blank(m)

    return pattern.sub(one, text)


def quant_id(raw: str, quants: dict[str, str]) -> str | None:
    """Maps a typed quant ("q4", "4-bit", "ud-q2_k_xl", "q2_k_xl") to a vocabulary id, or None."""
    key = compact(raw)
    read_as = (compact(READ_AS[key]),) if key in READ_AS else ()
    candidates = (key, *read_as, *(compact(alias) for alias in QUANT_ALIASES.get(key, ())))
    return next((quants[c] for c in candidates if c in quants), None)


def _read_quants(low: str, found: Found, quants: dict[str, str], unknown: list[str]) -> str:
    """Reads the first known quant; a quant the vocabulary lacks is kept as a leftover."""

    def one(m: re.Match[str]) -> str:
        qid = quant_id(m.group(1), quants)
        if qid is None:
            unknown.append(m.group(1))
            found.setdefault("unknown_quant", m.group(1).upper())
        elif "quant" not in found:
            found["quant"] = qid
            if compact(m.group(1)) in READ_AS:
                found["quant_text"] = m.group(1).upper()
        return blank(m)

    for pattern in (QUANT_GGUF, QUANT_WORD, QUANT_SHAPED):
        low = pattern.sub(one, low)
    return low


def read_repo(text: str, found: Found) -> str:
    """Finds a Hugging Face repo id or URL; leaves its name part so the model can be matched."""
    for pattern in (HF_URL, HF_ID):
        m = pattern.search(text)
        if m is None:
            continue
        owner, name, tag = m.group(1), m.group(2).rstrip(".-"), m.group(3)
        if QUANT_GGUF.fullmatch(owner.lower()) or QUANT_GGUF.fullmatch(name.lower()):
            continue
        found["hf_repo"] = f"{owner}/{name}"
        if tag:
            found["repo_tag"] = tag
        s, e = m.start(2), m.start(2) + len(name)
        return text[: m.start()] + " " * (s - m.start()) + text[s:e] + " " * (m.end() - e) + text[m.end() :]
    return text


def read_params(low: str, found: Found, quants: dict[str, str], unknown: list[str]) -> str:
    """Takes every fixed-shape parameter out of the text."""
    low = FILLER_PHRASES.sub(blank, low)
    for pattern, field_name, reader in READERS:
        low = _read(pattern, low, found, field_name, reader)
    if isinstance(tag := found.get("repo_tag"), str) and (qid := quant_id(tag, quants)):
        found["quant"] = qid
    return _read_quants(low, found, quants, unknown)

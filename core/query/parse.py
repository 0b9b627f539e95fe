"""Free text (German or English) → ``Query``: what the user asked and about which model and GPU.

How it works, in three passes over one cleaned, lower-cased string:

1. Patterns (``core.query.lexicon``) take out what has a fixed shape: the /command, a Hugging
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

from typing import Literal

from core.query import devices as D
from core.query import lexicon as L
from core.query import names as N
from core.query import text as T
from core.query.asks import read_asks
from core.query.draft import asks_speculative, take_draft
from core.query.index import Candidate, NameIndex, index_for, select_names
from core.query.resolve import (
    extend_name,
    is_ram,
    join_split_name,
    joined_text,
    repo_model,
    sized_by_ram,
    to_match,
)
from core.query.specs import read_specs
from core.query.types import Intent, Match, Query, VocabEntry, Vocabulary

__all__ = ["Intent", "Match", "Query", "VocabEntry", "Vocabulary", "complete", "parse"]


# --- intent, language, counts ------------------------------------------------------------


def _intent(low: str, found: L.Found, chosen: dict[str, Candidate], named: bool = False) -> tuple[Intent, bool]:
    """Picks the intent: the command if any, else the first intent whose words appear (``named``: a model
    the catalog lacks is named, "can I run nimbo 2 7b": no list of models)."""
    if isinstance(cmd := found.get("command"), str):
        return Intent(cmd), True
    has = {k: k in chosen for k in ("model", "model2", "gpu", "gpu2")}
    has["model"] = has["model"] or named
    needs = {
        "compare": has["model2"] or has["gpu2"],
        "gpus": not has["gpu"],
        "models": not has["model"],  # "what can I run": on the named, the saved or an asked-for device
    }
    for name, pattern in L.INTENT_WORDS:
        if needs.get(name, True) and pattern.search(low):
            return Intent(name), True
    return Intent.FIT, False


def _count_near(toks: list[L.Tok], c: Candidate, used: set[int]) -> int | None:
    """Reads a GPU count written just before ("2x", "zwei", "4 x") or after ("x2") a GPU."""
    i, times = c.span.first - 1, False
    while i >= 0 and (toks[i].key in L.COUNT_GLUE or toks[i].key in L.VENDOR_WORDS):
        times = times or toks[i].key in L.TIMES
        i -= 1
    if i >= 0 and i not in used and (n := _count_value(toks[i], "count", times)):
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


def _plurals(toks: list[L.Tok], keys: dict[str, set[int]]) -> list[int]:
    """Where a plural -s ends the last word of a counted name, a word no name has whose singular a name
    has: "4 RTX 5000 Adas", "3 A100 PCIes", "3 Ascend 910Cs" (the offsets of those -s; "8845HS" keeps its own)."""
    out = []
    for i, t in enumerate(toks):
        if t.kind != "word" or len(t.key) < 2 or t.key[-1] != "s" or t.key in keys:
            continue
        glued = i > 0 and toks[i - 1].kind == "num" and toks[i - 1].end == t.start
        if t.key[:-1] not in keys and not (glued and toks[i - 1].key + t.key[:-1] in keys):
            continue  # "910Bs": "910b" is the name's
        after_number = i > 0 and toks[i - 1].kind == "num" and t.key not in L.JOINER_WORDS
        if len(t.key) < 4 and not (glued or after_number):
            continue  # a short one only next to a model number ("910Cs", "4090 Ds"), never "vs" or "its"
        if i + 1 < len(toks) and toks[i + 1].kind in ("word", "num", "mem") and toks[i + 1].start - t.end <= 1:
            continue  # not the last word of the name
        j = i - 1
        while j >= 0 and toks[j].kind in ("word", "num", "mem", "skip", "post") and not _count_token(toks[j]):
            if toks[j].kind == "skip" and toks[j].key not in L.VENDOR_WORDS:
                break
            j -= 1
        if j >= 0 and _count_token(toks[j]) and t.text == t.key:
            out.append(t.end - 1)
    return out


def _blank_at(text: str, places: list[int]) -> str:
    for p in places:
        text = text[:p] + " " + text[p + 1 :]
    return text


def _count_token(t: L.Tok) -> bool:
    return t.kind == "count" or (t.kind == "num" and t.key.isdecimal() and 2 <= int(t.key) <= 64)


def _count_value(t: L.Tok, kind: str, times: bool = False) -> int | None:
    """The GPU count a token states (a count word, "N x", or a bare 1–64), or None."""
    n = t.value if t.kind == kind else int(t.key) if t.kind == "num" and t.key.isdecimal() else 0
    # "100x 4090" and "200 x 3090" are kept so the answer can name the limit; a bare number counts GPUs only up to 64
    return n if 1 <= n <= (9999 if (t.kind == kind and kind) or times else 64) else None


# --- parse -------------------------------------------------------------------------------


def parse(text: str, vocab: Vocabulary, intent: Intent | None = None) -> Query:
    """Reads one question into a Query; never raises on any string.

    ``intent`` is the question kind when the caller knows it (a chat /command, read on the chat side
    of the parser in ``bot.commands``); otherwise the words of the question decide.
    """
    idx = index_for(vocab)
    found: L.Found = {}
    cleaned = T.clean(text if isinstance(text, str) else "")
    clean = L.read_repo(cleaned, found)
    low = T.lower_keep_length(clean)
    full_low = low
    if intent is not None:
        found["command"] = intent.value
    unknown: list[str] = []
    low = read_specs(low, found)
    low = D.read_provider(D.read_devices(L.same_cards(low), found), found, vocab.providers)
    low = L.read_params(low, found, idx.quants, unknown)
    fm = L.FINETUNE.search(low)
    if fm and not fm.group(1).startswith("voll"):  # "voll" alone may just mean "totally"
        low = low[: fm.start()] + L.blank(fm) + low[fm.end() :]
    toks = L.tokenize(low)
    if plural := _plurals(toks, idx.keys):  # "4 RTX 5000 Adas": the -s blanked, offsets kept
        clean, low, full_low = (_blank_at(x, plural) for x in (clean, low, full_low))
        toks = L.tokenize(low)
    after_engine, breaks = _gaps(toks, full_low, low)
    glued = frozenset(
        i
        for i in range(1, len(toks))
        if toks[i - 1].kind in ("word", "num") and full_low[toks[i - 1].end : toks[i].start] == "-"
    )  # "phi-3.5-mini-instruct m5 pro": a name starts at no token a hyphen joins to a name token before it
    chosen = select_names(toks, idx, after_engine, breaks, glued)
    draft = take_draft(chosen, toks, full_low, idx)
    intent, intent_set = _intent(full_low, found, chosen)
    if not intent_set and _listed(chosen, toks, full_low, MODEL_SLOTS):
        intent, intent_set = Intent.COMPARE, True  # "llama 3.1 8b, qwen3 8b and gemma 3 12b on a 3060"
    if (
        found.get("provider")
        and "gpu" not in chosen
        and intent in (Intent.FIT, Intent.SPEED)
        and "command" not in found
    ):
        intent, intent_set = Intent.CLOUD, True  # "deepseek r1 on aws": a provider named where a device would be
    if found.get("biggest") and "model" not in chosen and "command" not in found:
        intent, intent_set = Intent.MODELS, True  # "größtmögliches Modell auf einer 5090"
    used = {i for c in (*chosen.values(), *([draft] if draft else [])) for i in range(c.span.first, c.span.last + 1)}
    cores = found.get("gpu_cores")
    fields = _name_fields(chosen, clean, toks, used, idx, full_low, breaks, cores if isinstance(cores, int) else None)
    if draft is not None:
        fields["draft"] = to_match(draft, clean, toks, idx)
    fields["speculative"] = asks_speculative(full_low)
    if fm and (intent is Intent.FINETUNE or "lora" in fm.group(1)):
        found["finetune_method"] = _finetune_method(fm.group(1))
    _bare_context(toks, used, found)
    repo = found.get("hf_repo")
    if isinstance(repo, str) and (known := repo_model(repo, idx)):
        fields["model"] = Match(id=known, text=repo, score=100.0)  # a catalog model's own repo id
    known_gpu = isinstance(g := fields.get("gpu"), Match) and not g.unknown
    fields.update(_unknown_phrases(toks, used, clean, "model" in fields, known_gpu))
    if "hf_repo" not in found and (size := _size_only(toks, used, clean, fields)):
        fields["model_size"] = size  # "ein 8b modell", "which gpu for a 70b": a model of that size
    if intent is Intent.MODELS and "command" not in found and "model_text" in fields:
        intent, intent_set = _intent(full_low, found, chosen, named=True)
    if isinstance(g, Match) and g.unknown and isinstance(phrase := fields.get("gpu_text"), str):
        fields["gpu"] = g.model_copy(update={"text": joined_text(clean, phrase, g.text)})  # "rx 5500" + "xt"
    g = fields.get("gpu")
    if (hint := found.pop("igpu_hint", None)) and not (isinstance(g, Match) and (g.id or g.choices)):
        fields.pop("gpu", None)  # "ryzen 7 7840u", "radeon 680m" the catalog lacks: a generic iGPU, its name said
        fields.pop("gpu_text", None)
        found.setdefault("device_kind", "igpu")
        found["board"] = hint
        g = None
    if isinstance(g, Match) and g.id is None and "device_kind" in found and not any(ch.isdigit() for ch in g.text):
        del fields["gpu"]  # "a laptop with a ryzen 7 7840u": the form factor of a device named otherwise
    cpu_text = found.pop("cpu_text", None)
    if found.pop("cpu_named", None) and "gpu" not in fields and "gpu_text" not in fields:
        found.setdefault("device_kind", "cpu")  # "ryzen 9 7950x with 64 gb": no GPU named, the CPU runs it
        if cpu_text and found["device_kind"] == "cpu":
            found.setdefault("board", cpu_text)  # "epyc 9654": that CPU's channels and cores, when it has a row
    loose = fields.pop("loose_memory_gib", None)
    unknown_gpu = "gpu_text" in fields or (isinstance(g := fields.get("gpu"), Match) and g.unknown)
    if loose is not None and unknown_gpu and "device_memory_gib" not in found:
        found["device_memory_gib"] = loose  # "rtx 3070 with 8 GB": a device the catalog lacks, and its memory
    elif loose is not None and found.get("device_kind") == "cpu" and "ram_gb" not in found:
        found["ram_gb"] = loose  # "epyc 9654 mit 384 gb": a CPU's memory is the machine's RAM
    elif loose is not None and "gpu" not in fields and "device_kind" not in found and not fields.get("memory_gib"):
        found.update(device_kind="gpu", device_memory_gib=loose)  # "best model for 24 GB": memory is the device
        if not intent_set:
            intent, intent_set = _intent(full_low, found, chosen)
    elif isinstance(g, Match) and g.id and g.assumed and isinstance(loose, float) and is_ram(loose, g.id, idx):
        fields["gpu"] = g.model_copy(update={"memory_gib": None, "assumed": False})
        found.setdefault("ram_gb", loose)  # "4090 with 64 GB": far more than any 4090 has, so the machine's RAM
    ram = found.get("ram_gb")
    if isinstance(g, Match) and g.id is None and isinstance(ram, float) and (sized := sized_by_ram(g, ram, idx)):
        fields["gpu"] = g.model_copy(update={"id": sized, "choices": (), "ambiguous": False})
    if intent is not Intent.COMPARE and _listed(chosen, toks, L.same_cards(full_low), GPU_SLOTS):
        fields["rig"] = True  # "4090 + 3090": two cards in one box, not a comparison
    fields.update({k: v for k, v in found.items() if k in Query.model_fields})
    explicit = {k for k, v in fields.items() if v is not None}
    if intent_set:
        explicit.add("intent")
    leftovers = _leftovers(toks, used, unknown)
    return Query(
        intent=intent,
        language=L.guess_language(_without(low, toks, used)),
        asks=read_asks(cleaned, leftovers),
        leftovers=leftovers,
        explicit=frozenset(explicit),
        **fields,  # type: ignore[arg-type]
    )


def _without(low: str, toks: list[L.Tok], used: set[int]) -> str:
    """The text without the names read from it and without a leading /command: a model id's "it"
    or "a3b" is no English, and neither is "/fit"."""
    command = (
        len(low) - len(low.lstrip()) + (len(low.lstrip().split(maxsplit=1)[0]) if low.lstrip().startswith("/") else 0)
    )
    cut = list(" " * command + low[command:])
    named = set(used)
    for i in sorted(used):  # the suffixes a name's text runs on with ("gemma-3-27b-it", "command-a")
        j = i + 1
        while j < len(toks) and j not in named and toks[j].key in _ID_SUFFIXES and toks[j].start - toks[j - 1].end <= 1:
            named.add(j)
            j += 1
    for i in named:
        cut[toks[i].start : toks[i].end] = " " * (toks[i].end - toks[i].start)
    return "".join(cut)


_ID_SUFFIXES = frozenset(["it", "instruct", "chat", "gguf", "hf", "a", "e"])


_PUNCTUATION = frozenset(":;,?!")  # not brackets: display names hold them ("Gemma 3 1B (base)")


def _gaps(toks: list[L.Tok], full_low: str, low: str) -> tuple[frozenset[int], frozenset[int]]:
    """What stood between each token and the one before, in the question as typed: (the positions
    right after an engine's name, where a word is the engine's: "ollama command"; the positions no
    name runs across: after punctuation or a word the parser read as something else)."""
    after_engine: set[int] = set()
    breaks: set[int] = set()
    for i, t in enumerate(toks):
        start = toks[i - 1].end if i else 0
        gap = full_low[start : t.start]
        if not gap.strip():
            continue
        if L.ENGINE.search(gap):
            after_engine.add(i)
        if i and (
            _PUNCTUATION.intersection(gap) or (any(c.isalpha() for c in gap) and not low[start : t.start].strip())
        ):
            breaks.add(i)
    return frozenset(after_engine), frozenset(breaks)


GPU_SLOTS = ("gpu", "gpu2", "gpu3", "gpu4")
MODEL_SLOTS = ("model", "model2", "model3", "model4")


def _listed(chosen: dict[str, Candidate], toks: list[L.Tok], low: str, slots: tuple[str, ...]) -> bool:
    """Whether the names in these slots are listed together: "A + B", "A and B", "A und B", "A, B" (devices:
    parts of one machine; models: each of them, side by side)."""
    spans = sorted((chosen[s].span for s in slots if s in chosen), key=lambda x: x.first)
    gaps = [low[toks[a.last].end : toks[b.first].start] for a, b in zip(spans, spans[1:], strict=False)]
    return bool(gaps) and all(L.RIG_JOINER.fullmatch(g) for g in gaps)


def _finetune_method(word: str) -> Literal["qlora", "lora", "full"]:
    """Maps "qlora", "lora", "full fine-tune" or "voll…" to a method."""
    return "qlora" if word == "qlora" else "lora" if word == "lora" else "full"


def _name_fields(
    chosen: dict[str, Candidate],
    clean: str,
    toks: list[L.Tok],
    used: set[int],
    idx: NameIndex,
    low: str,
    breaks: frozenset[int],
    cores: int | None = None,
) -> dict[str, object]:
    """Builds the model/GPU fields, GPU counts and a unified-memory size from the chosen spans."""
    out: dict[str, object] = {}
    slots = ("model", "model2", "model3", "model4", "gpu", "gpu2", "gpu3", "gpu4")
    join_split_name(chosen, toks)
    for slot in slots:
        if slot in chosen:
            extend_name(chosen[slot], toks, used, breaks, idx.keys)
    out["memory_gib"] = _memory(chosen, toks, used, idx, low)
    loose = out["memory_gib"] or _loose_memory(toks, used)  # "4060 ti with 8 GB", "rtx 3070 mit 8 GB"
    if isinstance(loose, float):
        out["loose_memory_gib"] = loose
    matches: dict[str, Match] = {}
    for slot in slots:
        if slot in chosen:
            memory = int(loose) if slot == "gpu" and isinstance(loose, float) else None
            matches[slot] = to_match(chosen[slot], clean, toks, idx, memory, cores)
    out.update({k: v for k, v in matches.items() if k in ("model", "model2", "gpu", "gpu2")})
    out["more_models"] = tuple(matches[s] for s in ("model3", "model4") if s in matches)
    out["more_gpus"] = tuple(matches[s] for s in ("gpu3", "gpu4") if s in matches)
    if "not" in chosen:
        ghost = chosen["not"]
        out["not_device"] = ghost.ranking[0][0]
        out["not_device_text"] = clean[toks[ghost.span.first].start : toks[ghost.span.last].end]
    counts: dict[str, int | None] = {
        s: _count_near(toks, chosen[s], used) for s in ("gpu", "gpu2", "gpu3", "gpu4") if s in chosen
    }
    for slot in ("gpu", "gpu2"):
        if counts.get(slot) is not None:
            out[slot + "_count"] = counts[slot]
    out["more_gpu_counts"] = tuple(counts[s] or 1 for s in ("gpu3", "gpu4") if s in chosen)
    return out


def _memory(chosen: dict[str, Candidate], toks: list[L.Tok], used: set[int], idx: NameIndex, low: str) -> float | None:
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


def _size_only(toks: list[L.Tok], used: set[int], text: str, fields: dict[str, object]) -> str | None:
    """A model size no name took ("8b", "30b-a3b"), as typed, when nothing else names the model: a lone
    size, or a phrase that is a size and words that only say so ("70b dense", "1.1b vision": no catalog
    name, though spelled like one)."""
    model = fields.get("model")
    if isinstance(model, Match) and not model.unknown:
        return None
    key = "model" if isinstance(model, Match) else "model_text"
    phrase = model.text if isinstance(model, Match) else fields.get("model_text")
    if isinstance(phrase, str):
        said = N.typed(phrase)
        if said.size_b is None or not set(said.words) <= L.SIZE_WORDS or said.numbers:
            return None
        del fields[key]
        start = text.find(phrase)
        used.update(i for i, t in enumerate(toks) if start <= t.start and t.end <= start + len(phrase))
        return phrase
    for i, t in enumerate(toks):
        if i in used or t.kind != "num" or not (N.MODEL_SIZE.fullmatch(t.text) or N.MOE_TOTAL.fullmatch(t.text)):
            continue
        last = i + 1 if i + 1 < len(toks) and i + 1 not in used and N.ACTIVE.fullmatch(toks[i + 1].text) else i
        used.update(range(i, last + 1))
        return text[t.start : toks[last].end]
    return None


def _leftovers(toks: list[L.Tok], used: set[int], unknown: list[str]) -> tuple[str, ...]:
    """Lists the words the parser did not understand (at most ten)."""
    out = list(unknown)
    for i, t in enumerate(toks):
        if i in used or t.kind == "skip" or t.key in L.FILLER or t.kind in ("count", "post"):
            continue
        out.append(t.text[:40])
    return tuple(out[:10])


def complete(text: str, vocab: Vocabulary, kind: Literal["model", "gpu"], limit: int = 25) -> list[tuple[str, str]]:
    """(id, display name) of entries for a name being typed: prefix matches first, then
    substrings, then the parser's own ranking of the text. Discord autocomplete uses it."""
    idx = index_for(vocab)
    typed = L.compact(T.clean(text))
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

"""Questions generated from the catalog itself, each with the reading it must get (issue 34 item 1).

Every model and every device of the catalog, in templates of both languages (command and sentence
forms, lowercase, typos, counts and context spelled many ways, repo ids of quantized copies) and
sentences that use the catalog's ordinary-word aliases (``core.query.ordinary_words``) as everyday
words. A ``Gen`` names its class and what the parser must read: the model id (``None``: no model at
all), device id, device count, context and language. ``generate`` is seeded: the same seed gives the
same questions, so the CI sample (tests/core/test_generated_questions.py) is stable.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass

from catalog.extra_facts import ollama_tags
from catalog.lookup import vocabulary
from core.models import Catalog
from core.query.ordinary_words import ORDINARY_WORDS
from core.query.parse import parse
from core.query.types import VocabEntry

UNSET = "unset"  # an expected field the class does not check


@dataclass(frozen=True)
class Gen:
    cls: str
    text: str
    model: str | None | object = UNSET
    gpu: str | None | object = UNSET
    count: int | object = UNSET
    context: int | object = UNSET
    lang: str | object = UNSET
    devices: tuple[str, ...] | object = UNSET  # every device compared, in order
    engine: str | None | object = UNSET
    kind: str | None | object = UNSET  # a device named by its memory only (``Query.device_kind``)
    memory: float | None | object = UNSET  # its memory in GB
    users: int | None | object = UNSET  # people served at once
    paste: bool | object = UNSET  # whether the message is a pasted command (``bot.question_kinds.is_paste``)


COUNTS_EN = {2: ("2x {g}", "two {g}", "dual {g}", "2 x {g}", "{g} x2", "2× {g}", "2 {g}s"),
             3: ("3x {g}", "three {g}", "triple {g}", "3 {g}s"),
             4: ("4x {g}", "four {g}", "quad {g}", "4 {g}s")}  # fmt: skip
COUNTS_DE = {2: ("2x {g}", "zwei {g}", "2 mal {g}", "2 Stück {g}"),
             3: ("3x {g}", "drei {g}"),
             4: ("4x {g}", "vier {g}", "4 Stück {g}")}  # fmt: skip
CONTEXTS = {32768: ("32k", "32K", "32768", "32.768", "32,768", "32 k", "32k tokens"),
            131072: ("128k", "128K", "131072", "128 k"),
            8192: ("8k", "8192", "8K")}  # fmt: skip

FIT_EN = ("can i run {m} on {g}", "{m} on {g}?", "will {m} fit on {g}", "does {m} run on my {g}",
          "/fit {m} {g}", "{m} {g}")  # fmt: skip
FIT_DE = ("kann ich {m} auf {g} laufen lassen", "läuft {m} auf meiner {g}?", "passt {m} auf {g}",
          "/fit {m} {g}", "{m} auf {g}")  # fmt: skip
CTX_EN = ("can i run {m} on {g} with {c} context", "{m} on {g}, {c} ctx", "{m} {g} context {c}")
CTX_DE = ("läuft {m} auf {g} mit {c} Kontext", "{m} auf {g} mit {c} kontext")
ORDINARY_EN = ("what {w} do i run for {m} on {g}", "is the {w} option fine for {m} on {g}?",
               "{m} on {g}, i need it to be {w}", "i like {w} a lot. does {m} run on {g}?")  # fmt: skip
ORDINARY_DE = ("welchen {w} brauche ich für {m} auf {g}", "{m} auf {g}, geht das mit {w}?")
NO_MODEL_EN = ("which {w} should i use on my {g}?", "what is the best model for {w} stuff on my {g}",
               "is my {g} good for {w} work?")  # fmt: skip
NO_MODEL_DE = ("welches modell für {w} auf meiner {g}?", "ist meine {g} gut für {w}?")
LANG_DE = ("läuft {m} auf {g}?", "geht {m} auf meiner {g}", "reicht meine {g} für {m}", "{m} nur auf der {g}?")
LANG_EN = ("does {m} run on {g}?", "is my {g} enough for {m}", "{m} only on the {g}?")
REPO_FORMS = ("{org}/{base}-GGUF", "{org}/{base}-GGUF Q4_K_M", "{org}/{base}-AWQ", "{org}/{base}-FP8",
              "mlx-community/{base}-4bit", "https://huggingface.co/{org}/{base}-GGUF")  # fmt: skip


def _unique(entries: tuple[VocabEntry, ...]) -> list[VocabEntry]:
    """Entries whose display name no other entry shares (a shared name is a question back, by design).

    Devices are further kept only where the bare name reads as that device ("RTX 2060" asks which
    memory size, by design): the classes test phrasings, test_catalog_breadth tests the names.
    """
    seen = Counter(e.names[0].lower() for e in entries)
    return [e for e in entries if seen[e.names[0].lower()] == 1]


def _typo(name: str, rng: random.Random) -> str | None:
    """One adjacent swap inside the longest letter run of the name (at least 6 letters), else None."""
    words = [w for w in name.split() if w.isalpha() and len(w) >= 6]
    if not words:
        return None
    w = max(words, key=len)
    i = rng.randrange(1, len(w) - 2)
    return name.replace(w, w[:i] + w[i + 1] + w[i] + w[i + 2 :], 1)


# an engine's command word used in a sentence: a question naming its engine, not a command to diagnose
SPOKEN_EN: tuple[tuple[str, str], ...] = (
    ("vllm", "vllm serve {m} on {g} for 8 users"),
    ("vllm", "how many users can vllm serve with {m} on {g}"),
    ("vllm", "can vllm serve {m} on a {g}"),
    ("llama.cpp", "ollama run {m} on my {g}"),
    ("llama.cpp", "llama-server {m} on {g}"),
    ("llama.cpp", "what llama-server flags for {m} on {g}"),
)
SPOKEN_DE: tuple[tuple[str, str], ...] = (
    ("vllm", "vllm serve {m} auf {g} für 8 Nutzer"),
    ("vllm", "wie viele Nutzer kann vllm serve mit {m} auf {g}"),
    ("llama.cpp", "ollama run {m} auf meiner {g}"),
    ("llama.cpp", "llama-server {m} auf {g}"),
)
# what an engine accepts: its model in one word (a repo id, a file, a tag), flags, or nothing else
COMMANDS = (
    "vllm serve {repo}",
    "vllm serve {repo} --max-model-len 32768",
    "llama-server -m {base}-Q4_K_M.gguf -c 8192",
    "llama-server -hf {repo}-GGUF:Q4_K_M on my {g}",
    "ollama run {tag}:latest",
    "ollama pull {tag}:8b",
)
UNIFIED_EN: tuple[str, ...] = (
    "{m} on {n}gb unified memory",
    "is {n} gb of unified memory enough for {m}",
    "can i run {m} with {n}GB unified RAM",
    "{m} on unified memory of {n} GB",
    "{m} with {n} gb shared memory",
)
UNIFIED_DE: tuple[str, ...] = (
    "reichen {n} GB Unified Memory für {m}",
    "{m} mit {n} GB gemeinsamem Speicher",
    "läuft {m} auf {n}GB unified memory?",
)
USERS_EN = ("can {n} {p} use {m} on my {g} at the same time", "{m} on {g} for {n} {p}",
            "serve {m} to {n} concurrent {p} on a {g}")  # fmt: skip
USERS_DE = ("können {n} {p} gleichzeitig {m} auf meiner {g} nutzen", "{m} auf {g} für {n} {p}")
PEOPLE = {"en": ("people", "users", "colleagues", "developers", "clients"), "de": ("Personen", "Nutzer", "Kollegen",
          "Leute", "Mitarbeiter")}  # fmt: skip
NUMBER_WORDS = {"en": {"two": 2, "three": 3, "four": 4, "five": 5, "ten": 10, "12": 12},
                "de": {"zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "zehn": 10, "12": 12}}  # fmt: skip
OLLAMA_EN = ("can i run {t} on my {g}", "{t} on {g}?", "how fast is {t} on a {g}")
OLLAMA_DE = ("läuft {t} auf meiner {g}?", "{t} auf {g}")
UNIFIED_SIZES = (16, 24, 32, 36, 48, 64, 96, 128, 192, 256, 512)  # the sizes Macs, Strix Halo and DGX Spark come in


def generate(catalog: Catalog, seed: int = 34, per_class: int | None = None) -> list[Gen]:
    """All generated questions (``per_class`` bounds each class to a seeded sample)."""
    rng = random.Random(seed)
    vocab = vocabulary(catalog)
    repos = {m.id: m.hf_repo for m in catalog.models if m.hf_repo and "/" in m.hf_repo}
    models = _unique(vocab.models)
    gpus = [g for g in _unique(vocab.gpus) if (q := parse(g.names[0], vocab).gpu) is not None and q.id == g.id]
    words = {w for w in ORDINARY_WORDS if len(w) >= 3 and w.isalpha()}
    # the ordinary words that are words of model names ("command", "scout", "seed"): never a model alone
    model_words = sorted(w for w in words if any(w in re.split(r"[\W_]+", n.lower()) for e in models for n in e.names))
    desk = [g for g in gpus if not g.laptop] or gpus
    out: dict[str, list[Gen]] = {}

    def add(g: Gen) -> None:
        out.setdefault(g.cls, []).append(g)

    for m in models:
        g = rng.choice(desk)
        name, dev = m.names[0], g.names[0]
        for lang, forms in (("en", FIT_EN), ("de", FIT_DE)):
            t = rng.choice(forms)
            add(Gen(f"model+device {lang}", t.format(m=name, g=dev), m.id, g.id))
            add(Gen(f"lowercase {lang}", t.format(m=name, g=dev).lower(), m.id, g.id))
        if (typo := _typo(name, rng)) is not None:
            add(Gen("typo en", rng.choice(FIT_EN).format(m=typo, g=dev), m.id, g.id))
        add(Gen("model id en", rng.choice(FIT_EN).format(m=m.id, g=dev), m.id, g.id))
        add(Gen("language de", rng.choice(LANG_DE).format(m=m.id, g=dev), m.id, lang="de"))
        add(Gen("language en", rng.choice(LANG_EN).format(m=m.id, g=dev), m.id, lang="en"))
        c = rng.choice(list(CONTEXTS))
        add(Gen("context en", rng.choice(CTX_EN).format(m=name, g=dev, c=rng.choice(CONTEXTS[c])), m.id, context=c))
        add(Gen("context de", rng.choice(CTX_DE).format(m=name, g=dev, c=rng.choice(CONTEXTS[c])), m.id, context=c))
        w = rng.choice(sorted(words - set(name.lower().replace("-", " ").split())))
        add(Gen("ordinary words en", rng.choice(ORDINARY_EN).format(w=w, m=name, g=dev), m.id, g.id))
        add(Gen("ordinary words de", rng.choice(ORDINARY_DE).format(w=w, m=name, g=dev), m.id, g.id))
        if m.id in repos:
            org, base = repos[m.id].split("/", 1)
            add(Gen("repo id", rng.choice(REPO_FORMS).format(org=org, base=base), m.id))
            tag = re.sub(r"[^a-z0-9.]+", "", base.lower())[:20] or "model"
            add(
                Gen(
                    "pasted command",
                    rng.choice(COMMANDS).format(repo=repos[m.id], base=base, tag=tag, g=dev),
                    paste=True,
                )
            )
        if len(name.split()) >= 2:  # one word after the command is its model argument: a command, read as one
            for lang, spoken in (("en", SPOKEN_EN), ("de", SPOKEN_DE)):
                engine, t = rng.choice(spoken)
                add(Gen(f"engine named by its command {lang}", t.format(m=name, g=dev), m.id, g.id, engine=engine,
                        paste=False))  # fmt: skip
        for lang, people in (("en", USERS_EN), ("de", USERS_DE)):
            word, n = rng.choice(sorted(NUMBER_WORDS[lang].items()))
            text = rng.choice(people).format(n=word, p=rng.choice(PEOPLE[lang]), m=name, g=dev)
            add(Gen(f"users in words {lang}", text, m.id, g.id, users=n, lang=lang))
        n = rng.choice(UNIFIED_SIZES)
        for lang, unified in (("en", UNIFIED_EN), ("de", UNIFIED_DE)):
            add(Gen(f"unified memory {lang}", rng.choice(unified).format(m=name, n=n), m.id, None, kind="unified",
                    memory=float(n)))  # fmt: skip
    ids = {m.id for m in models}
    for row in ollama_tags():  # the library's tags as people paste them: "qwen3:32b", "gemma3:latest"
        if row.model_id not in ids:
            continue
        tag = row.tag if ":" in row.tag else f"{row.tag}:latest"
        box = rng.choice(desk)
        add(Gen("ollama tag en", rng.choice(OLLAMA_EN).format(t=tag, g=box.names[0]), row.model_id, box.id))
        add(Gen("ollama tag de", rng.choice(OLLAMA_DE).format(t=tag, g=box.names[0]), row.model_id, box.id))
    for g in desk:
        mod = rng.choice(models)
        for lang, table in (("en", COUNTS_EN), ("de", COUNTS_DE)):
            n = rng.choice(list(table))
            dev = rng.choice(table[n]).format(g=g.names[0])
            text = f"{mod.names[0]} on {dev}" if lang == "en" else f"{mod.names[0]} auf {dev}"
            add(Gen(f"count {lang}", text, mod.id, g.id, n))
        w = rng.choice(model_words)
        add(Gen("ordinary words, no model en", rng.choice(NO_MODEL_EN).format(w=w, g=g.names[0]), None, g.id))
        add(Gen("ordinary words, no model de", rng.choice(NO_MODEL_DE).format(w=w, g=g.names[0]), None, g.id))
        if (num := re.fullmatch(r"(?:RTX|GTX|RX) (\d{4})", g.names[0])) is not None:
            add(Gen("colloquial de", f"{mod.names[0]} auf zwei {num[1]}er", mod.id, g.id, 2))
        three = rng.sample(desk, 3)
        sep = rng.choice((" vs ", " vs. ", " or ", ", "))
        add(Gen("three devices en", f"{mod.names[0]} on " + sep.join(d.names[0] for d in three), mod.id,
                devices=tuple(d.id for d in three)))  # fmt: skip
        add(Gen("device name en", f"can my {g.names[0]} run {mod.names[0]}?", mod.id, g.id))
    if per_class is not None:
        out = {k: rng.sample(v, min(per_class, len(v))) for k, v in out.items()}
    return [g for k in sorted(out) for g in out[k]]


__all__ = ["UNSET", "Gen", "generate"]

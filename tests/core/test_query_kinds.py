"""Kinds of question people ask that are not a model and a device by name (issue 34): generated from the
catalog's own names, in both languages and many phrasings, so a class is fixed rather than one example.

- a card's plural ("zwei 4090er", "2x 3090s") is that card, counted;
- display resolutions ("1080p", "4k gaming") are no GTX 1080 and no 4K context;
- "super" / "ultra" before an adjective ("super slow") is no tier of the card before it;
- a model named only by its size ("ein 8b modell", "a 70b") is a model of that size;
- "what fits in 24 gb", "was kann ich laufen lassen" are /models questions; "welche Grafikkarte für 70B",
  "minimum gpu for X" are hardware picks.
"""

from __future__ import annotations

import re

import pytest

from catalog.facts import load_facts
from catalog.lookup import vocabulary
from core.query import names as N
from core.query.parse import Intent, Query, parse

VOCAB = vocabulary(load_facts())
# every catalog card name that is a number, with or without its vendor word ("4090", "rtx 4090", "rx 7900")
_CARD_NUMBER = re.compile(r"(?:(?:rtx|gtx|rx|radeon|geforce|nvidia)\s+)*\d{3,5}")
CARD_NAMES = sorted({n.lower() for g in VOCAB.gpus for n in g.names if _CARD_NUMBER.fullmatch(n.lower())})
MODEL = ("qwen3 8b", "qwen3-8b")


def _device(q: Query) -> tuple[object, ...]:
    """What a question's device resolved to: the entry, its other readings, whether it asks, and the count."""
    g = q.gpu
    return (g.id, g.choices, g.ambiguous, g.unknown, q.gpu_count) if g is not None else (None, q.gpu_count)


# --- a card's plural ---------------------------------------------------------------------------------

PLURALS = (
    ("zwei {g}er für {m}", "zwei {g} für {m}"),
    ("2x {g}er mit {m}", "2x {g} mit {m}"),
    ("passt {m} auf drei {g}er?", "passt {m} auf drei {g}?"),
    ("{m} mit vier {g}ern", "{m} mit vier {g}"),
    ("can two {g}s run {m}", "can two {g} run {m}"),
    ("{m} on 3x {g}s", "{m} on 3x {g}"),
    ("ich habe 2 {g}er, läuft {m}?", "ich habe 2 {g}, läuft {m}?"),
)


def test_there_are_cards_to_try():
    assert len(CARD_NAMES) > 40


@pytest.mark.parametrize(("plural", "singular"), PLURALS)
def test_a_cards_plural_is_that_card_counted(plural, singular):
    for card in CARD_NAMES:
        said = parse(plural.format(g=card, m=MODEL[0]), VOCAB)
        meant = parse(singular.format(g=card, m=MODEL[0]), VOCAB)
        assert _device(said) == _device(meant), (plural, card, said.gpu, meant.gpu)
        assert said.gpu_count > 1, (plural, card)
        assert said.model is not None and said.model.id == MODEL[1], (plural, card, said.model)


_TIERED = re.compile(r"(?:(?:rtx|gtx|rx|radeon|geforce|nvidia)\s+)*\d{3,5}\s+(?:ti|super|xt|xtx|gre)")
_VENDOR = re.compile(r"(?:rtx|gtx|rx|radeon|geforce|nvidia)\s+")
_NAMES = {re.sub(r"[^a-z0-9]", "", n.lower()) for g in VOCAB.gpus for n in (g.id, *g.names)}


def _plural_is_a_name(card: str) -> bool:
    """ "4070 tis" is the catalog's own name of the 4070 Ti Super ("TiS"): that name is what it means."""
    return re.sub(r"[^a-z0-9]", "", _VENDOR.sub("", card) + "s") in _NAMES


TIERED_NAMES = sorted(
    n
    for n in {n.lower() for g in VOCAB.gpus for n in g.names if _TIERED.fullmatch(n.lower())}
    if not _plural_is_a_name(n)
)
TIERED_PLURALS = (
    ("two {g}s for {m}", "two {g} for {m}"),
    ("2x {g}s with {m}", "2x {g} with {m}"),
    ("can 3 {g}s run {m}?", "can 3 {g} run {m}?"),
    ("zwei {g}s für {m}", "zwei {g} für {m}"),
)


@pytest.mark.parametrize(("plural", "singular"), TIERED_PLURALS)
def test_the_plural_of_a_card_named_with_its_tier_keeps_the_tier(plural, singular):
    assert len(TIERED_NAMES) > 10
    for card in TIERED_NAMES:
        said = parse(plural.format(g=card, m=MODEL[0]), VOCAB)
        meant = parse(singular.format(g=card, m=MODEL[0]), VOCAB)
        assert _device(said) == _device(meant), (plural, card, said.gpu, meant.gpu)
        assert said.gpu_count > 1, (plural, card)


# --- display resolutions -------------------------------------------------------------------------------

RESOLUTIONS = ("720p", "1080p", "1440p", "2160p", "1080p60", "1920x1080", "2560 x 1440", "3840×2160")
SCREEN_4K = ("4k gaming", "4k monitor", "4k@60", "4k 144hz", "gaming in 4k", "zocken in 4k", "2k display", "8k video")
SCREEN_TEMPLATES = (
    "{m} on my {g} while gaming at {r}",
    "can I run {m} on a {g} and still play at {r}?",
    "{r} and {m} on my {g}",
    "läuft {m} auf meiner {g} neben {r}?",
    "{m} auf der {g}, nebenbei {r}",
)
SCREEN_CARDS = ("rtx 4090", "rtx 3060", "rx 7900 xtx", "rtx 4060 ti 16gb", "m2 max 96gb")


@pytest.mark.parametrize("template", SCREEN_TEMPLATES)
@pytest.mark.parametrize("screen", RESOLUTIONS + SCREEN_4K)
def test_a_display_resolution_is_no_device_and_no_context(template, screen):
    for card in SCREEN_CARDS:
        said = parse(template.format(m=MODEL[0], g=card, r=screen), VOCAB)
        meant = parse(template.format(m=MODEL[0], g=card, r=""), VOCAB)
        assert _device(said) == _device(meant), (screen, card, said.gpu)
        assert said.context is None, (screen, said.context)
        assert said.model is not None and said.model.id == MODEL[1], (screen, said.model)


@pytest.mark.parametrize("screen", RESOLUTIONS + SCREEN_4K)
@pytest.mark.parametrize("template", ("{m} at {r}", "{m} bei {r} auf dem pc"))
def test_a_display_resolution_alone_names_no_device(screen, template):
    q = parse(template.format(m=MODEL[0], r=screen), VOCAB)
    assert q.gpu is None and q.gpu_text is None and q.context is None, (screen, q.gpu, q.gpu_text, q.context)


@pytest.mark.parametrize("text", ["qwen3 8b 4k context on a 4090", "qwen3 8b mit 4k kontext auf 4090", "qwen3 8b 4k"])
def test_4k_without_a_screen_word_is_still_a_context(text):
    assert parse(text, VOCAB).context == 4096


@pytest.mark.parametrize(("text", "count"), [("qwen3 8b on 100x 4090", 100), ("qwen3 8b on 200 x 3090", 200)])
def test_a_count_times_a_card_is_no_resolution(text, count):
    q = parse(text, VOCAB)
    assert q.gpu is not None and q.gpu.id is not None and q.gpu_count == count


# --- "super slow": a word of degree, no tier -----------------------------------------------------------

DEGREE = ("super slow", "super fast", "ultra slow", "super langsam", "super schnell", "ultra fast", "max slow")
DEGREE_TEMPLATES = (
    "{m} on my {g} {d}",
    "{m} on my {g} {d} why",
    "my {g} {d} with {m}",
    "{m} auf meiner {g} {d}?",
    "meine {g} {d} bei {m}",
)


def _tiered(card: str, tier: str) -> bool:
    """Whether "<card> <tier>" is a catalog device of its own ("4070 super"): then the words name it."""
    q, bare = parse(f"{card} {tier}", VOCAB), parse(card, VOCAB)
    return q.gpu is not None and q.gpu.id is not None and (bare.gpu is None or q.gpu.id != bare.gpu.id)


@pytest.mark.parametrize("template", DEGREE_TEMPLATES)
@pytest.mark.parametrize("degree", DEGREE)
def test_super_before_a_word_of_degree_is_no_tier(template, degree):
    tried = 0
    for card in CARD_NAMES:
        if _tiered(card, degree.split()[0]):
            continue
        tried += 1
        said = parse(template.format(m=MODEL[0], g=card, d=degree), VOCAB)
        meant = parse(template.format(m=MODEL[0], g=card, d=""), VOCAB)
        assert _device(said) == _device(meant), (degree, card, said.gpu)
        assert said.gpu_text is None, (degree, card, said.gpu_text)
    assert tried > 40


@pytest.mark.parametrize("card", ["4070 super", "rtx 4080 super", "4070 ti super"])
def test_a_card_named_with_its_tier_keeps_it(card):
    q = parse(f"qwen3 8b on my {card} super slow", VOCAB)
    assert q.gpu is not None and q.gpu.id is not None and "super" in q.gpu.id, q.gpu


# --- "what can I run": a /models question, on the named, the saved or an asked-for device ----------------

WHAT_RUNS = (
    "what can I run on my {g}",
    "what can I run on this {g}",
    "which models fit my {g}",
    "what fits on a {g}",
    "what will run on my {g}?",
    "whats the best all-round model for my {g}",
    "best model for my {g}",
    "was kann ich auf meiner {g} laufen lassen",
    "was passt auf meine {g}?",
    "was läuft auf einer {g}",
    "welche modelle passen auf meine {g}",
    "bestes modell für meine {g}",
    "suggest a model for my {g}",
    "any model recommendations for a {g}?",
    "what's a good model for my {g}",
    "empfiehl mir ein modell für meine {g}",
    "was empfiehlst du für meine {g}",
    "gutes modell für die {g}?",
    "was geht mit einer {g}",
    "hab ne {g}, was geht?",
    "was für modelle kann ich mit meiner {g} betreiben",
    "what's the best thing I can run on my {g}",
    "can I run anything on my {g}?",
    "llms for a {g}?",
    "models for my {g}",
)
BIGGEST = (
    "how big a model can I run on my {g}",
    "what model size fits my {g}",
    "welche modellgröße passt auf meine {g}",
)
NO_DEVICE = ("gpu", "graphics card", "card", "rig", "grafikkarte", "karte", "")
MEMORY = ("16gb card", "24 gb gpu", "12gb", "8 gb vram", "16 GB Grafikkarte", "24gb karte")


def _resolving_cards() -> list[str]:
    """The card names that, alone, are one catalog device (with or without other readings)."""
    return [c for c in CARD_NAMES if (g := parse(f"on a {c}", VOCAB).gpu) is not None and g.id is not None]


@pytest.mark.parametrize("template", WHAT_RUNS)
def test_what_runs_on_a_named_card_is_a_models_question(template):
    for card in _resolving_cards():
        q = parse(template.format(g=card), VOCAB)
        meant = parse(f"on a {card}", VOCAB)
        assert q.intent is Intent.MODELS and q.model is None, (template, card, q.intent, q.model)
        assert q.gpu is not None and meant.gpu is not None and q.gpu.id == meant.gpu.id, (template, card, q.gpu)


@pytest.mark.parametrize("template", BIGGEST)
def test_how_big_a_model_runs_is_the_biggest_models_list(template):
    for card in _resolving_cards():
        q = parse(template.format(g=card), VOCAB)
        assert q.intent is Intent.MODELS and q.biggest and q.model is None, (template, card, q.intent, q.biggest)


@pytest.mark.parametrize("template", WHAT_RUNS)
@pytest.mark.parametrize("memory", MEMORY)
def test_what_runs_in_a_memory_size_is_a_models_question_on_a_generic_device(template, memory):
    q = parse(template.format(g=memory), VOCAB)
    gb = float(re.match(r"\d+", memory).group())  # type: ignore[union-attr]
    assert q.intent is Intent.MODELS and q.model is None, (template, memory, q.intent)
    assert q.gpu is None and q.device_kind == "gpu" and q.device_memory_gib == gb, (template, memory, q)


@pytest.mark.parametrize("template", (*WHAT_RUNS, "what can I run", "was kann ich laufen lassen", "what fits in {g}"))
@pytest.mark.parametrize("word", NO_DEVICE)
def test_what_runs_without_a_device_is_a_models_question_for_the_saved_one(template, word):
    q = parse(template.format(g=word).strip(), VOCAB)
    assert q.intent is Intent.MODELS and q.model is None and q.gpu is None, (template, word, q.intent, q.gpu)


@pytest.mark.parametrize(
    "template",
    ("what can I run {m} on", "which gpu fits {m}", "was passt besser, {m} oder llama 3.1 8b", "what fits {m} best"),
)
def test_a_question_naming_a_model_is_no_models_list(template):
    q = parse(template.format(m=MODEL[0]), VOCAB)
    assert q.intent is not Intent.MODELS and q.model is not None and q.model.id == MODEL[1], (template, q.intent)


# --- the least hardware that holds a model: a hardware pick -------------------------------------------

HARDWARE_FOR = (
    "minimum gpu for {m}",
    "what's the minimum vram for {m}",
    "minimum requirements for {m}",
    "smallest card that runs {m}",
    "which gpu for {m}",
    "what do I actually need to run {m}",
    "was brauche ich mindestens für {m}",
    "welche Grafikkarte für {m}",
    "mindestanforderungen für {m}",
    "welche gpu brauche ich mindestens für {m}",
)


def _named_models() -> list[tuple[str, str]]:
    """(display name, id) of every catalog model whose display name alone is that model."""
    out = []
    for entry in VOCAB.models:
        q = parse(entry.names[0], VOCAB)
        if q.model is not None and q.model.id == entry.id:
            out.append((entry.names[0], entry.id))
    return out


NAMED_MODELS = _named_models()


def test_most_models_are_named_by_their_display_name():
    assert len(NAMED_MODELS) > 0.8 * len(VOCAB.models)


@pytest.mark.parametrize("template", HARDWARE_FOR)
def test_the_least_hardware_for_a_model_is_a_hardware_pick(template):
    for name, mid in NAMED_MODELS:
        q = parse(template.format(m=name), VOCAB)
        assert q.intent is Intent.GPUS, (template, name, q.intent)
        assert q.model is not None and q.model.id == mid and q.gpu is None, (template, name, q.model, q.gpu)


# --- a model named only by its size -------------------------------------------------------------------


def _catalog_sizes() -> list[str]:
    """Every size a catalog model's name states, as people type it ("8b", "0.6b", "70B")."""
    sizes = {N.typed(f"{e.names[0]} {e.id}").size_b for e in VOCAB.models}
    return sorted(f"{s:g}b" for s in sizes if s)


SIZES = _catalog_sizes()
SIZED = (
    ("ein {s} modell auf meiner {g}", Intent.FIT),
    ("n {s} modell auf der {g}?", Intent.FIT),
    ("passt ein {s} auf meine {g}", Intent.FIT),
    ("can my {g} run a {s} model", Intent.FIT),
    ("a {s} on my {g}", Intent.FIT),
    ("a {s} dense model on 2x {g}", Intent.FIT),
    ("how fast is a {s} model on a {g}", Intent.SPEED),
    ("welche Grafikkarte für {s}", Intent.GPUS),
    ("welche Grafikkarte brauche ich für ein {s} modell", Intent.GPUS),
    ("which gpu for a {s} model", Intent.GPUS),
    ("minimum gpu for a {s}", Intent.GPUS),
    ("best {s} model for my {g}", Intent.MODELS),
    ("which {s} model fits my {g}", Intent.MODELS),
    ("welche {s} modelle laufen auf meiner {g}", Intent.MODELS),
)


def test_the_catalog_has_sizes_to_try():
    assert len(SIZES) > 30 and "8b" in SIZES and "70b" in SIZES


@pytest.mark.parametrize(("template", "intent"), SIZED)
def test_a_model_named_by_its_size_is_a_model_of_that_size(template, intent):
    for size in SIZES:
        for typed in (size, size.upper()):
            q = parse(template.format(s=typed, g="rtx 3090"), VOCAB)
            assert q.model is None and q.model_text is None, (template, typed, q.model, q.model_text)
            assert q.model_size is not None and N.typed(q.model_size).size_b == float(size[:-1]), (template, q)
            assert q.intent is intent, (template, typed, q.intent)
            if "{g}" in template:
                assert q.gpu is not None and q.gpu.id == "rtx-3090", (template, typed, q.gpu)


@pytest.mark.parametrize("text", ["olmo 2 7b on a 4090", "foobar 7b on a 4090", "qwen3 8b on a 4090", "llama 70b"])
def test_a_size_with_a_name_is_that_name_not_a_size(text):
    assert parse(text, VOCAB).model_size is None


@pytest.mark.parametrize("article", ["n", "ne", "nen", "ner", "nem", "'n"])
@pytest.mark.parametrize("template", ["passt {a} {s} modell auf {a} {g}?", "hab {a} {g}, läuft da {a} {s}?"])
def test_the_colloquial_german_article_is_no_name(article, template):
    for size in ("8b", "14b", "70b"):
        for card in ("rtx 4090", "rtx 3090", "rtx 5090"):
            q = parse(template.format(a=article, s=size, g=card), VOCAB)
            assert q.model_size == size and q.model is None, (article, template, q.model, q.model_size)
            assert q.gpu is not None and q.gpu.id == card.replace(" ", "-"), (article, q.gpu)


@pytest.mark.parametrize("name", ["gemma 3n e4b", "gemma-3n-e2b", "Gemma 3n E4B IT"])
def test_a_names_own_n_stays_in_the_name(name):
    q = parse(f"{name} auf ner 4090", VOCAB)
    assert q.model is not None and q.model.id is not None and q.model.id.startswith("gemma-3n"), q.model

"""A model named only by its size (issue 34): "ein 8b modell auf meiner 4090", "which gpu for a 70b model",
"best 8b model for my 3090". For every size a catalog model's name states, in both languages: the card is
about the likeliest model of that size (``core.model_sizes``), says so, and offers the others; a /models
question lists only models of that size; a size no catalog model has is "I don't know", never another size.
"""

from __future__ import annotations

import asyncio

import pytest

from bot.reply import Reply
from bot.service import Service, User
from catalog.facts import load_facts
from core.model_sizes import OFFERED, of_size
from core.query import names as N
from core.recommend import tags_of

CATALOG = load_facts()
SERVICE = Service(CATALOG)
SIZES = sorted({s for m in CATALOG.models if (s := N.typed(f"{m.name} {m.id}").size_b) and of_size(CATALOG, s)})
MISSING = [s for s in (5.0, 17.0, 19.0, 45.0, 99.0, 500.0) if not of_size(CATALOG, s)]


def answer(text: str, lang: str | None = None) -> Reply:
    return asyncio.run(SERVICE.answer(text, None, User(lang=lang)))  # type: ignore[arg-type]


def _codes(reply: Reply) -> list[str]:
    return [n.code for s in reply.subjects for n in s.notes]


def test_there_are_sizes_and_missing_sizes():
    assert len(SIZES) > 30 and MISSING


@pytest.mark.parametrize(
    ("template", "lang", "kind"),
    [
        ("ein {s}b modell auf meiner 4090", "de", "fit"),
        ("can a 4090 run a {s}B model?", "en", "fit"),
        ("which gpu for a {s}b model", "en", "gpus"),
        ("welche Grafikkarte für {s}B", "de", "gpus"),
    ],
)
def test_a_size_is_answered_for_the_likeliest_model_of_it(template, lang, kind):
    for size in SIZES:
        found = of_size(CATALOG, size)
        reply = answer(template.format(s=f"{size:g}"), lang)
        assert reply.kind == kind and reply.locale == lang, (size, reply.kind, reply.summary[:200])
        assert reply.subjects[0].model_id == found[0].id, (size, reply.subjects[0].model_id)
        others = found[1 : 1 + OFFERED]
        assert ("size_model" if others else "size_model_only") in _codes(reply), (size, _codes(reply))
        offered = {a.label for a in reply.actions}
        assert {m.name for m in others} <= offered, (size, offered)


@pytest.mark.parametrize(
    ("template", "lang"), [("best {s}b model for my 4090", "en"), ("welche {s}b modelle laufen auf 2x 3090", "de")]
)
def test_a_models_list_for_a_size_lists_only_that_size(template, lang):
    by_name = {m.name: m for m in CATALOG.models}
    shown = 0
    for size in SIZES:
        reply = answer(template.format(s=f"{size:g}"), lang)
        assert reply.kind == "models" and f"{size:g}B" in reply.title, (size, reply.title)
        sized = {m.id for m in of_size(CATALOG, size)}
        rows = [r.label.split(". ", 1)[-1] for sec in reply.sections for r in sec.rows]
        listed = [by_name[name] for name in rows if name in by_name]
        assert len(listed) == len(rows), (size, rows)
        assert all(m.id in sized for m in listed), (size, [m.id for m in listed])
        shown += len(listed)
    assert shown > len(SIZES)


@pytest.mark.parametrize("template", ["ein {s}b modell auf meiner 4090", "which gpu for a {s}b model"])
def test_a_size_no_catalog_model_has_is_not_answered_for_another(template):
    for size in MISSING:
        reply = answer(template.format(s=f"{size:g}"))
        assert reply.kind == "suggest" and not reply.subjects, (size, reply.kind, reply.subjects)
        assert f"{size:g}b" in reply.summary, (size, reply.summary)


@pytest.mark.parametrize(
    ("template", "kind", "lang"),
    [
        ("a {s}b coding model on my 4090", "coding", "en"),
        ("ein {s}b modell zum programmieren auf meiner 4090", "coding", "de"),
        ("a {s}b reasoning model on a 4090", "reasoning", "en"),
        ("ein {s}b vision modell auf meiner 4090", "vision", "de"),
    ],
)
def test_a_size_of_a_kind_is_the_likeliest_model_of_that_kind(template, kind, lang):
    picked = 0
    for size in SIZES:
        expected = of_size(CATALOG, size, None, kind)[0]
        reply = answer(template.format(s=f"{size:g}"), lang)
        assert reply.kind == "fit" and reply.subjects[0].model_id == expected.id, (size, reply.subjects[0].model_id)
        # "an 11b vision model" is the catalog's own name of Llama 3.2 11B Vision: a name, no size note
        sized = [c for c in _codes(reply) if c.startswith("size_model")]
        if kind in tags_of(expected) and sized:
            assert sized == [f"size_model_{kind}"], (size, sized)
            picked += 1
    assert picked >= 3


@pytest.mark.parametrize("extra", ["more", "coding", "reasoning"])
def test_the_buttons_of_a_sized_models_list_keep_the_size(extra):
    for size in SIZES:
        reply = answer(f"/models rtx-4090 {size:g}b {extra}")
        assert reply.kind == "models" and f"{size:g}B" in reply.title, (size, extra, reply.title)

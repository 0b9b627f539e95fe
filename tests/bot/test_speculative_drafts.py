"""Every catalog model with drafts x each of its drafts, in both languages, named by name and by size (issue 35):
the draft the question names is the one the card uses, of the target's tokenizer family, and the speed-up it
shows is no more than every drafted token accepted would give."""

from __future__ import annotations

import asyncio
import re

import pytest

from bot.cards.speculative import draft_candidates, eagle_head, mtp_layers, same_tokenizer
from bot.service import Service, User
from catalog.facts import load_facts
from core.speculative import speedup_bound

CATALOG = load_facts()
GPU = "8x h200"
TARGETS = [m for m in CATALOG.models if m.variant not in ("vision", "embedding") and draft_candidates(m, CATALOG)]
FORMS = {
    "en": ("{m} with {d} as draft on {g}", "{m} with a {s}b draft on {g}"),
    "de": ("{m} mit {d} als Entwurfsmodell auf {g}", "{m} mit einem {s}b Draft auf {g}"),
}
_SPEED = re.compile(r"\(([\d.,]+)x, (\d+) ")


@pytest.fixture(scope="module")
def service() -> Service:
    return Service(CATALOG.model_copy(update={"version": "test"}))


def _number(text: str, lang: str) -> float:
    value = text.split()[0]
    return float(value.replace(".", "").replace(",", ".") if lang == "de" else value.replace(",", ""))


def _size(params: int) -> str:
    return f"{params / 1e9:.1f}".rstrip("0").rstrip(".")


def test_there_are_targets_with_drafts():
    assert len(TARGETS) >= 40
    gpt = CATALOG.model("gpt-oss-120b")
    assert gpt is not None and not draft_candidates(gpt, CATALOG)  # no 20B safety model as its draft


@pytest.mark.parametrize("lang", sorted(FORMS))
@pytest.mark.parametrize("target", TARGETS, ids=lambda m: m.id)
def test_each_named_draft_is_kept(service, target, lang):
    failures = []
    drafts = draft_candidates(target, CATALOG)
    for draft in drafts:
        same_size = [d for d in drafts if _size(d.total_params) == _size(draft.total_params)]
        for form in FORMS[lang]:
            by_size = "{s}" in form
            if by_size and draft is not same_size[0]:
                continue  # one question per size: any model of that size is the one it names
            text = form.format(m=target.name, d=draft.name, s=_size(draft.total_params), g=GPU)
            reply = asyncio.run(service.answer(f"{text} details", lang, User()))  # every row: the details page
            if reply.kind != "fit_details":
                failures.append((text, reply.kind, reply.title))
                continue
            named = same_size if by_size else [draft]
            spec = [s for s in reply.sections if any(f"{d.name} (" in s.title for d in named)]
            if not spec:
                failures.append((text, "draft not kept", [s.title for s in reply.sections][-1:]))
                continue
            if not all(same_tokenizer(target, d) for d in named):
                failures.append((text, "family", draft.family))
            rows = {r.label: r.value for r in spec[0].rows}
            alone = next(v for k, v in rows.items() if k in ("Draft alone", "Entwurfsmodell allein"))
            without = next(v for k, v in rows.items() if k in ("Decode without", "Ausgabe ohne"))
            cost = _number(without, lang) / _number(alone, lang)
            for value in rows.values():
                m = _SPEED.search(value)
                if m:
                    x, k = float(m.group(1).replace(",", ".")), int(m.group(2))
                    if not 0 < x <= speedup_bound(k, cost) * 1.01:
                        failures.append((text, "speed-up above the bound", x, speedup_bound(k, cost)))
    assert not failures, failures[:5]


HEADS = [m for m in CATALOG.models if mtp_layers(m)]


@pytest.mark.parametrize("lang", sorted(FORMS))
def test_every_model_with_an_mtp_layer_gets_it(service, lang):
    """A model whose stored config (or ``[[mtp]]``) has MTP layers gets them for "MTP", in both languages."""
    assert {"deepseek-v3", "glm-4.5", "qwen3.5-27b", "qwen3-next-80b-a3b"} <= {m.id for m in HEADS}
    failures, fitted = [], 0
    for model in HEADS:
        text = (f"{model.name} with mtp on {GPU}", f"{model.name} mit MTP auf {GPU}")[lang == "de"]
        reply = asyncio.run(service.answer(text, lang, User()))
        if reply.kind != "fit" or not any("MTP" in s.title for s in reply.sections):
            if "🔴" not in reply.summary:  # a model too large for 8 H200s has no card section
                failures.append((text, reply.kind, [s.title for s in reply.sections][-1:]))
            continue
        fitted += 1
        spec = next(s for s in reply.sections if "MTP" in s.title)
        for row in spec.rows:
            m = _SPEED.search(row.value)
            if m and not 1.0 <= float(m.group(1).replace(",", ".")) <= int(m.group(2)) + 1:
                failures.append((text, row.value))
    assert not failures, failures[:5]
    assert fitted >= len(HEADS) - 3


def test_eagle3_heads_where_a_measured_row_ran_one(service):
    for model_id in ("llama-3.1-8b-instruct", "qwen3-8b"):
        model = CATALOG.model(model_id)
        assert model is not None and eagle_head(model)
        reply = asyncio.run(service.answer(f"{model.name} with eagle-3 on an h100 with vllm", "en", User()))
        assert reply.kind == "fit" and any("EAGLE-3" in s.title for s in reply.sections), reply.title
        assert any(c.label == "vllm + EAGLE-3" for c in reply.code)

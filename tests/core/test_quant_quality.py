"""Published quality per quant: the fact rows are consistent, and the best quality that fits is the lowest loss."""

from __future__ import annotations

from collections import defaultdict

from catalog.extra_facts import quant_quality
from catalog.facts import load_facts
from core.quants.quality import best_quality, family_quality

CATALOG = load_facts()


def test_rows_name_catalog_quants_and_families_with_a_source():
    families = {m.family for m in CATALOG.models}
    for row in quant_quality():
        assert CATALOG.quant(row.quant) is not None, row.quant
        assert row.family in families, row.family
        assert row.value >= 0 and row.provenance.source.startswith("https://") and row.provenance.as_of


def test_one_metric_per_family_and_more_bits_lose_less():
    by_family = defaultdict(dict)
    for row in quant_quality():
        by_family[row.family][row.quant] = row
    for rows in by_family.values():
        assert len({r.metric for r in rows.values()}) == 1
        ordered = [q for q in ("Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q3_K_M", "Q2_K") if q in rows]
        values = [rows[q].value for q in ordered]
        assert values == sorted(values), (ordered, values)


def test_best_quality_is_the_lowest_loss_among_the_fitting():
    llama = CATALOG.model("llama-3.1-8b-instruct")
    assert llama is not None
    quality = family_quality(llama, quant_quality())
    assert quality["Q4_K_M"].value == 0.031273
    best = best_quality(["Q4_K_M", "IQ4_XS", "Q5_K_M"], quality)
    assert best is not None and best.quant == "Q5_K_M"
    assert best_quality(["UD-Q2_K_XL"], quality) is None
    olmo = CATALOG.model("olmo-2-0325-32b-instruct")
    assert olmo is not None and family_quality(olmo, quant_quality()) == {}


def test_the_most_asked_families_have_sourced_figures():
    """Issue 26: sourced quality figures for the most asked families (each row cites its own URL)."""
    families = {r.family for r in quant_quality()}
    most_asked = {
        "Llama 3",
        "Llama 2",
        "Llama 4",
        "Gemma 2",
        "Gemma 3",
        "Mistral",
        "Qwen3",
        "Qwen3.5",
        "DeepSeek",
        "Kimi",
    }
    assert most_asked <= families
    qwen = CATALOG.model("qwen3-30b-a3b")
    assert qwen is not None
    quality = family_quality(qwen, quant_quality())
    assert quality["Q4_K_M"].value == 0.010136 and quality["Q4_K_M"].metric == "kld"
    assert "ik_llama.cpp/discussions/359" in quality["Q4_K_M"].provenance.source

"""Model recommendations for a device: ranked, explained, with MoE-with-offload picks and filters."""

from __future__ import annotations

import pytest

from catalog.facts import load_facts
from core.estimate import Request
from core.fit import Verdict
from core.models import Backend, GpuSpec, Provenance
from core.recommend import rank_models, tags_of

CATALOG = load_facts()


def gpu(gid: str) -> GpuSpec:
    found = CATALOG.gpu(gid)
    assert found is not None
    return found


def generic(gib: int) -> GpuSpec:
    """A memory-only device ("best model for 24 GB"), as the resolution issue builds one."""
    return GpuSpec(
        id=f"generic-{gib}gb",
        name=f"{gib} GB GPU",
        short_name=f"{gib} GB",
        vendor="generic",
        category="consumer",
        memory_bytes=gib << 30,
        bandwidth_bytes_per_s=900e9,
        backend=Backend.CUDA,
        provenance=Provenance(source="test", as_of="2026-11"),
    )


def test_24_gb_card_gets_a_ranked_explained_list_with_moe_offload_picks():
    picks = rank_models(CATALOG, gpu("rtx-3090"), Request())
    assert len(picks) >= 10
    assert [p.score for p in picks] == sorted((p.score for p in picks), reverse=True)
    assert all(p.reasons for p in picks)  # every row says why it is there
    assert all(p.verdict is not Verdict.NO_FIT for p in picks)
    offloaded = [p for p in picks if p.verdict is Verdict.OFFLOAD]
    assert offloaded and all(p.offload == "experts" and p.decode_tokens_per_s >= 8 for p in offloaded)
    assert any(r.code == "moe_offload" for p in offloaded for r in p.reasons)
    assert picks[0].total_params > 1e9  # not a 0.6B model first
    ids = [p.model_id for p in picks]
    assert len(ids) == len(set(ids))


def test_score_is_the_sum_of_its_parts():
    for p in rank_models(CATALOG, gpu("rtx-4090"), Request())[:5]:
        assert p.score == pytest.approx(p.capability + p.recency + p.popularity + p.speed)


@pytest.mark.parametrize("name", ["coding", "reasoning", "vision"])
def test_filters_keep_only_tagged_models(name):
    picks = rank_models(CATALOG, gpu("rtx-3090"), Request(gpu_count=2), name)
    assert picks and all(name in p.tags for p in picks)


def test_small_and_fast_filter():
    picks = rank_models(CATALOG, gpu("rtx-4090"), Request(), "small")
    assert picks and all(p.total_params <= 16e9 and p.decode_tokens_per_s >= 40 for p in picks)


def test_generic_memory_device_works():
    picks = rank_models(CATALOG, generic(24), Request())
    assert picks and picks[0].verdict is not Verdict.NO_FIT


def test_tags_from_names():
    assert "coding" in tags_of(CATALOG.model("qwen3-coder-30b-a3b"))  # type: ignore[arg-type]
    assert "reasoning" in tags_of(CATALOG.model("deepseek-r1-distill-qwen-14b"))  # type: ignore[arg-type]
    assert "vision" in tags_of(CATALOG.model("gemma-3-27b-it"))  # type: ignore[arg-type]
    assert tags_of(CATALOG.model("llama-3.1-8b-instruct")) == ()  # type: ignore[arg-type]


def test_popularity_counts_when_the_catalog_has_downloads():
    import math

    from core.recommend import popularity_points

    class WithDownloads:
        hf_downloads = 1_000_000

    assert popularity_points(WithDownloads()) == pytest.approx(18.0)  # type: ignore[arg-type]
    for model in CATALOG.models:
        downloads = getattr(model, "hf_downloads", None)
        assert popularity_points(model) == (pytest.approx(3 * math.log10(downloads)) if downloads else 0.0)


def test_variants_give_tags_and_base_models_are_left_out():
    from core.recommend import VARIANT_TAGS

    assert VARIANT_TAGS["coder"] == "coding" and VARIANT_TAGS["thinking"] == "reasoning"
    picks = rank_models(CATALOG, gpu("h200-sxm"), Request())
    assert not any(getattr(CATALOG.model(p.model_id), "variant", "") == "base" for p in picks)

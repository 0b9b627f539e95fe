"""Advice people would follow (core/quants/rules.py): no 1-bit for small dense models, no low bits for
MXFP4-native models, no second GPU for laptops and Macs, and hardware picks that include large Macs."""

from __future__ import annotations

from catalog.facts import load_facts
from core.advice import nearest_fix, recommend_hardware
from core.estimate import Request, estimate_of, scenario
from core.quants.ladder import ladder_ids
from core.quants.rules import no_second_gpu, sensible

CATALOG = load_facts()


def test_no_one_bit_rung_for_dense_models_under_70b():
    for mid in ("qwen3-32b", "qwen3-8b", "gemma-3-27b-it"):
        steps = ladder_ids(CATALOG.model(mid))
        assert "IQ1_M" not in steps and "IQ2_XXS" in steps, (mid, steps)


def test_big_dense_and_moe_models_keep_their_low_rungs():
    assert "IQ1_M" in ladder_ids(CATALOG.model("llama-3.3-70b-instruct"))
    assert "UD-IQ1_M" in ladder_ids(CATALOG.model("deepseek-r1"))


def test_mxfp4_models_get_no_low_bit_rungs():
    steps = ladder_ids(CATALOG.model("gpt-oss-120b"))
    assert steps[0] == "MXFP4" and not {"UD-Q2_K_XL", "UD-IQ2_M", "UD-IQ1_M"} & set(steps), steps
    assert not sensible(CATALOG.model("gpt-oss-20b"), "UD-IQ1_M")


def test_no_second_gpu_for_laptops_and_macs():
    assert no_second_gpu(CATALOG.gpu("m3-max-128")) and no_second_gpu(CATALOG.gpu("rtx-4090-laptop"))
    assert not no_second_gpu(CATALOG.gpu("rtx-4090"))
    s = scenario(CATALOG.model("llama-3.3-70b-instruct"), CATALOG.gpu("rtx-4090-laptop"), Request(ram_gb=16), CATALOG)
    fix = nearest_fix(s, CATALOG, estimate_of(s))
    assert fix is None or fix.kind != "gpus", fix


def test_the_cheapest_box_for_deepseek_r1_is_a_large_mac():
    s = scenario(CATALOG.model("deepseek-r1"), CATALOG.gpu("rtx-4090"), Request(), CATALOG)
    picks = recommend_hardware(s, CATALOG, offers=())
    assert picks.cheapest is not None and picks.cheapest.gpu_id == "m3-ultra-512", picks.cheapest


def test_a_generic_laptop_gets_no_second_gpu():
    from core.devices import generic_device

    laptop = generic_device(CATALOG, "laptop", 8).gpu
    assert no_second_gpu(laptop) and not no_second_gpu(generic_device(CATALOG, "gpu", 8).gpu)

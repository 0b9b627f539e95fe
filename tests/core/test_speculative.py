"""Speculative decoding: acceptance from llama.cpp's ratio and vLLM's length, tokens per step, speed-up, bounds,
draft and MTP memory."""

from __future__ import annotations

import pytest

from catalog.extra_facts import spec_measurements
from catalog.facts import load_facts
from core.models import KvCacheType
from core.speculative import (
    COSTS,
    acceptance_for,
    acceptance_from_length,
    best_draft_length,
    draft_memory,
    expected_tokens,
    head_cost,
    mtp_memory,
    per_token_acceptance,
    speedup,
    speedup_bound,
)

CATALOG = load_facts()


def family_of(model_id: str) -> str:
    m = CATALOG.model(model_id)
    return m.family if m is not None else ""


def test_acceptance_reproduces_what_the_engines_print():
    for row in spec_measurements():
        n = row.k or 16
        if row.accept is not None:
            a = per_token_acceptance(row.accept, n)
            assert a * (1 - a**n) / ((1 - a) * n) == pytest.approx(row.accept, abs=1e-6) and 0 < a < 1
        if row.accept_len is not None:
            assert expected_tokens(acceptance_from_length(row.accept_len, n), n) == pytest.approx(row.accept_len)


def test_expected_tokens_per_step():
    assert expected_tokens(0.0, 5) == 1.0
    assert expected_tokens(0.5, 1) == pytest.approx(1.5)
    assert expected_tokens(1.0, 4) == 5.0


def test_a_slow_draft_is_not_worth_it_and_a_fast_one_is():
    _, slow = best_draft_length(0.85, 40 / 45.0, COSTS.verify_local, 40 / 2000)  # draft as slow as the target
    _, fast = best_draft_length(0.85, 40 / 600.0, COSTS.verify_local, 40 / 2000)
    assert slow < 1.05 and fast > 1.6


def test_verification_is_not_free_per_token():
    """A batched step over k + 1 tokens costs more than one token (llama.cpp's quantized kernels)."""
    assert speedup(0.9, 8, 0.05, COSTS.verify_local) < speedup(0.9, 8, 0.05, 0.0)
    assert speedup(0.9, 16, 0.0, 0.0, prefill_ratio=0.2) < speedup(0.9, 16, 0.0, 0.0)  # the compute-bound floor


def test_no_speed_up_beats_every_token_accepted():
    for k in range(1, 17):
        for c in (0.01, 0.05, 0.2):
            assert speedup(0.999999, k, c, 0.0) <= speedup_bound(k, c) + 1e-9


def test_acceptance_for_prefers_the_pair_then_the_family():
    rows = spec_measurements()
    llama = CATALOG.model("llama-3.1-8b-instruct")
    qwen = CATALOG.model("qwen3-32b")
    assert llama is not None and qwen is not None
    pair = acceptance_for(rows, family_of, llama, "draft", "prose", "llama-3.2-1b-instruct")
    assert pair is not None and [r.id for r in pair[1]] == ["llama31-8b-1b-3060"]
    eagle = acceptance_for(rows, family_of, llama, "eagle3", "prose", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
    assert eagle is not None and all(r.target == "llama-3.1-8b-instruct" for r in eagle[1])
    other = acceptance_for(rows, family_of, qwen, "draft", "code", "qwen3-0.6b")
    assert other is not None and all(r.method == "draft" and r.task == "code" for r in other[1])


def test_the_qwen3_32b_with_a_06b_draft_on_a_4090_is_near_the_published_18x():
    """Issue 35: the card said 3.99x; people measure about 1.8x for a 32B target with a 0.5-0.6B draft."""
    from core.estimate import Request, estimate
    from core.models import Engine

    def tps(model_id: str, quant: str) -> float:
        m, g, q = CATALOG.model(model_id), CATALOG.gpu("rtx-4090"), CATALOG.quant(quant)
        assert m is not None and g is not None and q is not None
        req = Request(quant=quant, context=8192, engine=Engine.LLAMA_CPP)
        return estimate(m, g, q, req, CATALOG.size(model_id, quant)).speed.decode_tokens_per_s

    qwen = CATALOG.model("qwen3-32b")
    assert qwen is not None
    found = acceptance_for(spec_measurements(), family_of, qwen, "draft", "code", "qwen3-0.6b")
    assert found is not None
    _, x = best_draft_length(found[0], tps("qwen3-32b", "Q4_K_M") / tps("qwen3-0.6b", "Q8_0"), COSTS.verify_local)
    assert 1.8 / 1.25 <= x <= 1.8 * 1.25


def test_mtp_head_costs_a_few_percent_of_a_step():
    v3 = CATALOG.model("deepseek-v3")
    assert v3 is not None
    assert 0.02 < head_cost(v3, "mtp") < 0.15


def test_draft_and_mtp_memory():
    draft = CATALOG.model("qwen3-0.6b")
    quant = CATALOG.quant("Q8_0")
    assert draft is not None and quant is not None
    mem = draft_memory(draft, quant, None, 8192, KvCacheType.F16)
    assert 0.3e9 < mem.weights_bytes < 0.8e9 and mem.kv_bytes > 0
    assert mem.total_bytes == mem.weights_bytes + mem.kv_bytes + mem.overhead_bytes
    v3, q4 = CATALOG.model("deepseek-v3"), CATALOG.quant("Q4_K_M")
    assert v3 is not None and q4 is not None
    mtp = mtp_memory(v3, q4, CATALOG.size(v3.id, q4.id), 1, 8192, KvCacheType.F16)
    assert 4e9 < mtp.weights_bytes < 10e9  # one of 61 layers of a ~380 GiB file

"""Speculative decoding: acceptance from llama.cpp's ratio, tokens per step, speed-up, draft and MTP memory."""

from __future__ import annotations

import pytest

from catalog.extra_facts import mtp_facts, spec_acceptance
from catalog.facts import load_facts
from core.models import KvCacheType
from core.speculative import (
    best_draft_length,
    draft_memory,
    expected_tokens,
    mtp_memory,
    mtp_speed,
    per_token_acceptance,
    verification_time,
)

CATALOG = load_facts()


def test_per_token_acceptance_reproduces_the_reported_ratio():
    for row in spec_acceptance():
        a = per_token_acceptance(row.accept, row.n_draft)
        ratio = a * (1 - a**row.n_draft) / ((1 - a) * row.n_draft)
        assert ratio == pytest.approx(row.accept, abs=1e-6) and 0 < a < 1


def test_expected_tokens_per_step():
    assert expected_tokens(0.0, 5) == 1.0
    assert expected_tokens(0.5, 1) == pytest.approx(1.5)
    assert expected_tokens(1.0, 4) == 5.0


def test_a_slow_draft_is_not_worth_it_and_a_fast_one_is():
    verify = verification_time(40.0, 2000.0)
    _, slow = best_draft_length(0.85, 1 / 45.0, verify)  # draft as slow as the target
    _, fast = best_draft_length(0.85, 1 / 600.0, verify)
    assert slow < 40.0 * 1.05 and fast > 40.0 * 2


def test_mtp_reproduces_deepseek_v3s_published_speedup():
    fact = next(f for f in mtp_facts() if "deepseek-v3" in f.models)
    model = CATALOG.model("deepseek-v3")
    assert model is not None
    speed = mtp_speed(20.0, fact.layers, model.n_layers, fact.accept, verification_time(20.0, 500.0)(1))
    assert speed.speedup == pytest.approx(1.8, rel=0.03)  # the report: 1.8x TPS


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

"""A chat's pooled runs (issue 38 item 3, ``core.runs.pool``): one voice per person, the median, and only the
asked setup's pools on a card."""

from __future__ import annotations

from typing import NamedTuple

from catalog.facts import load_facts
from core.estimate import Request, scenario
from core.models import Engine
from core.runs.pool import pool_notes, pools

CATALOG = load_facts()


class Row(NamedTuple):
    member: str
    gpu_id: str = "rtx-4090"
    gpu_count: int = 1
    backend: str = "cuda"
    model_id: str = "qwen3-8b"
    quant: str = "Q4_K_M"
    kind: str = "decode"
    measured: float = 100.0


def test_each_person_is_one_voice_and_the_pool_is_the_median_of_people():
    rows = [Row("a", measured=100.0)] * 5 + [Row("b", measured=130.0), Row("c", measured=90.0), Row("c", measured=94.0)]
    (pool,) = pools(rows)
    assert pool.people == 3 and pool.median_tokens_per_s == 100.0  # a's five pastes count once


def test_a_card_shows_only_the_pools_of_its_own_setup():
    rows = [Row("a"), Row("b", kind="prefill", measured=9000.0), Row("a", quant="Q8_0"), Row("a", gpu_id="rtx-3090")]
    model, gpu = CATALOG.model("qwen3-8b"), CATALOG.gpu("rtx-4090")
    assert model and gpu
    s = scenario(model, gpu, Request(quant="Q4_K_M", engine=Engine.LLAMA_CPP), CATALOG)
    notes = pool_notes(pools(rows), s)
    assert [n.code for n in notes] == ["pooled_decode", "pooled_prefill"]
    assert [n.values["people"] for n in notes] == [1, 1]
    vllm = scenario(model, gpu, Request(engine=Engine.VLLM), CATALOG)
    assert pool_notes(pools(rows), vllm) == ()

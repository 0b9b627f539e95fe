"""MXFP4 (gpt-oss) weighs by the file the engine loads: llama.cpp's GGUFs keep the non-expert tensors in Q8_0,
vLLM loads openai/gpt-oss-*'s safetensors checkpoint, whose quantization_config leaves them in BF16.

Generated over the class: every model that ships in MXFP4 and every engine, through every path that weighs a
quant (the estimate, the quant ladder, the memory chart's table, the fit's breakdown).
"""

from __future__ import annotations

import json
from functools import cache

import pytest

from catalog.fact_files import CONFIG_DIR
from catalog.facts import load_facts
from core.estimate import Request, estimate, resolved
from core.fit import breakdown, memory_table
from core.models import Catalog, Engine, Hardware, ModelSpec, QuantSpec, Workload
from core.quants.ladder import ladder_weights
from core.weights import as_loaded, param_groups

# the rule: routed experts MXFP4 (32 4-bit values + one 8-bit scale), everything else per engine
EXPERT_BPW = 4.25
REST_BPW = {Engine.LLAMA_CPP: 8.5, Engine.VLLM: 16.0}  # Q8_0 in the GGUFs; BF16 in the checkpoint


@cache
def _catalog() -> Catalog:
    return load_facts()


def _mxfp4() -> QuantSpec:
    quant = _catalog().quant("MXFP4")
    assert quant is not None
    return quant


MODELS = [m for m in _catalog().models if m.native_dtype == "mxfp4"]
CASES = [(m, e) for m in MODELS for e in Engine]
IDS = [f"{m.id}-{e.value}" for m, e in CASES]


def _rule_bytes(model: ModelSpec, engine: Engine) -> int:
    g = param_groups(model)
    rest = REST_BPW[engine]
    return (
        round(g.embed * rest / 8)
        + round(g.output * rest / 8)
        + round(g.dense * rest / 8)
        + round(g.experts * EXPERT_BPW / 8)
    )


def _expected(model: ModelSpec, engine: Engine) -> int:
    """The rule's bytes; llama.cpp keeps a measured GGUF size where the catalog has one (that file is what it
    loads), vLLM never does (it does not load the GGUF)."""
    measured = _catalog().size(model.id, "MXFP4")
    if engine is Engine.LLAMA_CPP and measured is not None:
        return measured.size_bytes
    return _rule_bytes(model, engine)


def test_the_class_is_every_gpt_oss_model():
    ids = {m.id for m in MODELS}
    assert {"gpt-oss-120b", "gpt-oss-20b", "gpt-oss-safeguard-20b"} <= ids
    assert all(m.family != "gpt-oss" or m.native_dtype == "mxfp4" for m in _catalog().models)


@pytest.mark.parametrize("model", MODELS, ids=[m.id for m in MODELS])
def test_an_mxfp4_model_splits_into_experts_and_a_dense_rest(model):
    """Attention (and the router) are counted as the dense rest, not as experts: the split comes from a config."""
    g = param_groups(model)
    assert model.expert_params and g.experts == model.expert_params
    assert g.dense > 0 and g.embed > 0


@pytest.mark.parametrize(("model", "engine"), CASES, ids=IDS)
def test_the_estimate_weighs_by_the_engine_s_file(model, engine):
    catalog, quant = _catalog(), _mxfp4()
    gpu = catalog.gpu("h200-sxm")
    assert gpu is not None
    est = estimate(model, gpu, quant, Request(engine=engine), catalog.size(model.id, quant.id))
    assert est.memory.weights_bytes == _expected(model, engine)


@pytest.mark.parametrize(("model", "engine"), CASES, ids=IDS)
def test_every_weighing_path_agrees(model, engine):
    """The ladder the quant choice walks, the memory chart's table and the fit's breakdown, each handed the
    catalog row and its measured GGUF size, weigh as the estimate does."""
    catalog, quant = _catalog(), _mxfp4()
    gpu = catalog.gpu("h200-sxm")
    assert gpu is not None
    expected = _expected(model, engine)
    rung = next(w for q, w in ladder_weights(model, engine, catalog) if q.id == "MXFP4")
    assert rung.total_bytes == expected
    workload = Workload(engine=engine)
    hardware = Hardware(gpu=gpu)
    size = catalog.size(model.id, quant.id)
    mem, w = breakdown(model, quant, hardware, workload, size)
    assert mem.weights_bytes == w.total_bytes == expected
    assert breakdown(model, quant, hardware, workload)[0].weights_bytes == _rule_bytes(model, engine)
    _, rows = memory_table(model, [(quant, size)], hardware, workload, (8192,))
    full = breakdown(model, quant, hardware, workload, size, 8192)[0]
    assert rows[0][0] == full.total_bytes  # both with the host-side embedding left out


@pytest.mark.parametrize("model", MODELS, ids=[m.id for m in MODELS])
def test_vllm_holds_the_non_expert_tensors_in_bf16_not_q8_0(model):
    g = param_groups(model)
    rest = g.embed + g.output + g.dense
    extra = _rule_bytes(model, Engine.VLLM) - _rule_bytes(model, Engine.LLAMA_CPP)
    assert extra == pytest.approx(rest * (16 - 8.5) / 8, abs=4)


def test_a_vllm_gpt_oss_120b_card_exceeds_the_llama_cpp_one_by_bf16_over_q8_0():
    """~2.13B non-expert parameters at 16 instead of 8.5 bits: about 2.0 GB more on the vLLM card (the
    llama.cpp card weighs the measured GGUF, 0.2 GB above its recipe, so the gap reads a little smaller)."""
    catalog, quant = _catalog(), _mxfp4()
    model, gpu = catalog.model("gpt-oss-120b"), catalog.gpu("h200-sxm")
    assert model is not None and gpu is not None
    g = param_groups(model)
    rest = g.embed + g.output + g.dense
    assert rest == pytest.approx(2.13e9, rel=0.01)
    bf16_over_q8 = rest * (16 - 8.5) / 8
    assert bf16_over_q8 == pytest.approx(2.0e9, rel=0.01)
    size = catalog.size(model.id, quant.id)
    cards = {e: estimate(model, gpu, quant, Request(engine=e, context=8192), size) for e in Engine}
    llama, vllm = cards[Engine.LLAMA_CPP].memory, cards[Engine.VLLM].memory
    assert vllm.weights_bytes - llama.weights_bytes == pytest.approx(bf16_over_q8, rel=0.1)
    assert vllm.total_bytes - llama.total_bytes >= vllm.weights_bytes - llama.weights_bytes
    # the checkpoint vLLM loads is about the size of the experts-MXFP4 / rest-F16 GGUF (65,355,994,368 B)
    assert vllm.weights_bytes == pytest.approx(65_355_994_368, rel=0.01)


def test_the_scenario_holds_the_checkpoint_form_and_it_passes_through():
    catalog, row = _catalog(), _mxfp4()
    model = catalog.model("gpt-oss-120b")
    assert model is not None
    size = catalog.size(model.id, row.id)
    assert size is not None
    r = resolved(model, Request(engine=Engine.VLLM), catalog)
    assert r.measured is None and r.quant.id == "MXFP4"
    assert (r.quant.bpw_dense, r.quant.bpw_embed, r.quant.bpw_output, r.quant.bpw_experts) == (16, 16, 16, 4.25)
    assert as_loaded(r.quant, size, Engine.VLLM) == (r.quant, None)  # a GGUF size handed in again is dropped
    assert as_loaded(r.quant, size, Engine.LLAMA_CPP) == (row, size)  # llama.cpp gets the row back
    assert resolved(model, Request(engine=Engine.LLAMA_CPP), catalog)[1:3] == (row, size)


def test_quants_without_checkpoint_bits_weigh_alike_on_both_engines():
    catalog = _catalog()
    for quant in catalog.quants:
        if quant.safetensors is None:
            assert as_loaded(quant, None, Engine.VLLM)[0] is quant


@pytest.mark.parametrize("repo", ["openai/gpt-oss-120b", "openai/gpt-oss-20b"])
def test_the_checkpoint_bits_follow_the_stored_quantization_config(repo):
    """The row's source: quant_method mxfp4, modules_to_not_convert attention, router, embedding and lm_head."""
    config = json.loads((CONFIG_DIR / f"{repo}.json").read_text(encoding="utf-8"))
    q = config["quantization_config"]
    assert q["quant_method"] == "mxfp4"
    kept = set(q["modules_to_not_convert"])
    assert kept == {"model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"}
    bits = _mxfp4().safetensors
    assert bits is not None
    assert (bits.bpw_dense, bits.bpw_embed, bits.bpw_output, bits.bpw_experts) == (16, 16, 16, EXPERT_BPW)
    assert "modules_to_not_convert" in bits.source and repo in bits.source

"""Memory model: exact KV sizes per attention kind, weights recipe, overhead, placement and verdict."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.estimate import Request, estimate
from core.fit import Verdict, breakdown, max_context, place
from core.memory import compute_buffer_bytes, kv_cache_bytes
from core.models import GIB, MIB, Engine, Hardware, KvCacheType, Workload
from core.weights import param_groups, recipe_weights
from tests.core.specs import (
    BF16,
    DEEPSEEK_V3,
    GEMMA3_27B,
    GLM_AIR,
    H100,
    LLAMA3_8B,
    M3_ULTRA_512,
    Q4_K_M,
    Q8_0,
    QWEN3_NEXT,
    RTX_3090,
    RTX_4090,
)


@pytest.mark.parametrize(
    ("model", "context", "kv", "engine", "expected"),
    [
        # GQA with the config's head_dim: 2 * L * kv_heads * head_dim * ctx * 2 bytes
        (LLAMA3_8B, 8192, KvCacheType.F16, Engine.LLAMA_CPP, 1024 * MIB),
        (GLM_AIR, 8192, KvCacheType.F16, Engine.LLAMA_CPP, int(1.4375 * GIB)),
        (GLM_AIR, 32768, KvCacheType.F16, Engine.LLAMA_CPP, int(5.75 * GIB)),
        (GLM_AIR, 32768, KvCacheType.Q8_0, Engine.LLAMA_CPP, round(5.75 * GIB * 34 / 64)),
        (LLAMA3_8B, 8192, KvCacheType.FP8, Engine.VLLM, 512 * MIB),
        # llama.cpp pads to 256 cells: 1000 tokens are cached as 1024
        (LLAMA3_8B, 1000, KvCacheType.F16, Engine.LLAMA_CPP, 128 * MIB),
        # MLA in llama.cpp: K = latent + rope (576), V = latent (512), per token and layer
        (DEEPSEEK_V3, 16384, KvCacheType.Q4_0, Engine.LLAMA_CPP, round(61 * 1088 * 16384 * 18 / 32)),
        # MLA in vLLM: one 576-wide latent per token and layer
        (DEEPSEEK_V3, 32768, KvCacheType.BF16, Engine.VLLM, 61 * 576 * 32768 * 2),
        # sliding window: 10 full layers grow, 52 local layers hold window + ubatch (1024 + 512)
        (GEMMA3_27B, 32768, KvCacheType.F16, Engine.LLAMA_CPP, (10 * 32768 + 52 * 1536) * 16 * 256 * 2),
        # hybrid: 12 attention layers grow, 36 Gated DeltaNet layers keep a constant state
        (
            QWEN3_NEXT,
            32768,
            KvCacheType.F16,
            Engine.LLAMA_CPP,
            12 * 32768 * 2 * 512 * 2 + 36 * QWEN3_NEXT.linear_state_bytes,
        ),
    ],
)
def test_kv_cache_exact(model, context, kv, engine, expected):
    assert kv_cache_bytes(model, Workload(context=context, kv_cache=kv, engine=engine)) == expected


def test_pooled_kv_grows_with_context_next_to_the_windows():
    """Compressed attention (DeepSeek V4): pooled entries per context token, plus every layer's window."""
    pooled = LLAMA3_8B.model_copy(
        update={
            "n_full_attention_layers": 0,
            "n_sliding_layers": 32,
            "sliding_window": 128,
            "pooled_kv_elements": 100.0,
        }
    )
    work = Workload(context=65536, kv_cache=KvCacheType.BF16, engine=Engine.VLLM)
    assert kv_cache_bytes(pooled, work) == 65536 * 100 * 2 + 32 * 128 * 8 * 256 * 2


def test_kv_grows_with_concurrent_sequences():
    one = kv_cache_bytes(LLAMA3_8B, Workload(context=4096))
    assert kv_cache_bytes(LLAMA3_8B, Workload(context=4096, concurrent=4)) == 4 * one


@pytest.mark.parametrize(
    ("model", "quant", "expected_gib", "tolerance"),
    [
        # llama.cpp's own table (tools/quantize/README.md): Llama-3.1-8B Q4_K_M 4.58 GiB, Q8_0 7.95 GiB
        (LLAMA3_8B, Q4_K_M, 4.58, 0.01),
        (LLAMA3_8B, Q8_0, 7.95, 0.01),
        (LLAMA3_8B, BF16, 8_030_261_248 * 2 / GIB, 0.001),
        # GLM-4.5-Air Q4_K_M measured 67.96 GiB (unsloth) / 68.45 GiB (bartowski): expert FFN width
        # 1408 is not a multiple of 256, so ffn_down_exps falls back to Q5_0/Q8_0
        (GLM_AIR, Q4_K_M, 68.2, 0.01),
    ],
)
def test_weights_recipe_matches_measured_sizes(model, quant, expected_gib, tolerance):
    got = recipe_weights(model, quant).total_bytes / GIB
    assert got == pytest.approx(expected_gib, rel=tolerance)


def test_param_groups_split_moe_by_active_share():
    groups = param_groups(GLM_AIR)
    assert groups.total == GLM_AIR.total_params
    # routed = (total - active) / (1 - 8/128)
    assert groups.experts == round((110.47e9 - 12e9) / (1 - 8 / 128))


def test_compute_buffer_matches_llama_cpp_log():
    # Qwen3-32B, flash attention, ubatch 512: llama.cpp logged 306.75 MiB (llamacpp_memory.csv)
    qwen = LLAMA3_8B.model_copy(update={"vocab_size": 151936, "hidden_size": 5120})
    assert compute_buffer_bytes(qwen, Workload()) == pytest.approx(306.75 * MIB, rel=0.001)
    # Llama-3-8B at 8K without flash attention: 560 MiB logged (attention scores dominate)
    assert compute_buffer_bytes(LLAMA3_8B, Workload(flash_attention=False)) == 560 * MIB


def test_llama3_8b_on_4090_fits_with_token_embedding_in_ram():
    est = estimate(LLAMA3_8B, RTX_4090, Q4_K_M, Request())
    assert est.verdict is Verdict.FITS
    mem = est.memory
    assert mem.host_weights_bytes == pytest.approx(281.81 * MIB, rel=0.001)  # token_embd logged on CPU
    assert mem.total_bytes == mem.weights_bytes - mem.host_weights_bytes + mem.kv_cache_bytes + mem.overhead_bytes
    assert mem.reserve_bytes == mem.usable_bytes - mem.total_bytes
    assert set(est.defaults_used) == {"engine", "quant", "context", "kv_cache", "ram"}


def test_glm_air_on_one_4090_needs_expert_offload():
    est = estimate(GLM_AIR, RTX_4090, Q4_K_M, Request(ram_gb=128))
    assert est.verdict is Verdict.OFFLOAD
    assert est.offload.mode == "experts"
    assert 0 < est.offload.cpu_moe_layers < GLM_AIR.n_layers
    assert est.offload.gpu_bytes <= est.memory.usable_bytes


def test_glm_air_without_enough_ram_does_not_fit():
    assert estimate(GLM_AIR, RTX_4090, Q4_K_M, Request(ram_gb=16)).verdict is Verdict.NO_FIT


def test_unified_memory_uses_the_macos_wired_limit_and_never_offloads():
    est = estimate(GLM_AIR, M3_ULTRA_512, Q4_K_M, Request())
    assert est.memory.usable_bytes == round(M3_ULTRA_512.memory_bytes * 0.75)
    assert est.memory.host_weights_bytes == 0
    assert est.verdict is Verdict.FITS
    small = M3_ULTRA_512.model_copy(update={"memory_bytes": 32 * GIB})
    assert estimate(GLM_AIR, small, Q4_K_M, Request()).verdict is Verdict.NO_FIT


def test_two_gpus_double_usable_memory_and_replicate_buffers():
    one = estimate(LLAMA3_8B, RTX_3090, Q8_0, Request())
    two = estimate(LLAMA3_8B, RTX_3090, Q8_0, Request(gpu_count=2))
    assert two.memory.usable_bytes == 2 * one.memory.usable_bytes
    assert two.memory.overhead_bytes > one.memory.overhead_bytes


def test_vllm_preallocates_and_does_not_offload():
    est = estimate(LLAMA3_8B, RTX_4090, BF16, Request(engine=Engine.VLLM))
    assert est.memory.usable_bytes == round(RTX_4090.memory_bytes * 0.9)
    assert est.kv_cache.value == "bf16"
    big = estimate(GLM_AIR, H100, BF16, Request(engine=Engine.VLLM))
    assert big.verdict is Verdict.NO_FIT and big.offload.mode == "none"


def test_max_context_is_the_largest_that_fits():
    hw, wl = Hardware(gpu=RTX_4090), Workload()
    ctx = max_context(GLM_AIR, Q4_K_M, hw.model_copy(update={"count": 4}), wl)
    assert ctx % 256 == 0
    four = hw.model_copy(update={"count": 4})
    mem, _ = breakdown(GLM_AIR, Q4_K_M, four, wl, context=ctx)
    assert mem.total_bytes <= mem.usable_bytes
    if ctx < GLM_AIR.max_context:
        over, _ = breakdown(GLM_AIR, Q4_K_M, four, wl, context=ctx + 256)
        assert over.total_bytes > over.usable_bytes


contexts = st.integers(min_value=1, max_value=262144)


@settings(max_examples=60, deadline=None)
@given(
    a=contexts,
    b=contexts,
    kv=st.sampled_from(list(KvCacheType)),
    model=st.sampled_from([LLAMA3_8B, GLM_AIR, DEEPSEEK_V3, GEMMA3_27B, QWEN3_NEXT]),
)
def test_memory_never_falls_as_context_grows(a, b, kv, model):
    lo, hi = sorted((a, b))
    hw = Hardware(gpu=RTX_4090)
    small, _ = breakdown(model, Q4_K_M, hw, Workload(context=lo, kv_cache=kv))
    large, _ = breakdown(model, Q4_K_M, hw, Workload(context=hi, kv_cache=kv))
    assert large.total_bytes >= small.total_bytes
    assert large.kv_cache_bytes >= small.kv_cache_bytes


@settings(max_examples=80, deadline=None)
@given(
    ctx=contexts,
    count=st.integers(min_value=1, max_value=8),
    ram=st.integers(min_value=0, max_value=1024),
    gpu=st.sampled_from([RTX_4090, RTX_3090, H100, M3_ULTRA_512]),
    model=st.sampled_from([LLAMA3_8B, GLM_AIR, DEEPSEEK_V3, GEMMA3_27B, QWEN3_NEXT]),
)
def test_verdict_is_consistent_with_the_numbers(ctx, count, ram, gpu, model):
    hw = Hardware(gpu=gpu, count=count, system_ram_bytes=ram * 10**9)
    p = place(model, Q4_K_M, hw, Workload(context=ctx))
    if p.verdict in (Verdict.FITS, Verdict.TIGHT):
        assert p.memory.total_bytes <= p.memory.usable_bytes
    if p.verdict is Verdict.FITS:
        assert p.memory.reserve_bytes >= p.memory.comfortable_reserve_bytes
    if p.verdict is Verdict.OFFLOAD:
        assert p.memory.total_bytes > p.memory.usable_bytes
        assert p.offload.bytes_in_ram <= p.offload.ram_usable_bytes
        assert p.offload.gpu_bytes <= p.memory.usable_bytes


def test_unsloth_dynamic_sizes_keep_their_order_on_dense_models():
    """UD quants were fitted on MoE files; on a dense model UD-Q2_K_XL must stay below Q3_K_M and
    the 1-2 bit UD quants must differ (issue 14: Qwen3-32B UD-Q2_K_XL was listed above Q4_K_M)."""
    from catalog.facts import load_facts
    from core.weights import weights

    catalog = load_facts()
    model = catalog.model("qwen3-32b")
    assert model is not None and not model.is_moe
    ids = ("Q4_K_M", "Q3_K_M", "UD-Q2_K_XL", "UD-IQ2_M", "UD-IQ2_XXS", "UD-IQ1_M", "UD-IQ1_S")
    sizes = []
    for qid in ids:
        quant = catalog.quant(qid)
        assert quant is not None
        sizes.append(weights(model, quant, catalog.size(model.id, qid)).total_bytes)
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)


def _catalog():
    from catalog.facts import load_facts

    return load_facts()


@pytest.mark.parametrize(
    ("model_id", "gpu_id", "ram"),
    [
        ("qwen3-32b", "rtx-4090", 64),  # full fit
        ("glm-4.5-air", "rtx-4090", 128),  # experts offload
        ("gpt-oss-120b", "rtx-4090", 64),  # experts offload (MXFP4)
        ("llama-3.3-70b-instruct", "rtx-4090", 64),  # layer offload
        ("llama-3.3-70b-instruct", "rtx-4090", 16),  # no fit: RAM short
    ],
)
def test_gpu_and_ram_rows_add_up_and_the_reserve_is_never_negative_on_a_card_that_runs(model_id, gpu_id, ram):
    from core.estimate import Request, estimate
    from core.fit import Verdict

    catalog = _catalog()
    model, gpu, quant = catalog.model(model_id), catalog.gpu(gpu_id), None
    assert model is not None and gpu is not None
    quant = catalog.quant("MXFP4" if model.native_dtype == "mxfp4" else "Q4_K_M")
    assert quant is not None
    est = estimate(model, gpu, quant, Request(ram_gb=ram), catalog.size(model.id, quant.id))
    mem = est.memory
    assert est.gpu_bytes + est.ram_bytes == pytest.approx(
        mem.weights_bytes + mem.kv_cache_bytes + mem.overhead_bytes, rel=1e-6
    )
    if est.verdict is not Verdict.NO_FIT:
        assert est.gpu_reserve_bytes >= 0 and est.gpu_bytes <= mem.usable_bytes
        assert est.short_gpu_bytes == est.short_ram_bytes == 0
    else:
        # what is really missing after the best offload: RAM here, not the GPU's whole deficit
        assert est.short_gpu_bytes == 0
        assert est.short_ram_bytes == est.ram_bytes - est.offload.ram_usable_bytes > 0
        assert est.short_ram_bytes < mem.total_bytes - mem.usable_bytes


def test_context_beyond_the_trained_maximum_is_noted_and_rope_scaling_named_when_known():
    from core.estimate import Request, estimate
    from core.models import ModelSpec

    catalog = _catalog()
    phi = catalog.model("phi-4")
    quant = catalog.quant("Q4_K_M")
    gpu = catalog.gpu("rtx-4090")
    assert phi is not None and quant is not None and gpu is not None
    est = estimate(phi, gpu, quant, Request(context=65536))
    assert est.beyond_trained_context
    assert any(n.code == "context_over_max" and n.values["max"] == phi.max_context for n in est.notes)

    class RopeModel(ModelSpec):
        rope_scaling_max_context: int | None = None

    qwen = catalog.model("qwen3-8b")
    assert qwen is not None
    scaled = RopeModel(**qwen.model_dump(), rope_scaling_max_context=131072)
    est = estimate(scaled, gpu, quant, Request(context=65536))
    assert est.rope_scaled_max_context == 131072
    assert any(n.code == "context_rope" and n.values["rope"] == 131072 for n in est.notes)
    assert not any(n.code == "context_over_max" for n in est.notes)

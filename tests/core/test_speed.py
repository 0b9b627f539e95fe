"""Speed model: monotonicity, MoE, unified memory, multi-GPU, unknown GPUs, concurrency, TTFT."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.fit import Offload, Placement, place
from core.memory import kv_cache_bytes, overhead_bytes, usable_bytes
from core.models import GIB, Backend, Engine, GpuSpec, Hardware, KvCacheType, ModelSpec, Workload
from core.speed import estimate as speed
from core.speed.arch import ARCH
from core.speed.estimate import SpeedEstimate, estimate_speed
from tests.core import specs
from tests.core.specs import BF16, GLM_AIR, LLAMA3_8B, PROV, Q4_K_M, Q8_0

# The shared test specs with their chip generation (speed constants are per generation).
H100 = specs.H100.model_copy(update={"arch": "hopper"})
M3_ULTRA_512 = specs.M3_ULTRA_512.model_copy(update={"arch": "apple-m3", "fp16_tflops": None})
RTX_3090 = specs.RTX_3090.model_copy(update={"arch": "ampere"})
RTX_4090 = specs.RTX_4090.model_copy(update={"arch": "ada"})


def run(
    model: ModelSpec = LLAMA3_8B,
    gpu: GpuSpec = RTX_4090,
    quant=Q4_K_M,
    count: int = 1,
    placement: Placement | None = None,
    **work,
) -> SpeedEstimate:
    hardware = Hardware(
        gpu=gpu,
        count=count,
        system_ram_bytes=work.pop("ram", 256 * 10**9),
        ram_bandwidth_bytes_per_s=work.pop("ram_bw", None),
    )
    workload = Workload(**work)
    placement = placement or place(model, quant, hardware, workload)
    return estimate_speed(model, placement.weights, placement, hardware, workload, quant.id)


def gpu_like(base: GpuSpec, **update) -> GpuSpec:
    return base.model_copy(update=update)


def with_offload(placement: Placement, **update) -> Placement:
    return placement.model_copy(update={"offload": placement.offload.model_copy(update=update)})


# ---------------------------------------------------------------------------------------------
# Monotonicity
# ---------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.floats(100e9, 8000e9), st.floats(1.01, 4.0))
def test_more_bandwidth_is_never_slower(bandwidth, factor):
    slow = run(gpu=gpu_like(RTX_4090, bandwidth_bytes_per_s=bandwidth))
    fast = run(gpu=gpu_like(RTX_4090, bandwidth_bytes_per_s=bandwidth * factor))
    assert fast.decode_tokens_per_s > slow.decode_tokens_per_s
    assert fast.decode_tokens_per_s_at_context > slow.decode_tokens_per_s_at_context
    assert fast.prefill_tokens_per_s >= slow.prefill_tokens_per_s
    assert fast.ttft_s <= slow.ttft_s


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 100_000), st.integers(1, 100_000))
def test_longer_context_is_never_faster(a, b):
    short, long = sorted((a, b))
    for model in (LLAMA3_8B, GLM_AIR):
        s = run(model=model, gpu=M3_ULTRA_512, context=short, prompt_tokens=short)
        g = run(model=model, gpu=M3_ULTRA_512, context=long, prompt_tokens=long)
        assert g.decode_tokens_per_s_at_context <= s.decode_tokens_per_s_at_context
        assert g.ttft_s >= s.ttft_s
        assert s.decode_tokens_per_s_at_context <= s.decode_tokens_per_s * (1 + 1e-12) or short <= 64


def test_context_slows_decode_by_the_kv_read():
    est = run(context=32768)
    assert est.decode_tokens_per_s_at_context < 0.9 * est.decode_tokens_per_s


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 31), st.integers(0, 31))
def test_more_layer_offload_is_never_faster(a, b):
    base = place(LLAMA3_8B, Q8_0, Hardware(gpu=RTX_4090), Workload())
    more_gpu, fewer_gpu = max(a, b), min(a, b)
    fast = run(placement=with_offload(base, mode="layers", layers_on_gpu=more_gpu))
    slow = run(placement=with_offload(base, mode="layers", layers_on_gpu=fewer_gpu))
    assert slow.decode_tokens_per_s <= fast.decode_tokens_per_s
    assert slow.prefill_tokens_per_s <= fast.prefill_tokens_per_s


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 46), st.integers(0, 46))
def test_more_expert_offload_is_never_faster(a, b):
    base = place(GLM_AIR, Q4_K_M, Hardware(gpu=H100), Workload())
    fast = run(model=GLM_AIR, gpu=H100, placement=with_offload(base, mode="experts", cpu_moe_layers=min(a, b)))
    slow = run(model=GLM_AIR, gpu=H100, placement=with_offload(base, mode="experts", cpu_moe_layers=max(a, b)))
    assert slow.decode_tokens_per_s <= fast.decode_tokens_per_s
    assert slow.prefill_tokens_per_s <= fast.prefill_tokens_per_s


def test_offload_is_slower_than_full_gpu_and_faster_ram_helps():
    full = run(model=LLAMA3_8B, quant=BF16)
    base = place(LLAMA3_8B, BF16, Hardware(gpu=RTX_4090), Workload())
    half = with_offload(base, mode="layers", layers_on_gpu=16)
    ddr5 = run(quant=BF16, placement=half)
    server = run(quant=BF16, placement=half, ram_bw=300e9)
    assert ddr5.decode_tokens_per_s < full.decode_tokens_per_s / 2
    assert ddr5.decode_tokens_per_s < server.decode_tokens_per_s
    assert ddr5.confidence == "rough"  # default RAM bandwidth: an assumption
    assert any("platform default" in note for note in ddr5.basis)


# ---------------------------------------------------------------------------------------------
# MoE, unified memory, multi-GPU
# ---------------------------------------------------------------------------------------------


def test_moe_decode_reads_active_not_total_parameters():
    moe = run(model=GLM_AIR, gpu=H100)
    dense_same_total = GLM_AIR.model_copy(
        update={
            "id": "dense",
            "active_params": GLM_AIR.total_params,
            "n_experts": None,
            "experts_per_token": None,
            "n_shared_experts": 0,
            "moe_intermediate_size": None,
        }
    )
    dense = run(model=dense_same_total, gpu=H100)
    # 110 B total, 12 B active: several times faster than a dense model of the same size (not the
    # full 9x: the MoE layers' routing and expert launches add fixed time per token)
    assert moe.decode_tokens_per_s > 3.5 * dense.decode_tokens_per_s
    placement = place(GLM_AIR, Q4_K_M, Hardware(gpu=H100), Workload())
    read = speed.token_read_bytes(GLM_AIR, placement.weights)
    assert read < 0.2 * placement.weights.total_bytes


def test_moe_prefill_streams_every_expert_a_batch_touches():
    placement = place(GLM_AIR, Q4_K_M, Hardware(gpu=H100), Workload())
    w = placement.weights
    one = speed.touched_weight_bytes(GLM_AIR, w, 1)
    batch = speed.touched_weight_bytes(GLM_AIR, w, 512)
    assert one == pytest.approx(w.dense_bytes + w.output_bytes + w.experts_bytes * 8 / 128)
    assert batch == pytest.approx(w.dense_bytes + w.output_bytes + w.experts_bytes, rel=1e-3)


def test_unified_memory_is_one_pool_at_its_bandwidth():
    est = run(model=GLM_AIR, gpu=M3_ULTRA_512, quant=Q4_K_M)
    assert est.confidence == "calibrated"
    assert any("unified memory" in note for note in est.basis)
    # no RAM tier: faster "system RAM" changes nothing
    assert run(model=GLM_AIR, gpu=M3_ULTRA_512, ram_bw=10e9).decode_tokens_per_s == est.decode_tokens_per_s
    # roughly bandwidth over bytes: 819 GB/s at the Metal efficiency over ~7 GB active
    assert 40 < est.decode_tokens_per_s < 120


def test_apple_without_tflops_uses_its_generations_flop_per_byte():
    mac = gpu_like(M3_ULTRA_512, fp16_tflops=None)
    tflops, rough = speed.dense_tflops(mac)
    assert tflops == pytest.approx(819 * ARCH["apple-m3"].flop_per_byte / 1000)
    assert not rough
    assert run(gpu=mac).confidence == "calibrated"
    # M5 has no calibration rows: same kind of figure, flagged rough
    assert speed.dense_tflops(gpu_like(mac, arch="apple-m5"))[1]


def test_llama_cpp_layer_split_gives_no_single_stream_speed_up():
    one = run(gpu=RTX_3090, count=1)
    two = run(gpu=RTX_3090, count=2)
    four = run(gpu=RTX_3090, count=4)
    assert four.decode_tokens_per_s < two.decode_tokens_per_s < one.decode_tokens_per_s
    assert two.decode_tokens_per_s > 0.95 * one.decode_tokens_per_s  # only a small hop cost
    assert two.prefill_tokens_per_s < one.prefill_tokens_per_s


def test_vllm_tensor_parallel_adds_bandwidth_and_nvlink_beats_pcie():
    vllm = {"engine": Engine.VLLM, "kv_cache": KvCacheType.BF16}
    one = run(gpu=H100, quant=BF16, **vllm)
    two = run(gpu=H100, quant=BF16, count=2, **vllm)
    two_pcie = run(gpu=gpu_like(H100, interconnect="pcie"), quant=BF16, count=2, **vllm)
    assert two.decode_tokens_per_s > 1.2 * one.decode_tokens_per_s
    assert two.decode_tokens_per_s < 2 * one.decode_tokens_per_s
    assert two_pcie.decode_tokens_per_s < two.decode_tokens_per_s
    assert two.prefill_tokens_per_s > one.prefill_tokens_per_s


# ---------------------------------------------------------------------------------------------
# GPUs nobody benchmarked, confidence and bands
# ---------------------------------------------------------------------------------------------

UNSEEN_CUDA = GpuSpec(
    id="rtx-9090",
    name="NVIDIA GeForce RTX 9090",
    short_name="RTX 9090",
    vendor="NVIDIA",
    category="consumer",
    memory_bytes=48 * GIB,
    bandwidth_bytes_per_s=2500e9,
    fp16_tflops=300,
    backend=Backend.CUDA,
    provenance=PROV,
    arch="blackwell",
)


@pytest.mark.parametrize(
    ("gpu", "confidence"),
    [
        (UNSEEN_CUDA, "calibrated"),
        (gpu_like(UNSEEN_CUDA, id="rocm-x", vendor="AMD", backend=Backend.ROCM, arch="rdna3"), "calibrated"),
        # RDNA3 under Vulkan has rows from one source: a thin segment is rough since issue 37
        (gpu_like(UNSEEN_CUDA, id="vk-x", vendor="AMD", backend=Backend.VULKAN, arch="rdna3"), "rough"),
        (gpu_like(UNSEEN_CUDA, id="vk-x35", vendor="AMD", backend=Backend.VULKAN, arch="rdna3.5"), "calibrated"),
        (gpu_like(UNSEEN_CUDA, id="rubin-x", arch="rubin"), "rough"),  # a generation with no rows
        (gpu_like(UNSEEN_CUDA, id="rdna5-x", vendor="AMD", backend=Backend.ROCM, arch="rdna5"), "rough"),
        (gpu_like(UNSEEN_CUDA, id="arc-x", vendor="Intel", backend=Backend.SYCL), "rough"),
        (gpu_like(UNSEEN_CUDA, id="npu-x", vendor="Huawei", category="accelerator", backend=Backend.OTHER), "rough"),
        (gpu_like(UNSEEN_CUDA, id="no-flops", fp16_tflops=None), "rough"),
    ],
)
def test_unbenchmarked_gpu_gets_a_finite_speed(gpu, confidence):
    est = run(gpu=gpu)
    assert math.isfinite(est.decode_tokens_per_s) and est.decode_tokens_per_s > 0
    assert math.isfinite(est.prefill_tokens_per_s) and est.prefill_tokens_per_s > 0
    assert est.confidence == confidence
    assert est.decode_range[0] < est.decode_tokens_per_s < est.decode_range[1]
    assert est.prefill_range[0] < est.prefill_tokens_per_s < est.prefill_range[1]


def test_rough_estimates_get_a_wider_band():
    sure = run(gpu=UNSEEN_CUDA)
    new_generation = run(gpu=gpu_like(UNSEEN_CUDA, arch="blackwell-dc", category="datacenter"))
    rough = run(gpu=gpu_like(UNSEEN_CUDA, backend=Backend.OTHER))

    def width(est: SpeedEstimate, kind: str) -> float:
        lo, hi = est.decode_range if kind == "decode" else est.prefill_range
        return hi / lo

    for kind in ("decode", "prefill"):
        # equal when the seen generation is thin (rows from one source): the same band, up to rounding
        assert width(rough, kind) > width(new_generation, kind) >= width(sure, kind) * (1 - 1e-12)
    assert any("no llama-bench rows for blackwell-dc" in note for note in new_generation.basis)


def test_vllm_is_flagged_rough():
    assert run(gpu=H100, quant=BF16, engine=Engine.VLLM, kv_cache=KvCacheType.BF16).confidence == "rough"


@pytest.mark.parametrize(
    ("quant_id", "bpw", "family"),
    [
        ("Q4_K_M", 4.8, "k"),
        ("UD-Q4_K_XL", 4.9, "k"),
        ("Q4_0", 4.5, "q4_0"),
        ("Q8_0", 8.5, "q8_0"),
        ("F16", 16, "f16"),
        ("BF16", 16, "f16"),
        ("IQ4_XS", 4.25, "iq"),
        ("MXFP4", 4.25, "mxfp4"),
        (None, 16, "f16"),
        (None, 8.5, "q8_0"),
        (None, 4.8, "k"),
    ],
)
def test_quant_family(quant_id, bpw, family):
    assert speed.quant_family(quant_id, bpw) == family


# ---------------------------------------------------------------------------------------------
# Concurrency and TTFT
# ---------------------------------------------------------------------------------------------


def test_concurrency_arithmetic_by_hand():
    # Llama-3-8B BF16 on one H100 (81559 MiB), vLLM, 8192-token context, BF16 KV:
    #   usable  = 81559 MiB * 0.9                      = 71.68 GiB
    #   weights = 8_030_261_248 params * 2 B           = 14.96 GiB
    #   overhead (VLLM_OVERHEAD_BYTES)                 =  1.50 GiB
    #   KV per sequence = 32 layers * 8 heads * 128 * 2 (K, V) * 2 B * 8192 = 1 GiB exactly
    #   -> 55 sequences fit
    hardware, workload = Hardware(gpu=H100), Workload(engine=Engine.VLLM, kv_cache=KvCacheType.BF16, context=8192)
    placement = place(LLAMA3_8B, BF16, hardware, workload)
    conc = speed.concurrency(LLAMA3_8B, placement.weights, placement, hardware, workload, users=100, quant_id="BF16")
    assert conc.kv_bytes_per_sequence == GIB
    budget = (
        usable_bytes(hardware, workload) - placement.weights.total_bytes - overhead_bytes(LLAMA3_8B, hardware, workload)
    )
    assert conc.kv_budget_bytes == budget
    assert conc.sequences_fit == 55 == budget // kv_cache_bytes(LLAMA3_8B, workload)
    assert conc.batch == 55  # 100 users, 55 run at once, the rest wait
    assert conc.per_user_tokens_per_s == pytest.approx(conc.aggregate_tokens_per_s / 100)


def test_aggregate_grows_with_users_per_user_falls():
    hardware, base = Hardware(gpu=H100), Workload(engine=Engine.VLLM, kv_cache=KvCacheType.BF16, context=4096)
    placement = place(LLAMA3_8B, BF16, hardware, base)
    results = [
        speed.concurrency(LLAMA3_8B, placement.weights, placement, hardware, base, users=n, quant_id="BF16")
        for n in (1, 2, 8, 32)
    ]
    aggregates = [r.aggregate_tokens_per_s for r in results]
    per_user = [r.per_user_tokens_per_s for r in results]
    assert aggregates == sorted(aggregates) and aggregates[-1] > 8 * aggregates[0]
    assert per_user == sorted(per_user, reverse=True)
    single = run(gpu=H100, quant=BF16, engine=Engine.VLLM, kv_cache=KvCacheType.BF16, context=4096)
    assert results[0].aggregate_tokens_per_s == pytest.approx(single.decode_tokens_per_s_at_context, rel=1e-9)


def test_concurrency_only_for_vllm():
    assert run().concurrency is None
    est = run(gpu=H100, quant=BF16, engine=Engine.VLLM, kv_cache=KvCacheType.BF16, concurrent=16)
    assert est.concurrency is not None and est.concurrency.users == 16


def test_nothing_fits_means_no_throughput():
    small = gpu_like(H100, memory_bytes=16 * GIB)
    hardware, workload = Hardware(gpu=small), Workload(engine=Engine.VLLM, kv_cache=KvCacheType.BF16)
    placement = place(LLAMA3_8B, BF16, hardware, workload)
    conc = speed.concurrency(LLAMA3_8B, placement.weights, placement, hardware, workload, users=4)
    assert conc.sequences_fit == 0 and conc.aggregate_tokens_per_s == 0.0


def test_ttft_is_prompt_over_prefill_plus_attention_growth():
    at512 = run(prompt_tokens=512)
    assert at512.ttft_s == pytest.approx(512 / at512.prefill_tokens_per_s)
    long = run(prompt_tokens=16384)
    # 32 ubatches of 512 cost more than 32x one ubatch: later ubatches attend to more context
    assert long.ttft_s > 32 * at512.ttft_s
    placement = place(LLAMA3_8B, Q4_K_M, Hardware(gpu=RTX_4090), Workload())
    hardware, workload = Hardware(gpu=RTX_4090, system_ram_bytes=256 * 10**9), Workload()
    t = speed.prompt_time(LLAMA3_8B, placement.weights, placement, hardware, workload, 16384, quant_id="Q4_K_M").seconds
    assert long.ttft_s == pytest.approx(t)


def test_decode_speed_for_any_hardware_matches_the_estimate():
    hardware, workload = Hardware(gpu=RTX_4090, system_ram_bytes=256 * 10**9), Workload()
    placement = place(LLAMA3_8B, Q4_K_M, hardware, workload)
    direct = speed.decode_tokens_per_s(LLAMA3_8B, placement.weights, placement, hardware, workload, 8192, "Q4_K_M")
    assert direct == pytest.approx(run().decode_tokens_per_s_at_context)


@pytest.mark.parametrize(
    ("gpu", "low", "high"),
    [
        # Llama-3-8B Q4_K_M, llama-bench tg128 on current builds: RTX 4090 ~130-150, RTX 3090 ~110-125
        (RTX_4090, 110, 170),
        (RTX_3090, 95, 140),
    ],
)
def test_decode_is_in_the_measured_range(gpu, low, high):
    assert low < run(gpu=gpu).decode_tokens_per_s < high


def test_empty_offload_rows_are_handled():
    base = place(LLAMA3_8B, Q4_K_M, Hardware(gpu=RTX_4090), Workload())
    zero = Offload(
        mode="layers",
        layers_on_gpu=0,
        layers_total=32,
        gpu_bytes=0,
        bytes_in_ram=0,
        ram_usable_bytes=64 * GIB,
        fits_ram=True,
    )
    est = run(placement=base.model_copy(update={"offload": zero}))
    assert 0 < est.decode_tokens_per_s < run().decode_tokens_per_s

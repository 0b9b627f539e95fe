"""Generic devices ("a GPU with 16 GB") and the per-generation physics of core/speed_arch.py."""

from __future__ import annotations

import math
from typing import get_args

import pytest

from core.fit import place
from core.models import GIB, Backend, Hardware, Workload
from core.speed import calibrated_device, device_rates, estimate_speed
from core.speed_arch import ARCH, arch_profile, is_igpu, matrix_tflops
from core.speed_generic import TIERS, DeviceClass, estimate_generic_speed, generic_device
from tests.core import specs
from tests.core.specs import LLAMA3_8B, Q4_K_M

SIZES_GIB = [4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 512]


@pytest.mark.parametrize("device_class", get_args(DeviceClass))
@pytest.mark.parametrize("gib", SIZES_GIB)
def test_every_class_and_size_gets_an_ordered_device_triple(device_class, gib):
    device = generic_device(device_class, gib * GIB)
    assert device.low.memory_bytes == device.typical.memory_bytes == device.high.memory_bytes == gib * GIB
    assert device.low.bandwidth_bytes_per_s <= device.typical.bandwidth_bytes_per_s <= device.high.bandwidth_bytes_per_s
    assert len(set(device.examples)) >= 1 and all(device.examples)


def test_tiers_are_sorted_by_memory():
    for tiers in TIERS.values():
        bounds = [bound for bound, _ in tiers]
        assert bounds == sorted(bounds)


@pytest.mark.parametrize(
    ("device_class", "gib"), [("gpu", 16), ("laptop", 8), ("cpu", 64), ("apple", 36), ("laptop_gpu", 8), ("apu", 128)]
)
def test_generic_speed_is_a_rough_band_around_the_typical_device(device_class, gib):
    device = generic_device(device_class, gib * GIB)
    hardware = Hardware(gpu=device.typical, system_ram_bytes=max(gib, 16) * GIB)
    workload = Workload(context=4096)
    placement = place(LLAMA3_8B, Q4_K_M, hardware, workload)
    est = estimate_generic_speed(LLAMA3_8B, placement.weights, placement, hardware, workload, device, Q4_K_M.id)
    typical = estimate_speed(LLAMA3_8B, placement.weights, placement, hardware, workload, Q4_K_M.id)
    assert est.confidence == "rough"
    assert est.decode_tokens_per_s == typical.decode_tokens_per_s
    lo, hi = est.decode_range
    assert lo <= typical.decode_range[0] and hi >= typical.decode_range[1]
    assert 0 < lo < est.decode_tokens_per_s < hi and math.isfinite(hi)
    assert est.prefill_range[0] < est.prefill_tokens_per_s < est.prefill_range[1]
    assert device.examples[0] in est.basis[0]


def test_a_16_gb_gpu_is_slower_than_a_32_gb_gpu_at_the_top_and_faster_than_a_laptop():
    hw16, hw32 = generic_device("gpu", 16 * GIB), generic_device("gpu", 32 * GIB)
    laptop = generic_device("laptop", 16 * GIB)
    assert hw32.high.bandwidth_bytes_per_s > hw16.high.bandwidth_bytes_per_s
    assert laptop.high.bandwidth_bytes_per_s < hw16.typical.bandwidth_bytes_per_s


# ---------------------------------------------------------------------------------------------
# Per-generation physics
# ---------------------------------------------------------------------------------------------


def test_datacenter_tensor_peaks_are_scaled_to_what_llama_cpp_kernels_use():
    h100 = specs.H100.model_copy(update={"arch": "hopper"})
    tflops, rough = matrix_tflops(h100)
    assert tflops == pytest.approx(989 * ARCH["hopper"].matrix_share) and not rough
    # an H100 does not get 3x an RTX 4090's prompt rate, whatever its listed peak says
    rtx4090 = specs.RTX_4090.model_copy(update={"arch": "ada"})
    assert matrix_tflops(h100)[0] < 1.2 * matrix_tflops(rtx4090)[0]


def test_geforce_and_l40_list_the_half_rate_figure():
    rtx4090 = specs.RTX_4090.model_copy(update={"arch": "ada"})
    assert matrix_tflops(rtx4090)[0] == pytest.approx(2 * 165.2)
    l40 = rtx4090.model_copy(update={"id": "l40", "category": "datacenter", "fp16_tflops": 181.0})
    l40s = l40.model_copy(update={"id": "l40s", "fp16_tflops": 362.0})
    assert matrix_tflops(l40)[0] == pytest.approx(matrix_tflops(l40s)[0])


def test_unknown_generation_is_rough_and_slower_clock_means_more_fixed_time():
    odd = specs.RTX_4090.model_copy(update={"arch": "something-new"})
    assert matrix_tflops(odd)[1]
    assert not arch_profile(odd).known
    a100 = specs.H100.model_copy(update={"arch": "ampere-dc", "fp16_tflops": 312.0})
    ada = specs.RTX_4090.model_copy(update={"arch": "ada"})
    assert device_rates(a100).layer_latency_s > device_rates(ada).layer_latency_s


def test_igpus_are_their_own_class():
    halo = specs.RTX_4090.model_copy(
        update={
            "arch": "rdna3.5",
            "category": "apu",
            "unified_memory": True,
            "vendor": "AMD",
            "backend": Backend.VULKAN,
            "fp16_tflops": 59.0,
        }
    )
    discrete = halo.model_copy(update={"category": "consumer", "unified_memory": False})
    assert is_igpu(halo) and not is_igpu(discrete)
    assert device_rates(halo).gemm_flops_per_s < device_rates(discrete).gemm_flops_per_s
    assert not is_igpu(specs.M3_ULTRA_512)


def test_pascal_ignores_its_listed_fp16_rate():
    """GP102/GP104 list FP16 at 1/64 of FP32; llama.cpp runs dp4a int8 instead."""
    p40 = specs.RTX_3090.model_copy(update={"arch": "pascal", "fp16_tflops": 0.18, "bandwidth_bytes_per_s": 347e9})
    tflops, _ = matrix_tflops(p40)
    assert tflops == pytest.approx(347e9 * ARCH["pascal"].flop_per_byte / 1e12)


def test_every_catalog_gpu_gets_a_finite_speed_and_band():
    from catalog.facts import load_facts

    catalog = load_facts()
    workload = Workload(context=4096)
    for gpu in catalog.gpus:
        hardware = Hardware(gpu=gpu, system_ram_bytes=64 * GIB)
        placement = place(LLAMA3_8B, Q4_K_M, hardware, workload)
        est = estimate_speed(LLAMA3_8B, placement.weights, placement, hardware, workload, Q4_K_M.id)
        assert 0 < est.decode_range[0] < est.decode_tokens_per_s < est.decode_range[1] < math.inf, gpu.id
        assert 0 < est.prefill_range[0] < est.prefill_tokens_per_s < est.prefill_range[1] < math.inf, gpu.id
        assert gpu.arch, gpu.id  # every device names its generation (family hold-outs, speed constants)


def test_gp100_keeps_its_full_rate_fp16_and_the_catalogs_arch_names_resolve():
    p100 = specs.RTX_3090.model_copy(
        update={"id": "tesla-p100-16gb", "arch": "pascal", "category": "datacenter", "fp16_tflops": 18.7}
    )
    assert matrix_tflops(p100)[0] == pytest.approx(18.7)
    assert arch_profile(p100).hbm
    orin = specs.RTX_3090.model_copy(update={"arch": "orin", "category": "apu", "unified_memory": True})
    assert arch_profile(orin) is ARCH["ampere-soc"]
    assert calibrated_device(orin)
    for name in ("maxwell", "cdna1", "rdna1"):
        assert arch_profile(specs.RTX_3090.model_copy(update={"arch": name})) is ARCH[name]

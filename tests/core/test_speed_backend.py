"""Backend as an input (CUDA, ROCm, Vulkan, SYCL, Metal) and devices known only by their specs."""

from __future__ import annotations

import pytest

from core.custom_device import custom_device, vendor_hint
from core.estimate import Request, estimate
from core.models import Backend, Catalog
from core.speed.arch import canonical_arch, matrix_tflops
from core.speed.device import backend_named, backend_options, with_backend
from tests.core import specs
from tests.core.specs import LLAMA3_8B, Q4_K_M

RTX_4090 = specs.RTX_4090.model_copy(update={"arch": "ada"})
XTX = RTX_4090.model_copy(update={"id": "rx-7900-xtx", "vendor": "AMD", "backend": Backend.ROCM, "arch": "rdna3"})


@pytest.mark.parametrize(
    ("text", "backend"),
    [("ROCm/HIP", Backend.ROCM), ("hip", Backend.ROCM), ("RADV", Backend.VULKAN), ("amdvlk", Backend.VULKAN),
     ("Vulkan", Backend.VULKAN), ("sycl", Backend.SYCL), ("metal", Backend.METAL), ("cuda", Backend.CUDA),
     ("opencl", None)],
)  # fmt: skip
def test_backend_names(text, backend):
    assert backend_named(text) is backend


def test_each_vendor_gets_its_backends_with_the_common_one_first():
    assert backend_options(RTX_4090) == (Backend.CUDA, Backend.VULKAN)
    assert backend_options(XTX) == (Backend.ROCM, Backend.VULKAN)
    assert with_backend(RTX_4090, Backend.METAL) is None
    assert with_backend(XTX, None) is XTX


def test_the_backend_changes_the_speed_and_the_card_names_it():
    cuda = estimate(LLAMA3_8B, XTX, Q4_K_M, Request())
    vulkan = estimate(LLAMA3_8B, XTX, Q4_K_M, Request(backend=Backend.VULKAN))
    assert cuda.hardware.backend is Backend.ROCM and vulkan.hardware.backend is Backend.VULKAN
    assert vulkan.speed.decode_tokens_per_s != pytest.approx(cuda.speed.decode_tokens_per_s, rel=0.02)
    assert ("backend_default", "ROCm/HIP") in {(n.code, n.values.get("value")) for n in cuda.notes}
    assert ("backend", "Vulkan") in {(n.code, n.values.get("value")) for n in vulkan.notes}
    assert cuda.memory == vulkan.memory  # memory does not depend on the backend


def test_a_backend_the_device_lacks_falls_back_and_says_so():
    est = estimate(LLAMA3_8B, RTX_4090, Q4_K_M, Request(backend=Backend.METAL))
    assert est.hardware.backend is Backend.CUDA
    assert any(n.code == "backend_unavailable" and n.values["used"] == "CUDA" for n in est.notes)


CATALOG = Catalog(gpus=(RTX_4090, XTX), models=(), quants=(), offers=())


def test_a_device_from_its_specs_uses_them_and_spans_the_unknowns():
    given = custom_device(CATALOG, 32, 608, 90, label="arc pro b70")
    assert given.gpu.vendor == "Intel" and given.gpu.backend is Backend.VULKAN
    assert given.gpu.bandwidth_bytes_per_s == 608e9 and given.gpu.fp16_tflops == 90
    assert given.bandwidth_range_gbps == (608, 608) and given.tflops_range == (90, 90)
    bare = custom_device(CATALOG, 32, 608)
    low, high = bare.tflops_range or (0, 0)
    assert low < high  # compute not given: the band spans the FLOP per byte llama.cpp reaches


@pytest.mark.parametrize(
    ("name", "vendor"), [("arc pro b70", "Intel"), ("radeon 780m", "AMD"), ("rtx 5060", "NVIDIA"), ("zx-9", None)]
)
def test_vendor_hints(name, vendor):
    assert vendor_hint(name) == vendor


def test_the_launch_command_names_the_build_for_the_backend():
    from core.estimate import estimate_of, scenario
    from core.launch.commands import launch_command

    for request, flag in ((Request(backend=Backend.VULKAN), "-DGGML_VULKAN=ON"), (Request(), "-DGGML_HIP=ON")):
        s = scenario(LLAMA3_8B, XTX, request, quant=Q4_K_M)
        cmd = launch_command(s, estimate_of(s))
        assert cmd is not None and any(n.code == "cmd_build" and n.values["flag"] == flag for n in cmd.notes)


def test_a_gtx_16_is_turing_without_tensor_cores_and_its_cuda_prompts_take_the_slow_mma_path():
    gtx = RTX_4090.model_copy(
        update={"id": "gtx-1660", "name": "NVIDIA GeForce GTX 1660", "arch": "turing", "fp16_tflops": 10.1}
    )
    rtx = gtx.model_copy(update={"id": "rtx-2060", "name": "NVIDIA GeForce RTX 2060"})
    assert canonical_arch(gtx) == "turing-gtx" and canonical_arch(rtx) == "turing"
    cuda, vulkan = matrix_tflops(gtx)[0], matrix_tflops(with_backend(gtx, Backend.VULKAN) or gtx)[0]
    assert cuda == pytest.approx(vulkan * 2.2 / 7.0)  # issue #15233: 2.2 TFLOPS under CUDA, 7 under Vulkan
    assert matrix_tflops(rtx)[0] == pytest.approx(vulkan)


ARC = RTX_4090.model_copy(
    update={"id": "arc-a770", "name": "Intel Arc A770", "vendor": "Intel", "backend": Backend.SYCL, "arch": "xe-hpg"}
)


def test_intel_prompts_run_the_rate_their_backend_reaches():
    """Issue 37: upstream ggml-sycl runs prompt GEMMs in FP32 on the vector ALUs (1/8 of XMX), ggml-vulkan without
    cooperative matrices at the FP16 vector rate (1/4 of XMX); the listed figure is the XMX rate."""
    from core.speed.arch import SYCL_INTEL_MATRIX_SHARE, VULKAN_INTEL_MATRIX_SHARE

    sycl = matrix_tflops(ARC)[0]
    vulkan = matrix_tflops(with_backend(ARC, Backend.VULKAN) or ARC)[0]
    assert SYCL_INTEL_MATRIX_SHARE == 1 / 8 and VULKAN_INTEL_MATRIX_SHARE == 1 / 4
    assert sycl == pytest.approx(vulkan / 2)


def test_cdna_prompts_count_the_vector_rate_not_the_matrix_cores():
    """MI300X: 1307 TFLOPS listed (MFMA); llama.cpp's MMQ runs the dot-product path at the packed-FP16 vector rate,
    163.4 (AMD data sheet), as the calibrated MI50 does."""
    mi300x = XTX.model_copy(update={"id": "mi300x", "category": "datacenter", "arch": "cdna3", "fp16_tflops": 1307.0})
    tflops, rough = matrix_tflops(mi300x)
    assert tflops == pytest.approx(163.4, rel=0.01) and rough


def test_a_device_kept_out_of_the_fit_is_never_calibrated_and_the_card_says_why():
    from core.speed.constants import KEPT_OUT_DEVICES

    assert "arc-pro-b70" in KEPT_OUT_DEVICES
    b70 = ARC.model_copy(update={"id": "arc-pro-b70", "name": "Intel Arc Pro B70", "arch": "xe2"})
    for backend in (Backend.SYCL, Backend.VULKAN):
        est = estimate(LLAMA3_8B, with_backend(b70, backend) or b70, Q4_K_M, Request(backend=backend))
        assert est.speed.confidence == "rough" and est.speed.calibration == "excluded"
        assert any(n.code == "speed_excluded" for n in est.notes)


def test_sycl_decodes_quants_without_its_reorder_path_at_the_measured_share():
    """ggml-sycl's fast mat-vec needs the reorder layout (Q4_0, Q4_K, Q6_K, Q8_0); PR #21527 measured 21 % of the
    bandwidth without it and 66 % with it, so MXFP4 and IQ weights decode 66/21 times slower under SYCL only."""
    from core.speed.constants import SYCL_NO_REORDER_DECODE_FACTOR
    from core.speed.device import decode_quant_factor, device_rates

    sycl, vulkan = device_rates(ARC), device_rates(with_backend(ARC, Backend.VULKAN) or ARC)
    assert decode_quant_factor(sycl, 1.0, "mxfp4") == pytest.approx(SYCL_NO_REORDER_DECODE_FACTOR)
    assert decode_quant_factor(sycl, 1.0, "iq") == pytest.approx(66 / 21)
    assert decode_quant_factor(sycl, 1.0, "k") == decode_quant_factor(vulkan, 1.0, "mxfp4") == 1.0


def test_codebook_quants_are_dequantisation_bound_where_bandwidth_per_sm_is_high():
    """PR #8215 (microbatch 1, MMVQ): Llama-3-8B IQ2_S decodes at 151.5 t/s on an RTX 3090 and 276.9 on an RTX 4090 at
    nearly the same bandwidth; the SM cycles per weight (``IQ_GRID_SM_CYCLES_PER_WEIGHT``) make the 3090 ALU-bound
    and leave the 4090 bandwidth-bound; IQ4 (a 16-entry table, no codebook) and other backends get no such term."""
    from core.speed.device import dequant_seconds, device_rates

    rtx3090 = RTX_4090.model_copy(
        update={"id": "rtx-3090", "arch": "ampere", "fp16_tflops": 71.16, "bandwidth_bytes_per_s": 936e9}
    )
    weights = 7.5e9
    t3090, t4090 = dequant_seconds(device_rates(rtx3090), weights), dequant_seconds(device_rates(RTX_4090), weights)
    assert t3090 == pytest.approx(weights * 0.100 / (2 * 71.16e12 / 1024))
    read_3090 = 2.9e9 / device_rates(rtx3090).bandwidth_bytes_per_s
    read_4090 = 2.9e9 / device_rates(RTX_4090).bandwidth_bytes_per_s
    assert t3090 > read_3090 and t4090 < read_4090
    assert dequant_seconds(device_rates(with_backend(RTX_4090, Backend.VULKAN) or RTX_4090), weights) == 0.0


def test_a_405b_codebook_quant_on_one_h200_decodes_at_its_dequantisation_rate(monkeypatch):
    """Issue 37: 405B IQ2_XXS on one H200 was predicted at the bandwidth (+172 % over the measurement); its
    dequantisation takes ~3x the weight read on 132 SMs at 4.8 TB/s. Its label follows the Hopper segment: rough while
    Hopper's held-out rows miss their band (``MISSED_ARCHS``), calibrated since issue 37's 8x H100 prompt row."""
    from catalog.facts import FACTS_DIR, converted_rows, gpu_from_row, model_from_row, quant_from_row
    from core.speed import constants as K
    from core.speed.device import forget_rates

    gpus = {g.id: g for g in converted_rows(FACTS_DIR, "gpus.toml", "gpu", gpu_from_row)}
    quant = next(q for q in converted_rows(FACTS_DIR, "quants.toml", "quant", quant_from_row) if q.id == "IQ2_XXS")
    models = converted_rows(FACTS_DIR, "models.toml", "model", model_from_row)
    model = next(m for m in models if m.id == "llama-3.1-405b-instruct")
    iq2 = estimate(model, gpus["h200-sxm"], quant, Request(context=4096)).speed
    monkeypatch.setattr(K, "IQ_GRID_SM_CYCLES_PER_WEIGHT", 0.0)
    forget_rates()
    read_bound = estimate(model, gpus["h200-sxm"], quant, Request(context=4096)).speed
    monkeypatch.undo()
    forget_rates()
    assert iq2.decode_tokens_per_s < 0.4 * read_bound.decode_tokens_per_s
    assert iq2.confidence == ("rough" if "hopper/cuda" in K.MISSED_ARCHS else "calibrated")

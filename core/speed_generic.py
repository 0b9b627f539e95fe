"""Speed for a device known only by its class and memory size ("a GPU with 16 GB", "a laptop with 8 GB").

``generic_device(device_class, memory_bytes)`` returns three representative GpuSpecs -- the slow end,
a typical device and the fast end of what is sold in that class with that much memory -- taken
from real devices (figures of catalog/facts/gpus.toml and the vendors' spec sheets, named in
``examples``). ``estimate_generic_speed`` runs the speed model on all three and returns one
SpeedEstimate: the typical device's figures, a band from the slow end's low edge to the fast end's
high edge, always "rough". The caller places the model with ``device.typical`` (all three share the
memory size, so the placement holds for each).

Classes:

* ``gpu``: a discrete desktop/workstation GPU with N GB of VRAM;
* ``laptop_gpu``: a laptop's discrete GPU with N GB of VRAM;
* ``laptop``: a laptop with N GB of RAM and an integrated GPU (not a Mac);
* ``apple``: a Mac with N GB of unified memory;
* ``apu``: a unified-memory mini PC / APU (Strix Halo, DGX Spark class);
* ``cpu``: CPU only, N GB of system RAM (desktop dual channel; 256 GB and up: a server socket).
"""

from __future__ import annotations

from typing import Literal

from core.fit import Placement
from core.models import GIB, Backend, Frozen, GpuSpec, Hardware, ModelSpec, Provenance, Workload
from core.speed import SpeedEstimate, estimate_speed
from core.weights import WeightEstimate

DeviceClass = Literal["gpu", "laptop_gpu", "laptop", "apple", "apu", "cpu"]
_PROV = Provenance(
    source="core/speed_generic.py tier table (catalog/facts/gpus.toml, vendor spec sheets)", as_of="2026-11"
)

# (up to GiB, [(name, vendor, category, GB/s, dense FP16 TFLOPS or None, arch, backend, unified)] x 3:
# slow end, typical, fast end). Discrete GPU TFLOPS in the catalog's convention (GeForce: FP32 accumulate).
_Spec = tuple[str, str, str, float, float | None, str, Backend, bool]
_C, _R, _M, _V, _X = Backend.CUDA, Backend.ROCM, Backend.METAL, Backend.VULKAN, Backend.CPU
TIERS: dict[str, list[tuple[float, tuple[_Spec, _Spec, _Spec]]]] = {
    "gpu": [
        (
            8,
            (
                ("GeForce GTX 1070", "NVIDIA", "consumer", 256.3, None, "pascal", _C, False),
                ("GeForce RTX 4060", "NVIDIA", "consumer", 272.0, 30.2, "ada", _C, False),
                ("GeForce RTX 3070", "NVIDIA", "consumer", 448.0, 40.6, "ampere", _C, False),
            ),
        ),
        (
            12,
            (
                ("GeForce RTX 3060 12GB", "NVIDIA", "consumer", 360.0, 25.5, "ampere", _C, False),
                ("GeForce RTX 4070", "NVIDIA", "consumer", 504.2, 58.3, "ada", _C, False),
                ("GeForce RTX 5070", "NVIDIA", "consumer", 672.0, 61.8, "blackwell", _C, False),
            ),
        ),
        (
            16,
            (
                ("GeForce RTX 4060 Ti 16GB", "NVIDIA", "consumer", 288.0, 44.1, "ada", _C, False),
                ("Radeon RX 9070 XT", "AMD", "consumer", 640.0, 97.3, "rdna4", _R, False),
                ("GeForce RTX 5080", "NVIDIA", "consumer", 960.0, 112.5, "blackwell", _C, False),
            ),
        ),
        (
            24,
            (
                ("Intel Arc Pro B60", "Intel", "workstation", 456.0, 98.3, "xe2", _V, False),
                ("GeForce RTX 3090", "NVIDIA", "consumer", 936.2, 71.2, "ampere", _C, False),
                ("GeForce RTX 4090", "NVIDIA", "consumer", 1008.0, 165.2, "ada", _C, False),
            ),
        ),
        (
            32,
            (
                ("Radeon AI PRO R9700", "AMD", "workstation", 640.0, 95.7, "rdna4", _R, False),
                ("GeForce RTX 5090", "NVIDIA", "consumer", 1792.0, 209.6, "blackwell", _C, False),
                ("GeForce RTX 5090", "NVIDIA", "consumer", 1792.0, 209.6, "blackwell", _C, False),
            ),
        ),
        (
            48,
            (
                ("RTX A6000", "NVIDIA", "workstation", 768.0, 154.8, "ampere", _C, False),
                ("RTX A6000", "NVIDIA", "workstation", 768.0, 154.8, "ampere", _C, False),
                ("RTX 6000 Ada", "NVIDIA", "workstation", 960.0, 364.2, "ada", _C, False),
            ),
        ),
        (
            1e9,
            (
                ("RTX 6000 Ada", "NVIDIA", "workstation", 960.0, 364.2, "ada", _C, False),
                ("RTX PRO 6000 Blackwell", "NVIDIA", "workstation", 1792.0, 467.8, "blackwell", _C, False),
                ("H100 SXM", "NVIDIA", "datacenter", 3350.0, 989.0, "hopper", _C, False),
            ),
        ),
    ],
    "laptop_gpu": [  # bandwidth from the memory bus; no TFLOPS (power-limited clocks vary): the category's FLOP per byte
        (
            8,
            (
                ("GeForce RTX 3050 Laptop", "NVIDIA", "consumer", 192.0, None, "ampere", _C, False),
                ("GeForce RTX 4060 Laptop", "NVIDIA", "consumer", 256.0, 23.2, "ada", _C, False),
                ("GeForce RTX 4070 Laptop", "NVIDIA", "consumer", 256.0, None, "ada", _C, False),
            ),
        ),
        (
            12,
            (
                ("GeForce RTX 4080 Laptop", "NVIDIA", "consumer", 432.0, None, "ada", _C, False),
                ("GeForce RTX 4080 Laptop", "NVIDIA", "consumer", 432.0, None, "ada", _C, False),
                ("GeForce RTX 5080 Laptop", "NVIDIA", "consumer", 896.0, None, "blackwell", _C, False),
            ),
        ),
        (
            1e9,
            (
                ("GeForce RTX 4090 Laptop", "NVIDIA", "consumer", 576.0, None, "ada", _C, False),
                ("GeForce RTX 4090 Laptop", "NVIDIA", "consumer", 576.0, None, "ada", _C, False),
                ("GeForce RTX 5090 Laptop", "NVIDIA", "consumer", 896.0, None, "blackwell", _C, False),
            ),
        ),
    ],
    "laptop": [  # integrated GPU on the laptop's RAM
        (
            16,
            (
                ("Ryzen 6000 (680M), DDR5-4800", "AMD", "apu", 76.8, 7.4, "rdna2", _V, True),
                ("Ryzen 7 8840U (780M), LPDDR5X-7500", "AMD", "apu", 120.0, 17.2, "rdna3", _V, True),
                ("Ryzen AI 9 HX 370 (890M), LPDDR5X-7500", "AMD", "apu", 120.0, 23.8, "rdna3.5", _V, True),
            ),
        ),
        (
            1e9,
            (
                ("Ryzen 7 8840U (780M), DDR5-5600", "AMD", "apu", 89.6, 17.2, "rdna3", _V, True),
                ("Ryzen AI 9 HX 370 (890M), LPDDR5X-7500", "AMD", "apu", 120.0, 23.8, "rdna3.5", _V, True),
                ("Ryzen AI Max+ 395 (8060S), LPDDR5X-8000", "AMD", "apu", 256.0, 59.0, "rdna3.5", _V, True),
            ),
        ),
    ],
    "apple": [  # GPU FP16 = FP32 rate; TFLOPS from the generation (core/speed_arch.py)
        (
            16,
            (
                ("M1 16GB", "Apple", "apple", 68.0, None, "apple-m1", _M, True),
                ("M2 16GB", "Apple", "apple", 100.0, None, "apple-m2", _M, True),
                ("M4 16GB", "Apple", "apple", 120.0, None, "apple-m4", _M, True),
            ),
        ),
        (
            36,
            (
                ("M2 24GB", "Apple", "apple", 100.0, None, "apple-m2", _M, True),
                ("M3 Pro 36GB", "Apple", "apple", 150.0, None, "apple-m3", _M, True),
                ("M4 Pro 24-48GB", "Apple", "apple", 273.0, None, "apple-m4", _M, True),
            ),
        ),
        (
            64,
            (
                ("M1 Pro 32GB", "Apple", "apple", 200.0, None, "apple-m1", _M, True),
                ("M3 Max 64GB", "Apple", "apple", 400.0, None, "apple-m3", _M, True),
                ("M4 Max 64GB", "Apple", "apple", 546.0, None, "apple-m4", _M, True),
            ),
        ),
        (
            128,
            (
                ("M3 Max 128GB", "Apple", "apple", 400.0, None, "apple-m3", _M, True),
                ("M4 Max 128GB", "Apple", "apple", 546.0, None, "apple-m4", _M, True),
                ("M1 Ultra 128GB", "Apple", "apple", 800.0, None, "apple-m1", _M, True),
            ),
        ),
        (
            1e9,
            (
                ("M2 Ultra 192GB", "Apple", "apple", 800.0, None, "apple-m2", _M, True),
                ("M3 Ultra 256GB", "Apple", "apple", 819.0, None, "apple-m3", _M, True),
                ("M3 Ultra 512GB", "Apple", "apple", 819.0, None, "apple-m3", _M, True),
            ),
        ),
    ],
    "apu": [
        (
            1e9,
            (
                ("Ryzen AI Max+ 395 (8060S), LPDDR5X-8000", "AMD", "apu", 256.0, 59.0, "rdna3.5", _V, True),
                ("Ryzen AI Max+ 395 (8060S), LPDDR5X-8000", "AMD", "apu", 256.0, 59.0, "rdna3.5", _V, True),
                ("DGX Spark (GB10)", "NVIDIA", "apu", 273.0, None, "blackwell-soc", _C, True),
            ),
        ),
    ],
    # RAM bandwidth at the platform's peak (channels x 8 bytes x MT/s). TFLOPS: order of magnitude of the
    # cores' int8 dot-product rate llama.cpp's CPU kernels use (assumed, no calibration rows: rough).
    "cpu": [
        (
            128,
            (
                ("dual-channel DDR4-3200", "generic", "consumer", 51.2, 1.0, "cpu", _X, True),
                ("dual-channel DDR5-5600", "generic", "consumer", 89.6, 2.0, "cpu", _X, True),
                ("dual-channel DDR5-6400", "generic", "consumer", 102.4, 4.0, "cpu", _X, True),
            ),
        ),
        (
            1e9,
            (
                ("4-channel DDR4-3200 workstation", "generic", "workstation", 102.4, 2.0, "cpu", _X, True),
                ("8-channel DDR5-4800 server socket", "generic", "datacenter", 307.2, 6.0, "cpu", _X, True),
                ("12-channel DDR5-6000 server socket", "generic", "datacenter", 576.0, 10.0, "cpu", _X, True),
            ),
        ),
    ],
}


class GenericDevice(Frozen):
    """Three representative devices of one class and memory size."""

    device_class: str
    memory_bytes: int
    low: GpuSpec
    typical: GpuSpec
    high: GpuSpec
    examples: tuple[str, str, str]


def _spec(spec: _Spec, memory_bytes: int, role: str) -> GpuSpec:
    name, vendor, category, gbps, tflops, arch, backend, unified = spec
    return GpuSpec(
        id=f"generic-{role}",
        name=name,
        short_name=name,
        vendor=vendor,
        category=category,  # type: ignore[arg-type]
        memory_bytes=memory_bytes,
        bandwidth_bytes_per_s=gbps * 1e9,
        fp16_tflops=tflops,
        unified_memory=unified,
        backend=backend,
        arch=arch,
        provenance=_PROV,
    )


def generic_device(device_class: DeviceClass, memory_bytes: int) -> GenericDevice:
    """Slow-end, typical and fast-end devices of ``device_class`` with ``memory_bytes`` of (V)RAM.

    The tier is the first whose upper memory bound holds ``memory_bytes``; every returned spec gets
    exactly ``memory_bytes`` so that the fit verdict is the user's, not the example device's.
    """
    gib = memory_bytes / GIB
    tiers = TIERS[device_class]
    specs = next((tier for bound, tier in tiers if gib <= bound + 0.5), tiers[-1][1])
    low, typical, high = (
        _spec(s, memory_bytes, role) for s, role in zip(specs, ("low", "typical", "high"), strict=True)
    )
    return GenericDevice(
        device_class=device_class,
        memory_bytes=memory_bytes,
        low=low,
        typical=typical,
        high=high,
        examples=(specs[0][0], specs[1][0], specs[2][0]),
    )


def estimate_generic_speed(
    model: ModelSpec,
    weights: WeightEstimate,
    placement: Placement,
    hardware: Hardware,
    workload: Workload,
    device: GenericDevice,
    quant_id: str | None = None,
) -> SpeedEstimate:
    """One SpeedEstimate for a generic device: the typical device's figures, the band from the slow
    end's low edge to the fast end's high edge, confidence "rough", the examples named in ``basis``.

    ``hardware`` carries count and system RAM; its GPU is replaced by each of the three specs.
    """
    runs = [
        estimate_speed(model, weights, placement, hardware.model_copy(update={"gpu": gpu}), workload, quant_id)
        for gpu in (device.low, device.typical, device.high)
    ]
    mid = runs[1]

    def span(lo: float, hi: float, value: float) -> tuple[float, float]:
        return min(lo, value), max(hi, value)

    decode = span(min(r.decode_range[0] for r in runs), max(r.decode_range[1] for r in runs), mid.decode_tokens_per_s)
    prefill = span(
        min(r.prefill_range[0] for r in runs), max(r.prefill_range[1] for r in runs), mid.prefill_tokens_per_s
    )
    note = (
        f"generic {device.device_class} with {device.memory_bytes / GIB:.0f} GB: from {device.examples[0]} "
        f"to {device.examples[2]}, typical {device.examples[1]}"
    )
    return mid.model_copy(
        update={
            "decode_range": decode,
            "prefill_range": prefill,
            "confidence": "rough",
            "basis": (note, *mid.basis),
        }
    )


__all__ = ["TIERS", "DeviceClass", "GenericDevice", "estimate_generic_speed", "generic_device"]

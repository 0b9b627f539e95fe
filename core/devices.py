"""Devices the catalog does not list as such: a generic "N GB" device and a memory variant of a known chip.

A question may name a device only by its memory ("16 GB VRAM", "a laptop with 8 GB", "CPU only
with 64 GB RAM"), or a known chip with a memory size the catalog lacks ("4060 Ti 8GB" when only the
16 GB card is listed). Memory decides the fit and needs nothing else; speed needs a bandwidth the
question did not give. So a generic device takes the *median* bandwidth and compute of catalog
devices of its class and a similar memory size, and carries the spread of that class as the speed
band the card shows: a wide range, labelled as such, never a precise-looking guess.
"""

from __future__ import annotations

import math
import statistics
from typing import Literal

from core.estimate import FitEstimate, Scenario, estimate_of, on_device
from core.memory import unified_fraction
from core.models import GIB, Backend, Catalog, Frozen, GpuSpec, Provenance
from core.speed.cpu import cpu_device, cpus

GenericKind = Literal["gpu", "laptop", "cpu", "igpu", "sbc", "unified"]
# system RAM read bandwidth of a CPU-only machine: dual-channel DDR4-3200 (51.2 GB/s) to DDR5-6400
# (102.4 GB/s), the JEDEC peak of two 64-bit channels; the median is DDR5-4800 (76.8 GB/s)
CPU_RAM_BANDWIDTH_GBPS = (51.2, 76.8, 102.4)
# an integrated GPU (Iris Xe, Radeon 780M, ...) reads the same dual-channel system RAM as the CPU: the
# same bandwidth band; its FP16 rate is a few TFLOPS (Radeon 780M: 12 RDNA3 CUs, about 8.6 dual-issue)
IGPU_TFLOPS = 4.0
# single-board computers: one 32-bit LPDDR channel. Raspberry Pi 5: LPDDR4X-4267 (17.1 GB/s), Pi 4:
# LPDDR4-3200 (12.8 GB/s), Pi 3 B+: LPDDR2-900 (3.6 GB/s), from the raspberrypi.com product briefs;
# the memory a bare name means is the board most bought to run LLMs (Pi 5: 8 GB, Pi 4: 4 GB, Pi 3: 1 GB)
SBC_BOARDS = {"pi5": (17.1, 8.0), "pi4": (12.8, 4.0), "pi3": (3.6, 1.0)}
# the boards' CPUs (catalog/facts/cpus.toml): their int8 dot-product peak (core/speed/cpu.py)
SBC_CPUS = {"pi5": "raspberry-pi-5", "pi4": "raspberry-pi-4"}
# catalog classes a generic GPU is drawn from, by kind
_CLASS_CATEGORIES = {"gpu": ("consumer", "workstation"), "laptop": ("consumer",)}


def cpu_tops() -> float:
    """Int8 peak of a CPU named by no model: the median desktop CPU of catalog/facts/cpus.toml."""
    return statistics.median(c.peak_tops() for c in cpus().values() if c.platform == "desktop")


class GenericDevice(Frozen):
    """A device known only by its memory: the spec used for the fit, and the class's speed spread."""

    gpu: GpuSpec
    bandwidth_range_gbps: tuple[float, float]  # slowest and fastest of the class
    peers: int  # catalog devices the figures come from (0 for CPU-only)
    stands_for: str = ""  # the catalog device whose spec it copies, if any (unified memory)
    tflops_range: tuple[float, float] | None = (
        None  # slowest and fastest compute, when not known (core/custom_device.py)
    )


def generic_device(
    catalog: Catalog, kind: GenericKind, memory_gib: float, label: str = "", board: str = ""
) -> GenericDevice:
    """A device with ``memory_gib`` of memory whose speed is the median of its class in the catalog.

    CPU-only machines, integrated GPUs and single-board computers share system RAM: the memory is the
    machine's and the bandwidth that of its RAM, never a discrete card's.
    """
    if kind == "sbc":
        bandwidth, _ = SBC_BOARDS.get(board, SBC_BOARDS["pi5"])
        board_cpu = cpus()[SBC_CPUS.get(board, "raspberry-pi-4")]
        tops = board_cpu.peak_tops()  # a Pi 3 has no row: the Pi 4's figure, rough
        spec = _spec(f"generic-sbc-{board}-{memory_gib:g}", label or f"{board} {memory_gib:g} GB", memory_gib,
                     bandwidth, tops, Backend.CPU, "apu", unified=True,
                     source="raspberrypi.com product brief: one 32-bit LPDDR channel")  # fmt: skip
        return GenericDevice(gpu=spec, bandwidth_range_gbps=(round(bandwidth * 0.8, 1), bandwidth), peers=0)
    if kind == "igpu":
        low, mid, high = CPU_RAM_BANDWIDTH_GBPS
        spec = _spec(f"generic-igpu-{memory_gib:g}", label or f"iGPU {memory_gib:g} GB", memory_gib, mid, IGPU_TFLOPS,
                     Backend.VULKAN, "apu", unified=True, source="dual-channel system RAM, DDR4-3200 to DDR5-6400")  # fmt: skip
        return GenericDevice(gpu=spec, bandwidth_range_gbps=(low, high), peers=0)
    if kind == "cpu" and (named := cpus().get(board)):  # "epyc 9654 with 384 gb": its channels and cores
        spec = cpu_device(named, memory_gib, label)
        high = named.bandwidth_gbps
        return GenericDevice(gpu=spec, bandwidth_range_gbps=(round(high * 0.8, 1), high), peers=0)
    if kind == "cpu":
        low, mid, high = CPU_RAM_BANDWIDTH_GBPS
        spec = _spec(f"generic-cpu-{memory_gib:g}", label or f"CPU {memory_gib:g} GB", memory_gib, mid, cpu_tops(),
                     Backend.CPU, "apu", unified=True, source="DDR4-3200..DDR5-6400 dual-channel peak")  # fmt: skip
        return GenericDevice(gpu=spec, bandwidth_range_gbps=(low, high), peers=0)
    if kind == "unified":
        return _unified(catalog, memory_gib, label)
    peers = _peers(catalog, kind, memory_gib)
    bandwidths = sorted(g.bandwidth_bytes_per_s / 1e9 for g in peers)
    flops = [g.fp16_tflops for g in peers if g.fp16_tflops]
    mid_bw = statistics.median(bandwidths)
    spec = _spec(
        f"generic-{kind}-{memory_gib:g}",
        label or f"{memory_gib:g} GB GPU",
        memory_gib,
        mid_bw,
        statistics.median(flops) if flops else None,
        Backend.CUDA,
        "consumer",
        unified=False,
        source=f"median of {len(peers)} catalog {kind} devices with {memory_gib:g} GB ± 50 %",
    )
    if kind == "laptop":  # a laptop takes no second card: the advice never suggests one
        spec = spec.model_copy(update={"form_factor": "laptop"})
    return GenericDevice(gpu=spec, bandwidth_range_gbps=(bandwidths[0], bandwidths[-1]), peers=len(peers))


def widened(est: FitEstimate, s: Scenario, device: GenericDevice) -> FitEstimate:
    """The estimate with speed bands spanning the slowest and fastest device of the class."""
    flops = device.tflops_range or (device.gpu.fp16_tflops, device.gpu.fp16_tflops)
    ends = [
        estimate_of(
            on_device(s, device.gpu.model_copy(update={"bandwidth_bytes_per_s": bw * 1e9, "fp16_tflops": tf}), s.count)
        )
        for bw, tf in zip(device.bandwidth_range_gbps, flops, strict=True)
    ]
    speed = est.speed.model_copy(
        update={
            "decode_range": (ends[0].speed.decode_range[0], ends[1].speed.decode_range[1]),
            "prefill_range": (ends[0].speed.prefill_range[0], ends[1].speed.prefill_range[1]),
            "confidence": "rough",
        }
    )
    return est.model_copy(update={"speed": speed})


def with_memory(gpu: GpuSpec, memory_gib: float) -> GpuSpec:
    """The same chip with the memory size the user gave (its bandwidth and compute kept)."""
    label = f"{_strip_memory(gpu.short_name)} {memory_gib:g}GB"
    return gpu.model_copy(
        update={
            "id": f"{gpu.id}@{memory_gib:g}gb",
            "short_name": label.strip(),
            "name": label.strip(),
            "memory_bytes": round(memory_gib * GIB),
            "price_usd": None,
            "price_note": "",
            "aliases": (),
        }
    )


def _strip_memory(name: str) -> str:
    return " ".join(w for w in name.split() if not (w.lower().endswith("gb") and w[:-2].isdecimal()))


def _unified(catalog: Catalog, memory_gib: float, label: str) -> GenericDevice:
    """ "128 GB unified memory": a Mac, a Strix Halo or a DGX Spark of that size. The spec is the catalog
    unified-memory device of median bandwidth among those of the nearest size whose platform leaves the GPU the
    smallest share (macOS's wired limit, ``core.memory.unified_fraction``), so what fits here fits on each
    of them; its backend and compute come with it (a real device's speed constants), the band spans all."""
    pool = [g for g in catalog.gpus if g.unified_memory and g.category in ("apple", "apu") and g.vendor != "generic"]
    gap = min(abs(math.log(g.memory_bytes / GIB / memory_gib)) for g in pool)
    near = [g for g in pool if abs(math.log(g.memory_bytes / GIB / memory_gib)) <= gap + 1e-9]  # the nearest size
    ordered = sorted(near, key=lambda g: g.bandwidth_bytes_per_s)
    tightest = min(near, key=unified_fraction).category
    same = [g for g in ordered if g.category == tightest]
    base = same[len(same) // 2]
    name = label or f"{memory_gib:g} GB unified memory"
    spec = base.model_copy(
        update={
            "id": f"generic-unified-{memory_gib:g}",
            "name": name,
            "short_name": name,
            "vendor": "generic",
            "memory_bytes": round(memory_gib * GIB),
            "price_usd": None,
            "price_note": "",
            "aliases": (),
            "provenance": Provenance(
                source=f"{_strip_memory(base.short_name)}, one of {len(near)} catalog unified-memory devices of the nearest size",
                as_of="computed",
                unverified=("bandwidth_gbps", "fp16_tflops"),
            ),
        }
    )
    bandwidths = (ordered[0].bandwidth_bytes_per_s / 1e9, ordered[-1].bandwidth_bytes_per_s / 1e9)
    return GenericDevice(
        gpu=spec, bandwidth_range_gbps=bandwidths, peers=len(near), stands_for=_strip_memory(base.short_name)
    )


def _peers(catalog: Catalog, kind: GenericKind, memory_gib: float) -> list[GpuSpec]:
    """Catalog devices of the class with a similar memory size (all of the class when none is near)."""
    laptop = [g for g in catalog.gpus if getattr(g, "form_factor", "") == "laptop"]
    pool = laptop if kind == "laptop" and laptop else [
        g for g in catalog.gpus if g.category in _CLASS_CATEGORIES[kind] and not g.unified_memory
    ]  # fmt: skip
    near = [g for g in pool if 0.5 <= g.memory_bytes / GIB / memory_gib <= 1.5]
    return near or pool


def _spec(
    gid: str,
    name: str,
    memory_gib: float,
    bandwidth_gbps: float,
    tflops: float | None,
    backend: Backend,
    category: Literal["consumer", "apu"],
    unified: bool,
    source: str,
) -> GpuSpec:
    return GpuSpec(
        id=gid,
        name=name,
        short_name=name,
        vendor="generic",
        category=category,
        memory_bytes=round(memory_gib * GIB),
        bandwidth_bytes_per_s=bandwidth_gbps * 1e9,
        fp16_tflops=tflops,
        unified_memory=unified,
        backend=backend,
        provenance=Provenance(source=source, as_of="computed", unverified=("bandwidth_gbps", "fp16_tflops")),
    )

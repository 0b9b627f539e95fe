"""CPU inference (llama.cpp's CPU backend): prompt speed from the CPU's integer matrix throughput, decode
from its memory channels.

A CPU row (``catalog/facts/cpus.toml``) gives cores, base clock, instruction set and memory channels, each
from the vendor's spec page. Two figures follow from it:

* **peak**: cores x base clock x int8 ops per core and cycle of the dot-product instructions llama.cpp's
  CPU kernels use for quantized weights (activations are quantized to Q8: AVX2 ``VPMADDUBSW``, AVX-512 /
  AVX-VNNI ``VPDPBUSD``, Arm ``SDOT``; AMX tiles for Q4_0/Q4_1 on Sapphire/Granite Rapids). Prompt
  processing gets ``CPU_PREFILL_EFFICIENCY`` of it, fitted on published llama-bench CPU runs
  (``bench/cpu_speed.py``, rows in ``bench/calibration/llamacpp_cpu.csv``, graded holding out each source).
* **bandwidth**: channels x transfer rate x channel width / 8. Decode reads the active weights from RAM
  at ``RAM_READ_EFFICIENCY`` of it (``core/speed/constants.py``), like any CPU layer of an offload.

The device such a CPU becomes (``cpu_device``) is a ``GpuSpec`` with ``Backend.CPU`` whose ``fp16_tflops``
holds the int8 peak in tera-ops: the rate its prompt GEMMs run at, as for a GPU.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import NamedTuple

from core.models import GIB, Backend, GpuSpec, Provenance

FACTS = Path(__file__).resolve().parents[2] / "catalog" / "facts" / "cpus.toml"

# Share of the int8 peak llama.cpp's CPU prompt kernels reach (pp512, mainline builds), fitted by
# ``bench/cpu_speed.py --write`` on bench/calibration/llamacpp_cpu.csv (median of measured / peak-rate).
# fitted: begin
CPU_PREFILL_EFFICIENCY = 0.158
CPU_IQ_PROMPT_FACTOR = 3.56
# fitted: end
# i-quants below 4 bits (IQ1_*, IQ2_*, IQ3_*) have no int8 GEMM path in mainline's CPU backend: each token row
# is a vec_dot with grid lookups (ik_llama.cpp PR #518 measured mainline b5635 at 28 t/s pp512 for
# Llama-3.1-8B IQ3_S on a Ryzen 9 7950X); their prompt time is ``CPU_IQ_PROMPT_FACTOR`` times longer.
IQ_PROMPT = re.compile(r"^(?:UD-)?IQ[123]_", re.IGNORECASE)
PLATFORMS = ("epyc", "threadripper", "xeon", "desktop", "laptop", "apple", "pi")


# Named tuples, not frozen dataclasses: as immutable, and far cheaper to create at import, which every
# estimate pays (the table itself is read only when a CPU is asked about).
class Isa(NamedTuple):
    key: str
    int8_ops: float  # per core and cycle
    fp32_flops: float
    amx_int8_ops: float = 0.0
    amx_quants: tuple[str, ...] = ()
    source: str = ""


class Cpu(NamedTuple):
    id: str
    name: str
    platform: str
    aliases: tuple[str, ...]
    cores: int
    base_ghz: float
    isa: Isa
    channels: int
    memory: str
    mts: int
    channel_bits: int
    source: str

    @property
    def bandwidth_gbps(self) -> float:
        """Peak read bandwidth, 10^9 B/s: channels x MT/s x channel width in bytes."""
        return self.channels * self.mts * self.channel_bits / 8 / 1000

    def peak_tops(self, quant_id: str | None = None) -> float:
        """Int8 dot-product peak in tera-ops (AMX where llama.cpp has AMX kernels for the quant)."""
        ops = self.isa.int8_ops
        if self.isa.amx_int8_ops and quant_id and quant_id.upper() in self.isa.amx_quants:
            ops = self.isa.amx_int8_ops
        return self.cores * self.base_ghz * ops / 1000

    @property
    def memory_text(self) -> str:
        """ "12 × DDR5-4800" (one 32-bit channel: "32-bit LPDDR4X-4267")."""
        if self.channel_bits != 64:
            return f"{self.channel_bits}-bit {self.memory}-{self.mts}"
        return f"{self.channels} × {self.memory}-{self.mts}"


@cache
def cpus() -> dict[str, Cpu]:
    """Every CPU row, by id."""
    import tomllib  # here: most estimates never read the CPU table

    data = tomllib.loads(FACTS.read_text(encoding="utf-8"))
    isas = {
        key: Isa(key, v["int8_ops"], v["fp32_flops"], v.get("amx_int8_ops", 0.0), tuple(v.get("amx_quants", ())),
                 v["source"])
        for key, v in data["isa"].items()
    }  # fmt: skip
    rows = {}
    for r in data["cpu"]:
        rows[r["id"]] = Cpu(
            id=r["id"], name=r["name"], platform=r["platform"], aliases=tuple(r["aliases"]), cores=r["cores"],
            base_ghz=r["base_ghz"], isa=isas[r["isa"]], channels=r["channels"], memory=r["memory"], mts=r["mts"],
            channel_bits=r["channel_bits"], source=r["source"],
        )  # fmt: skip
    return rows


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9+]", "", text.lower().replace("ryzen", "").replace("amd", "").replace("intel", ""))


def find_cpu(text: str) -> Cpu | None:
    """The CPU row a typed name means ("epyc 9654", "threadripper 7980x", "xeon 8480", "7950x"), or None."""
    key = _key(text)
    if not key:
        return None
    best: tuple[int, Cpu] | None = None
    for cpu in cpus().values():
        for alias in cpu.aliases:
            a = _key(alias)
            if a and (key == a or key.endswith(a) or a.endswith(key) and len(key) >= 4):
                score = len(a)
                if best is None or score > best[0]:
                    best = (score, cpu)
    return best[1] if best else None


def cpu_device(cpu: Cpu, memory_gib: float, label: str = "") -> GpuSpec:
    """The machine this CPU runs models on: its RAM, its memory bandwidth, its int8 peak."""
    name = label or f"{cpu.name} ({memory_gib:g} GB RAM)"
    return GpuSpec(
        id=f"cpu-{cpu.id}-{memory_gib:g}",
        name=name,
        short_name=name,
        vendor=cpu.name.split()[0],
        category="apu",
        memory_bytes=round(memory_gib * GIB),
        bandwidth_bytes_per_s=cpu.bandwidth_gbps * 1e9,
        fp16_tflops=cpu.peak_tops(),
        unified_memory=True,
        backend=Backend.CPU,
        arch="cpu",
        interconnect="none",
        provenance=Provenance(source=cpu.source, as_of="2026-12"),
    )


def prompt_quant_factor(quant_id: str | None) -> float:
    """Prompt time multiple of a quant on the CPU backend (1 for every quant with an int8 GEMM path)."""
    return CPU_IQ_PROMPT_FACTOR if quant_id and IQ_PROMPT.match(quant_id) else 1.0

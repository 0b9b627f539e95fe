"""Calibration rows for the speed fit: llama-bench results mapped to a ModelSpec and a GpuSpec.

Data: ``bench/calibration/llamacpp_speed.csv`` (a copy of shared/calibration/llamacpp_speed.csv),
``bench/calibration/llamacpp_speed_extra.csv`` (scoreboard rows the first file left out, Strix Halo
results), ``bench/calibration/llamacpp_speed_issue24.csv`` (RDNA4, P100, MI50, SYCL, multi-GPU rows) and
``bench/calibration/llamacpp_speed_issue37.csv`` (MI300X, 8x H100, DeepSeek-V3, Arc 140V, upstream SYCL A770/B580 rows);
provenance in bench/calibration/README.md. Every row names its source, build and date. The models'
architectures are in bench/speed_models.py.

GPUs resolve through the catalog (catalog/facts/gpus.toml, by id, name or alias). Calibration GPUs
the catalog lacks get their spec-sheet numbers from ``EXTRA_SPECS`` below (TechPowerUp GPU database;
bandwidth, dense FP16 tensor TFLOPS in the catalog's convention, chip generation) so that they can
be fitted and held out; ``missing_from_catalog`` lists them for the catalog maintainers.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # run as a script: the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.speed_models import MODELS as MODELS  # re-exported: bench/cpu_speed.py imports both
from bench.speed_models import PROV as PROV
from catalog.facts import FACTS_DIR, converted_rows, gpu_from_row, quant_from_row
from core.models import GIB, Backend, GpuSpec, ModelSpec, Provenance, QuantSize, Workload
from core.speed import estimate as speed
from core.weights import weights

DATA_DIR = Path(__file__).resolve().parent / "calibration"
DATA_FILES = (
    "llamacpp_speed.csv",
    "llamacpp_speed_extra.csv",
    "llamacpp_speed_issue24.csv",
    "llamacpp_speed_issue37.csv",
)

# Calibration GPU label (lower case, vendor words dropped; first prefix match wins) -> catalog id.
# "H100 80 GB"/"A100 80 GB" are nvidia-smi's SXM names ("H100 80GB HBM3", "A100-SXM4-80GB").
CATALOG_GPUS = [
    ("rtx 3060", "rtx-3060-12gb"),
    ("rtx 3080 ti", None),
    ("rtx 3080", "rtx-3080-10gb"),
    ("rtx 3090 ti", "rtx-3090-ti"),
    ("rtx 3090", "rtx-3090"),
    ("rtx 4060 ti", "rtx-4060-ti-16gb"),
    ("rtx 4070 ti super", "rtx-4070-ti-super"),
    ("rtx 4070 ti", None),
    ("rtx 4070 super", None),
    ("rtx 4070", "rtx-4070"),
    ("rtx 4080 super", "rtx-4080-super"),
    ("rtx 4080", "rtx-4080"),
    ("rtx 4090 d", "rtx-4090-d"),
    ("rtx 4090", "rtx-4090"),
    ("rtx 5070 ti", "rtx-5070-ti"),
    ("rtx 5070", "rtx-5070"),
    ("rtx 5080", "rtx-5080"),
    ("rtx 5090", "rtx-5090"),
    ("rtx a6000", "rtx-a6000"),
    ("rtx 4000 ada", "rtx-4000-ada"),
    ("rtx 6000 ada", "rtx-6000-ada"),
    ("rtx pro 6000", "rtx-pro-6000"),
    ("h100 80 gb", "h100-sxm"),
    ("a100 80 gb", "a100-80gb-sxm"),
    ("a100-sxm4-80gb", "a100-80gb-sxm"),
    ("a100 80gb pcie", "a100-80gb-pcie"),
    ("h100 pcie", "h100-pcie"),
    ("h100 80gb hbm3", "h100-sxm"),
    ("instinct mi300x", "mi300x"),
    ("arc 140v", "arc-140v-32"),
    ("l40s", "l40s"),
    ("l40", "l40"),
    ("a40", "a40"),
    ("tesla t4", "t4"),
    ("tesla v100", "v100-32gb"),
    ("dgx spark", "dgx-spark"),
    ("rx 7900 xtx", "rx-7900-xtx"),
    ("arc pro b60", "arc-pro-b60"),
    ("radeon 8060s", "ryzen-ai-max-395-128"),
    ("ryzen al max+ 395", "ryzen-ai-max-395-128"),
    ("apple m1 ultra", "m1-ultra-128"),
    ("apple m3 ultra", "m3-ultra-512"),
    ("apple m4 pro", "mac-mini-m4-pro-24"),
    ("apple m4 max (40", "macbook-pro-m4-max-48"),
    ("apple m1 max", "m1-max-64"),
    ("apple m1 pro", "m1-pro-32"),
    ("apple m1", "m1-16"),
    ("apple m2 ultra", "m2-ultra-192"),
    ("apple m2 max", "m2-max-64"),
    ("apple m2 pro", "m2-pro-32"),
    ("apple m2", "m2-24"),
    ("apple m3 max", "m3-max-64"),
    ("apple m3 pro", "m3-pro-36"),
    ("apple m3", "m3-24"),
]
# Calibration GPUs the catalog lacks: (label prefix, name, vendor, category, GB/s, dense FP16 TFLOPS in
# the catalog's convention or None, unified memory, arch). TechPowerUp GPU database spec sheets; iGPUs:
# CU count x clock x 512 (RDNA3 WMMA) or 256 (RDNA2 packed FP16) and the LPDDR bus of the named chip.
EXTRA_SPECS: list[tuple[str, str, str, str, float, float | None, bool, str]] = [
    ("rtx 3070", "RTX 3070", "NVIDIA", "consumer", 448.0, 40.6, False, "ampere"),
    ("rtx 3080 ti", "RTX 3080 Ti", "NVIDIA", "consumer", 912.4, 68.2, False, "ampere"),
    ("rtx 5000 ada", "RTX 5000 Ada", "NVIDIA", "workstation", 576.0, 261.1, False, "ada"),
    ("rtx 4070 ti", "RTX 4070 Ti", "NVIDIA", "consumer", 504.2, 80.2, False, "ada"),
    ("rtx 4070 super", "RTX 4070 SUPER", "NVIDIA", "consumer", 504.2, 71.0, False, "ada"),
    ("rtx 4060 mobile", "RTX 4060 Laptop", "NVIDIA", "consumer", 256.0, 23.2, False, "ada"),
    ("rtx 2080 ti", "RTX 2080 Ti", "NVIDIA", "consumer", 616.0, 53.8, False, "turing"),
    ("rtx 2070 super", "RTX 2070 SUPER", "NVIDIA", "consumer", 448.0, 36.3, False, "turing"),
    ("rtx 2060 super", "RTX 2060 SUPER", "NVIDIA", "consumer", 448.0, 28.7, False, "turing"),
    ("rtx a5000", "RTX A5000", "NVIDIA", "workstation", 768.0, 111.1, False, "ampere"),
    ("rtx a4500", "RTX A4500", "NVIDIA", "workstation", 640.0, 94.6, False, "ampere"),
    ("rtx a4000", "RTX A4000", "NVIDIA", "workstation", 448.0, 76.7, False, "ampere"),
    ("quadro rtx 6000", "Quadro RTX 6000", "NVIDIA", "workstation", 672.0, 130.5, False, "turing"),
    ("quadro rtx 8000", "Quadro RTX 8000", "NVIDIA", "workstation", 672.0, 130.5, False, "turing"),
    ("quadro rtx 4000", "Quadro RTX 4000", "NVIDIA", "workstation", 416.0, 57.0, False, "turing"),
    ("titan v", "Titan V", "NVIDIA", "workstation", 652.8, 110.0, False, "volta"),
    ("a30", "A30", "NVIDIA", "datacenter", 933.1, 165.0, False, "ampere-dc"),
    ("tesla p100", "Tesla P100 16GB", "NVIDIA", "datacenter", 732.2, 18.7, False, "pascal-hbm"),
    ("tesla p40", "Tesla P40", "NVIDIA", "datacenter", 347.1, None, False, "pascal"),
    ("titan xp", "Titan Xp", "NVIDIA", "consumer", 547.6, None, False, "pascal"),
    ("gtx 1660 ti mobile", "GTX 1660 Ti Mobile", "NVIDIA", "consumer", 288.0, 9.1, False, "turing-gtx"),
    ("gtx 1080 ti", "GTX 1080 Ti", "NVIDIA", "consumer", 484.4, None, False, "pascal"),
    ("gtx 1070 ti", "GTX 1070 Ti", "NVIDIA", "consumer", 256.3, None, False, "pascal"),
    ("gtx 1070", "GTX 1070", "NVIDIA", "consumer", 256.3, None, False, "pascal"),
    ("jetson agx orin", "Jetson AGX Orin 64GB", "NVIDIA", "apu", 204.8, None, True, "ampere-soc"),
    ("rx 7900 xt", "RX 7900 XT", "AMD", "consumer", 800.0, 103.0, False, "rdna3"),
    ("rx 7900 gre", "RX 7900 GRE", "AMD", "consumer", 576.0, 92.0, False, "rdna3"),
    ("rx 7800 xt", "RX 7800 XT", "AMD", "consumer", 624.1, 74.6, False, "rdna3"),
    ("rx 6900 xt", "RX 6900 XT", "AMD", "consumer", 512.0, 46.1, False, "rdna2"),
    ("rx 6800 xt", "RX 6800 XT", "AMD", "consumer", 512.0, 41.5, False, "rdna2"),
    ("rx 6700 xt", "RX 6700 XT", "AMD", "consumer", 384.0, 26.4, False, "rdna2"),
    ("radeon instinct mi50", "Instinct MI50", "AMD", "datacenter", 1024.0, 26.5, False, "gcn5"),
    # Ryzen Z1 Extreme: 780M-class 12 CU x 2.8 GHz x 512, LPDDR5X-7500 128-bit
    ("ryzen z1 extreme", "Ryzen Z1 Extreme (LPDDR5X-7500)", "AMD", "apu", 120.0, 17.2, True, "rdna3"),
    # Ryzen 6000 (Rembrandt) 680M: 12 CU x 2.4 GHz x 256, LPDDR5-6400 128-bit
    ("ryzen 6000 series", "Ryzen 6000 680M (LPDDR5-6400)", "AMD", "apu", 102.4, 7.4, True, "rdna2"),
    # Ryzen AI 9 HX 370 (Strix Point) 890M: 16 CU x 2.9 GHz x 512, LPDDR5X-7500 128-bit
    ("ryzen ai 9 300 series", "Ryzen AI 9 HX 370 890M (LPDDR5X-7500)", "AMD", "apu", 120.0, 23.8, True, "rdna3.5"),
    ("arc b580", "Arc B580", "Intel", "consumer", 456.0, 116.0, False, "xe2"),
    ("arc b570", "Arc B570", "Intel", "consumer", 380.0, 98.0, False, "xe2"),
    ("arc pro b50", "Arc Pro B50", "Intel", "workstation", 224.0, 42.6, False, "xe2"),
    # Arc Pro B70 (BMG-G31): 32 Xe2 cores, 367 INT8 TOPS (XMX) -> 183.5 dense FP16, 32 GB GDDR6 x 256-bit =
    # 608 GB/s -- figures from third-party pages only (no Intel spec sheet found): see UNSOURCED_SPECS
    ("arc pro b70", "Arc Pro B70", "Intel", "workstation", 608.0, 183.5, False, "xe2"),
    ("arc a770m", "Arc A770M", "Intel", "consumer", 512.0, 108.0, False, "xe-hpg"),
    ("arc a770", "Arc A770 16GB", "Intel", "consumer", 560.0, 138.0, False, "xe-hpg"),
    ("arc a750", "Arc A750", "Intel", "consumer", 512.0, 123.0, False, "xe-hpg"),
]
# GPUs whose spec has no primary source yet (B70: 608 GB/s, 367 TOPS from a blog and a repository's notes; Arc 140V:
# the catalog row marks its 136.5 GB/s and 32 FP16 TFLOPS unverified, derived from LPDDR5X-8533 x 128 bit and Intel's
# 64 INT8 TOPS without a spec page read): their rows stay in the CSV, out of the fit and the validation (a row graded
# against a guessed spec grades the guess).
UNSOURCED_SPECS = frozenset({"arc pro b70", "arc 140v"})
# Rows run on AMDVLK, AMD's second Vulkan driver, ended 2025-09 (GPUOpen-Drivers/AMDVLK#405; RADV is supported since
# https://www.amd.com/en/resources/support-articles/release-notes/RN-AMDGPU-UNIFIED-LINUX-25-10-1.html): the product
# predicts RADV, and one card differs by up to 3x between them at long context (kyuz0/amd-r9700-ai-toolboxes).
OTHER_DRIVER_NOTES = ("vulkan_amdvlk",)
# Rows whose source says the build crashed on the model's default path: a build from the first days of a model's
# support, not the kernels the product predicts. geerlingguy/ai-benchmarks#21: gpt-oss-20b on Strix Halo under
# Vulkan, build 6096 (2025-08-07), flash attention segfaulted, so it ran without; the same chip, backend and model
# run a pp512 three times as fast in build 9187 (kyuz0/amd-strix-halo-toolboxes, 1692 against 564 t/s), where the
# AMD Vulkan era factor (``AMD_KERNEL_ERA``) accounts for 1.3x. Each such row is its own source, so no held-out
# fit can learn a first-days factor for it.
CRASHED_BUILD_NOTES = ("segfault",)
# Decode rows of a build from the first days of a model's support in llama.cpp: DeepSeek-V3 on 8x H100 in build 4418
# (2025-01-05, AUGMXNT/llm-tracker.info-vault), ten days after the model's release, while ggml-org/llama.cpp#10981 still
# asked for its support on 2025-01-03. Its decode (23.6 t/s for Q5_K_M) is half the fit's and below the 8x MI300X's
# 37 t/s for Q4_K_M in build 5997; one source, so no held-out fit can learn a first-days factor for it. Its prompt row
# stays: the prompt GEMMs are the generic Q5_K MMQ kernels, not the model's own decode path.
FIRST_DAYS_NOTES = ("first-days build",)
# Prompt rows of a fork's own GEMMs: IPEX-LLM (intel/ipex-llm#12991, B580) runs them on XMX, 35 TFLOPS on a Qwen2-7B
# pp512, above the FP32 vector peak (20 Xe2 cores x 256 x 2.85 GHz = 14.6) bounding upstream ggml-sycl; decode stays.
FORK_BUILD_NOTES = ("IPEX-LLM",)
# CDNA prompt GEMMs before upstream MFMA MMQ (ggml-org/llama.cpp PR #14624, build 5997, 2025-07): the quantized matmuls
# ran without matrix cores or stream-K, a third of today's rate on an MI300X (AUGMXNT/llm-tracker.info-vault, b3891:
# Llama-2-7B Q4_0 pp512 1334 t/s, "slower than a single 7900 XT"). No other row carries that factor, so a fit would
# push it into the ROCm era factor ``AMD_KERNEL_ERA`` learned on RDNA. Decode rows (mat-vec kernels) stay.
CDNA_MFMA_BUILD = 5997
BACKENDS = {
    "CUDA": Backend.CUDA,
    "Metal": Backend.METAL,
    "Vulkan": Backend.VULKAN,
    "ROCm/HIP": Backend.ROCM,
    "SYCL": Backend.SYCL,
}


@dataclass
class Row:
    index: str  # file:line
    kind: str  # "decode" or "prefill"
    label: str
    gpu_key: str  # one physical GPU model (leave-one-GPU-out group)
    arch: str  # chip generation (leave-one-family-out group)
    backend: str
    family: str
    qfam: str
    measured: float
    model: ModelSpec
    gpu: GpuSpec
    quant_id: str
    n_gpus: int
    n_tokens: int
    depth: int
    workload: Workload
    w: Any
    legacy: bool  # llama.cpp build < b3000 (before CUDA graphs, PR #6766): more launch overhead
    in_catalog: bool
    early_amd: bool = False  # AMD GPU, build before its backend's current kernels (``AMD_KERNEL_ERA``)
    source: str = ""  # one repository, issue, pull request or discussion (leave-one-source-out group)
    weight: float = 1.0  # fit weight: old builds count less
    feats: dict[str, float] = field(default_factory=dict)


def label_key(label: str) -> str:
    low = label.lower().replace("nvidia ", "").replace("geforce ", "").replace("amd ", "").replace("intel ", "")
    low = low.replace("radeon rx", "rx")
    return re.sub(r"\s+", " ", low).strip()


def _extra_spec(key: str, backend: Backend) -> GpuSpec | None:
    for prefix, name, vendor, category, gbps, tflops, unified, arch in EXTRA_SPECS:
        if key.startswith(prefix):
            return GpuSpec(
                id=prefix.replace(" ", "-"),
                name=name,
                short_name=name,
                vendor=vendor,
                category=category,  # type: ignore[arg-type]
                memory_bytes=24 * GIB,
                bandwidth_bytes_per_s=gbps * 1e9,
                fp16_tflops=tflops,
                unified_memory=unified,
                backend=backend,
                arch=arch,
                provenance=Provenance(source="TechPowerUp GPU database (spec sheet)", as_of="2026-11"),
            )
    return None


def resolve_gpu(label: str, backend: Backend, catalog: dict[str, GpuSpec]) -> tuple[GpuSpec | None, bool]:
    """(spec with the row's backend, whether it came from the catalog); None for MoltenVK rows."""
    key = label_key(label)
    if "apple" in key and backend is not Backend.METAL:
        return None, False  # MoltenVK: llama.cpp on macOS runs Metal, the estimator never predicts this
    for prefix, gid in CATALOG_GPUS:
        if key.startswith(prefix):
            if gid and gid in catalog:
                return catalog[gid].model_copy(update={"backend": backend}), True
            break
    for spec in catalog.values():  # a catalog grown since this table was written
        names = {spec.name.lower(), spec.short_name.lower(), *(a.lower() for a in spec.aliases)}
        if key in names:
            return spec.model_copy(update={"backend": backend}), True
    return _extra_spec(key, backend), False


def _test(text: str) -> tuple[str, int, int] | None:
    """(kind, n_tokens, depth) of a llama-bench test label."""
    low = text.lower()
    if low.startswith("pp (llama-bench default"):
        return "prefill", 512, 0
    if low.startswith("tg (llama-bench default"):
        return "decode", 128, 0
    m = re.match(r"(pp|tg)(\d+)(?:@d(\d+))?", low)
    if not m:
        return None
    depth = int(m.group(3) or 0)
    if "after pp512" in low:
        depth = 512
    return ("prefill" if m.group(1) == "pp" else "decode"), int(m.group(2)), depth


def source_key(url: str) -> str:
    """The source a row comes from: a GitHub discussion, issue or pull request is one source
    (``owner/repo#N``, whoever transcribed it), any other file of a repository is that repository."""
    m = re.match(r"https?://github\.com/([^/]+/[^/]+)/(?:discussions|issues|pull)/(\d+)", url)
    if m:
        return f"{m.group(1)}#{m.group(2)}"
    m = re.match(r"https?://github\.com/([^/]+/[^/\s]+)", url)
    if m:
        return m.group(1)
    return url.split()[0]


def build_number(build: str) -> int | None:
    """The llama.cpp build number of a build column ("66906cd8 (5997)" -> 5997), None when not given."""
    m = re.search(r"\((\d{3,5})\)", build)
    return int(m.group(1)) if m else None


def pre_mfma_prompt(kind: str, gpu: GpuSpec, build: str) -> bool:
    """A CDNA prompt row from a build before upstream MFMA MMQ (``CDNA_MFMA_BUILD``)."""
    number = build_number(build)
    arch = speed.canonical_arch(gpu) or ""
    return kind == "prefill" and arch.startswith("cdna") and number is not None and number < CDNA_MFMA_BUILD


def _legacy(build: str) -> bool:
    m = re.search(r"\((\d{3,5})\)", build)
    return bool(m and int(m.group(1)) < 3000)


def build_weight(build: str, date: str) -> float:
    """Fit weight of a row by the age of its llama.cpp build: kernels keep improving, so recent rows
    count fully, 2025 builds 0.75, older ones 0.5. The build number (bNNNN) decides when known:
    b6500 is September 2025, b4000 is late 2024; else the date; scoreboard rows (each GPU from its
    own, mostly 2025-2026 build) 0.85."""
    m = re.search(r"\((\d{3,5})\)", build)
    if m:
        number = int(m.group(1))
        return 1.0 if number >= 6500 else 0.75 if number >= 4000 else 0.5
    if "scoreboard" in date:
        return 0.85
    if date.startswith("2026"):
        return 1.0
    return 0.75 if date.startswith("2025") else 0.5


# AMD kernels changed in December 2025 / January 2026. Prompts: ROCm got WMMA int8 MMQ on RDNA3 and RDNA3.5
# (ggml-org/llama.cpp PR #17576, in master by 2025-12-05, when PR #17792 fixed the RDNA4 build it broke; RDNA4 got
# it with PR #17156 in November), and Vulkan's matmul tiles were tuned for AMD's cooperative matrices (PR #18749,
# 2026-01-11: +36 to +76 % pp512 on a Radeon 8060S, same build otherwise). Decode moved too, by less: the same
# Strix Halo decodes Llama-2-7B Q4_0 at 46.5 t/s under Vulkan in a 2025-06 build (lhl/strix-halo-testing) and at
# 55.7 in b9187 (kyuz0/amd-strix-halo-toolboxes), gpt-oss-20b at 45.0 in b6096 (geerlingguy/ai-benchmarks#21)
# and 79.8 in b9187. AMD rows built before their backend's date get fit-only era factors (prompt matrix rate per
# backend, decode bandwidth for both); the product predicts current builds. Rows without a build date (the
# scoreboards) count as current.
AMD_KERNEL_ERA = {"ROCm/HIP": "2025-12-05", "Vulkan": "2026-01-11"}


def build_date(date: str) -> str:
    """The row's build date as YYYY-MM[-DD] from its date column, or "" (a scoreboard snapshot, none given)."""
    m = re.match(r"\d{4}-\d{2}(?:-\d{2})?", date)
    return m.group(0) if m else ""


def early_amd(vendor: str, backend: str, date: str, arch: str = "") -> bool:
    """An AMD row from a build before its backend's current kernels (``AMD_KERNEL_ERA``). Not CDNA: those changes
    are RDNA kernels (WMMA int8 MMQ, AMD cooperative-matrix tiles) and the era's decode evidence is RDNA; CDNA got
    its MFMA MMQ in build 5997 (``CDNA_MFMA_BUILD``), and its prompt rows before that stay out."""
    built, since = build_date(date), AMD_KERNEL_ERA.get(backend)
    return vendor == "AMD" and not arch.startswith("cdna") and bool(built and since) and built < str(since)


def _quant_id(text: str) -> str:
    return "MXFP4" if "mxfp4" in text.lower() else text.strip().upper()


def raw_rows() -> list[tuple[str, dict[str, str]]]:
    out = []
    for name in DATA_FILES:
        with open(DATA_DIR / name, encoding="utf-8") as handle:
            for i, r in enumerate(csv.DictReader(handle)):
                out.append((f"{name.split('.')[0].removeprefix('llamacpp_speed').lstrip('_') or 'main'}:{i}", r))
    return out


def load_rows() -> tuple[list[Row], dict[str, int], list[str]]:
    """(rows, skip reasons with counts, calibration GPU labels resolved outside the catalog)."""
    catalog = {g.id: g for g in converted_rows(FACTS_DIR, "gpus.toml", "gpu", gpu_from_row)}
    quants = {q.id: q for q in converted_rows(FACTS_DIR, "quants.toml", "quant", quant_from_row)}
    rows: list[Row] = []
    skipped: dict[str, int] = {}
    missing: set[str] = set()
    for index, r in raw_rows():
        model = next((spec for prefix, spec in MODELS if r["model"].lower().startswith(prefix)), None)
        backend = BACKENDS.get(r["backend"])
        test = _test(r["test"])
        gpu, in_catalog = resolve_gpu(r["gpu"], backend, catalog) if backend else (None, False)
        qid = _quant_id(r["gguf_or_quant"])
        quant = quants.get(qid)
        reason = None
        if model is None:
            reason = "model"
        elif label_key(r["gpu"]).startswith(tuple(UNSOURCED_SPECS)):
            reason = "gpu spec without a primary source"
        elif any(note in r["notes"] for note in CRASHED_BUILD_NOTES):
            reason = "build that crashed on the model's default path"
        elif test and test[0] == "decode" and any(note in r["notes"] for note in FIRST_DAYS_NOTES):
            reason = "decode rows of a build from the first days of the model's support"
        elif test and test[0] == "prefill" and any(note in r["build"] for note in FORK_BUILD_NOTES):
            reason = "prompt rows of a fork's own GEMMs (IPEX-LLM)"
        elif any(note in r["notes"] for note in OTHER_DRIVER_NOTES):
            reason = "AMDVLK driver (the product predicts RADV)"
        elif gpu is None:
            reason = "gpu not mappable (MoltenVK or unknown)"
        elif test is None:
            reason = "test"
        elif quant is None:
            reason = "quant"
        elif pre_mfma_prompt(test[0], gpu, r["build"]):
            reason = "CDNA prompt rows before upstream MFMA MMQ (PR #14624, b5997)"
        if reason:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        assert model and gpu and test and quant and backend
        if not in_catalog:
            missing.add(gpu.name)
        kind, n, depth = test
        ub_text = r["n_ubatch"].split()[0] if r["n_ubatch"].strip() else "512"
        fa = r["flash_attn"].strip().startswith("1")
        ctx = max(1, depth + (n // 2 if kind == "decode" else n))
        workload = Workload(context=ctx, n_ubatch=int(ub_text), flash_attention=fa, prompt_tokens=max(n, 1))
        size = r["size_reported"].split()
        measured = None
        if size:
            measured = QuantSize(
                model_id=model.id, quant_id=qid, size_bytes=round(float(size[0]) * GIB), provenance=PROV
            )
        w = weights(model, quant, measured)
        family, _ = speed.speed_family(gpu)
        legacy = _legacy(r["build"])
        rows.append(
            Row(
                index=index,
                kind=kind,
                label=r["test"],
                gpu_key=gpu.name,
                arch=speed.canonical_arch(gpu) or "unknown",
                backend=r["backend"],
                family=family,
                qfam=speed.quant_family(qid, 8 * w.total_bytes / model.total_params),
                measured=float(r["tokens_per_s"]),
                model=model,
                gpu=gpu,
                quant_id=qid,
                n_gpus=int(r["n_gpus"]),
                n_tokens=n,
                depth=depth,
                workload=workload,
                w=w,
                legacy=legacy,
                in_catalog=in_catalog,
                early_amd=early_amd(gpu.vendor, r["backend"], r["date"], speed.canonical_arch(gpu) or ""),
                source=source_key(r["source"]),
                weight=build_weight(r["build"], r["date"]),
            )
        )
    for row in rows:
        row.feats = features(row)
    return rows, skipped, sorted(missing)


def features(row: Row) -> dict[str, float]:
    """Everything the time formulas need, computed once with core/speed/estimate.py's own feature functions."""
    m, w = row.model, row.w
    tflops, _ = speed.dense_tflops(row.gpu)
    profile = speed.arch_profile(row.gpu)
    f = {
        "bw": row.gpu.bandwidth_bytes_per_s,
        "tf": tflops * 1e12,
        "tf_cublas": tflops * 1e12 / profile.matrix_share if profile.use_listed else tflops * 1e12,
        "layers": float(m.n_layers),
        "hops": row.n_gpus - 1.0,
        "clock": profile.clock_ghz * 1e9,
        "igpu": float(speed.is_igpu(row.gpu)),
        "consumer": float(speed.consumer_board(row.gpu)),
        "moe": float(m.experts_per_token or 0) if m.is_moe else 0.0,
    }
    if row.kind == "decode":
        f["weights"] = speed.token_read_bytes(m, w)
        f["kv"] = speed.kv_read_bytes(m, row.workload, row.workload.context)
        f["attn"] = speed.decode_attention_flops(m, row.workload.context)
    else:
        ub = max(1, min(row.workload.n_ubatch, row.n_tokens))
        f["tokens"] = row.n_tokens
        f["chunks"] = math.ceil(row.n_tokens / ub)
        groups = speed.param_groups(m)
        routed = 0.0
        per_expert = 1.0
        if m.is_moe:
            assert m.n_experts and m.experts_per_token
            routed = groups.experts * m.experts_per_token / m.n_experts
            per_expert = ub * m.experts_per_token / m.n_experts
        f["gemm_dense"] = speed.gemm_params_per_token(m) - routed
        f["gemm_routed"] = routed
        f["per_expert"] = per_expert
        f["attn"] = speed.prefill_attention_flops(m, row.n_tokens, row.depth)
        f["touched"] = speed.touched_weight_bytes(m, w, ub)
        f["hop_bytes"] = ub * m.hidden_size * 4
    return f


def main(argv: list[str] | None = None) -> int:
    """The rows the speed fit reads: how many, why the others are skipped, which GPUs the catalog lacks."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the same summary (CI runs every bench with it)")
    parser.parse_args(argv)
    rows, skipped, missing = load_rows()
    print(f"{len(rows)} rows from {len({r.source for r in rows})} sources ({', '.join(DATA_FILES)})")
    for reason, count in sorted(skipped.items(), key=lambda x: -x[1]):
        print(f"  skipped {count:4d}: {reason}")
    if missing:
        print(f"calibration GPUs outside the catalog (EXTRA_SPECS): {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

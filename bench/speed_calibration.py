"""Fits core/speed.py's few constants on llama-bench results and grades decode and prefill.

    .venv/bin/python bench/speed_calibration.py [--rows]

Reads ../shared/calibration/llamacpp_speed.csv (llama-bench pp/tg on ~60 GPUs and Apple chips),
maps every row to a ModelSpec (written out below from configs.csv / model cards) and a GpuSpec
(catalog/facts/gpus.toml by name; a few calibration GPUs the catalog lacks get their spec-sheet
numbers below, never a speed), and fits by least squares on the log error (Huber-weighted):

* bandwidth efficiency and prefill FLOPS efficiency per speed family (cuda, rocm, metal, vulkan,
  vulkan-intel), one per-layer latency, the attention efficiency, the layer-split hop,
* decode and prefill time factors per quant family (f16 = 1 fixed).

It prints the constants (paste them into core/speed.py), median / p90 absolute % error overall and
per backend, the share of measurements inside the predicted band, and leave-one-GPU-out
cross-validation (refit without the GPU, predict it). numpy only; no scipy needed.
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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.facts import FACTS_DIR, _gpu, _quant, _rows
from core import speed
from core.fit import Offload, Placement, breakdown
from core.models import (
    GIB,
    AttentionKind,
    Backend,
    GpuSpec,
    Hardware,
    ModelSpec,
    Provenance,
    QuantSize,
    Workload,
)
from core.weights import weights

CALIBRATION = Path(__file__).resolve().parents[2] / "shared" / "calibration" / "llamacpp_speed.csv"
PROV = Provenance(source="shared/calibration/configs.csv (HF config.json copies) / model cards", as_of="2026-11")


def _m(mid: str, total: float, active: float | None = None, **kw: Any) -> ModelSpec:
    return ModelSpec(
        id=mid,
        name=mid,
        family=mid.split("-")[0],
        total_params=round(total * 1e9),
        active_params=round((active or total) * 1e9),
        provenance=PROV,
        **kw,
    )


# Architectures of the calibration models (configs.csv; GLM-4.7-Flash from its HF config.json).
LLAMA2_7B = _m(
    "llama-2-7b",
    6.74,
    n_layers=32,
    hidden_size=4096,
    n_heads=32,
    n_kv_heads=32,
    head_dim=128,
    vocab_size=32000,
    max_context=4096,
)
LLAMA3_8B = _m(
    "llama-3-8b",
    8.03,
    n_layers=32,
    hidden_size=4096,
    n_heads=32,
    n_kv_heads=8,
    head_dim=128,
    vocab_size=128256,
    max_context=131072,
)
LLAMA3_70B = _m(
    "llama-3-70b",
    70.55,
    n_layers=80,
    hidden_size=8192,
    n_heads=64,
    n_kv_heads=8,
    head_dim=128,
    vocab_size=128256,
    max_context=8192,
)
QWEN25_7B = _m(
    "qwen2.5-7b",
    7.62,
    n_layers=28,
    hidden_size=3584,
    n_heads=28,
    n_kv_heads=4,
    head_dim=128,
    vocab_size=152064,
    max_context=131072,
)
QWEN3_30B_A3B = _m(
    "qwen3-30b-a3b",
    30.53,
    3.35,
    n_layers=48,
    hidden_size=2048,
    n_heads=32,
    n_kv_heads=4,
    head_dim=128,
    n_experts=128,
    experts_per_token=8,
    moe_intermediate_size=768,
    vocab_size=151936,
    max_context=262144,
)
GEMMA3_4B = _m(
    "gemma-3-4b",
    3.88,
    n_layers=34,
    hidden_size=2560,
    n_heads=8,
    n_kv_heads=4,
    head_dim=256,
    sliding_window=1024,
    n_sliding_layers=29,
    vocab_size=262144,
    max_context=131072,
    tied_embeddings=True,
)
GPT_OSS_20B = _m(
    "gpt-oss-20b",
    20.91,
    3.61,
    n_layers=24,
    hidden_size=2880,
    n_heads=64,
    n_kv_heads=8,
    head_dim=64,
    sliding_window=128,
    n_sliding_layers=12,
    n_experts=32,
    experts_per_token=4,
    moe_intermediate_size=2880,
    vocab_size=201088,
    max_context=131072,
    native_dtype="mxfp4",
)
GPT_OSS_120B = _m(
    "gpt-oss-120b",
    116.83,
    5.13,
    n_layers=36,
    hidden_size=2880,
    n_heads=64,
    n_kv_heads=8,
    head_dim=64,
    sliding_window=128,
    n_sliding_layers=18,
    n_experts=128,
    experts_per_token=4,
    moe_intermediate_size=2880,
    vocab_size=201088,
    max_context=131072,
    native_dtype="mxfp4",
)
GLM47_FLASH = _m(
    "glm-4.7-flash",
    29.94,
    3.9,
    n_layers=47,
    hidden_size=2048,
    n_heads=20,
    n_kv_heads=20,
    head_dim=256,
    v_head_dim=256,
    attention=AttentionKind.MLA,
    kv_lora_rank=512,
    qk_rope_head_dim=64,
    n_experts=64,
    experts_per_token=4,
    n_shared_experts=1,
    moe_intermediate_size=1536,
    vocab_size=154880,
    max_context=202752,
)
MODELS = [  # (row "model" prefix, lower case) -> spec
    ("meta-llama/llama-2-7b", LLAMA2_7B),
    ("meta-llama-3-8b", LLAMA3_8B),
    ("meta-llama/llama-3.1-8b", LLAMA3_8B),
    ("llama 8b", LLAMA3_8B),
    ("meta-llama-3-70b", LLAMA3_70B),
    ("ggml-org/qwen2.5-coder-7b", QWEN25_7B),
    ("ggml-org/qwen3-coder-30b", QWEN3_30B_A3B),
    ("ggml-org/gemma-3-4b", GEMMA3_4B),
    ("ggml-org/gpt-oss-20b", GPT_OSS_20B),
    ("ggml-org/gpt-oss-120b", GPT_OSS_120B),
    ("ggml-org/glm-4.7-flash", GLM47_FLASH),
]

# Calibration GPU label (lower case, prefix after vendor words are dropped) -> catalog id.
CATALOG_GPUS = [
    ("rtx 3060", "rtx-3060-12gb"),
    ("rtx 3080", "rtx-3080-10gb"),
    ("rtx 3090", "rtx-3090"),
    ("rtx 4070 ti", None),
    ("rtx 4070", "rtx-4070"),
    ("rtx 4080", "rtx-4080"),
    ("rtx 5070 ti", "rtx-5070-ti"),
    ("rtx a6000", "rtx-a6000"),
    ("rtx 4000 ada", "rtx-4000-ada"),
    ("rtx pro 6000", "rtx-pro-6000"),
    ("h100 80 gb", "h100-sxm"),
    ("dgx spark", "dgx-spark"),
    ("rx 7900 xtx", "rx-7900-xtx"),
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
# Calibration GPUs the catalog lacks: spec-sheet numbers only (TechPowerUp GPU database; dense FP16
# in the catalog's convention: GeForce = FP32-accumulate tensor rate, no tensor cores = shader FP16
# or FP32 rate). (label prefix, name, vendor, category, GB/s, TFLOPS, unified)
EXTRA_SPECS: list[tuple[str, str, str, str, float, float, bool]] = [
    ("rtx 3070", "RTX 3070", "NVIDIA", "consumer", 448.0, 40.6, False),
    ("rtx 4070 ti", "RTX 4070 Ti", "NVIDIA", "consumer", 504.2, 80.2, False),
    ("rtx 4060 mobile", "RTX 4060 Laptop", "NVIDIA", "consumer", 256.0, 23.2, False),
    ("rtx a5000", "RTX A5000", "NVIDIA", "workstation", 768.0, 111.1, False),
    ("rtx a4500", "RTX A4500", "NVIDIA", "workstation", 640.0, 94.6, False),
    ("rtx a4000", "RTX A4000", "NVIDIA", "workstation", 448.0, 76.7, False),
    ("quadro rtx 6000", "Quadro RTX 6000", "NVIDIA", "workstation", 672.0, 130.5, False),
    ("quadro rtx 8000", "Quadro RTX 8000", "NVIDIA", "workstation", 672.0, 130.5, False),
    ("tesla p100", "Tesla P100 16GB", "NVIDIA", "datacenter", 732.2, 18.7, False),
    ("gtx 1660 ti mobile", "GTX 1660 Ti Mobile", "NVIDIA", "consumer", 288.0, 9.1, False),
    ("gtx 1660", "GTX 1660", "NVIDIA", "consumer", 192.0, 10.1, False),
    ("gtx 1070 ti", "GTX 1070 Ti", "NVIDIA", "consumer", 256.3, 8.2, False),
    ("gtx 1070", "GTX 1070", "NVIDIA", "consumer", 256.3, 6.5, False),
    ("jetson agx orin", "Jetson AGX Orin 64GB", "NVIDIA", "apu", 204.8, 42.5, True),
    ("rx 7900 xt", "RX 7900 XT", "AMD", "consumer", 800.0, 103.0, False),
    ("rx 7900 gre", "RX 7900 GRE", "AMD", "consumer", 576.0, 92.0, False),
    ("rx 7800 xt", "RX 7800 XT", "AMD", "consumer", 624.1, 74.6, False),
    ("rx 6900 xt", "RX 6900 XT", "AMD", "consumer", 512.0, 46.1, False),
    ("radeon instinct mi50", "Instinct MI50", "AMD", "datacenter", 1024.0, 26.5, False),
    ("ryzen z1 extreme", "Ryzen Z1 Extreme (780M, LPDDR5X-7500)", "AMD", "apu", 120.0, 17.2, True),
    ("arc b580", "Arc B580", "Intel", "consumer", 456.0, 116.0, False),
    ("arc b570", "Arc B570", "Intel", "consumer", 380.0, 98.0, False),
    ("arc a770m", "Arc A770M", "Intel", "consumer", 512.0, 108.0, False),
    ("arc a770", "Arc A770 16GB", "Intel", "consumer", 560.0, 138.0, False),
]
BACKENDS = {"CUDA": Backend.CUDA, "Metal": Backend.METAL, "Vulkan": Backend.VULKAN, "ROCm/HIP": Backend.ROCM}
FAMILIES = ["cuda", "rocm", "metal", "vulkan", "vulkan-intel"]
QFAMS = ["q8_0", "q4_0", "k", "mxfp4"]  # f16 fixed at 1


@dataclass
class Row:
    index: int
    kind: str  # "decode" or "prefill"
    label: str
    gpu_key: str
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
    feats: dict[str, float] = field(default_factory=dict)


def _label_key(label: str) -> str:
    low = label.lower().replace("nvidia ", "").replace("geforce ", "").replace("amd ", "").replace("intel ", "")
    low = low.replace("radeon rx", "rx")
    return re.sub(r"\s+", " ", low).strip()


def _gpu_for(label: str, backend: Backend, catalog: dict[str, GpuSpec]) -> GpuSpec | None:
    key = _label_key(label)
    if "apple" in key and backend is not Backend.METAL:
        return None  # MoltenVK: llama.cpp on macOS runs Metal, the estimator never predicts this
    spec: GpuSpec | None = None
    for prefix, gid in CATALOG_GPUS:
        if key.startswith(prefix) and gid:
            spec = catalog.get(gid)
            break
    if spec is None:
        for prefix, name, vendor, category, gbps, tflops, unified in EXTRA_SPECS:
            if key.startswith(prefix):
                spec = GpuSpec(
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
                    provenance=Provenance(source="TechPowerUp GPU database (spec sheet)", as_of="2026-11"),
                )
                break
    if spec is None:
        return None
    return spec.model_copy(update={"backend": backend})


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


def _legacy(build: str) -> bool:
    m = re.search(r"\((\d{3,5})\)", build)
    return bool(m and int(m.group(1)) < 3000)


def _quant_id(text: str) -> str:
    return "MXFP4" if "mxfp4" in text.lower() else text.strip().upper()


def load_rows() -> tuple[list[Row], dict[str, int]]:
    catalog = {g.id: g for g in _rows(FACTS_DIR, "gpus.toml", "gpu", _gpu)}
    quants = {q.id: q for q in _rows(FACTS_DIR, "quants.toml", "quant", _quant)}
    rows: list[Row] = []
    skipped: dict[str, int] = {}
    with open(CALIBRATION, encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    for i, r in enumerate(table):
        model = next((spec for prefix, spec in MODELS if r["model"].lower().startswith(prefix)), None)
        backend = BACKENDS.get(r["backend"])
        test = _test(r["test"])
        gpu = _gpu_for(r["gpu"], backend, catalog) if backend else None
        qid = _quant_id(r["gguf_or_quant"])
        quant = quants.get(qid)
        reason = None
        if model is None:
            reason = "model"
        elif gpu is None:
            reason = "gpu not mappable (ambiguous iGPU or MoltenVK)"
        elif test is None:
            reason = "test"
        elif quant is None:
            reason = "quant"
        if reason:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        assert model and gpu and test and quant and backend
        kind, n, depth = test
        ub_text = r["n_ubatch"].split()[0] if r["n_ubatch"].strip() else "512"
        ub = int(ub_text)
        fa = r["flash_attn"].strip().startswith("1")
        ctx = max(1, depth + (n // 2 if kind == "decode" else n))
        workload = Workload(context=ctx, n_ubatch=ub, flash_attention=fa, prompt_tokens=max(n, 1))
        size = r["size_reported"].split()
        measured = None
        if size:
            measured = QuantSize(
                model_id=model.id, quant_id=qid, size_bytes=round(float(size[0]) * GIB), provenance=PROV
            )
        w = weights(model, quant, measured)
        family, _ = speed.speed_family(gpu)
        rows.append(
            Row(
                index=i,
                kind=kind,
                label=r["test"],
                gpu_key=_label_key(r["gpu"]).split(" (")[0],
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
                legacy=_legacy(r["build"]),
            )
        )
    for row in rows:
        row.feats = _features(row)
    return rows, skipped


def _placement(row: Row) -> Placement:
    hw = Hardware(gpu=row.gpu, count=row.n_gpus)
    mem, _ = breakdown(row.model, _quant_stub(row), hw, row.workload)
    off = Offload(
        mode="none",
        layers_on_gpu=row.model.n_layers,
        layers_total=row.model.n_layers,
        gpu_bytes=mem.total_bytes,
        bytes_in_ram=0,
        ram_usable_bytes=0,
        fits_ram=True,
    )
    return Placement(memory=mem, offload=off, verdict="fits", weights=row.w)  # type: ignore[arg-type]


_QUANTS: dict[str, Any] = {}


def _quant_stub(row: Row) -> Any:
    if not _QUANTS:
        _QUANTS.update({q.id: q for q in _rows(FACTS_DIR, "quants.toml", "quant", _quant)})
    return _QUANTS[row.quant_id]


def _features(row: Row) -> dict[str, float]:
    """Everything the time formulas need, computed once with core/speed.py's own feature functions."""
    m, w = row.model, row.w
    tflops, _ = speed.dense_tflops(row.gpu)
    f = {"bw": row.gpu.bandwidth_bytes_per_s, "tf": tflops * 1e12, "layers": m.n_layers, "hops": row.n_gpus - 1}
    if row.kind == "decode":
        f["weights"] = speed.token_read_bytes(m, w)
        f["kv"] = speed.kv_read_bytes(m, row.workload, row.workload.context)
        f["attn"] = speed.decode_attention_flops(m, row.workload.context)
    else:
        ub = max(1, min(row.workload.n_ubatch, row.n_tokens))
        f["tokens"] = row.n_tokens
        f["chunks"] = math.ceil(row.n_tokens / ub)
        f["gemm"] = speed.gemm_params_per_token(m)
        f["attn"] = speed.prefill_attention_flops(m, row.n_tokens, row.depth)
        f["touched"] = speed.touched_weight_bytes(m, w, ub)
        f["hop_bytes"] = ub * m.hidden_size * 4
    return f


# ------------------------------------------------------------------------------------------------
# Parameters <-> core/speed.py constants
# ------------------------------------------------------------------------------------------------

NAMES = (
    [f"bw_eff:{f}" for f in FAMILIES]
    + [f"pp_eff:{f}" for f in FAMILIES]
    + [f"q_dec:{q}" for q in QFAMS]
    + [f"q_pre:{q}" for q in QFAMS]
    + [f"latency:{f}" for f in FAMILIES]
    + ["no_fa_prefill", "legacy_latency", "attn_eff", "hop"]
)
# Weak priors (log-space, weight per parameter): quant factors near 1, efficiencies near typical
# values, so families with few rows do not run off. (prior value, strength)
PRIORS: dict[str, tuple[float, float]] = {
    **{f"q_dec:{q}": (1.0, 0.5) for q in QFAMS},
    **{f"q_pre:{q}": (1.0, 0.5) for q in QFAMS},
    **{f"bw_eff:{f}": (0.7, 0.1) for f in FAMILIES},
    **{f"pp_eff:{f}": (0.3, 0.05) for f in FAMILIES},
    **{f"latency:{f}": (30e-6, 0.1) for f in FAMILIES},
    "no_fa_prefill": (1.0, 0.3),
    "legacy_latency": (1.0, 0.1),
    "attn_eff": (0.5, 0.1),
    "hop": (0.2e-3, 0.1),
}


def current_params() -> np.ndarray:
    vals = (
        [speed.DECODE_BW_EFFICIENCY[f] for f in FAMILIES]
        + [speed.PREFILL_FLOPS_EFFICIENCY[f] for f in FAMILIES]
        + [speed.QUANT_DECODE_FACTOR[q] for q in QFAMS]
        + [speed.QUANT_PREFILL_FACTOR[q] for q in QFAMS]
        + [speed.LAYER_LATENCY_S[f] for f in FAMILIES]
        + [
            speed.PREFILL_NO_FLASH_ATTENTION_FACTOR,
            LEGACY_LATENCY_FACTOR[0],
            speed.ATTENTION_EFFICIENCY,
            speed.LAYER_SPLIT_HOP_S,
        ]
    )
    return np.log(np.array(vals))


def apply_params(theta: np.ndarray) -> None:
    """Write fitted values into core/speed.py's module constants (bench-only; production uses the pasted ones)."""
    p = dict(zip(NAMES, np.exp(theta), strict=True))
    for f in FAMILIES:
        speed.DECODE_BW_EFFICIENCY[f] = float(p[f"bw_eff:{f}"])
        speed.PREFILL_FLOPS_EFFICIENCY[f] = float(p[f"pp_eff:{f}"])
        speed.LAYER_LATENCY_S[f] = float(p[f"latency:{f}"])
    for q in QFAMS:
        speed.QUANT_DECODE_FACTOR[q] = float(p[f"q_dec:{q}"])
        speed.QUANT_PREFILL_FACTOR[q] = float(p[f"q_pre:{q}"])
    speed.PREFILL_NO_FLASH_ATTENTION_FACTOR = float(p["no_fa_prefill"])
    LEGACY_LATENCY_FACTOR[0] = float(p["legacy_latency"])
    speed.ATTENTION_EFFICIENCY = float(p["attn_eff"])
    speed.LAYER_SPLIT_HOP_S = float(p["hop"])


# Fit-only nuisance parameter: per-layer latency multiplier of pre-b3000 builds (2024-05 rows).
# Production predicts current builds, so it is not a core/speed.py constant.
LEGACY_LATENCY_FACTOR = [1.0]


class Matrix:
    """Rows as numpy columns; ``predict`` mirrors speed.decode_time_s / prefill_time_s exactly."""

    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows
        self.decode = np.array([r.kind == "decode" for r in rows])

        def get(k: str) -> np.ndarray:
            return np.array([r.feats.get(k, 0.0) for r in rows], dtype=float)

        self.f = {
            k: get(k)
            for k in (
                "bw",
                "tf",
                "layers",
                "hops",
                "weights",
                "kv",
                "attn",
                "tokens",
                "chunks",
                "gemm",
                "touched",
                "hop_bytes",
            )
        }
        self.fam = np.array([FAMILIES.index(r.family) for r in rows])
        self.q = np.array([QFAMS.index("k" if r.qfam == "iq" else r.qfam) if r.qfam != "f16" else -1 for r in rows])
        self.iq = np.array([speed.IQ_EXTRA_FACTOR if r.qfam == "iq" else 1.0 for r in rows])
        self.y = np.log(np.array([r.measured for r in rows]))
        self.no_fa = np.array([not r.workload.flash_attention for r in rows])
        self.legacy = np.array([r.legacy for r in rows])

    def predict(self, theta: np.ndarray) -> np.ndarray:
        p = np.exp(theta)
        nf, nq = len(FAMILIES), len(QFAMS)
        bw_eff, pp_eff = p[:nf], p[nf : 2 * nf]
        q_dec = np.append(p[2 * nf : 2 * nf + nq], 1.0)[self.q] * self.iq
        q_pre = np.append(p[2 * nf + nq : 2 * nf + 2 * nq], 1.0)[self.q] * self.iq
        lat = p[2 * nf + 2 * nq : 3 * nf + 2 * nq][self.fam]
        no_fa, legacy, attn_eff, hop = p[-4], p[-3], p[-2], p[-1]
        lat = lat * np.where(self.legacy, legacy, 1.0)
        f = self.f
        bw = f["bw"] * bw_eff[self.fam]
        flops = f["tf"] * pp_eff[self.fam]
        t_dec = (f["weights"] * q_dec + f["kv"]) / bw + f["attn"] / (attn_eff * flops) + f["layers"] * lat
        t_dec += f["hops"] * hop
        t_pre = 2.0 * f["gemm"] * f["tokens"] * q_pre / flops + f["attn"] / (attn_eff * flops)
        per_ub = f["touched"] / bw + f["layers"] * lat + f["hops"] * (hop + f["hop_bytes"] / speed.PCIE_BYTES_PER_S)
        t_pre += f["chunks"] * per_ub
        t_pre *= np.where(self.no_fa, no_fa, 1.0)
        rate = np.where(self.decode, 1.0 / np.maximum(t_dec, 1e-12), f["tokens"] / np.maximum(t_pre, 1e-12))
        return np.log(rate)


def _residuals(mat: Matrix, theta: np.ndarray, mask: np.ndarray) -> np.ndarray:
    r = (mat.predict(theta) - mat.y)[mask]
    prior = []
    for i, name in enumerate(NAMES):
        value, strength = PRIORS[name]
        prior.append(strength * (theta[i] - math.log(value)))
    return np.concatenate([r, np.array(prior)])


def fit(mat: Matrix, mask: np.ndarray, theta0: np.ndarray, iters: int = 60) -> np.ndarray:
    """Levenberg-Marquardt on log residuals with Huber weights (delta = 0.15, i.e. ~15 %)."""
    theta = theta0.copy()
    lam = 1e-2
    n_data = int(mask.sum())

    def weighted(th: np.ndarray) -> np.ndarray:
        r = _residuals(mat, th, mask)
        a = np.abs(r[:n_data])
        wts = np.where(a <= 0.15, 1.0, np.sqrt(0.15 / np.maximum(a, 1e-12)))
        r[:n_data] *= wts
        return r

    r = weighted(theta)
    cost = float(r @ r)
    for _ in range(iters):
        jac = np.empty((r.size, theta.size))
        for j in range(theta.size):
            step = np.zeros_like(theta)
            step[j] = 1e-5
            jac[:, j] = (weighted(theta + step) - r) / 1e-5
        jtj, jtr = jac.T @ jac, jac.T @ r
        improved = False
        for _ in range(10):
            delta = np.linalg.solve(jtj + lam * np.diag(np.diag(jtj) + 1e-9), -jtr)
            cand = theta + delta
            rc = weighted(cand)
            cc = float(rc @ rc)
            if cc < cost:
                theta, r, cost, lam, improved = cand, rc, cc, lam * 0.3, True
                break
            lam *= 10
        if not improved or np.max(np.abs(delta)) < 1e-6:
            break
    return theta


# ------------------------------------------------------------------------------------------------
# Grading
# ------------------------------------------------------------------------------------------------


def _pct(errors: np.ndarray) -> tuple[float, float]:
    a = np.abs(errors)
    return float(np.median(a)), float(np.quantile(a, 0.9)) if a.size else float("nan")


def _band_factors(resid: np.ndarray) -> tuple[float, float]:
    """Band from log residuals (prediction / measurement): covers the central 84 %."""
    lo, hi = np.quantile(resid, [0.08, 0.92])
    return float(math.exp(-hi)), float(math.exp(-lo))


def grade_speed(show_rows: bool = False, verbose: bool = True) -> dict[str, Any]:
    """Fit, cross-validate and grade; returns the figures (bench/accuracy.py prints them)."""
    saved = (current_params(), speed.DECODE_BAND, speed.PREFILL_BAND)
    try:
        return _grade(show_rows, verbose)
    finally:  # leave core/speed.py's constants as pasted, whoever called us
        apply_params(saved[0])
        speed.DECODE_BAND, speed.PREFILL_BAND = saved[1], saved[2]


def _grade(show_rows: bool, verbose: bool) -> dict[str, Any]:
    rows, skipped = load_rows()
    mat = Matrix(rows)
    everything = np.ones(len(rows), dtype=bool)
    theta = fit(mat, everything, current_params())
    pred = mat.predict(theta)
    resid = pred - mat.y  # log(pred / measured)

    # leave-one-GPU-out: refit without every row of that GPU (all backends), predict its rows
    gpus = sorted({r.gpu_key for r in rows})
    loo = np.zeros(len(rows))
    for key in gpus:
        hold = np.array([r.gpu_key == key for r in rows])
        th = fit(mat, ~hold, theta, iters=25)
        loo[hold] = mat.predict(th)[hold] - mat.y[hold]

    dec, pre = mat.decode, ~mat.decode
    dband, pband = _band_factors(loo[dec]), _band_factors(loo[pre])
    apply_params(theta)
    speed.DECODE_BAND, speed.PREFILL_BAND = dband, pband
    check = _production_check(rows, pred)

    def pct_err(r: np.ndarray) -> np.ndarray:
        return 100.0 * (np.exp(r) - 1.0)

    def inside(r: np.ndarray, band: tuple[float, float]) -> float:
        # measured inside [pred*lo, pred*hi]  <=>  lo <= measured/pred <= hi
        ratio = np.exp(-r)
        return float(np.mean((ratio >= band[0]) & (ratio <= band[1]))) if r.size else float("nan")

    result: dict[str, Any] = {
        "rows": len(rows),
        "skipped": skipped,
        "gpus": len(gpus),
        "constants": dict(zip(NAMES, np.exp(theta).tolist(), strict=True)),
        "decode_band": dband,
        "prefill_band": pband,
        "production_max_rel_diff": check,
        "overall": {},
        "per_backend": {},
        "loo": {},
        "loo_per_backend": {},
    }
    for kind, mask, band in (("decode", dec, dband), ("prefill", pre, pband)):
        result["overall"][kind] = (*_pct(pct_err(resid[mask])), inside(resid[mask], band), int(mask.sum()))
        result["loo"][kind] = (*_pct(pct_err(loo[mask])), inside(loo[mask], band), int(mask.sum()))
        for backend in BACKENDS:
            bm = mask & np.array([r.backend == backend for r in rows])
            if bm.any():
                result["per_backend"][f"{kind} {backend}"] = (
                    *_pct(pct_err(resid[bm])),
                    inside(resid[bm], band),
                    int(bm.sum()),
                )
                result["loo_per_backend"][f"{kind} {backend}"] = (
                    *_pct(pct_err(loo[bm])),
                    inside(loo[bm], band),
                    int(bm.sum()),
                )
    if verbose:
        _print(result, rows, resid, loo, show_rows)
    return result


def _production_check(rows: list[Row], pred: np.ndarray) -> float:
    """Re-predict every row through core/speed.py's public functions; return the max relative gap."""
    worst = 0.0
    for row, p in zip(rows, pred, strict=True):
        if row.legacy:
            continue  # the legacy-build latency factor exists only in the fit
        hw = Hardware(gpu=row.gpu, count=row.n_gpus)
        place = _placement(row)
        if row.kind == "decode":
            got = speed.decode_tokens_per_s(
                row.model, row.w, place, hw, row.workload, row.workload.context, row.quant_id
            )
        else:
            got = speed.prefill_tokens_per_s(
                row.model, row.w, place, hw, row.workload, row.n_tokens, row.depth, row.quant_id
            )
        worst = max(worst, abs(got / math.exp(p) - 1.0))
    return worst


def _print(result: dict[str, Any], rows: list[Row], resid: np.ndarray, loo: np.ndarray, show_rows: bool) -> None:
    print(f"speed calibration: {result['rows']} rows on {result['gpus']} GPUs; skipped {result['skipped']}")
    print("fitted constants (paste into core/speed.py):")
    for name, value in result["constants"].items():
        print(f"  {name:<22} {value:.4g}")
    print(f"  DECODE_BAND  = ({result['decode_band'][0]:.3f}, {result['decode_band'][1]:.3f})")
    print(f"  PREFILL_BAND = ({result['prefill_band'][0]:.3f}, {result['prefill_band'][1]:.3f})")
    print(f"production path agrees with the fit to {result['production_max_rel_diff']:.1e} (max relative gap)")
    for title, key, per in (("in-sample", "overall", "per_backend"), ("leave-one-GPU-out", "loo", "loo_per_backend")):
        print(f"{title}: median / p90 absolute % error, share inside band")
        for kind, (med, p90, cov, n) in result[key].items():
            print(f"  {kind:<8} all       n={n:>3}  median {med:5.1f}%  p90 {p90:5.1f}%  in band {cov:5.1%}")
        for name, (med, p90, cov, n) in result[per].items():
            print(f"  {name:<17} n={n:>3}  median {med:5.1f}%  p90 {p90:5.1f}%  in band {cov:5.1%}")
    if show_rows:
        for row, r, lr in zip(rows, resid, loo, strict=True):
            print(
                f"  #{row.index:<3} {row.kind:<7} {row.gpu_key[:28]:<28} {row.backend:<8} x{row.n_gpus} "
                f"{row.model.id:<14} {row.quant_id:<7} {row.label[:16]:<16} meas {row.measured:9.1f} "
                f"pred {row.measured * math.exp(r):9.1f} {100 * (math.exp(r) - 1):+6.1f}% loo {100 * (math.exp(lr) - 1):+6.1f}%"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", action="store_true", help="print every row's prediction")
    args = parser.parse_args()
    grade_speed(show_rows=args.rows)


if __name__ == "__main__":
    main()

"""Fits core/speed/estimate.py's few constants on llama-bench results and grades them on hardware held out.

    .venv/bin/python bench/speed_calibration.py            # fit, cross-validate, print
    .venv/bin/python bench/speed_calibration.py --write    # ... and write the constants block
    .venv/bin/python bench/speed_calibration.py --quick    # fit only (a few seconds, CI)
    .venv/bin/python bench/speed_calibration.py --rows     # every row's prediction

Rows: bench/speed_data.py (bench/calibration/*.csv, GPUs through the catalog). The fit is weighted
least squares on the log error (Huber, pre-b3000 builds at half weight, weak priors) of:

* decode bandwidth efficiency and per-layer clock cycles per speed family (cuda, rocm, metal, vulkan,
  vulkan-intel, sycl),
* prompt matrix efficiency, flash-attention efficiency and expert-GEMM tile per kernel family (the same
  without vulkan-intel, which runs Vulkan's shaders),
* the integrated-GPU (bandwidth; matrix rate for AMD APUs and for the others) and HBM factors, the MoE
  per-expert term,
* quant-family time factors (f16 = 1), flash-attention-off factor, layer-split hop, the per-layer cost
  without CUDA graphs (pre-Ampere cards and pre-b3000 builds),
* fit-only build-era factors, so that old builds do not drag the constants the product uses for current
  ones: pre-b3000 prompt GEMMs (cuBLAS), and AMD builds before their backend's current kernels
  (``bench.speed_data.AMD_KERNEL_ERA``: ROCm and Vulkan prompt matrix rate, decode bandwidth).

Everything per chip generation (matrix rate, clock) is physics from core/speed/arch.py, not fitted,
so a generation the fit never saw gets its speed from its spec sheet. Validation the way users meet
it (bench/speed_validation.py): leave-one-SOURCE-out (every discussion, issue or repository held out
in turn, refit, predicted: the headline), leave-one-architecture-out (generation x backend) and
leave-one-family-out; median / p90 absolute % error and share of measurements inside the card's band.
``--write`` stores the constants and bands between the BEGIN/END FITTED markers of
core/speed/constants.py and the accuracy table in README.md; tests/core/test_speed_calibration.py fails
when either drifts from this fit.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.speed_data import UNSOURCED_SPECS, Row, load_rows
from bench.speed_validation import (
    FAMILIES,
    KERNEL_FAMILIES,
    MIN_SOURCES,
    SPLITS,
    TABLE_HEAD,
    derive_bands,
    hold_out,
    markdown_table,
    missed_archs,
    sources_by_arch,
    summary,
)
from core.fit import Offload, Placement, breakdown
from core.models import Hardware
from core.speed import constants as K
from core.speed import estimate as speed
from core.speed.device import dequant_seconds, forget_rates
from core.speed.model import grid_weights

CONSTANTS_FILE = Path(__file__).resolve().parents[1] / "core" / "speed" / "constants.py"
README = Path(__file__).resolve().parents[1] / "README.md"
QFAMS = ["q8_0", "q4_0", "k", "mxfp4"]  # f16 fixed at 1
SCALARS = [
    "consumer_clock",
    "old_bw",
    "old_pp",
    "igpu_bw",
    "igpu_pp",
    "apu_pp",
    "hbm_bw",
    "moe_expert",
    "no_fa",
    "no_graphs",
    "legacy_pp",
    "early_rocm_pp",
    "early_vulkan_pp",
    "early_amd_bw",
    "hop",
    "xehpg_bw",
]
PER_FAMILY = ["bw_eff", "cycles"]  # per speed family (decode mat-vec paths and fixed costs differ on Intel Vulkan)
PER_KERNELS = ["pp_eff", "attn_eff", "moe_tile"]  # per kernel family (Vulkan on Intel runs Vulkan's shaders)
NAMES = (
    [f"{key}:{f}" for key in PER_FAMILY for f in FAMILIES]
    + [f"{key}:{f}" for key in PER_KERNELS for f in KERNEL_FAMILIES]
    + [f"q_dec:{q}" for q in QFAMS]
    + [f"q_pre:{q}" for q in QFAMS]
    + SCALARS
)
# Weak priors (log-space: value, strength): keep parameters with few rows near typical values.
PRIORS: dict[str, tuple[float, float]] = {
    **{f"q_dec:{q}": (1.0, 0.5) for q in QFAMS},
    **{f"q_pre:{q}": (1.0, 0.5) for q in QFAMS},
    **{f"bw_eff:{f}": (0.75, 0.1) for f in FAMILIES},
    **{f"pp_eff:{f}": (0.4, 0.05) for f in KERNEL_FAMILIES},
    # SYCL has no upstream prompt rows (FORK_BUILD_NOTES): its FP32 oneMKL GEMM reaches 16.46 TFLOPS on an A770
    # at 4096^3 (ollama/ollama PR #2458), 0.81 of the FP32 rate the model gives the card (32 Xe cores x 256
    # FLOP/clk x 2.1 GHz x CONSUMER_CLOCK_FACTOR); a firm prior, since no row moves it
    "pp_eff:sycl": (0.81, 1.0),
    **{f"cycles:{f}": (100e3, 0.1) for f in FAMILIES},
    **{f"attn_eff:{f}": (0.5, 0.1) for f in KERNEL_FAMILIES},
    **{f"moe_tile:{f}": (16.0, 0.1) for f in KERNEL_FAMILIES},
    "consumer_clock": (1.0, 0.3),
    "old_bw": (1.0, 0.3),
    "old_pp": (1.0, 0.3),
    "igpu_bw": (0.9, 0.3),
    "igpu_pp": (0.7, 0.1),
    "apu_pp": (0.7, 0.1),
    "hbm_bw": (0.8, 0.3),
    "moe_expert": (0.15, 0.1),
    "no_fa": (1.0, 0.3),
    "no_graphs": (1.0, 0.1),
    "legacy_pp": (1.0, 0.3),
    "early_rocm_pp": (1.0, 0.3),
    "early_vulkan_pp": (1.0, 0.3),
    "early_amd_bw": (1.0, 0.3),
    "hop": (0.2e-3, 0.1),
    "xehpg_bw": (1.0, 0.3),
}
EFFICIENCY_CAP = 0.95  # no kernel reaches the full peak
HUBER = 0.15  # ~15 %: beyond it a row's pull grows like sqrt, not linearly


def current_params() -> np.ndarray:
    vals = (
        [K.DECODE_BW_EFFICIENCY[f] for f in FAMILIES]
        + [K.LAYER_CYCLES[f] for f in FAMILIES]
        + [K.PREFILL_FLOPS_EFFICIENCY[f] for f in KERNEL_FAMILIES]
        + [K.ATTENTION_EFFICIENCY[f] for f in KERNEL_FAMILIES]
        + [K.MOE_TILE_TOKENS[f] for f in KERNEL_FAMILIES]
        + [K.QUANT_DECODE_FACTOR[q] for q in QFAMS]
        + [K.QUANT_PREFILL_FACTOR[q] for q in QFAMS]
        + [
            K.CONSUMER_CLOCK_FACTOR,
            K.PRE_AMPERE_BANDWIDTH_FACTOR,
            K.PRE_AMPERE_MATRIX_FACTOR,
            K.IGPU_BANDWIDTH_FACTOR,
            K.IGPU_MATRIX_FACTOR,
            K.AMD_APU_MATRIX_FACTOR,
            K.HBM_BANDWIDTH_FACTOR,
            K.MOE_EXPERT_EXTRA,
            K.PREFILL_NO_FLASH_ATTENTION_FACTOR,
            K.NO_CUDA_GRAPHS_LATENCY_FACTOR,
            1.0,  # legacy_pp (fit-only)
            1.0,  # early_rocm_pp (fit-only)
            1.0,  # early_vulkan_pp (fit-only)
            1.0,  # early_amd_bw (fit-only)
            K.LAYER_SPLIT_HOP_S,
            K.XE_HPG_BANDWIDTH_FACTOR,
        ]
    )
    theta: np.ndarray = np.log(np.array(vals))
    return theta


def fitted_values(theta: np.ndarray) -> dict[str, float]:
    return dict(zip(NAMES, np.exp(theta).tolist(), strict=True))


def apply_params(theta: np.ndarray) -> None:
    """Write fitted values into core/speed_constants (bench-only; production uses the written ones)."""
    p = fitted_values(theta)
    for f in FAMILIES:
        K.DECODE_BW_EFFICIENCY[f] = p[f"bw_eff:{f}"]
        K.LAYER_CYCLES[f] = p[f"cycles:{f}"]
    for f in KERNEL_FAMILIES:
        K.PREFILL_FLOPS_EFFICIENCY[f] = p[f"pp_eff:{f}"]
        K.ATTENTION_EFFICIENCY[f] = p[f"attn_eff:{f}"]
        K.MOE_TILE_TOKENS[f] = p[f"moe_tile:{f}"]
    for q in QFAMS:
        K.QUANT_DECODE_FACTOR[q] = p[f"q_dec:{q}"]
        K.QUANT_PREFILL_FACTOR[q] = p[f"q_pre:{q}"]
    K.CONSUMER_CLOCK_FACTOR = p["consumer_clock"]
    K.PRE_AMPERE_BANDWIDTH_FACTOR, K.PRE_AMPERE_MATRIX_FACTOR = p["old_bw"], p["old_pp"]
    K.IGPU_BANDWIDTH_FACTOR, K.IGPU_MATRIX_FACTOR = p["igpu_bw"], p["igpu_pp"]
    K.AMD_APU_MATRIX_FACTOR = p["apu_pp"]
    K.HBM_BANDWIDTH_FACTOR, K.MOE_EXPERT_EXTRA = p["hbm_bw"], p["moe_expert"]
    K.PREFILL_NO_FLASH_ATTENTION_FACTOR = p["no_fa"]
    K.NO_CUDA_GRAPHS_LATENCY_FACTOR = p["no_graphs"]
    K.LAYER_SPLIT_HOP_S = p["hop"]
    K.XE_HPG_BANDWIDTH_FACTOR = p["xehpg_bw"]
    forget_rates()  # core/speed_device memoises rates computed from the constants


class Matrix:
    """Rows as numpy columns; ``predict`` mirrors speed.decode_time_s / prefill_time_s exactly."""

    KEYS = (
        "bw",
        "tf",
        "consumer",
        "tf_cublas",
        "layers",
        "hops",
        "clock",
        "igpu",
        "moe",
        "weights",
        "kv",
        "attn",
        "tokens",
        "chunks",
        "gemm_dense",
        "gemm_routed",
        "per_expert",
        "touched",
        "hop_bytes",
    )

    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows
        self.decode = np.array([r.kind == "decode" for r in rows])
        self.f = {k: np.array([r.feats.get(k, 0.0) for r in rows], dtype=float) for k in self.KEYS}
        self.f["per_expert"] = np.maximum(self.f["per_expert"], 1e-6)
        self.fam = np.array([FAMILIES.index(r.family) for r in rows])
        self.kern = np.array([KERNEL_FAMILIES.index(speed.kernel_family(r.family)) for r in rows])
        self.q = np.array([QFAMS.index("k" if r.qfam == "iq" else r.qfam) if r.qfam != "f16" else -1 for r in rows])
        self.iq = np.array([K.IQ_EXTRA_FACTOR if r.qfam == "iq" else 1.0 for r in rows])
        # codebook-quant dequantisation on CUDA (speed_device.dequant_seconds), decode rows only
        self.dequant = np.array(
            [
                dequant_seconds(speed.device_rates(r.gpu), grid_weights(r.model, r.w, r.quant_id))
                if r.kind == "decode"
                else 0.0
                for r in rows
            ]
        )
        slow = [r.family == "sycl" and r.qfam in K.SYCL_NO_REORDER_FAMILIES for r in rows]
        self.slow_decode = np.where(slow, K.SYCL_NO_REORDER_DECODE_FACTOR, 1.0)  # SYCL without the reorder path
        self.hbm = np.array([speed.arch_profile(r.gpu).hbm for r in rows])
        self.old = np.array([speed.arch_profile(r.gpu).pre_ampere for r in rows])
        self.old_decode = np.array([speed.arch_profile(r.gpu).pre_ampere_decode for r in rows])
        self.xehpg = np.array([speed.arch_profile(r.gpu).xe_hpg for r in rows])
        self.y = np.log(np.array([r.measured for r in rows]))
        self.w = np.array([r.weight for r in rows])
        self.no_fa = np.array([not r.workload.flash_attention for r in rows])
        self.legacy = np.array([r.legacy for r in rows])
        self.amd = np.array([r.gpu.vendor == "AMD" for r in rows])
        self.early_rocm = np.array([r.early_amd and r.family == "rocm" for r in rows])
        self.early_vulkan = np.array([r.early_amd and r.family == "vulkan" for r in rows])
        # no CUDA graphs: builds before them (PR #6766) and pre-Ampere cards, for which ggml-cuda turns them off
        self.no_graphs = self.legacy | np.array(
            [r.family == "cuda" and not speed.arch_profile(r.gpu).cuda_graphs for r in rows]
        )

    def predict(self, theta: np.ndarray) -> np.ndarray:
        p = np.exp(theta)
        nf, nk, nq = len(FAMILIES), len(KERNEL_FAMILIES), len(QFAMS)
        bw_eff, cycles = (p[i * nf : (i + 1) * nf][self.fam] for i in range(2))
        pp_eff, attn_eff, moe_tile = (p[2 * nf + i * nk : 2 * nf + (i + 1) * nk][self.kern] for i in range(3))
        k = 2 * nf + 3 * nk
        q_dec = np.append(p[k : k + nq], 1.0)[self.q] * self.iq * self.slow_decode
        q_pre = np.append(p[k + nq : k + 2 * nq], 1.0)[self.q] * self.iq
        s = dict(zip(SCALARS, p[k + 2 * nq :], strict=True))
        f = self.f
        igpu = f["igpu"] > 0
        clock = np.where(f["consumer"] > 0, s["consumer_clock"], 1.0)
        lat = cycles / (f["clock"] * clock) * np.where(self.no_graphs, s["no_graphs"], 1.0)
        lat = lat * (1.0 + s["moe_expert"] * f["moe"])
        bw = f["bw"] * bw_eff * np.where(igpu, s["igpu_bw"], 1.0) * np.where(self.hbm, s["hbm_bw"], 1.0)
        bw = bw * np.where(self.old_decode, s["old_bw"], 1.0) * np.where(self.xehpg, s["xehpg_bw"], 1.0)
        bw = bw * np.where(self.early_rocm | self.early_vulkan, s["early_amd_bw"], 1.0)
        # pre-b3000 builds ran prompt GEMMs through cuBLAS (full tensor rate, dequantize first)
        tf = np.where(self.legacy, f["tf_cublas"] * s["legacy_pp"], f["tf"])
        flops = tf * clock * pp_eff * np.where(igpu, np.where(self.amd, s["apu_pp"], s["igpu_pp"]), 1.0)
        flops = flops * np.where(self.old, s["old_pp"], 1.0)
        flops = flops * np.where(self.early_rocm, s["early_rocm_pp"], 1.0)
        flops = flops * np.where(self.early_vulkan, s["early_vulkan_pp"], 1.0)
        attn = f["attn"] / (attn_eff * flops)
        t_dec = np.maximum((f["weights"] * q_dec + f["kv"]) / bw, self.dequant)
        t_dec = t_dec + attn + f["layers"] * lat + f["hops"] * s["hop"]
        gemm = f["gemm_dense"] + f["gemm_routed"] * (1.0 + moe_tile / f["per_expert"])
        t_pre = 2.0 * gemm * f["tokens"] * q_pre / flops + attn
        hop = f["hops"] * (s["hop"] + f["hop_bytes"] / K.PCIE_BYTES_PER_S)
        t_pre += f["chunks"] * (f["touched"] / bw + f["layers"] * lat + hop)
        t_pre *= np.where(self.no_fa, s["no_fa"], 1.0)
        rate = np.where(self.decode, 1.0 / np.maximum(t_dec, 1e-12), f["tokens"] / np.maximum(t_pre, 1e-12))
        log_rate: np.ndarray = np.log(rate)
        return log_rate


def fit(mat: Matrix, mask: np.ndarray, theta0: np.ndarray, iters: int = 60) -> np.ndarray:
    """Levenberg-Marquardt on weighted, Huber-reweighted log residuals plus the priors."""
    prior_value = np.log(np.array([PRIORS[n][0] for n in NAMES]))
    efficiency = np.array([n.startswith(("bw_eff:", "pp_eff:")) for n in NAMES])
    prior_strength = np.array([PRIORS[n][1] for n in NAMES])
    row_w = np.sqrt(mat.w[mask])

    def residuals(th: np.ndarray) -> np.ndarray:
        r = (mat.predict(th) - mat.y)[mask]
        a = np.abs(r)
        r = r * np.where(a <= HUBER, 1.0, np.sqrt(HUBER / np.maximum(a, 1e-12))) * row_w
        # efficiencies are shares of a peak: a steep wall above EFFICIENCY_CAP keeps them physical
        wall = 10.0 * np.maximum(0.0, th[efficiency] - math.log(EFFICIENCY_CAP))
        return np.concatenate([r, prior_strength * (th - prior_value), wall])

    theta, lam, gain = theta0.copy(), 1e-2, 0.0
    r = residuals(theta)
    cost = float(r @ r)
    for _ in range(iters):
        jac = np.empty((r.size, theta.size))
        for j in range(theta.size):
            step = np.zeros_like(theta)
            step[j] = 1e-5
            jac[:, j] = (residuals(theta + step) - r) / 1e-5
        jtj, jtr = jac.T @ jac, jac.T @ r
        improved = False
        delta = np.zeros_like(theta)
        for _ in range(10):
            delta = np.linalg.solve(jtj + lam * np.diag(np.diag(jtj) + 1e-9), -jtr)
            rc = residuals(theta + delta)
            cc = float(rc @ rc)
            if cc < cost:
                gain = cost - cc
                theta, r, cost, lam, improved = theta + delta, rc, cc, lam * 0.3, True
                break
            lam *= 10
        if not improved or np.max(np.abs(delta)) < 1e-7 or gain < 1e-9 * cost:
            break
    return theta


def calibrate(quick: bool = False) -> dict[str, Any]:
    """Fit on every row; unless ``quick``, cross-validate by family and by GPU and derive the bands.

    Leaves core/speed_constants as they were (restored afterwards).
    """
    saved = current_params()
    try:
        return _calibrate(quick)
    finally:
        apply_params(saved)


def _calibrate(quick: bool) -> dict[str, Any]:
    rows, skipped, missing = load_rows()
    mat = Matrix(rows)
    everything = np.ones(len(rows), dtype=bool)
    start = np.log(np.array([PRIORS[n][0] for n in NAMES]))
    theta = fit(mat, everything, start, iters=200)
    result: dict[str, Any] = {
        "rows": rows,
        "skipped": skipped,
        "missing": missing,
        "theta": theta,
        "constants": fitted_values(theta),
        "resid": mat.predict(theta) - mat.y,
        "mat": mat,
        "calibrated_archs": sorted(a for a, src in sources_by_arch(rows).items() if len(src) >= MIN_SOURCES),
        "thin_archs": sorted(a for a, src in sources_by_arch(rows).items() if len(src) < MIN_SOURCES),
    }
    if quick:
        return result
    for split, (_, key) in SPLITS.items():
        result[split] = hold_out(
            lambda train: mat.predict(fit(mat, train, theta, iters=30)) - mat.y, [key(r) for r in rows]
        )
    derive_bands(result)
    # a segment whose held-out rows miss its calibrated band is not calibrated: rough, and the card says why
    result["missed_archs"] = sorted(missed_archs(result))
    result["calibrated_archs"] = [a for a in result["calibrated_archs"] if a not in result["missed_archs"]]
    result["kept_out_devices"] = sorted(kept_out_devices())
    apply_params(theta)
    result["production_gap"] = production_check(rows, result["resid"] + mat.y)
    return result


def kept_out_devices() -> set[str]:
    """Catalog ids of the devices whose rows stay out of the fit for want of a sourced spec (``UNSOURCED_SPECS``):
    the product never calls their speed calibrated (``core.speed.constants.KEPT_OUT_DEVICES``)."""
    from catalog.facts import FACTS_DIR, converted_rows, gpu_from_row

    catalog = {g.id: g for g in converted_rows(FACTS_DIR, "gpus.toml", "gpu", gpu_from_row)}
    out = set()
    for label in UNSOURCED_SPECS:
        for spec in catalog.values():
            names = {spec.name.lower(), spec.short_name.lower(), *(a.lower() for a in spec.aliases)}
            if label in names:
                out.add(spec.id)
    return out


def kept_out_check(theta: np.ndarray) -> list[str]:
    """The rows kept out for an unsourced spec (``UNSOURCED_SPECS``), predicted with the fitted constants and the spec
    they would have: graded, never fitted (a check out of sample, not a figure the bars apply to)."""
    import bench.speed_data as data

    saved = data.UNSOURCED_SPECS
    data.UNSOURCED_SPECS = frozenset()
    try:
        rows = [r for r in data.load_rows()[0] if r.gpu_key.lower().startswith(tuple(f"intel {s}" for s in saved))]
    finally:
        data.UNSOURCED_SPECS = saved
    if not rows:
        return []
    err = 100.0 * (np.exp(Matrix(rows).predict(theta)) / np.array([r.measured for r in rows]) - 1.0)
    out = []
    for kind in ("decode", "prefill"):
        for backend in sorted({r.backend for r in rows}):
            sel = np.array([r.kind == kind and r.backend == backend for r in rows])
            cells = " ".join(f"{e:+.0f}%" for e in err[sel])
            out.append(
                f"  {kind:<8} {backend:<7} n={int(sel.sum())}  median {np.median(np.abs(err[sel])):.0f}%  ({cells})"
            )
    return out


def production_check(rows: list[Row], log_pred: np.ndarray) -> float:
    """Re-predict every row through core/speed/estimate.py's public functions; the largest relative gap."""
    worst = 0.0
    for row, p in zip(rows, log_pred, strict=True):
        if row.legacy or row.early_amd:
            continue  # the build-era factors exist only in the fit
        worst = max(worst, abs(production_rate(row) / math.exp(p) - 1.0))
    return worst


def _placement(row: Row) -> tuple[Hardware, Placement]:
    """The row's setup wholly on its GPU(s), as a card places it."""
    hw = Hardware(gpu=row.gpu, count=row.n_gpus)
    mem, _ = breakdown(row.model, _quant(row.quant_id), hw, row.workload)
    off = Offload(
        mode="none",
        layers_on_gpu=row.model.n_layers,
        layers_total=row.model.n_layers,
        gpu_bytes=mem.total_bytes,
        bytes_in_ram=0,
        ram_usable_bytes=0,
        fits_ram=True,
    )
    return hw, Placement(memory=mem, offload=off, verdict="fits", weights=row.w)  # type: ignore[arg-type]


def production_rate(row: Row) -> float:
    """The tokens/s the product predicts for a calibration row (its setup wholly on the GPU), as a card would."""
    if row.kind == "decode":
        hw, place = _placement(row)
        return speed.decode_tokens_per_s(row.model, row.w, place, hw, row.workload, row.workload.context, row.quant_id)
    return row.n_tokens / production_prompt(row).seconds


def production_prompt(row: Row) -> speed.PromptTime:
    """A prompt row's time as the product predicts it, with attention's share of it."""
    hw, place = _placement(row)
    return speed.prompt_time(row.model, row.w, place, hw, row.workload, row.n_tokens, row.depth, row.quant_id)


_QUANTS: dict[str, Any] = {}


def _quant(qid: str) -> Any:
    if not _QUANTS:
        from catalog.facts import FACTS_DIR, converted_rows
        from catalog.facts import quant_from_row as convert

        _QUANTS.update({q.id: q for q in converted_rows(FACTS_DIR, "quants.toml", "quant", convert)})
    return _QUANTS[qid]


# ------------------------------------------------------------------------------------------------
# The constants block of core/speed/constants.py
# ------------------------------------------------------------------------------------------------


def _g(value: float) -> str:
    return f"{float(f'{value:.4g}')!r}"


def constants_block(result: dict[str, Any]) -> str:
    """The text between the BEGIN/END FITTED markers, from a full (not quick) calibration."""
    p = result["constants"]

    def fam(name: str, key: str, families: list[str] = FAMILIES) -> list[str]:
        return [f"{name}: dict[str, float] = {{"] + [f'    "{f}": {_g(p[f"{key}:{f}"])},' for f in families] + ["}"]

    def quant(name: str, key: str) -> str:
        items = ", ".join(['"f16": 1.0'] + [f'"{q}": {_g(p[f"{key}:{q}"])}' for q in QFAMS])
        return f"{name}: dict[str, float] = {{{items}}}"

    lines = fam("DECODE_BW_EFFICIENCY", "bw_eff") + fam("PREFILL_FLOPS_EFFICIENCY", "pp_eff", KERNEL_FAMILIES)
    lines += fam("LAYER_CYCLES", "cycles") + fam("ATTENTION_EFFICIENCY", "attn_eff", KERNEL_FAMILIES)
    lines += fam("MOE_TILE_TOKENS", "moe_tile", KERNEL_FAMILIES)
    lines += [
        f"CONSUMER_CLOCK_FACTOR = {_g(p['consumer_clock'])}",
        f"PRE_AMPERE_BANDWIDTH_FACTOR = {_g(p['old_bw'])}",
        f"PRE_AMPERE_MATRIX_FACTOR = {_g(p['old_pp'])}",
        f"IGPU_BANDWIDTH_FACTOR = {_g(p['igpu_bw'])}",
        f"IGPU_MATRIX_FACTOR = {_g(p['igpu_pp'])}",
        f"AMD_APU_MATRIX_FACTOR = {_g(p['apu_pp'])}",
        f"HBM_BANDWIDTH_FACTOR = {_g(p['hbm_bw'])}",
        f"MOE_EXPERT_EXTRA = {_g(p['moe_expert'])}",
        quant("QUANT_DECODE_FACTOR", "q_dec"),
        quant("QUANT_PREFILL_FACTOR", "q_pre"),
        f"PREFILL_NO_FLASH_ATTENTION_FACTOR = {_g(p['no_fa'])}",
        f"NO_CUDA_GRAPHS_LATENCY_FACTOR = {_g(p['no_graphs'])}",
        f"LAYER_SPLIT_HOP_S = {_g(p['hop'])}",
        f"XE_HPG_BANDWIDTH_FACTOR = {_g(p['xehpg_bw'])}",
    ]
    for name, bands in result["bands"].items():
        lines.append(f"{name}: dict[str, tuple[float, float]] = {{")
        lines += [f'    "{f}": ({lo!r}, {hi!r}),' for f, (lo, hi) in bands.items()] + ["}"]
    for name, bands in result["segment_bands"].items():
        lines.append(f"{name}: dict[str, tuple[float, float]] = {{")
        lines += [f'    "{f}": ({lo!r}, {hi!r}),' for f, (lo, hi) in bands.items()] + ["}"]
    for kind, (lo, hi) in result["moe_bands"].items():
        lines.append(f"MOE_{kind}_BAND: tuple[float, float] = ({lo!r}, {hi!r})")
    for name in ("calibrated_archs", "thin_archs", "missed_archs", "kept_out_devices"):
        lines += [f"{name.upper()}: frozenset[str] = frozenset(", "    {"]
        lines += [f'        "{a}",' for a in result[name]] + ["    }", ")"]
    return "\n".join(lines) + "\n"


def committed_block() -> str:
    text = CONSTANTS_FILE.read_text(encoding="utf-8")
    m = re.search(r"# BEGIN FITTED\n(.*?)# END FITTED", text, re.S)
    assert m, "markers missing in core/speed/constants.py"
    return m.group(1)


def write_readme_table(lines: list[str]) -> None:
    """Replace the speed table of the README's Accuracy section (from its header row to the blank line)."""
    text = README.read_text(encoding="utf-8")
    start = text.index(TABLE_HEAD)
    end = text.index("\n\n", start)
    README.write_text(text[:start] + "\n".join(lines) + text[end:], encoding="utf-8")


def write_block(block: str) -> None:
    text = CONSTANTS_FILE.read_text(encoding="utf-8")
    text = re.sub(r"(# BEGIN FITTED\n).*?(# END FITTED)", lambda m: m.group(1) + block + m.group(2), text, flags=re.S)
    CONSTANTS_FILE.write_text(text, encoding="utf-8")


# ------------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------------


def _print(result: dict[str, Any], show_rows: bool) -> None:
    rows = result["rows"]
    gpus, archs = len({r.gpu_key for r in rows}), len({r.arch for r in rows})
    print(f"speed calibration: {len(rows)} rows on {gpus} GPUs of {archs} generations; skipped {result['skipped']}")
    print(f"calibration GPUs not in the catalog (spec sheet in bench/speed_data.py): {', '.join(result['missing'])}")
    print("fitted constants:")
    for name, value in result["constants"].items():
        print(f"  {name:<20} {value:.4g}")
    if "bands" not in result:
        med = np.median(np.abs(100 * (np.exp(result["resid"]) - 1)))
        print(f"in-sample median absolute error {med:.1f}% (quick mode: no cross-validation)")
        return
    for name, band in result["bands"].items():
        print(f"  {name:<20} {band}")
    print(f"production path agrees with the fit to {result['production_gap']:.1e} (max relative gap)")
    for line in summary(result):
        print(line)
    print(f"kept out of the fit ({', '.join(sorted(UNSOURCED_SPECS))}: spec without a primary source), graded only:")
    for line in kept_out_check(result["theta"]):
        print(line)
    if show_rows:
        for row, r, g, f in zip(rows, result["resid"], result["loso"], result["loao"], strict=True):
            print(
                f"  {row.index:<9} {row.kind:<7} {row.gpu_key[:24]:<24} {row.arch:<12} {row.backend:<8} "
                f"x{row.n_gpus} {row.model.id:<14} {row.quant_id:<10} {row.label[:14]:<14} "
                f"meas {row.measured:8.1f} pred {row.measured * math.exp(r):8.1f} {100 * (math.exp(r) - 1):+6.1f}% "
                f"source-out {100 * (math.exp(g) - 1):+6.1f}% arch-out {100 * (math.exp(f) - 1):+6.1f}% {row.source}"
            )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fit only, no cross-validation (a few seconds)")
    parser.add_argument("--rows", action="store_true", help="print every row's prediction")
    parser.add_argument("--write", action="store_true", help="write the fitted constants and the README accuracy table")
    args = parser.parse_args(argv)
    result = calibrate(quick=args.quick and not args.write)
    _print(result, args.rows)
    if args.write:
        write_block(constants_block(result))
        write_readme_table(markdown_table(result))
        print(f"wrote the fitted block of {CONSTANTS_FILE.name} and the accuracy table of {README.name}")
    elif "bands" in result and constants_block(result) != committed_block():
        print("NOTE: committed constants differ from this fit; run with --write")


if __name__ == "__main__":
    main()

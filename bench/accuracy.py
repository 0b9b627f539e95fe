"""Grades the estimator and prints median / p90 absolute % error (and band coverage for speed).

    .venv/bin/python bench/accuracy.py [--quick] [--rows] [--shared DIR]

Speed (the README "Accuracy" figures): decode and prefill against the llama-bench results in
bench/calibration/*.csv, leave-one-source-out (the headline), leave-one-architecture-out and
leave-one-family-out, per backend, vendor and issue-24 case; bench/speed_calibration.py does the
fitting. ``--quick`` fits once and prints in-sample figures only (a few seconds; CI runs it).
Memory: weights (recipe only: measured catalog sizes are ignored here), KV cache and total
llama.cpp GPU memory against load logs; vLLM KV capacity. Needs ../shared/calibration (``--shared``);
skipped when it is not there.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.facts import load_facts
from core.fit import breakdown
from core.memory import kv_cache_bytes
from core.models import GIB, MIB, Catalog, Engine, Hardware, KvCacheType, Workload
from core.weights import recipe_weights

CALIBRATION = Path(__file__).resolve().parents[2] / "shared" / "calibration"  # replaced by --shared

# calibration model name (prefix, lower case) -> catalog model id
MODEL_MAP = [
    ("meta-llama/llama-3.1-8b", "llama-3.1-8b-instruct"),
    ("meta-llama/meta-llama-3.1-8b", "llama-3.1-8b-instruct"),
    ("meta-llama/meta-llama-3-8b", "llama-3-8b-instruct"),
    ("meta-llama-3-8b", "llama-3-8b-instruct"),
    ("shisa-ai/shisa-v2-llama3.1-8b", "llama-3.1-8b-instruct"),
    ("meta-llama/llama-3.3-70b", "llama-3.3-70b-instruct"),
    ("meta-llama/llama-2-7b", "llama-2-7b"),
    ("llama-2-7b", "llama-2-7b"),
    ("meta-llama/llama-2-13b", "llama-2-13b"),
    ("llama-2-13b", "llama-2-13b"),
    ("microsoft/orca-2-13b", "llama-2-13b"),
    ("meta-llama/llama-2-70b", "llama-2-70b"),
    ("llama-2-70b", "llama-2-70b"),
    ("qwen/qwen3-1.7b", "qwen3-1.7b"),
    ("qwen/qwen3-8b", "qwen3-8b"),
    ("qwen/qwen3-14b", "qwen3-14b"),
    ("qwen/qwen3-32b", "qwen3-32b"),
    ("qwen/qwen3-235b-a22b-instruct-2507", "qwen3-235b-a22b-instruct-2507"),
    ("qwen/qwen3-235b-a22b", "qwen3-235b-a22b"),
    ("qwen/qwen3-vl-235b-a22b", "qwen3-235b-a22b"),
    ("qwen/qwen3-coder-30b-a3b", "qwen3-coder-30b-a3b"),
    ("google/gemma-2-9b", "gemma-2-9b-it"),
    ("google/gemma-3-27b", "gemma-3-27b-it"),
    ("tencent/hunyuan-a13b", "hunyuan-a13b-instruct"),
    ("openai/gpt-oss-120b", "gpt-oss-120b"),
    ("openai/gpt-oss-20b", "gpt-oss-20b"),
    ("moonshotai/kimi-k2-instruct", "kimi-k2-instruct"),
    ("deepseek-ai/deepseek-r1-distill-qwen-7b", "deepseek-r1-distill-qwen-7b"),
    ("deepseek-ai/deepseek-v3-0324", "deepseek-v3-0324"),
    ("deepseek-ai/deepseek-r1-0528", "deepseek-r1-0528"),
    ("deepseek-ai/deepseek-v3.1", "deepseek-v3.1"),
    ("thudm/glm-z1-32b-0414", "glm-4-32b-0414"),
]
QUANT_PATTERN = re.compile(
    r"(UD-[A-Z0-9_]+_XL|UD-IQ[0-9]_[A-Z]+|IQ[1-4]_[A-Z]+|Q[2-8]_K_[SML]|Q[2-8]_K|Q[4-8]_[01]|BF16|F16)", re.I
)


def model_id(name: str) -> str | None:
    low = name.lower()
    for prefix, mid in MODEL_MAP:
        if low.startswith(prefix):
            return mid
    return None


def quant_id(text: str) -> str | None:
    if "mxfp4" in text.lower():
        return "MXFP4"
    if "ik-only" in text or "mix-" in text or "custom" in text:
        return None
    match = QUANT_PATTERN.search(text.upper().replace("I1-", ""))
    return match.group(1).upper() if match else None


def to_bytes(value: str, unit: str) -> float:
    number = float(value)
    return number * {"GiB": GIB, "MiB": MIB, "GB": 1e9, "bytes": 1}.get(unit, 1)


def summary(errors: list[float]) -> str:
    if not errors:
        return "no rows"
    abs_err = sorted(abs(e) for e in errors)
    p90 = abs_err[min(len(abs_err) - 1, round(0.9 * (len(abs_err) - 1)))]
    return f"n={len(errors):>3}  median {statistics.median(abs_err):5.2f}%  p90 {p90:6.2f}%"


def first_number(text: str) -> float | None:
    match = re.search(r"[\d.]+", text or "")
    return float(match.group()) if match else None


def grade_weights(catalog: Catalog, show: bool) -> list[float]:
    errors = []
    for row in csv.DictReader((CALIBRATION / "gguf_sizes.csv").read_text(encoding="utf-8").splitlines()):
        mid, qid = model_id(row["base_model"]), quant_id(row["file_or_quant"])
        model, quant = catalog.model(mid or ""), catalog.quant(qid or "")
        if not (model and quant):
            continue
        measured = to_bytes(row["size_value"], row["size_unit"])
        est = recipe_weights(model, quant).total_bytes
        errors.append(100 * (est - measured) / measured)
        if show:
            print(
                f"  weights {mid:<32} {qid:<11} measured {measured / GIB:8.2f} est {est / GIB:8.2f} GiB {errors[-1]:+6.1f}%"
            )
    return errors


def _kv_type(text: str) -> KvCacheType:
    text = text.lower()
    for kind in KvCacheType:
        if kind.value in text:
            return kind
    return KvCacheType.F16


def grade_llamacpp(catalog: Catalog, show: bool) -> tuple[list[float], list[float]]:
    kv_errors, total_errors = [], []
    for row in csv.DictReader((CALIBRATION / "llamacpp_memory.csv").read_text(encoding="utf-8").splitlines()):
        mid, qid = model_id(row["model"]), quant_id(row["gguf_file_or_quant"])
        model, quant = catalog.model(mid or ""), catalog.quant(qid or "")
        if not model or "ik_llama" in row["engine"] or "mla=" in row["engine"]:
            continue
        ctx = int(row["n_ctx"])
        k, v = _kv_type(row["kv_type_k"]), _kv_type(row["kv_type_v"])
        fa = row["flash_attn"].strip() in ("1", "on")
        ub = int(first_number(row["n_ubatch"]) or 512)
        par = int(first_number(row["n_parallel"]) or 1)
        kv_mib = first_number(row["kv_MiB"])
        if kv_mib:
            wl_k = Workload(context=ctx, kv_cache=k, flash_attention=fa, n_ubatch=ub)
            wl_v = Workload(context=ctx, kv_cache=v, flash_attention=fa, n_ubatch=ub)
            est = (kv_cache_bytes(model, wl_k) + kv_cache_bytes(model, wl_v)) / 2 / MIB
            kv_errors.append(100 * (est - kv_mib) / kv_mib)
            if show:
                print(
                    f"  kv      {mid:<32} ctx {ctx:>6} {k.value}/{v.value} logged {kv_mib:8.1f} est {est:8.1f} MiB {kv_errors[-1]:+6.1f}%"
                )
        logged = first_number(row["total_gpu_reported_MiB"]) or first_number(row["measured_total_MiB"])
        size = first_number(row["model_size_reported"]) if "GiB" in row["model_size_reported"] else None
        if not (logged and quant) or par != 1:
            continue
        n_gpus = max(1, int(first_number(row["n_gpus"]) or 1))
        gpu = next((g for g in catalog.gpus if g.unified_memory and "8060s" in row["gpu"].lower()), None)
        gpu = gpu or next(g for g in catalog.gpus if g.id == "rtx-4090")
        measured_w = None
        if size:
            from core.models import Provenance, QuantSize

            measured_w = QuantSize(
                model_id=model.id,
                quant_id=quant.id,
                size_bytes=round(size * GIB),
                provenance=Provenance(source="calibration", as_of="2026"),
            )
        if re.match(r"^\d+ B \(", row["model_size_reported"]):
            from core.models import Provenance, QuantSize

            measured_w = QuantSize(
                model_id=model.id,
                quant_id=quant.id,
                size_bytes=int(row["model_size_reported"].split()[0]),
                provenance=Provenance(source="calibration", as_of="2026"),
            )
        wl = Workload(context=ctx, kv_cache=k, flash_attention=fa, n_ubatch=ub)
        mem, _ = breakdown(model, quant, Hardware(gpu=gpu, count=n_gpus), wl, measured_w)
        est = mem.total_bytes / MIB
        # the old "total VRAM used" line and the weights/KV/compute sums leave out the driver context
        if row["total_gpu_reported_MiB"]:
            est -= 340 * n_gpus
        total_errors.append(100 * (est - logged) / logged)
        if show:
            print(
                f"  total   {mid:<32} ctx {ctx:>6} {row['gpu'][:28]:<28} logged {logged:9.1f} est {est:9.1f} MiB {total_errors[-1]:+6.1f}%"
            )
    return kv_errors, total_errors


def grade_vllm(catalog: Catalog, show: bool) -> list[float]:
    """vLLM's logged KV capacity (tokens) against our per-token KV size: bytes per token exact."""
    errors = []
    for row in csv.DictReader((CALIBRATION / "vllm_memory.csv").read_text(encoding="utf-8").splitlines()):
        model = catalog.model(model_id(row["model"]) or "")
        tokens = first_number(row["kv_cache_tokens"].replace(",", ""))
        note = row["notes"] + " " + row["other_reported"]
        match = re.search(r"([\d.]+)\s*KiB/token", note) or re.search(r"x\s*([\d,]+)\s*B", note)
        if not (model and tokens and match):
            continue
        logged = float(match.group(1).replace(",", "")) * (1024 if "KiB" in match.group(0) else 1)
        est = kv_cache_bytes(model, Workload(context=16, engine=Engine.VLLM, kv_cache=KvCacheType.BF16)) / 16
        errors.append(100 * (est - logged) / logged)
        if show:
            print(f"  vllm kv/token {model.id:<24} logged {logged:9.0f} est {est:9.0f} B {errors[-1]:+6.2f}%")
    return errors


def grade_memory(show: bool) -> None:
    catalog = load_facts()
    print(f"memory model vs {CALIBRATION} (absolute % error)")
    print(f"  weights (recipe, no measured size)   {summary(grade_weights(catalog, show))}")
    kv, total = grade_llamacpp(catalog, show)
    print(f"  KV cache (llama.cpp logs)            {summary(kv)}")
    print(f"  KV bytes/token (vLLM logs)           {summary(grade_vllm(catalog, show))}")
    print(f"  total llama.cpp GPU memory           {summary(total)}")


def grade_speed(quick: bool) -> None:
    from bench.speed_calibration import calibrate
    from bench.speed_validation import summary as speed_summary

    result = calibrate(quick=quick)
    rows = result["rows"]
    print(
        f"speed model vs {len(rows)} llama-bench results in bench/calibration ({len({r.gpu_key for r in rows})} GPUs, "
        f"{len({r.arch for r in rows})} chip generations)"
    )
    if quick:
        for kind, mask in (("decode", result["mat"].decode), ("prefill", ~result["mat"].decode)):
            err = [abs(100 * (math.exp(r) - 1)) for r in result["resid"][mask]]
            print(f"  {kind:<8} in-sample  {summary(err)}  (quick: no cross-validation)")
        return
    for line in speed_summary(result):
        print("  " + line)


def main(argv: list[str] | None = None) -> None:
    global CALIBRATION
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="speed in-sample only, no cross-validation")
    parser.add_argument("--rows", action="store_true", help="print every graded memory row")
    parser.add_argument("--markdown", action="store_true", help="print the README speed table and stop")
    parser.add_argument("--shared", type=Path, default=CALIBRATION, help="shared/calibration directory (memory)")
    args = parser.parse_args(argv)
    CALIBRATION = args.shared
    if args.markdown:
        from bench.speed_calibration import calibrate
        from bench.speed_validation import markdown_table

        print("\n".join(markdown_table(calibrate())))
        return
    if (CALIBRATION / "gguf_sizes.csv").exists():
        grade_memory(args.rows)
    else:
        print(f"memory model: skipped ({CALIBRATION} not found; pass --shared)")
    grade_speed(args.quick)


if __name__ == "__main__":
    main()

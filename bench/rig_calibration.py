"""Calibrate to my rig (issue 38), graded out of sample: leave one model out per rig, with one anchor run.

    .venv/bin/python bench/rig_calibration.py            # the table
    .venv/bin/python bench/rig_calibration.py --write    # and README's block
    .venv/bin/python bench/rig_calibration.py --quick    # the same (seconds; CI runs it)

Data: the llama-bench rows of ``bench/calibration/`` (``bench.speed_data``). A rig is one person's
machine as one source reports it: the same source, device, device count, backend and llama.cpp build.
On every rig with runs of at least two models, each model (all its quants) is held out in turn; each
other model is in turn the anchor, one pasted llama-bench run (its decode and prefill rows): the factor
measured / predicted, as ``core.runs.calibrate`` keeps and applies it, scales the held-out model's
predictions: decode by the anchor's decode rows, prefill by its prefill rows of the same quant kernel
family only (a held-out prefill row whose family the anchor lacks stays as the formula predicts it).
Predictions are the speed fit's with the rig's source held out (``bench/speed_calibration.py``,
leave-one-source-out: a user's rig is never in the calibration data). The error of a held-out row is
|calibrated prediction / measured - 1|, pooled over every anchor, beside the uncalibrated error of the
same prediction on the same rows. Reported per kind and per backend. ``tests/test_rig_calibration.py`` recomputes README's block
and holds the targets (decode median <= 6 %, prefill median <= 12 %).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file, too

from bench.readme_block import read_block, write_block
from bench.speed_calibration import calibrate
from bench.speed_data import Row, raw_rows

BLOCK = "rig-calibration"  # README's block between <!-- rig-calibration:begin/end --> (bench/readme_block.py)
TARGETS = {"decode": 6.0, "prefill": 12.0}  # median % error after calibration (issue 38)
KINDS = ("decode", "prefill")


def rigs(rows: list[Row]) -> dict[tuple[str, ...], list[Row]]:
    """Rows by rig, only rigs with runs of two models or more."""
    raw = dict(raw_rows())
    by_rig: dict[tuple[str, ...], list[Row]] = defaultdict(list)
    for r in rows:
        source = raw[r.index]
        by_rig[(source["source"], r.gpu_key, str(r.n_gpus), r.backend, source["build"])].append(r)
    return {k: v for k, v in by_rig.items() if len({_model(r) for r in v}) >= 2}


def _model(r: Row) -> str:
    return r.model.id


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _factor(anchor: list[Row], target: Row, predicted: dict[str, float]) -> float:
    """What the anchor's runs scale ``target`` by (``core.runs.calibrate``'s rule; 1 where none applies)."""
    runs = [r for r in anchor if r.kind == target.kind and (r.kind == "decode" or r.qfam == target.qfam)]
    return _geomean([r.measured / predicted[r.index] for r in runs]) if runs else 1.0


def grade(rows: list[Row], predicted: dict[str, float]) -> dict[str, dict[str, list[float]]]:
    """Per segment ("all", each backend) and "<kind>:before"/"<kind>:after": absolute % errors."""
    errors: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for rig_rows in rigs(rows).values():
        models = sorted({_model(r) for r in rig_rows})
        for held in models:
            targets = [r for r in rig_rows if _model(r) == held]
            for anchor in (m for m in models if m != held):
                runs = [r for r in rig_rows if _model(r) == anchor]
                for r in targets:
                    before = abs(predicted[r.index] / r.measured - 1.0) * 100
                    after = abs(predicted[r.index] * _factor(runs, r, predicted) / r.measured - 1.0) * 100
                    for segment in ("all", r.backend):
                        errors[segment][f"{r.kind}:before"].append(before)
                        errors[segment][f"{r.kind}:after"].append(after)
    return errors


def table(errors: dict[str, dict[str, list[float]]], rig_count: int) -> list[str]:
    lines = [
        f"Leave one model out per rig, one anchor run ({rig_count} rigs with two models or more; "
        "`bench/rig_calibration.py`):",
        "",
        "| segment | kind | held-out rows | median error, formula | median error, calibrated | p90, calibrated |",
        "|---|---|--:|--:|--:|--:|",
    ]
    for segment in ("all", *sorted(s for s in errors if s != "all")):
        for kind in KINDS:
            after = errors[segment].get(f"{kind}:after", [])
            if not after:
                continue
            before = errors[segment][f"{kind}:before"]
            p90 = sorted(after)[min(len(after) - 1, int(0.9 * len(after)))]
            lines.append(
                f"| {segment} | {kind} | {len(after)} | {statistics.median(before):.1f} % "
                f"| {statistics.median(after):.1f} % | {p90:.1f} % |"
            )
    return lines


def report() -> tuple[list[str], dict[str, float]]:
    """README's lines, and the calibrated median per kind over all rigs."""
    fitted = calibrate()
    rows = fitted["rows"]
    held_out = {r.index: r.measured * math.exp(e) for r, e in zip(rows, fitted["loso"], strict=True)}
    errors = grade(rows, held_out)
    medians = {kind: statistics.median(errors["all"][f"{kind}:after"]) for kind in KINDS}
    return table(errors, len(rigs(rows))), medians


def write_readme(lines: list[str]) -> None:
    write_block(BLOCK, lines)


def readme_block() -> list[str]:
    return read_block(BLOCK)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the same report (it takes seconds: one refit per source)")
    parser.add_argument("--write", action="store_true", help="also write README's block")
    args = parser.parse_args(argv)
    lines, medians = report()
    print("\n".join(lines))
    for kind, target in TARGETS.items():
        print(f"{kind}: calibrated median {medians[kind]:.1f} % (target <= {target:g} %)")
    if args.write:
        write_readme(lines)


if __name__ == "__main__":
    main()

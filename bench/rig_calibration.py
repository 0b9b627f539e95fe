"""Calibrate to my rig (issue 38), graded out of sample: leave one model out per rig, with one anchor run.

    .venv/bin/python bench/rig_calibration.py            # the table
    .venv/bin/python bench/rig_calibration.py --write    # and README's block
    .venv/bin/python bench/rig_calibration.py --quick    # the same (seconds; CI runs it)

Data: the llama-bench rows of ``bench/calibration/`` (``bench.speed_data``). A rig is one person's
machine as one source reports it: the same source, device, device count, backend and llama.cpp build.
On every rig with runs of at least two models, each model (all its quants) is held out in turn; each
other model is in turn the anchor, one pasted llama-bench run (its decode and prefill rows): the factors
measured / predicted go through ``core.runs.calibrate.combine`` as the product keeps them, and scale the
held-out model's predictions as it applies them: decode by the anchor's decode rows, prefill by its
prompt rows split into GEMM and attention factors (each row's attention share as the product estimates
it, ``PromptTime``) and applied at the held-out row's own share, each drawn toward 1 by ``PRIOR_MODELS``
(one anchor model: half way, in log). The two prompt rules this replaced (``RULES``) are graded beside it.
Predictions are the speed fit's with the rig's source held out (``bench/speed_calibration.py``,
leave-one-source-out: a user's rig is never in the calibration data). The error of a held-out row is
|calibrated prediction / measured - 1|, pooled over every anchor, beside the uncalibrated error of the
same prediction on the same rows. Reported per kind and per backend, with the variance components that
set ``PRIOR_MODELS`` (``components``); ``--detail`` breaks the errors down by model, quant family, test
shape and MoE. ``tests/test_rig_calibration.py`` recomputes README's block (targets: decode median <= 6 %,
prefill median <= 12 %).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file, too

from bench.readme_block import read_block, write_block
from bench.speed_calibration import calibrate, production_prompt
from bench.speed_data import Row, raw_rows
from core.runs.calibrate import PRIOR_MODELS, RunFactor, combine

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


def _factor(anchor: list[Row], target: Row, predicted: dict[str, float], shares: dict[str, float]) -> float:
    """What the anchor's runs scale ``target`` by: ``core.runs.calibrate``'s own combination (1 where none applies).
    ``shares`` without a row's index: that run (and target) counts as a short prompt, the rules ``RULES`` compare."""
    factors = [
        RunFactor(
            gpu_id="rig",
            backend="rig",
            quant=r.quant_id,
            kind=r.kind,  # type: ignore[arg-type]
            factor=r.measured / predicted[r.index],
            as_of="2026-01-01",
            model_id=_model(r),
            attention_share=shares.get(r.index, 0.0),
        )
        for r in anchor
    ]
    (cal,) = combine(factors)
    found = cal.decode if target.kind == "decode" else cal.prefill_for(shares.get(target.index, 0.0))
    return found if found is not None else 1.0


def attention_shares(rows: list[Row]) -> dict[str, float]:
    """Each prompt row's attention share of its time as the product estimates it (``PromptTime``), what a pasted
    run of that setup records."""
    return {r.index: production_prompt(r).attention_share for r in rows if r.kind == "prefill"}


def backend_segments(r: Row) -> tuple[str, ...]:
    return ("all", r.backend)


def detail_segments(r: Row) -> tuple[str, ...]:
    """``--detail``: the held-out row's model, quant kernel family, test shape and MoE or dense."""
    return (f"model {r.model.id}", f"quant {r.qfam}", f"test {_shape(r)}", "MoE" if r.model.is_moe else "dense")


# The product's prompt rule (GEMMs and attention apart) and two it replaced, graded on the same rows
RULES = {
    "split": "GEMMs and attention apart (the product's)",
    "family": "one prompt factor per quant kernel family",
    "one": "one prompt factor for every family",
}


def grade(
    rows: list[Row],
    predicted: dict[str, float],
    segments: Callable[[Row], tuple[str, ...]] = backend_segments,
    rule: str = "split",
) -> dict[str, dict[str, list[float]]]:
    """Per segment (``segments`` of the held-out row) and "<kind>:before"/"<kind>:after": absolute % errors."""
    errors: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    shares = attention_shares(rows) if rule == "split" else {}
    for rig_rows in rigs(rows).values():
        models = sorted({_model(r) for r in rig_rows})
        for held in models:
            targets = [r for r in rig_rows if _model(r) == held]
            for anchor in (m for m in models if m != held):
                runs = [r for r in rig_rows if _model(r) == anchor]
                for r in targets:
                    used = [a for a in runs if rule != "family" or a.kind == "decode" or a.qfam == r.qfam]
                    before = abs(predicted[r.index] / r.measured - 1.0) * 100
                    after = abs(predicted[r.index] * _factor(used, r, predicted, shares) / r.measured - 1.0) * 100
                    for segment in segments(r):
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


def ceilings(rows: list[Row], predicted: dict[str, float]) -> list[str]:
    """The median error left by a factor no anchor can give: each rig's own geometric mean factor of the kind over
    all its rows, the target's included (in-sample), and one per rig, kind and test shape: what one number per rig
    can reach at best, for ``--detail``."""
    out = []
    for name, key in (("per rig", lambda r: r.kind), ("per rig and test shape", lambda r: (r.kind, _shape(r)))):
        errors: dict[str, list[float]] = defaultdict(list)
        for rig_rows in rigs(rows).values():
            groups: dict[object, list[Row]] = defaultdict(list)
            for r in rig_rows:
                groups[key(r)].append(r)
            for group in groups.values():
                log_f = statistics.fmean(math.log(r.measured / predicted[r.index]) for r in group)
                for r in group:  # weighted as grade pools them: once per other model of the rig
                    others = len({_model(o) for o in rig_rows}) - 1
                    err = abs(predicted[r.index] * math.exp(log_f) / r.measured - 1.0) * 100
                    errors[r.kind] += [err] * others
        out.append(
            f"ceiling, one in-sample factor {name}: "
            + ", ".join(f"{kind} {statistics.median(errors[kind]):.1f} %" for kind in KINDS)
        )
    return out


def _shape(r: Row) -> str:
    return "batched-bench" if "batched" in r.label else (f"pp/tg@d{r.depth}" if r.depth else "depth 0")


def components(rows: list[Row], predicted: dict[str, float], kind: str) -> tuple[float, float]:
    """(tau, sigma) of the held-out log factors log(measured / predicted) of ``kind``, method of moments over the
    rigs: each model's mean on its rig is the rig's offset u (mean 0, sd tau: the fit is centred) plus that
    model's own error (sd sigma); sigma from the spread of a rig's model means, tau from the spread of the
    rigs' means less sigma's share of it."""
    offsets, spreads, sizes = [], [], []
    for rig_rows in rigs(rows).values():
        by_model: dict[str, list[float]] = defaultdict(list)
        for r in rig_rows:
            if r.kind == kind:
                by_model[_model(r)].append(math.log(r.measured / predicted[r.index]))
        means = [statistics.fmean(v) for v in by_model.values()]
        if len(means) >= 2:
            offsets.append(statistics.fmean(means))
            spreads.append(statistics.variance(means))
            sizes.append(len(means))
    sigma2 = statistics.fmean(spreads)
    tau2 = max(0.0, statistics.fmean(u * u for u in offsets) - sigma2 * statistics.fmean(1 / n for n in sizes))
    return math.sqrt(tau2), math.sqrt(sigma2)


def components_line(rows: list[Row], predicted: dict[str, float]) -> str:
    parts = []
    for kind in KINDS:
        tau, sigma = components(rows, predicted, kind)
        ratio = f"{sigma**2 / tau**2:.1f}" if tau > 0 else "inf"
        parts.append(f"{kind} tau {100 * tau:.0f} %, sigma {100 * sigma:.0f} %, sigma²/tau² {ratio}")
    return (
        "Held-out log factors on these rigs: rig offset (tau) and one model's own error on its rig (sigma): "
        + "; ".join(parts)
        + f". A factor is drawn toward 1 as n / (n + {PRIOR_MODELS:g}) for runs of n models "
        "(`core/runs/calibrate.py`, `PRIOR_MODELS`)."
    )


def held_out() -> tuple[list[Row], dict[str, float]]:
    """The rows and their predictions by the speed fit without their source."""
    fitted = calibrate()
    rows = fitted["rows"]
    return rows, {r.index: r.measured * math.exp(e) for r, e in zip(rows, fitted["loso"], strict=True)}


def report(fitted: tuple[list[Row], dict[str, float]] | None = None) -> tuple[list[str], dict[str, float]]:
    """README's lines, and the calibrated median per kind over all rigs (``fitted``: ``held_out()``'s, when at hand)."""
    rows, predicted = fitted or held_out()
    errors = grade(rows, predicted)
    medians = {kind: statistics.median(errors["all"][f"{kind}:after"]) for kind in KINDS}
    others = [
        f"{RULES[rule]} {statistics.median(grade(rows, predicted, rule=rule)['all']['prefill:after']):.1f} %"
        for rule in RULES
        if rule != "split"
    ]
    compared = "Prefill after calibration on the same rows with the rules it replaced: " + "; ".join(others) + "."
    return [*table(errors, len(rigs(rows))), "", components_line(rows, predicted), "", compared], medians


def write_readme(lines: list[str]) -> None:
    write_block(BLOCK, lines)


def readme_block() -> list[str]:
    return read_block(BLOCK)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the same report (it takes seconds: one refit per source)")
    parser.add_argument("--write", action="store_true", help="also write README's block")
    parser.add_argument("--detail", action="store_true", help="also the errors by model, quant family, test, MoE")
    args = parser.parse_args(argv)
    rows, predicted = held_out()
    lines, medians = report((rows, predicted))
    print("\n".join(lines))
    if args.detail:
        print("\n".join(["", *table(grade(rows, predicted, detail_segments), len(rigs(rows)))[2:], ""]))
        print("\n".join(ceilings(rows, predicted)))
    for kind, target in TARGETS.items():
        print(f"{kind}: calibrated median {medians[kind]:.1f} % (target <= {target:g} %)")
    if args.write:
        write_readme(lines)


if __name__ == "__main__":
    main()

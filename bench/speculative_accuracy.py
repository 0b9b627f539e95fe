"""Speculative decoding: predicted against published speed-ups (issue 35), held out by source.

    .venv/bin/python bench/speculative_accuracy.py            # the table
    .venv/bin/python bench/speculative_accuracy.py --write    # and README's block
    .venv/bin/python bench/speculative_accuracy.py --fit      # refit core.speculative.COSTS (prints them)
    .venv/bin/python bench/speculative_accuracy.py --quick    # the same table (seconds; CI runs it)

Data: the ``[[measured]]`` rows of ``catalog/facts/speculative.toml``, each with its source. Every row is
predicted the way the fit card predicts it (``core.speculative``): the draft's and the target's decode
speed (and the target's prefill) from the estimator on the row's device(s), a head's cost from its
parameters, the acceptance by ``acceptance_for`` (the same pair, else family, method and task), the draft
length the row ran (or the best one where the engine chose per step). "predicted" uses the shipped
``COSTS`` and every row; "held out" refits the constants without the row's source and takes the
acceptance from the other sources only. ``tests/test_speculative_accuracy.py`` recomputes README's
block and holds the target (at least 80 % of rows within 25 %, held out).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file, too

from bench.readme_block import read_block, write_block
from catalog.extra_facts import spec_measurements
from catalog.facts import load_facts
from core.estimate import Request, estimate
from core.models import Catalog, Engine
from core.speculative import (
    COSTS,
    HEAD_K_MAX,
    MAX_DRAFT,
    SpecCosts,
    SpecMeasurement,
    acceptance_for,
    best_draft_length,
    draft_model_cost,
    head_cost,
    speedup,
)

BLOCK = "speculative-accuracy"  # README's block between <!-- speculative-accuracy:begin/end --> (bench/readme_block.py)
WITHIN = 0.25
TARGET_SHARE = 0.8  # of rows within 25 %, held out
GRID: dict[str, tuple[float, ...]] = {
    "draft_factor": tuple(1.0 + 0.25 * i for i in range(21)),  # >= 1: a draft step is never faster than its decode
    "head_factor": tuple(0.5 + 0.25 * i for i in range(31)),
    "verify_local": tuple(0.02 * i for i in range(26)),
    "verify_served": tuple(0.01 * i for i in range(21)),
}


class Setup:
    """What the estimator says about one row's hardware: the target's decode and prefill, the draft's decode."""

    def __init__(self, row: SpecMeasurement, catalog: Catalog) -> None:
        self.row = row
        target = catalog.model(row.target)
        assert target is not None, row.target
        self.target = target
        self.target_tps = self.draft_tps = 0.0
        self.prefill_ratio = 0.0
        if row.method == "draft":
            self.target_tps, prefill = _speed(catalog, row.target, row.device, row.target_quant, row.gpus)
            self.draft_tps, _ = _speed(catalog, row.draft, row.draft_device or row.device, row.draft_quant, 1)
            self.prefill_ratio = self.target_tps / prefill

    def cost(self, costs: SpecCosts) -> float:
        if self.row.method == "draft":
            return draft_model_cost(self.target_tps, self.draft_tps, costs)
        return head_cost(self.target, self.row.method, costs)


def _speed(catalog: Catalog, model_id: str, gpu_id: str, quant_id: str, count: int) -> tuple[float, float]:
    model, gpu, quant = catalog.model(model_id), catalog.gpu(gpu_id), catalog.quant(quant_id)
    assert model is not None and gpu is not None and quant is not None, (model_id, gpu_id, quant_id)
    request = Request(quant=quant_id, context=4096, engine=Engine.LLAMA_CPP, gpu_count=count)
    est = estimate(model, gpu, quant, request, catalog.size(model_id, quant_id))
    return est.speed.decode_tokens_per_s, est.speed.prefill_tokens_per_s


def predict(setup: Setup, costs: SpecCosts, alpha: float) -> float:
    """The predicted speed-up of one row with these constants at per-token acceptance ``alpha``."""
    row = setup.row
    c, verify = setup.cost(costs), costs.verify(row.engine)
    if row.k:
        return speedup(alpha, row.k, c, verify, setup.prefill_ratio)
    k_max = MAX_DRAFT if row.method == "draft" else HEAD_K_MAX
    return best_draft_length(alpha, c, verify, setup.prefill_ratio, k_max)[1]


def alphas(setups: Sequence[Setup], rated: Sequence[SpecMeasurement], fam: Callable[[str], str]) -> list[float]:
    """Each row's acceptance as the card finds it (``acceptance_for``) among ``rated``."""
    out = []
    for s in setups:
        found = acceptance_for(rated, fam, s.target, s.row.method, s.row.task, s.row.draft)
        assert found is not None, s.row.id
        out.append(found[0])
    return out


def _loss(setups: Sequence[Setup], costs: SpecCosts, alpha: Sequence[float]) -> float:
    return sum(math.log(predict(s, costs, a) / s.row.speedup) ** 2 for s, a in zip(setups, alpha, strict=True))


def fit(setups: Sequence[Setup], alpha: Sequence[float]) -> SpecCosts:
    """Coordinate descent over ``GRID`` from the shipped constants (squared log error)."""
    best = COSTS
    for _ in range(3):
        for name, values in GRID.items():
            best = min(
                (best.model_copy(update={name: v}) for v in values),
                key=lambda c: (round(_loss(setups, c, alpha), 12), abs(getattr(c, name) - getattr(best, name))),
            )
    return best


def report() -> tuple[list[str], dict[str, float]]:
    """README's lines, and the shares within 25 % (in sample, held out) and the held-out median error."""
    catalog = load_facts()

    def family_of(model_id: str) -> str:
        m = catalog.model(model_id)
        return m.family if m is not None else ""

    rows = spec_measurements()
    setups = [Setup(r, catalog) for r in rows]
    predicted = {s.row.id: predict(s, COSTS, a) for s, a in zip(setups, alphas(setups, rows, family_of), strict=True)}
    held: dict[str, float] = {}
    for source in dict.fromkeys(r.source_url for r in rows):
        train = [s for s in setups if s.row.source_url != source]
        rated = [r for r in rows if r.source_url != source]
        costs = fit(train, alphas(train, rated, family_of))
        test = [s for s in setups if s.row.source_url == source]
        for s, a in zip(test, alphas(test, rated, family_of), strict=True):
            held[s.row.id] = predict(s, costs, a)
    lines = [
        f"{len(rows)} published runs from {len({r.source_url for r in rows})} sources "
        "(`catalog/facts/speculative.toml`, `bench/speculative_accuracy.py`); held out: constants refitted and "
        "acceptance taken without the row's source.",
        "",
        "| target | draft | device | engine | task | k | measured | predicted | error | held out | error | source |",
        "|---|---|---|---|---|--:|--:|--:|--:|--:|--:|---|",
    ]
    errors, held_errors = [], []
    for r in rows:
        e, h = predicted[r.id] / r.speedup - 1, held[r.id] / r.speedup - 1
        errors.append(abs(e))
        held_errors.append(abs(h))
        draft = {"mtp": "MTP layer", "eagle3": "EAGLE-3 head"}.get(r.method, f"{r.draft} {r.draft_quant}")
        device = f"{r.gpus}x {r.device}" if r.gpus > 1 and r.device else r.device or "(not stated)"
        lines.append(
            f"| {r.target} {r.target_quant} | {draft} | {device} | {r.engine} | {r.task} | {r.k or 'auto'} "
            f"| {r.speedup:.2f}x | {predicted[r.id]:.2f}x | {e:+.0%} | {held[r.id]:.2f}x | {h:+.0%} "
            f"| [{_short(r.source_url)}]({r.source_url}) |"
        )
    share = sum(e <= WITHIN for e in errors) / len(errors)
    held_share = sum(e <= WITHIN for e in held_errors) / len(held_errors)
    summary = {"share": share, "held_share": held_share, "held_median": statistics.median(held_errors)}
    lines += [
        "",
        f"Within 25 %: {share:.0%} of rows predicted, {held_share:.0%} held out; median error "
        f"{statistics.median(errors):.0%} predicted, {summary['held_median']:.0%} held out. Constants: "
        f"draft factor {COSTS.draft_factor:g}, head factor {COSTS.head_factor:g}, verify per token "
        f"{COSTS.verify_local:g} (llama.cpp, MLX) / {COSTS.verify_served:g} (vLLM, SGLang).",
    ]
    return lines, summary


def _short(url: str) -> str:
    parts = url.removeprefix("https://").split("/")
    if parts[0] == "github.com" and len(parts) >= 5:
        return f"{parts[2]} {parts[3].rstrip('s')} {parts[4]}" if parts[3] in ("issues", "pull") else parts[2]
    return parts[0] + ("/" + parts[-1] if len(parts) > 1 else "")


def write_readme(lines: list[str]) -> None:
    write_block(BLOCK, lines)


def readme_block() -> list[str]:
    return read_block(BLOCK)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the same report (seconds)")
    parser.add_argument("--write", action="store_true", help="also write README's block")
    parser.add_argument("--fit", action="store_true", help="fit the constants on every row and print them")
    args = parser.parse_args(argv)
    if args.fit:
        catalog = load_facts()
        rows = spec_measurements()

        def fam(model_id: str) -> str:
            m = catalog.model(model_id)
            return m.family if m is not None else ""

        setups = [Setup(r, catalog) for r in rows]
        print(fit(setups, alphas(setups, rows, fam)))
        return
    lines, summary = report()
    print("\n".join(lines))
    print(f"held out within 25 %: {summary['held_share']:.0%} (target >= {TARGET_SHARE:.0%})")
    if args.write:
        write_readme(lines)


if __name__ == "__main__":
    main()

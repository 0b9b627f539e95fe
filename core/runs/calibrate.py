"""A user's efficiency factor per device, from their accepted runs, and an estimate scaled by it.

The factor is measured / FitBot's estimate for the same setup, decode and prefill apart (decode is
bandwidth-bound, prefill compute-bound: a rig's memory clock, power limit or driver moves them
differently). The decode factor scales every model on that device: what differs between rigs of one
device is the rig, not the model. The prefill factor scales only quants of the kernel family its runs
used (``core.speed.model.quant_family``: F16, Q8_0, legacy Q4_0, K-quants, IQ, MXFP4): prompt speed
depends on each family's matrix kernels, and on the public llama-bench rigs a factor carried to
another family made the held-out error larger, not smaller (``bench/rig_calibration.py``). Several
runs combine as the geometric mean of the newest ``KEEP`` factors of each kind (and family), so one
old or odd run does not dominate.

That mean is drawn toward 1 by how many models it measured: a run's factor is the rig's own offset
times that model's own error of the formula, and one model tells the two apart no better than chance.
With the rig's offset u ~ N(0, tau^2) and each model's error ~ N(0, sigma^2) (log factors), the
expected offset after runs of n models is n tau^2 / (n tau^2 + sigma^2) of their log mean, that is
n / (n + ``PRIOR_MODELS``) with ``PRIOR_MODELS`` = sigma^2 / tau^2: the formula's estimate counts as
that many models' runs. Repeated runs of one model average its timing noise, not its model error, so
they count once.

It applies only where the runs were measured: the same device and backend, llama.cpp (llama-bench,
llama-server and Ollama all run llama.cpp's kernels), and the model wholly on the device (an offload's
speed is the system RAM's, which the runs did not measure).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal

from pydantic import Field

from core.estimate import FitEstimate, Scenario
from core.models import Engine, Frozen
from core.notes import Note, note
from core.speed.model import quant_family

KEEP = 8  # newest factors of a kind per device that count
BITS_UNKNOWN = 4.5  # a quant id names its family; the width only decides ids that do not
FACTOR_RANGE = (0.05, 20.0)  # what a stored factor may be (the check refused runs outside far narrower ones)
# sigma^2 / tau^2 of the module docstring, from the held-out residuals of the public llama-bench rigs
# (``bench/rig_calibration.py`` prints them): rig offset tau 7 % decode, 18 % prefill; one model's own
# error on a rig sigma 8 %, 19 %; sigma^2 / tau^2 = 1.2 and 1.1. One for both: the formula's estimate
# weighs as much as one model's run.
PRIOR_MODELS = 1.0


class AcceptedRun(Frozen):
    """A pasted run that passed the check, as it is stored: the setup it was, what it measured and what
    FitBot estimated for that setup when it was pasted (the factor is their ratio)."""

    gpu_id: str
    gpu_count: int = Field(ge=1, le=64)
    backend: str
    model_id: str
    quant: str
    kind: Literal["decode", "prefill"]
    test: str
    measured: float = Field(gt=0)
    estimated: float = Field(gt=0)
    build: str
    source: str  # the program that printed it: "llama-bench", "llama-server", "ollama"

    @property
    def factor(self) -> float:
        return self.measured / self.estimated


class RunFactor(Frozen):
    """One accepted run, as the store keeps it: measured over estimated on one setup."""

    gpu_id: str
    gpu_count: int = 1
    backend: str
    quant: str = ""
    kind: Literal["decode", "prefill"]
    factor: float = Field(gt=FACTOR_RANGE[0], lt=FACTOR_RANGE[1])
    as_of: str  # ISO date the run was pasted
    model_id: str = ""  # the model it ran (runs of one model count once toward ``PRIOR_MODELS``)


class Calibration(Frozen):
    """A user's factors on one device (and count) and backend; None for a kind no run measured."""

    gpu_id: str
    gpu_count: int = 1
    backend: str
    decode: float | None = None
    prefill: tuple[tuple[str, float], ...] = ()  # (quant kernel family, factor)
    as_of: str  # the newest run's date
    runs: int = Field(ge=1)

    def prefill_for(self, quant: str) -> float | None:
        family = quant_family(quant, BITS_UNKNOWN)
        return next((f for fam, f in self.prefill if fam == family), None)


def combine(factors: Iterable[RunFactor]) -> tuple[Calibration, ...]:
    """One calibration per device, count and backend, from the runs newest first."""
    groups: dict[tuple[str, int, str], list[RunFactor]] = {}
    for f in sorted(factors, key=lambda f: f.as_of, reverse=True):
        groups.setdefault((f.gpu_id, f.gpu_count, f.backend), []).append(f)
    out = []
    for (gpu_id, count, backend), rows in groups.items():
        prefill: dict[str, list[RunFactor]] = {}
        for r in rows:
            if r.kind == "prefill":
                prefill.setdefault(quant_family(r.quant, BITS_UNKNOWN), []).append(r)
        out.append(
            Calibration(
                gpu_id=gpu_id,
                gpu_count=count,
                backend=backend,
                decode=_drawn([r for r in rows if r.kind == "decode"][:KEEP]),
                prefill=tuple(sorted((fam, g) for fam, v in prefill.items() if (g := _drawn(v[:KEEP])) is not None)),
                as_of=rows[0].as_of,
                runs=len(rows),
            )
        )
    return tuple(sorted(out, key=lambda c: (c.gpu_id, c.gpu_count, c.backend)))


def _drawn(runs: list[RunFactor]) -> float | None:
    """The runs' geometric mean drawn toward 1 by the models they measured (the module docstring)."""
    if not runs:
        return None
    models = len({r.model_id for r in runs})
    log_mean = sum(math.log(r.factor) for r in runs) / len(runs)
    return math.exp(log_mean * models / (models + PRIOR_MODELS))


def calibration_for(
    calibrations: Iterable[Calibration], s: Scenario, est: FitEstimate | None = None
) -> Calibration | None:
    """The calibration that applies to this setup, if any (see the module docstring)."""
    if s.gpu is None or s.rig or s.engine is not Engine.LLAMA_CPP:
        return None
    if est is not None and est.offload.mode != "none":
        return None
    backend = s.gpu.backend.value
    gpu_id = s.gpu.id.split("@", 1)[0]  # "rtx-4090@24gb": the same chip, the memory the user gave
    return next(
        (c for c in calibrations if c.gpu_id == gpu_id and c.gpu_count == s.count and c.backend == backend), None
    )


def applied(calibrations: tuple[Calibration, ...], s: Scenario, est: FitEstimate) -> tuple[FitEstimate, Note | None]:
    """The estimate scaled by the calibration that applies to its setup, with the note that says so; as it
    was (and None) where none applies."""
    cal = calibration_for(calibrations, s, est) if calibrations else None
    if cal is None or s.gpu is None:
        return est, None
    decode, prefill = cal.decode, cal.prefill_for(s.quant.id)
    if decode is None and prefill is None:
        return est, None
    where = {"date": cal.as_of, "device": s.gpu.short_name}
    if prefill is None:  # decode only: the runs timed prompts with another quant family's kernels
        return calibrated(est, decode, None), note("calibrated_decode", decode_factor=decode or 1.0, **where)
    code = "calibrated" if decode is not None else "calibrated_prefill"
    factors = {"decode_factor": decode or 1.0, "prefill_factor": prefill}
    return calibrated(est, decode, prefill), note(code, **factors, **where)


def calibrated(est: FitEstimate, decode: float | None, prefill: float | None) -> FitEstimate:
    """The estimate with decode figures times the decode factor and prefill figures (and so time to first
    token) times the prefill factor; everything else (memory, fit) as it was."""
    d, p = decode or 1.0, prefill or 1.0
    speed = est.speed
    update: dict[str, object] = {
        "decode_tokens_per_s": speed.decode_tokens_per_s * d,
        "decode_tokens_per_s_at_context": speed.decode_tokens_per_s_at_context * d,
        "decode_range": _times(speed.decode_range, d),
        "decode_range_at_context": _times(speed.decode_range_at_context, d),
        "prefill_tokens_per_s": speed.prefill_tokens_per_s * p,
        "prefill_range": _times(speed.prefill_range, p),
        "ttft_s": speed.ttft_s / p,
    }
    if speed.concurrency is not None:
        c = speed.concurrency
        update["concurrency"] = c.model_copy(
            update={
                "aggregate_tokens_per_s": c.aggregate_tokens_per_s * d,
                "per_user_tokens_per_s": c.per_user_tokens_per_s * d,
            }
        )
    serving = est.serving.model_copy(
        update={
            "decode_tokens_per_s": est.serving.decode_tokens_per_s * d,
            "aggregate_tokens_per_s": est.serving.aggregate_tokens_per_s * d,
            "per_user_tokens_per_s": est.serving.per_user_tokens_per_s * d,
        }
    )
    return est.model_copy(update={"speed": speed.model_copy(update=update), "serving": serving})


def _times(band: tuple[float, float], factor: float) -> tuple[float, float]:
    return band[0] * factor, band[1] * factor

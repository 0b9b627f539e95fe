"""A user's efficiency factors per device, from their accepted runs, and an estimate scaled by them.

A factor is measured / FitBot's estimate for the same setup, decode and prefill apart (decode is
bandwidth-bound, prefill compute-bound: a rig's memory clock, power limit or driver moves them
differently). The decode factor scales every model on that device: what differs between rigs of one
device is the rig, not the model.

A prompt's time has two parts that a rig moves apart (``core.speed.estimate.PromptTime``): the weight
GEMMs (with their reads and the per-layer time), which every prompt pays per token, and the attention
arithmetic, which grows with the depth and prompt length (llama.cpp's flash-attention kernels, on F16
K/V whatever the weights' quant). A run records attention's share s of its estimated time; its time ratio
estimated / measured is then (1 - s) / matrix + s / attention. Runs at short prompts (s below
``DEEP_SHARE``) measure the matrix factor; with runs at depth too (llama-bench ``-d``), a least-squares
fit over both tells the two apart; until then one factor stands for both. A card's prompt figure is then
scaled by its own share (pp512: nearly all matrix; a 32K prompt's time to first token: much attention).
On the public llama-bench rigs this split is what lets a factor carry from one quant family to another:
a single prompt factor, carried across families, made the held-out error larger, not smaller, because a
depth run's attention error was read as the rig's GEMM speed (``bench/rig_calibration.py``). Several runs
combine over the newest ``KEEP`` of each kind, so one old or odd run does not dominate.

Each factor is drawn toward 1 by how many models it measured: a run's factor is the rig's own offset
times that model's own error of the formula, and one model tells the two apart no better than chance.
With the rig's offset u ~ N(0, tau^2) and each model's error ~ N(0, sigma^2) (log factors), the
expected offset after runs of n models is n tau^2 / (n tau^2 + sigma^2) of their log mean, that is
n / (n + ``PRIOR_MODELS``) with ``PRIOR_MODELS`` = sigma^2 / tau^2: the formula's estimate counts as
that many models' runs. Repeated runs of one model average its timing noise, not its model error, so
they count once (and weigh as one in the prompt fit). The attention factor counts the models run at depth.

It applies only where the runs were measured: the same device and backend, llama.cpp (llama-bench,
llama-server and Ollama all run llama.cpp's kernels), and the model wholly on the device (an offload's
speed is the system RAM's, which the runs did not measure).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import Field

from core.estimate import FitEstimate, Scenario
from core.models import Engine, Frozen
from core.notes import Note, note

KEEP = 8  # newest factors of a kind per device that count
DEEP_SHARE = 0.3  # a prompt run whose estimated time is this much attention or more measures attention apart
TIME_RATIO_RANGE = (0.25, 4.0)  # what the prompt fit may say of either part (the check refused runs far narrower)
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
    attention_share: float = Field(default=0.0, ge=0.0, le=1.0)  # of the estimated prompt time (prefill)
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
    attention_share: float = Field(default=0.0, ge=0.0, le=1.0)  # prefill: attention's share of the estimated time


class Calibration(Frozen):
    """A user's factors on one device (and count) and backend; None for what no run measured."""

    gpu_id: str
    gpu_count: int = 1
    backend: str
    decode: float | None = None
    prefill_matrix: float | None = None  # a prompt's weight GEMMs, reads and per-layer time
    prefill_attention: float | None = None  # its attention arithmetic; None: no run at depth told it apart
    as_of: str  # the newest run's date
    runs: int = Field(ge=1)

    def prefill_for(self, attention_share: float) -> float | None:
        """The factor of a prompt whose estimated time is ``attention_share`` attention (None: no prompt run)."""
        if self.prefill_matrix is None:
            return None
        attention = self.prefill_attention or self.prefill_matrix
        return 1.0 / ((1.0 - attention_share) / self.prefill_matrix + attention_share / attention)


def combine(factors: Iterable[RunFactor]) -> tuple[Calibration, ...]:
    """One calibration per device, count and backend, from the runs newest first."""
    groups: dict[tuple[str, int, str], list[RunFactor]] = {}
    for f in sorted(factors, key=lambda f: f.as_of, reverse=True):
        groups.setdefault((f.gpu_id, f.gpu_count, f.backend), []).append(f)
    out = []
    for (gpu_id, count, backend), rows in groups.items():
        matrix, attention = _prompt_factors([r for r in rows if r.kind == "prefill"][:KEEP])
        out.append(
            Calibration(
                gpu_id=gpu_id,
                gpu_count=count,
                backend=backend,
                decode=_drawn([r for r in rows if r.kind == "decode"][:KEEP]),
                prefill_matrix=matrix,
                prefill_attention=attention,
                as_of=rows[0].as_of,
                runs=len(rows),
            )
        )
    return tuple(sorted(out, key=lambda c: (c.gpu_id, c.gpu_count, c.backend)))


def _drawn(runs: list[RunFactor]) -> float | None:
    """The runs' geometric mean drawn toward 1 by the models they measured (the module docstring)."""
    if not runs:
        return None
    log_mean = sum(math.log(r.factor) for r in runs) / len(runs)
    return _toward_one(math.exp(log_mean), len({r.model_id for r in runs}))


def _toward_one(factor: float, models: int) -> float:
    return math.exp(math.log(factor) * models / (models + PRIOR_MODELS))


def _prompt_factors(runs: list[RunFactor]) -> tuple[float | None, float | None]:
    """(matrix, attention) speed factors of the prompt runs; attention None unless runs at depth and runs
    at short prompts tell it apart (the module docstring)."""
    deep = [r for r in runs if r.attention_share >= DEEP_SHARE]
    split = _split_fit(runs) if deep and len(deep) < len(runs) else None
    if split is None:
        return _drawn(runs), None
    matrix, attention = split
    return _toward_one(matrix, len({r.model_id for r in runs})), _toward_one(attention, len({r.model_id for r in deep}))


def _split_fit(runs: Sequence[RunFactor]) -> tuple[float, float] | None:
    """Least squares of time ratio = (1 - s) x + s y over the runs, each model's runs weighing as one;
    (1 / x, 1 / y) as speed factors, or None where the runs do not tell x and y apart."""
    per_model = Counter(r.model_id for r in runs)
    a11 = a12 = a22 = b1 = b2 = 0.0
    for r in runs:
        w, s, ratio = 1.0 / per_model[r.model_id], r.attention_share, 1.0 / r.factor
        a11 += w * (1 - s) ** 2
        a12 += w * (1 - s) * s
        a22 += w * s * s
        b1 += w * (1 - s) * ratio
        b2 += w * s * ratio
    det = a11 * a22 - a12 * a12
    if det <= 1e-6 * a11 * a22:
        return None
    low, high = TIME_RATIO_RANGE
    x = min(high, max(low, (b1 * a22 - b2 * a12) / det))
    y = min(high, max(low, (a11 * b2 - a12 * b1) / det))
    return 1.0 / x, 1.0 / y


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
    decode, prefill = cal.decode, cal.prefill_for(est.speed.prefill_attention_share)
    if decode is None and prefill is None:
        return est, None
    where = {"date": cal.as_of, "device": s.gpu.short_name}
    if prefill is None:  # decode only: the runs timed no prompt
        return calibrated(est, cal), note("calibrated_decode", decode_factor=decode or 1.0, **where)
    code = "calibrated" if decode is not None else "calibrated_prefill"
    factors = {"decode_factor": decode or 1.0, "prefill_factor": prefill}
    return calibrated(est, cal), note(code, **factors, **where)


def calibrated(est: FitEstimate, cal: Calibration) -> FitEstimate:
    """The estimate with decode figures times the decode factor and the prompt figures (pp512, time to first
    token) times the prompt factor for their own attention share; everything else (memory, fit) as it was."""
    speed = est.speed
    d = cal.decode or 1.0
    p = cal.prefill_for(speed.prefill_attention_share) or 1.0
    first_token = cal.prefill_for(speed.ttft_attention_share) or 1.0
    update: dict[str, object] = {
        "decode_tokens_per_s": speed.decode_tokens_per_s * d,
        "decode_tokens_per_s_at_context": speed.decode_tokens_per_s_at_context * d,
        "decode_range": _times(speed.decode_range, d),
        "decode_range_at_context": _times(speed.decode_range_at_context, d),
        "prefill_tokens_per_s": speed.prefill_tokens_per_s * p,
        "prefill_range": _times(speed.prefill_range, p),
        "ttft_s": speed.ttft_s / first_token,
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

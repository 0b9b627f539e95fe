"""One rule for speed under batching: how many streams run at once, per-user and total tokens/s.

Every figure is at the asked context, on the one placement the card shows: one user's speed is
``speed.decode_tokens_per_s`` at that context, the batch follows the engine (``speed.batch_speed``:
vLLM's paged pool and ``max_num_seqs``, llama.cpp's ``--parallel`` slots), and per user is never
above one user's speed.

Every card that shows users (/fit, /speed, /cloud, the $/Mtok figures) reads ``Speeds`` from
``decode_speeds``; nothing else combines single-stream and batched speed, so ``users x per_user =
total`` holds on every card.
"""

# no ``from __future__ import annotations``: pydantic reads these models' field types as objects instead of
# compiling each from a string, a few milliseconds of every start (``fitbot estimate``, issue 33)

from typing import NamedTuple

from core.fit import FullFit, Placement
from core.models import Frozen, Hardware, ModelSpec, Workload
from core.speed.constants import TG_MEAN_DEPTH
from core.speed.estimate import Batch, Concurrency, SpeedEstimate, batch_speed, decode_tokens_per_s


class Speeds(Frozen):
    """Single-stream and batched decode speed on one setup."""

    decode_tokens_per_s: float  # one user alone, at the context
    users: int  # concurrent streams asked for
    users_served: int  # streams decoded together (<= users; the engine's rule, ``speed.batch_speed``)
    aggregate_tokens_per_s: float  # all streams together
    per_user_tokens_per_s: float  # aggregate / users: streams beyond the batch wait their turn


class Served(NamedTuple):
    """``Speeds`` in plain numbers, for scans that price many setups (same fields)."""

    decode_tokens_per_s: float
    users: int
    users_served: int
    aggregate_tokens_per_s: float
    per_user_tokens_per_s: float


def decode_speeds(
    model: ModelSpec,
    placement: Placement | FullFit,
    hardware: Hardware,
    workload: Workload,
    users: int = 1,
    quant_id: str | None = None,
) -> Speeds:
    """``served`` as the cards read it."""
    return Speeds(**served(model, placement, hardware, workload, users, quant_id)._asdict())


def served(
    model: ModelSpec,
    placement: Placement | FullFit,
    hardware: Hardware,
    workload: Workload,
    users: int = 1,
    quant_id: str | None = None,
) -> Served:
    """Single-stream and batched decode speed from ``core.speed.estimate``: the one place cards and cost ask it.

    Both at the workload's context on the one placement the card shows (a ``FullFit``, which scans
    judge memory with, stands for everything on the GPU(s)). Single stream: ``speed.decode_tokens_per_s``
    at the context, the figure ``estimate_speed`` reports as ``decode_tokens_per_s_at_context`` and
    /speed's table shows. Batched: ``speed.batch_speed`` (the engine's rule for how many sequences run
    at once, and the roofline over that batch). Serving the streams one after another is always
    possible, so the total is never below one stream's speed, and a step of a batch is never shorter
    than one stream's, so no user gets more than one stream's speed.
    """
    on = placement if isinstance(placement, Placement) else None  # None: everything on the GPU(s)
    single = decode_tokens_per_s(model, placement.weights, on, hardware, workload, workload.context, quant_id)
    batch = batch_speed(model, placement.weights, on, hardware, workload, users, quant_id) if users > 1 else None
    return _combined(single, users, batch)


def single_stream(
    model: ModelSpec,
    placement: Placement | FullFit,
    hardware: Hardware,
    workload: Workload,
    quant_id: str | None = None,
) -> float:
    """One stream's decode tokens/s at a short context (llama-bench tg128): the figure scans rank
    devices and quants by (``SpeedEstimate.decode_tokens_per_s``)."""
    on = placement if isinstance(placement, Placement) else None  # None: everything on the GPU(s)
    return decode_tokens_per_s(model, placement.weights, on, hardware, workload, TG_MEAN_DEPTH, quant_id)


def speeds_of(speed: SpeedEstimate, users: int) -> Speeds:
    """``decode_speeds`` from an estimate of the same setup (``speed.estimate_speed`` with ``users`` as
    the workload's streams), which already holds the single-stream speed at the context and the batch:
    the same rule, without timing the setup again."""
    assert users <= 1 or speed.concurrency is not None, "the estimate was made for one stream"
    combined = _combined(speed.decode_tokens_per_s_at_context, users, speed.concurrency if users > 1 else None)
    return Speeds(**combined._asdict())


def _combined(single: float, users: int, batch: Concurrency | Batch | None) -> Served:
    if users <= 1 or batch is None:
        return Served(
            decode_tokens_per_s=single,
            users=1,
            users_served=1,
            aggregate_tokens_per_s=single,
            per_user_tokens_per_s=single,
        )
    at_once = batch.batch if batch.batch >= 1 and batch.aggregate_tokens_per_s > 0 else 1
    total = max(batch.aggregate_tokens_per_s, single) if at_once > 1 else single
    return Served(
        decode_tokens_per_s=single,
        users=users,
        users_served=at_once,
        aggregate_tokens_per_s=total,
        per_user_tokens_per_s=total / users,
    )


__all__ = ["Served", "Speeds", "decode_speeds", "served", "single_stream", "speeds_of"]

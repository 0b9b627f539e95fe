"""A chat's shared runs (issue 38 item 3), pooled per setup: how many people measured it and their median.

A setup is the device (the chip, whatever memory a member gave), count, backend, model and quant, and
decode or prefill; each person counts once, with the median of their own runs, so one member who pastes
the same table five times is one voice. Only runs that passed the physical check reach a pool
(``bot.answers.runs``), and a pool only shows, never scales, an answer.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Literal, Protocol

from pydantic import Field

from core.estimate import Scenario
from core.models import Engine, Frozen
from core.notes import Note, note

Kind = Literal["decode", "prefill"]


class PooledRun(Protocol):
    @property
    def member(self) -> str: ...
    @property
    def gpu_id(self) -> str: ...
    @property
    def gpu_count(self) -> int: ...
    @property
    def backend(self) -> str: ...
    @property
    def model_id(self) -> str: ...
    @property
    def quant(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def measured(self) -> float: ...


class Pool(Frozen):
    gpu_id: str
    gpu_count: int = Field(ge=1)
    backend: str
    model_id: str
    quant: str
    kind: Kind
    people: int = Field(ge=1)
    median_tokens_per_s: float = Field(gt=0)


def pools(rows: Iterable[PooledRun]) -> tuple[Pool, ...]:
    """One pool per setup and kind: the median over people of each person's median."""
    groups: dict[tuple[str, int, str, str, str, str], dict[str, list[float]]] = {}
    for r in rows:
        if r.kind not in ("decode", "prefill") or not r.measured > 0:
            continue
        key = (r.gpu_id, r.gpu_count, r.backend, r.model_id, r.quant.upper(), r.kind)
        groups.setdefault(key, {}).setdefault(r.member, []).append(r.measured)
    out = []
    for (gpu_id, count, backend, model_id, quant, kind), people in sorted(groups.items()):
        medians = [statistics.median(values) for values in people.values()]
        out.append(
            Pool(
                gpu_id=gpu_id,
                gpu_count=count,
                backend=backend,
                model_id=model_id,
                quant=quant,
                kind=kind,  # type: ignore[arg-type]
                people=len(medians),
                median_tokens_per_s=statistics.median(medians),
            )
        )
    return tuple(out)


def pool_notes(all_pools: tuple[Pool, ...], s: Scenario) -> tuple[Note, ...]:
    """The notes for the pools of this setup (llama.cpp on one device kind), decode first."""
    if not all_pools or s.gpu is None or s.rig or s.engine is not Engine.LLAMA_CPP:
        return ()
    gpu_id, backend = s.gpu.id.split("@", 1)[0], s.gpu.backend.value
    mine = [
        p
        for p in all_pools
        if (p.gpu_id, p.gpu_count, p.backend, p.model_id, p.quant) == (gpu_id, s.count, backend, s.model.id, s.quant.id)
    ]
    return tuple(
        note(f"pooled_{p.kind}", people=p.people, rate=round(p.median_tokens_per_s, 1))
        for p in sorted(mine, key=lambda p: p.kind)
    )

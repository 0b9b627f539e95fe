"""Several models on one GPU at once: the memory of each with its runtime, what fits together, what swaps.

Each model runs in its own runtime (llama.cpp for the LLM, whisper.cpp for speech, llama.cpp
``--embedding`` for an embedder), so each holds its own weights, buffers and a GPU runtime context
(``core.memory.RUNTIME_CONTEXT_BYTES``; the LLM's estimate has its own already). They fit together when
the sum stays within the usable memory with the comfortable reserve; otherwise the smallest set of the
side models that, swapped out (loaded when used), lets the rest fit is named.
"""

from __future__ import annotations

from itertools import combinations
from typing import Literal

from core.fit import comfortable_reserve
from core.memory import RUNTIME_CONTEXT_BYTES
from core.models import Frozen, Provenance


class SideModel(Frozen):
    id: str
    kind: Literal["asr", "embedder"]
    name: str
    aliases: tuple[str, ...] = ()
    runtime: str
    memory_bytes: int | None = None  # measured runtime memory
    params: int | None = None
    bytes_per_param: float = 2.0
    provenance: Provenance

    @property
    def weights_bytes(self) -> int:
        """Measured runtime memory, else the F16 weights."""
        if self.memory_bytes is not None:
            return self.memory_bytes
        return round((self.params or 0) * self.bytes_per_param)


class Part(Frozen):
    name: str
    runtime: str
    weights_bytes: int  # weights (or the measured runtime memory of a side model)
    other_bytes: int  # KV cache, buffers, runtime context

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.other_bytes


class Together(Frozen):
    parts: tuple[Part, ...]
    total_bytes: int
    usable_bytes: int
    fits: bool
    swap: tuple[str, ...] = ()  # names of the side models to load on demand instead


def side_part(side: SideModel) -> Part:
    return Part(
        name=side.name, runtime=side.runtime, weights_bytes=side.weights_bytes, other_bytes=RUNTIME_CONTEXT_BYTES
    )


def together(llm: Part, sides: list[Part], usable_bytes: int, count: int = 1) -> Together:
    """Sum the parts; if they do not fit, the fewest (then smallest) side models to swap."""
    parts = (llm, *sides)
    total = sum(p.total_bytes for p in parts)
    budget = usable_bytes - comfortable_reserve(usable_bytes, count)
    if total <= budget:
        return Together(parts=parts, total_bytes=total, usable_bytes=usable_bytes, fits=True)
    for size in range(1, len(sides) + 1):
        options = [c for c in combinations(sides, size) if total - sum(p.total_bytes for p in c) <= budget]
        if options:
            best = min(options, key=lambda c: sum(p.total_bytes for p in c))
            return Together(
                parts=parts, total_bytes=total, usable_bytes=usable_bytes, fits=False, swap=tuple(p.name for p in best)
            )
    return Together(
        parts=parts, total_bytes=total, usable_bytes=usable_bytes, fits=False, swap=tuple(p.name for p in sides)
    )


__all__ = ["Part", "SideModel", "Together", "side_part", "together"]

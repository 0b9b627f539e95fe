"""Measured speed beside the estimate: the published llama-bench run of the asked setup, or of a near one.

A run matches when its model, device, device count and backend are the card's. The same quant is a
measurement as it was published; another quant of the same model on the same setup is scaled to the
asked one by the weight bytes decode reads per token (decode is bandwidth-bound: tokens/s goes as
1 / bytes), and says so. Prefill is compute-bound and depends on the quant's kernel, so only the
asked quant's own run is shown for it. Where several runs match, the one of llama-bench's standard
length (tg128, pp512) or the nearest is shown, the newest of those, with how many runs there are.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from typing import Literal

from core.models import Frozen, Provenance

Kind = Literal["decode", "prefill"]


class Measurement(Frozen):
    model_id: str
    quant: str
    gpu_id: str
    gpu_count: int
    backend: str
    kind: Kind
    test: str  # llama-bench's label: tg128, pp512, ...
    tokens_per_s: float
    build: str
    provenance: Provenance


class MeasuredSpeed(Frozen):
    kind: Kind
    tokens_per_s: float  # for the asked quant (scaled from ``from_quant`` when that is set)
    test: str
    build: str
    source: str
    as_of: str
    runs: int  # matching runs of this quant
    from_quant: str | None = None  # a near match: the quant that was measured

    @property
    def source_label(self) -> str:
        """A short name of the source for a card line ("ggml-org/llama.cpp#15013"); the URL stays in
        ``source``."""
        m = re.match(r"https?://github\.com/([^/]+/[^/]+)(?:/(?:issues|pull|discussions)/(\d+))?", self.source)
        if m:
            return f"{m[1]}#{m[2]}" if m[2] else m[1]
        host = re.match(r"https?://(?:www\.)?([^/]+)", self.source)
        return host[1] if host else self.source[:40]


def measured(
    rows: Iterable[Measurement],
    model_id: str,
    quant: str,
    gpu_id: str,
    gpu_count: int,
    backend: str,
    kind: Kind,
    weight_bytes: Callable[[str], int | None],
) -> MeasuredSpeed | None:
    """The run to show for this setup; ``weight_bytes(quant)`` is what decode reads per token at that
    quant (None: unknown, so no scaling)."""
    same = [
        r
        for r in rows
        if r.model_id == model_id
        and r.gpu_id == gpu_id
        and r.gpu_count == gpu_count
        and r.backend == backend
        and r.kind == kind
    ]
    exact = [r for r in same if r.quant.upper() == quant.upper()]
    if exact:
        best = min(exact, key=_preference)
        return _speed(best, best.tokens_per_s, len(exact), None)
    asked = weight_bytes(quant)
    if kind == "prefill" or not asked:
        return None
    scalable = [(r, b) for r in same if (b := weight_bytes(r.quant))]
    if not scalable:
        return None
    newest, read = min(scalable, key=lambda rb: _preference(rb[0]))
    runs = sum(1 for r, _ in scalable if r.quant == newest.quant)
    return _speed(newest, newest.tokens_per_s * read / asked, runs, newest.quant)


STANDARD = {"decode": 128, "prefill": 512}  # llama-bench's defaults (-n 128, -p 512)


def _preference(row: Measurement) -> tuple[float, str, str]:
    """Nearest llama-bench's standard length first, then the newest."""
    m = re.search(r"(\d+)", row.test)
    n = int(m[1]) if m else STANDARD[row.kind]
    newest = "".join(chr(0x10FFFF - ord(c)) for c in f"{row.provenance.as_of}|{row.build}")  # descending
    return (abs(math.log2(max(n, 1) / STANDARD[row.kind])), newest, row.test)


def _speed(row: Measurement, tokens_per_s: float, runs: int, from_quant: str | None) -> MeasuredSpeed:
    return MeasuredSpeed(
        kind=row.kind,
        tokens_per_s=tokens_per_s,
        test=row.test,
        build=row.build,
        source=row.provenance.source,
        as_of=row.provenance.as_of,
        runs=runs,
        from_quant=from_quant,
    )


__all__ = ["MeasuredSpeed", "Measurement", "measured"]

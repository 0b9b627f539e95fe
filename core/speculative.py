"""Speculative decoding: what a draft model (or the model's own MTP layers) costs in memory and gains in speed.

Memory: the draft's weights, its KV cache at the same context and its compute buffer sit next to
the target on the GPU(s); an MTP draft is one more decoder layer of the target (its weights and KV).

Speed (Leviathan et al. 2023, arXiv 2211.17192): with per-token acceptance ``a`` and ``k`` drafted
tokens, one target step yields ``E = (1 - a^(k+1)) / (1 - a)`` tokens and costs ``k`` draft decode
steps plus one target pass over ``k + 1`` tokens, which reads the weights once like a decode step but
is no faster than ``k + 1`` tokens at the prefill rate. All rates come from the estimator on the same
hardware; tokens/s = ``E / (k * t_draft + t_verify(k))``, and the best ``k`` up to 16 is shown.
``a`` is recovered from llama.cpp's reported acceptance (accepted / drafted tokens at draft length
n): ``accept = a (1 - a^n) / ((1 - a) n)``, solved by bisection.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

from core import memory
from core.models import Frozen, KvCacheType, ModelSpec, Provenance, QuantSize, QuantSpec, Workload
from core.weights import weights

MAX_DRAFT = 16
LLAMA_DEFAULT_DRAFT = 3  # --spec-draft-n-max default (tools/server/README.md)


class Acceptance(Frozen):
    task: Literal["prose", "code"]
    target: str
    draft: str
    n_draft: int
    accept: float  # accepted / drafted, as llama.cpp prints it
    provenance: Provenance


class MtpFact(Frozen):
    family: str
    models: tuple[str, ...]
    layers: int
    accept: float  # per-token acceptance of the MTP draft
    provenance: Provenance


class SpecSpeed(Frozen):
    task: str
    alpha: float  # per-token acceptance
    draft_tokens: int  # the best k
    speedup: float
    tokens_per_s: float
    source: str


def per_token_acceptance(accept: float, n_draft: int) -> float:
    """The per-token acceptance ``a`` behind llama.cpp's accepted/drafted ratio at draft length n."""
    lo, hi = 0.0, 0.999999
    for _ in range(60):
        mid = (lo + hi) / 2
        ratio = mid * (1 - mid**n_draft) / ((1 - mid) * n_draft)
        lo, hi = (mid, hi) if ratio < accept else (lo, mid)
    return (lo + hi) / 2


def expected_tokens(alpha: float, k: int) -> float:
    """Tokens per target step with k drafted tokens (the target's own token included)."""
    return float(k + 1) if alpha >= 1 else (1 - alpha ** (k + 1)) / (1 - alpha)


def spec_tokens_per_s(alpha: float, k: int, draft_s: float, verify_s: float) -> float:
    return expected_tokens(alpha, k) / (k * draft_s + verify_s)


def best_draft_length(alpha: float, draft_s: float, verify: Callable[[int], float]) -> tuple[int, float]:
    """The draft length (1..16) with the most tokens/s, and that rate."""
    return max(
        ((k, spec_tokens_per_s(alpha, k, draft_s, verify(k))) for k in range(1, MAX_DRAFT + 1)),
        key=lambda x: (x[1], -x[0]),
    )


def spec_speeds(
    target_tps: float, draft_tps: float, verify: Callable[[int], float], rows: Iterable[Acceptance]
) -> tuple[SpecSpeed, ...]:
    """The decode speed with speculative decoding for each sourced task figure."""
    out = []
    for row in rows:
        alpha = per_token_acceptance(row.accept, row.n_draft)
        k, tps = best_draft_length(alpha, 1.0 / draft_tps, verify)
        out.append(
            SpecSpeed(
                task=row.task,
                alpha=alpha,
                draft_tokens=k,
                speedup=tps / target_tps,
                tokens_per_s=tps,
                source=row.provenance.source,
            )
        )
    return tuple(out)


class DraftMemory(Frozen):
    """What the draft adds on the GPU: its weights, its KV cache at the context, its compute buffer."""

    weights_bytes: int
    kv_bytes: int
    overhead_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.kv_bytes + self.overhead_bytes


def draft_memory(
    draft: ModelSpec, quant: QuantSpec, measured: QuantSize | None, context: int, kv: KvCacheType
) -> DraftMemory:
    """A separate draft model: all its weights but the token embedding (kept in RAM), its KV and buffer."""
    w = weights(draft, quant, measured)
    work = Workload(context=context, kv_cache=kv)
    return DraftMemory(
        weights_bytes=w.total_bytes - w.embed_bytes,
        kv_bytes=memory.kv_cache_bytes(draft, work),
        overhead_bytes=memory.compute_buffer_bytes(draft, work),
    )


def mtp_memory(
    target: ModelSpec, quant: QuantSpec, measured: QuantSize | None, layers: int, context: int, kv: KvCacheType
) -> DraftMemory:
    """MTP layers: ``layers`` more decoder layers of the target (weights of one average layer each) and their KV."""
    w = weights(target, quant, measured)
    per_layer = (w.dense_bytes + w.experts_bytes) / target.n_layers
    kv_total = memory.kv_cache_bytes(target, Workload(context=context, kv_cache=kv))
    return DraftMemory(
        weights_bytes=round(per_layer * layers),
        kv_bytes=round(kv_total / max(target.kv_layers, 1) * layers),
        overhead_bytes=0,
    )


def mtp_speed(target_tps: float, layers: int, n_layers: int, alpha: float, verify_s: float) -> SpecSpeed:
    """MTP: the draft is ``layers`` extra layers of the target, so a draft step costs layers/n_layers of a
    target step; one MTP layer drafts one token."""
    draft_s = layers / n_layers / target_tps
    tps = spec_tokens_per_s(alpha, 1, draft_s, verify_s)
    return SpecSpeed(task="mtp", alpha=alpha, draft_tokens=1, speedup=tps / target_tps, tokens_per_s=tps, source="")


def verification_time(target_tps: float, prefill_tps: float) -> Callable[[int], float]:
    """Seconds for the target to check k drafted tokens: one pass over k + 1 tokens reads the weights
    once like a decode step, and cannot be faster than k + 1 tokens at the prefill rate."""

    def verify(k: int) -> float:
        return max(1.0 / target_tps, (k + 1) / prefill_tps)

    return verify


__all__ = [
    "LLAMA_DEFAULT_DRAFT",
    "Acceptance",
    "DraftMemory",
    "MtpFact",
    "SpecSpeed",
    "best_draft_length",
    "draft_memory",
    "expected_tokens",
    "mtp_memory",
    "mtp_speed",
    "per_token_acceptance",
    "spec_speeds",
    "spec_tokens_per_s",
    "verification_time",
]

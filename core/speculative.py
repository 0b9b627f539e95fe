"""Speculative decoding: what a draft model (or the model's own MTP layer, or an EAGLE-3 head) costs in
memory and gains in speed, from published measurements.

Memory: the draft's weights, its KV cache at the same context and its compute buffer sit next to
the target on the GPU(s); an MTP draft is one more decoder layer of the target (its weights and KV).

Speed (Leviathan et al. 2023, arXiv 2211.17192): with per-token acceptance ``a`` and ``k`` drafted
tokens, one target step yields ``E = (1 - a^(k+1)) / (1 - a)`` tokens. In units of one plain decode
step of the target, a step costs ``k * c`` for drafting plus ``v(k)`` for verifying:

* ``c``: one draft token. A draft model: ``draft_factor`` x (target tokens/s / draft tokens/s), both
  from the estimator; the factor is what llama.cpp's per-token sampling and synchronisation add to a
  small model's step. A head (MTP layer, EAGLE-3): ``head_factor`` x its parameters over the target's
  active parameters (one decoder layer, the fusion projection and an LM head).
* ``v(k) = max(1 + verify * k, (k + 1) * target tokens/s / prefill tokens/s)``: a pass over ``k + 1``
  tokens reads the weights once, but each extra token costs ``verify`` of a step (quantized llama.cpp
  kernels are far from free per token; vLLM/SGLang BF16/FP8 GEMMs nearly are), and it is never faster
  than ``k + 1`` tokens at the prefill rate.

The speed-up is ``E / (k * c + v(k))`` at the best ``k`` (1..16; the head's own depth for MTP). The
constants in ``COSTS`` are fitted by ``bench/speculative_accuracy.py`` on the measured rows of
``catalog/facts/speculative.toml`` (leave one source out there); ``a`` comes from the measured
acceptance of the same pair, else the same family, method and task, else the same method and task
(``acceptance_for``). llama.cpp prints accepted / drafted tokens at draft length n:
``accept = a (1 - a^n) / ((1 - a) n)``; vLLM/SGLang print the mean tokens per step ``E``; both are
solved for ``a`` by bisection.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from typing import Literal

from core import memory
from core.models import Frozen, KvCacheType, ModelSpec, Provenance, QuantSize, QuantSpec, Workload
from core.weights import weights

MAX_DRAFT = 16
HEAD_K_MAX = 4  # MTP / EAGLE-3 heads: vLLM, SGLang and llama.cpp run 1-4 drafted tokens
EAGLE3_DRAFT_VOCAB = 32000  # EAGLE-3 heads predict over a reduced vocabulary (draft_vocab_size in their configs)
SERVED_ENGINES = frozenset({"vllm", "sglang", "deepseek"})

Method = Literal["draft", "mtp", "eagle3"]
Task = Literal["prose", "code"]


class SpecMeasurement(Frozen):
    """One published run with and without speculative decoding (``[[measured]]`` in speculative.toml)."""

    id: str
    engine: str
    device: str  # catalog GPU id; "" where the source does not say
    gpus: int = 1
    draft_device: str = ""
    target: str
    target_quant: str
    method: Method
    draft: str = ""  # catalog id of a draft model, or the head's repository
    draft_quant: str = ""
    task: Task
    k: int = 0  # drafted tokens per step; 0: the engine chose per step (llama.cpp --draft-max with --draft-p-min)
    base_tps: float | None = None
    spec_tps: float | None = None
    speedup_given: float | None = None
    accept: float | None = None  # accepted / drafted
    accept_len: float | None = None  # mean tokens per target step, its own included
    provenance: Provenance

    @property
    def speedup(self) -> float:
        if self.base_tps and self.spec_tps:
            return self.spec_tps / self.base_tps
        assert self.speedup_given is not None, self.id
        return self.speedup_given

    @property
    def source_url(self) -> str:
        return self.provenance.source.split(" ", 1)[0]

    @property
    def alpha(self) -> float | None:
        """The per-token acceptance this row measured, where it printed one."""
        n = self.k or MAX_DRAFT
        if self.accept is not None:
            return per_token_acceptance(self.accept, n)
        if self.accept_len is not None:
            return acceptance_from_length(self.accept_len, n)
        return None


class MtpFact(Frozen):
    family: str
    models: tuple[str, ...]
    layers: int
    provenance: Provenance


class SpecCosts(Frozen):
    """The fitted constants of the timing model (see the module docstring)."""

    draft_factor: float
    head_factor: float
    verify_local: float  # llama.cpp, MLX: quantized kernels
    verify_served: float  # vLLM, SGLang: BF16/FP8 GEMMs, CUDA graphs

    def verify(self, engine: str) -> float:
        return self.verify_served if engine in SERVED_ENGINES else self.verify_local


# Fitted by bench/speculative_accuracy.py (--fit) on every [[measured]] row; README has the held-out error.
COSTS = SpecCosts(draft_factor=1.0, head_factor=1.5, verify_local=0.2, verify_served=0.12)


class SpecSpeed(Frozen):
    task: str
    alpha: float  # per-token acceptance
    draft_tokens: int  # the best k
    speedup: float
    tokens_per_s: float
    source: str


def per_token_acceptance(accept: float, n_draft: int) -> float:
    """The per-token acceptance ``a`` behind an accepted/drafted ratio at draft length n."""
    return _solve(lambda a: a * (1 - a**n_draft) / ((1 - a) * n_draft), accept)


def acceptance_from_length(accept_len: float, k: int) -> float:
    """The per-token acceptance ``a`` behind a mean acceptance length (tokens per step) at k drafted."""
    return _solve(lambda a: expected_tokens(a, k), min(accept_len, k + 1 - 1e-6))


def _solve(f: Callable[[float], float], value: float) -> float:
    lo, hi = 1e-9, 0.999999
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < value else (lo, mid)
    return (lo + hi) / 2


def expected_tokens(alpha: float, k: int) -> float:
    """Tokens per target step with k drafted tokens (the target's own token included)."""
    return float(k + 1) if alpha >= 1 else (1 - alpha ** (k + 1)) / (1 - alpha)


def speedup(alpha: float, k: int, draft_cost: float, verify: float, prefill_ratio: float = 0.0) -> float:
    """Tokens/s with speculation over tokens/s without, for k drafted tokens at ``draft_cost`` (a draft
    token in target decode steps), ``verify`` (a drafted token's extra verifying cost in steps) and
    ``prefill_ratio`` (target decode tokens/s over its prefill tokens/s: the compute-bound floor)."""
    step = k * draft_cost + max(1.0 + verify * k, (k + 1) * prefill_ratio)
    return expected_tokens(alpha, k) / step


def best_draft_length(
    alpha: float, draft_cost: float, verify: float, prefill_ratio: float = 0.0, k_max: int = MAX_DRAFT
) -> tuple[int, float]:
    """The draft length (1..k_max) with the best speed-up, and that speed-up."""
    return max(
        ((k, speedup(alpha, k, draft_cost, verify, prefill_ratio)) for k in range(1, k_max + 1)),
        key=lambda x: (round(x[1], 9), -x[0]),
    )


def head_params(target: ModelSpec, method: Method) -> float:
    """Parameters one MTP / EAGLE-3 draft step reads: one decoder layer of the target (its active part),
    the projection fusing hidden state and embedding, and an LM head (EAGLE-3: its reduced vocabulary)."""
    embed = target.vocab_size * target.hidden_size
    layer = max(target.active_params - embed * (1 if target.tied_embeddings else 2), 0) / target.n_layers
    vocab = EAGLE3_DRAFT_VOCAB if method == "eagle3" else target.vocab_size
    fuse = (3 if method == "eagle3" else 2) * target.hidden_size**2
    return layer + fuse + vocab * target.hidden_size


def head_cost(target: ModelSpec, method: Method, costs: SpecCosts = COSTS) -> float:
    """A head's draft token in target decode steps."""
    return costs.head_factor * head_params(target, method) / target.active_params


def draft_model_cost(target_tps: float, draft_tps: float, costs: SpecCosts = COSTS) -> float:
    """A draft model's token in target decode steps."""
    return costs.draft_factor * target_tps / draft_tps


def acceptance_for(
    rows: Iterable[SpecMeasurement],
    family_of: Callable[[str], str],
    target: ModelSpec,
    method: Method,
    task: Task,
    draft: str = "",
) -> tuple[float, tuple[SpecMeasurement, ...]] | None:
    """The per-token acceptance for a setup, and the measured rows it comes from: the same target and
    draft, else the same family, method and task, else the same method and task (median)."""
    rated = [r for r in rows if r.alpha is not None and r.method == method]
    tiers = (
        [r for r in rated if r.target == target.id and r.draft == draft and r.task == task],
        [r for r in rated if family_of(r.target) == target.family and r.task == task],
        [r for r in rated if r.task == task],
        rated,
    )
    for tier in tiers:
        if tier:
            return statistics.median(r.alpha for r in tier if r.alpha is not None), tuple(tier)
    return None


def spec_speeds(
    target_tps: float,
    draft_cost: float,
    verify: float,
    prefill_ratio: float,
    acceptances: Iterable[tuple[str, float, str]],
    k_max: int = MAX_DRAFT,
) -> tuple[SpecSpeed, ...]:
    """The decode speed with speculative decoding for each (task, acceptance, source)."""
    out = []
    for task, alpha, source in acceptances:
        k, x = best_draft_length(alpha, draft_cost, verify, prefill_ratio, k_max)
        out.append(
            SpecSpeed(task=task, alpha=alpha, draft_tokens=k, speedup=x, tokens_per_s=x * target_tps, source=source)
        )
    return tuple(out)


def speedup_bound(k: int, draft_cost: float) -> float:
    """No acceptance beats every drafted token accepted: ``(k + 1) / (1 + k c)``."""
    return (k + 1) / (1 + k * draft_cost)


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


def head_memory(target: ModelSpec, method: Method, context: int, kv: KvCacheType) -> DraftMemory:
    """An EAGLE-3 head: its parameters in BF16 (``head_params``) and the KV cache of its one layer."""
    kv_total = memory.kv_cache_bytes(target, Workload(context=context, kv_cache=kv))
    return DraftMemory(
        weights_bytes=round(head_params(target, method) * 2),
        kv_bytes=round(kv_total / max(target.kv_layers, 1)),
        overhead_bytes=0,
    )


__all__ = [
    "COSTS",
    "HEAD_K_MAX",
    "MAX_DRAFT",
    "DraftMemory",
    "MtpFact",
    "SpecCosts",
    "SpecMeasurement",
    "SpecSpeed",
    "acceptance_for",
    "acceptance_from_length",
    "best_draft_length",
    "draft_memory",
    "draft_model_cost",
    "expected_tokens",
    "head_cost",
    "head_memory",
    "head_params",
    "mtp_memory",
    "per_token_acceptance",
    "spec_speeds",
    "speedup",
    "speedup_bound",
]

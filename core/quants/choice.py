"""The quant a practitioner would run on a setup: the first rung of the ladder that fits fully, memory first.

The rule on plain parts (model, hardware, workload), so that a scan over the catalog's models (``/models``)
asks it without building a ``Scenario`` per model; ``advice.choose_quant`` asks it for one scenario. Each
rung is judged on plain numbers (its weights next to the one KV cache and overhead, ``fit.full_fit_verdict``):
nothing is placed. Below ``LOW_BITS`` a quantized KV cache (q8_0, fp8 on vLLM) is tried first, since it
costs far less quality than 2-bit weights.
"""

# no ``from __future__ import annotations``: pydantic reads these models' field types as objects instead of
# compiling each from a string, a few milliseconds of every start (``fitbot estimate``, issue 33)

from typing import NamedTuple

from core import memory
from core.estimate import with_kv
from core.fit import FullFit, Verdict, comfortable_reserve, keeps_embedding
from core.launch.vllm_hardware import has_checkpoint, vllm_quant_problem
from core.memory import usable_bytes
from core.models import Catalog, Engine, Frozen, Hardware, KvCacheType, ModelSpec, QuantSpec, Workload
from core.quants.ladder import LOW_BITS, ladder_weights

KV_CHOICES: dict[Engine, tuple[KvCacheType, ...]] = {
    Engine.LLAMA_CPP: (KvCacheType.F16, KvCacheType.Q8_0, KvCacheType.Q4_0),
    Engine.VLLM: (KvCacheType.BF16, KvCacheType.FP8),
}


class QuantChoice(Frozen):
    """The recommended quant (and KV cache) for one model on one setup, and why."""

    quant: str
    verdict: Verdict
    kv_cache: KvCacheType | None  # None: the asked/default cache; else the cache it needs
    reason: str  # locale code: "ladder", "kv_before_low_bits", "low_bits", "native"


class Picked(NamedTuple):
    """``pick_quant``'s pick in plain parts: the quant, its memory and the workload it was judged with."""

    quant: QuantSpec
    fit: FullFit
    workload: Workload  # with the KV cache it needs
    kv_cache: KvCacheType | None  # None: the asked/default cache; else the cache it needs
    reason: str  # ``QuantChoice.reason``

    def choice(self) -> QuantChoice:
        return QuantChoice(quant=self.quant.id, verdict=self.fit.verdict, kv_cache=self.kv_cache, reason=self.reason)


class _Fitted(NamedTuple):
    quant: QuantSpec
    fit: FullFit


def _first_fit(
    model: ModelSpec,
    hardware: Hardware,
    workload: Workload,
    catalog: Catalog,
    checkpoints: frozenset[tuple[str, str]] | None = None,
) -> _Fitted | None:
    """The first quant that fits with reserve, else the first that is tight (memory decides)."""
    usable = usable_bytes(hardware, workload)
    roomy = usable - comfortable_reserve(usable, hardware.count)  # ``full_fit_verdict``: fits up to here
    kv, per_device, shared = memory.context_bytes(model, workload)
    rest = kv + per_device * hardware.count + shared  # ``memory.overhead_bytes`` next to the KV cache
    keeps = keeps_embedding(hardware.gpu, workload.engine)
    tight: _Fitted | None = None
    for quant, w in ladder_weights(model, workload.engine, catalog):
        if workload.engine is Engine.VLLM and (
            vllm_quant_problem(quant.id, hardware.gpu) is not None or not has_checkpoint(model, quant.id, checkpoints)
        ):
            continue  # NVFP4 without FP4 tensor cores, AWQ with no known checkpoint (core.launch.vllm_hardware)
        host = w.embed_bytes if keeps else 0  # ``fit.host_weights_bytes``
        total = w.total_bytes - host + rest
        if total <= roomy:
            return _Fitted(quant, FullFit(Verdict.FITS, total, usable, host, w))
        if total <= usable and tight is None:
            tight = _Fitted(quant, FullFit(Verdict.TIGHT, total, usable, host, w))
    return tight


def pick_quant(
    model: ModelSpec,
    hardware: Hardware,
    workload: Workload,
    asked_kv: KvCacheType | None,
    catalog: Catalog,
    checkpoints: frozenset[tuple[str, str]] | None = None,
) -> Picked | None:
    """The first quant of the ladder that fits fully on ``hardware`` (``asked_kv``: the KV cache the question
    named, None when it named none); None when nothing fits fully in GPU memory."""
    found = _first_fit(model, hardware, workload, catalog, checkpoints)
    if found is None:
        usable = usable_bytes(hardware, workload)
        # no quant's weights alone (without the token embedding, which no placement keeps off the GPU) fit:
        # no KV cache type changes that
        if all(w.total_bytes - w.embed_bytes > usable for _, w in ladder_weights(model, workload.engine, catalog)):
            return None
    if found is None or found.quant.bits < LOW_BITS:
        kvs = KV_CHOICES[workload.engine]
        start = kvs.index(asked_kv) + 1 if asked_kv in kvs else 1
        for kv in kvs[start:]:  # q8_0, then q4_0 (fp8 on vLLM)
            there = with_kv(workload, kv)
            other = _first_fit(model, hardware, there, catalog, checkpoints)
            if other and other.quant.bits >= LOW_BITS and (found is None or other.quant.bits > found.quant.bits):
                return Picked(other.quant, other.fit, there, kv, "kv_before_low_bits")
    if found is None:
        return None
    quant = found.quant
    reason = "native" if quant.id == "MXFP4" else "low_bits" if quant.bits < LOW_BITS else "ladder"
    return Picked(quant, found.fit, workload, None, reason)


__all__ = ["KV_CHOICES", "Picked", "QuantChoice", "pick_quant"]

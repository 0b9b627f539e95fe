"""The result of a diagnosis: the placement, the problems, the flag changes and the corrected command."""

from __future__ import annotations

from typing import Literal

from core.diagnose.place import DeviceLoad
from core.fit import Verdict
from core.models import Frozen
from core.notes import Note
from core.speed.estimate import SpeedEstimate

FIT_CTX_MIN = 4096  # llama.cpp --fit-ctx default: --fit never cuts the context below it
VLLM_DEFAULT_GMU = 0.9
CTX_STEP = 1024


class FlagChange(Frozen):
    flag: str  # as the engine spells it: "-c", "--n-cpu-moe", "OLLAMA_KV_CACHE_TYPE"
    value: str | None  # None: remove the flag
    reason: str  # locale code: diagnose.reason.<reason>


class Outcome(Frozen):
    """One placement: per device, the verdict and the speed (None when it does not fit)."""

    devices: tuple[DeviceLoad, ...]
    verdict: Verdict
    over: tuple[str, ...] = ()
    speed: SpeedEstimate | None = None
    context: int
    kv_tokens: int | None = None  # vLLM: tokens the KV cache holds


class Diagnosis(Frozen):
    engine: Literal["llama.cpp", "vllm", "ollama"]
    model_id: str
    model_name: str
    quant: str
    context: int
    cache_k: str
    cache_v: str
    gpu_name: str
    gpu_count: int
    outcome: Outcome
    problems: tuple[Note, ...] = ()
    changes: tuple[FlagChange, ...] = ()
    corrected: tuple[str, ...] = ()  # the corrected command as shell lines (empty when nothing changes)
    fixed: Outcome | None = None  # the placement with the changes
    assumptions: tuple[Note, ...] = ()
    unknown_flags: tuple[str, ...] = ()


__all__ = ["CTX_STEP", "FIT_CTX_MIN", "VLLM_DEFAULT_GMU", "Diagnosis", "FlagChange", "Outcome"]

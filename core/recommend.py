"""Which models to run on a device: a ranked, explained list (the answer to "best model for 24 GB").

Each catalog model gets the quant a practitioner would run on the device (``advice.choose_quant``);
a model that does not fit fully may still be listed when it is a mixture of experts that runs at a
usable speed with its experts in system RAM (llama.cpp ``--n-cpu-moe``), the picks people actually
recommend for 8-24 GB cards. The score is a plain sum of four parts, each shown on request:

* capability: 10 x log2(1 + effective billions of parameters), where a MoE counts as the geometric
  mean of its total and active parameters (a common rule of thumb for its dense equivalent), minus
  10 points per bit below 4 bits per weight (2-bit weights lose clearly more than they save);
* recency: 1 point per 2 months after 2023-01 (up to 20), from the catalog's release date;
* popularity: 3 x log10(Hugging Face downloads), when the catalog has them (optional field
  ``hf_downloads``; without it the part is 0 for every model);
* speed: 10 x log2(decode tok/s / 10) on the user's hardware, clipped to -10..+10; the
  small-and-fast filter counts it twice.

Siblings with the same family and size (instruct / thinking / dated releases) are listed once, best
score first; base, safety and embedding variants are left out. Filters (coding, reasoning, vision,
small) use the catalog's optional ``variant`` and ``vision_params`` and the name rules in ``TAG_RULES``.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any, NamedTuple

from core.advice import quick_fit_on
from core.estimate import EstimateError, Request, device_on, ram_gb_of, resolved, shared_hardware
from core.fit import Verdict
from core.models import Catalog, Engine, Frozen, GpuSpec, Hardware, ModelSpec, QuantSize, QuantSpec, Workload
from core.notes import Note, note
from core.quants.choice import pick_quant
from core.speed.serving import single_stream

MIN_OFFLOAD_TOKENS_PER_S = 8.0  # an offloaded model is listed only at a usable reading speed
FAST_TOKENS_PER_S = 40.0
SMALL_PARAMS = 16e9
LOW_BIT_PENALTY = 10.0  # capability points per bit below 4 bits per weight
HIGH_QUALITY_BITS = 5.5  # Q6_K and up: practically lossless
RECENCY_START = 2023 * 12  # months since year 0 of 2023-01
FILTERS = ("coding", "reasoning", "vision", "small", "newest")  # newest: every model, the latest released first
TAG_RULES: dict[str, re.Pattern[str]] = {
    "coding": re.compile(r"coder|devstral|codestral|kimi-dev|starcoder|codellama", re.I),
    "reasoning": re.compile(
        r"(^|-)r1|qwq|thinking|reason|gpt-oss|magistral|^qwen3(-\d|\.\d|-next)|glm-4\.5|glm-5|minimax-m|kimi-k2\.5|nemotron-3",
        re.I,
    ),
    "vision": re.compile(r"gemma-3-(4|12|27)b|llama-4|mistral-small-3|(^|-)vl(-|$)|vision|kimi-k2\.5|gemma-4", re.I),
}


class ModelPick(Frozen):
    """One recommended model on the asked hardware, with its score parts and why it is listed."""

    model_id: str
    name: str
    quant: str
    kv_cache: str
    verdict: Verdict
    offload: str  # "none", "experts", "layers"
    decode_tokens_per_s: float
    gpu_bytes: int
    ram_bytes: int
    total_params: int
    active_params: int
    capability: float
    recency: float
    popularity: float
    speed: float
    score: float
    tags: tuple[str, ...]
    reasons: tuple[Note, ...]  # codes: "most_capable", "fastest", "newest", "popular", "moe_offload", ...


NOT_FOR_CHAT = frozenset({"base", "safety", "embedding", "reward"})  # catalog variants nobody chats with
VARIANT_TAGS = {
    "coder": "coding",
    "vision": "vision",
    "thinking": "reasoning",
    "distill": "reasoning",
    "reasoning": "reasoning",
    "math": "reasoning",
}


def tags_of(model: ModelSpec) -> tuple[str, ...]:
    """Coding / reasoning / vision tags: the catalog's ``variant`` and ``vision_params``, plus the name
    rules in ``TAG_RULES`` (memoised on those three: ``/models`` asks for every catalog model)."""
    return _tags(model.id, model.variant, bool(model.vision_params))


@lru_cache(maxsize=4096)
def _tags(model_id: str, variant: str, vision: bool) -> tuple[str, ...]:
    tags = {tag for tag, rule in TAG_RULES.items() if rule.search(model_id)}
    if variant in VARIANT_TAGS:
        tags.add(VARIANT_TAGS[variant])
    if vision:
        tags.add("vision")
    return tuple(tag for tag in TAG_RULES if tag in tags)


def _months(release: str) -> int | None:
    match = re.match(r"(\d{4})(?:-(\d{2}))?", release or "")
    if not match:
        return None
    return int(match.group(1)) * 12 + (int(match.group(2)) - 1 if match.group(2) else 6)


def capability_points(model: ModelSpec, bits: float) -> float:
    effective = math.sqrt(model.total_params * model.active_params) if model.is_moe else model.total_params
    points = 10 * math.log2(1 + effective / 1e9)
    return points - LOW_BIT_PENALTY * max(0.0, 4 - bits)


def recency_points(model: ModelSpec) -> float:
    months = _months(model.release)
    return 0.0 if months is None else max(0.0, min(20.0, (months - RECENCY_START) / 2))


def popularity_points(model: ModelSpec) -> float:
    downloads = getattr(model, "hf_downloads", None)
    return 3 * math.log10(downloads) if isinstance(downloads, int | float) and downloads > 1 else 0.0


def speed_points(tokens_per_s: float) -> float:
    if tokens_per_s <= 0:
        return -10.0
    return max(-10.0, min(10.0, 10 * math.log2(tokens_per_s / 10)))


class _Candidate(NamedTuple):
    """A catalog model as every device sees it for one request: the ``scenario`` parts and score parts that do
    not depend on the device (``_candidates``)."""

    model: ModelSpec
    tags: tuple[str, ...]
    recency: float
    popularity: float
    sibling: str  # ``_sibling_key``
    quant: QuantSpec  # the asked (or default) quant, for the MoE offload
    measured: QuantSize | None
    workload: Workload


# ``_candidates`` per catalog object and request; id() keyed with the catalog kept in the entry, as in
# ``core.weights`` (/models on one device after another asks the same request)
_CANDIDATES: dict[tuple[int, Request], tuple[Catalog, tuple[_Candidate, ...]]] = {}
_CANDIDATES_ENTRIES = 64


def _candidates(catalog: Catalog, request: Request) -> tuple[_Candidate, ...]:
    """The catalog's chat models that ``scenario`` resolves ``request`` for, with their device-free parts."""
    hit = _CANDIDATES.get((id(catalog), request))
    if hit is not None and hit[0] is catalog:
        return hit[1]
    if len(_CANDIDATES) >= _CANDIDATES_ENTRIES:
        _CANDIDATES.clear()
    found = []
    for model in catalog.models:
        if getattr(model, "variant", "") in NOT_FOR_CHAT:
            continue
        try:
            _, quant, measured, workload = resolved(model, request, catalog)
        except EstimateError:
            continue
        tags, recency, popularity = tags_of(model), recency_points(model), popularity_points(model)
        spec = catalog.model(model.id)  # siblings by the spec the id names
        sibling = _sibling_key(spec) if spec else model.id
        found.append(_Candidate(model, tags, recency, popularity, sibling, quant, measured, workload))
    candidates = tuple(found)
    _CANDIDATES[(id(catalog), request)] = (catalog, candidates)
    return candidates


class _Row(NamedTuple):
    """A ``ModelPick`` while the scan runs (plain: only the listed rows become one)."""

    model_id: str
    name: str
    quant: str
    kv_cache: str
    verdict: Verdict
    offload: str
    decode_tokens_per_s: float
    gpu_bytes: int
    ram_bytes: int
    total_params: int
    active_params: int
    capability: float
    recency: float
    popularity: float
    speed: float
    score: float
    tags: tuple[str, ...]
    sibling: str


class _Placed(NamedTuple):
    quant: QuantSpec
    kv_cache: str
    verdict: Verdict
    offload: str
    gpu_bytes: int
    ram_bytes: int
    decode_tokens_per_s: float


def _placement(
    c: _Candidate,
    hardware: Hardware,
    request: Request,
    catalog: Catalog,
    checkpoints: frozenset[tuple[str, str]] | None = None,
) -> _Placed | None:
    """The quant, KV cache, placement and speed a recommendation is about: the best quant that fits, else a
    MoE with experts in RAM. Memory decides first (``quant_choice.pick_quant``); speed only for the pick."""
    model, workload = c.model, c.workload
    if (picked := pick_quant(model, hardware, workload, request.kv_cache, catalog, checkpoints)) is not None:
        quant, fit = picked.quant, picked.fit
        speed = single_stream(model, fit, hardware, picked.workload, quant.id)
        kv = (picked.kv_cache or workload.kv_cache).value
        # ``advice.quick_fit``'s row of a setup that holds everything on the GPU(s)
        return _Placed(quant, kv, fit.verdict, "none", fit.total_bytes, fit.host_bytes, speed)
    if not model.is_moe or workload.engine is not Engine.LLAMA_CPP or hardware.gpu.unified_memory:
        return None
    row = quick_fit_on(model, c.quant, hardware, workload, c.measured)
    if row.verdict is not Verdict.OFFLOAD or (row.decode_tokens_per_s or 0.0) < MIN_OFFLOAD_TOKENS_PER_S:
        return None
    speed = row.decode_tokens_per_s or 0.0
    return _Placed(c.quant, workload.kv_cache.value, row.verdict, row.offload, row.gpu_bytes, row.ram_bytes, speed)


def _sibling_key(model: ModelSpec) -> str:
    """Models listed once: the same family and size (instruct/thinking/dated releases of one model)."""
    return f"{model.family}|{round(model.total_params / 1e9)}|{round(model.active_params / 1e9)}"


def rank_models(
    catalog: Catalog,
    gpu: GpuSpec,
    request: Request,
    model_filter: str | None = None,
    limit: int | None = None,
    checkpoints: frozenset[tuple[str, str]] | None = None,
) -> tuple[ModelPick, ...]:
    """Catalog models that fit (or run as MoE with offload) on ``request.gpu_count`` x ``gpu``, best first;
    on vLLM an AWQ/GPTQ/NVFP4 pick only where ``checkpoints`` holds one (None: no such filter)."""
    hardware = shared_hardware(
        device_on(gpu, request), request.gpu_count, ram_gb_of(request), request.ram_bandwidth_gbps
    )
    rows: list[_Row] = []
    for c in _candidates(catalog, request):
        model, tags = c.model, c.tags
        if model_filter in ("coding", "reasoning", "vision") and model_filter not in tags:
            continue
        if model_filter == "small" and model.total_params > SMALL_PARAMS:
            continue
        placed = _placement(c, hardware, request, catalog, checkpoints)
        if placed is None:
            continue
        speed = placed.decode_tokens_per_s
        cap, spd = capability_points(model, placed.quant.bits), speed_points(speed)
        if model_filter == "small" and speed < FAST_TOKENS_PER_S:
            continue
        score = cap + c.recency + c.popularity + spd * (2 if model_filter == "small" else 1)
        rows.append(
            _Row(
                model.id,
                model.name,
                placed.quant.id,
                placed.kv_cache,
                placed.verdict,
                placed.offload,
                speed,
                placed.gpu_bytes,
                placed.ram_bytes,
                model.total_params,
                model.active_params,
                cap,
                c.recency,
                c.popularity,
                spd,
                score,
                tags,
                c.sibling,
            )
        )
    rows.sort(key=lambda p: (-p.score, p.model_id))
    if model_filter == "newest":  # "the latest model for my 3090": by release date, the score breaks ties
        released = {m.id: m.release for m in catalog.models}
        rows.sort(key=lambda p: released.get(p.model_id, ""), reverse=True)
    seen: set[str] = set()
    unique: list[_Row] = []
    for pick in rows:
        if pick.sibling in seen:
            continue
        seen.add(pick.sibling)
        unique.append(pick)
    chosen = unique[:limit] if limit else unique
    quant_bits = {q.id: q.bits for q in catalog.quants}
    leaders = _leaders(chosen)
    return tuple(ModelPick(**_fields(p), reasons=_reasons(p, leaders, quant_bits)) for p in chosen)


def _fields(row: _Row) -> dict[str, Any]:
    fields = row._asdict()
    del fields["sibling"]
    return fields


def _leaders(picks: list[_Row]) -> dict[str, _Row]:
    """The pick that leads in each part of the score (the first one on a tie)."""
    if not picks:
        return {}
    parts = ("capability", "decode_tokens_per_s", "recency", "popularity")
    return {part: max(picks, key=lambda p, part=part: getattr(p, part)) for part in parts}  # type: ignore[misc]


def _reasons(pick: _Row, leaders: dict[str, _Row], bits: dict[str, float]) -> tuple[Note, ...]:
    """Why a row is listed: what it leads in, else what stands out about it; offload always said."""
    reasons: list[Note] = []
    if pick.offload != "none":
        reasons.append(note("moe_offload", ram_bytes=pick.ram_bytes))
    quant_bits = bits.get(pick.quant, 4.0)
    if pick is leaders["capability"]:
        reasons.append(note("most_capable"))
    elif pick is leaders["decode_tokens_per_s"]:
        reasons.append(note("fastest"))
    elif pick.recency and pick is leaders["recency"]:
        reasons.append(note("newest"))
    elif pick.popularity and pick is leaders["popularity"]:
        reasons.append(note("most_popular"))
    elif reasons:
        pass  # the offload reason says enough
    elif quant_bits < 3:
        reasons.append(note("low_bit_quant", quant=pick.quant))
    elif quant_bits >= HIGH_QUALITY_BITS:
        reasons.append(note("quality_quant", quant=pick.quant))
    elif pick.speed >= 5:
        reasons.append(note("quick"))
    else:
        reasons.append(note("capable"))
    for tag in pick.tags:
        reasons.append(note(f"tag_{tag}"))
    return tuple(reasons[:3])


__all__ = ["FILTERS", "ModelPick", "rank_models", "tags_of"]

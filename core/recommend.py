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

from core.advice import QuickFit, quick_choice, quick_fit
from core.estimate import EstimateError, Request, scenario
from core.fit import Verdict
from core.models import Catalog, Engine, Frozen, GpuSpec, ModelSpec
from core.notes import Note, note

MIN_OFFLOAD_TOKENS_PER_S = 8.0  # an offloaded model is listed only at a usable reading speed
FAST_TOKENS_PER_S = 40.0
SMALL_PARAMS = 16e9
LOW_BIT_PENALTY = 10.0  # capability points per bit below 4 bits per weight
HIGH_QUALITY_BITS = 5.5  # Q6_K and up: practically lossless
RECENCY_START = 2023 * 12  # months since year 0 of 2023-01
FILTERS = ("coding", "reasoning", "vision", "small")
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


def _placement(model: ModelSpec, gpu: GpuSpec, request: Request, catalog: Catalog) -> tuple[str, str, QuickFit] | None:
    """(quant, KV cache, placement and speed) a recommendation is about: the best quant that fits, else a
    MoE with experts in RAM. Memory decides first (``quick_choice`` places); speed only for the pick."""
    try:
        asked = scenario(model, gpu, request, catalog)
    except EstimateError:
        return None
    if (found := quick_choice(asked, catalog)) is not None:
        choice, row = found
        return choice.quant, (choice.kv_cache or asked.kv_cache).value, row
    if not model.is_moe or asked.engine is not Engine.LLAMA_CPP or gpu.unified_memory:
        return None
    row = quick_fit(asked)
    if row.verdict is not Verdict.OFFLOAD or (row.decode_tokens_per_s or 0.0) < MIN_OFFLOAD_TOKENS_PER_S:
        return None
    return asked.quant.id, asked.kv_cache.value, row


def _sibling_key(model: ModelSpec) -> str:
    """Models listed once: the same family and size (instruct/thinking/dated releases of one model)."""
    return f"{model.family}|{round(model.total_params / 1e9)}|{round(model.active_params / 1e9)}"


def rank_models(
    catalog: Catalog,
    gpu: GpuSpec,
    request: Request,
    model_filter: str | None = None,
    limit: int | None = None,
) -> tuple[ModelPick, ...]:
    """Catalog models that fit (or run as MoE with offload) on ``request.gpu_count`` x ``gpu``, best first."""
    picks: list[ModelPick] = []
    for model in catalog.models:
        if getattr(model, "variant", "") in NOT_FOR_CHAT:
            continue
        tags = tags_of(model)
        if model_filter in ("coding", "reasoning", "vision") and model_filter not in tags:
            continue
        if model_filter == "small" and model.total_params > SMALL_PARAMS:
            continue
        placed = _placement(model, gpu, request, catalog)
        if placed is None:
            continue
        quant_id, kv, row = placed
        quant = catalog.quant(quant_id)
        bits = quant.bits if quant else 4.0
        speed = row.decode_tokens_per_s or 0.0
        cap, rec, pop, spd = (
            capability_points(model, bits),
            recency_points(model),
            popularity_points(model),
            speed_points(speed),
        )
        if model_filter == "small" and speed < FAST_TOKENS_PER_S:
            continue
        score = cap + rec + pop + spd * (2 if model_filter == "small" else 1)
        picks.append(
            ModelPick(
                model_id=model.id,
                name=model.name,
                quant=quant_id,
                kv_cache=kv,
                verdict=row.verdict,
                offload=row.offload,
                decode_tokens_per_s=speed,
                gpu_bytes=row.gpu_bytes,
                ram_bytes=row.ram_bytes,
                total_params=model.total_params,
                active_params=model.active_params,
                capability=cap,
                recency=rec,
                popularity=pop,
                speed=spd,
                score=score,
                tags=tags,
                reasons=(),
            )
        )
    picks.sort(key=lambda p: (-p.score, p.model_id))
    seen: set[str] = set()
    unique: list[ModelPick] = []
    for pick in picks:
        spec = catalog.model(pick.model_id)
        key = _sibling_key(spec) if spec else pick.model_id
        if key in seen:
            continue
        seen.add(key)
        unique.append(pick)
    chosen = unique[:limit] if limit else unique
    quant_bits = {q.id: q.bits for q in catalog.quants}
    leaders = _leaders(chosen)
    return tuple(p.model_copy(update={"reasons": _reasons(p, leaders, quant_bits)}) for p in chosen)


def _leaders(picks: list[ModelPick]) -> dict[str, ModelPick]:
    """The pick that leads in each part of the score (the first one on a tie)."""
    if not picks:
        return {}
    parts = ("capability", "decode_tokens_per_s", "recency", "popularity")
    return {part: max(picks, key=lambda p, part=part: getattr(p, part)) for part in parts}  # type: ignore[misc]


def _reasons(pick: ModelPick, leaders: dict[str, ModelPick], bits: dict[str, float]) -> tuple[Note, ...]:
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

"""The numbers of one Analysis as plain numbers (GiB, tok/s, s, $), for ``--json`` and for checks.

Every card shows these numbers; ``figures_of`` only reads the Analysis, it computes nothing new.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.measured import MeasuredSpeed
from core.models import GIB, Frozen

if TYPE_CHECKING:  # read only: the models stay importable without the estimator (``bot.reply`` carries them)
    from core.analysis import Analysis, Cost
    from core.cost import OfferQuote
    from core.diagnose.types import Outcome


class MemoryFigures(Frozen):
    weights_gib: float
    kv_cache_gib: float
    overhead_gib: float
    total_gib: float  # everything on the GPU(s), nothing offloaded
    gpu_gib: float  # what the GPU(s) hold in this placement
    ram_gib: float  # what system RAM holds
    usable_gib: float  # GPU memory the runtime may fill
    ram_usable_gib: float
    reserve_gib: float  # usable - what the GPU(s) hold


class OfferFigures(Frozen):
    provider: str
    gpu_id: str
    gpu_count: int
    usd_per_hour: float
    users: int
    users_at_once: int
    per_user_tokens_per_s: float
    total_tokens_per_s: float
    usd_per_million_tokens: float  # batched over ``users``, never above one user's price


class Figures(Frozen):
    memory: MemoryFigures | None = None
    verdict: str | None = None
    decode_tokens_per_s: float | None = None
    decode_band: tuple[float, float] | None = None
    context: int | None = None  # tokens per sequence the figures at the context are for
    decode_at_context_tokens_per_s: float | None = None  # one user with the KV cache of the context filled
    decode_at_context_band: tuple[float, float] | None = None
    prefill_tokens_per_s: float | None = None
    prefill_band: tuple[float, float] | None = None
    ttft_s: float | None = None
    prompt_tokens: int | None = None
    users: int | None = None
    users_at_once: int | None = None
    per_user_tokens_per_s: float | None = None
    total_tokens_per_s: float | None = None
    cost_users: int | None = None
    usd_per_million_tokens: float | None = None  # the cheapest offer's batched price
    offers: tuple[OfferFigures, ...] = ()
    measured: tuple[MeasuredSpeed, ...] = ()  # published runs of this setup, beside the estimate (``core.measured``)


def _gib(value: int) -> float:
    return round(value / GIB, 3)


def offer_price(q: OfferQuote) -> float:
    """The batched $/Mtok of an offer; a batch never makes a token dearer than one user's."""
    return min(q.usd_per_million_tokens_at_users, q.usd_per_million_tokens)


def offer_figures(q: OfferQuote) -> OfferFigures:
    return OfferFigures(
        provider=q.offer.provider,
        gpu_id=q.gpu.id,
        gpu_count=q.offer.gpu_count,
        usd_per_hour=q.offer.price_per_hour_usd,
        users=q.users,
        users_at_once=q.users_served,
        per_user_tokens_per_s=round(q.per_user_tokens_per_s, 6),
        total_tokens_per_s=round(q.aggregate_tokens_per_s, 6),
        usd_per_million_tokens=round(offer_price(q), 4),
    )


def cost_figures(cost: Cost) -> Figures:
    """A /cloud answer: the offers, each with its own speed and price, and the cheapest price."""
    offers = tuple(offer_figures(q) for q in cost.offers)
    cheapest = min((o.usd_per_million_tokens for o in offers), default=None)
    return Figures(cost_users=cost.users, usd_per_million_tokens=cheapest, offers=offers)


def figures_of(analysis: Analysis) -> Figures:
    est = analysis.estimate
    mem, sp, serving = est.memory, est.speed, est.serving
    runs = est.verdict.value != "no_fit"
    cost = cost_figures(analysis.cost) if analysis.cost is not None else Figures()
    return Figures(
        memory=MemoryFigures(
            weights_gib=_gib(mem.weights_bytes),
            kv_cache_gib=_gib(mem.kv_cache_bytes),
            overhead_gib=_gib(mem.overhead_bytes),
            total_gib=_gib(mem.total_bytes),
            gpu_gib=_gib(est.gpu_bytes),
            ram_gib=_gib(est.ram_bytes),
            usable_gib=_gib(mem.usable_bytes),
            ram_usable_gib=_gib(est.offload.ram_usable_bytes),
            reserve_gib=_gib(est.gpu_reserve_bytes),
        ),
        verdict=est.verdict.value,
        decode_tokens_per_s=round(sp.decode_tokens_per_s, 3) if runs else None,
        decode_band=(round(sp.decode_range[0], 3), round(sp.decode_range[1], 3)) if runs else None,
        context=sp.context,
        decode_at_context_tokens_per_s=round(sp.decode_tokens_per_s_at_context, 3) if runs else None,
        decode_at_context_band=(
            (round(sp.decode_range_at_context[0], 3), round(sp.decode_range_at_context[1], 3)) if runs else None
        ),
        prefill_tokens_per_s=round(sp.prefill_tokens_per_s, 3) if runs else None,
        prefill_band=(round(sp.prefill_range[0], 3), round(sp.prefill_range[1], 3)) if runs else None,
        ttft_s=round(sp.ttft_s, 3) if runs else None,
        prompt_tokens=sp.prompt_tokens,
        users=serving.users,
        users_at_once=serving.users_served if runs else None,
        # 6 decimals, not 3: a speed of 7.6503 rounded to 7.65 would print 7.6 (half-even) beside the card's 7.7
        per_user_tokens_per_s=round(serving.per_user_tokens_per_s, 6) if runs else None,
        total_tokens_per_s=round(serving.aggregate_tokens_per_s, 6) if runs else None,
        cost_users=cost.cost_users,
        usd_per_million_tokens=cost.usd_per_million_tokens,
        offers=cost.offers,
    )


def outcome_figures(outcome: Outcome) -> Figures:
    """A pasted command's placement (``core.diagnose.command``): the memory summed over its device rows (the
    GPUs, then system RAM), the verdict and the speed it gives."""
    gpus = [d for d in outcome.devices if d.name != "RAM"]
    ram = next((d for d in outcome.devices if d.name == "RAM"), None)
    held = sum(d.total_bytes for d in gpus)
    usable = sum(d.usable_bytes for d in gpus)
    sp = outcome.speed
    return Figures(
        memory=MemoryFigures(
            weights_gib=_gib(sum(d.weights_bytes for d in outcome.devices)),
            kv_cache_gib=_gib(sum(d.kv_bytes for d in outcome.devices)),
            overhead_gib=_gib(sum(d.overhead_bytes for d in outcome.devices)),
            total_gib=_gib(sum(d.total_bytes for d in outcome.devices)),
            gpu_gib=_gib(held),
            ram_gib=_gib(ram.total_bytes if ram else 0),
            usable_gib=_gib(usable),
            ram_usable_gib=_gib(ram.usable_bytes if ram else 0),
            reserve_gib=_gib(usable - held),
        ),
        verdict=outcome.verdict.value,
        decode_tokens_per_s=round(sp.decode_tokens_per_s, 3) if sp else None,
        decode_band=(round(sp.decode_range[0], 3), round(sp.decode_range[1], 3)) if sp else None,
        prefill_tokens_per_s=round(sp.prefill_tokens_per_s, 3) if sp else None,
        prefill_band=(round(sp.prefill_range[0], 3), round(sp.prefill_range[1], 3)) if sp else None,
        ttft_s=round(sp.ttft_s, 3) if sp else None,
        prompt_tokens=sp.prompt_tokens if sp else None,
    )


__all__ = [
    "Figures",
    "MemoryFigures",
    "OfferFigures",
    "cost_figures",
    "figures_of",
    "offer_figures",
    "offer_price",
    "outcome_figures",
]

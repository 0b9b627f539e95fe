"""Cloud cost per million tokens and rent-vs-buy, each on the hardware the number is about.

The reference calculator prices tokens with one GPU's speed and another GPU's hourly rate. Here
every offer is placed (``fit.place``) on its own GPU model and count, gets its own decode speed
and so its own $/Mtok. Prices and the date they were seen are arguments; nothing here reads a
clock or the network.

Decode speed comes from ``core.speed`` through ``decode_speeds``, the only function that calls it.
"""

from __future__ import annotations

import math

from core.estimate import EstimateError, Request, resolve
from core.fit import Placement, Verdict, place
from core.models import (
    Catalog,
    CloudOffer,
    Frozen,
    GpuSpec,
    Hardware,
    ModelSpec,
    QuantSize,
    QuantSpec,
    Workload,
)
from core.speed import concurrency, decode_tokens_per_s
from core.speed_constants import TG_MEAN_DEPTH
from core.weights import weights

# Rent-vs-buy defaults; every one is listed in RentVsBuy.assumptions and can be overridden.
DEFAULT_USD_PER_KWH = 0.30  # household tariff order of magnitude (EU ~0.30, US ~0.17 $/kWh)
DEFAULT_UTILISATION = 0.70  # average board power while serving, as a share of TDP
DEFAULT_HOURS_PER_DAY = 8.0
DAYS_PER_MONTH = 365.25 / 12  # 30.4375
DEFAULT_USERS = 8  # concurrent streams for the "real deployment" $/Mtok figure
MAX_GPU_COUNT = 64  # Hardware.count allows 1..64 devices


class Speeds(Frozen):
    """Single-stream and batched decode speed on one setup."""

    decode_tokens_per_s: float  # one user
    users: int  # concurrent streams asked for
    users_served: int  # streams whose KV cache fits next to the weights (<= users)
    aggregate_tokens_per_s: float  # all served streams together


class OfferQuote(Frozen):
    """One cloud offer that holds the model, with its own speed and token price."""

    offer: CloudOffer
    gpu: GpuSpec
    verdict: Verdict  # fits or tight, never offload
    total_bytes: int
    usable_bytes: int
    decode_tokens_per_s: float
    usd_per_million_tokens: float  # one user generating back to back
    users: int
    users_served: int
    aggregate_tokens_per_s: float
    usd_per_million_tokens_at_users: float  # batched serving, what a deployment pays
    hours_per_month: float
    monthly_usd: float  # price_per_hour * hours_per_month
    seen: str  # date the price was observed: prices go stale


class RentVsBuy(Frozen):
    """Buying the hardware versus renting the cheapest fitting cloud offer for the same hours."""

    gpu_id: str
    count: int
    purchase_usd: float
    watts: float | None  # board power counted (TDP x count unless overridden); None = unknown
    electricity_usd_per_month: float  # 0 when watts is unknown (see assumptions)
    cloud_provider: str
    cloud_instance: str
    cloud_usd_per_hour: float
    cloud_seen: str
    hours_per_month: float
    cloud_usd_per_month: float
    break_even_months: float | None  # None: renting stays cheaper than the power bill
    # Same tokens instead of same hours: the cloud GPU may be faster or slower than the owned one.
    cloud_usd_per_month_same_tokens: float | None = None
    break_even_months_same_tokens: float | None = None
    assumptions: tuple[str, ...]


def usd_per_million_tokens(usd_per_hour: float, tokens_per_s: float) -> float:
    """Price of one million generated tokens: $/h / (tok/s * 3600 s/h) * 1e6."""
    if tokens_per_s <= 0:
        return math.inf
    return usd_per_hour / (tokens_per_s * 3600) * 1e6


def hours_per_month(hours_per_day: float = DEFAULT_HOURS_PER_DAY) -> float:
    return hours_per_day * DAYS_PER_MONTH


def electricity_usd_per_month(watts: float, utilisation: float, hours: float, usd_per_kwh: float) -> float:
    """W x utilisation x h / 1000 = kWh; times the tariff."""
    return watts * utilisation * hours / 1000 * usd_per_kwh


def break_even_months(purchase_usd: float, cloud_usd_per_month: float, electricity_usd: float) -> float | None:
    """Months until owning is cheaper: purchase / (cloud - electricity); None when that never happens."""
    saving = cloud_usd_per_month - electricity_usd
    return purchase_usd / saving if saving > 0 else None


def decode_speeds(
    model: ModelSpec,
    placement: Placement,
    hardware: Hardware,
    workload: Workload,
    users: int = 1,
    quant_id: str | None = None,
) -> Speeds:
    """Single-stream and batched decode speed from ``core.speed``: the one place cost and advice ask it.

    Single stream: ``speed.decode_tokens_per_s`` at the tg128 mean depth, the same figure
    ``estimate_speed`` reports, without its prefill and TTFT work.
    Batched: ``speed.concurrency`` (roofline over a batch of min(users, sequences whose KV fits));
    when not even one more full-context sequence fits, the single stream is all there is.
    """
    single = decode_tokens_per_s(model, placement.weights, placement, hardware, workload, TG_MEAN_DEPTH, quant_id)
    if users <= 1:
        return Speeds(decode_tokens_per_s=single, users=1, users_served=1, aggregate_tokens_per_s=single)
    batch = concurrency(model, placement.weights, hardware, workload, users, quant_id)
    if batch.batch < 1 or batch.aggregate_tokens_per_s <= 0:
        return Speeds(decode_tokens_per_s=single, users=users, users_served=1, aggregate_tokens_per_s=single)
    return Speeds(
        decode_tokens_per_s=single,
        users=users,
        users_served=batch.batch,
        aggregate_tokens_per_s=batch.aggregate_tokens_per_s,
    )


def quote_offers(
    model: ModelSpec,
    quant: QuantSpec,
    request: Request,
    catalog: Catalog,
    users: int = DEFAULT_USERS,
    hours_per_day: float = DEFAULT_HOURS_PER_DAY,
    measured: QuantSize | None = None,
    limit: int | None = None,
) -> tuple[OfferQuote, ...]:
    """Offers whose GPUs hold the model fully (fits/tight), each priced on its own hardware, cheapest $/h first.

    With ``limit`` the scan stops after that many fitting offers (offers are tried cheapest first).
    """
    measured = measured or catalog.size(model.id, quant.id)
    w = weights(model, quant, measured)
    floor = w.total_bytes - w.embed_bytes  # no placement holds less than this on the GPU(s)
    hours = hours_per_month(hours_per_day)
    quotes: list[OfferQuote] = []
    for offer in sorted(catalog.offers, key=lambda o: (o.price_per_hour_usd, o.provider)):
        if limit is not None and len(quotes) >= limit:
            break
        gpu = catalog.gpu(offer.gpu_id)
        if gpu is None or offer.gpu_count > MAX_GPU_COUNT:  # rack-scale (NVL72) offers: not modelled
            continue
        if gpu.memory_bytes * offer.gpu_count < floor:
            continue
        hardware, workload, _, _, _ = resolve(model, gpu, request.model_copy(update={"gpu_count": offer.gpu_count}))
        if workload.engine not in quant.engines:
            raise EstimateError(f"{quant.id} cannot be served by {workload.engine.value}")
        placement = place(model, quant, hardware, workload, measured)
        if placement.verdict not in (Verdict.FITS, Verdict.TIGHT):
            continue
        speeds = decode_speeds(model, placement, hardware, workload, users, quant.id)
        quotes.append(
            OfferQuote(
                offer=offer,
                gpu=gpu,
                verdict=placement.verdict,
                total_bytes=placement.memory.total_bytes,
                usable_bytes=placement.memory.usable_bytes,
                decode_tokens_per_s=speeds.decode_tokens_per_s,
                usd_per_million_tokens=usd_per_million_tokens(offer.price_per_hour_usd, speeds.decode_tokens_per_s),
                users=users,
                users_served=speeds.users_served,
                aggregate_tokens_per_s=speeds.aggregate_tokens_per_s,
                usd_per_million_tokens_at_users=usd_per_million_tokens(
                    offer.price_per_hour_usd, speeds.aggregate_tokens_per_s
                ),
                hours_per_month=hours,
                monthly_usd=offer.price_per_hour_usd * hours,
                seen=offer.seen,
            )
        )
    quotes.sort(key=lambda q: (q.offer.price_per_hour_usd, q.usd_per_million_tokens, q.offer.provider))
    return tuple(quotes)


def rent_vs_buy(
    gpu: GpuSpec,
    count: int,
    cloud: OfferQuote,
    hours_per_day: float = DEFAULT_HOURS_PER_DAY,
    utilisation: float = DEFAULT_UTILISATION,
    usd_per_kwh: float = DEFAULT_USD_PER_KWH,
    watts: float | None = None,
    owned_tokens_per_s: float | None = None,
) -> RentVsBuy | None:
    """Months until buying ``count`` x ``gpu`` beats renting ``cloud``; None when the GPU has no price."""
    if gpu.price_usd is None:
        return None
    hours = hours_per_month(hours_per_day)
    power = watts if watts is not None else (gpu.tdp_watts * count if gpu.tdp_watts else None)
    power_bill = electricity_usd_per_month(power, utilisation, hours, usd_per_kwh) if power else 0.0
    purchase = gpu.price_usd * count
    rate = cloud.offer.price_per_hour_usd
    notes = [
        f"purchase {count} x {gpu.short_name} at ${gpu.price_usd:,.0f} ({gpu.price_note or 'catalog price'})",
        f"{hours_per_day:g} h/day x {DAYS_PER_MONTH} days = {hours:.1f} h/month, owned and rented alike",
        f"electricity ${usd_per_kwh:.2f}/kWh at {utilisation:.0%} of board power"
        + ("" if watts is None else f" ({watts:g} W given)"),
        "board power only: host CPU, RAM and cooling not counted; no resale value; cloud billed per hour used",
        f"cloud price seen {cloud.seen} ({cloud.offer.provider}); prices change, check the date",
    ]
    if not power:
        notes.append("power draw unknown: electricity left out, so break-even comes out early")
    same_tokens = breakeven_tokens = None
    if owned_tokens_per_s and cloud.decode_tokens_per_s > 0:
        # Renting only as many hours as the cloud GPU needs for the tokens the owned one makes.
        same_tokens = rate * hours * owned_tokens_per_s / cloud.decode_tokens_per_s
        breakeven_tokens = break_even_months(purchase, same_tokens, power_bill)
        notes.append(
            f"same-token comparison: owned {owned_tokens_per_s:.1f} tok/s vs cloud "
            f"{cloud.decode_tokens_per_s:.1f} tok/s"
        )
    return RentVsBuy(
        gpu_id=gpu.id,
        count=count,
        purchase_usd=purchase,
        watts=power,
        electricity_usd_per_month=power_bill,
        cloud_provider=cloud.offer.provider,
        cloud_instance=cloud.offer.instance,
        cloud_usd_per_hour=rate,
        cloud_seen=cloud.seen,
        hours_per_month=hours,
        cloud_usd_per_month=rate * hours,
        break_even_months=break_even_months(purchase, rate * hours, power_bill),
        cloud_usd_per_month_same_tokens=same_tokens,
        break_even_months_same_tokens=breakeven_tokens,
        assumptions=tuple(notes),
    )


def cost_assumptions(users: int = DEFAULT_USERS, hours_per_day: float = DEFAULT_HOURS_PER_DAY) -> tuple[str, ...]:
    """What every quote assumes, for the card's footnote."""
    return (
        "each offer runs on its own GPU model and count; only offers that hold the whole model are listed",
        "$/Mtok = hourly price / (decode tok/s x 3600) x 1e6, output tokens, instance busy the whole hour",
        (
            f"batched figure: {users} concurrent streams (vLLM / llama-server -np continuous batching), "
            "capped at the streams whose KV cache fits"
        ),
        f"monthly = hourly price x {hours_per_month(hours_per_day):.1f} h ({hours_per_day:g} h/day)",
    )

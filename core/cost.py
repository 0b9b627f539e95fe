"""Cloud cost per million tokens and rent-vs-buy, each on the hardware the number is about.

The reference calculator prices tokens with one GPU's speed and another GPU's hourly rate. Here
every offer is judged on its own GPU model and count (``fit.full_fit``: it must hold the model
fully), gets its own decode speed and so its own $/Mtok. Prices and the date they were seen are
arguments; nothing here reads a clock or the network.

Decode speed under batching comes from ``core.speed.serving.served`` (``decode_speeds`` in plain numbers), the one
rule every card reads.
"""

# no ``from __future__ import annotations``: pydantic reads these models' field types as objects instead of
# compiling each from a string, a few milliseconds of every start (``fitbot estimate``, issue 33)

import math
from typing import NamedTuple

from core.estimate import DEFAULT_COST_USERS, Scenario, hardware_on
from core.fit import FullFit, Verdict, full_fit
from core.launch.vllm_hardware import engine_runs
from core.models import Catalog, CloudOffer, Frozen, GpuSpec
from core.notes import Note, note
from core.speed.serving import Served, served
from core.weights import weights

# Rent-vs-buy defaults; every one is listed in RentVsBuy.notes and can be overridden.
DEFAULT_USD_PER_KWH = 0.30  # household tariff order of magnitude (EU ~0.30, US ~0.17 $/kWh)
DEFAULT_UTILISATION = 0.70  # average board power while serving, as a share of TDP
DEFAULT_HOURS_PER_DAY = 8.0
DAYS_PER_MONTH = 365.25 / 12  # 30.4375
MAX_GPU_COUNT = 64  # Hardware.count allows 1..64 devices
STALE_MONTHS = 6  # a price seen longer ago than this (before the newest price in the catalog) is marked
SPOT_TYPES = frozenset({"spot", "interruptible", "community", "marketplace"})

# Board power under LLM decode for machines whose catalog row has no TDP (Apple silicon, some APUs):
# a per-tier estimate, marked as such on the card. Apple publishes only idle and maximum wall power
# per machine (support.apple.com/102027, Mac Studio: M2 Ultra 10/295 W, M1 Ultra 13/215 W, M2 Max
# 9/145 W, M1 Max 11/115 W); decode is memory-bound and draws well below the maximum, so about half
# of it is counted; Pro and base chips are scaled down from Max. Matched on the device id.
ESTIMATED_WATTS: tuple[tuple[str, float], ...] = (
    ("ultra", 150.0),
    ("max", 70.0),
    ("pro", 40.0),
    ("", 25.0),  # base M-series chip
)


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
    per_user_tokens_per_s: float  # aggregate / users (``core.speed.serving``)
    usd_per_million_tokens_at_users: float  # batched serving, what a deployment pays
    hours_per_month: float
    monthly_usd: float  # price_per_hour * hours_per_month
    seen: str  # date the price was observed: prices go stale
    flags: tuple[str, ...] = ()  # "unverified", "spot", "stale": what the card must mark


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
    watts_estimated: bool = False  # power from ESTIMATED_WATTS, not the catalog's TDP
    notes: tuple[Note, ...] = ()  # every assumption, as codes with values


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


def month_index(date: str) -> int | None:
    """ "2026-03" or "2026-03-14" -> months since year 0; None when unreadable.

    A bare year (an undated page) counts from its January: a price is never fresher than its source allows.
    """
    try:
        year, month = int(date[:4]), int(date[5:7]) if len(date) > 4 else 1
    except ValueError:
        return None
    return year * 12 + month - 1 if 1 <= month <= 12 else None


def price_flags(offer: CloudOffer, newest_seen: str = "") -> tuple[str, ...]:
    """What a card must say about a price: unverified fields, spot/marketplace, or stale.

    Stale is measured against ``newest_seen`` (the newest price date in the catalog), not a clock,
    so the same catalog always gives the same card.
    """
    flags: list[str] = []
    if offer.provenance.unverified:
        flags.append("unverified")
    if offer.pricing_type.lower() in SPOT_TYPES or offer.billing.lower() in SPOT_TYPES:
        flags.append("spot")
    seen, newest = month_index(offer.seen), month_index(newest_seen)
    if seen is not None and newest is not None and newest - seen > STALE_MONTHS:
        flags.append("stale")
    return tuple(flags)


def newest_price_date(catalog: Catalog) -> str:
    """What "stale" is measured against: the newest price, or the day the catalog was built if that is later.

    A catalog built today from year-old prices marks them stale; a live refresh brings today's date in with its prices.
    """
    newest = max((o.seen for o in catalog.offers), default="")
    return max(newest, catalog.built_at[:10])  # built_at is "" for a catalog read straight from the files


def board_watts(gpu: GpuSpec, count: int = 1) -> tuple[float | None, bool]:
    """(watts, estimated): the catalog TDP x count, else a per-tier estimate for Apple/APU machines."""
    if gpu.tdp_watts:
        return gpu.tdp_watts * count, False
    if gpu.category in ("apple", "apu"):
        tier = next(w for key, w in ESTIMATED_WATTS if key in gpu.id)
        return tier * count, True
    return None, False


def quote_offers(
    s: Scenario,
    catalog: Catalog,
    hours_per_day: float = DEFAULT_HOURS_PER_DAY,
    limit: int | None = None,
) -> tuple[OfferQuote, ...]:
    """Offers whose GPUs hold the model fully (fits/tight), each priced on its own hardware, cheapest $/h first.

    Each offer is the scenario on the offer's devices (``hardware_on``), batched over ``s.cost_users``.
    With ``limit`` the scan stops after that many fitting offers (offers are tried cheapest first).
    """
    w = weights(s.model, s.quant, s.measured)
    floor = w.total_bytes - w.embed_bytes  # no placement holds less than this on the GPU(s)
    hours = hours_per_month(hours_per_day)
    users = s.cost_users
    quotes: list[OfferQuote] = []
    placed: dict[tuple[str, int], tuple[FullFit, Served] | None] = {}  # offers share setups: 105 offers, 42 setups
    for offer, gpu, flags in _listed(catalog):
        if limit is not None and len(quotes) >= limit:
            break
        if gpu.memory_bytes * offer.gpu_count < floor or not engine_runs(s.engine, s.quant.id, gpu):
            continue
        key = (gpu.id, offer.gpu_count)
        if key not in placed:
            placed[key] = _placed_on(s, gpu, offer.gpu_count)
        if (setup := placed[key]) is None:
            continue
        fit, speeds = setup
        quotes.append(
            OfferQuote(
                offer=offer,
                gpu=gpu,
                verdict=fit.verdict,
                total_bytes=fit.total_bytes,
                usable_bytes=fit.usable_bytes,
                decode_tokens_per_s=speeds.decode_tokens_per_s,
                usd_per_million_tokens=usd_per_million_tokens(offer.price_per_hour_usd, speeds.decode_tokens_per_s),
                users=users,
                users_served=speeds.users_served,
                aggregate_tokens_per_s=speeds.aggregate_tokens_per_s,
                per_user_tokens_per_s=speeds.per_user_tokens_per_s,
                usd_per_million_tokens_at_users=usd_per_million_tokens(
                    offer.price_per_hour_usd, speeds.aggregate_tokens_per_s
                ),
                hours_per_month=hours,
                monthly_usd=offer.price_per_hour_usd * hours,
                seen=offer.seen,
                flags=flags,
            )
        )
    quotes.sort(key=lambda q: (q.offer.price_per_hour_usd, q.usd_per_million_tokens, q.offer.provider))
    return tuple(quotes)


class _Listed(NamedTuple):
    offer: CloudOffer
    gpu: GpuSpec
    flags: tuple[str, ...]  # ``price_flags`` against the catalog's newest price


# The offers ``quote_offers`` walks, per catalog object: cheapest $/h first, each with its device and price
# flags, none on rack-scale (NVL72) setups, which are not modelled. They depend on the catalog alone, so
# they are sorted once per catalog; id() keyed with the catalog kept in the entry, as in ``core.weights``.
_LISTED: dict[int, tuple[Catalog, tuple[_Listed, ...]]] = {}
_LISTED_ENTRIES = 64


def _listed(catalog: Catalog) -> tuple[_Listed, ...]:
    hit = _LISTED.get(id(catalog))
    if hit is not None and hit[0] is catalog:
        return hit[1]
    if len(_LISTED) >= _LISTED_ENTRIES:
        _LISTED.clear()
    newest = newest_price_date(catalog)
    listed = tuple(
        _Listed(offer, gpu, price_flags(offer, newest))
        for offer in sorted(catalog.offers, key=lambda o: (o.price_per_hour_usd, o.provider))
        if (gpu := catalog.gpu(offer.gpu_id)) is not None and offer.gpu_count <= MAX_GPU_COUNT
    )
    _LISTED[id(catalog)] = (catalog, listed)
    return listed


def _placed_on(s: Scenario, gpu: GpuSpec, count: int) -> tuple[FullFit, Served] | None:
    """The scenario on ``count`` x ``gpu`` (memory on plain numbers) and its batched speeds; None unless
    it fits (fits/tight)."""
    hardware = hardware_on(s, gpu, count)
    fit = full_fit(s.model, s.quant, hardware, s.workload, s.measured)
    if fit is None:
        return None
    return fit, served(s.model, fit, hardware, s.workload, s.cost_users, s.quant.id)


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
    estimated = False
    if watts is not None:
        power: float | None = watts
    else:
        power, estimated = board_watts(gpu, count)
    power_bill = electricity_usd_per_month(power, utilisation, hours, usd_per_kwh) if power else 0.0
    purchase = gpu.price_usd * count
    rate = cloud.offer.price_per_hour_usd
    coded = [
        note("tco_purchase", count=count, gpu=gpu.short_name, price=gpu.price_usd, source=gpu.price_note or "catalog"),
        note("tco_hours", hours_per_day=hours_per_day, hours=hours),
        note("tco_power", tariff=usd_per_kwh, share=utilisation, **({"watts": watts} if watts is not None else {})),
        note("tco_scope"),
        note("price_seen", seen=cloud.seen, provider=cloud.offer.provider),
    ]
    if estimated and power:
        coded.append(note("power_estimated", watts=power))
    if not power:
        coded.append(note("power_unknown"))
    same_tokens = breakeven_tokens = None
    if owned_tokens_per_s and cloud.decode_tokens_per_s > 0:
        # Renting only as many hours as the cloud GPU needs for the tokens the owned one makes.
        same_tokens = rate * hours * owned_tokens_per_s / cloud.decode_tokens_per_s
        breakeven_tokens = break_even_months(purchase, same_tokens, power_bill)
        coded.append(note("tco_same_tokens", owned=owned_tokens_per_s, cloud=cloud.decode_tokens_per_s))
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
        watts_estimated=estimated,
        notes=tuple(coded),
    )


def cost_notes(users: int = DEFAULT_COST_USERS, hours_per_day: float = DEFAULT_HOURS_PER_DAY) -> tuple[Note, ...]:
    """What every quote assumes, as codes for the cards: own hardware, the formula, batching, the month."""
    return (
        note("cost_own_hardware"),
        note("cost_formula"),
        note("cost_batched", users=users),
        note("cost_monthly", hours=hours_per_month(hours_per_day), hours_per_day=hours_per_day),
    )

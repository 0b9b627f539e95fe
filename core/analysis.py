"""Everything one question can be answered with: the estimate plus its cost and advice.

The estimate is cheap (microseconds); cost and advice scan the catalog's offers and devices, so
callers ask for them only where a card or ``--json`` shows them.
"""

from __future__ import annotations

from core.advice import (
    Fix,
    HardwareAdvice,
    KvOption,
    LaunchCommand,
    QuantChoice,
    choose_quant,
    kv_savings,
    launch_command,
    launch_commands,
    nearest_fix,
    recommend_hardware,
)
from core.cost import (
    DEFAULT_USERS,
    OfferQuote,
    RentVsBuy,
    cost_assumptions,
    cost_notes,
    quote_offers,
    rent_vs_buy,
)
from core.estimate import FitEstimate, Request, estimate
from core.fit import Verdict
from core.models import Catalog, Frozen, GpuSpec, ModelSpec, QuantSize, QuantSpec
from core.notes import Note

MAX_OFFERS = 8


class Cost(Frozen):
    offers: tuple[OfferQuote, ...]  # cheapest first, each priced at its own speed
    rent_vs_buy: RentVsBuy | None
    assumptions: tuple[str, ...]
    notes: tuple[Note, ...] = ()


class Advice(Frozen):
    best_quant: str | None  # highest-quality quant that fits at the asked context
    best_quant_verdict: Verdict | None
    max_context: int  # at the asked quant
    kv_options: tuple[KvOption, ...]
    hardware: HardwareAdvice
    commands: tuple[LaunchCommand, ...]  # only commands whose settings fit
    quant_choice: QuantChoice | None = None  # best_quant with the KV cache it needs and why
    fix: Fix | None = None  # the smallest change that makes this setup fit (or run)
    fix_command: LaunchCommand | None = None  # the command for the setup ``fix`` describes


class Analysis(Frozen):
    estimate: FitEstimate
    cost: Cost
    advice: Advice


def cost_of(
    model: ModelSpec,
    gpu: GpuSpec,
    quant: QuantSpec,
    request: Request,
    catalog: Catalog,
    est: FitEstimate,
    measured: QuantSize | None = None,
    quotes: tuple[OfferQuote, ...] | None = None,
) -> Cost:
    """Offers priced on their own hardware and rent-vs-buy; ``quotes`` may come from a cache (they do
    not depend on the user's GPU)."""
    users = request.concurrent or DEFAULT_USERS
    if quotes is None:
        quotes = quote_offers(model, quant, request, catalog, users=users, measured=measured)
    owned = est.speed.decode_tokens_per_s if est.verdict is not Verdict.NO_FIT else None
    # Buying only pays off for hardware that runs the model: no rent-vs-buy for a no-fit setup.
    runs = est.verdict is not Verdict.NO_FIT
    rvb = rent_vs_buy(gpu, est.hardware.count, quotes[0], owned_tokens_per_s=owned) if quotes and runs else None
    return Cost(
        offers=quotes[:MAX_OFFERS], rent_vs_buy=rvb, assumptions=cost_assumptions(users), notes=cost_notes(users)
    )


def advice_for(
    model: ModelSpec,
    gpu: GpuSpec,
    quant: QuantSpec,
    request: Request,
    catalog: Catalog,
    est: FitEstimate,
    measured: QuantSize | None = None,
    cloud: OfferQuote | None = None,
    hardware: HardwareAdvice | None = None,
) -> Advice:
    """Best quant, KV options, hardware and commands; ``hardware`` may come from a cache."""
    choice = choose_quant(model, gpu, request, catalog)
    fix = nearest_fix(model, gpu, quant, request, catalog, est)
    fix_command = None
    if fix is not None and est.verdict is Verdict.NO_FIT:
        fix_quant = catalog.quant(fix.estimate.quant)
        if fix_quant is not None:
            fix_command = launch_command(fix.estimate, model, fix_quant, request.concurrent or 1)
    if hardware is None:
        hardware = recommend_hardware(model, quant, request, catalog, measured)
    if cloud is not None and hardware.cheapest_cloud is None:
        hardware = hardware.model_copy(update={"cheapest_cloud": cloud})
    return Advice(
        best_quant=choice.quant if choice else None,
        best_quant_verdict=choice.verdict if choice else None,
        max_context=est.max_context,
        kv_options=kv_savings(model, gpu, quant, request, measured),
        hardware=hardware,
        commands=launch_commands(model, gpu, request, catalog, measured),
        quant_choice=choice,
        fix=fix,
        fix_command=fix_command,
    )


def analyse(
    model: ModelSpec,
    gpu: GpuSpec,
    quant: QuantSpec,
    request: Request,
    catalog: Catalog,
    measured: QuantSize | None = None,
) -> Analysis:
    """Estimate, then cost and advice for the same question."""
    est = estimate(model, gpu, quant, request, measured)
    cost = cost_of(model, gpu, quant, request, catalog, est, measured)
    cloud = cost.offers[0] if cost.offers else None
    return Analysis(
        estimate=est, cost=cost, advice=advice_for(model, gpu, quant, request, catalog, est, measured, cloud)
    )

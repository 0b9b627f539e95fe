"""Everything one question is answered with: ``analyse(scenario)`` gives one ``Analysis``.

The estimate (memory, fit, speed with band, per-user speed under batching) is cheap; cost and
advice scan the catalog's offers and devices, so the caller may hand in those scans from a cache
(they depend on the question, not on the user's device) or leave cost and advice out where a card
does not show them. Every card and ``--json`` reads its numbers from here (``core.figures``).
"""

# no ``from __future__ import annotations``: pydantic reads these models' field types as objects instead of
# compiling each from a string, a few milliseconds of every start (``fitbot estimate``, issue 33)

from core.advice import (
    Fix,
    HardwareAdvice,
    KvOption,
    QuantChoice,
    choose_quant,
    kv_savings,
    nearest_fix,
    recommend_hardware,
)
from core.cost import OfferQuote, RentVsBuy, cost_notes, quote_offers, rent_vs_buy
from core.estimate import FitEstimate, Scenario, estimate_of
from core.fit import Verdict
from core.launch.commands import LaunchCommand, launch_command, launch_commands
from core.models import Catalog, Frozen
from core.notes import Note

MAX_OFFERS = 8


class Cost(Frozen):
    offers: tuple[OfferQuote, ...]  # cheapest first, each priced at its own speed
    rent_vs_buy: RentVsBuy | None
    users: int  # streams each offer's batched $/Mtok is priced over
    notes: tuple[Note, ...] = ()


class Advice(Frozen):
    best_quant: str | None  # highest-quality quant that fits at the asked context
    best_quant_verdict: Verdict | None
    max_context: int  # at the asked quant
    kv_options: tuple[KvOption, ...]
    hardware: HardwareAdvice | None  # None where the card shows no hardware picks (they scan every device)
    commands: tuple[LaunchCommand, ...]  # only commands whose settings fit
    quant_choice: QuantChoice | None = None  # best_quant with the KV cache it needs and why
    fix: Fix | None = None  # the smallest change that makes this setup fit (or run)
    fix_command: LaunchCommand | None = None  # the command for the setup ``fix`` describes


class Analysis(Frozen):
    scenario: Scenario
    estimate: FitEstimate
    cost: Cost | None = None  # None where the card shows no cost
    advice: Advice | None = None  # None where the card shows no advice


def cost_of(s: Scenario, catalog: Catalog, est: FitEstimate, quotes: tuple[OfferQuote, ...] | None = None) -> Cost:
    """Offers priced on their own hardware and rent-vs-buy; ``quotes`` may come from a cache (they do
    not depend on the user's device)."""
    if quotes is None:
        quotes = quote_offers(s, catalog)
    # Buying only pays off for hardware that runs the model: no rent-vs-buy for a no-fit setup.
    runs = est.verdict is not Verdict.NO_FIT
    owned = est.speed.decode_tokens_per_s_at_context if runs else None  # as each offer: at the context
    rvb = rent_vs_buy(s.device, s.count, quotes[0], owned_tokens_per_s=owned) if quotes and runs else None
    return Cost(offers=quotes[:MAX_OFFERS], rent_vs_buy=rvb, users=s.cost_users, notes=cost_notes(s.cost_users))


def advice_for(
    s: Scenario,
    catalog: Catalog,
    est: FitEstimate,
    cloud: OfferQuote | None = None,
    hardware: HardwareAdvice | None = None,
    picks: bool = True,
    checkpoints: frozenset[tuple[str, str]] | None = None,
) -> Advice:
    """Best quant, KV options, the nearest fix, hardware and commands; ``hardware`` may come from a cache,
    and without ``picks`` there are none."""
    choice = choose_quant(s, catalog, checkpoints)
    fix = nearest_fix(s, catalog, est, checkpoints)
    fix_command = None
    if fix is not None and est.verdict is Verdict.NO_FIT:
        fix_command = launch_command(fix.scenario, fix.estimate)
    if hardware is None and picks:
        hardware = recommend_hardware(s, catalog)
    if cloud is not None and hardware is not None and hardware.cheapest_cloud is None:
        hardware = hardware.model_copy(update={"cheapest_cloud": cloud})
    return Advice(
        best_quant=choice.quant if choice else None,
        best_quant_verdict=choice.verdict if choice else None,
        max_context=est.max_context,
        kv_options=kv_savings(s, est),
        hardware=hardware,
        commands=launch_commands(s, catalog, est),
        quant_choice=choice,
        fix=fix,
        fix_command=fix_command,
    )


def analyse(
    s: Scenario,
    catalog: Catalog,
    *,
    full: bool = True,
    quotes: tuple[OfferQuote, ...] | None = None,
    hardware: HardwareAdvice | None = None,
    estimate: FitEstimate | None = None,
    picks: bool = True,
    checkpoints: frozenset[tuple[str, str]] | None = None,
) -> Analysis:
    """The estimate, then (``full``) cost and advice for the same scenario; scans may come from a cache, and
    a card that shows no hardware picks leaves them out (``picks``); ``checkpoints`` are the (model id, quant)
    pairs a pre-quantized repository is known for (vLLM's AWQ/GPTQ/NVFP4 fixes need one)."""
    est = estimate or estimate_of(s)
    if not full:
        return Analysis(scenario=s, estimate=est)
    cost = cost_of(s, catalog, est, quotes)
    cloud = cost.offers[0] if cost.offers else None
    return Analysis(
        scenario=s, estimate=est, cost=cost, advice=advice_for(s, catalog, est, cloud, hardware, picks, checkpoints)
    )


__all__ = ["Advice", "Analysis", "Cost", "MAX_OFFERS", "advice_for", "analyse", "cost_of"]

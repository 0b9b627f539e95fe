"""Cost: $/Mtok from price and speed, electricity, break-even, and offers only on hardware that holds the model."""

from __future__ import annotations

import math

import pytest

from bot.cards.notes import note_text
from core.cost import (
    DAYS_PER_MONTH,
    break_even_months,
    electricity_usd_per_month,
    hours_per_month,
    quote_offers,
    rent_vs_buy,
    usd_per_million_tokens,
)
from core.estimate import EstimateError, Request, scenario
from core.fit import Verdict, place
from core.models import Catalog, CloudOffer, Engine
from core.speed.serving import decode_speeds
from tests.core.specs import BF16, GLM_AIR, H100, LLAMA3_8B, PROV, Q4_K_M, Q8_0, RTX_3090, RTX_4090

USED_3090 = RTX_3090.model_copy(update={"price_usd": 800.0, "price_note": "used, test"})


def offer(provider: str, gpu_id: str, count: int, price: float, seen: str = "2026-10-01") -> CloudOffer:
    return CloudOffer(
        provider=provider,
        instance=f"{count}x {gpu_id}",
        gpu_id=gpu_id,
        gpu_count=count,
        price_per_hour_usd=price,
        seen=seen,
        provenance=PROV,
    )


CATALOG = Catalog(
    gpus=(RTX_4090, USED_3090, H100),
    models=(LLAMA3_8B, GLM_AIR),
    quants=(Q4_K_M, Q8_0, BF16),
    offers=(
        offer("Hyper", "h100-sxm", 1, 2.50, "2026-09-15"),
        offer("Budget", "rtx-4090", 1, 0.40),
        offer("Budget", "rtx-4090", 2, 0.80),
        offer("Hyper", "h100-sxm", 2, 5.00),
        offer("Cheap", "rtx-3090", 1, 0.22),
        offer("Ghost", "no-such-gpu", 1, 0.01),  # unknown GPU: skipped, never guessed
        offer("Rack", "h100-sxm", 72, 150.0),  # rack-scale: beyond the 64 devices Hardware models
    ),
)


@pytest.mark.parametrize(
    ("usd_per_hour", "tokens_per_s", "expected"),
    [
        (2.00, 50.0, 11.111111),  # 50 tok/s * 3600 = 180,000 tok/h; $2 / 0.18 Mtok = $11.11
        (0.44, 100.0, 1.222222),  # 360,000 tok/h; 0.44 / 0.36
        (3.80, 115.1, 9.170770),  # 414,360 tok/h; 3.80 / 0.41436
        (1.00, 1e6 / 3600, 1.0),  # 1 Mtok per hour costs the hourly price
    ],
)
def test_usd_per_million_tokens(usd_per_hour, tokens_per_s, expected):
    assert usd_per_million_tokens(usd_per_hour, tokens_per_s) == pytest.approx(expected, rel=1e-6)


def english(notes):
    """Notes as the English cards say them (the one note renderer)."""
    return [note_text(n, "en") for n in notes]


def sc(model, gpu, request, catalog=None, quant=None):
    """The test's question resolved once (``core.estimate.scenario``); a quant handed in keeps its catalog size."""
    catalog = catalog or CATALOG
    if quant is None:
        return scenario(model, gpu, request, catalog)
    return scenario(model, gpu, request, quant=quant, measured=catalog.size(model.id, quant.id))


def test_usd_per_million_tokens_without_speed_is_infinite():
    assert math.isinf(usd_per_million_tokens(1.0, 0.0))


def test_electricity_and_hours():
    # 8 h/day * 365.25/12 days = 243.5 h
    assert hours_per_month(8) == pytest.approx(243.5)
    assert pytest.approx(30.4375) == DAYS_PER_MONTH
    # 2 x 350 W * 0.70 = 490 W; * 243.5 h = 119.315 kWh; * $0.30 = $35.7945
    assert electricity_usd_per_month(700, 0.70, 243.5, 0.30) == pytest.approx(35.7945)


@pytest.mark.parametrize(
    ("purchase", "cloud", "power", "expected"),
    [
        (1600.0, 107.14, 35.7945, 22.4263),  # 1600 / (107.14 - 35.7945) = 1600 / 71.3455
        (21000.0, 925.30, 120.0, 26.0773),  # 21000 / 805.30
        (1600.0, 30.0, 35.7945, None),  # renting costs less than the power bill: never
        (1600.0, 35.7945, 35.7945, None),
    ],
)
def test_break_even_months(purchase, cloud, power, expected):
    result = break_even_months(purchase, cloud, power)
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected, rel=1e-4)


def test_rent_vs_buy_two_used_3090s_against_the_cheapest_offer():
    quotes = quote_offers(sc(LLAMA3_8B, None, Request(), CATALOG, quant=Q4_K_M), CATALOG)
    cheapest = quotes[0]
    assert (cheapest.offer.provider, cheapest.offer.price_per_hour_usd) == ("Cheap", 0.22)
    result = rent_vs_buy(USED_3090, 2, cheapest)
    assert result.purchase_usd == 1600.0
    assert result.watts == 700.0
    assert result.hours_per_month == pytest.approx(243.5)
    assert result.electricity_usd_per_month == pytest.approx(35.7945)
    # 0.22 $/h * 243.5 h = $53.57 per month; 1600 / (53.57 - 35.7945) = 90.01 months
    assert result.cloud_usd_per_month == pytest.approx(53.57)
    assert result.break_even_months == pytest.approx(1600 / (53.57 - 35.7945))
    assert result.cloud_seen == "2026-10-01"
    assert any("$0.30/kWh" in a and "70 %" in a for a in english(result.notes))


def test_rent_vs_buy_overrides_and_same_token_comparison():
    cheapest = quote_offers(sc(LLAMA3_8B, None, Request(), CATALOG, quant=Q4_K_M), CATALOG)[0]
    # 4 h/day = 121.75 h; 500 W * 0.5 * 121.75 h = 30.4375 kWh * $0.10 = $3.04375
    result = rent_vs_buy(
        USED_3090,
        2,
        cheapest,
        hours_per_day=4,
        utilisation=0.5,
        usd_per_kwh=0.10,
        watts=500,
        owned_tokens_per_s=cheapest.decode_tokens_per_s / 2,
    )
    assert result.electricity_usd_per_month == pytest.approx(3.04375)
    # half the speed of the cloud GPU: the same tokens need half the rented hours
    assert result.cloud_usd_per_month_same_tokens == pytest.approx(0.22 * 121.75 / 2)
    assert result.break_even_months_same_tokens == pytest.approx(1600 / (0.22 * 121.75 / 2 - 3.04375))


def test_rent_vs_buy_needs_a_price_and_flags_unknown_power():
    cheapest = quote_offers(sc(LLAMA3_8B, None, Request(), CATALOG, quant=Q4_K_M), CATALOG)[0]
    assert rent_vs_buy(RTX_4090, 1, cheapest) is None  # no purchase price in the catalog
    no_tdp = USED_3090.model_copy(update={"tdp_watts": None})
    result = rent_vs_buy(no_tdp, 1, cheapest)
    assert result.watts is None and result.electricity_usd_per_month == 0.0
    assert any("power draw unknown" in a for a in english(result.notes))


def test_quotes_are_cheapest_first_each_on_its_own_hardware():
    quotes = quote_offers(sc(LLAMA3_8B, None, Request(), CATALOG, quant=Q4_K_M), CATALOG)
    prices = [q.offer.price_per_hour_usd for q in quotes]
    assert prices == sorted(prices)
    assert {"Ghost", "Rack"}.isdisjoint({q.offer.provider for q in quotes})
    for q in quotes:
        there = sc(LLAMA3_8B, q.gpu, Request(gpu_count=q.offer.gpu_count), quant=Q4_K_M)
        hardware, workload = there.hardware, there.workload
        placement = place(LLAMA3_8B, Q4_K_M, hardware, workload)
        own = decode_speeds(LLAMA3_8B, placement, hardware, workload, 8, Q4_K_M.id)
        assert q.decode_tokens_per_s == pytest.approx(own.decode_tokens_per_s)  # not another GPU's speed
        assert q.usd_per_million_tokens == pytest.approx(
            q.offer.price_per_hour_usd / (q.decode_tokens_per_s * 3600) * 1e6
        )
        assert q.usd_per_million_tokens_at_users == pytest.approx(
            q.offer.price_per_hour_usd / (q.aggregate_tokens_per_s * 3600) * 1e6
        )
        assert 1 <= q.users_served <= 8
        assert q.aggregate_tokens_per_s >= q.decode_tokens_per_s  # batching never lowers throughput
        assert q.monthly_usd == pytest.approx(q.offer.price_per_hour_usd * 243.5)
        assert q.seen == q.offer.seen
    h100 = next(q for q in quotes if q.gpu.id == "h100-sxm" and q.offer.gpu_count == 1)
    rtx = next(q for q in quotes if q.gpu.id == "rtx-4090" and q.offer.gpu_count == 1)
    assert h100.seen == "2026-09-15"
    assert h100.decode_tokens_per_s > rtx.decode_tokens_per_s  # 3.35 vs 1.0 TB/s


@pytest.mark.parametrize(
    ("model", "quant", "request_"),
    [
        (LLAMA3_8B, Q4_K_M, Request()),
        (LLAMA3_8B, BF16, Request(context=131072)),
        (GLM_AIR, Q4_K_M, Request()),  # ~70 GB: only the H100 offers, never a 4090 or 2x 4090
        (GLM_AIR, Q8_0, Request(context=32768)),
        (GLM_AIR, BF16, Request(engine=Engine.VLLM)),
    ],
)
def test_no_offer_for_hardware_that_cannot_hold_the_model(model, quant, request_):
    quotes = quote_offers(sc(model, None, request_, CATALOG, quant=quant), CATALOG)
    quoted = {(q.offer.provider, q.offer.gpu_id, q.offer.gpu_count) for q in quotes}
    for o in CATALOG.offers:
        gpu = CATALOG.gpu(o.gpu_id)
        if gpu is None or o.gpu_count > 64:
            continue
        there = sc(model, gpu, request_.model_copy(update={"gpu_count": o.gpu_count}), quant=quant)
        hardware, workload = there.hardware, there.workload
        verdict = place(model, quant, hardware, workload).verdict
        holds = verdict in (Verdict.FITS, Verdict.TIGHT)
        assert ((o.provider, o.gpu_id, o.gpu_count) in quoted) == holds
    for q in quotes:
        assert q.verdict in (Verdict.FITS, Verdict.TIGHT)
        assert q.total_bytes <= q.usable_bytes


def test_glm_air_q4_only_on_h100_offers():
    quotes = quote_offers(sc(GLM_AIR, None, Request(), CATALOG, quant=Q4_K_M), CATALOG)
    assert {q.gpu.id for q in quotes} == {"h100-sxm"}
    assert [q.offer.gpu_count for q in quotes] == [1, 2]


def test_quant_the_engine_cannot_run_is_an_error():
    with pytest.raises(EstimateError):
        quote_offers(sc(LLAMA3_8B, None, Request(engine=Engine.VLLM), CATALOG, quant=Q4_K_M), CATALOG)


def test_batching_never_makes_a_token_dearer_on_the_real_catalog():
    """Issue 14: "cost per million tokens with N users" was above the one-user figure on several offers."""
    from catalog.facts import load_facts

    catalog = load_facts()
    for model_id in ("qwen3-32b", "llama-3.1-8b-instruct", "glm-4.5-air", "gpt-oss-120b"):
        model = catalog.model(model_id)
        assert model is not None
        quant = catalog.quant("MXFP4" if model.native_dtype == "mxfp4" else "Q4_K_M")
        assert quant is not None
        for users in (2, 8, 64):
            for q in quote_offers(
                sc(model, None, Request().model_copy(update={"concurrent": users}), catalog, quant=quant), catalog
            ):
                assert q.aggregate_tokens_per_s >= q.decode_tokens_per_s
                assert q.usd_per_million_tokens_at_users <= q.usd_per_million_tokens * (1 + 1e-9)


def test_price_flags_mark_unverified_spot_and_stale_prices():
    from core.cost import price_flags
    from core.models import Provenance

    base = offer("X", "rtx-4090", 1, 0.5, seen="2026-10")
    assert price_flags(base, "2026-10") == ()
    spot = base.model_copy(update={"pricing_type": "spot"})
    assert price_flags(spot, "2026-10") == ("spot",)
    unverified = base.model_copy(update={"provenance": Provenance(source="x", as_of="2026-10", unverified=("seen",))})
    assert price_flags(unverified, "2026-10") == ("unverified",)
    assert price_flags(base.model_copy(update={"seen": "2026-03"}), "2026-10") == ("stale",)  # 7 months
    assert price_flags(base.model_copy(update={"seen": "2026-04-30"}), "2026-10") == ()  # 6 months: still fresh


def test_macs_and_apus_without_tdp_get_an_estimated_power_draw():
    from core.cost import board_watts
    from tests.core.specs import M3_ULTRA_512

    assert M3_ULTRA_512.tdp_watts is None
    watts, estimated = board_watts(M3_ULTRA_512)
    assert estimated and watts == 150.0
    mac = M3_ULTRA_512.model_copy(update={"price_usd": 9500.0})
    quote = quote_offers(sc(LLAMA3_8B, None, Request(), CATALOG, quant=Q4_K_M), CATALOG)[0]
    result = rent_vs_buy(mac, 1, quote)
    assert result is not None and result.watts == 150.0 and result.watts_estimated
    assert result.electricity_usd_per_month > 0
    assert any(n.code == "power_estimated" for n in result.notes)
    assert board_watts(RTX_4090) == (RTX_4090.tdp_watts, False)


def test_no_rent_vs_buy_for_hardware_that_cannot_run_the_model():
    from core.analysis import cost_of
    from core.estimate import estimate
    from tests.core.specs import DEEPSEEK_V3

    rtx = RTX_3090.model_copy(update={"price_usd": 700.0})
    est = estimate(DEEPSEEK_V3, rtx, Q4_K_M, Request(ram_gb=16))
    assert est.verdict is Verdict.NO_FIT
    quotes = quote_offers(sc(LLAMA3_8B, None, Request(), CATALOG, quant=Q4_K_M), CATALOG)
    assert cost_of(sc(DEEPSEEK_V3, rtx, Request(ram_gb=16), quant=Q4_K_M), CATALOG, est, quotes).rent_vs_buy is None


def test_cost_notes_are_codes():
    from core.cost import cost_notes

    assert [n.code for n in cost_notes(8)] == ["cost_own_hardware", "cost_formula", "cost_batched", "cost_monthly"]
    assert cost_notes(8)[2].values == {"users": 8}

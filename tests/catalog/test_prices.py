"""Live prices: every parser against the recorded answers of a local fake, the store, the merge, the schedule."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import pytest

from catalog.facts import load_facts
from catalog.prices.plausible import PriceBounds
from catalog.prices.refresh import merge, offer_kind, refresh, run_schedule
from catalog.prices.sources import default_sources
from catalog.prices.store import PriceStore
from fitbot_fakes.price_apis import VERDA_CREDENTIALS, FakePriceApis

CATALOG = load_facts()
BOUNDS = PriceBounds.of(CATALOG)
KEYS = {
    "VAST_API_KEY": "va",
    "RUNPOD_API_KEY": "rp",
    "LAMBDA_API_KEY": "lb",
    "DIGITALOCEAN_TOKEN": "do",
    "SHADEFORM_API_KEY": "sf",
    "PRIME_API_KEY": "pi",
    "TENSORDOCK_API_KEY": "td",
    "VERDA_CLIENT_ID": VERDA_CREDENTIALS[0],
    "VERDA_CLIENT_SECRET": VERDA_CREDENTIALS[1],
}
NOW = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)


@pytest.fixture
def fake():
    with FakePriceApis() as apis:
        yield apis


def _refresh(store: PriceStore, fake: FakePriceApis, keys: dict[str, str] = KEYS, now: datetime = NOW):
    return asyncio.run(refresh(store, default_sources(fake.endpoint), keys, BOUNDS, now))


def test_every_provider_parses_its_recorded_answer(tmp_path, fake) -> None:
    store = PriceStore(tmp_path / "prices.sqlite")
    results = {r.provider: (r.status, r.prices) for r in _refresh(store, fake)}
    assert results == {
        "azure": ("ok", 3),  # H100 x8 on-demand (cheapest region) and spot, A100 on-demand; no Low Priority/Windows
        "vast": ("ok", 2),  # RTX 4090 median of 3, 8x H100; the 40 GB A100 and the P40 are skipped
        "runpod": ("ok", 7),  # RTX 4090 secure, community and spot; H100 secure, community; A100 secure, spot
        "lambda": ("ok", 3),
        "digitalocean": ("ok", 3),
        "shadeform": ("ok", 3),  # 1x H100 PCIe, 8x H100 SXM (the cheaper cloud), A6000; A100 sold out, RTX 4000 unknown
        "primeintellect": ("ok", 3),  # 1x H100 PCIe (cheaper provider), 8x H100 SXM, 2x RTX PRO 6000; B200 sold out
        "tensordock": ("ok", 2),  # H100 SXM, RTX 4090 (the cheaper location); the GTX 1070 is not in the catalog
        "verda": ("ok", 6),  # 1x and 8x H100, 1x V100, each on-demand and spot; A5000 and the CPU node skipped
    }
    stored = asyncio.run(store.offers())
    offers = {(o.provider, o.instance, o.pricing_type): o for o, _ in stored}
    h100 = offers[("Azure", "Standard_ND96isr_H100_v5", "on-demand")]
    assert (h100.region, h100.gpu_count, h100.price_per_hour_usd) == ("eastus", 8, 98.32)  # the cheaper region
    assert offers[("Azure", "Standard_ND96isr_H100_v5", "spot")].price_per_hour_usd == 39.33
    vast = [o for o in offers.values() if o.provider == "Vast.ai" and o.gpu_id == "rtx-4090"]
    assert [(o.price_per_hour_usd, o.pricing_type) for o in vast] == [(0.35, "marketplace")]
    lam = {(o.gpu_id, o.gpu_count, o.price_per_hour_usd) for o in offers.values() if o.provider == "Lambda"}
    assert lam == {("h100-pcie", 1, 2.49), ("h100-sxm", 8, 23.92), ("v100-sxm2-16gb", 8, 4.4)}  # Lambda's V100: 16 GB
    assert all(o.seen == "2026-12-01" and "live" in o.provenance.source for o in offers.values())
    assert {seen for _, seen in stored} == {NOW.isoformat()}


def test_keyed_providers_are_skipped_without_an_operator_key(tmp_path, fake) -> None:
    results = {r.provider: r.status for r in _refresh(PriceStore(tmp_path / "p.sqlite"), fake, keys={})}
    assert results.pop("azure") == "ok" and set(results.values()) == {"no key"} and len(results) == 8
    assert not [path for _, path, _ in fake.requests if not path.startswith("/azure")]  # none was asked


def test_a_changed_format_warns_once_and_keeps_the_last_good_prices(tmp_path, fake, caplog) -> None:
    store = PriceStore(tmp_path / "prices.sqlite")
    _refresh(store, fake)
    before = [o for o, _ in asyncio.run(store.offers()) if o.provider == "Lambda"]
    fake.broken["lambda"] = "format"
    with caplog.at_level(logging.INFO, logger="catalog.prices.refresh"):
        first = {r.provider: r.status for r in _refresh(store, fake, now=NOW + timedelta(days=1))}
        _refresh(store, fake, now=NOW + timedelta(days=2))
    assert first["lambda"] == "format" and first["azure"] == "ok"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "lambda" in r.getMessage()]
    assert len(warnings) == 1
    after = [o for o, _ in asyncio.run(store.offers()) if o.provider == "Lambda"]
    assert after == before and after[0].seen == "2026-12-01"


def test_a_provider_that_is_down_keeps_its_prices_too(tmp_path, fake) -> None:
    store = PriceStore(tmp_path / "prices.sqlite")
    _refresh(store, fake)
    fake.broken["digitalocean"] = "down"
    results = {r.provider: r.status for r in _refresh(store, fake)}
    assert results["digitalocean"] == "unreachable"
    assert [o for o, _ in asyncio.run(store.offers()) if o.provider == "DigitalOcean"]


def test_merge_replaces_a_refreshed_providers_snapshot_rows_of_the_same_kind_only(tmp_path, fake) -> None:
    store = PriceStore(tmp_path / "prices.sqlite")
    _refresh(store, fake)
    merged = merge(CATALOG, asyncio.run(store.offers()))
    do = [o for o in merged.offers if o.provider == "DigitalOcean"]
    assert do and all(o.seen == "2026-12-01" for o in do)
    assert not [o for o in merged.offers if o.pricing_type == "marketplace-median"]
    refreshed = ("DigitalOcean", "Azure", "RunPod", "Lambda", "Vast.ai", "DataCrunch (Verda)")
    untouched = {(o.provider, o.instance) for o in CATALOG.offers if o.provider not in refreshed}
    assert untouched and untouched <= {(o.provider, o.instance) for o in merged.offers}
    # a RunPod refresh (Pod prices) keeps the snapshot's 9 serverless rows; its on-demand rows are live now
    serverless = [o for o in CATALOG.offers if o.provider == "RunPod" and o.pricing_type == "serverless"]
    assert len(serverless) == 9 and set(serverless) <= set(merged.offers)
    runpod = [o for o in merged.offers if o.provider == "RunPod" and o.pricing_type == "on-demand"]
    assert runpod and all("live" in o.provenance.source for o in runpod)
    # Lambda's API has on-demand prices only: its snapshot reserved row stays
    reserved = [o for o in CATALOG.offers if o.provider == "Lambda" and o.pricing_type == "reserved"]
    assert set(reserved) <= set(merged.offers)
    # Vast.ai's marketplace rows replace its snapshot marketplace rows and reach the offers, typed as such
    vast = [o for o in merged.offers if o.provider == "Vast.ai" and offer_kind(o) == "marketplace"]
    assert vast and all(o.pricing_type == "marketplace" and "live" in o.provenance.source for o in vast)
    assert [o for o in CATALOG.offers if o.provider == "Vast.ai" and o.billing == "marketplace"]  # were replaced
    for provider in ("Shadeform", "Prime Intellect", "TensorDock", "DataCrunch (Verda)"):
        assert [o for o in merged.offers if o.provider == provider and "live" in o.provenance.source], provider


def test_the_schedule_applies_stored_prices_then_refreshes_and_stops(tmp_path, fake) -> None:
    store = PriceStore(tmp_path / "prices.sqlite")
    applied = []

    async def go() -> None:
        stop = asyncio.Event()

        def apply(catalog) -> None:
            applied.append(catalog)
            if len(applied) == 2:
                stop.set()

        await asyncio.wait_for(
            run_schedule(CATALOG, store, default_sources(fake.endpoint), KEYS, timedelta(hours=24), apply, stop), 30
        )

    asyncio.run(go())
    assert len(applied) == 2 and applied[0].offers == CATALOG.offers  # nothing stored yet, then one refresh
    lam = [o for o in applied[1].offers if o.provider == "Lambda" and o.pricing_type == "on-demand"]
    assert lam and all("live" in o.provenance.source for o in lam)
    assert asyncio.run(store.last_attempt()) is not None


def test_an_absurd_price_is_dropped_before_any_card(tmp_path, fake, caplog) -> None:
    """ "Azure 8x H100 at $0.00/h" (a $0.001 meter) used to reach the cards; the other rows stay."""
    fake.broken["azure"] = "absurd"
    store = PriceStore(tmp_path / "prices.sqlite")
    with caplog.at_level(logging.WARNING, logger="catalog.prices.refresh"):
        results = {r.provider: (r.status, r.prices) for r in _refresh(store, fake)}
    assert results["azure"] == ("ok", 2) and results["lambda"] == ("ok", 3)
    azure = [o for o, _ in asyncio.run(store.offers()) if o.provider == "Azure"]
    assert {(o.instance, o.pricing_type) for o in azure} == {
        ("Standard_ND96isr_H100_v5", "spot"),
        ("Standard_NC24ads_A100_v4", "on-demand"),
    }
    assert [r.event for r in caplog.records if getattr(r, "event", "") == "price_implausible"] == ["price_implausible"]


def test_prices_far_from_the_snapshot_or_below_the_floor_are_doubted() -> None:
    h100 = next(o for o in CATALOG.offers if o.gpu_id == "h100-sxm" and o.gpu_count == 8)
    median = BOUNDS.median["h100-sxm"]
    for price, doubted in ((median * 8, False), (median * 8 * 11, True), (median * 8 / 11, True), (0.08 * 8, True)):
        row = h100.model_copy(update={"price_per_hour_usd": price})
        assert (BOUNDS.doubt(row) is not None) is doubted, price
    assert all(BOUNDS.doubt(o) is None for o in CATALOG.offers)  # the band keeps every snapshot row
    unpriced = h100.model_copy(update={"gpu_id": "no-snapshot-gpu", "price_per_hour_usd": 8 * 0.06})  # floor only
    assert BOUNDS.doubt(unpriced) is None and BOUNDS.doubt(unpriced.model_copy(update={"price_per_hour_usd": 8 * 0.04}))


@pytest.mark.parametrize(
    ("provider", "state", "detail"),
    [
        ("vast", "huge", "byte cap"),
        ("vast", "deep", "nested too deep"),
        ("azure", "offsite", "another origin (prices.evil.example)"),
        ("lambda", "format", "no object under 'data'"),
    ],
)
def test_a_hostile_answer_costs_that_provider_only(tmp_path, fake, provider, state, detail) -> None:
    """A 200 MB answer, JSON 100,000 deep, a next page elsewhere: each used to abort the whole refresh or be read."""
    store = PriceStore(tmp_path / "prices.sqlite")
    _refresh(store, fake)
    shown = {"vast": "Vast.ai", "azure": "Azure", "lambda": "Lambda"}[provider]
    before = [o for o, _ in asyncio.run(store.offers()) if o.provider == shown]
    fake.broken[provider] = state
    results = {r.provider: r for r in _refresh(store, fake, now=NOW + timedelta(days=1))}
    assert results[provider].status == "format" and detail in results[provider].detail
    assert all(r.status == "ok" for name, r in results.items() if name != provider)
    assert before and [o for o, _ in asyncio.run(store.offers()) if o.provider == shown] == before  # its last good
    if state == "huge":
        assert fake.sent[provider] < 64 * (1 << 20)  # cut off near the 20 MB cap, not read to 200 MiB


def test_a_stop_cancels_a_refresh_that_is_under_way(tmp_path, fake) -> None:
    """A provider that never answers held SIGTERM for its 20 s timeout (past 60 s with several)."""
    fake.broken["vast"] = "hang"
    store = PriceStore(tmp_path / "prices.sqlite")

    async def go() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(
            run_schedule(
                CATALOG, store, default_sources(fake.endpoint), KEYS, timedelta(hours=24), lambda c: None, stop
            )
        )
        async with asyncio.timeout(30):
            while not any(path.startswith("/vast") for _, path, _ in fake.requests):
                await asyncio.sleep(0.02)
        stop.set()
        await asyncio.wait_for(task, 5)  # well inside the 20 s request timeout the hang would run into

    asyncio.run(go())
    assert asyncio.run(store.last_attempt()) is None  # not recorded: the next start refreshes


def test_cli_refresh_then_offers_show_live_prices_with_type_and_age(fake, monkeypatch, capsys) -> None:
    from bot.app import cli

    monkeypatch.setenv("PRICE_ENDPOINT", fake.endpoint)
    monkeypatch.setenv("LAMBDA_API_KEY", "lb")
    assert cli.main(["catalog", "refresh"]) == 0
    out = capsys.readouterr().out
    assert "lambda         3 prices" in out and "runpod         no key: set RUNPOD_API_KEY" in out
    assert "verda          no key: set VERDA_CLIENT_ID and VERDA_CLIENT_SECRET" in out
    assert cli.main(["catalog", "offers"]) == 0
    listing = [line for line in capsys.readouterr().out.splitlines() if line.startswith("Lambda ")]
    live = [line for line in listing if "live" in line]
    assert len(live) == 3 and all("on-demand" in line and "days old" in line for line in live)
    assert [line for line in listing if "reserved" in line and "live" not in line]  # the snapshot's reserved row

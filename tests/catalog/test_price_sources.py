"""Every price source against its recorded answer on a loopback fake, and what each failure costs.

A refused key (401), a row priced at $0 and a changed format (a key every row has, gone) each cost
that provider or that row only and log exactly one warning; keys travel only in the header each
provider documents and never reach a log; a provider without its key is skipped and ``fitbot
health`` says which and why.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.app.price_health import price_status
from catalog.facts import load_facts
from catalog.prices.plausible import PriceBounds
from catalog.prices.refresh import merge, refresh
from catalog.prices.sources import default_sources, primeintellect
from catalog.prices.store import PriceStore
from fitbot_fakes.price_apis import RESPONSES, VERDA_CREDENTIALS, VERDA_TOKEN, FakePriceApis

CATALOG = load_facts()
BOUNDS = PriceBounds.of(CATALOG)
KEYS = {
    "VAST_API_KEY": "vast-secret-1",
    "RUNPOD_API_KEY": "runpod-secret-2",
    "LAMBDA_API_KEY": "lambda-secret-3",
    "DIGITALOCEAN_TOKEN": "do-secret-4",
    "SHADEFORM_API_KEY": "shadeform-secret-5",
    "PRIME_API_KEY": "prime-secret-6",
    "TENSORDOCK_API_KEY": "tensordock-secret-7",
    "VERDA_CLIENT_ID": VERDA_CREDENTIALS[0],
    "VERDA_CLIENT_SECRET": VERDA_CREDENTIALS[1],
}
NOW = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
PROVIDERS = [s.name for s in default_sources()]
KEYED = [name for name in PROVIDERS if name != "azure"]
SHOWN = {  # source name -> the provider name its rows carry
    "azure": "Azure",
    "vast": "Vast.ai",
    "runpod": "RunPod",
    "lambda": "Lambda",
    "digitalocean": "DigitalOcean",
    "shadeform": "Shadeform",
    "primeintellect": "Prime Intellect",
    "tensordock": "TensorDock",
    "verda": "DataCrunch (Verda)",
}


@pytest.fixture
def fake():
    with FakePriceApis() as apis:
        yield apis


def _refresh(store: PriceStore, fake: FakePriceApis, keys: dict[str, str] = KEYS, now: datetime = NOW):
    return {r.provider: r for r in asyncio.run(refresh(store, default_sources(fake.endpoint), keys, BOUNDS, now))}


def _stored(store: PriceStore, provider: str) -> list[Any]:
    return [o for o, _ in asyncio.run(store.offers()) if o.provider == SHOWN[provider]]


def _recorded(name: str) -> Any:
    return json.loads((RESPONSES / name).read_text(encoding="utf-8"))


def test_nine_providers_update_prices_from_their_recorded_answers(tmp_path, fake) -> None:
    results = _refresh(PriceStore(tmp_path / "prices.sqlite"), fake)
    assert len(results) == 9 and {name: r.status for name, r in results.items()} == dict.fromkeys(PROVIDERS, "ok")
    merged = merge(CATALOG, asyncio.run(PriceStore(tmp_path / "prices.sqlite").offers()))
    live = {o.provider for o in merged.offers if "(live, " in o.provenance.source}
    assert live == set(SHOWN.values())  # every provider's live rows reach the catalog's offers


def test_new_providers_read_each_documented_field(tmp_path, fake) -> None:
    store = PriceStore(tmp_path / "prices.sqlite")
    _refresh(store, fake)
    rows = {p: {(o.gpu_id, o.gpu_count, o.pricing_type): o for o in _stored(store, p)} for p in SHOWN}
    # Shadeform: hourly_price in cents; 8x H100 from the cheaper of two clouds; the sold-out A100 skipped
    shade = rows["shadeform"]
    assert {k: o.price_per_hour_usd for k, o in shade.items()} == {
        ("h100-pcie", 1, "on-demand"): 1.9,
        ("h100-sxm", 8, "on-demand"): 23.92,
        ("rtx-a6000", 1, "on-demand"): 0.57,
    }
    assert "lambdalabs" in shade[("h100-sxm", 8, "on-demand")].instance
    # Prime Intellect: prices.onDemand is the whole configuration's; the cheaper of two providers; sold out skipped
    prime = rows["primeintellect"]
    assert {k: o.price_per_hour_usd for k, o in prime.items()} == {
        ("h100-pcie", 1, "on-demand"): 1.9,
        ("h100-sxm", 8, "on-demand"): 23.92,
        ("rtx-pro-6000", 2, "on-demand"): 2.7,
    }
    # TensorDock: one GPU's price_per_hr at the cheapest location, marketplace-typed, GPU only
    td = rows["tensordock"]
    assert {k: o.price_per_hour_usd for k, o in td.items()} == {
        ("h100-sxm", 1, "marketplace"): 2.2,
        ("rtx-4090", 1, "marketplace"): 0.42,
    }
    assert td[("rtx-4090", 1, "marketplace")].region == "Rzeszow, Poland"
    assert all("GPU only" in o.instance for o in td.values())
    # Verda: decimal strings, on-demand and spot, count from gpu.number_of_gpus' description
    verda = rows["verda"]
    assert {k: o.price_per_hour_usd for k, o in verda.items()} == {
        ("h100-sxm", 1, "on-demand"): 2.29,
        ("h100-sxm", 1, "spot"): 1.17,
        ("h100-sxm", 8, "on-demand"): 18.32,
        ("h100-sxm", 8, "spot"): 9.36,
        ("v100-sxm2-16gb", 1, "on-demand"): 0.39,
        ("v100-sxm2-16gb", 1, "spot"): 0.14,
    }
    # Vast.ai: marketplace prices (host-set), per second
    assert all(o.pricing_type == "marketplace" and o.billing == "per-second" for o in rows["vast"].values())


def test_lambdas_v100_is_the_16_gb_card() -> None:
    """Lambda rents the V100 SXM2 16 GB (gpu_8x_v100); it used to be priced as the 32 GB card."""
    rows = default_sources()[3].parse(_recorded("lambda.json"), "2026-12-01").offers
    v100 = next(o for o in rows if o.instance == "gpu_8x_v100")
    gpu = CATALOG.gpu(v100.gpu_id)
    assert v100.gpu_id == "v100-sxm2-16gb" and gpu is not None and round(gpu.memory_bytes / 2**30) == 16


def test_each_key_travels_only_in_its_documented_header_and_is_never_logged(tmp_path, fake, caplog) -> None:
    fake.broken["tensordock"] = "unauthorized"
    with caplog.at_level(logging.DEBUG):
        _refresh(PriceStore(tmp_path / "prices.sqlite"), fake)
    assert fake.headers["vast"]["Authorization"] == "Bearer vast-secret-1"  # vast.ai/developers/api
    assert fake.headers["shadeform"]["X-API-KEY"] == "shadeform-secret-5"  # docs.shadeform.ai
    assert "Authorization" not in fake.headers["shadeform"]
    assert fake.headers["primeintellect"]["Authorization"] == "Bearer prime-secret-6"
    assert fake.headers["verda"]["Authorization"] == f"Bearer {VERDA_TOKEN}"  # the OAuth token, not the secret
    assert "azure" in fake.headers and "Authorization" not in fake.headers["azure"]
    secrets = [v for k, v in KEYS.items() if k != "VERDA_CLIENT_ID"]
    urls = json.dumps(fake.requests)
    assert not [s for s in secrets if s in urls]  # no key in any URL or query
    assert not [s for s in secrets if s in caplog.text]  # nor in any log line


@pytest.mark.parametrize("provider", KEYED)
def test_a_refused_key_costs_that_provider_only_with_one_warning(tmp_path, fake, caplog, provider) -> None:
    store = PriceStore(tmp_path / "prices.sqlite")
    _refresh(store, fake)
    before = _stored(store, provider)
    fake.broken[provider] = "unauthorized"
    with caplog.at_level(logging.INFO, logger="catalog.prices.refresh"):
        results = _refresh(store, fake, now=NOW + timedelta(days=1))
        again = _refresh(store, fake, now=NOW + timedelta(days=2))
    assert results[provider].status == "unauthorized" and again[provider].status == "unauthorized"
    assert "HTTP 401" in results[provider].detail and "refused" in results[provider].detail
    assert all(r.status == "ok" for name, r in results.items() if name != provider)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and provider in warnings[0].getMessage()  # the repeat logs at info
    assert before and _stored(store, provider) == before  # its last good prices stay


# one row of each provider's recorded answer priced at $0: (answer) -> answer, and the row it drops
def _zero_azure(body: dict[str, Any]) -> dict[str, Any]:
    for item in body["Items"]:  # the eastus on-demand meter of the 8x H100 VM (page 1 only has it)
        if item["meterId"] == "m1":
            item["retailPrice"] = item["unitPrice"] = 0.0
    return body


def _zero(key: str, path: Callable[[Any], dict[str, Any]]) -> Callable[[Any], Any]:
    def edit(body: Any) -> Any:
        path(body)[key] = 0
        return body

    return edit


ZEROS: dict[str, Callable[[Any], Any]] = {
    "azure": _zero_azure,
    "vast": _zero("dph_total", lambda b: b["offers"][3]),  # the 8x H100 listing (the only one of it)
    "runpod": _zero("securePrice", lambda b: b["data"]["gpuTypes"][1]),  # H100 Secure Cloud (0: not offered)
    "lambda": _zero("price_cents_per_hour", lambda b: b["data"]["gpu_8x_v100"]["instance_type"]),
    "digitalocean": _zero("price_hourly", lambda b: b["sizes"][0]),
    "shadeform": _zero("hourly_price", lambda b: b["instance_types"][3]),  # the A6000
    "primeintellect": _zero("onDemand", lambda b: b["items"][4]["prices"]),  # the RTX PRO 6000 box
    "tensordock": _zero("price_per_hr", lambda b: b["data"]["locations"][0]["gpus"][0]),  # the H100
    "verda": _zero("price_per_hour", lambda b: b[2]),  # the V100 on demand (a spot price of 0: none offered)
}


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if p != "runpod"])
def test_a_zero_price_costs_that_row_only_with_one_warning(tmp_path, fake, caplog, provider) -> None:
    """One Azure meter at $0 used to fail the whole Azure refresh; now that row goes, the rest are stored."""
    clean = {_row(o) for o in _refresh_one(tmp_path / "a.sqlite", fake, provider)}
    fake.edit[provider] = ZEROS[provider]
    with caplog.at_level(logging.WARNING):
        kept = {_row(o) for o in _refresh_one(tmp_path / "b.sqlite", fake, provider)}
    # the zero row went and every other row stayed (for Azure the meter went: the dearer region's row took over)
    assert len(clean - kept) == 1 and len(kept - clean) == (1 if provider == "azure" else 0)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [getattr(r, "event", "") for r in warnings] == ["price_implausible"]
    assert getattr(warnings[0], "provider", "") == provider


def _row(offer: Any) -> tuple[str, str, int, float, str]:
    return (offer.instance, offer.pricing_type, offer.gpu_count, offer.price_per_hour_usd, offer.region)


def _refresh_one(path: Any, fake: FakePriceApis, provider: str) -> list[Any]:
    store = PriceStore(path)
    result = _refresh(store, fake)[provider]
    assert result.status == "ok", result
    return _stored(store, provider)


def test_azures_zero_meter_leaves_the_region_that_has_a_price(tmp_path, fake) -> None:
    fake.edit["azure"] = ZEROS["azure"]
    store = PriceStore(tmp_path / "prices.sqlite")
    assert _refresh(store, fake)["azure"].status == "ok"
    h100 = next(
        o for o in _stored(store, "azure") if o.instance == "Standard_ND96isr_H100_v5" and o.pricing_type == "on-demand"
    )
    assert (h100.region, h100.price_per_hour_usd) == ("westeurope", 104.1)


def test_runpod_zero_means_not_offered_and_a_negative_price_is_dropped(tmp_path, fake, caplog) -> None:
    fake.edit["runpod"] = _zero("securePrice", lambda b: b["data"]["gpuTypes"][1])
    store = PriceStore(tmp_path / "a.sqlite")
    with caplog.at_level(logging.WARNING):
        assert _refresh(store, fake)["runpod"].prices == 6  # H100 Secure Cloud: not offered, not an error
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]
    fake.edit["runpod"] = lambda b: (b["data"]["gpuTypes"][1].update(securePrice=-2.99), b)[1]
    with caplog.at_level(logging.WARNING):
        assert _refresh(PriceStore(tmp_path / "b.sqlite"), fake)["runpod"].prices == 6
    assert [getattr(r, "event", "") for r in caplog.records if r.levelno == logging.WARNING] == ["price_implausible"]


def _drop(key: str, rows: Callable[[Any], list[dict[str, Any]]]) -> Callable[[Any], Any]:
    def edit(body: Any) -> Any:
        for row in rows(body):
            row.pop(key, None)
        return body

    return edit


CHANGED: dict[str, Callable[[Any], Any]] = {  # a key every row of the documented shape has, renamed away
    "azure": _drop("retailPrice", lambda b: b["Items"]),
    "vast": _drop("dph_total", lambda b: b["offers"]),
    "runpod": _drop("securePrice", lambda b: b["data"]["gpuTypes"]),
    "lambda": _drop("price_cents_per_hour", lambda b: [e["instance_type"] for e in b["data"].values()]),
    "digitalocean": _drop("price_hourly", lambda b: b["sizes"]),
    "shadeform": _drop("hourly_price", lambda b: b["instance_types"]),
    "primeintellect": _drop("prices", lambda b: b["items"]),
    "tensordock": _drop("price_per_hr", lambda b: [g for loc in b["data"]["locations"] for g in loc["gpus"]]),
    "verda": _drop("price_per_hour", lambda b: b),
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_changed_format_costs_that_provider_only_with_one_warning(tmp_path, fake, caplog, provider) -> None:
    store = PriceStore(tmp_path / "prices.sqlite")
    _refresh(store, fake)
    before = _stored(store, provider)
    fake.edit[provider] = CHANGED[provider]
    with caplog.at_level(logging.WARNING):
        results = _refresh(store, fake, now=NOW + timedelta(days=1))
    assert results[provider].status == "format", results[provider]
    assert all(r.status == "ok" for name, r in results.items() if name != provider)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and provider in warnings[0].getMessage()
    assert before and _stored(store, provider) == before


def test_an_empty_prime_intellect_answer_keeps_its_last_prices(tmp_path, fake) -> None:
    """SkyPilot records Prime Intellect intermittently answering 200 {"items": [], "totalCount": 0}."""
    store = PriceStore(tmp_path / "prices.sqlite")
    _refresh(store, fake)
    before = _stored(store, "primeintellect")
    fake.edit["primeintellect"] = lambda body: {"items": [], "totalCount": 0}
    assert _refresh(store, fake, now=NOW + timedelta(days=1))["primeintellect"].status == "format"
    assert before and _stored(store, "primeintellect") == before


def test_prime_intellect_pages_follow_total_count() -> None:
    url = "https://api.primeintellect.ai/api/v1/availability/gpus?page=1&page_size=100"
    full = {"items": [{}] * 100, "totalCount": 250}
    assert primeintellect.next_page(full, url, 1) == (
        "https://api.primeintellect.ai/api/v1/availability/gpus?page=2&page_size=100"
    )
    assert primeintellect.next_page(full, url, 3) is None  # 300 >= 250
    assert primeintellect.next_page({"items": [{}] * 5, "totalCount": 5}, url, 1) is None


def test_verda_without_a_token_is_refused_and_costs_only_verda(tmp_path, fake) -> None:
    keys = {**KEYS, "VERDA_CLIENT_SECRET": "wrong"}
    results = _refresh(PriceStore(tmp_path / "prices.sqlite"), fake, keys=keys)
    assert results["verda"].status == "unauthorized" and "wrong" not in results["verda"].detail
    assert all(r.status == "ok" for name, r in results.items() if name != "verda")
    assert not [path for _, path, _ in fake.requests if path == "/verda/v1/instance-types"]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_health_lists_skipped_providers_and_why_and_each_last_refresh(tmp_path, fake, lang) -> None:
    store = PriceStore(tmp_path / "prices.sqlite")
    keys = {k: v for k, v in KEYS.items() if k not in ("VAST_API_KEY", "VERDA_CLIENT_SECRET")}
    _refresh(store, fake, keys=keys)
    fake.broken["lambda"] = "unauthorized"
    _refresh(store, fake, keys=keys, now=NOW + timedelta(hours=1))
    sources = default_sources(fake.endpoint)
    lines = asyncio.run(price_status(store, sources, keys, lang))
    by = {line.split()[1].rstrip(":"): line for line in lines}
    assert len(lines) == 9
    skip = {"en": "skipped, no key (set", "de": "übersprungen, kein Schlüssel (setze"}[lang]
    assert skip + " VAST_API_KEY)" in by["vast"]
    assert "VERDA_CLIENT_ID" in by["verda"] and "VERDA_CLIENT_SECRET" in by["verda"] and skip in by["verda"]
    assert "HTTP 401" in by["lambda"] and "2026-12-01 06:00" in by["lambda"]  # failed; keeps the 06:00 prices
    assert by["azure"].endswith("2026-12-01 07:00 UTC") and " 3 " in by["azure"]
    assert not [k for k in keys.values() if k in "\n".join(lines)]


def test_fitbot_health_prints_the_price_sources(tmp_path, monkeypatch, capsys) -> None:
    from bot.app import cli, datadir

    monkeypatch.setenv("FITBOT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("PRIME_API_KEY", "prime-secret-6")
    for name in ("VAST_API_KEY", "SHADEFORM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    datadir.mark(tmp_path)
    assert cli.main(["health"]) == 0
    out = capsys.readouterr().out
    assert "prices vast: skipped, no key (set VAST_API_KEY)" in out
    assert "prices shadeform: skipped, no key (set SHADEFORM_API_KEY)" in out
    assert "prices primeintellect: not refreshed yet" in out and "prime-secret-6" not in out


def test_a_marketplace_price_reaches_the_cost_card_marked_as_one(fake, monkeypatch, capsys) -> None:
    from bot.app import cli

    monkeypatch.setenv("PRICE_ENDPOINT", fake.endpoint)
    monkeypatch.setenv("VAST_API_KEY", "vast-secret-1")
    assert cli.main(["catalog", "refresh"]) == 0
    assert "vast           2 prices" in capsys.readouterr().out
    assert cli.main(["ask", "/cloud qwen3-8b"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if "Vast.ai RTX 4090" in line]
    assert rows and "$0.35~" in rows[0], out  # the live median of 3 listings, marked "~ spot or marketplace"
    assert "~ spot or marketplace" in out

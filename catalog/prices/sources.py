"""Providers that publish GPU prices machine-readably, and how to read each one's answer.

| provider     | API                                                    | key                          |
|--------------|--------------------------------------------------------|------------------------------|
| Azure        | GET prices.azure.com/api/retail/prices (Retail Prices) | none                         |
| Vast.ai      | GET console.vast.ai/api/v0/bundles/ (offer search)     | none                         |
| RunPod       | POST api.runpod.io/graphql (gpuTypes)                  | RUNPOD_API_KEY (operator)    |
| Lambda       | GET cloud.lambda.ai/api/v1/instance-types              | LAMBDA_API_KEY (operator)    |
| DigitalOcean | GET api.digitalocean.com/v2/sizes                      | DIGITALOCEAN_TOKEN (operator)|

A parser gets the decoded JSON and returns ``CloudOffer`` rows; a shape it does not recognise raises
``PriceFormatError`` (the refresh then logs one warning and keeps that provider's last good prices).
Product names map to catalog GPU ids through the tables below; a product not in them is skipped, never
guessed. Vast.ai listings are a marketplace: its rows are per-GPU-type medians (``marketplace-median``).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.models import CloudOffer, Provenance


class PriceFormatError(ValueError):
    """A provider answered with a shape its parser does not know."""


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # appended to the provider's base URL
    params: dict[str, str] = field(default_factory=dict)
    json: dict[str, Any] | None = None


@dataclass(frozen=True)
class PriceSource:
    name: str
    base_url: str
    request: Request
    parse: Callable[[Any, str], list[CloudOffer]]  # (decoded JSON, date seen) -> offers
    key_env: str | None = None  # the operator's API key variable; None: public
    next_page: Callable[[Any], str | None] = field(default=lambda payload: None)  # a paginated answer's next URL
    pages_key: str = ""  # the list that the pages of a paginated answer add up
    auth: Callable[[str], dict[str, str]] = field(default=lambda key: {"Authorization": f"Bearer {key}"})

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + self.request.path


def _offer(
    provider: str,
    instance: str,
    gpu: str,
    count: int,
    price: float,
    kind: str,
    seen: str,
    url: str,
    region: str = "",
    billing: str = "hourly",
) -> CloudOffer:
    return CloudOffer(
        provider=provider,
        instance=instance,
        gpu_id=gpu,
        gpu_count=count,
        price_per_hour_usd=round(price, 4),
        billing=billing,
        pricing_type=kind,
        region=region,
        seen=seen,
        provenance=Provenance(source=f"{url} (live, {provider} API)", as_of=seen),
    )


def _items(payload: Any, key: str) -> list[dict[str, Any]]:
    items = payload.get(key) if isinstance(payload, dict) else None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise PriceFormatError(f"no list under {key!r}")
    return items


def _price(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 10_000:
        raise PriceFormatError(f"{what} is not a price: {value!r}")
    return float(value)


# Azure VM sizes (learn.microsoft.com/azure/virtual-machines/sizes): SKU -> (catalog GPU, GPUs per VM)
AZURE_SKUS = {
    "Standard_ND96isr_H100_v5": ("h100-sxm", 8),
    "Standard_ND96isr_H200_v5": ("h200-sxm", 8),
    "Standard_NC40ads_H100_v5": ("h100-nvl", 1),
    "Standard_NC80adis_H100_v5": ("h100-nvl", 2),
    "Standard_NC24ads_A100_v4": ("a100-80gb-pcie", 1),
    "Standard_NC48ads_A100_v4": ("a100-80gb-pcie", 2),
    "Standard_NC96ads_A100_v4": ("a100-80gb-pcie", 4),
    "Standard_ND96asr_v4": ("a100-40gb", 8),
    "Standard_ND96amsr_A100_v4": ("a100-80gb-sxm", 8),
    "Standard_ND96isr_MI300X_v5": ("mi300x", 8),
    "Standard_NC4as_T4_v3": ("t4", 1),
    "Standard_NC64as_T4_v3": ("t4", 4),
}


def parse_azure(payload: Any, seen: str) -> list[CloudOffer]:
    """Retail Prices API: Linux consumption meters of the GPU VM sizes above (spot meters as spot).

    One row per size and kind: the cheapest region (the API lists every region).
    """
    out: dict[tuple[str, str], CloudOffer] = {}
    for item in _items(payload, "Items"):
        sku = AZURE_SKUS.get(str(item.get("armSkuName")))
        if sku is None or item.get("type") != "Consumption" or item.get("unitOfMeasure") != "1 Hour":
            continue
        name, product = str(item.get("skuName", "")), str(item.get("productName", ""))
        if "Low Priority" in name or "Windows" in product or item.get("currencyCode", "USD") != "USD":
            continue
        kind = "spot" if "Spot" in name else "on-demand"
        price = _price(item.get("retailPrice"), "retailPrice")
        region = str(item.get("armRegionName", ""))
        key = (str(item["armSkuName"]), kind)
        if key not in out or price < out[key].price_per_hour_usd:
            out[key] = _offer("Azure", key[0], sku[0], sku[1], price, kind, seen, AZURE_URL, region)
    return [out[k] for k in sorted(out)]


def azure_next_page(payload: Any) -> str | None:
    link = payload.get("NextPageLink") if isinstance(payload, dict) else None
    return link if isinstance(link, str) and link.startswith(("https://", "http://")) else None


# Vast.ai gpu_name -> catalog GPU (the 80 GB A100/H100 boards; gpu_ram disambiguates the A100)
VAST_GPUS = {
    "RTX 3090": "rtx-3090",
    "RTX 4090": "rtx-4090",
    "RTX 5090": "rtx-5090",
    "RTX A6000": "rtx-a6000",
    "RTX 6000Ada": "rtx-6000-ada",
    "L40S": "l40s",
    "L40": "l40",
    "A100 PCIE": "a100-80gb-pcie",
    "A100 SXM4": "a100-80gb-sxm",
    "H100 PCIE": "h100-pcie",
    "H100 SXM": "h100-sxm",
    "H100 NVL": "h100-nvl",
    "H200": "h200-sxm",
    "B200": "b200",
}


def parse_vast(payload: Any, seen: str) -> list[CloudOffer]:
    """Offer search: the median $/h of rentable listings per GPU type and GPU count."""
    groups: dict[tuple[str, int], list[float]] = {}
    for item in _items(payload, "offers"):
        gpu = VAST_GPUS.get(str(item.get("gpu_name")))
        count = item.get("num_gpus")
        if gpu is None or not isinstance(count, int) or count < 1 or item.get("rentable") is False:
            continue
        if gpu.startswith("a100") and isinstance(item.get("gpu_ram"), int | float) and item["gpu_ram"] < 60_000:
            continue  # a 40 GB A100 listing: not the 80 GB board named above
        groups.setdefault((gpu, count), []).append(_price(item.get("dph_total"), "dph_total"))
    return [
        _offer(
            "Vast.ai",
            f"{count}x {gpu} (median of {len(prices)} listings)",
            gpu,
            count,
            statistics.median(prices),
            "marketplace-median",
            seen,
            VAST_URL,
            billing="per-second",
        )
        for (gpu, count), prices in sorted(groups.items())
    ]


# RunPod gpuTypes id -> catalog GPU
RUNPOD_GPUS = {
    "NVIDIA GeForce RTX 3090": "rtx-3090",
    "NVIDIA GeForce RTX 4090": "rtx-4090",
    "NVIDIA GeForce RTX 5090": "rtx-5090",
    "NVIDIA RTX A6000": "rtx-a6000",
    "NVIDIA RTX 6000 Ada Generation": "rtx-6000-ada",
    "NVIDIA L4": "l4",
    "NVIDIA L40": "l40",
    "NVIDIA L40S": "l40s",
    "NVIDIA A100 80GB PCIe": "a100-80gb-pcie",
    "NVIDIA A100-SXM4-80GB": "a100-80gb-sxm",
    "NVIDIA H100 PCIe": "h100-pcie",
    "NVIDIA H100 80GB HBM3": "h100-sxm",
    "NVIDIA H100 NVL": "h100-nvl",
    "NVIDIA H200": "h200-sxm",
    "NVIDIA B200": "b200",
    "AMD Instinct MI300X OAM": "mi300x",
}
RUNPOD_QUERY = "query { gpuTypes { id displayName memoryInGb securePrice communityPrice secureSpotPrice } }"


def parse_runpod(payload: Any, seen: str) -> list[CloudOffer]:
    """gpuTypes: Secure Cloud and Community Cloud on-demand prices, Secure Cloud spot."""
    data = payload.get("data") if isinstance(payload, dict) else None
    out = []
    for item in _items(data, "gpuTypes"):
        gpu = RUNPOD_GPUS.get(str(item.get("id")))
        if gpu is None:
            continue
        for key, label, kind in (
            ("securePrice", "Secure Cloud", "on-demand"),
            ("communityPrice", "Community Cloud", "on-demand"),
            ("secureSpotPrice", "Secure Cloud spot", "spot"),
        ):
            if item.get(key):  # 0 or null: not offered in that cloud
                price = _price(item[key], key)
                out.append(
                    _offer(
                        "RunPod",
                        f"1x {item['id']} ({label})",
                        gpu,
                        1,
                        price,
                        kind,
                        seen,
                        RUNPOD_URL,
                        billing="per-second",
                    )
                )
    return out


# Lambda instance type "gpu_<n>x_<part>" -> catalog GPU
LAMBDA_GPUS = {
    "h100_sxm5": "h100-sxm",
    "h100_pcie": "h100-pcie",
    "a100_sxm4": "a100-40gb",
    "a100": "a100-40gb",
    "a100_80gb_sxm4": "a100-80gb-sxm",
    "a10": "a10",
    "a6000": "rtx-a6000",
    "rtx6000": "quadro-rtx-6000-24gb",
    "v100": "v100-32gb",
    "gh200": "gh200",
    "b200_sxm6": "b200",
}


def parse_lambda(payload: Any, seen: str) -> list[CloudOffer]:
    """instance-types: price_cents_per_hour of each on-demand instance type."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, dict):
        raise PriceFormatError("no object under 'data'")
    out = []
    for name, entry in sorted(data.items()):
        match = re.fullmatch(r"gpu_(\d+)x_(\w+)", name)
        kind = entry.get("instance_type") if isinstance(entry, dict) else None
        if not isinstance(kind, dict):
            raise PriceFormatError(f"{name}: no instance_type")
        gpu = LAMBDA_GPUS.get(match.group(2)) if match else None
        if match is None or gpu is None:
            continue
        price = _price(kind.get("price_cents_per_hour"), "price_cents_per_hour") / 100
        out.append(
            _offer("Lambda", name, gpu, int(match.group(1)), price, "on-demand", seen, LAMBDA_URL, billing="per-minute")
        )
    return out


# DigitalOcean size slug "gpu-<part>x<n>-..." -> catalog GPU ("gpu-mi300x1-192gb": part "mi300", 1 GPU)
DO_GPUS = {
    "h100": "h100-sxm",
    "h200": "h200-sxm",
    "mi300": "mi300x",
    "l40s": "l40s",
    "4000ada": "rtx-4000-ada",
    "6000ada": "rtx-6000-ada",
}


def parse_digitalocean(payload: Any, seen: str) -> list[CloudOffer]:
    """sizes: the hourly price of every GPU Droplet size."""
    out = []
    for item in _items(payload, "sizes"):
        match = re.fullmatch(r"gpu-([a-z0-9]+)x(\d+)-.*", str(item.get("slug", "")))
        gpu = DO_GPUS.get(match.group(1)) if match else None
        if match is None or gpu is None:
            continue
        price = _price(item.get("price_hourly"), "price_hourly")
        out.append(
            _offer("DigitalOcean", str(item["slug"]), gpu, int(match.group(2)), price, "on-demand", seen, DO_URL)
        )
    return out


AZURE_URL = "https://prices.azure.com/api/retail/prices"
VAST_URL = "https://console.vast.ai/api/v0/bundles/"
RUNPOD_URL = "https://api.runpod.io/graphql"
LAMBDA_URL = "https://cloud.lambda.ai/api/v1/instance-types"
DO_URL = "https://api.digitalocean.com/v2/sizes"

_AZURE_FILTER = (
    "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and ("
    + " or ".join(f"armSkuName eq '{sku}'" for sku in AZURE_SKUS)
    + ")"
)
_VAST_QUERY = '{"rentable": {"eq": true}, "verified": {"eq": true}, "type": "on-demand", "limit": 1000}'


def default_sources(endpoint: str | None = None) -> list[PriceSource]:
    """The five providers; ``endpoint`` (a test server) replaces every host, with the provider's name as prefix."""

    def base(name: str, real: str) -> str:
        return f"{endpoint.rstrip('/')}/{name}" if endpoint else real

    return [
        PriceSource(
            "azure",
            base("azure", "https://prices.azure.com"),
            Request("GET", "/api/retail/prices", {"$filter": _AZURE_FILTER}),
            parse_azure,
            next_page=azure_next_page,
            pages_key="Items",
        ),
        PriceSource(
            "vast",
            base("vast", "https://console.vast.ai"),
            Request("GET", "/api/v0/bundles/", {"q": _VAST_QUERY}),
            parse_vast,
        ),
        PriceSource(
            "runpod",
            base("runpod", "https://api.runpod.io"),
            Request("POST", "/graphql", json={"query": RUNPOD_QUERY}),
            parse_runpod,
            key_env="RUNPOD_API_KEY",
        ),
        PriceSource(
            "lambda",
            base("lambda", "https://cloud.lambda.ai"),
            Request("GET", "/api/v1/instance-types"),
            parse_lambda,
            key_env="LAMBDA_API_KEY",
        ),
        PriceSource(
            "digitalocean",
            base("digitalocean", "https://api.digitalocean.com"),
            Request("GET", "/v2/sizes", {"per_page": "200"}),
            parse_digitalocean,
            key_env="DIGITALOCEAN_TOKEN",
        ),
    ]

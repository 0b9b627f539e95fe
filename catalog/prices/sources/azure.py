"""Azure: the Retail Prices API, public, no key.

Request and every field read here as documented in learn.microsoft.com/rest/api/cost-management/
retail-prices/azure-retail-prices: ``GET https://prices.azure.com/api/retail/prices?$filter=...``
answers ``{"BillingCurrency", "CustomerEntityId", "CustomerEntityType", "Items": [...],
"NextPageLink", "Count"}``; each item has ``currencyCode``, ``retailPrice`` (the pay-as-you-go
price per ``unitOfMeasure``), ``armRegionName``, ``armSkuName``, ``skuName`` (``... Spot``,
``... Low Priority``), ``productName`` (``... Windows`` for Windows meters), ``type``
(``Consumption``, ``Reservation``, ``DevTestConsumption``) and ``unitOfMeasure`` (``1 Hour``).
Pages follow ``NextPageLink`` (null on the last). SkyPilot's ``sky/catalog/data_fetchers/
fetch_azure.py`` sends the same filter and drops meters priced at 0, which exist.
"""

from __future__ import annotations

import re
from typing import Any

from catalog.prices.sources.base import PriceFormatError, Rows, cheapest, items, offer
from core.models import CloudOffer

URL = "https://prices.azure.com/api/retail/prices"

# Azure VM sizes (learn.microsoft.com/azure/virtual-machines/sizes): SKU -> (catalog GPU, GPUs per VM)
SKUS = {
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
FILTER = (
    "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and ("
    + " or ".join(f"armSkuName eq '{sku}'" for sku in SKUS)
    + ")"
)
WINDOWS = re.compile(r"\bWin(dows)?\b")  # "... Windows", and the "... Srs Win" products SkyPilot notes


def parse(payload: Any, seen: str) -> Rows:
    """Linux consumption meters of the GPU VM sizes above (spot meters as spot), the cheapest region each.

    A meter at $0 (or any number that is no price) is dropped on its own; the other meters stay.
    """
    rows = Rows()
    out: dict[tuple[str, str], CloudOffer] = {}
    for item in items(payload, "Items"):
        sku = SKUS.get(str(item.get("armSkuName")))
        if sku is None or item.get("type") != "Consumption" or item.get("unitOfMeasure") != "1 Hour":
            continue
        if "retailPrice" not in item:
            raise PriceFormatError("an item has no 'retailPrice'")
        name, product = str(item.get("skuName", "")), str(item.get("productName", ""))
        if "Low Priority" in name or WINDOWS.search(product) or item.get("currencyCode", "USD") != "USD":
            continue
        kind = "spot" if "Spot" in name else "on-demand"
        region = str(item.get("armRegionName", ""))
        key = (str(item["armSkuName"]), kind)
        price = rows.price(item["retailPrice"], f"{key[0]} {kind} in {region}", "retailPrice")
        if price is not None:
            cheapest(out, key, offer("Azure", key[0], sku[0], sku[1], price, kind, seen, URL, region))
    rows.offers = [out[k] for k in sorted(out)]
    return rows


def next_page(payload: Any, url: str = "", read: int = 1) -> str | None:
    """``NextPageLink``; null on the last page."""
    link = payload.get("NextPageLink") if isinstance(payload, dict) else None
    return link if isinstance(link, str) and link.startswith(("https://", "http://")) else None

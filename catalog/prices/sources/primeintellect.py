"""Prime Intellect: GPU offers of the providers it aggregates, keyed, paginated.

docs.primeintellect.ai/api-reference/check-gpu-availability: ``GET https://api.primeintellect.ai/
api/v1/availability/gpus`` with ``Authorization: Bearer <key>`` (permission "Availability -> Read")
answers a paginated ``{"items": [...], "totalCount": N}`` (``page``, ``page_size`` up to 100). Each
item has ``cloudId``, ``gpuType`` (``H100_80GB``), ``socket`` (``PCIe``, ``SXM5``), ``provider``,
``dataCenter``, ``country``, ``gpuCount``, ``stockStatus``, ``security`` (``secure_cloud``,
``community_cloud``), ``isSpot`` and ``prices`` ``{"onDemand", "communityPrice", "isVariable",
"currency"}``; ``prices.onDemand`` is the whole configuration's $/h (disk and adjustable resources
extra), as SkyPilot's ``sky/catalog/data_fetchers/fetch_primeintellect.py`` reads it ("a 2-GPU
offer's hourly price is for the entire box"). That fetcher also records an intermittent
``200 {"items": [], "totalCount": 0}``: an empty answer here is a failed refresh, never "no prices".
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit

from catalog.prices.sources.base import PriceFormatError, Rows, cheapest, items, need, offer
from core.models import CloudOffer

URL = "https://api.primeintellect.ai/api/v1/availability/gpus"
KEY_ENV = "PRIME_API_KEY"  # the variable Prime Intellect's own tools (prime CLI, prime-core) read
PAGE_SIZE = 100

# gpuType -> catalog GPU by socket ("PCIe" or anything else: SXM); names from the docs' examples and
# SkyPilot's fetcher (RTX_PRO_6000B_96GB, RTX6000Ada_48GB, A6000_48GB)
GPUS = {
    "H100_80GB": ("h100-sxm", "h100-pcie"),
    "H200_141GB": ("h200-sxm", "h200-nvl"),
    "B200_180GB": ("b200", "b200"),
    "A100_80GB": ("a100-80gb-sxm", "a100-80gb-pcie"),
    "A100_40GB": ("a100-40gb", "a100-40gb"),
    "RTX_PRO_6000B_96GB": ("rtx-pro-6000", "rtx-pro-6000"),
    "RTX6000Ada_48GB": ("rtx-6000-ada", "rtx-6000-ada"),
    "A6000_48GB": ("rtx-a6000", "rtx-a6000"),
    "L40S_48GB": ("l40s", "l40s"),
    "RTX4090_24GB": ("rtx-4090", "rtx-4090"),
    "MI300X_192GB": ("mi300x", "mi300x"),
}
IN_STOCK = {"available", "low", "medium", "high"}


def parse(payload: Any, seen: str) -> Rows:
    """The cheapest in-stock offer per GPU, count and kind (spot where ``isSpot``)."""
    rows = Rows()
    out: dict[tuple[str, int, str], CloudOffer] = {}
    for item in items(payload, "items"):
        need(item, "gpuType", "gpuCount", "prices")
        prices = item["prices"]
        if not isinstance(prices, dict) or "onDemand" not in prices:
            raise PriceFormatError("an offer has no prices.onDemand")
        pair = GPUS.get(str(item["gpuType"]))
        count = item["gpuCount"]
        stock = str(item.get("stockStatus") or "").lower()
        if pair is None or not isinstance(count, int) or count < 1 or stock not in IN_STOCK:
            continue
        if prices.get("currency", "USD") != "USD":
            continue
        gpu = pair[1] if str(item.get("socket", "")).lower() == "pcie" else pair[0]
        kind = "spot" if item.get("isSpot") else "on-demand"
        where = item.get("dataCenter") or item.get("country") or ""
        name = f"{count}x {item['gpuType']} via {item.get('provider', '?')} ({where})"
        price = rows.price(prices["onDemand"], name, "prices.onDemand")
        if price is not None:
            cheapest(out, (gpu, count, kind), offer("Prime Intellect", name, gpu, count, price, kind, seen, URL, where))
    rows.offers = [out[k] for k in sorted(out)]
    return rows


def next_page(payload: Any, url: str, read: int) -> str | None:
    """The next page while this one was full and ``totalCount`` says there are more."""
    if not isinstance(payload, dict) or not isinstance(payload.get("items"), list):
        return None
    total = payload.get("totalCount")
    if len(payload["items"]) < PAGE_SIZE or not isinstance(total, int) or read * PAGE_SIZE >= total:
        return None
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}?" + urlencode({"page": read + 1, "page_size": PAGE_SIZE})

"""Vast.ai: the offer search of its marketplace; an API key on every request.

vast.ai/developers/api: "GET /api/v0/bundles/ - Search available GPU offers", authenticated with
``Authorization: Bearer $VAST_API_KEY`` (the page's example call), the query as JSON in ``?q=``,
answering ``{"offers": [{"id", "gpu_name", "num_gpus", "dph_total", ...}]}``. The official client
(vast-ai/vast-cli ``vast.py`` ``search__offers``; docs.vast.ai/sdk/python/reference/search-offers)
adds the default filters ``verified``, ``rentable`` and ``external=false`` and reads ``gpu_ram`` in
MB and ``dph_total`` as the whole listing's $/h (GPUs, CPU, RAM; storage extra).

Hosts set their own prices, so the rows are marketplace prices: per GPU type and count the median of
the rentable listings (``pricing_type = "marketplace"``: a card shows them marked "~").
"""

from __future__ import annotations

import json
import statistics
from typing import Any

from catalog.prices.sources.base import Rows, items, need, offer

URL = "https://console.vast.ai/api/v0/bundles/"
KEY_ENV = "VAST_API_KEY"
QUERY = json.dumps(
    {
        "rentable": {"eq": True},
        "verified": {"eq": True},
        "external": {"eq": False},
        "rented": {"eq": False},
        "type": "on-demand",
        "limit": 1000,
    }
)

# Vast.ai gpu_name -> catalog GPU (the 80 GB A100/H100 boards; gpu_ram disambiguates the A100)
GPUS = {
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


def parse(payload: Any, seen: str) -> Rows:
    """The median $/h of the rentable listings per GPU type and GPU count; a listing at $0 is dropped alone."""
    rows = Rows()
    groups: dict[tuple[str, int], list[float]] = {}
    for item in items(payload, "offers"):
        need(item, "gpu_name", "num_gpus", "dph_total")
        gpu = GPUS.get(str(item["gpu_name"]))
        count = item["num_gpus"]
        if gpu is None or not isinstance(count, int) or count < 1 or item.get("rentable") is False:
            continue
        if gpu.startswith("a100") and isinstance(item.get("gpu_ram"), int | float) and item["gpu_ram"] < 60_000:
            continue  # a 40 GB A100 listing: not the 80 GB board named above
        price = rows.price(item["dph_total"], f"listing {item.get('id')} ({count}x {gpu})", "dph_total")
        if price is not None:
            groups.setdefault((gpu, count), []).append(price)
    rows.offers = [
        offer(
            "Vast.ai",
            f"{count}x {gpu} (median of {len(prices)} listings)",
            gpu,
            count,
            statistics.median(prices),
            "marketplace",
            seen,
            URL,
            billing="per-second",
        )
        for (gpu, count), prices in sorted(groups.items())
    ]
    return rows

"""DigitalOcean: the sizes endpoint (GPU Droplets among them), with the operator's token.

docs.digitalocean.com/reference/api/reference/sizes: ``GET https://api.digitalocean.com/v2/sizes``
with ``Authorization: Bearer <token>`` (scopes ``sizes:read`` and ``regions:read``) answers
``{"sizes": [{"slug", "price_hourly", "price_monthly", "regions", "available", "gpu_info": {"count",
"vram", "model"}, ...}], "links", "meta"}``. GPU slugs read ``gpu-<model>x<count>-<memory>``
(``gpu-h100x8-640gb``, ``gpu-mi300x1-192gb``).
"""

from __future__ import annotations

import re
from typing import Any

from catalog.prices.sources.base import Rows, items, need, offer

URL = "https://api.digitalocean.com/v2/sizes"
KEY_ENV = "DIGITALOCEAN_TOKEN"

# DigitalOcean size slug "gpu-<part>x<n>-..." -> catalog GPU ("gpu-mi300x1-192gb": part "mi300", 1 GPU)
GPUS = {
    "h100": "h100-sxm",
    "h200": "h200-sxm",
    "mi300": "mi300x",
    "l40s": "l40s",
    "4000ada": "rtx-4000-ada",
    "6000ada": "rtx-6000-ada",
}


def parse(payload: Any, seen: str) -> Rows:
    """The hourly price of every GPU Droplet size."""
    rows = Rows()
    for item in items(payload, "sizes"):
        need(item, "slug", "price_hourly")
        match = re.fullmatch(r"gpu-([a-z0-9]+)x(\d+)-.*", str(item["slug"]))
        gpu = GPUS.get(match.group(1)) if match else None
        if match is None or gpu is None:
            continue
        price = rows.price(item["price_hourly"], str(item["slug"]), "price_hourly")
        if price is not None:
            count = int(match.group(2))
            rows.offers.append(offer("DigitalOcean", str(item["slug"]), gpu, count, price, "on-demand", seen, URL))
    return rows

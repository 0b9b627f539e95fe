"""Lambda: the instance-types endpoint of its Cloud API, with the operator's key.

``GET https://cloud.lambda.ai/api/v1/instance-types`` with ``Authorization: Bearer <key>`` answers
``{"data": {"<name>": {"instance_type": {"name", "description", "gpu_description",
"price_cents_per_hour", "specs": {"vcpus", "memory_gib", "storage_gib", "gpus"}},
"regions_with_capacity_available": [...]}}}`` (docs-api.lambda.ai/api/cloud, "List available instance
types"; read the same way by SkyPilot's ``sky/catalog/data_fetchers/fetch_lambda_cloud.py``). Names
are ``gpu_<n>x_<gpu>``; the price is the whole instance's, in cents an hour.

``gpu_8x_v100`` is the **16 GB** V100 SXM2: SkyPilot's ``GPU_TO_MEMORY['V100'] = 16384`` and the
skypilot-catalog ``lambda/vms.csv`` row (gpu_8x_v100, 16384 MiB); Lambda rents no 32 GB V100.
"""

from __future__ import annotations

import re
from typing import Any

from catalog.prices.sources.base import PriceFormatError, Rows, offer

URL = "https://cloud.lambda.ai/api/v1/instance-types"
KEY_ENV = "LAMBDA_API_KEY"

# Lambda instance type "gpu_<n>x_<part>" -> catalog GPU
GPUS = {
    "h100_sxm5": "h100-sxm",
    "h100_pcie": "h100-pcie",
    "a100_sxm4": "a100-40gb",
    "a100": "a100-40gb",
    "a100_80gb_sxm4": "a100-80gb-sxm",
    "a10": "a10",
    "a6000": "rtx-a6000",
    "rtx6000": "quadro-rtx-6000-24gb",
    "v100": "v100-sxm2-16gb",
    "gh200": "gh200",
    "b200_sxm6": "b200",
}


def parse(payload: Any, seen: str) -> Rows:
    """price_cents_per_hour of each on-demand GPU instance type."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, dict):
        raise PriceFormatError("no object under 'data'")
    rows = Rows()
    for name, entry in sorted(data.items()):
        kind = entry.get("instance_type") if isinstance(entry, dict) else None
        if not isinstance(kind, dict) or "price_cents_per_hour" not in kind:
            raise PriceFormatError(f"{name}: no instance_type.price_cents_per_hour")
        match = re.fullmatch(r"gpu_(\d+)x_(\w+)", name)
        gpu = GPUS.get(match.group(2)) if match else None
        if match is None or gpu is None:
            continue
        price = rows.price(kind["price_cents_per_hour"], name, "price_cents_per_hour", scale=0.01)
        if price is not None:
            count = int(match.group(1))
            rows.offers.append(offer("Lambda", name, gpu, count, price, "on-demand", seen, URL, billing="per-minute"))
    return rows

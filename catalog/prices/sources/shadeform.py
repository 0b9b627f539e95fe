"""Shadeform: one API over many GPU clouds; the instance types with their hourly prices, keyed.

docs.shadeform.ai/api-reference/instances/instances-types: ``GET https://api.shadeform.ai/v1/
instances/types`` (``?available=true`` keeps types with capacity somewhere) with the
``X-API-KEY: <api-key>`` header answers ``{"instance_types": [{"cloud", "shade_instance_type",
"cloud_instance_type", "configuration": {"num_gpus", "gpu_type", "interconnect",
"vram_per_gpu_in_gb", ...}, "hourly_price", "deployment_type", "availability": [{"region",
"available", "display_name"}], ...}]}``, where ``hourly_price`` is "the hourly price of the instance
in cents" (docs.shadeform.ai/api-reference/instances/instances-info). SkyPilot's
``sky/catalog/data_fetchers/fetch_shadeform.py`` sends the same request and divides by 100.

Shadeform passes each cloud's on-demand price through; one row per GPU and count, the cheapest cloud.
"""

from __future__ import annotations

from typing import Any

from catalog.prices.sources.base import PriceFormatError, Rows, cheapest, items, need, offer
from core.models import CloudOffer

URL = "https://api.shadeform.ai/v1/instances/types"
KEY_ENV = "SHADEFORM_API_KEY"  # the name Shadeform's own SDK reads (pypi.org/project/shadeform)

# configuration.gpu_type (the filter values the docs give: "H100", "A100_80G", "A6000") -> catalog GPU;
# boards that come as SXM and PCIe are told apart by configuration.interconnect ("sxm5", "pcie")
GPUS = {
    "H100": ("h100-sxm", "h100-pcie"),
    "H200": ("h200-sxm", "h200-nvl"),
    "B200": ("b200", None),
    "A100_80G": ("a100-80gb-sxm", "a100-80gb-pcie"),
    "A100": ("a100-40gb", "a100-40gb"),
    "A6000": ("rtx-a6000", "rtx-a6000"),
    "L40S": ("l40s", "l40s"),
    "L40": ("l40", "l40"),
    "GH200": ("gh200", None),
    "MI300X": ("mi300x", None),
}


def _gpu(config: dict[str, Any]) -> str | None:
    pair = GPUS.get(str(config.get("gpu_type")))
    if pair is None:
        return None
    vram = config.get("vram_per_gpu_in_gb")
    if pair[0] == "a100-40gb" and isinstance(vram, int | float) and vram >= 60:  # an A100 without the _80G suffix
        pair = GPUS["A100_80G"]
    return pair[1] if str(config.get("interconnect", "")).lower().startswith("pcie") else pair[0]


def parse(payload: Any, seen: str) -> Rows:
    """The cheapest available instance type per GPU and GPU count (price in cents an hour)."""
    rows = Rows()
    out: dict[tuple[str, int], CloudOffer] = {}
    for item in items(payload, "instance_types"):
        need(item, "cloud", "configuration", "hourly_price")
        config = item["configuration"]
        if not isinstance(config, dict) or "num_gpus" not in config or "gpu_type" not in config:
            raise PriceFormatError("an instance type has no configuration.num_gpus/gpu_type")
        gpu, count = _gpu(config), config["num_gpus"]
        places = item.get("availability")
        free = [a for a in places if isinstance(a, dict) and a.get("available")] if isinstance(places, list) else []
        if gpu is None or not isinstance(count, int) or count < 1 or not free:
            continue
        name = f"{count}x {config['gpu_type']} via {item['cloud']} ({item.get('cloud_instance_type', '')})"
        price = rows.price(item["hourly_price"], name, "hourly_price", scale=0.01)
        if price is not None:
            row = offer("Shadeform", name, gpu, count, price, "on-demand", seen, URL, str(free[0].get("region", "")))
            cheapest(out, (gpu, count), row)
    rows.offers = [out[k] for k in sorted(out)]
    return rows

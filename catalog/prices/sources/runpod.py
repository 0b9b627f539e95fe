"""RunPod: the GraphQL ``gpuTypes`` query (Pods), with the operator's key.

The query and its fields are those of RunPod's official SDK, runpod/runpod-python
``runpod/api/queries/gpus.py`` (``gpuTypes { id displayName memoryInGb securePrice communityPrice
secureSpotPrice ... }``), POSTed to ``https://api.runpod.io/graphql``; the answer is
``{"data": {"gpuTypes": [...]}}``. ``securePrice``/``communityPrice`` are the on-demand Pod $/h of one
GPU in Secure and Community Cloud, ``secureSpotPrice`` the spot one; 0 or null: not offered there.
GPU ids as docs.runpod.io/references/gpu-types lists them. These are Pod prices only: the snapshot's
serverless rows (``pricing_type = "serverless"``) are other prices and stay when RunPod refreshes.
"""

from __future__ import annotations

from typing import Any

from catalog.prices.sources.base import PriceFormatError, Rows, items, need, offer

URL = "https://api.runpod.io/graphql"
KEY_ENV = "RUNPOD_API_KEY"
QUERY = "query { gpuTypes { id displayName memoryInGb securePrice communityPrice secureSpotPrice } }"

# RunPod gpuTypes id -> catalog GPU
GPUS = {
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
CLOUDS = (
    ("securePrice", "Secure Cloud", "on-demand"),
    ("communityPrice", "Community Cloud", "on-demand"),
    ("secureSpotPrice", "Secure Cloud spot", "spot"),
)


def parse(payload: Any, seen: str) -> Rows:
    """Secure Cloud and Community Cloud on-demand Pod prices, Secure Cloud spot."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, dict):
        raise PriceFormatError("no object under 'data'")
    rows = Rows()
    for item in items(data, "gpuTypes"):
        need(item, "id", "securePrice")
        gpu = GPUS.get(str(item["id"]))
        if gpu is None:
            continue
        for key, label, kind in CLOUDS:
            if not item.get(key):  # 0 or null: not offered in that cloud
                continue
            price = rows.price(item[key], f"{item['id']} ({label})", key)
            if price is not None:
                instance = f"1x {item['id']} ({label})"
                rows.offers.append(offer("RunPod", instance, gpu, 1, price, kind, seen, URL, billing="per-second"))
    return rows

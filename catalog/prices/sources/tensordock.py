"""TensorDock: the locations of its v2 API with the GPUs each offers, keyed.

dashboard.tensordock.com/api/docs/fetch-hostnodes ("List Available Locations"): ``GET
https://dashboard.tensordock.com/api/v2/locations`` answers ``{"data": {"locations": [{"id",
"city", "stateprovince", "country", "tier", "gpus": [{"v0Name", "displayName", "max_count",
"price_per_hr", "resources": {...}, "pricing": {"per_vcpu_hr", "per_gb_ram_hr",
"per_gb_storage_hr"}, ...}]}]}}``. The v2 API authenticates with an API token made in the dashboard's
Developer Settings (dashboard.tensordock.com/api/docs, "Getting Started"), sent as ``Authorization:
Bearer <token>`` (the scheme as api-evangelist/tensordock's transcription of the v2 API states it; the
older v0 API took ``api_key``/``api_token`` form fields instead). ``price_per_hr`` is one GPU's $/h; vCPUs,
RAM and storage are priced on top (``pricing``), so a row says "GPU only".

Hosts on TensorDock's marketplace set their own prices: the rows are typed ``marketplace`` (the
cheapest location per GPU), and a card marks them "~".
"""

from __future__ import annotations

from typing import Any

from catalog.prices.sources.base import PriceFormatError, Rows, cheapest, items, need, offer
from core.models import CloudOffer

URL = "https://dashboard.tensordock.com/api/v2/locations"
KEY_ENV = "TENSORDOCK_API_KEY"

# v0Name -> catalog GPU: "h100-sxm5-80gb" and "geforcertx4090-pcie-24gb" as in the docs' example; the
# rest are TensorDock's v0 GPU names as its deploy API takes them (gpu_model)
GPUS = {
    "h100-sxm5-80gb": "h100-sxm",
    "geforcertx4090-pcie-24gb": "rtx-4090",
    "geforcertx3090-pcie-24gb": "rtx-3090",
    "geforcertx5090-pcie-32gb": "rtx-5090",
    "rtxa6000-pcie-48gb": "rtx-a6000",
    "l40s-pcie-48gb": "l40s",
    "l40-pcie-48gb": "l40",
    "a100-pcie-80gb": "a100-80gb-pcie",
    "a100-sxm4-80gb": "a100-80gb-sxm",
    "rtx6000ada-pcie-48gb": "rtx-6000-ada",
}


def parse(payload: Any, seen: str) -> Rows:
    """One GPU's price (GPU only) at the cheapest location, per GPU."""
    data = payload.get("data") if isinstance(payload, dict) else None
    rows = Rows()
    out: dict[str, CloudOffer] = {}
    for location in items(data, "locations"):
        need(location, "gpus")
        if not isinstance(location["gpus"], list):
            raise PriceFormatError("a location's 'gpus' is no list")
        where = ", ".join(str(location[k]) for k in ("city", "country") if location.get(k))
        for gpu_row in location["gpus"]:
            if not isinstance(gpu_row, dict):
                raise PriceFormatError("a GPU row is no object")
            need(gpu_row, "v0Name", "price_per_hr")
            gpu = GPUS.get(str(gpu_row["v0Name"]))
            if gpu is None:
                continue
            name = f"1x {gpu_row.get('displayName') or gpu_row['v0Name']} (GPU only; vCPU, RAM, disk extra)"
            price = rows.price(gpu_row["price_per_hr"], f"{gpu_row['v0Name']} in {where}", "price_per_hr")
            if price is not None:
                row = offer("TensorDock", name, gpu, 1, price, "marketplace", seen, URL, where, billing="per-second")
                cheapest(out, gpu, row)
    rows.offers = [out[k] for k in sorted(out)]
    return rows

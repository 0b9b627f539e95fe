"""Verda (formerly DataCrunch): instance types with on-demand and spot prices, behind an OAuth token.

The official SDK (DataCrunch-io/datacrunch-python, now ``verda`` on PyPI): client credentials from
``VERDA_CLIENT_ID`` and ``VERDA_CLIENT_SECRET``; ``POST https://api.datacrunch.io/v1/oauth2/token``
with ``{"grant_type": "client_credentials", "client_id", "client_secret"}`` answers
``{"access_token", "token_type": "Bearer", "expires_in", ...}``; ``GET /v1/instance-types`` with that
token answers a JSON list of ``{"id", "instance_type", "price_per_hour", "spot_price",
"description", "cpu", "gpu": {"description", "number_of_gpus"}, "memory", "gpu_memory", "storage"}``
(``datacrunch/instance_types/instance_types.py`` reads exactly these keys; prices come as decimal
strings, ``"3.95"``). SkyPilot's ``sky/catalog/data_fetchers/fetch_verda.py`` does the same two calls.
"""

from __future__ import annotations

import re
from typing import Any

from catalog.prices.sources.base import PriceFormatError, Request, Rows, need, offer

URL = "https://api.datacrunch.io/v1/instance-types"
KEY_ENV = "VERDA_CLIENT_ID"
SECRET_ENV = "VERDA_CLIENT_SECRET"
PROVIDER = "DataCrunch (Verda)"  # the snapshot's name for it, so live rows replace those

# gpu.description "<n>x <board>" -> catalog GPU ("1x H100 SXM5 80GB" as the API writes it)
GPUS = {
    "H100 SXM5 80GB": "h100-sxm",
    "H200 SXM5 141GB": "h200-sxm",
    "B200 SXM6 180GB": "b200",
    "A100 SXM4 80GB": "a100-80gb-sxm",
    "A100 SXM4 40GB": "a100-40gb",
    "RTX A6000 48GB": "rtx-a6000",
    "RTX 6000 Ada 48GB": "rtx-6000-ada",
    "L40S 48GB": "l40s",
    "Tesla V100 16GB": "v100-sxm2-16gb",
}


def login(client_id: str, secret: str) -> Request:
    body = {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}
    return Request("POST", "/v1/oauth2/token", json=body)


def parse(payload: Any, seen: str) -> Rows:
    """On-demand and spot price of every GPU instance type (the whole instance's $/h)."""
    if not isinstance(payload, list) or not all(isinstance(i, dict) for i in payload):
        raise PriceFormatError("the answer is no list of instance types")
    rows = Rows()
    for item in payload:
        need(item, "instance_type", "price_per_hour", "gpu")
        gpu_info = item["gpu"] if isinstance(item["gpu"], dict) else {}
        match = re.fullmatch(r"(\d+)x (.+)", str(gpu_info.get("description", "")).strip())
        gpu = GPUS.get(match.group(2)) if match else None
        if match is None or gpu is None:
            continue
        count, name = int(match.group(1)), str(item["instance_type"])
        for key, kind in (("price_per_hour", "on-demand"), ("spot_price", "spot")):
            if kind == "spot" and not item.get(key):
                continue  # no spot price: none offered
            price = rows.price(item[key], f"{name} {kind}", key)
            if price is not None:
                rows.offers.append(offer(PROVIDER, name, gpu, count, price, kind, seen, URL))
    return rows

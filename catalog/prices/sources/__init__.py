"""Providers that publish GPU prices machine-readably, and how to read each one's answer.

| provider         | module           | API                                                     | key (environment)                       |
|------------------|------------------|---------------------------------------------------------|-----------------------------------------|
| Azure            | ``azure``        | GET prices.azure.com/api/retail/prices (Retail Prices)  | none                                    |
| Vast.ai          | ``vast``         | GET console.vast.ai/api/v0/bundles/ (offer search)      | VAST_API_KEY                            |
| RunPod           | ``runpod``       | POST api.runpod.io/graphql (gpuTypes)                   | RUNPOD_API_KEY                          |
| Lambda           | ``lambdacloud``  | GET cloud.lambda.ai/api/v1/instance-types               | LAMBDA_API_KEY                          |
| DigitalOcean     | ``digitalocean`` | GET api.digitalocean.com/v2/sizes                       | DIGITALOCEAN_TOKEN                      |
| Shadeform        | ``shadeform``    | GET api.shadeform.ai/v1/instances/types                 | SHADEFORM_API_KEY (X-API-KEY header)    |
| Prime Intellect  | ``primeintellect``| GET api.primeintellect.ai/api/v1/availability/gpus     | PRIME_API_KEY                           |
| TensorDock       | ``tensordock``   | GET dashboard.tensordock.com/api/v2/locations           | TENSORDOCK_API_KEY                      |
| Verda (DataCrunch)| ``verda``       | POST /v1/oauth2/token, GET api.datacrunch.io/v1/instance-types | VERDA_CLIENT_ID, VERDA_CLIENT_SECRET |

Each module cites the documentation or official client that defines the fields it reads. A provider
whose key is not set is skipped (``fitbot health`` says so); keys are sent only as the provider's
documented header, never in a URL, never logged. Product names map to catalog GPU ids through each
module's table; a product not in it is skipped, never guessed.
"""

from __future__ import annotations

from catalog.prices.sources import (
    azure,
    digitalocean,
    lambdacloud,
    primeintellect,
    runpod,
    shadeform,
    tensordock,
    vast,
    verda,
)
from catalog.prices.sources.base import PriceAuthError, PriceFormatError, PriceSource, Request, Rows, bearer


def default_sources(endpoint: str | None = None) -> list[PriceSource]:
    """Every provider; ``endpoint`` (a test server) replaces every host, with the provider's name as prefix."""

    def base(name: str, real: str) -> str:
        return f"{endpoint.rstrip('/')}/{name}" if endpoint else real

    return [
        PriceSource(
            "azure",
            base("azure", "https://prices.azure.com"),
            Request("GET", "/api/retail/prices", {"$filter": azure.FILTER}),
            azure.parse,
            next_page=azure.next_page,
            pages_key="Items",
        ),
        PriceSource(
            "vast",
            base("vast", "https://console.vast.ai"),
            Request("GET", "/api/v0/bundles/", {"q": vast.QUERY}),
            vast.parse,
            key_env=vast.KEY_ENV,
        ),
        PriceSource(
            "runpod",
            base("runpod", "https://api.runpod.io"),
            Request("POST", "/graphql", json={"query": runpod.QUERY}),
            runpod.parse,
            key_env=runpod.KEY_ENV,
        ),
        PriceSource(
            "lambda",
            base("lambda", "https://cloud.lambda.ai"),
            Request("GET", "/api/v1/instance-types"),
            lambdacloud.parse,
            key_env=lambdacloud.KEY_ENV,
        ),
        PriceSource(
            "digitalocean",
            base("digitalocean", "https://api.digitalocean.com"),
            Request("GET", "/v2/sizes", {"per_page": "200"}),
            digitalocean.parse,
            key_env=digitalocean.KEY_ENV,
        ),
        PriceSource(
            "shadeform",
            base("shadeform", "https://api.shadeform.ai"),
            Request("GET", "/v1/instances/types", {"available": "true"}),
            shadeform.parse,
            key_env=shadeform.KEY_ENV,
            auth=lambda key: {"X-API-KEY": key},
        ),
        PriceSource(
            "primeintellect",
            base("primeintellect", "https://api.primeintellect.ai"),
            Request("GET", "/api/v1/availability/gpus", {"page": "1", "page_size": str(primeintellect.PAGE_SIZE)}),
            primeintellect.parse,
            key_env=primeintellect.KEY_ENV,
            next_page=primeintellect.next_page,
            pages_key="items",
        ),
        PriceSource(
            "tensordock",
            base("tensordock", "https://dashboard.tensordock.com"),
            Request("GET", "/api/v2/locations"),
            tensordock.parse,
            key_env=tensordock.KEY_ENV,
        ),
        PriceSource(
            "verda",
            base("verda", "https://api.datacrunch.io"),
            Request("GET", "/v1/instance-types"),
            verda.parse,
            key_env=verda.KEY_ENV,
            secret_env=verda.SECRET_ENV,
            login=verda.login,
        ),
    ]


__all__ = ["PriceAuthError", "PriceFormatError", "PriceSource", "Request", "Rows", "bearer", "default_sources"]

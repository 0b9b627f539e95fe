"""What every price source shares: the request it sends, its key, and how a row becomes a ``CloudOffer``.

A parser gets the decoded JSON and returns ``Rows``: the offers it read and the rows it dropped
because their price is no price (zero, missing, not a number, absurd). A dropped row costs that row
only; a shape the parser does not recognise (the list it reads is gone, a key every row must have
is missing) raises ``PriceFormatError`` and costs that provider (it keeps its last good prices).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.models import CloudOffer, Provenance

MAX_PRICE_USD_H = 10_000.0  # no GPU box rents for more an hour; above it the number is a unit error


class PriceFormatError(ValueError):
    """A provider answered with a shape its parser does not know."""


class PriceAuthError(PermissionError):
    """A provider refused the operator's key (HTTP 401 or 403); the key itself is never in the message."""


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # appended to the provider's base URL
    params: dict[str, str] = field(default_factory=dict)
    json: dict[str, Any] | None = None


@dataclass
class Rows:
    """A parser's answer: the offers it read, and why each dropped row was dropped."""

    offers: list[CloudOffer] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # "<row>: <why>", one per row whose price is no price

    def price(self, value: Any, row: str, what: str, scale: float = 1.0) -> float | None:
        """``value`` (times ``scale``) as a $/h price, or None with the row noted as dropped."""
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.dropped.append(f"{row}: {what} is not a number ({value!r})")
            return None
        price = float(value) * scale
        if not 0 < price < MAX_PRICE_USD_H:
            self.dropped.append(f"{row}: {what} is no price ({value!r})")
            return None
        return price


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@dataclass(frozen=True)
class PriceSource:
    name: str
    base_url: str
    request: Request
    parse: Callable[[Any, str], Rows]  # (decoded JSON, date seen) -> offers and dropped rows
    key_env: str | None = None  # the operator's API key variable; None: public
    # a paginated answer's next URL, from (the page, the URL it came from, pages read so far)
    next_page: Callable[[Any, str, int], str | None] = field(default=lambda payload, url, read: None)
    pages_key: str = ""  # the list that the pages of a paginated answer add up
    auth: Callable[[str], dict[str, str]] = field(default=bearer)  # the key as the provider's documented header
    secret_env: str | None = None  # a second credential (OAuth client secret) where the provider needs one
    login: Callable[[str, str], Request] | None = None  # (key, secret) -> the token request; None: key is the token

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + self.request.path

    def credentials(self, keys: dict[str, str]) -> tuple[str, str] | None:
        """(key, secret) from the operator's keys; None when one the provider needs is missing."""
        key = keys.get(self.key_env, "") if self.key_env else ""
        secret = keys.get(self.secret_env, "") if self.secret_env else ""
        if (self.key_env and not key) or (self.secret_env and not secret):
            return None
        return key, secret

    def needs(self) -> str:
        """The variables this source needs, for "set X" messages."""
        return " and ".join(v for v in (self.key_env, self.secret_env) if v)


def offer(
    provider: str,
    instance: str,
    gpu: str,
    count: int,
    price: float,
    kind: str,
    seen: str,
    url: str,
    region: str = "",
    billing: str = "hourly",
) -> CloudOffer:
    return CloudOffer(
        provider=provider,
        instance=instance,
        gpu_id=gpu,
        gpu_count=count,
        price_per_hour_usd=round(price, 4),
        billing=billing,
        pricing_type=kind,
        region=region,
        seen=seen,
        provenance=Provenance(source=f"{url} (live, {provider} API)", as_of=seen),
    )


def items(payload: Any, key: str) -> list[dict[str, Any]]:
    found = payload.get(key) if isinstance(payload, dict) else None
    if not isinstance(found, list) or not all(isinstance(i, dict) for i in found):
        raise PriceFormatError(f"no list under {key!r}")
    return found


def need(item: dict[str, Any], *keys: str) -> None:
    """A row without a key every row of this API has: the format changed."""
    missing = [k for k in keys if k not in item]
    if missing:
        raise PriceFormatError(f"a row has no {', '.join(repr(k) for k in missing)}")


def cheapest(out: dict[Any, CloudOffer], key: Any, row: CloudOffer) -> None:
    """Keeps the cheaper of ``row`` and the row already under ``key``."""
    if key not in out or row.price_per_hour_usd < out[key].price_per_hour_usd:
        out[key] = row


__all__ = [
    "MAX_PRICE_USD_H",
    "PriceAuthError",
    "PriceFormatError",
    "PriceSource",
    "Request",
    "Rows",
    "bearer",
    "cheapest",
    "items",
    "need",
    "offer",
]

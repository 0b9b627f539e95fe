"""Reading one provider's price answer, bounded: its size, its JSON, where its pages lead.

A price API is untrusted input. Each page is streamed and cut off past ``MAX_RESPONSE_BYTES``
(a declared ``Content-Length`` over it is refused before reading), so a 200 MB answer costs the
cap, not 200 MB; JSON too deep for the decoder is a format error; a next-page link is followed
only on the provider's own origin (scheme, host and port of its API). Each of these is a
``PriceFormatError``: that provider keeps its last good prices, the others are refreshed.

The operator's key goes only into the header the provider documents (``source.auth``), never into a
URL or a message: an HTTP 401 or 403 is a ``PriceAuthError`` naming the variable, not its value. A
provider with OAuth client credentials (``source.login``) is asked for a token first.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from catalog.prices.sources.base import PriceAuthError, PriceFormatError, PriceSource

MAX_RESPONSE_BYTES = 20 * 1000 * 1000  # the largest real answer (Vast.ai, 1,000 offers) is a few MB
MAX_PAGES = 40
CHUNK_BYTES = 64 * 1024


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port


async def read_json(response: Any, limit: int = MAX_RESPONSE_BYTES) -> Any:
    """The decoded body of an aiohttp response, read in chunks and refused past ``limit`` bytes."""
    declared = response.content_length
    if declared is not None and declared > limit:
        raise PriceFormatError(f"the answer is {declared} bytes, over the {limit} byte cap")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(CHUNK_BYTES):
        size += len(chunk)
        if size > limit:
            raise PriceFormatError(f"the answer is over the {limit} byte cap")
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks))
    except RecursionError:
        raise PriceFormatError("the answer is JSON nested too deep") from None
    except ValueError as exc:
        raise PriceFormatError("the answer is not JSON") from exc


async def fetch(session: Any, source: PriceSource, key: str | None, secret: str = "") -> Any:
    """The decoded JSON answer, all pages of it."""
    if source.login is not None and key:
        key = await _token(session, source, key, secret)
    headers = source.auth(key) if key else {}
    url: str | None = source.url
    home = origin(source.url)
    params: dict[str, str] | None = source.request.params or None
    pages: list[Any] = []
    while url and len(pages) < MAX_PAGES:
        if origin(url) != home:
            raise PriceFormatError(f"a next page on another origin ({urlsplit(url).hostname})")
        async with session.request(
            source.request.method, url, params=params, json=source.request.json, headers=headers
        ) as response:
            _raise_for_status(source, response)
            pages.append(await read_json(response))
            read_url = str(response.url)
        url, params = source.next_page(pages[-1], read_url, len(pages)), None
    if len(pages) == 1 or not source.pages_key:
        return pages[0]
    items: list[Any] = []
    for page in pages:
        found = page.get(source.pages_key) if isinstance(page, dict) else None
        items.extend(found if isinstance(found, list) else [])
    return {source.pages_key: items}


async def _token(session: Any, source: PriceSource, key: str, secret: str) -> str:
    """The access token of an OAuth client-credentials login (Verda)."""
    assert source.login is not None
    request = source.login(key, secret)
    url = source.base_url.rstrip("/") + request.path
    async with session.request(request.method, url, json=request.json) as response:
        _raise_for_status(source, response)
        answer = await read_json(response)
    token = answer.get("access_token") if isinstance(answer, dict) else None
    if not isinstance(token, str) or not token:
        raise PriceFormatError("the token answer has no 'access_token'")
    return token


def _raise_for_status(source: PriceSource, response: Any) -> None:
    import aiohttp

    if response.status in (401, 403):
        raise PriceAuthError(f"HTTP {response.status}: the key in {source.needs()} was refused")
    if response.status >= 400:
        raise aiohttp.ClientResponseError(response.request_info, (), status=response.status)


__all__ = ["MAX_PAGES", "MAX_RESPONSE_BYTES", "fetch", "origin", "read_json"]

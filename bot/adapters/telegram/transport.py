"""Telegram's HTTP transport: PTB's request interface on aiohttp, with retries budgeted by time.

Why aiohttp: PTB's default httpx stack costs about twice the CPU per update
(shared/research/bot-testing.md section 1.6); a small pool also avoids httpcore's
O(connections x queued) pool pass.

Retries: a send that Telegram refuses with 429 (flood control) or 5xx was not accepted, so
sending it again cannot duplicate it. Such a send is tried again until ``retry_budget_s`` has
passed, waiting what a 429 asks for (``parameters.retry_after``) or, after a 5xx, 0.5 s doubling
up to 8 s. A fixed count of tries lost cards: four 429s in a row, or about 1.5 s of 5xx, were the
end of them. Network errors (refused, reset, timed out) are raised as PTB's ``NetworkError`` /
``TimedOut``: the durable poller answers such an update again with back-off (``telegram_poller``),
without holding a worker meanwhile. getUpdates is not retried here either (the poller's back-off).

A 429 for a request that names a chat (``chat_id``) is passed on at once: it is that chat's flood
control, and the rate limiter (``telegram_flood``), which sees every send to the chat, holds that
chat's sends in order until it is over. Retried here, each send to the chat waited on its own, and
once this budget was spent the 429 reached PTB's limiter, which paused every chat.

No exception raised here carries a URL: Bot API URLs contain the bot token.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import aiohttp
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

log = logging.getLogger(__name__)

POOL_SIZE = 16
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
RETRY_BUDGET_S = 60.0  # a card is given up only after a minute of refusals
FIRST_BACKOFF_S, MAX_BACKOFF_S = 0.5, 8.0
MAX_RETRY_AFTER_S = 60.0  # longer waits than this are passed on as RetryAfter


def retry_after_of(payload: bytes) -> float | None:
    """``parameters.retry_after`` of a Bot API error body, or None."""
    try:
        body = json.loads(payload)
        value = body.get("parameters", {}).get("retry_after")
    except (ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, int | float) and value >= 0 else None


def _chat_flood(status: int, payload: bytes, request_data: RequestData | None) -> bool:
    """A 429 for one chat that PTB raises as ``RetryAfter`` (its retry_after is not 0): the rate limiter's
    to wait for (see the module docstring)."""
    if status != 429 or request_data is None or "chat_id" not in request_data.parameters:
        return False
    return bool(retry_after_of(payload))


class AiohttpRequest(BaseRequest):
    """PTB's request interface on an aiohttp session: about half the CPU per call of the httpx default."""

    def __init__(
        self,
        pool_size: int = POOL_SIZE,
        read_timeout: float = 5.0,
        connect_timeout: float = 5.0,
        write_timeout: float = 5.0,
        media_write_timeout: float = 20.0,
        retry_budget_s: float = RETRY_BUDGET_S,
    ) -> None:
        self._pool_size = pool_size
        self._timeouts = {"read": read_timeout, "connect": connect_timeout, "write": write_timeout}
        self._media_write_timeout = media_write_timeout
        self.retry_budget_s = retry_budget_s
        self.retries = 0  # how many sends were tried again (for benches and tests)
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._timeouts["read"]

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._pool_size, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(connector=connector, headers={"User-Agent": self.USER_AGENT})

    async def shutdown(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()

    def _timeout(self, value: Any, name: str) -> float | None:
        return self._timeouts[name] if value is BaseRequest.DEFAULT_NONE else value

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = BaseRequest.DEFAULT_NONE,
        write_timeout: Any = BaseRequest.DEFAULT_NONE,
        connect_timeout: Any = BaseRequest.DEFAULT_NONE,
        pool_timeout: Any = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        """One Bot API call; a 5xx or a chat-less 429 is tried again until the budget is spent (not getUpdates)."""
        deadline = time.monotonic() + self.retry_budget_s
        backoff = FIRST_BACKOFF_S
        api_method = url.rsplit("/", 1)[-1]
        while True:
            status, payload = await self._attempt(
                url, method, request_data, read_timeout, write_timeout, connect_timeout
            )
            if status not in RETRY_STATUSES or api_method == "getUpdates" or _chat_flood(status, payload, request_data):
                return status, payload
            wait = retry_after_of(payload) if status == 429 else None
            if wait is None:
                wait, backoff = backoff, min(backoff * 2, MAX_BACKOFF_S)
            else:
                wait += 0.1
            if wait > MAX_RETRY_AFTER_S or time.monotonic() + wait > deadline:
                log.warning(
                    "Telegram answered %s to %s; giving up after %.0f s", status, api_method, self.retry_budget_s
                )
                return status, payload
            self.retries += 1
            log.info("Telegram answered %s to %s; retrying in %.1f s", status, api_method, wait)
            await asyncio.sleep(wait)

    async def _attempt(
        self,
        url: str,
        method: str,
        request_data: RequestData | None,
        read_timeout: Any,
        write_timeout: Any,
        connect_timeout: Any,
    ) -> tuple[int, bytes]:
        if self._session is None or self._session.closed:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        body: Any = None  # rebuilt per attempt: an aiohttp FormData can be sent only once
        if request_data is not None and request_data.contains_files:
            body = aiohttp.FormData()
            for key, value in request_data.json_parameters.items():
                body.add_field(key, value)
            for key, (filename, content, mime) in request_data.multipart_data.items():
                body.add_field(key, content, filename=filename, content_type=mime)
        elif request_data is not None and request_data.parameters:
            body = request_data.json_parameters  # form-urlencoded, non-strings JSON-encoded (as httpx does)
        default_write = self._media_write_timeout if isinstance(body, aiohttp.FormData) else None
        write = default_write or self._timeout(write_timeout, "write") or 0
        read = self._timeout(read_timeout, "read")
        timeout = aiohttp.ClientTimeout(
            total=None,
            connect=self._timeout(connect_timeout, "connect"),
            sock_read=None if read is None else read + write,
        )
        try:
            async with self._session.request(method, url, data=body, timeout=timeout, max_redirects=3) as response:
                return response.status, await response.read()
        except TimeoutError:
            raise TimedOut("Timed out") from None
        except (aiohttp.ClientError, ValueError) as exc:  # the class only: aiohttp messages carry the URL
            raise NetworkError(f"aiohttp.{exc.__class__.__name__}") from None

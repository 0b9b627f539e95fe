"""Fake GPU price APIs on 127.0.0.1: the nine providers ``catalog/prices/sources/`` reads, one server.

``with FakePriceApis() as fake: default_sources(endpoint=fake.endpoint)`` serves each provider under
its name (``/azure/api/retail/prices``, ``/vast/api/v0/bundles/``, ``/runpod/graphql``,
``/lambda/api/v1/instance-types``, ``/digitalocean/v2/sizes``, ``/shadeform/v1/instances/types``,
``/primeintellect/api/v1/availability/gpus``, ``/tensordock/api/v2/locations``, ``/verda/v1/...``)
with the answers in ``price_responses/``. ``fake.broken[name] = "format"`` answers that provider in a
shape nobody documents, ``"down"`` with HTTP 503, ``"unauthorized"`` with 401 as a refused key would;
``fake.edit[name]`` (a function of the decoded answer) changes one answer, e.g. a row priced at $0.
The key-protected ones answer 401 without their documented header (``X-API-KEY`` for Shadeform, a
Bearer token for the others; Verda's only the token its ``/v1/oauth2/token`` handed out for the
client credentials in ``VERDA_CREDENTIALS``); ``fake.headers[name]`` keeps the last headers each got.
Hostile answers: ``"huge"`` streams ``huge_mb`` MiB of JSON whitespace (no Content-Length; what
was sent is counted in ``sent``), ``"deep"`` is JSON nested 100,000 deep, ``"hang"`` never
answers, and for Azure ``"offsite"`` links its next page to another host and ``"absurd"`` prices
the 8x H100 VM at $0.001/h.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

from aiohttp import web

RESPONSES = Path(__file__).with_name("price_responses")
KEYED = ("vast", "runpod", "lambda", "digitalocean", "primeintellect", "tensordock")
VERDA_CREDENTIALS = ("verda-client", "verda-secret")
VERDA_TOKEN = "verda-access-token"


class FakePriceApis:
    def __init__(self) -> None:
        self.broken: dict[str, str] = {}
        self.edit: dict[str, Callable[[Any], Any]] = {}
        self.headers: dict[str, dict[str, str]] = {}
        self.huge_mb = 200
        self.sent: dict[str, int] = {}  # bytes of a "huge" answer written before the client hung up
        self.requests: list[tuple[str, str, dict[str, str]]] = []  # (method, path, query)
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Self:
        started = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            loop.run_until_complete(self._serve())
            started.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-price-apis", daemon=True)
        self._thread.start()
        started.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        loop, thread, runner = self._loop, self._thread, self._runner
        if loop is None or thread is None or runner is None:
            return
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_get("/azure/api/retail/prices", self._azure)
        app.router.add_get("/vast/api/v0/bundles/", self._file("vast", "vast.json"))
        app.router.add_post("/runpod/graphql", self._file("runpod", "runpod.json"))
        app.router.add_get("/lambda/api/v1/instance-types", self._file("lambda", "lambda.json"))
        app.router.add_get("/digitalocean/v2/sizes", self._file("digitalocean", "digitalocean.json"))
        app.router.add_get("/shadeform/v1/instances/types", self._file("shadeform", "shadeform.json"))
        app.router.add_get(
            "/primeintellect/api/v1/availability/gpus", self._file("primeintellect", "primeintellect.json")
        )
        app.router.add_get("/tensordock/api/v2/locations", self._file("tensordock", "tensordock.json"))
        app.router.add_post("/verda/v1/oauth2/token", self._verda_token)
        app.router.add_get("/verda/v1/instance-types", self._file("verda", "verda.json"))
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def _answer(self, request: web.Request, name: str, body: Any) -> web.StreamResponse:
        self.requests.append((request.method, request.path, dict(request.query)))
        self.headers[name] = dict(request.headers)
        state = self.broken.get(name)
        if state == "unauthorized" or not self._authorized(name, request):
            return web.json_response({"error": "unauthorized"}, status=401)
        if name in self.edit:
            body = self.edit[name](body)
        if state == "huge":
            return await self._huge(request, name)
        if state == "deep":
            return web.Response(body=b"[" * 100_000 + b"]" * 100_000, content_type="application/json")
        if state == "hang":
            await asyncio.sleep(3600)
        if state == "down":
            return web.json_response({"error": "maintenance"}, status=503)
        if state == "format":
            return web.json_response({"result": {"rows": [["H100", "3.00"]]}, "version": 2})
        return web.json_response(body)

    @staticmethod
    def _authorized(name: str, request: web.Request) -> bool:
        bearer = request.headers.get("Authorization", "")
        if name == "shadeform":
            return bool(request.headers.get("X-API-KEY"))
        if name == "verda":
            return bearer == f"Bearer {VERDA_TOKEN}"
        return name not in KEYED or (bearer.startswith("Bearer ") and len(bearer) > len("Bearer "))

    async def _verda_token(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        given = (body.get("client_id"), body.get("client_secret")) if isinstance(body, dict) else None
        refused = self.broken.get("verda") == "unauthorized"
        if refused or body.get("grant_type") != "client_credentials" or given != VERDA_CREDENTIALS:
            return web.json_response({"code": "unauthorized_request", "message": "Invalid client"}, status=401)
        text = (RESPONSES / "verda_token.json").read_text(encoding="utf-8").replace("{token}", VERDA_TOKEN)
        return web.json_response(json.loads(text))

    async def _huge(self, request: web.Request, name: str) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        self.sent[name] = 0
        chunk = b" " * (1 << 20)
        try:
            await response.write(b'{"Items": [')
            for _ in range(self.huge_mb):
                await response.write(chunk)
                self.sent[name] += len(chunk)
            await response.write(b"]}")
            await response.write_eof()
        except (ConnectionError, RuntimeError):
            pass  # the client stopped reading
        return response

    def _file(self, name: str, file: str) -> Any:
        async def handler(request: web.Request) -> web.StreamResponse:
            return await self._answer(request, name, json.loads((RESPONSES / file).read_text(encoding="utf-8")))

        return handler

    async def _azure(self, request: web.Request) -> web.StreamResponse:
        page = "azure_page2.json" if "$skip" in request.query else "azure_page1.json"
        text = (RESPONSES / page).read_text(encoding="utf-8").replace("{endpoint}", self.endpoint)
        state = self.broken.get("azure")
        if state == "offsite":
            text = text.replace(self.endpoint, "http://prices.evil.example")
        if state == "absurd":
            text = text.replace('"retailPrice": 98.32, "unitPrice": 98.32', '"retailPrice": 0.001, "unitPrice": 0.001')
        return await self._answer(request, "azure", json.loads(text))

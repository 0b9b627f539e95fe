"""A strict fake of Discord's REST API (v10) and gateway, served by aiohttp on 127.0.0.1.

The real discord.py client reaches it through two class attributes, set by ``point()``:
``discord.http.Route.BASE`` (REST and the interaction/webhook adapter) and
``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`` (the non-sharded client never asks
``GET /gateway/bot``). Build the client with ``guild_ready_timeout=0.05`` or every start waits 2 s.

Fidelity notes (each one broke the real client in the research prototypes):

* JSON answers carry ``Content-Type: application/json`` exactly; with a charset discord.py hands
  the raw string to its models.
* ``POST /interactions/{id}/{token}/callback?with_response=1`` answers an interaction-callback
  object (``interaction`` + ``resource``), never an empty 204.
* INTERACTION_CREATE payloads carry ``attachment_size_limit``.
* 429 answers carry a ``Via`` header; without it discord.py assumes a Cloudflare ban and raises.

Validation follows Discord's documented limits, which discord.py does not check: message content
2000, embeds (title 256, description 4096, 25 fields, field name 256 / value 1024, footer 2048,
author 256, 6000 in total, 10 per message), components (5 rows, 5 buttons each, custom_id 100,
label 80), autocomplete (25 choices, name/value 100), unknown top-level fields, the 3-second
initial-response deadline (10062) and double acknowledgement (40060). Violations answer 400 with
code 50035 and a nested ``errors`` object, which discord.py surfaces as ``HTTPException``.

Tests and benches import everything from here; the parts live beside it, each layer building on the
one before: ``discord_checks`` (constants, limits), ``discord_state`` (what is recorded),
``discord_objects`` and ``discord_payloads`` (what is handed out and dispatched), ``discord_gateway``,
``discord_rest`` and ``discord_routes``; ``FakeDiscord`` adds its set-up, lifecycle and test controls.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import time
from collections.abc import Callable, Iterator
from typing import Any, Self

from aiohttp import web

from fitbot_fakes.discord_checks import (
    APP_ID,
    ATTACHMENT_SIZE_LIMIT,
    CHANNEL_ID,
    GUILD_ID,
    TOKEN,
    USER_ID,
    DiscordError,
    FormErrors,
    check_embeds,
    import_discord,
)
from fitbot_fakes.discord_routes import DiscordRoutes
from fitbot_fakes.discord_state import Failure, GatewayConn, GatewaySession, Interaction, Request


class FakeDiscord(DiscordRoutes):
    """Fake Discord REST + gateway; ``async with FakeDiscord() as dc`` then ``with dc.point(): ...``."""

    def __init__(
        self,
        token: str = TOKEN,
        guild_ids: tuple[int, ...] = (GUILD_ID,),
        shards: int = 1,
        compress: bool = True,
        interaction_timeout: float = 3.0,
        heartbeat_interval_ms: int = 41250,
    ):
        self.token = token
        self.guild_ids = tuple(guild_ids)
        self.shards = shards
        self.compress = compress
        self.interaction_timeout = interaction_timeout
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.bot_user = self.user(APP_ID, "fitbot", bot=True)
        self.member_user = self.user(USER_ID, "tess")
        self.requests: list[Request] = []
        self.gateway_frames: list[dict[str, Any]] = []  # frames received from the client
        self.gateway_connections: list[dict[str, Any]] = []  # query string and whether zlib was used
        self.commands: dict[int | None, list[dict[str, Any]]] = {}
        self.messages: dict[str, dict[str, Any]] = {}
        self.interactions: dict[str, Interaction] = {}
        self.channels: dict[str, dict[str, Any]] = {str(self.channel_id(g)): self.channel(g) for g in self.guild_ids}
        self.port = 0
        self._ids = itertools.count(1)
        self._sessions: dict[str, GatewaySession] = {}
        self._conns: set[GatewayConn] = set()
        self._failures: list[Failure] = []
        self._changed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        routes: list[tuple[set[str], str, Callable[..., Any], bool]] = [
            ({"GET"}, r"/users/@me", self._r_me, True),
            ({"POST"}, r"/users/@me/channels", self._r_dm, True),
            ({"GET"}, r"/oauth2/applications/@me", self._r_app, True),
            ({"GET"}, r"/gateway", self._r_gateway, False),
            ({"GET"}, r"/gateway/bot", self._r_gateway_bot, True),
            (
                {"GET", "PUT"},
                r"/applications/(?P<app>\d+)(?:/guilds/(?P<guild>\d+))?/commands",
                self._r_commands,
                True,
            ),
            ({"POST"}, r"/interactions/(?P<iid>\d+)/(?P<token>[^/]+)/callback", self._r_callback, False),
            ({"POST"}, r"/webhooks/(?P<app>\d+)/(?P<token>[^/]+)", self._r_followup, False),
            (
                {"GET", "PATCH", "DELETE"},
                r"/webhooks/(?P<app>\d+)/(?P<token>[^/]+)/messages/(?P<mid>@original|\d+)",
                self._r_webhook_message,
                False,
            ),
            ({"GET"}, r"/channels/(?P<cid>\d+)", self._r_channel, True),
            ({"POST"}, r"/channels/(?P<cid>\d+)/typing", self._r_typing, True),
            ({"POST", "GET"}, r"/channels/(?P<cid>\d+)/messages", self._r_channel_messages, True),
            (
                {"GET", "PATCH", "DELETE"},
                r"/channels/(?P<cid>\d+)/messages/(?P<mid>\d+)",
                self._r_channel_message,
                True,
            ),
        ]
        self._routes: list[tuple[set[str], re.Pattern[str], Callable[..., Any], bool]] = [
            (m, re.compile(p + "$"), h, a) for m, p, h, a in routes
        ]

    # ---- lifecycle

    async def start(self) -> Self:
        """Starts serving REST under /api/v10 and the gateway at / on a free port."""
        app = web.Application(client_max_size=4 * ATTACHMENT_SIZE_LIMIT)
        app.router.add_get("/", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def close(self) -> None:
        """Closes open gateway sockets and stops the server."""
        for conn in list(self._conns):
            with contextlib.suppress(Exception):
                await conn.ws.close(code=1001, message=b"fake shutting down")
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @contextlib.contextmanager
    def point(self, monkeypatch: Any = None) -> Iterator[FakeDiscord]:
        """Points discord.py at this fake; restores the two class attributes afterwards.

        With a pytest ``monkeypatch`` the restore happens at test teardown as well.
        """
        import yarl

        discord = import_discord()
        targets = [
            (discord.http.Route, "BASE", self.api_base),
            (discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(self.gateway_url)),
        ]
        saved = [(obj, name, getattr(obj, name)) for obj, name, _ in targets]
        for obj, name, value in targets:
            if monkeypatch is not None:
                monkeypatch.setattr(obj, name, value)
            else:
                setattr(obj, name, value)
        try:
            yield self
        finally:
            for obj, name, value in saved:
                setattr(obj, name, value)

    # ---- test controls

    def fail_next(
        self,
        route_prefix: str,
        status: int = 429,
        retry_after: float = 0.5,
        times: int = 1,
        is_global: bool = False,
    ) -> None:
        """Fails the next ``times`` requests whose path (after /api/v10) starts with ``route_prefix``.

        ``route_prefix`` may start with a method: ``"POST /interactions"``.
        """
        method, _, prefix = route_prefix.rpartition(" ")
        prefix = prefix if prefix.startswith("/") else "/" + prefix
        self._failures.append(Failure(method.upper() or None, prefix, status, retry_after, is_global, times))

    def thinking(self) -> list[Interaction]:
        """Interactions deferred with "thinking…" (type 5) that never got a followup or an edit."""
        return [i for i in self.interactions.values() if i.acked == 5 and not i.answered]

    def requests_to(self, method: str, path_contains: str) -> list[Request]:
        return [r for r in self.requests if r.method == method.upper() and path_contains in r.path]

    async def _wait(self, probe: Callable[[], list[Any]], count: int, timeout: float, what: str) -> Any:
        try:
            async with asyncio.timeout(timeout):
                while True:
                    found = probe()
                    if len(found) >= count:
                        return found[0] if count == 1 else found[:count]
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            seen = [f"{r.method} {r.path} -> {r.status}" for r in self.requests]
            raise AssertionError(f"{what} x{count} not seen within {timeout}s; requests: {seen}") from None

    async def wait_request(self, method: str, path_contains: str, count: int = 1, timeout: float = 5) -> Any:
        """Waits until ``count`` answered requests match; returns the Request, or a list if count > 1."""
        return await self._wait(
            lambda: [r for r in self.requests_to(method, path_contains) if r.status],
            count,
            timeout,
            f"{method} {path_contains}",
        )

    async def wait_gateway(self, op: int, count: int = 1, timeout: float = 5) -> Any:
        """Waits for ``count`` client frames with opcode ``op`` (2 IDENTIFY, 6 RESUME, ...)."""
        return await self._wait(
            lambda: [f for f in self.gateway_frames if f.get("op") == op], count, timeout, f"gateway op {op}"
        )

    async def dispatch(self, event: str, data: dict[str, Any], shard_id: int | None = None) -> None:
        """Sends a DISPATCH to the session of ``shard_id`` (derived from guild_id when omitted).

        While the socket is down the event is kept and replayed on RESUME.
        """
        session = self._session_for(data, shard_id)
        if event == "INTERACTION_CREATE":
            self.register_interaction(data)
        await self._send_dispatch(session, event, data)

    def register_interaction(self, payload: dict[str, Any]) -> Interaction:
        """Starts the 3-second clock for an interaction (``dispatch`` does this itself)."""
        interaction = Interaction(payload["id"], payload["token"], payload["type"], time.monotonic(), payload)
        self.interactions[payload["id"]] = interaction
        return interaction

    async def drop_connection(self, shard_id: int = 0, code: int = 4000) -> None:
        """Closes the gateway socket of a shard with a resumable code; the client should RESUME."""
        session = self._session_for({}, shard_id)
        conn, session.conn = session.conn, None
        if conn is not None:
            await conn.ws.close(code=code, message=b"dropped by test")


__all__ = [
    "APP_ID",
    "CHANNEL_ID",
    "GUILD_ID",
    "TOKEN",
    "USER_ID",
    "DiscordError",
    "FakeDiscord",
    "FormErrors",
    "Interaction",
    "Request",
    "check_embeds",
    "import_discord",
]

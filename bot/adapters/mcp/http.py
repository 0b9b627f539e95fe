"""The MCP server over streamable HTTP: the SDK's Starlette app behind a bearer token, served by uvicorn.

The SDK's app refuses bodies over ``max_body_bytes`` with 413 before parsing them; ``BearerGate`` refuses
every request without ``Authorization: Bearer <the token>`` with 401 before it reaches the app. The token
is compared in constant time and never logged (nor is any header: uvicorn's access log is off).
"""

from __future__ import annotations

import hmac
import logging

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)
PATH = "/mcp"


class BearerGate:
    """ASGI middleware: an HTTP request passes only with the bearer token; others get 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("the MCP HTTP server needs a bearer token")
        self.app, self.token = app, token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.allowed(Headers(scope=scope).get("authorization", "")):
            refusal = JSONResponse(
                {"error": "unauthorized", "error_description": "send the header Authorization: Bearer <token>"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="fitbot"'},
            )
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def allowed(self, header: str) -> bool:
        scheme, _, given = header.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.token)


# The token is what protects the server. The SDK's DNS-rebinding check (Host and Origin must be loopback names
# when it listens on loopback) guards servers without one, and would refuse a reverse proxy that passes on the
# public Host (Caddy does): a page in a browser can neither read the token nor send it across origins.
BY_TOKEN = TransportSecuritySettings(enable_dns_rebinding_protection=False)


def http_app(server: MCPServer, token: str, max_body_bytes: int) -> ASGIApp:
    """The SDK's streamable HTTP app, bodies limited, behind the token."""
    app = server.streamable_http_app(
        streamable_http_path=PATH, max_request_body_size=max_body_bytes, transport_security=BY_TOKEN
    )
    return BearerGate(app, token)


async def serve_http(
    server: MCPServer, token: str, host: str, port: int, max_body_bytes: int, trusted_proxies: str
) -> None:
    """Serve until SIGINT/SIGTERM (uvicorn's own handling); logs go through the root logger's redaction. A client
    is its address, or the X-Forwarded-For address a trusted reverse proxy (``trusted_proxies``) sends."""
    config = uvicorn.Config(
        http_app(server, token, max_body_bytes),
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        proxy_headers=True,
        forwarded_allow_ips=trusted_proxies,
        server_header=False,
    )
    log.info("MCP server on http://%s:%d%s", host, port, PATH)
    await uvicorn.Server(config).serve()

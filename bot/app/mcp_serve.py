"""``fitbot mcp``: the MCP server's process. The same service ``fitbot ask`` opens (catalog, user data, hub
cache and limits from the settings), over stdio for desktop clients or streamable HTTP (``--http``) for
remote ones; HTTP needs FITBOT_MCP_TOKEN and refuses to start without it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the one-shot commands import this module for its parser only: nothing heavy at import
    from bot.app.settings import Settings
    from bot.service import Service


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = sub.add_parser("mcp", help="serve the tools to MCP clients (Claude, LM Studio, Open WebUI); see README")
    mcp.add_argument("--http", action="store_true", help="streamable HTTP (needs FITBOT_MCP_TOKEN); default stdio")
    mcp.add_argument("--host", help="HTTP address (default FITBOT_MCP_HOST, 127.0.0.1)")
    mcp.add_argument("--port", type=int, help="HTTP port (default FITBOT_MCP_PORT, 8765)")


def main(args: argparse.Namespace, open_service: Callable[[], Awaitable[Service]]) -> int:
    import asyncio

    from bot.app.logs import setup_logging
    from bot.app.settings import Settings

    settings = Settings()
    token = settings.mcp_token()
    if args.http and token is None:
        print(
            "fitbot: FITBOT_MCP_TOKEN is not set: the HTTP server needs a bearer token (stdio does not)",
            file=sys.stderr,
        )
        return 2
    setup_logging(settings.fitbot_log_level, settings.secrets())  # stderr only: stdout is the stdio protocol
    try:
        asyncio.run(serve(args, settings, open_service))
    except KeyboardInterrupt:
        pass
    return 0


async def serve(args: argparse.Namespace, settings: Settings, open_service: Callable[[], Awaitable[Service]]) -> None:
    from bot.adapters.mcp.server import build_server
    from bot.listing import catalog_rows

    service = await open_service()
    service.warm_up()  # on the worker thread, while the client connects
    try:
        server = build_server(service, catalog_rows(service.catalog))
        if not args.http:
            await server.run_stdio_async()
            return
        from bot.adapters.mcp.http import serve_http

        host, port = args.host or settings.fitbot_mcp_host, args.port or settings.fitbot_mcp_port
        limit, proxies = settings.fitbot_mcp_max_body_bytes, settings.fitbot_mcp_trusted_proxies
        await serve_http(server, settings.mcp_token() or "", host, port, limit, proxies)
    finally:
        await service.close()

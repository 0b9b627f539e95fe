"""The MCP SDK's own client against a real ``fitbot mcp`` process, over stdio or streamable HTTP, for tests and
``bench/mcp_latency.py``. ``Remote`` runs the client session on an anyio event loop in a thread (a blocking
portal), so one server process serves a whole test module, and plain functions call its tools."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, ListToolsResult, ReadResourceResult

ROOT = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, "-m", "bot.app.cli", "mcp"]


def server_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The server's environment: offline, its own data directory, no tokens but the ones given."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("FITBOT_", "TELEGRAM_", "DISCORD_", "HF_"))}
    return keep | {"FITBOT_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "PRICE_REFRESH_HOURS": "0"} | extra


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Remote:
    """A connected client session, called from plain (synchronous) code."""

    def __init__(self, portal: BlockingPortal, session: ClientSession) -> None:
        self.portal, self.session = portal, session

    def tools(self) -> ListToolsResult:
        listed: ListToolsResult = self.portal.call(self.session.list_tools)
        return listed

    def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        result: CallToolResult = self.portal.call(self.session.call_tool, name, arguments)
        return result

    def read(self, uri: str) -> ReadResourceResult:
        contents: ReadResourceResult = self.portal.call(self.session.read_resource, uri)
        return contents

    def resources(self) -> Any:
        return self.portal.call(self.session.list_resources)


@asynccontextmanager
async def _stdio(env: dict[str, str], errlog: Any) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:], env=env, cwd=ROOT)
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def _http(url: str, token: str | None, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    headers = headers | ({"Authorization": f"Bearer {token}"} if token else {})
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@contextmanager
def stdio_remote(env: dict[str, str], errlog: Any = sys.stderr) -> Iterator[Remote]:
    """``fitbot mcp`` launched by the SDK's stdio client, connected and initialized."""
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(_stdio(env, errlog)) as session:
        yield Remote(portal, session)


@contextmanager
def http_remote(url: str, token: str | None, headers: dict[str, str] | None = None) -> Iterator[Remote]:
    """The SDK's streamable HTTP client on ``url`` with the bearer token (and ``headers``), connected."""
    connect = _http(url, token, headers or {})
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(connect) as session:
        yield Remote(portal, session)


@contextmanager
def http_server(
    env: dict[str, str], port: int, log: Path, timeout_s: float = 60.0
) -> Iterator[subprocess.Popen[bytes]]:
    """``fitbot mcp --http`` on 127.0.0.1:``port``, its stderr in ``log``; stopped with SIGTERM at the end."""
    with log.open("wb") as err:
        proc = subprocess.Popen([*SERVER, "--http", "--port", str(port)], cwd=ROOT, env=env, stderr=err)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"fitbot mcp --http did not start: {log.read_text(errors='replace')}") from None
                time.sleep(0.05)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

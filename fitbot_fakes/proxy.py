"""A loopback TCP proxy that can go down: a network partition for tests and benches.

``down()`` stops listening (new connections are refused) and resets every open connection, as a
dropped link or a restarting load balancer does; ``up()`` listens again on the same port.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Self


class Proxy:
    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self.target, self.host = target_port, host
        self.port = 0
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    @property
    def is_up(self) -> bool:
        return self._server is not None

    async def up(self) -> Self:
        self._server = await asyncio.start_server(self._serve, self.host, self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def down(self) -> None:
        if self._server is None:
            return
        server, self._server = self._server, None
        server.close()
        for writer in list(self._open):
            writer.transport.abort()  # a reset, not a clean close
        self._open.clear()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 2)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.target)
        except OSError:
            writer.transport.abort()
            return
        pair = {writer, up_writer}
        self._open |= pair
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        self._open -= pair


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()

"""The fake hub turned hostile, for deadline tests and benches: model info that drips, a search that hangs.

``HostileHub(drip={"owner/name"})`` answers those repos' model info one byte every ``drip_every_s``
seconds (headers at once, so only a deadline on the whole read ends it); ``search_hangs = True``
makes ``/api/models`` never answer. Everything else is ``FakeHub``. ``close()`` ends the drips.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterable

from aiohttp import web

from fitbot_fakes.hf_hub import FakeHub, FakeRepo


class HostileHub(FakeHub):
    def __init__(
        self,
        repos: list[FakeRepo] | None = None,
        *,
        drip: Iterable[str] = (),
        drip_every_s: float = 1.0,
    ) -> None:
        super().__init__(repos)
        self.drip = {d.lower() for d in drip}
        self.drip_every_s = drip_every_s
        self.search_hangs = False

    async def _quiet(self, seconds: float) -> bool:
        """Waits ``seconds``; True when the hub is closing meanwhile."""
        assert self._closing is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._closing.wait(), seconds)
        return self._closing.is_set()

    async def _model_info(self, request: web.Request) -> web.StreamResponse:
        repo = self._repo(request)
        if repo is None or repo.repo_id.lower() not in self.drip:
            return await super()._model_info(request)
        body = json.dumps(repo.info()).encode()
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        for i in range(len(body)):
            try:
                await response.write(body[i : i + 1])
            except (ConnectionError, RuntimeError):
                break  # the client gave up
            if await self._quiet(self.drip_every_s):
                break
        return response

    async def _search(self, request: web.Request) -> web.StreamResponse:
        if self.search_hangs:
            await self._quiet(3600)
        return await super()._search(request)

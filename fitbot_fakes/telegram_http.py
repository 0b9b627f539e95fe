"""The fake Bot API's HTTP side: form, JSON and multipart bodies decoded as PTB sends them; injected failures
and flood control."""

from __future__ import annotations

import asyncio
import json
import math
import time
from typing import Any

from aiohttp import BodyPartReader, web

from fitbot_fakes.telegram_checks import STRING_FIELDS, TOKEN_RE, ApiError
from fitbot_fakes.telegram_state import Call, Exchange, UploadedFile
from fitbot_fakes.telegram_store import TelegramStore


class TelegramHttp(TelegramStore):
    """Requests in, Bot API envelopes out."""

    # ---- internals: HTTP

    async def _decode(self, request: web.Request) -> dict[str, Any]:
        ctype = request.content_type
        if ctype == "application/json":
            body = await request.read()
            return json.loads(body) if body else {}
        params: dict[str, Any] = {}
        if ctype == "multipart/form-data":
            reader = await request.multipart()
            async for part in reader:
                if not isinstance(part, BodyPartReader) or part.name is None:
                    raise ValueError("a multipart part without a name")  # answered 400 like other bad bodies
                if part.filename is not None:
                    data = await part.read(decode=False)
                    params[part.name] = UploadedFile(part.filename, part.headers.get("Content-Type"), bytes(data))
                else:
                    params[part.name] = self._field(part.name, await part.text())
        elif ctype == "application/x-www-form-urlencoded":
            for key, value in (await request.post()).items():
                params[key] = self._field(key, str(value))
        for key, value in request.query.items():
            params.setdefault(key, self._field(key, value))
        # attach://name references point at another multipart part
        for key, value in list(params.items()):
            if isinstance(value, str) and value.startswith("attach://"):
                params[key] = params.pop(value[len("attach://") :], value)
        return params

    @staticmethod
    def _field(key: str, value: str) -> Any:
        if key in STRING_FIELDS:
            return value
        try:
            return json.loads(value)
        except ValueError:
            return value

    @staticmethod
    def _reply(status: int, payload: dict[str, Any]) -> web.Response:
        return web.Response(status=status, body=json.dumps(payload).encode(), content_type="application/json")

    async def _handle(self, request: web.Request) -> web.Response:
        token, method = request.match_info["token"], request.match_info["method"]
        if not TOKEN_RE.match(token):
            return self._reply(404, {"ok": False, "error_code": 404, "description": "Not Found"})
        if self.token is not None and token != self.token:
            return self._reply(401, {"ok": False, "error_code": 401, "description": "Unauthorized"})
        try:
            params = await self._decode(request)
        except ValueError:
            return self._reply(400, {"ok": False, "error_code": 400, "description": "Bad Request: invalid JSON"})
        handler = self._handlers.get(method.lower())
        name = method if handler is None else handler.__name__[3:]
        exchange = Exchange(name, params)
        self.calls.append(Call(name, params))
        self.exchanges.append(exchange)
        self._changed.set()
        try:
            if handler is None:
                raise ApiError(404, "Not Found")
            self._inject_failure(name)
            self._flood_control(params)
            result = handler(params)
            if asyncio.iscoroutine(result):
                result = await result
            exchange.status, exchange.response = 200, result
            return self._reply(200, {"ok": True, "result": result})
        except ApiError as err:
            body: dict[str, Any] = {"ok": False, "error_code": err.status, "description": err.description}
            if err.parameters:
                body["parameters"] = err.parameters
            exchange.status, exchange.response = err.status, body
            return self._reply(err.status, body)

    def _inject_failure(self, method: str) -> None:
        queue = self._failures.get(method.lower())
        if not queue:
            return
        failure = queue[0]
        failure.times -= 1
        if failure.times <= 0:
            queue.pop(0)
        if failure.status == 429:
            raise ApiError(
                429,
                failure.description or f"Too Many Requests: retry after {failure.retry_after}",
                {"retry_after": failure.retry_after},
            )
        default = {400: "Bad Request", 403: "Forbidden: bot was blocked by the user", 409: "Conflict"}
        raise ApiError(failure.status, failure.description or default.get(failure.status, "Internal Server Error"))

    def _flood_control(self, params: dict[str, Any]) -> None:
        """A call naming a chat under flood control (``flood_control``) is refused with 429."""
        flood = self._floods.get(str(params.get("chat_id")))
        if flood is None:
            return
        left = flood.until - time.monotonic()
        if left <= 0:
            return
        retry_after = flood.retry_after if flood.retry_after is not None else math.ceil(left)
        raise ApiError(429, f"Too Many Requests: retry after {retry_after}", {"retry_after": retry_after})

    async def _handle_file(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        for file_id, upload in self.files.items():
            if path == f"files/{file_id}":
                return web.Response(body=upload.data, content_type="application/octet-stream")
        return web.Response(status=404, text="Not Found")

"""The fake Discord REST plumbing: decoding JSON and multipart bodies, injected failures, routing, messages."""

from __future__ import annotations

import json
import math
import time
from typing import Any

from aiohttp import BodyPartReader, web

from fitbot_fakes.discord_checks import DiscordError, snowflake_time
from fitbot_fakes.discord_gateway import DiscordGateway
from fitbot_fakes.discord_state import Failure, Request


class DiscordRest(DiscordGateway):
    """Requests in, answers out, with the failures a test asked for."""

    # ---- REST plumbing

    @staticmethod
    def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> web.Response:
        if body is None:
            return web.Response(status=204, headers=headers)
        # Exactly "application/json": discord.py only decodes JSON for that literal header.
        return web.Response(
            status=status,
            body=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", **(headers or {})},
        )

    async def _decode(self, request: web.Request) -> tuple[Any, list[dict[str, Any]]]:
        if request.content_type == "multipart/form-data":
            body, files = None, []
            async for part in await request.multipart():
                if not isinstance(part, BodyPartReader):
                    raise ValueError("a nested multipart body")  # answered 400 like other bad bodies
                if part.name == "payload_json":
                    body = json.loads(await part.text())
                elif part.filename is not None:
                    data = bytes(await part.read(decode=False))
                    files.append(
                        {
                            "field": part.name,
                            "filename": part.filename,
                            "size": len(data),
                            "content_type": part.headers.get("Content-Type"),
                            "data": data,
                        }
                    )
            return body, files
        raw = await request.read()
        if not raw:
            return None, []
        return json.loads(raw), []

    def _take_failure(self, method: str, path: str) -> Failure | None:
        for failure in self._failures:
            if path.startswith(failure.prefix) and failure.method in (None, method):
                failure.times -= 1
                if failure.times <= 0:
                    self._failures.remove(failure)
                return failure
        return None

    def _failure_error(self, failure: Failure) -> DiscordError:
        if failure.status != 429:
            return DiscordError(failure.status, 0, f"{failure.status}: Injected failure")
        reset_after = f"{failure.retry_after:.3f}"
        headers = {
            "Retry-After": str(math.ceil(failure.retry_after)),
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": f"{time.time() + failure.retry_after:.3f}",
            "X-RateLimit-Reset-After": reset_after,
            "X-RateLimit-Bucket": "fakebucket",
            "X-RateLimit-Scope": "global" if failure.is_global else "user",
            "Via": "1.1 google",
        }
        if failure.is_global:
            headers["X-RateLimit-Global"] = "true"
        body: dict[str, Any] = {
            "message": "You are being rate limited.",
            "retry_after": failure.retry_after,
            "global": failure.is_global,
            "code": 0,
        }
        return DiscordError(429, 0, body["message"], headers=headers, body=body)

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["tail"]
        try:
            body, files = await self._decode(request)
        except ValueError:
            return self._json(400, {"message": "400: Bad Request", "code": 50109})
        record = Request(request.method, path, dict(request.query), body, files, dict(request.headers))
        self.requests.append(record)
        try:
            result = await self._route(request, path, body, files)
            record.status, record.response = (200 if result is not None else 204), result
            reply = self._json(200, result)
        except DiscordError as err:
            record.status, record.response = err.status, err.payload()
            reply = self._json(err.status, err.payload(), err.headers)
        self._changed.set()
        return reply

    async def _route(self, request: web.Request, path: str, body: Any, files: list[dict[str, Any]]) -> Any:
        for methods, pattern, handler, needs_auth in self._routes:
            match = pattern.match(path)
            if match is None:
                continue
            if request.method not in methods:
                raise DiscordError(405, 0, "405: Method Not Allowed")
            if needs_auth and request.headers.get("Authorization") != f"Bot {self.token}":
                raise DiscordError(401, 0, "401: Unauthorized")
            failure = self._take_failure(request.method, path)
            if failure is not None:
                raise self._failure_error(failure)
            return await handler(request=request, body=body, files=files, **match.groupdict())
        raise DiscordError(404, 0, "404: Not Found")

    def _edit(self, msg: dict[str, Any], body: dict[str, Any], files: list[dict[str, Any]]) -> dict[str, Any]:
        for key in ("content", "components", "flags"):
            if key in body:
                msg[key] = body[key] if body[key] is not None else ("" if key == "content" else [])
        if "embeds" in body:
            msg["embeds"] = [dict(e, type=e.get("type", "rich")) for e in body["embeds"] or []]
        if "attachments" in body or files:
            kept = {str(a.get("id")) for a in body.get("attachments") or []}
            msg["attachments"] = [a for a in msg["attachments"] if a["id"] in kept] + self._attachments(files)
        msg["flags"] = msg.get("flags", 0) & ~128
        msg["edited_timestamp"] = snowflake_time()
        return msg

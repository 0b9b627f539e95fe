"""The fake Discord REST routes: users, application, gateway, commands, interaction callbacks, webhooks, channels."""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from fitbot_fakes.discord_checks import (
    APP_ID,
    CALLBACK_TYPES,
    USER_ID,
    DiscordError,
    FormErrors,
    check_choices,
    check_commands,
    check_message,
)
from fitbot_fakes.discord_rest import DiscordRest
from fitbot_fakes.discord_state import Interaction


class DiscordRoutes(DiscordRest):
    """One handler per route (``FakeDiscord.__init__`` lists them)."""

    # ---- REST routes

    async def _r_me(self, **_: Any) -> dict[str, Any]:
        return self.bot_user

    async def _r_dm(self, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        recipient = str(body.get("recipient_id"))
        dm_id = str(int(recipient) + 7)
        user = self.member_user if recipient == str(USER_ID) else self.user(int(recipient), f"user{recipient}")
        self.channels[dm_id] = {
            "id": dm_id,
            "type": 1,
            "recipients": [user],
            "last_message_id": None,
            "flags": 0,
        }
        return self.channels[dm_id]

    async def _r_app(self, **_: Any) -> dict[str, Any]:
        return {
            "id": str(APP_ID),
            "name": "FitBot Test",
            "icon": None,
            "description": "",
            "summary": "",
            "type": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "verify_key": "0" * 64,
            "owner": self.member_user,
            "flags": 0,
            "team": None,
            "bot": self.bot_user,
            "redirect_uris": [],
            "interactions_endpoint_url": None,
            "tags": [],
        }

    async def _r_gateway(self, **_: Any) -> dict[str, Any]:
        return {"url": self.gateway_url}

    async def _r_gateway_bot(self, **_: Any) -> dict[str, Any]:
        return {
            "url": self.gateway_url,
            "shards": self.shards,
            "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1},
        }

    async def _r_commands(self, request: web.Request, body: Any, app: str, guild: str | None, **_: Any) -> Any:
        if int(app) != APP_ID:
            raise DiscordError(403, 50001, "Missing Access")
        scope = int(guild) if guild else None
        if scope is not None and scope not in self.guild_ids:
            raise DiscordError(403, 50001, "Missing Access")
        if request.method == "GET":
            return self.commands.get(scope, [])
        err = FormErrors()
        check_commands(err, body)
        err.check()
        previous = {c["name"]: c["id"] for c in self.commands.get(scope, [])}
        stored = []
        for cmd in body:
            echoed = dict(
                cmd,
                id=previous.get(cmd["name"]) or self.snowflake(),
                application_id=str(APP_ID),
                version=self.snowflake(),
            )
            if scope is not None:
                echoed["guild_id"] = str(scope)
            stored.append(echoed)
        self.commands[scope] = stored
        return stored

    async def _r_callback(
        self, request: web.Request, body: Any, files: list[dict[str, Any]], iid: str, token: str, **_: Any
    ) -> Any:
        interaction = self.interactions.get(iid)
        if interaction is None or interaction.token != token:
            raise DiscordError(404, 10062, "Unknown interaction")
        if interaction.acked is not None:
            raise DiscordError(400, 40060, "Interaction has already been acknowledged.")
        if time.monotonic() - interaction.dispatched_at > self.interaction_timeout:
            raise DiscordError(404, 10062, "Unknown interaction")
        err = FormErrors()
        if not isinstance(body, dict):
            raise DiscordError(
                400,
                50035,
                "Invalid Form Body",
                {"_errors": [{"code": "DICT_TYPE_CONVERT", "message": "Must be an object."}]},
            )
        err.unknown((), body, {"type", "data"})
        rtype = body.get("type")
        if rtype not in CALLBACK_TYPES.get(interaction.type, set()):
            err.add(("type",), "INTERACTION_RESPONSE_TYPE_INVALID", "Invalid interaction response type")
            err.check()
        data = body.get("data") or {}
        if rtype in (4, 7):
            check_message(err, data, "callback_message", len(files), ("data",))
        elif rtype == 5 or rtype == 6:
            err.unknown(("data",), data, {"flags"})
        elif rtype == 8:
            check_choices(err, data)
        elif rtype == 9:
            err.unknown(("data",), data, {"custom_id", "title", "components"})
            err.length(("data", "title"), data.get("title") or "", 45, 1)
            err.length(("data", "custom_id"), data.get("custom_id") or "", 100, 1)
        err.check()
        interaction.acked = rtype
        resource: dict[str, Any] = {"type": rtype}
        channel_id = interaction.payload.get("channel_id", "")
        if rtype in (4, 5):
            msg = self._message_payload(
                channel_id, data if rtype == 4 else {}, files, interaction, flags=128 if rtype == 5 else 0
            )
            self.messages[msg["id"]] = msg
            interaction.original_id = msg["id"]
            resource["message"] = msg
        elif rtype in (6, 7) and "message" in interaction.payload:
            original = interaction.payload["message"]
            stored = self.messages.setdefault(original["id"], original)
            interaction.original_id = stored["id"]
            if rtype == 7:
                resource["message"] = self._edit(stored, data, files)
        if request.query.get("with_response") not in ("1", "true", "True"):
            return None
        result = {
            "interaction": {
                "id": iid,
                "type": interaction.type,
                "response_message_loading": rtype == 5,
                "response_message_ephemeral": bool(data.get("flags", 0) & 64),
            },
            "resource": resource,
        }
        if interaction.original_id:
            result["interaction"]["response_message_id"] = interaction.original_id
        return result

    def _interaction_for(self, app: str, token: str) -> Interaction:
        for interaction in self.interactions.values():
            if interaction.token == token and int(app) == APP_ID and interaction.acked is not None:
                return interaction
        raise DiscordError(404, 10015, "Unknown Webhook")

    async def _r_followup(
        self, request: web.Request, body: Any, files: list[dict[str, Any]], app: str, token: str, **_: Any
    ) -> Any:
        interaction = self._interaction_for(app, token)
        body = body or {}
        err = FormErrors()
        check_message(err, body, "webhook_execute", len(files))
        err.check()
        msg = self._message_payload(interaction.payload.get("channel_id", ""), body, files, interaction)
        self.messages[msg["id"]] = msg
        interaction.answered = True
        return msg if request.query.get("wait") in ("1", "true", "True") else None

    async def _r_webhook_message(
        self, request: web.Request, body: Any, files: list[dict[str, Any]], app: str, token: str, mid: str, **_: Any
    ) -> Any:
        interaction = self._interaction_for(app, token)
        message_id = interaction.original_id if mid == "@original" else mid
        msg = self.messages.get(message_id or "")
        if msg is None:
            raise DiscordError(404, 10008, "Unknown Message")
        if request.method == "GET":
            return msg
        if request.method == "DELETE":
            del self.messages[msg["id"]]
            return None
        err = FormErrors()
        check_message(err, body or {}, "webhook_edit", len(files))
        err.check()
        interaction.answered = True
        return self._edit(msg, body or {}, files)

    def _channel_or_404(self, cid: str) -> dict[str, Any]:
        if cid not in self.channels:
            raise DiscordError(404, 10003, "Unknown Channel")
        return self.channels[cid]

    async def _r_channel(self, cid: str, **_: Any) -> dict[str, Any]:
        return self._channel_or_404(cid)

    async def _r_typing(self, cid: str, **_: Any) -> None:
        self._channel_or_404(cid)

    async def _r_channel_messages(
        self, request: web.Request, body: Any, files: list[dict[str, Any]], cid: str, **_: Any
    ) -> Any:
        self._channel_or_404(cid)
        if request.method == "GET":
            return [m for m in reversed(self.messages.values()) if m["channel_id"] == cid][
                : int(request.query.get("limit", 50))
            ]
        body = body or {}
        err = FormErrors()
        check_message(err, body, "channel_create", len(files))
        ref = body.get("message_reference")
        if ref and str(ref.get("message_id")) not in self.messages and ref.get("fail_if_not_exists", True):
            err.add(("message_reference",), "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message")
        err.check()
        msg = self._message_payload(cid, body, files)
        if ref:
            referenced = self.messages.get(str(ref.get("message_id")))
            if referenced is not None:
                msg["referenced_message"] = referenced
        self.messages[msg["id"]] = msg
        return msg

    async def _r_channel_message(
        self, request: web.Request, body: Any, files: list[dict[str, Any]], cid: str, mid: str, **_: Any
    ) -> Any:
        self._channel_or_404(cid)
        msg = self.messages.get(mid)
        if msg is None or msg["channel_id"] != cid:
            raise DiscordError(404, 10008, "Unknown Message")
        if request.method == "GET":
            return msg
        if request.method == "DELETE":
            del self.messages[mid]
            return None
        if msg["author"]["id"] != self.bot_user["id"]:
            raise DiscordError(403, 50005, "Cannot edit a message authored by another user")
        err = FormErrors()
        check_message(err, body or {}, "channel_edit", len(files))
        err.check()
        return self._edit(msg, body or {}, files)

"""Interaction and message payloads the tests dispatch: slash commands, autocomplete, buttons, mentions."""

from __future__ import annotations

import uuid
from typing import Any

from fitbot_fakes.discord_checks import (
    ALL_PERMISSIONS,
    APP_ID,
    ATTACHMENT_SIZE_LIMIT,
    GUILD_ID,
    USER_ID,
    snowflake_time,
)
from fitbot_fakes.discord_objects import DiscordObjects


class DiscordPayloads(DiscordObjects):
    """Builds the INTERACTION_CREATE and MESSAGE_CREATE payloads a test sends."""

    def _command_data(self, name: str, guild_id: int | None) -> dict[str, Any]:
        for scope in (guild_id, None):
            for cmd in self.commands.get(scope, []):
                if cmd["name"] == name:
                    data = {"id": cmd["id"], "name": name, "type": cmd.get("type", 1)}
                    if scope is not None:
                        data["guild_id"] = str(scope)
                    return data
        return {"id": self.snowflake(), "name": name, "type": 1}

    @staticmethod
    def _options(
        options: dict[str, Any] | list[dict[str, Any]] | None, focused: str | None = None
    ) -> list[dict[str, Any]]:
        if options is None:
            return []
        if isinstance(options, list):
            return options
        out = []
        for name, value in options.items():
            otype = (
                5 if isinstance(value, bool) else 4 if isinstance(value, int) else 10 if isinstance(value, float) else 3
            )
            opt: dict[str, Any] = {"name": name, "type": otype, "value": value}
            if name == focused:
                opt.update(type=3, value=str(value), focused=True)
            out.append(opt)
        return out

    def make_interaction(
        self,
        itype: int,
        data: dict[str, Any],
        *,
        guild_id: int | None = GUILD_ID,
        locale: str = "en-US",
        user_id: int = USER_ID,
        message: dict[str, Any] | None = None,
        permissions: str = ALL_PERMISSIONS,
    ) -> dict[str, Any]:
        """A complete INTERACTION_CREATE payload (guild with member, or DM with user when guild_id=None).

        ``permissions`` are the member's resolved permissions in the channel (default: all).
        """
        user = self.member_user if user_id == USER_ID else self.user(user_id, f"user{user_id}")
        payload: dict[str, Any] = {
            "id": self.snowflake(),
            "application_id": str(APP_ID),
            "type": itype,
            "data": data,
            "token": f"itok-{uuid.uuid4().hex}",
            "version": 1,
            "locale": locale,
            "app_permissions": ALL_PERMISSIONS,
            "entitlements": [],
            "entitlement_sku_ids": [],
            "attachment_size_limit": ATTACHMENT_SIZE_LIMIT,
        }
        if guild_id is not None:
            payload.update(
                guild_id=str(guild_id),
                channel_id=str(self.channel_id(guild_id)),
                channel=self.channel(guild_id),
                member={**self.member(user, permissions=True), "permissions": permissions},
                guild_locale="en-US",
                guild={"id": str(guild_id), "locale": "en-US", "features": []},
                authorizing_integration_owners={"0": str(guild_id)},
                context=0,
            )
        else:
            dm_id = str(int(user["id"]) + 7)
            payload.update(
                channel_id=dm_id,
                channel={"id": dm_id, "type": 1, "recipients": [user], "flags": 0},
                user=user,
                authorizing_integration_owners={"0": str(user["id"])},
                context=1,
            )
        if message is not None:
            payload["message"] = message
        return payload

    def make_slash(
        self, name: str, options: dict[str, Any] | list[dict[str, Any]] | None = None, **kw: Any
    ) -> dict[str, Any]:
        """INTERACTION_CREATE for a chat-input command; int values become type 4, str type 3."""
        data = self._command_data(name, kw.get("guild_id", GUILD_ID))
        data["options"] = self._options(options)
        data["resolved"] = {}
        return self.make_interaction(2, data, **kw)

    def make_autocomplete(self, name: str, options: dict[str, Any], focused: str, **kw: Any) -> dict[str, Any]:
        """INTERACTION_CREATE type 4; the ``focused`` option is a string with ``focused: true``."""
        data = self._command_data(name, kw.get("guild_id", GUILD_ID))
        data["options"] = self._options(options, focused)
        return self.make_interaction(4, data, **kw)

    def make_component(
        self,
        custom_id: str,
        message: dict[str, Any] | None = None,
        component_type: int = 2,
        values: list[str] | None = None,
        **kw: Any,
    ) -> dict[str, Any]:
        """INTERACTION_CREATE type 3 for a button (or a select with ``values``) on ``message``."""
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": component_type}
        if values is not None:
            data["values"] = values
        if message is None:
            message = self._message_payload(str(self.channel_id(kw.get("guild_id") or GUILD_ID)), {"content": "…"})
            self.messages[message["id"]] = message
        return self.make_interaction(3, data, message=message, **kw)

    def make_mention(self, text: str, guild_id: int = GUILD_ID, user_id: int = USER_ID) -> dict[str, Any]:
        """MESSAGE_CREATE from a member that mentions the bot: ``<@bot> text``."""
        author = self.member_user if user_id == USER_ID else self.user(user_id, f"user{user_id}")
        member = self.member(author)
        del member["user"]
        mention = dict(self.bot_user, member=self.member(self.bot_user))
        del mention["member"]["user"]
        msg: dict[str, Any] = {
            "id": self.snowflake(),
            "channel_id": str(self.channel_id(guild_id)),
            "guild_id": str(guild_id),
            "author": author,
            "member": member,
            "content": f"<@{APP_ID}> {text}",
            "timestamp": snowflake_time(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [mention],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "type": 0,
            "flags": 0,
            "components": [],
            "nonce": None,
        }
        self.messages[msg["id"]] = msg
        return msg

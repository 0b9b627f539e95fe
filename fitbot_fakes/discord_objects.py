"""Discord objects as the fake's REST and gateway hand them out: users, channels, members, guilds, ids."""

from __future__ import annotations

import time
from typing import Any

from fitbot_fakes.discord_checks import (
    ALL_PERMISSIONS,
    APP_ID,
    ATTACHMENT_SIZE_LIMIT,
    CHANNEL_ID,
    GUILD_ID,
    USER_ID,
    DiscordError,
    snowflake_time,
)
from fitbot_fakes.discord_state import DiscordState, Interaction


class DiscordObjects(DiscordState):
    """Ids and the objects a guild consists of."""

    # ---- ids and payload factories

    def snowflake(self) -> str:
        millis = int(time.time() * 1000) - 1420070400000
        return str((millis << 22) | (next(self._ids) & 0x3FFFFF))

    @staticmethod
    def user(user_id: int, name: str, bot: bool = False) -> dict[str, Any]:
        return {
            "id": str(user_id),
            "username": name,
            "discriminator": "0",
            "global_name": name.title(),
            "avatar": None,
            "bot": bot,
            "public_flags": 0,
            "flags": 0,
        }

    @staticmethod
    def channel_id(guild_id: int) -> int:
        return CHANNEL_ID if guild_id == GUILD_ID else guild_id + 100

    def channel(self, guild_id: int) -> dict[str, Any]:
        return {
            "id": str(self.channel_id(guild_id)),
            "type": 0,
            "guild_id": str(guild_id),
            "name": "general",
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "flags": 0,
        }

    def member(self, user: dict[str, Any], permissions: bool = False) -> dict[str, Any]:
        member = {
            "user": user,
            "roles": [],
            "joined_at": snowflake_time(),
            "deaf": False,
            "mute": False,
            "flags": 0,
            "nick": None,
            "pending": False,
            "avatar": None,
            "premium_since": None,
        }
        if permissions:
            member["permissions"] = ALL_PERMISSIONS
        return member

    def guild(self, guild_id: int) -> dict[str, Any]:
        """A full GUILD_CREATE payload: one text channel, @everyone, the bot and one member."""
        everyone = {
            "id": str(guild_id),
            "name": "@everyone",
            "color": 0,
            "colors": {"primary_color": 0},
            "hoist": False,
            "position": 0,
            "permissions": "1071698660929",
            "managed": False,
            "mentionable": False,
            "flags": 0,
            "icon": None,
            "unicode_emoji": None,
        }
        return {
            "id": str(guild_id),
            "name": "FitBot Test Guild",
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "owner_id": str(USER_ID),
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "roles": [everyone],
            "emojis": [],
            "stickers": [],
            "features": [],
            "mfa_level": 0,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "vanity_url_code": None,
            "description": None,
            "banner": None,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": "en-US",
            "public_updates_channel_id": None,
            "nsfw_level": 0,
            "premium_progress_bar_enabled": False,
            "joined_at": snowflake_time(),
            "large": False,
            "unavailable": False,
            "member_count": 2,
            "voice_states": [],
            "members": [self.member(self.bot_user), self.member(self.member_user)],
            "channels": [self.channel(guild_id)],
            "threads": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }

    def _attachments(self, files: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for f in files:
            if f["size"] > ATTACHMENT_SIZE_LIMIT:
                raise DiscordError(413, 40005, "Request entity too large")
            att_id = self.snowflake()
            url = f"http://127.0.0.1:{self.port}/attachments/{att_id}/{f['filename']}"
            out.append(
                {
                    "id": att_id,
                    "filename": f["filename"],
                    "size": f["size"],
                    "url": url,
                    "proxy_url": url,
                    "content_type": f["content_type"],
                }
            )
        return out

    def _message_payload(
        self,
        channel_id: str,
        body: dict[str, Any],
        files: list[dict[str, Any]] | None = None,
        interaction: Interaction | None = None,
        flags: int = 0,
    ) -> dict[str, Any]:
        channel = self.channels.get(channel_id, {})
        msg: dict[str, Any] = {
            "id": self.snowflake(),
            "channel_id": channel_id,
            "author": self.bot_user,
            "content": body.get("content") or "",
            "timestamp": snowflake_time(),
            "edited_timestamp": None,
            "tts": bool(body.get("tts")),
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": self._attachments(files or []),
            "embeds": [dict(e, type=e.get("type", "rich")) for e in body.get("embeds") or []],
            "pinned": False,
            "type": 0,
            "flags": body.get("flags", 0) | flags,
            "components": body.get("components") or [],
        }
        if "guild_id" in channel:
            msg["guild_id"] = channel["guild_id"]
        if body.get("message_reference"):
            msg["type"] = 19
            msg["message_reference"] = {k: str(v) for k, v in body["message_reference"].items() if v is not None}
        if interaction is not None:
            msg.update(webhook_id=str(APP_ID), application_id=str(APP_ID), type=20 if interaction.type == 2 else 0)
        return msg

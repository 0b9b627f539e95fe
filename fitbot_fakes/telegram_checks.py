"""The fake Bot API's constants, its error envelope and the limits it checks (see ``telegram_api``)."""

from __future__ import annotations

import re
from typing import Any

BOT_USERNAME = "fitbot_test_bot"
DEFAULT_TOKEN_ID = 123456
MAX_TEXT = 4096
MAX_CAPTION = 1024
MAX_CALLBACK_ANSWER = 200
MAX_INLINE_RESULTS = 50

# Parameters the Bot API types as String: sent raw by PTB, never JSON-decoded here.
STRING_FIELDS = frozenset(
    {
        "text",
        "caption",
        "parse_mode",
        "callback_query_id",
        "inline_query_id",
        "url",
        "secret_token",
        "next_offset",
        "switch_pm_text",
        "switch_pm_parameter",
        "action",
        "inline_message_id",
        "language_code",
        "business_connection_id",
        "message_effect_id",
        "ip_address",
        "photo",
        "document",
        "file_id",
        "title",
        "description",
        "short_description",
        "name",
        "emoji",
        "query",
    }
)
CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)
BUTTON_ACTIONS = frozenset(
    {
        "callback_data",
        "url",
        "switch_inline_query",
        "switch_inline_query_current_chat",
        "switch_inline_query_chosen_chat",
        "login_url",
        "web_app",
        "callback_game",
        "pay",
        "copy_text",
    }
)
INLINE_RESULT_TYPES = frozenset(
    {
        "article",
        "photo",
        "gif",
        "mpeg4_gif",
        "video",
        "audio",
        "voice",
        "document",
        "location",
        "venue",
        "contact",
        "game",
        "sticker",
    }
)
COMMAND_RE = re.compile(r"^[a-z0-9_]{1,32}$")
SECRET_RE = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
TOKEN_RE = re.compile(r"^\d+:[A-Za-z0-9_-]+$")


class EntityError(ValueError):
    """A text that Telegram would refuse with "can't parse entities"."""


class ApiError(Exception):
    """A Bot API error answer: HTTP status, description and optional ``parameters``."""

    def __init__(self, status: int, description: str, parameters: dict[str, Any] | None = None):
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters


def bad_request(description: str) -> ApiError:
    return ApiError(400, f"Bad Request: {description}")


def utf16_len(text: str) -> int:
    """Returns the length of ``text`` in UTF-16 code units, the unit of entity offsets."""
    return len(text.encode("utf-16-le")) // 2

"""The fake Discord's constants and its validation of what the client sends: Discord's documented limits
(see ``discord_api``), answered as discord.py expects (400, code 50035, a nested ``errors`` object)."""

from __future__ import annotations

import re
import warnings
from datetime import UTC, datetime
from typing import Any

APP_ID = 1100000000000000001
GUILD_ID = 1100000000000000100
CHANNEL_ID = 1100000000000000200
USER_ID = 1100000000000000300
TOKEN = "fake-token"
ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024
ALL_PERMISSIONS = str((1 << 50) - 1)

MESSAGE_KEYS = {
    "channel_create": {
        "content",
        "nonce",
        "tts",
        "embeds",
        "allowed_mentions",
        "message_reference",
        "components",
        "sticker_ids",
        "attachments",
        "flags",
        "enforce_nonce",
        "poll",
    },
    "channel_edit": {"content", "embeds", "flags", "allowed_mentions", "components", "attachments", "tts"},
    "webhook_execute": {
        "content",
        "username",
        "avatar_url",
        "tts",
        "embeds",
        "allowed_mentions",
        "components",
        "attachments",
        "flags",
        "thread_name",
        "applied_tags",
        "poll",
    },
    "webhook_edit": {"content", "embeds", "flags", "allowed_mentions", "components", "attachments", "poll", "tts"},
    "callback_message": {
        "tts",
        "content",
        "embeds",
        "allowed_mentions",
        "flags",
        "components",
        "attachments",
        "poll",
    },
}
EMBED_KEYS = {
    "title",
    "type",
    "description",
    "url",
    "timestamp",
    "color",
    "footer",
    "image",
    "thumbnail",
    "video",
    "provider",
    "author",
    "fields",
    "flags",
}
# Initial response types an interaction type accepts (PING, command, component, autocomplete, modal).
CALLBACK_TYPES = {1: {1}, 2: {4, 5, 9}, 3: {4, 5, 6, 7, 9}, 4: {8}, 5: {4, 5, 6, 7}}
COMMAND_NAME_RE = re.compile(r"^[-_\w]{1,32}$")


def import_discord() -> Any:
    """Imports discord.py, silencing only its audioop DeprecationWarning (Python 3.11/3.12).

    The warning fires at import time, where ``filterwarnings = error`` would turn it into a
    collection error; it concerns voice support, which FitBot does not use.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
        import discord
        import discord.gateway
        import discord.http
    return discord


def snowflake_time() -> str:
    return datetime.now(UTC).isoformat()


class DiscordError(Exception):
    """An error answer: HTTP status plus Discord's JSON error code and message."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        errors: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
    ):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.errors, self.headers, self.body = errors, headers or {}, body

    def payload(self) -> dict[str, Any]:
        if self.body is not None:
            return self.body
        body: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.errors:
            body["errors"] = self.errors
        return body


FormPath = tuple[str | int, ...]
"""Where an error sits in the nested ``errors`` object: field names and list indexes."""


class FormErrors:
    """Collects 50035 "Invalid Form Body" errors in Discord's nested ``errors`` shape."""

    def __init__(self) -> None:
        self.errors: dict[str, Any] = {}

    def add(self, path: FormPath, code: str, message: str) -> None:
        node = self.errors
        for part in path:
            node = node.setdefault(str(part), {})
        node.setdefault("_errors", []).append({"code": code, "message": message})

    def length(self, path: FormPath, value: Any, maximum: int, minimum: int = 0) -> None:
        if value is None:
            return
        size = len(value) if isinstance(value, (str, list)) else len(str(value))
        if size > maximum or size < minimum:
            if minimum:
                self.add(path, "BASE_TYPE_BAD_LENGTH", f"Must be between {minimum} and {maximum} in length.")
            else:
                self.add(path, "BASE_TYPE_MAX_LENGTH", f"Must be {maximum} or fewer in length.")

    def unknown(self, path: FormPath, body: dict[str, Any], allowed: set[str]) -> None:
        for key in set(body) - allowed:
            self.add(path + (key,), "UNKNOWN_FIELD", f"Unknown field {key!r}.")

    def check(self) -> None:
        if self.errors:
            raise DiscordError(400, 50035, "Invalid Form Body", self.errors)


# --------------------------------------------------------------------------- validators


def check_embeds(err: FormErrors, embeds: Any, path: FormPath = ("embeds",)) -> None:
    """Embed limits from the Discord docs (Message Resource, Embed Limits)."""
    if not isinstance(embeds, list):
        err.add(path, "LIST_TYPE_CONVERT", "Must be an array.")
        return
    err.length(path, embeds, 10)
    total = 0
    for i, embed in enumerate(embeds):
        p = path + (i,)
        if not isinstance(embed, dict):
            err.add(p, "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
            continue
        err.unknown(p, embed, EMBED_KEYS)
        err.length(p + ("title",), embed.get("title"), 256)
        err.length(p + ("description",), embed.get("description"), 4096)
        color = embed.get("color")
        if color is not None and not (isinstance(color, int) and 0 <= color <= 0xFFFFFF):
            err.add(p + ("color",), "NUMBER_TYPE_MAX", "int value should be <= 16777215 and >= 0.")
        total += len(embed.get("title") or "") + len(embed.get("description") or "")
        fields = embed.get("fields") or []
        err.length(p + ("fields",), fields, 25)
        for j, fld in enumerate(fields):
            err.length(p + ("fields", j, "name"), fld.get("name") or "", 256, 1)
            err.length(p + ("fields", j, "value"), fld.get("value") or "", 1024, 1)
            total += len(fld.get("name") or "") + len(fld.get("value") or "")
        footer = embed.get("footer") or {}
        err.length(p + ("footer", "text"), footer.get("text"), 2048)
        author = embed.get("author") or {}
        err.length(p + ("author", "name"), author.get("name"), 256)
        total += len(footer.get("text") or "") + len(author.get("name") or "")
        for key in ("url",):
            if embed.get(key) and not re.match(r"^https?://\S+$", embed[key]):
                err.add(p + (key,), "URL_TYPE_INVALID_URL", "Not a well formed URL.")
    if total > 6000:
        err.add(path, "MAX_EMBED_SIZE_EXCEEDED", "Embed size exceeds maximum size of 6000")


def check_components(err: FormErrors, rows: Any, path: FormPath = ("components",)) -> None:
    """Action rows (v1 components): 5 rows; 5 buttons or 1 select per row."""
    if not isinstance(rows, list):
        err.add(path, "LIST_TYPE_CONVERT", "Must be an array.")
        return
    err.length(path, rows, 5)
    custom_ids: set[str] = set()
    for i, row in enumerate(rows):
        if row.get("type") != 1:
            err.add(path + (i, "type"), "UNION_TYPE_CHOICES", 'Value of field "type" must be one of (1,).')
            continue
        children = row.get("components") or []
        err.length(path + (i, "components"), children, 5, 1)
        selects = [c for c in children if c.get("type") in (3, 5, 6, 7, 8)]
        if selects and len(children) > 1:
            err.add(
                path + (i, "components"),
                "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                "The specified component exceeds the maximum width",
            )
        for j, comp in enumerate(children):
            p = path + (i, "components", j)
            err.length(p + ("label",), comp.get("label"), 80)
            custom_id = comp.get("custom_id")
            if comp.get("type") == 2 and comp.get("style") in (5, 6):
                if custom_id is not None or (comp.get("style") == 5 and not comp.get("url")):
                    err.add(p, "BUTTON_COMPONENT_INVALID_URL", "Link buttons need a url and no custom_id.")
                continue
            if custom_id is None:
                err.add(p + ("custom_id",), "BASE_TYPE_REQUIRED", "This field is required")
                continue
            err.length(p + ("custom_id",), custom_id, 100, 1)
            if custom_id in custom_ids:
                err.add(
                    p + ("custom_id",),
                    "COMPONENT_CUSTOM_ID_DUPLICATED",
                    "Component custom id cannot be duplicated",
                )
            custom_ids.add(custom_id)
            if comp.get("type") in (3, 5, 6, 7, 8):
                err.length(p + ("options",), comp.get("options"), 25)
                err.length(p + ("placeholder",), comp.get("placeholder"), 150)


def check_message(err: FormErrors, body: dict[str, Any], kind: str, files: int = 0, path: FormPath = ()) -> None:
    """Validates a message body (content, embeds, components, allowed_mentions, emptiness)."""
    err.unknown(path, body, MESSAGE_KEYS[kind])
    content = body.get("content")
    if content is not None and not isinstance(content, str):
        err.add(path + ("content",), "BASE_TYPE_STRING", "Must be a string.")
    err.length(path + ("content",), content, 2000)
    if body.get("embeds") is not None:
        check_embeds(err, body["embeds"], path + ("embeds",))
    if body.get("components") is not None and not body.get("flags", 0) & (1 << 15):
        check_components(err, body["components"], path + ("components",))
    mentions = body.get("allowed_mentions")
    if mentions is not None:
        err.unknown(path + ("allowed_mentions",), mentions, {"parse", "roles", "users", "replied_user"})
        parse = mentions.get("parse", [])
        if set(parse) - {"roles", "users", "everyone"}:
            err.add(
                path + ("allowed_mentions", "parse"),
                "ENUM_TYPE_COERCE",
                "Value must be one of roles, users, everyone.",
            )
        for key in ("users", "roles"):
            if key in parse and mentions.get(key):
                err.add(
                    path + ("allowed_mentions",),
                    "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
                    f'parse:["{key}"] and {key}: [ids...] are mutually exclusive.',
                )
    has_body = any(body.get(k) for k in ("content", "embeds", "components", "sticker_ids", "poll"))
    if kind in ("channel_create", "webhook_execute", "callback_message") and not has_body and not files:
        raise DiscordError(400, 50006, "Cannot send an empty message")


def check_choices(err: FormErrors, data: dict[str, Any]) -> None:
    err.unknown(("data",), data, {"choices"})
    choices = data.get("choices")
    if not isinstance(choices, list):
        err.add(("data", "choices"), "BASE_TYPE_REQUIRED", "This field is required")
        return
    err.length(("data", "choices"), choices, 25)
    for i, choice in enumerate(choices):
        err.length(("data", "choices", i, "name"), choice.get("name") or "", 100, 1)
        if isinstance(choice.get("value"), str):
            err.length(("data", "choices", i, "value"), choice["value"], 100)


def check_commands(err: FormErrors, commands: Any) -> None:
    """Application command registration limits."""
    if not isinstance(commands, list):
        err.add((), "LIST_TYPE_CONVERT", "Must be an array.")
        return
    names: set[tuple[int, str]] = set()
    for i, cmd in enumerate(commands):
        ctype = cmd.get("type", 1)
        name = cmd.get("name") or ""
        if not COMMAND_NAME_RE.match(name) or (ctype == 1 and name != name.lower()):
            err.add((i, "name"), "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
        if (ctype, name) in names:
            err.add((i, "name"), "APPLICATION_COMMANDS_DUPLICATE_NAME", "Application command names must be unique")
        names.add((ctype, name))
        if ctype == 1:
            err.length((i, "description"), cmd.get("description") or "", 100, 1)
        options = cmd.get("options") or []
        err.length((i, "options"), options, 25)
        seen_optional = False
        for j, opt in enumerate(options):
            p = (i, "options", j)
            if not COMMAND_NAME_RE.match(opt.get("name") or "") or opt["name"] != opt["name"].lower():
                err.add(p + ("name",), "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
            err.length(p + ("description",), opt.get("description") or "", 100, 1)
            if opt.get("required") and seen_optional:
                err.add(
                    p + ("required",),
                    "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
                    "Required options must be placed before non-required options",
                )
            seen_optional = seen_optional or not opt.get("required")
            err.length(p + ("choices",), opt.get("choices"), 25)
            if opt.get("choices") and opt.get("autocomplete"):
                err.add(
                    p + ("autocomplete",),
                    "APPLICATION_COMMAND_OPTION_CHOICES_AUTOCOMPLETE",
                    "Autocomplete cannot be set with choices",
                )

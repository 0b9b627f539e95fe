"""Telegram's text formatting as the Bot API reads it: the HTML subset and MarkdownV2 into text and entities
(offsets in UTF-16 code units), with the errors Telegram gives for malformed markup."""

from __future__ import annotations

import re
from html import unescape as _html_unescape
from typing import Any

from fitbot_fakes.telegram_checks import EntityError, bad_request, utf16_len

# --------------------------------------------------------------------------- text parsing

_HTML_ENTITY_TYPES = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "span": "spoiler",
    "tg-spoiler": "spoiler",
    "a": "text_link",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
}
_TAG_RE = re.compile(
    r"<(/?)([A-Za-z][A-Za-z0-9-]*)"
    r"((?:\s+[A-Za-z][A-Za-z0-9_-]*(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>\"']+))?)*)\s*>"
)
_ATTR_RE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)(?:\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>\"']+))?")
_ENTITY_RE = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z]+);")
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}


def _byte_offset(src: str, index: int) -> int:
    return len(src[:index].encode("utf-8"))


def _decode_entity(src: str, i: int) -> tuple[str, int]:
    m = _ENTITY_RE.match(src, i)
    if m is None:
        raise EntityError(f"Can't find end of the entity starting at byte offset {_byte_offset(src, i)}")
    name = m.group(1)
    if name.startswith("#"):
        code = int("0" + name[1:], 0) if name[1:2] in ("x", "X") else int(name[1:])
        if not 0 < code <= 0x10FFFF:
            raise EntityError(f"Invalid character code in entity at byte offset {_byte_offset(src, i)}")
        return chr(code), m.end()
    if name.lower() not in _NAMED_ENTITIES:
        raise EntityError(f'Unsupported HTML entity "&{name};" at byte offset {_byte_offset(src, i)}')
    return _NAMED_ENTITIES[name.lower()], m.end()


_OpenTag = tuple[str, dict[str, Any] | None, int]
"""A tag still open while parsing HTML: (tag name, its entity or None, UTF-16 start offset)."""


def parse_html(src: str) -> tuple[str, list[dict[str, Any]]]:
    """Parses Telegram's HTML subset into (plain text, entities), raising EntityError like the API."""
    out: list[str] = []
    pos = 0  # UTF-16 offset in the plain text
    stack: list[_OpenTag] = []
    entities: list[dict[str, Any]] = []
    i = 0
    while i < len(src):
        ch = src[i]
        if ch == "&":
            text, i = _decode_entity(src, i)
        elif ch == "<":
            m = _TAG_RE.match(src, i)
            if m is None:
                raise EntityError(f'Unsupported start tag "" at byte offset {_byte_offset(src, i)}')
            closing, name, attrs = m.group(1) == "/", m.group(2).lower(), m.group(3)
            if closing:
                if not stack:
                    raise EntityError(f"Unexpected end tag at byte offset {_byte_offset(src, i)}")
                if stack[-1][0] != name:
                    raise EntityError(
                        f"Unmatched end tag at byte offset {_byte_offset(src, i)}, "
                        f'expected "</{stack[-1][0]}>", found "</{name}>"'
                    )
                _, entity, start = stack.pop()
                if entity is not None and pos > start:
                    entity.update(offset=start, length=pos - start)
                    entities.append(entity)
            else:
                stack.append((name, _start_entity(src, i, name, attrs, stack, entities), pos))
            i = m.end()
            continue
        else:
            text, i = ch, i + 1
        out.append(text)
        pos += utf16_len(text)
    if stack:
        raise EntityError(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _start_entity(
    src: str, i: int, name: str, raw_attrs: str, stack: list[_OpenTag], entities: list[dict[str, Any]]
) -> dict[str, Any] | None:
    if name not in _HTML_ENTITY_TYPES:
        raise EntityError(f'Unsupported start tag "{name}" at byte offset {_byte_offset(src, i)}')
    attrs = {k.lower(): _html_unescape((v or "").strip("\"'")) for k, v in _ATTR_RE.findall(raw_attrs)}
    entity: dict[str, Any] = {"type": _HTML_ENTITY_TYPES[name]}
    if name == "span" and attrs.get("class") != "tg-spoiler":
        raise EntityError('Tag "span" must have class "tg-spoiler"')
    if name == "a":
        href = attrs.get("href", "")
        if not href:
            return None
        if not re.match(r"^(https?|tg|mailto)://|^mailto:", href):
            raise EntityError(f'Wrong URL "{href}" in an "a" tag')
        if any(s[0] == "a" for s in stack):
            raise EntityError("Nested text links are not allowed")
        entity["url"] = href
    if name == "tg-emoji":
        if not attrs.get("emoji-id", "").isdigit():
            raise EntityError('Tag "tg-emoji" must have attribute "emoji-id"')
        entity["custom_emoji_id"] = attrs["emoji-id"]
    if name == "blockquote" and "expandable" in attrs:
        entity["type"] = "expandable_blockquote"
    if name == "code" and stack and stack[-1][0] == "pre":
        language = attrs.get("class", "")
        if language.startswith("language-") and stack[-1][1] is not None:
            stack[-1][1]["language"] = language[len("language-") :]
            return None
    return entity


_MDV2_MARKERS = {"||": "Spoiler", "__": "Underline", "*": "Bold", "_": "Italic", "~": "Strikethrough"}
_MDV2_RESERVED = set("_*[]()~`>#+-=|{}.!")


def parse_markdown_v2(src: str) -> tuple[str, list[dict[str, Any]]]:
    """Checks MarkdownV2 well-formedness (escapes and balance) and returns the plain text."""
    out: list[str] = []
    open_markers: list[tuple[str, int]] = []
    i = 0
    line_start = True
    while i < len(src):
        ch = src[i]
        at_line_start, line_start = line_start, ch == "\n"
        if ch == "\\" and i + 1 < len(src) and 0 < ord(src[i + 1]) < 127:
            out.append(src[i + 1])
            i += 2
            continue
        fence = "```" if src.startswith("```", i) else "`" if ch == "`" else None
        if fence:
            end = src.find(fence, i + len(fence))
            if end < 0:
                kind = "Pre" if fence == "```" else "Code"
                raise EntityError(f"Can't find end of {kind} entity at byte offset {_byte_offset(src, i)}")
            out.append(src[i + len(fence) : end].replace("\\`", "`").replace("\\\\", "\\"))
            i = end + len(fence)
            continue
        marker = next((m for m in _MDV2_MARKERS if src.startswith(m, i)), None)
        if marker:
            names = [m for m, _ in open_markers]
            if marker in names:
                del open_markers[names.index(marker)]
            else:
                open_markers.append((marker, i))
            i += len(marker)
            continue
        if ch == "[":
            open_markers.append(("[", i))
            i += 1
            continue
        if ch == "]" and open_markers and open_markers[-1][0] == "[" and src.startswith("(", i + 1):
            end = src.find(")", i + 2)
            while end > 0 and src[end - 1] == "\\":
                end = src.find(")", end + 1)
            if end < 0:
                raise EntityError(f"Can't find end of a URL at byte offset {_byte_offset(src, i)}")
            open_markers.pop()
            i = end + 1
            continue
        if ch == ">" and at_line_start:
            i += 1
            continue
        if ch in _MDV2_RESERVED:
            raise EntityError(f"Character '{ch}' is reserved and must be escaped with the preceding '\\'")
        out.append(ch)
        i += 1
    if open_markers:
        marker, at = open_markers[-1]
        kind = _MDV2_MARKERS.get(marker, "TextUrl")
        raise EntityError(f"Can't find end of {kind} entity at byte offset {_byte_offset(src, at)}")
    return "".join(out), []


def parse_text(text: str, parse_mode: str | None, entities: Any = None) -> tuple[str, list[dict[str, Any]]]:
    """Applies ``parse_mode`` (or explicit ``entities``) the way the Bot API does."""
    if entities:
        if not isinstance(entities, list):
            raise bad_request("can't parse entities JSON object")
        size = utf16_len(text)
        for e in entities:
            if not isinstance(e, dict) or "type" not in e or e.get("offset", -1) < 0 or e.get("length", 0) < 1:
                raise bad_request("can't parse entities: entity is invalid")
            if e["offset"] + e["length"] > size:
                raise bad_request("can't parse entities: entity is beyond the end of the text")
        return text, list(entities)
    mode = (parse_mode or "").lower()
    try:
        if mode == "html":
            return parse_html(text)
        if mode == "markdownv2":
            return parse_markdown_v2(text)
    except EntityError as exc:
        raise bad_request(f"can't parse entities: {exc}") from None
    if mode in ("", "markdown"):
        return text, []
    raise bad_request("unsupported parse_mode")

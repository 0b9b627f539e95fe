"""Reply -> one Discord message: embeds, buttons and the chart attachment's name.

Sections become fields (inline when short), then launch commands as ```sh fields, then the table as
code-block fields split by rows (header repeated). Discord rejects a whole message when any embed limit
is broken (400, code 50035), and discord.py checks none of them, so every string is cut to its limit
here and fields stop, with a "…" note, before the 6000-character message total.

All text is markdown-escaped and mentions are neutralised by a zero-width space after "@"
(``allowed_mentions`` on the client stops the ping; this stops the display). ``discord.utils`` is not
imported: importing discord costs about a second.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot.render.text import (
    MAX_CODE_LINE,
    MAX_ECHO,
    MAX_NOTE,
    MAX_SUMMARY,
    MAX_TITLE,
    block,
    chrome,
    chunk,
    clean,
    one_line,
    rows_of,
    suggestions_text,
    table_lines,
)
from bot.reply import Reply

MAX_TITLE_LEN = 256
MAX_DESCRIPTION = 4096
MAX_FIELDS = 25  # per embed
MAX_FIELD_NAME = 256
MAX_FIELD_VALUE = 1024
MAX_FOOTER = 2048
MAX_TOTAL = 6000  # title + description + field names and values + footer, over all embeds of a message
MAX_EMBEDS = 10
MAX_CONTENT = 2000
MAX_BUTTONS = 25  # 5 action rows of 5
MAX_BUTTON_LABEL = 80
CHART_FILENAME = "chart.png"
INLINE_MAX_VALUE = 120  # a section this short, with short lines, goes side by side
INLINE_MAX_LINE = 40
NOTE_RESERVE = 60  # room kept for the "… shortened" field
DESCRIPTION_SUMMARY = 2500
BLANK = "\u200b"  # Discord refuses empty field names and values

_MARKDOWN = re.compile(r"([\\*_~`|>#\[\]])")
_MENTION = re.compile(r"(<@|@(?=everyone|here))", re.IGNORECASE)


@dataclass(frozen=True)
class DiscordMessage:
    """What the adapter sends: embed dicts, optional content, buttons as (label, action index)."""

    embeds: list[dict[str, Any]]
    content: str | None = None
    buttons: tuple[tuple[str, int], ...] = ()
    image_name: str | None = None  # attach the chart PNG under this name


def escape_markdown(text: str) -> str:
    """Backslash before each of \\ * _ ~ ` | > # [ ] so Discord shows them literally."""
    return _MARKDOWN.sub(r"\\\1", text)


def neutralise_mentions(text: str) -> str:
    """Zero-width space after the "@" of @everyone, @here and <@…>, so none renders as a mention."""
    return _MENTION.sub("\\1\u200b", text)


def _md(text: str, limit: int) -> str:
    """Escaped, mention-safe text of at most ``limit`` characters, never ending in a lone backslash."""
    return _clip(neutralise_mentions(escape_markdown(text)), limit)


def _clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` with "…", never ending in a lone escaping backslash or a bare "<@"."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rstrip("<@")
    if (len(cut) - len(cut.rstrip("\\"))) % 2:
        cut = cut[:-1]
    return cut + "…"


def _code(lines: list[str], lang: str = "") -> str:
    """A fenced code block of at most ``MAX_FIELD_VALUE`` characters; "```" inside cannot close it."""
    fence_open, fence_close = f"```{lang}\n", "\n```"
    inner = neutralise_mentions("\n".join(lines).replace("```", "`\u200b`\u200b`"))
    inner = _clip(inner, MAX_FIELD_VALUE - len(fence_open) - len(fence_close)) or BLANK
    return fence_open + inner + fence_close


def _fits_code(lines: list[str]) -> bool:
    return len(neutralise_mentions("\n".join(lines).replace("```", "`\u200b`\u200b`"))) <= MAX_FIELD_VALUE - 12


def _row(label: str, value: str) -> str:
    head = _md(label, MAX_FIELD_VALUE // 3) + ": " if label else ""
    return head + "**" + (_md(value, MAX_FIELD_VALUE - len(head) - 4) or BLANK) + "**"


def _fields(reply: Reply) -> list[dict[str, Any]]:
    fields: list[dict[str, Any]] = []
    for section in reply.sections:
        name = _md(one_line(section.title, MAX_TITLE), MAX_FIELD_NAME) or BLANK
        rows = [_row(label, value) for label, value in rows_of(section)] or [BLANK]
        for i, group in enumerate(chunk(rows, lambda g: len("\n".join(g)) <= MAX_FIELD_VALUE)):
            value = "\n".join(group)
            inline = len(value) <= INLINE_MAX_VALUE and all(len(r) <= INLINE_MAX_LINE for r in group)
            fields.append({"name": name if i == 0 else BLANK, "value": value, "inline": inline})
    for code in reply.code:
        name = _md(one_line(code.label, MAX_TITLE), MAX_FIELD_NAME) or BLANK
        lines = [ln.rstrip()[:MAX_CODE_LINE] for ln in clean(code.text).strip("\n").split("\n")]
        for i, group in enumerate(chunk(lines, _fits_code)):
            fields.append({"name": name if i == 0 else BLANK, "value": _code(group, "sh"), "inline": False})
    if reply.table is not None:
        lines = table_lines(reply.table)
        name = _md(one_line(reply.table.title, MAX_TITLE), MAX_FIELD_NAME) or BLANK
        for i, group in enumerate(chunk(lines[2:], lambda g: _fits_code(lines[:2] + g)) or [[]]):
            fields.append({"name": name if i == 0 else BLANK, "value": _code(lines[:2] + group), "inline": False})
    return fields


def _description(reply: Reply) -> str:
    parts = []
    if echo := one_line(reply.echo, MAX_ECHO):
        parts.append("> " + _md(echo, MAX_ECHO * 2))
    if summary := block(reply.summary, MAX_SUMMARY):
        parts.append(_md(summary, DESCRIPTION_SUMMARY))
    if suggestions := suggestions_text(reply):
        parts.append(f"*{_md(chrome(reply, 'did_you_mean'), 100)}:* {_md(suggestions, 800)}")
    return _clip("\n\n".join(parts), MAX_DESCRIPTION)


def _size(field: dict[str, Any]) -> int:
    return len(field["name"]) + len(field["value"])


def to_discord(reply: Reply) -> DiscordMessage:
    """The card as one Discord message within every embed limit."""
    title = f"{reply.emoji} " + _md(one_line(reply.title, MAX_TITLE), MAX_TITLE_LEN - len(reply.emoji) - 1)
    description = _description(reply)
    footer_parts = (block(reply.assumptions, MAX_NOTE), block(reply.footer, MAX_NOTE))
    footer = _clip(neutralise_mentions("\n".join(p for p in footer_parts if p)), MAX_FOOTER)
    budget = MAX_TOTAL - len(title) - len(description) - len(footer)
    kept: list[dict[str, Any]] = []
    used = 0
    for field in _fields(reply):
        if used + _size(field) > budget - NOTE_RESERVE or len(kept) >= MAX_FIELDS * MAX_EMBEDS - 1:
            note = f"… ({chrome(reply, 'cut')})"
            kept.append({"name": BLANK, "value": note, "inline": False})
            break
        kept.append(field)
        used += _size(field)
    embeds: list[dict[str, Any]] = [{"title": title, "color": reply.colour}]
    if description:
        embeds[0]["description"] = description
    for i in range(0, len(kept), MAX_FIELDS):
        if i:
            embeds.append({"color": reply.colour})
        embeds[-1]["fields"] = kept[i : i + MAX_FIELDS]
    if footer:
        embeds[-1]["footer"] = {"text": footer}
    if reply.chart is not None:
        embeds[0]["image"] = {"url": f"attachment://{CHART_FILENAME}"}
    buttons = tuple(
        (_clip(neutralise_mentions(one_line(a.label, MAX_BUTTON_LABEL)), MAX_BUTTON_LABEL) or str(i + 1), i)
        for i, a in enumerate(reply.actions[:MAX_BUTTONS])
    )
    return DiscordMessage(
        embeds=embeds,
        content=None,
        buttons=buttons,
        image_name=CHART_FILENAME if reply.chart is not None else None,
    )


__all__ = ["CHART_FILENAME", "DiscordMessage", "escape_markdown", "neutralise_mentions", "to_discord"]

"""Reply -> Telegram HTML messages (parse_mode=HTML) and a photo caption.

The card is rendered as blocks (header, each section, the table, each command, the notes) through the
autoescaping macros of ``telegram.html.j2``, so every tag is closed inside its block. Blocks are packed
into messages of at most ``MAX_TEXT`` visible characters; a block that is too long on its own is split
by rows (a table into several ``<pre>`` blocks, each repeating the header) and never inside a tag, an
entity or a ``<pre>``.

Length is counted the way the Bot API does, on the text after entity parsing, but in UTF-16 code units:
Telegram's entity offsets use them, whether the 4096 cap does could not be checked offline, and a
UTF-16 count is never smaller than a code-point count, so it is the safe one.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from markupsafe import escape

from bot.render.text import (
    MAX_CELL,
    MAX_CODE_LINE,
    MAX_ECHO,
    MAX_NOTE,
    MAX_SUMMARY,
    MAX_TITLE,
    block,
    chrome,
    clean,
    display_width,
    environment,
    one_line,
    rows_of,
    suggestions_text,
    table_lines,
)
from bot.reply import Reply, Table

MAX_TEXT = 4096  # sendMessage text, after entity parsing
MAX_CAPTION = 1024  # sendPhoto caption, after entity parsing
MAX_MESSAGES = 8  # one card never floods a chat; later blocks are dropped with a "…" line
MAX_BUTTONS = 100  # inline keyboard buttons in one message
MAX_BUTTON_LABEL = 64
CAPTION_SUMMARY = 300
CAPTION_ROWS = 6
BLOCK_SEP = "\n\n"
MIN_SPLIT = 3  # rows of a split block that must fit before it may start in a partly filled message
MAX_TABLE_WIDTH = 45  # monospace columns a phone shows without wrapping; wider tables become rows
TEMPLATE = "telegram.html.j2"

_TAG = re.compile(r"<[^>]*>")


@dataclass(frozen=True)
class TelegramMessage:
    """One sendMessage: HTML text and buttons as (label, index into ``reply.actions``)."""

    text: str
    buttons: tuple[tuple[str, int], ...] = ()


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _plain(markup: str) -> str:
    return html.unescape(_TAG.sub("", markup))


def telegram_visible_length(text: str) -> int:
    """Length of the HTML ``text`` after entity parsing (tags dropped, entities decoded), in UTF-16 units."""
    return _utf16_len(_plain(text))


def _visible_clip(markup: str, limit: int) -> str:
    """Fallback for a block that cannot be split: its visible text, escaped and cut to ``limit``."""
    plain = _plain(markup)
    if _utf16_len(plain) <= limit:
        return str(escape(plain))
    plain = plain[: limit - 1]
    while (excess := _utf16_len(plain) - (limit - 1)) > 0:
        plain = plain[: len(plain) - max(excess // 2, 1)]
    return str(escape(plain.rstrip() + "…"))


@dataclass(frozen=True)
class _Unit:
    """One block of the card, splittable by its items: ``render(items[:n])`` is valid HTML for any n."""

    render: Callable[[list[Any]], str]
    items: list[Any]


def _whole(markup: str) -> _Unit:
    return _Unit(lambda _: str(markup), [None])


def _with_head(macro: Callable[[str, list[Any]], str], head: str) -> Callable[[list[Any]], str]:
    return lambda items: str(macro(head, items))


def _units(reply: Reply) -> list[_Unit]:
    """The card as blocks: header, sections, table, commands, notes."""
    macros: Any = environment().get_template(TEMPLATE).module
    title, echo, summary = one_line(reply.title, MAX_TITLE), one_line(reply.echo, MAX_ECHO), reply.summary
    units = [_whole(macros.header(reply.emoji, title, echo, block(summary, MAX_SUMMARY)))]
    for section in reply.sections:
        name = one_line(section.title, MAX_TITLE)
        units.append(_Unit(_with_head(macros.section, name), rows_of(section)))
    if reply.table is not None:
        lines, name = table_lines(reply.table), one_line(reply.table.title, MAX_TITLE)
        header = lines[:2]
        if max((display_width(line) for line in lines), default=0) > MAX_TABLE_WIDTH:
            units.append(_Unit(_with_head(macros.section, name), stacked_rows(reply.table)))
        else:
            units.append(
                _Unit(
                    lambda g: str(macros.table(name, header + [x for x in g if x is not None])),
                    lines[2:] or [None],
                )
            )
    for code in reply.code:
        label = one_line(code.label, MAX_TITLE)
        code_lines = [ln.rstrip()[:MAX_CODE_LINE] for ln in clean(code.text).strip("\n").split("\n")]
        units.append(_Unit(_with_head(macros.code, label), code_lines))
    suggestions, did_you_mean = suggestions_text(reply), chrome(reply, "did_you_mean")
    notes = (block(reply.assumptions, MAX_NOTE), block(reply.footer, MAX_NOTE))
    units.append(_whole(macros.notes(did_you_mean, suggestions, *notes)))
    return units


def stacked_rows(table: Table) -> list[tuple[str, str]]:
    """A table too wide for a phone as one line per row: "first cell: header value · header value"."""
    headers = [one_line(h, MAX_CELL) for h in table.headers]
    rows = []
    for row in table.rows:
        cells = [one_line(c, MAX_CELL) for c in row]
        rest = [f"{h} {c}".strip() if h else c for h, c in zip(headers[1:], cells[1:], strict=False) if c]
        rows.append((cells[0] if cells else "", " · ".join(rest)))
    return rows


def _longest_prefix(unit: _Unit, items: list[Any], room: int) -> int:
    """The most leading items whose rendering fits in ``room`` (visible length grows with the count)."""
    low, high = 0, len(items)
    while low < high:
        mid = (low + high + 1) // 2
        if telegram_visible_length(unit.render(items[:mid])) <= room:
            low = mid
        else:
            high = mid - 1
    return low


def _pack(units: list[_Unit], limit: int, max_messages: int) -> list[str]:
    """Fills messages block by block. A block that fits a message of its own is never split; a longer
    one starts in the room left (at least ``MIN_SPLIT`` items) and goes on in the next messages."""
    texts: list[str] = []
    current: list[str] = []

    def used() -> int:
        return sum(telegram_visible_length(b) for b in current) + len(BLOCK_SEP) * len(current)

    def flush() -> None:
        text = BLOCK_SEP.join(current)
        if _plain(text).strip():  # Telegram refuses a message with no visible text
            texts.append(text)
        current.clear()

    for unit in units:
        items = unit.items
        while items and len(texts) <= max_messages:
            whole = unit.render(items)
            size, room = telegram_visible_length(whole), limit - used()
            if not _plain(whole).strip():
                break
            if size <= room:
                current.append(whole)
                break
            if size <= limit and current:
                flush()
                continue
            n = _longest_prefix(unit, items, room)
            if n < min(MIN_SPLIT, len(items)) and current:
                flush()
                continue
            part = unit.render(items[:n]) if n else _visible_clip(unit.render(items[:1]), limit)
            current.append(part)
            flush()
            items = items[max(n, 1) :]
    flush()
    return texts


def _buttons(reply: Reply) -> tuple[tuple[str, int], ...]:
    labels = [(one_line(a.label, MAX_BUTTON_LABEL) or str(i + 1), i) for i, a in enumerate(reply.actions)]
    return tuple(labels[:MAX_BUTTONS])


def to_telegram(reply: Reply) -> list[TelegramMessage]:
    """The card as one or more HTML messages; buttons ride on the last one."""
    texts = _pack(_units(reply), MAX_TEXT, MAX_MESSAGES)
    if len(texts) > MAX_MESSAGES:
        texts = texts[:MAX_MESSAGES]
        if telegram_visible_length(texts[-1]) + len(BLOCK_SEP) + 1 <= MAX_TEXT:
            texts[-1] += BLOCK_SEP + "…"
    messages = [TelegramMessage(text) for text in texts[:-1]]
    return [*messages, TelegramMessage(texts[-1], _buttons(reply))]


def caption_for_photo(reply: Reply) -> str | None:
    """A short HTML caption for the chart photo (title, summary, first rows), or None without a chart."""
    if reply.chart is None:
        return None
    macros: Any = environment().get_template(TEMPLATE).module
    title, summary = one_line(reply.title, MAX_TITLE), block(reply.summary, CAPTION_SUMMARY)
    rows = rows_of(reply.sections[0])[:CAPTION_ROWS] if reply.sections else []
    while True:
        text = str(macros.caption(reply.emoji, title, summary, rows))
        if telegram_visible_length(text) <= MAX_CAPTION:
            return text
        if not rows:
            return _visible_clip(text, MAX_CAPTION)
        rows = rows[:-1]


__all__ = [
    "MAX_CAPTION",
    "MAX_TABLE_WIDTH",
    "MAX_TEXT",
    "TelegramMessage",
    "caption_for_photo",
    "telegram_visible_length",
    "to_telegram",
]

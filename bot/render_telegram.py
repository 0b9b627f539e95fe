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

from markupsafe import Markup, escape

from bot.render import (
    MAX_CODE_LINE,
    MAX_ECHO,
    MAX_NOTE,
    MAX_SUMMARY,
    MAX_TITLE,
    block,
    chrome,
    chunk,
    clean,
    environment,
    one_line,
    rows_of,
    suggestions_text,
    table_lines,
)
from bot.reply import Reply

MAX_TEXT = 4096  # sendMessage text, after entity parsing
MAX_CAPTION = 1024  # sendPhoto caption, after entity parsing
MAX_MESSAGES = 8  # one card never floods a chat; later blocks are dropped with a "…" line
MAX_BUTTONS = 100  # inline keyboard buttons in one message
MAX_BUTTON_LABEL = 64
CAPTION_SUMMARY = 300
CAPTION_ROWS = 6
BLOCK_SEP = "\n\n"
TEMPLATE = "telegram.html.j2"

_TAG = re.compile(r"<[^>]*>")


@dataclass(frozen=True)
class TelegramMessage:
    """One sendMessage: HTML text and buttons as (label, index into ``reply.actions``)."""

    text: str
    buttons: tuple[tuple[str, int], ...] = ()


def telegram_visible_length(text: str) -> int:
    """Length of the HTML ``text`` after entity parsing (tags dropped, entities decoded), in UTF-16 units."""
    plain = html.unescape(_TAG.sub("", text))
    return len(plain.encode("utf-16-le", "surrogatepass")) // 2


def _visible_clip(markup: str, limit: int) -> str:
    """Fallback for a block that cannot be split: its visible text, escaped and cut to ``limit``."""
    plain = html.unescape(_TAG.sub("", markup))
    while len(plain.encode("utf-16-le", "surrogatepass")) // 2 > limit:
        plain = plain[: max(len(plain) - 1 - (len(plain.encode("utf-16-le", "surrogatepass")) // 2 - limit), 0)]
        plain = plain.rstrip() + "…"
    return str(escape(plain))


def _split(render: Callable[[list[str]], str], items: list[str], limit: int) -> list[str]:
    """Renders ``items`` as few blocks as fit in ``limit`` each, keeping the order."""
    groups = chunk(items, lambda group: telegram_visible_length(render(group)) <= limit)
    blocks = [render(group) for group in groups] or [render([])]
    return [b if telegram_visible_length(b) <= limit else _visible_clip(b, limit) for b in blocks]


def _blocks(reply: Reply, limit: int) -> list[str]:
    """The card as HTML blocks, each well-formed and at most ``limit`` visible characters."""
    macros = environment().get_template(TEMPLATE).module
    out: list[str] = []
    head = macros.header(
        reply.emoji,
        one_line(reply.title, MAX_TITLE),
        one_line(reply.echo, MAX_ECHO),
        block(reply.summary, MAX_SUMMARY),
    )
    out.append(head if telegram_visible_length(head) <= limit else _visible_clip(head, limit))
    for section in reply.sections:
        title, rows = one_line(section.title, MAX_TITLE), rows_of(section)
        if not title and not rows:
            continue
        index = list(range(len(rows)))
        out += _split(lambda g, t=title, r=rows: macros.section(t, [r[int(i)] for i in g]), [str(i) for i in index], limit)
    if reply.table is not None:
        lines = table_lines(reply.table)
        title, head_lines = one_line(reply.table.title, MAX_TITLE), lines[:2]
        out += _split(lambda g: macros.table(title, head_lines + g), lines[2:], limit)
    for code in reply.code:
        label = one_line(code.label, MAX_TITLE)
        code_lines = [ln.rstrip()[:MAX_CODE_LINE] for ln in clean(code.text).strip("\n").split("\n")]
        out += _split(lambda g, lab=label: macros.code(lab, g), code_lines, limit)
    notes = macros.notes(
        chrome(reply, "did_you_mean"),
        suggestions_text(reply),
        block(reply.assumptions, MAX_NOTE),
        block(reply.footer, MAX_NOTE),
    )
    if notes.strip():
        out.append(notes if telegram_visible_length(notes) <= limit else _visible_clip(notes, limit))
    return [str(b) for b in out if html.unescape(_TAG.sub("", str(b))).strip()]


def _buttons(reply: Reply) -> tuple[tuple[str, int], ...]:
    labels = [(one_line(a.label, MAX_BUTTON_LABEL) or str(i + 1), i) for i, a in enumerate(reply.actions)]
    return tuple(labels[:MAX_BUTTONS])


def to_telegram(reply: Reply) -> list[TelegramMessage]:
    """The card as one or more HTML messages; buttons ride on the last one."""
    sep = len(BLOCK_SEP)
    texts = [
        BLOCK_SEP.join(group)
        for group in chunk(
            _blocks(reply, MAX_TEXT),
            lambda g: sum(telegram_visible_length(b) for b in g) + sep * (len(g) - 1) <= MAX_TEXT,
        )
    ]
    if len(texts) > MAX_MESSAGES:
        texts = texts[:MAX_MESSAGES]
        if telegram_visible_length(texts[-1]) + sep + 1 <= MAX_TEXT:
            texts[-1] += BLOCK_SEP + "…"
    messages = [TelegramMessage(text) for text in texts]
    messages[-1] = TelegramMessage(texts[-1], _buttons(reply))
    return messages


def caption_for_photo(reply: Reply) -> str | None:
    """A short HTML caption for the chart photo (title, summary, first rows), or None without a chart."""
    if reply.chart is None:
        return None
    macros = environment().get_template(TEMPLATE).module
    title, summary = one_line(reply.title, MAX_TITLE), block(reply.summary, CAPTION_SUMMARY)
    rows = rows_of(reply.sections[0])[:CAPTION_ROWS] if reply.sections else []
    while True:
        text = str(macros.caption(reply.emoji, title, summary, rows))
        if telegram_visible_length(text) <= MAX_CAPTION:
            return text
        if not rows:
            return _visible_clip(text, MAX_CAPTION)
        rows = rows[:-1]


__all__ = ["MAX_CAPTION", "MAX_TEXT", "TelegramMessage", "caption_for_photo", "telegram_visible_length", "to_telegram"]

_ = Markup  # re-exported type of macro results

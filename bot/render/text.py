"""Reply -> console text, Telegram HTML messages and Discord embeds.

Every renderer is a pure function of a ``Reply``. Layout lives in ``bot/templates`` (jinja2; the
Telegram template autoescapes every string, the console one does not). The platform modules
``render_telegram`` and ``render_discord`` hold the limits of their platform as named constants and
never return anything the platform would refuse: a long Telegram card is split at block boundaries,
a Discord card is cut with "…". All text is cleaned first: control characters (terminal escape
sequences), bidi overrides, zero-width spaces and invisible operators are removed from every string, including the
catalog's, since a renderer cannot tell which strings came from a user.

This module holds the shared helpers and the console renderer and re-exports the public API.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import cache
from typing import TypeVar

import jinja2

from bot.reply import Reply, Section, Table
from locales import t

T = TypeVar("T")
ELLIPSIS = "…"
TEMPLATE_DIR = "templates"

# Caps for single strings, applied on every platform before layout; generous for real cards, and small
# enough that any one row, cell or line fits a Telegram message or a Discord field on its own.
MAX_TITLE = 256
MAX_SUMMARY = 1500
MAX_LABEL = 200
MAX_VALUE = 600
MAX_CELL = 80
MAX_ECHO = 200
MAX_SUGGESTION = 100
MAX_NOTE = 600  # assumptions and footer
MAX_CODE_LINE = 500
MAX_TABLE_LINE = 300
TABLE_GAP = "  "
CONSOLE_LABEL_WIDTH = 32  # longer labels push their own value right instead of every row's

# The renderers' own words (everything else in a Reply is localized already).

_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ud800-\udfff]")
_NUMERIC = re.compile(r"^[~≈<>$€£+\-−]?\s?\d")


def clean(text: str) -> str:
    """Removes control, zero-width, bidi-override and surrogate characters; keeps newlines."""
    text = text.replace("\r\n", "\n").replace("\t", " ").replace("\u2028", "\n").replace("\u2029", "\n")
    return _INVISIBLE.sub("", text)


def one_line(text: str, limit: int) -> str:
    """The cleaned text on one line with runs of whitespace collapsed, cut to ``limit``."""
    return clip(" ".join(clean(text).split()), limit)


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in "…" when cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)].rstrip() + ELLIPSIS if limit > 0 else ""


def block(text: str, limit: int) -> str:
    """Multi-line text cleaned, trailing spaces and blank runs removed, cut to ``limit``."""
    lines = [ln.rstrip() for ln in clean(text).strip("\n").split("\n")]
    return clip(re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip(), limit)


def display_width(text: str) -> int:
    """Columns ``text`` takes in a monospace font: wide East Asian and emoji 2, combining marks 0."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch) or ch == "\ufe0f":
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _pad(text: str, width: int, right: bool = False) -> str:
    fill = " " * max(width - display_width(text), 0)
    return fill + text if right else text + fill


def table_lines(table: Table, line_limit: int | None = MAX_TABLE_LINE, cell_limit: int = MAX_CELL) -> list[str]:
    """Header, rule and rows of ``table`` as aligned monospace lines; numeric columns right-aligned."""
    headers = [one_line(h, cell_limit) for h in table.headers]
    rows = [[one_line(c, cell_limit) for c in row] for row in table.rows]
    ncols = max([len(headers), *(len(r) for r in rows)])
    headers += [""] * (ncols - len(headers))
    rows = [r + [""] * (ncols - len(r)) for r in rows]
    widths = [max(display_width(r[i]) for r in [headers, *rows]) for i in range(ncols)]
    right = [bool(rows) and all(_NUMERIC.match(r[i]) for r in rows if r[i]) for i in range(ncols)]

    def fmt(cells: list[str]) -> str:
        text = TABLE_GAP.join(_pad(c, w, r) for c, w, r in zip(cells, widths, right, strict=True)).rstrip()
        return clip(text, line_limit) if line_limit else text

    rule = TABLE_GAP.join("-" * w for w in widths)
    return [fmt(headers), clip(rule, line_limit) if line_limit else rule, *(fmt(r) for r in rows)]


def rows_of(section: Section) -> list[tuple[str, str]]:
    """The section's rows as cleaned one-line (label, value) pairs."""
    return [(one_line(r.label, MAX_LABEL), one_line(r.value, MAX_VALUE)) for r in section.rows]


def chrome(reply: Reply, key: str) -> str:
    """The renderers' own words ("did you mean", "try", "shortened to fit") in the card's language."""
    return t(reply.locale, f"render.{key}")


def suggestions_text(reply: Reply) -> str:
    return ", ".join(s for s in (one_line(s, MAX_SUGGESTION) for s in reply.suggestions) if s)


def chunk(items: Iterable[T], fits: Callable[[list[T]], bool]) -> list[list[T]]:
    """Greedy groups of ``items`` in order such that ``fits(group)`` holds for every group of 2+."""
    groups: list[list[T]] = []
    current: list[T] = []
    for item in items:
        if current and not fits([*current, item]):
            groups.append(current)
            current = []
        current.append(item)
    if current:
        groups.append(current)
    return groups


@cache
def environment() -> jinja2.Environment:
    """The one template environment, built on first use; autoescape is on for ``*.html.j2``."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("bot.render", TEMPLATE_DIR),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default=False),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        bytecode_cache=_compiled_templates(),
    )


class _KeptTemplates(jinja2.FileSystemBytecodeCache):
    """Templates compiled once and kept between processes, in jinja2's private per-user folder under the
    system temp directory: compiling one costs a one-shot ``fitbot ask`` about 25 ms. jinja2 checks
    each entry against its template's source; an entry that cannot be written is left out."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:  # a read-only or full temp directory: compiled again next time
            pass


def _compiled_templates() -> jinja2.BytecodeCache | None:
    try:
        return _KeptTemplates()
    except (OSError, RuntimeError):  # no safe per-user folder (jinja2 refuses one it does not own alone)
        return None


# --------------------------------------------------------------------------- console


def to_console(reply: Reply) -> str:
    """The card as plain text for a terminal: aligned rows and tables, indented commands."""
    sections = [(one_line(s.title, MAX_TITLE), rows_of(s)) for s in reply.sections]
    label_width = min(max([display_width(lab) for _, rows in sections for lab, _ in rows] or [0]), CONSOLE_LABEL_WIDTH)
    code = [
        (one_line(c.label, MAX_TITLE), [ln.rstrip() for ln in clean(c.text).strip("\n").split("\n")])
        for c in reply.code
    ]
    actions = [(one_line(a.label, MAX_TITLE), one_line(a.question, MAX_VALUE)) for a in reply.actions]
    text = (
        environment()
        .get_template("console.txt.j2")
        .render(
            emoji=reply.emoji,
            title=one_line(reply.title, MAX_TITLE),
            echo=one_line(reply.echo, MAX_ECHO),
            summary=block(reply.summary, MAX_SUMMARY),
            sections=sections,
            label_width=label_width,
            pad=_pad,
            table_title=one_line(reply.table.title, MAX_TITLE) if reply.table else "",
            table=table_lines(reply.table, None, MAX_VALUE) if reply.table else [],
            code=code,
            suggestions=suggestions_text(reply),
            assumptions=block(reply.assumptions, MAX_NOTE),
            footer=block(reply.footer, MAX_NOTE),
            actions=actions,
            words={key: chrome(reply, key) for key in ("did_you_mean", "try", "cut")},
        )
    )
    lines = [ln.rstrip() for ln in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n") + "\n"


# The platform renderers import the helpers above, so they are re-exported lazily (PEP 562); importing
# them here at module level would be circular whenever a platform module is imported first.


__all__ = ["to_console"]

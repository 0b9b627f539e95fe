"""Builds localized ``Reply`` cards from estimates. Every number here comes from ``core``.

This module holds the generic cards (ask back, errors, notices, settings) and re-exports the card
builders of ``cards_fit`` (fit and its details page), ``cards_speed`` (/speed, compare),
``cards_money`` (cloud, rent-or-buy) and ``cards_lists`` (/gpus, /quant, /models, fine-tune, help).
Formatting goes through ``locales`` only, so German cards read ``204,19 GiB``.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.cards.fit import fit_card, follow_up, memory_chart
from bot.cards.lists import finetune_card, gpus_card, help_card, list_card, models_card, quant_card
from bot.cards.money import cloud_card, tco_card
from bot.cards.parts import footer, hardware_label, note_text, verdict_label
from bot.cards.speed import compare_card, speed_card
from bot.reply import Action, ChartSpec, Reply, Row, Section, Table, Tone
from core.models import Catalog, Lang
from core.notes import CodedError
from locales import t


def table_card(
    kind: str,
    title: str,
    headers: str,
    rows: Sequence[Sequence[str]],
    catalog: Catalog,
    lang: Lang,
    summary: str = "",
    assumptions: str = "",
    actions: Sequence[Action] = (),
    chart: ChartSpec | None = None,
) -> Reply:
    return Reply(
        kind=kind,
        locale=lang,
        title=title,
        tone=Tone.INFO,
        summary=summary,
        table=Table(headers=tuple(headers.split("|")), rows=tuple(tuple(r) for r in rows)),
        assumptions=assumptions,
        footer=footer(catalog, lang),
        actions=tuple(actions),
        chart=chart,
    )


def ask_card(
    lang: Lang, message: str, suggestions: Sequence[str] = (), queries: Sequence[str] = (), echo: str = ""
) -> Reply:
    """Asks back: something is missing or unknown; suggestions become buttons."""
    return Reply(
        kind="suggest",
        locale=lang,
        title=t(lang, "ask.title"),
        tone=Tone.INFO,
        summary=message,
        suggestions=tuple(suggestions[:6]),
        actions=tuple(Action(label=s, query=q) for s, q in zip(suggestions[:6], queries[:6], strict=False)),
        echo=echo,
    )


def error_card(lang: Lang, message: str, kind: str = "error") -> Reply:
    return Reply(kind=kind, locale=lang, title=t(lang, "error.title"), tone=Tone.BAD, summary=message)


def slow_down_card(lang: Lang, seconds: int) -> Reply:
    return Reply(
        kind="slow_down",
        locale=lang,
        title=t(lang, "limits.title"),
        tone=Tone.WARN,
        summary=t(lang, "limits.slow_down", seconds=seconds),
    )


def info_card(lang: Lang, title: str, message: str) -> Reply:
    return Reply(kind="settings", locale=lang, title=title, tone=Tone.GOOD, summary=message)


def settings_card(lang: Lang, values: dict[str, str]) -> Reply:
    rows = tuple(Row(label=k, value=v) for k, v in values.items())
    return Reply(
        kind="settings",
        locale=lang,
        title=t(lang, "prefs.title"),
        summary=t(lang, "prefs.howto"),
        sections=(Section(title=t(lang, "prefs.title"), rows=rows),),
    )


def notice_card(lang: Lang, message: str, kind: str = "notice") -> Reply:
    """A designed limit, not a failure (e.g. settings outside a chat): neutral title and tone."""
    return Reply(kind=kind, locale=lang, title=t(lang, "notice.title"), tone=Tone.INFO, summary=message)


def estimate_error_card(lang: Lang, exc: CodedError) -> Reply:
    """An estimate that cannot be made, with its reason in the user's language."""
    message = t(lang, "error.estimate", reason=note_text(exc.note, lang))
    return Reply(kind="error", locale=lang, title=t(lang, "notice.title"), tone=Tone.WARN, summary=message)


__all__ = [
    "ask_card",
    "cloud_card",
    "compare_card",
    "error_card",
    "estimate_error_card",
    "finetune_card",
    "fit_card",
    "follow_up",
    "footer",
    "gpus_card",
    "hardware_label",
    "help_card",
    "info_card",
    "list_card",
    "memory_chart",
    "models_card",
    "notice_card",
    "quant_card",
    "settings_card",
    "slow_down_card",
    "speed_card",
    "table_card",
    "tco_card",
    "verdict_label",
]

"""The adapters' own words in each language: the Discord slash commands' names and descriptions, the Telegram
command menu and short texts (the ⚡ speed feel, restarts), the MCP server's formulas page; and which of our
languages a platform's locale code means. Each adapter reads its table of locales/ (``[discord]``,
``[telegram]``, ``[mcp]``) only through here."""

from __future__ import annotations

from typing import Literal

from core.models import Lang
from locales import lang_of, num, t, tokens_per_s


def platform_lang(code: str | None) -> Lang:
    """A platform locale ("de-DE", "de", "en-GB", None) as one of our languages."""
    return lang_of(code)


def discord_text(lang: Lang, key: str, **params: object) -> str:
    """A Discord-adapter string from the ``[discord]`` table of locales/."""
    return t(lang, f"discord.{key}", **params)


def telegram_text(lang: Lang, key: str, **params: object) -> str:
    """A Telegram-adapter string from the ``[telegram]`` table of locales/ (Discord's ⚡ reuses one)."""
    return t(lang, f"telegram.{key}", **params)


def telegram_feel_rate(rate: float, lang: Lang) -> str:
    """The ⚡ stream's decode rate ("42.1 tok/s")."""
    return tokens_per_s(rate, lang)


def telegram_feel_done(rate: float, elapsed: float, lang: Lang) -> str:
    """The ⚡ stream's closing line: the rate and how long it ran."""
    return t(lang, "telegram.feel.done", rate=tokens_per_s(rate, lang), seconds=num(elapsed, lang, 1))


def formulas_title(lang: Literal["en", "de"]) -> str:
    """The MCP resource's description of the formulas page."""
    return t(lang, "mcp.formulas_title")


def formulas_page(lang: Literal["en", "de"]) -> str:
    """The formulas page (markdown) the MCP server offers as a resource."""
    return t(lang, "mcp.formulas")

"""German and English texts and locale-aware number formatting.

Messages live in ``locales/en.toml`` and ``locales/de.toml`` (one key per message, ``{name}``
placeholders); numbers, bytes and money are formatted with Babel (German ``204,19 GiB``,
``9,17 $``). A test fails when a key exists in one language only.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Literal

from babel import Locale
from babel.numbers import NumberPattern, format_currency, parse_pattern

Lang = Literal["de", "en"]
BABEL_LOCALE = {"en": "en_US", "de": "de_DE"}
GIB = 1 << 30


@cache
def messages(lang: Lang) -> dict[str, str]:
    """All messages of one language, flattened to dotted keys."""
    raw = tomllib.loads(Path(__file__).with_name(f"{lang}.toml").read_text(encoding="utf-8"))
    out: dict[str, str] = {}

    def walk(prefix: str, node: dict[str, object]) -> None:
        for key, value in node.items():
            name = f"{prefix}{key}"
            if isinstance(value, dict):
                walk(name + ".", value)
            else:
                out[name] = str(value)

    walk("", raw)
    return out


def preload_locales() -> None:
    """Reads both languages' messages and Babel's number data now, not on the first answer."""
    langs: tuple[Lang, ...] = ("en", "de")
    for lang in langs:
        messages(lang)
        num(1.5, lang)
        usd(1.5, lang)


def lang_of(code: str | None) -> Lang:
    """Map a platform locale ("de-DE", "de", "en-GB", None) to one of our languages."""
    return "de" if code and code.lower().startswith("de") else "en"


class _Params(dict[str, object]):
    """Leaves an unknown placeholder visible instead of failing the whole answer."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def t(lang: Lang, key: str, **params: object) -> str:
    """The message ``key`` in ``lang`` with ``params`` filled in (English if missing)."""
    text = messages(lang).get(key) or messages("en").get(key) or key
    return text.format_map(_Params(params)) if params else text


@cache
def _locale(lang: Lang) -> Locale:
    """Babel's locale, parsed once: a locale name is parsed again on every call (half a number's cost)."""
    return Locale.parse(BABEL_LOCALE[lang])


@cache
def _decimal_pattern(digits: int) -> NumberPattern:
    return parse_pattern("#,##0" + ("." + "0" * digits if digits else ""))


def num(value: float, lang: Lang, digits: int = 2) -> str:
    """A number with the locale's separators and ``digits`` decimals."""
    return str(_decimal_pattern(digits).apply(value, _locale(lang)))


def gib(value: float, lang: Lang, digits: int = 2) -> str:
    """Bytes as GiB: "204.19 GiB" / "204,19 GiB"."""
    return f"{num(value / GIB, lang, digits)} GiB"


def usd(value: float, lang: Lang, digits: int = 2) -> str:
    """US dollars the locale's way: "$9.17" / "9,17 $"."""
    pattern = "¤#,##0." + "0" * digits if lang == "en" else "#,##0." + "0" * digits + " ¤"
    return format_currency(value, "USD", format=pattern, locale=_locale(lang), currency_digits=False)


def tokens_per_s(value: float, lang: Lang) -> str:
    digits = 0 if value >= 100 else 1
    return f"{num(value, lang, digits)} tok/s"


def integer(value: int, lang: Lang) -> str:
    return num(value, lang, 0)


def context_label(tokens: int) -> str:
    """32768 -> "32K" (binary K, as context lengths are quoted)."""
    if tokens % 1024 == 0 and tokens >= 1024:
        return f"{tokens // 1024}K"
    return str(tokens)

"""German and English texts and locale-aware number formatting.

Messages live in ``locales/en.toml`` and ``locales/de.toml`` (one key per message, ``{name}``
placeholders); numbers, bytes and money are formatted with the locale's CLDR symbols (German
``204,19 GiB``, ``9,17 $``). A test fails when a key exists in one language only.

The symbols are Babel's, held here: reading Babel's locale data costs each process about 40 ms (a
quarter-megabyte pickle per language) for four characters. ``tests/test_locales.py`` checks them
against Babel and formats thousands of values both ways, so the two cannot drift apart.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from functools import cache
from math import copysign
from pathlib import Path

from core.models import Lang

GIB = 1 << 30


@dataclass(frozen=True)
class NumberSymbols:
    decimal: str
    group: str  # thousands, in groups of three (CLDR's "#,##0" for both languages)
    minus: str
    usd: str  # the US dollar's symbol
    usd_pattern: str  # where it stands: "{sign}{symbol}{number}" ("$9.17") or "{sign}{number} {symbol}" ("9,17 $")
    # Python's "," and "." as this locale writes them; None where they are the same
    separators: dict[int, str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        same = (self.group, self.decimal) == (",", ".")
        object.__setattr__(self, "separators", None if same else str.maketrans({",": self.group, ".": self.decimal}))


SYMBOLS: dict[Lang, NumberSymbols] = {
    "en": NumberSymbols(decimal=".", group=",", minus="-", usd="$", usd_pattern="{sign}{symbol}{number}"),
    "de": NumberSymbols(decimal=",", group=".", minus="-", usd="$", usd_pattern="{sign}{number} {symbol}"),
}


@cache
def messages(lang: Lang) -> dict[str, str]:
    """All messages of one language, flattened to dotted keys.

    Kept flattened as JSON in ``__pycache__`` beside the file, keyed by its size and time, the way Python
    keeps compiled modules: reading that is a thirtieth of parsing the TOML, which a one-shot command
    (``fitbot estimate``) would pay on every start. Where the folder is read-only, the TOML is parsed."""
    source = Path(__file__).with_name(f"{lang}.toml")
    stat = source.stat()
    cached = source.with_name("__pycache__") / f"{lang}.{stat.st_size}.{stat.st_mtime_ns}.json"
    try:
        return dict(json.loads(cached.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        pass
    import tomllib  # only when the kept JSON is missing or stale

    out = _flattened(tomllib.loads(source.read_text(encoding="utf-8")))
    try:  # written whole or not at all (other processes read it meanwhile); older versions removed
        cached.parent.mkdir(exist_ok=True)
        partial = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(out), encoding="utf-8")
        os.replace(partial, cached)
        for old in cached.parent.glob(f"{lang}.*.json"):
            if old != cached:
                old.unlink(missing_ok=True)
    except OSError:
        pass
    return out


def _flattened(raw: dict[str, object]) -> dict[str, str]:
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
    """Reads both languages' messages now, not on the first answer."""
    langs: tuple[Lang, ...] = ("en", "de")
    for lang in langs:
        messages(lang)


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


def _digits(value: float, digits: int, symbols: NumberSymbols) -> tuple[str, str]:
    """(sign, digits with the locale's separators): rounded half to even from the shortest decimal that
    reads back as ``value``, as Babel rounds. Formatting the float itself rounds the same way, except
    where that shortest decimal is a tie at the last place kept (2.675 to two places) or a float's
    spacing comes near a tie (huge values): Decimal rounds those."""
    if isinstance(value, int) and digits >= 0:
        body, negative = f"{abs(value):,}" + ("." + "0" * digits if digits else ""), value < 0
    else:
        shortest = repr(value)
        decimals = shortest.partition(".")[2]
        tie = len(decimals) == digits + 1 and decimals[-1] == "5"
        if tie or not (0 <= digits <= 6 and decimals.isdigit() and abs(value) < 1e9):  # beyond: ulps near ties
            rounded = Decimal(shortest).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_EVEN)
            body, negative = f"{abs(rounded):,.{digits}f}", rounded.is_signed()
        else:
            body, negative = f"{abs(value):,.{digits}f}", copysign(1.0, value) < 0
    return symbols.minus if negative else "", body if symbols.separators is None else body.translate(symbols.separators)


def num(value: float, lang: Lang, digits: int = 2) -> str:
    """A number with the locale's separators and ``digits`` decimals."""
    sign, text = _digits(value, digits, SYMBOLS[lang])
    return sign + text


def gib(value: float, lang: Lang, digits: int = 2) -> str:
    """Bytes as GiB: "204.19 GiB" / "204,19 GiB"."""
    return f"{num(value / GIB, lang, digits)} GiB"


def usd(value: float, lang: Lang, digits: int = 2) -> str:
    """US dollars the locale's way: "$9.17" / "9,17 $"."""
    symbols = SYMBOLS[lang]
    sign, text = _digits(value, digits, symbols)
    return symbols.usd_pattern.format(sign=sign, symbol=symbols.usd, number=text)


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

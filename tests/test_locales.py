"""Every message exists in both languages with the same placeholders; numbers follow the locale."""

from __future__ import annotations

import random
import re

import pytest
from babel import Locale
from babel.numbers import format_currency, parse_pattern

from locales import SYMBOLS, gib, lang_of, messages, num, t, usd

PLACEHOLDER = re.compile(r"\{(\w+)\}")


def test_both_languages_have_the_same_keys():
    en, de = messages("en"), messages("de")
    assert set(en) == set(de), f"missing in de: {set(en) - set(de)}; missing in en: {set(de) - set(en)}"


def test_placeholders_match_between_languages():
    en, de = messages("en"), messages("de")
    for key in en:
        assert set(PLACEHOLDER.findall(en[key])) == set(PLACEHOLDER.findall(de[key])), key


def test_numbers_are_formatted_the_locale_way():
    assert gib(204.19 * 2**30, "de") == "204,19 GiB"
    assert gib(204.19 * 2**30, "en") == "204.19 GiB"
    assert usd(9.17, "de") == "9,17\xa0$" or usd(9.17, "de") == "9,17 $"
    assert usd(9.17, "en") == "$9.17"
    assert num(10619, "de", 0) == "10.619"


BABEL_LOCALE = {"en": "en_US", "de": "de_DE"}


@pytest.mark.parametrize("lang", ["en", "de"])
def test_number_symbols_are_babels(lang):
    locale = Locale.parse(BABEL_LOCALE[lang])
    symbols = SYMBOLS[lang]
    assert (symbols.decimal, symbols.group, symbols.minus) == (
        locale.number_symbols["latn"]["decimal"],
        locale.number_symbols["latn"]["group"],
        locale.number_symbols["latn"]["minusSign"],
    )
    assert symbols.usd == locale.currency_symbols["USD"]


def _values() -> list[float]:
    rng = random.Random(20)
    halves = [k / 200 for k in range(-400, 400)] + [k / 2 for k in range(-40, 40)]  # ties at 2 and 0 digits
    wide = [rng.uniform(-1e7, 1e7) for _ in range(500)] + [rng.uniform(-2, 2) for _ in range(500)]
    return [0.0, -0.0, 1e-9, -1e-9, 999.995, 1234.5, 2.675, 1e15, 123456789.125, *halves, *wide]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_numbers_and_dollars_read_as_babel_writes_them(lang):
    """The cards' patterns: "#,##0.00" with 0-3 decimals, and the locale's dollar pattern."""
    locale = Locale.parse(BABEL_LOCALE[lang])
    for digits in range(4):
        fraction = "." + "0" * digits if digits else ""
        pattern = parse_pattern("#,##0" + fraction)
        money = "¤#,##0" + fraction if lang == "en" else "#,##0" + fraction + " ¤"
        for value in _values():
            assert num(value, lang, digits) == pattern.apply(value, locale), (value, digits)
            assert usd(value, lang, digits) == format_currency(
                value, "USD", format=money, locale=locale, currency_digits=False
            ), (value, digits)


def test_platform_locales_map_to_our_languages():
    assert lang_of("de-DE") == "de" and lang_of("de") == "de"
    assert lang_of("en-GB") == "en" and lang_of(None) == "en" and lang_of("fr") == "en"


def test_translation_fills_placeholders():
    assert t("de", "fit.title", model="Qwen3-32B", gpu="RTX 4090") == "Qwen3-32B auf RTX 4090"


def test_every_key_the_cards_use_exists():
    """Card code names its messages as literals (or f-strings over a known set); each must exist in English."""
    import re
    from pathlib import Path

    keys = set(messages("en"))
    root = Path(__file__).resolve().parents[1] / "bot"
    missing = set()
    for path in [*(root / "cards").glob("*.py"), root / "answers" / "lists.py"]:
        source = path.read_text(encoding="utf-8")
        for key in re.findall(r't\(\s*lang,\s*"([a-z_.0-9]+)"', source):
            if key not in keys:
                missing.add(f"{path.name}: {key}")
        for template in re.findall(r't\(\s*lang,\s*f"([a-z_.0-9{}]+)"', source):
            pattern = re.compile("^" + re.sub(r"\\\{[^}]*\\\}", "[a-z_0-9]+", re.escape(template)) + "$")
            if not any(pattern.match(k) for k in keys):
                missing.add(f"{path.name}: {template}")
    assert sorted(missing) == []

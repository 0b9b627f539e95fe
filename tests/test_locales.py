"""Every message exists in both languages with the same placeholders; numbers follow the locale."""

from __future__ import annotations

import re

from locales import gib, lang_of, messages, num, t, usd

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


def test_platform_locales_map_to_our_languages():
    assert lang_of("de-DE") == "de" and lang_of("de") == "de"
    assert lang_of("en-GB") == "en" and lang_of(None) == "en" and lang_of("fr") == "en"


def test_translation_fills_placeholders():
    assert t("de", "fit.title", model="Qwen3-32B", gpu="RTX 4090") == "Qwen3-32B auf RTX 4090"

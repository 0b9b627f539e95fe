"""`fitbot catalog offers` says how old each price is."""

from __future__ import annotations

import re
from datetime import date

from catalog.facts import load_facts
from catalog.offers import age_label

CATALOG = load_facts()


def test_age_label_counts_days_and_says_undated() -> None:
    offer = CATALOG.offers[0].model_copy(update={"seen": "2026-11-01"})
    assert age_label(offer, date(2026, 12, 1)) == "30 days old"
    assert age_label(offer.model_copy(update={"seen": "2026-11"}), date(2026, 12, 1)) == "30 days old"
    assert age_label(offer.model_copy(update={"seen": "2026"}), date(2026, 12, 1)) == "undated"


def test_stale_is_measured_from_the_build_day_when_that_is_later_than_every_price() -> None:
    from core.cost import newest_price_date, price_flags

    march = CATALOG.offers[0].model_copy(update={"seen": "2026-03"})
    undated = march.model_copy(update={"seen": "2026"})
    files = CATALOG  # read straight from the files: no build day, the newest price is the reference
    assert "stale" not in price_flags(march, newest_price_date(files))
    built = CATALOG.model_copy(update={"built_at": "2026-12-01T09:00:00+00:00"})
    assert newest_price_date(built) == "2026-12-01"
    assert "stale" in price_flags(march, newest_price_date(built))
    assert "stale" in price_flags(undated, newest_price_date(built))  # a bare year counts from its January


def test_the_cloud_card_shows_each_prices_month_and_marks_old_ones_in_both_languages(capsys) -> None:
    from bot.app import cli

    for lang, legend in (("en", "(MM/YY): when the price was seen"), ("de", "(MM/JJ): Stand des Preises")):
        assert cli.main(["ask", "/cloud qwen3-32b", "--lang", lang]) == 0
        out = capsys.readouterr().out
        header = next(line for line in out.splitlines() if "$/h" in line and "$/Mtok" in line)
        rows = out.split(header, 1)[1].split("\n\n", 1)[0].splitlines()[2:]
        assert rows and all(re.search(r"\((\d\d/\d\d|20\d\d)\) ", r) for r in rows), rows
        assert any("°" in r for r in rows) and legend in out  # built today: March prices are over six months old


def test_the_fit_card_cost_line_says_when_its_price_was_seen(capsys) -> None:
    from bot.app import cli

    for lang, word in (("en", "seen"), ("de", "Stand")):
        assert cli.main(["ask", "qwen3 32b on a 4090 monthly", "--lang", lang]) == 0
        line = next(x for x in capsys.readouterr().out.splitlines() if "/h (" in x)
        assert re.search(rf"\({word} 20\d\d", line), line

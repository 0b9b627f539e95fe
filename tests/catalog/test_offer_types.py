"""`fitbot catalog offers` says how old each price is."""

from __future__ import annotations

from datetime import date

from catalog.facts import load_facts
from catalog.offers import age_label

CATALOG = load_facts()


def test_age_label_counts_days_and_says_undated() -> None:
    offer = CATALOG.offers[0].model_copy(update={"seen": "2026-11-01"})
    assert age_label(offer, date(2026, 12, 1)) == "30 days old"
    assert age_label(offer.model_copy(update={"seen": "2026-11"}), date(2026, 12, 1)) == "30 days old"
    assert age_label(offer.model_copy(update={"seen": "2026"}), date(2026, 12, 1)) == "undated"

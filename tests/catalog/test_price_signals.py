"""Offers are what a user can rent at (list, spot, reserved); medians and caps are signals, kept apart (issue 23)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import cli
from catalog.facts import FACTS_DIR, FactError, load_facts, load_price_signals
from catalog.offers import OFFER_TYPES, SIGNAL_TYPES

CATALOG = load_facts()


def test_every_offer_is_rentable_at_its_price_and_every_signal_is_typed() -> None:
    assert {o.pricing_type for o in CATALOG.offers} <= set(OFFER_TYPES)
    signals = load_price_signals(CATALOG)
    assert signals and {s.pricing_type for s in signals} == set(SIGNAL_TYPES)
    offered = {(o.provider, o.instance) for o in CATALOG.offers}
    assert not [s for s in signals if (s.provider, s.instance) in offered]
    assert not [o for o in CATALOG.offers if "median" in o.instance or "cap" in o.instance]


def test_a_cap_typed_into_offers_toml_is_refused(tmp_path: Path) -> None:
    for name in ("gpus.toml", "models.toml", "quants.toml", "gguf_sizes.toml"):
        (tmp_path / name).write_text((FACTS_DIR / name).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "offers.toml").write_text(
        '[[offer]]\nprovider = "X"\ninstance = "H100 (cap)"\ngpu = "h100-sxm"\ngpu_count = 1\n'
        'price_per_hour_usd = 3.2\npricing_type = "price-cap"\nseen = "2026-11"\nsource = "s"\nas_of = "2026-11"\n',
        encoding="utf-8",
    )
    with pytest.raises(FactError, match="price-cap.*not an offer"):
        load_facts(tmp_path)


def test_not_rentable_rows_are_gone() -> None:
    providers = {o.provider for o in CATALOG.offers} | {s.provider for s in load_price_signals(CATALOG)}
    assert not providers & {"China IDC (annual commit)", "Huatai procurement award"}
    assert not [o for o in CATALOG.offers if o.provider == "CTyun" and "per card" in o.instance]


def test_cli_lists_signals_apart_with_type_and_age(capsys) -> None:
    assert cli.main(["catalog", "offers"]) == 0
    out = capsys.readouterr().out
    offers, _, signals = out.partition("price signals (marketplace medians, price caps): not offers")
    assert "price-cap" not in offers and "marketplace-median" not in offers
    assert "price-cap" in signals and "marketplace-median" in signals and "days old" in signals
    assert "Hugging Face" in offers and "on-demand" in offers

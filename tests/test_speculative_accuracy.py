"""README's speculative-decoding table is what bench/speculative_accuracy.py computes now (issue 35): a change
to the timing model, its constants or the measured rows that moves a figure fails here until README is
rewritten (``python bench/speculative_accuracy.py --write``)."""

from __future__ import annotations

from bench import speculative_accuracy
from catalog.extra_facts import spec_measurements
from catalog.facts import load_facts


def test_readme_reports_the_bench_as_it_computes_now():
    lines, summary = speculative_accuracy.report()
    assert speculative_accuracy.readme_block() == lines
    assert summary["held_share"] >= speculative_accuracy.TARGET_SHARE
    assert summary["share"] >= speculative_accuracy.TARGET_SHARE


def test_every_row_has_a_source_and_names_catalog_models():
    catalog = load_facts()
    rows = spec_measurements()
    assert len(rows) >= 10 and len({r.source_url for r in rows}) >= 8
    assert len({catalog.model(r.target).family for r in rows}) >= 3  # type: ignore[union-attr]
    for r in rows:
        assert r.source_url.startswith("https://") and r.provenance.as_of, r.id
        assert catalog.model(r.target) is not None, r.id
        assert r.method != "draft" or catalog.model(r.draft) is not None, r.id
        assert r.speedup > 0


def test_the_shipped_constants_are_the_fit():
    catalog = load_facts()
    rows = spec_measurements()

    def fam(model_id: str) -> str:
        m = catalog.model(model_id)
        return m.family if m is not None else ""

    setups = [speculative_accuracy.Setup(r, catalog) for r in rows]
    fitted = speculative_accuracy.fit(setups, speculative_accuracy.alphas(setups, rows, fam))
    assert fitted == speculative_accuracy.COSTS

"""README's rig-calibration table is what bench/rig_calibration.py computes now (issue 38): a change to the
speed fit, the calibration rule or the data that moves a figure fails here until README is rewritten
(``python bench/rig_calibration.py --write``)."""

from __future__ import annotations

from bench import rig_calibration


def test_readme_reports_the_bench_as_it_computes_now():
    lines, medians = rig_calibration.report()
    assert rig_calibration.readme_block() == lines
    assert set(medians) == {"decode", "prefill"} and all(m > 0 for m in medians.values())


def test_one_anchor_run_meets_the_issue_s_targets():
    _, medians = rig_calibration.report()
    assert all(medians[kind] <= target for kind, target in rig_calibration.TARGETS.items()), medians

"""Calibration table aggregation (readbench.sim.calibrate), hand-computed."""

from __future__ import annotations

import pytest

from readbench.sim.calibrate import CalibrationRow, calibration_row


def test_row_pools_blind_reads_and_averages_the_rest():
    metrics = [
        {"read_calls": 3, "blind_reads": 3, "reads_per_file": 3.0, "reread_ratio": 0.0, "success": 1.0},
        {"read_calls": 5, "blind_reads": 1, "reads_per_file": 2.5, "reread_ratio": 0.4, "success": 0.0},
    ]
    assert calibration_row("sim-pager", metrics) == CalibrationRow(
        profile="sim-pager", samples=2, blind_read_share=4 / 8, reads_per_file=2.75, reread_ratio=0.2,
        success_rate=0.5)


def test_no_reads_gives_a_zero_blind_share():
    row = calibration_row("sim-diligent", [{"read_calls": 0, "blind_reads": 0, "reads_per_file": 0.0,
                                            "reread_ratio": 0.0, "success": 1.0}])
    assert (row.blind_read_share, row.success_rate) == (0.0, 1.0)


def test_missing_metric_and_empty_input_are_named():
    with pytest.raises(ValueError, match="sample 0 of 'sim-pager' has no metric 'reread_ratio'"):
        calibration_row("sim-pager", [{"read_calls": 1, "blind_reads": 1, "reads_per_file": 1.0, "success": 1.0}])
    with pytest.raises(ValueError, match="no samples with metrics for profile 'sim-pager'"):
        calibration_row("sim-pager", [])

"""tidy_table reads inspect logs written by inspect itself (see conftest.make_logs)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from readbench.analysis.table import (
    BASE_METRICS,
    CACHE_METRICS,
    IDENTITY_COLUMNS,
    cache_models_in,
    read_table,
    tidy_table,
    write_table,
)

from conftest import contract_metrics


def _metrics(variant, dcp, sid, epoch):
    success = 1.0 if (variant == "B" or sid.endswith("/1")) else 0.0
    stop = "solved" if success else ("turn_limit" if sid == "repoA/locate/2" else "wrong")
    base = {"stock": 1000.0, "B": 2000.0}[variant] + 10 * epoch
    return contract_metrics(success, stop, base)


def test_tidy_table_one_row_per_sample_epoch_arm(make_logs, tmp_path):
    log_dir = make_logs([{"variant": "stock", "dcp": "off"}, {"variant": "B", "dcp": "pi-dcp"}],
                        _metrics, fail_ids={"repoB/edit/1"}, epochs=2)
    df = tidy_table(log_dir)
    assert len(df) == 2 * 3 * 2
    expected_cols = list(IDENTITY_COLUMNS) + list(BASE_METRICS) + [
        f"{n}_{m}" for m in ("anthropic-5m", "openai") for n in CACHE_METRICS
    ]
    assert list(df.columns) == expected_cols
    assert cache_models_in(df) == ["anthropic-5m", "openai"]
    assert sorted(set(df["arm"])) == ["B × pi-dcp @ mockllm/model", "stock × off @ mockllm/model"]
    assert set(df["cache_models"]) == {"anthropic-5m,openai"}
    row = df[(df.variant == "stock") & (df.sample_id == "repoA/locate/2") & (df.epoch == 2)].iloc[0]
    assert (row["family"], row["source"], row["file_lines"], row["target_line"]) == ("locate", "repoA", 1200.0, 77.0)
    assert row["stop_reason"] == "turn_limit" and row["success"] == 0.0 and row["score_value"] == 0.0
    assert row["turns"] == 1000.0 + 20 + BASE_METRICS.index("turns")
    assert row["cost_usd_openai"] == 1000.0 + 20 + 200 + CACHE_METRICS.index("cost_usd")
    assert row["error"] == "" and row["limit"] == ""
    # the errored sample: inspect error recorded, no score; it is a failure with stop_reason
    # error, and what it used comes from its own history (issue 18: here it made no call)
    err = df[(df.variant == "B") & (df.sample_id == "repoB/edit/1")]
    assert len(err) == 2 and err["error"].str.contains("sandbox exploded").all()
    assert (err["success"] == 0.0).all() and (err["stop_reason"] == "error").all()
    assert err["score_value"].isna().all() and (err["turns"] == 0.0).all()
    # parquet round trip keeps every value
    out = write_table(df, tmp_path / "run" / "table.parquet")
    back = read_table(out)
    pd.testing.assert_frame_equal(back, df, check_dtype=False)


def test_tidy_table_dict_variant_uses_its_name(make_logs):
    log_dir = make_logs([{"variant": {"base": "B", "name": "B-tight", "max_lines": 50}, "dcp": "off",
                          "cache_models": ["openai"]}],
                        lambda v, d, s, e: contract_metrics(1.0, "solved", 5.0, models=("openai",)))
    df = tidy_table(log_dir)
    assert set(df["variant"]) == {"B-tight"} and set(df["cache_models"]) == {"openai"}
    assert cache_models_in(df) == ["openai"]
    assert np.all(df["cache_read_ratio_openai"] == 5.0 + 100 + CACHE_METRICS.index("cache_read_ratio"))


def test_tidy_table_errors_name_the_input(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a directory"):
        tidy_table(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no samples of task 'read_strategies' in logs under"):
        tidy_table(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_table(tmp_path / "missing.parquet")


def test_two_logs_of_one_arm_are_refused(make_logs):
    arm = [{"variant": "stock", "dcp": "off"}]
    make_logs(arm, _metrics)
    log_dir = make_logs(arm, _metrics)  # same directory: a second log of the same arm
    with pytest.raises(ValueError, match=r"sample 'repoA/locate/1' epoch 1 of arm 'stock × off @ mockllm/model' "
                                         r"appears 2 times across logs"):
        tidy_table(log_dir)

"""Spark's Hive catalog as the reader of our exported statistics and the writer of those we import.

A Hive-enabled session (embedded Derby) needs a JVM of its own, so tests/hive_catalog_session.py runs
in a child process and reports what Spark then says; the expected figures come from the rows here.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # the full lane only: a Spark session with Hive support in another process

HERE = os.path.dirname(__file__)


def _rows() -> list[dict]:
    rows = []
    for i in range(40):
        rows.append({
            "id": i,
            "x": None if i % 7 == 3 else (i * 37) % 23 - 5,
            "amount": [1.5, 1e10, -2.25, None, 0.001][i % 5],
            "f": [0.1, 2.5, None][i % 3],
            "price": [12.25, -3.5, 0.01, None][i % 4],
            "note": None if i % 6 == 0 else "n" * (1 + i % 9),
            "flag": i % 3 == 0,
            "day": f"2026-0{1 + i % 9}-1{i % 10}",
            "ts": None if i == 5 else f"2026-11-{10 + i % 20}T0{i % 10}:02:03.{i:06d}Z",
        })
    return rows


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    home = tmp_path_factory.mktemp("hive")
    rows_file = home / "rows.json"
    rows_file.write_text("\n".join(json.dumps(r) for r in _rows()))
    done = subprocess.run([sys.executable, os.path.join(HERE, "hive_catalog_session.py"), str(home), str(rows_file)],
                          capture_output=True, text=True, timeout=600, cwd=str(home),
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_spark_optimizer_uses_exported_row_count(report):
    assert "rowCount" not in report["plan_before"]
    assert "rowCount=40)" in report["plan_after"] and report["plan_now"] == report["plan_after"]


def test_the_hive_metastore_holds_exactly_the_exported_properties(report):
    assert report["stored_after_export"] == report["exported"]
    assert report["exported"]["spark.sql.statistics.numRows"] == "40"
    assert report["skipped"] == {}


def test_spark_reads_exported_column_stats(report):
    rows = _rows()
    described = report["spark_describes_export"]
    xs = [r["x"] for r in rows if r["x"] is not None]
    assert (described["x"]["min"], described["x"]["max"], described["x"]["num_nulls"]) == (
        str(min(xs)), str(max(xs)), str(40 - len(xs)))
    assert described["x"]["distinct_count"] == str(len(set(xs)))
    assert (described["amount"]["min"], described["amount"]["max"]) == ("-2.25", "1.0E10")
    assert (described["f"]["min"], described["f"]["max"], described["f"]["avg_col_len"]) == ("0.1", "2.5", "4")
    assert (described["price"]["min"], described["price"]["max"]) == ("-3.50", "12.25")
    assert (described["flag"]["min"], described["flag"]["max"], described["flag"]["distinct_count"]) == (
        "false", "true", "2")
    days = sorted(r["day"] for r in rows)
    assert (described["day"]["min"], described["day"]["max"]) == (days[0], days[-1])
    stamps = sorted(r["ts"] for r in rows if r["ts"])
    assert described["ts"]["min"] == stamps[0].replace("T", " ").replace("Z", " +0000")
    assert described["ts"]["num_nulls"] == "1"
    notes = [len(r["note"]) for r in rows if r["note"]]
    assert (described["note"]["avg_col_len"], described["note"]["max_col_len"]) == (
        str(math.ceil(sum(notes) / len(notes))), str(max(notes)))
    assert (described["note"]["min"], described["note"]["max"]) == ("NULL", "NULL")


def test_reading_spark_catalog_equals_spark_own_properties(report):
    assert report["native_from_params"] == report["native_described"]


def test_import_of_spark_analyze(report):
    xs = [r["x"] for r in _rows() if r["x"] is not None]
    assert report["imported"]["rows"] == 40
    assert "flag" in report["imported"]["skipped"]
    assert f"lowValue={min(xs)}, highValue={max(xs)}, numNulls={40 - len(xs)}" in report["imported_x"]


def test_a_mixed_case_column_gets_its_statistics_in_spark(report):
    """Spark's statsFromProperties looks `colStats.<name>` up by the name its schema spells: statistics
    written as `colStats.userid.*` would never reach a `userId` column's plan estimates."""
    assert report["mixed_case_keys"] and all(".userId." in k for k in report["mixed_case_keys"])
    described = report["mixed_case_described"]
    assert (described["min"], described["max"], described["distinct_count"]) == ("0", "3", "4")
    # 40 rows, 4 distinct values: the filter userId = 2 is estimated at 10 rows once the column has statistics
    assert "rowCount=10)" in report["mixed_case_filter_after"], report["mixed_case_filter_after"]
    assert "rowCount=10)" not in report["mixed_case_filter_before"]


def test_partition_statistics_go_both_ways_as_spark_keeps_them(report):
    """Spark's alterPartitions keeps a partition's statistics as spark.sql.statistics.totalSize and
    .numRows in the partition's parameters, and reads them back (DESCRIBE ... PARTITION shows
    "Partition Statistics: N bytes, M rows"); the lab writes and reads those of partitioned tables."""
    exported = report["daily_partition_properties"]
    assert sorted(exported) == ["ds=a", "ds=b"]
    assert [exported[p]["spark.sql.statistics.numRows"] for p in ("ds=a", "ds=b")] == ["10", "20"]
    seen = report["daily_spark_partitions"]
    assert {p: rows for p, (_, rows) in seen.items()} == {"ds=a": 10, "ds=b": 20}
    assert all(int(exported[p]["spark.sql.statistics.totalSize"]) == size for p, (size, _) in seen.items())
    assert report["daily_imported"] == ["ds=a", "ds=b"]
    assert report["daily_native_rows"] == {"ds=a": "10", "ds=b": "20"}


def test_spark_uses_the_histogram_exported_from_our_sketch_and_ours_keeps_spark_s(report):
    found = report["histograms"]
    actual = found["actual"]
    assert actual == 1_800
    described = found["described"]
    assert described["histogram"].startswith("height: ") and "num_of_bins: 254" in described["histogram"]
    assert any(key.startswith("bin_") for key in described)
    # without a histogram Spark spreads the rows evenly between min and max: about 1 % of them
    assert found["estimate_without"] < 100
    # with ours it follows the distribution: within the sketch's rank error plus a bin (1/254) of the rows
    assert abs(found["estimate_with"] - actual) <= (0.0133 + 1 / 254) * 2_000 + 1
    assert abs(found["native_estimate"] - actual) <= (0.0133 + 1 / 254) * 2_000 + 1
    # Spark's own histogram imported: its quartiles within a bin of the exact ones
    exact = found["exact_quartiles"]
    assert found["imported_quartiles"] is not None
    for ours, want in zip(found["imported_quartiles"], exact, strict=True):
        assert abs(ours - want) <= 1 or want >= 100, (found["imported_quartiles"], exact)


def test_a_partition_filter_is_estimated_as_with_sparks_own_analyze(report):
    """The lab exports the partition column's statistics too: Spark's estimate of `p = '2'` (rows and bytes)
    on the lab's figures is the one its own ANALYZE gives on the same files."""
    filtered = report["filtered"]
    assert filtered["lab"] == filtered["native"] and any("rowCount=" in line for line in filtered["lab"])


def test_figures_of_a_tiered_analyze_are_exported_with_a_property_naming_their_tier(report):
    """The NDV of `s` from its dictionary pages (exact), with `v` written and gathered from every value: Spark
    reads the figures as its own and ignores the mark, which its own ANALYZE removes with the figures."""
    tiered = report["tiered"]
    exported = tiered["exported"]
    assert exported["spark.sql.statistics.colstats.tiers"] == "s=metadata"
    assert exported["spark.sql.statistics.colStats.s.distinctCount"] == "4"  # '0'..'3'
    assert tiered["described"]["distinct_count"] == "4" and tiered["described"]["num_nulls"] == "0"
    assert "spark.sql.statistics.colstats.tiers" not in tiered["after_spark_analyze"]
    assert tiered["after_spark_analyze"]["spark.sql.statistics.colStats.s.distinctCount"] == "4"

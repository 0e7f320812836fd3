"""KLL distribution sketches (Hive 4's HISTOGRAM, `hive.stats.kll.enable`): gathered in the one Spark
pass, stored per partition, merged up, and asked for quartiles and ranks; every figure is checked
against the exact one pandas computes over the same rows."""
from __future__ import annotations

import datetime as dt
import json
import math
import os
from decimal import Decimal
from itertools import pairwise

import numpy as np
import pandas as pd
import pytest

from colstats_lab.column_statistics.quantiles import Distribution, rank_error

DAYS = ("d1", "d2")
ROWS = 1_500  # above KLL's k = 200, so the sketches leave their exact mode
TYPES = {"b": "bigint", "i": "int", "d": "double", "f": "float", "m": "decimal(12,2)", "dt": "date", "ts": "timestamp",
         "c": "bigint"}


def _rows(day_index: int) -> pd.DataFrame:
    rng = np.random.default_rng(day_index)
    n = ROWS
    skewed = np.where(rng.random(n) < 0.4, 7, rng.integers(0, 10_000, n))  # 40 % one value
    doubles = rng.normal(day_index * 3.0, 1.0, n)
    doubles[::50] = np.nan
    floats = rng.exponential(2.0, n).astype("float32")
    frame = pd.DataFrame({
        "b": pd.array(skewed, dtype="Int64"),
        "i": pd.array(rng.integers(-500, 500, n), dtype="Int32"),
        "d": doubles,
        "f": floats,
        "m": [None if k % 11 == 0 else Decimal(f"{v:.2f}")
              for k, v in enumerate(rng.uniform(-100, 100, n))],
        "dt": [dt.date(2024, 1, 1) + dt.timedelta(days=int(v)) for v in rng.integers(0, 400, n)],
        "ts": [dt.datetime(2024, 1, 1) + dt.timedelta(seconds=int(v)) for v in rng.integers(0, 10**7, n)],
        "c": pd.array([42] * n, dtype="Int64"),  # a constant column
    })
    frame.loc[frame.index % 7 == 0, "b"] = pd.NA  # nulls
    return frame


def _sketch_units(column: str, values: pd.Series) -> np.ndarray:
    """The non-null, non-NaN values in the units the sketches hold (days, microseconds, floats)."""
    present = values.dropna()
    if column == "dt":
        return np.array([(v - dt.date(1970, 1, 1)).days for v in present], dtype=np.int64)
    if column == "ts":
        return np.array([int((v - dt.datetime(1970, 1, 1)).total_seconds() * 1_000_000) for v in present],
                        dtype=np.int64)
    if column == "m":
        return np.array([float(v) for v in present])
    out = present.to_numpy(dtype=float)
    return out[~np.isnan(out)]


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory, spark):
    from colstats_lab import Lab

    lab = Lab(home=str(tmp_path_factory.mktemp("distributions")), spark=spark)
    lab.set("hive.stats.kll.enable", True)
    columns = ", ".join(f"{name} {type_name}" for name, type_name in TYPES.items())
    lab.sql(f"CREATE TABLE t ({columns}) PARTITIONED BY (ds STRING)")
    frames = {}
    for index, day in enumerate(DAYS):
        frames[day] = _rows(index)
        lab.tables["t"].write(frames[day], partition={"ds": day})
    yield lab, frames
    lab.close()


def _check_ranks(distribution: Distribution, exact: np.ndarray) -> None:
    """Quartiles and CDF values within KLL's stated rank error of the exact ranks."""
    bound = rank_error()
    values = np.sort(exact)
    n = len(values)
    assert distribution.count == n
    for rank, quartile in zip((0.25, 0.5, 0.75), distribution.quartiles(), strict=True):
        # the returned value's exact rank range [below, at or below] must come within the bound of the rank
        below = np.searchsorted(values, quartile, side="left") / n
        at_or_below = np.searchsorted(values, quartile, side="right") / n
        assert below - bound <= rank <= at_or_below + bound, (rank, quartile, below, at_or_below)
    for probe in np.quantile(values, [0.1, 0.33, 0.5, 0.9]):
        exact_below = np.searchsorted(values, probe, side="left") / n
        assert abs(distribution.fraction_below(probe.item()) - exact_below) <= bound


@pytest.mark.parametrize("column", sorted(TYPES))
def test_each_partition_and_the_table_hold_quartiles_and_ranks_within_kll_error(analyzed, column):
    lab, frames = analyzed
    ms = lab.metastore
    type_name = TYPES[column]
    per_partition = ms.column_stats.get_partitions_statistics("default", "t", [f"ds={d}" for d in DAYS], [column])
    for day in DAYS:
        obj = per_partition[f"ds={day}"].statsObj[0]
        distribution = Distribution.of(obj.statsData.value.histogram, type_name)
        assert distribution is not None, f"ds={day} {column} has no sketch"
        _check_ranks(distribution, _sketch_units(column, frames[day][column]))
    table_level = ms.column_stats.get_table_statistics("default", "t", [column]).statsObj[0]
    merged = Distribution.of(table_level.statsData.value.histogram, type_name)
    assert merged is not None
    _check_ranks(merged, _sketch_units(column, pd.concat([frames[d][column] for d in DAYS])))


def test_hive_prints_the_quartiles_with_the_exclusive_criterion(lab):
    lab.sql("SET hive.stats.kll.enable = true")  # Hive's statement, as well as lab.set
    lab.sql("CREATE TABLE q (b BIGINT, f FLOAT, day DATE, s STRING)")
    values = [2, 2, 2, 2, 2, 2, 2, 2, 3, 4, 5, 6, 7]  # the example in Hive's stats_histogram tests
    lab.tables["q"].write(pd.DataFrame({"b": values, "f": [v / 10 for v in values],
                                        "day": [dt.date(2026, 1, v) for v in values], "s": ["x"] * len(values)}))
    lab.sql("ANALYZE TABLE q COMPUTE STATISTICS FOR COLUMNS")

    def histogram(column):
        frame = lab.sql(f"DESCRIBE FORMATTED q {column}").df
        return dict(zip(frame.info_name, frame.info_value, strict=True))["histogram"]

    assert histogram("b") == "Q1: 2, Q2: 2, Q3: 4"
    assert histogram("f") == "Q1: 0.2, Q2: 0.2, Q3: 0.4"  # float's digits, as Java prints a float
    assert histogram("day") == "Q1: 2026-01-02, Q2: 2026-01-02, Q3: 2026-01-04"
    assert histogram("s") == ""  # strings have no sketch
    # where the criteria differ: exclusive asks for the value at index floor(r * n), inclusive one before
    lab.sql("CREATE TABLE four (b BIGINT)")
    lab.tables["four"].write(pd.DataFrame({"b": [4, 1, 3, 2]}))
    frame = lab.sql("DESCRIBE FORMATTED four b").df
    assert dict(zip(frame.info_name, frame.info_value, strict=True))["histogram"] == "Q1: 2, Q2: 3, Q3: 4"


def test_without_the_setting_no_sketch_is_kept_and_a_partial_one_never_reaches_the_table(lab):
    lab.sql("CREATE TABLE p (x BIGINT) PARTITIONED BY (ds STRING)")
    lab.tables["p"].write(pd.DataFrame({"x": range(100)}), partition={"ds": "a"})
    lab.tables["p"].write(pd.DataFrame({"x": range(100, 300)}), partition={"ds": "b"})
    ms = lab.metastore
    assert ms.column_stats.get_table_statistics("default", "p", ["x"]).statsObj[0].statsData.value.histogram is None
    frame = lab.sql("DESCRIBE FORMATTED p x").df
    assert dict(zip(frame.info_name, frame.info_value, strict=True))["histogram"] == ""

    lab.set("hive.stats.kll.enable", True)
    lab.sql("ANALYZE TABLE p PARTITION (ds='b') COMPUTE STATISTICS FOR COLUMNS")
    parts = ms.column_stats.get_partitions_statistics("default", "p", ["ds=a", "ds=b"], ["x"])
    assert parts["ds=a"].statsObj[0].statsData.value.histogram is None
    assert Distribution.of(parts["ds=b"].statsObj[0].statsData.value.histogram, "bigint").count == 200
    # a table-level sketch of ds=b alone would describe other rows than the table's
    assert ms.column_stats.get_table_statistics("default", "p", ["x"]).statsObj[0].statsData.value.histogram is None

    lab.sql("ANALYZE TABLE p PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS")
    table = Distribution.of(ms.column_stats.get_table_statistics("default", "p", ["x"]).statsObj[0].statsData.value.histogram,
                            "bigint")
    assert table.count == 300 and table.low == 0 and table.high == 299


def test_sketches_once_kept_stay_kept_by_a_session_without_the_setting_until_the_table_says_not(lab, spark):
    from colstats_lab import Lab

    lab.set("hive.stats.kll.enable", True)
    lab.sql("CREATE TABLE k (x BIGINT)")
    lab.tables["k"].write(pd.DataFrame({"x": range(50)}))
    lab.sql("ANALYZE TABLE k COMPUTE STATISTICS FOR ALL COLUMNS")
    assert lab.resolve("k").parameters["colstats.kll.enable"] == "true"

    other = Lab(home=lab.home, spark=spark)  # a new session: hive.stats.kll.enable is off there
    try:
        other.tables["k"].write(pd.DataFrame({"x": range(50, 80)}))
        other.sql("ANALYZE TABLE k COMPUTE STATISTICS FOR ALL COLUMNS")
        histogram = other.metastore.column_stats.get_table_statistics("default", "k", ["x"]).statsObj[0].statsData.value.histogram
        assert Distribution.of(histogram, "bigint").count == 80
        other.sql("ALTER TABLE k SET TBLPROPERTIES ('colstats.kll.enable'='false')")  # the table's own choice
        other.sql("ANALYZE TABLE k COMPUTE STATISTICS FOR ALL COLUMNS")
        assert other.metastore.column_stats.get_table_statistics("default", "k",
                                                                 ["x"]).statsObj[0].statsData.value.histogram is None
    finally:
        other.close()


def test_whether_a_sketch_compacted_is_read_off_its_preamble_as_loading_it_tells(lab):
    """The history tells an estimating sketch (whose bytes differ from run to run) without loading it: every
    sketch Spark wrote, exact (up to k = 200 values) or compacted, for longs, floats and doubles alike."""
    from colstats_lab.column_statistics.quantiles import compacted

    lab.set("hive.stats.kll.enable", True)
    lab.sql("CREATE TABLE k (b BIGINT, f FLOAT, d DOUBLE) PARTITIONED BY (ds STRING)")
    for day, rows in (("one", 1), ("few", 150), ("many", 5_000)):
        lab.tables["k"].write(pd.DataFrame({"b": pd.array(range(rows), dtype="Int64"), "f": [v / 3 for v in range(rows)],
                                            "d": [v / 7 for v in range(rows)]}).astype({"f": "float32"}), partition={"ds": day})
    seen = set()
    for stats in lab.metastore.column_stats.get_partitions_statistics("default", "k", ["ds=one", "ds=few", "ds=many"],
                                                                 ["b", "f", "d"]).values():
        for obj in stats.statsObj:
            blob = obj.statsData.value.histogram
            estimating = Distribution.of(blob, obj.colType)._sketch.is_estimation_mode()
            assert compacted(blob) == estimating, (stats.statsDesc.partName, obj.colName)
            seen.add((obj.colType, estimating))
    assert seen == {(t, e) for t in ("bigint", "float", "double") for e in (False, True)}


def test_merged_long_sketches_hold_their_ranks_and_spark_reads_them_back(lab, spark):
    """Longs sketches are merged as doubles where every item is below 2^53 and as Python ints where one is not
    (here one partition's, so that column's table-level merge mixes both): the table's sketches hold KLL's
    rank error against numpy's exact ranks, in Python and in Spark's own functions over the bytes we wrote."""
    from pyspark.sql import functions as F

    lab.set("hive.stats.kll.enable", True)
    lab.sql("CREATE TABLE longs (small BIGINT, huge BIGINT) PARTITIONED BY (ds STRING)")
    rng = np.random.default_rng(5)
    frames = []
    for day, base in (("d1", 2**60), ("d2", 0)):
        frame = pd.DataFrame({"small": rng.integers(-10**15, 10**15, ROWS), "huge": base + rng.integers(0, 10**9, ROWS)})
        lab.tables["longs"].write(frame, partition={"ds": day})
        frames.append(frame)
    bound = rank_error()
    for column in ("small", "huge"):
        exact = np.sort(np.concatenate([f[column].to_numpy() for f in frames]))
        blob = lab.metastore.column_stats.get_table_statistics("default", "longs", [column]).statsObj[0].statsData.value.histogram
        _check_ranks(Distribution.of(blob, "bigint"), exact)
        row = spark.createDataFrame([(bytearray(blob),)], "s binary").select(
            F.kll_sketch_get_n_bigint("s").alias("n"),
            *[F.kll_sketch_get_quantile_bigint("s", F.lit(r)).alias(f"q{i}") for i, r in enumerate((0.0, 0.5, 1.0))]
        ).first()
        assert row["n"] == len(exact)
        assert (row["q0"], row["q2"]) == (exact[0], exact[-1])
        median_rank = np.searchsorted(exact, row["q1"], side="right") / len(exact)
        assert abs(median_rank - 0.5) <= bound, (column, row["q1"])


def test_an_append_merges_the_written_rows_sketch_into_the_partitions(lab):
    lab.set("hive.stats.kll.enable", True)
    lab.sql("CREATE TABLE a (x DOUBLE) PARTITIONED BY (ds STRING)")
    lab.tables["a"].write(pd.DataFrame({"x": [float(v) for v in range(1000)]}), partition={"ds": "a"})
    lab.tables["a"].write(pd.DataFrame({"x": [float(v) for v in range(1000, 3000)] + [math.nan, None]}),
                          partition={"ds": "a"})
    obj = lab.metastore.column_stats.get_partitions_statistics("default", "a", ["ds=a"], ["x"])["ds=a"].statsObj[0]
    distribution = Distribution.of(obj.statsData.value.histogram, "double")
    assert distribution.count == 3000  # the null and the NaN are in no sketch
    _check_ranks(distribution, np.arange(3000, dtype=float))


def test_the_statistics_view_draws_each_sketched_columns_distribution_and_its_quartiles_per_partition(analyzed):
    lab, frames = analyzed
    view = lab.views.stats("t")
    assert list(view.column.options) == sorted(TYPES, key=list(TYPES).index)  # every column here has a sketch
    view.column.value = "d"
    histogram, boxes = view.distribution_figures
    exact = np.sort(_sketch_units("d", pd.concat([frames[d]["d"] for d in DAYS])))
    assert sum(histogram.data[0].y) == pytest.approx(1.0)  # the bars hold every value
    edges = np.linspace(exact[0], exact[-1], len(histogram.data[0].y) + 1)
    for share, (low, high) in zip(histogram.data[0].y, pairwise(edges), strict=True):  # each bar within twice a bound's error
        assert abs(share - ((exact >= low) & (exact < high)).mean()) <= 2 * rank_error() + 1 / len(exact)
    assert boxes.data[0].x == tuple(f"ds={d}" for d in DAYS)
    by_partition = lab.tables["t"].inspect.quartiles("d")
    for day, median in zip(DAYS, boxes.data[0].median, strict=True):
        values = np.sort(_sketch_units("d", frames[day]["d"]))
        at = np.searchsorted(values, median, side="left") / len(values)
        assert abs(at - 0.5) <= rank_error()  # the box's median is the partition's, within the sketch's error
    assert list(by_partition["median"]) == list(boxes.data[0].median)
    shown = view.table_html.value
    assert "Q1, median, Q3" in shown and "<br>" not in shown  # each row reads as one line
    view.level.value = "ds=d1"  # one partition: its histogram alone
    assert len(view.distribution_figures) == 1


def test_drills_levels_keep_a_sketch_per_unit_merged_up_and_refreshed_incrementally(lab, tmp_path):
    from metadata_tables import _as_metadata, build_table, make_rows, write_file

    root = str(tmp_path / "events")
    written = build_table(root, partitions=("d1", "d2"), files_per_partition=2, rows_per_file=300)
    lab.register_external("events", root, partition_types={"ds": "string"})
    lab.set("metastore.enabled", True)
    lab.sql("ANALYZE TABLE events REFRESH METADATA 'FILE' LEVEL")
    stored = lab.metastore.table_metadata.get_table_metadata("default", "events")
    assert all(c.histogram is None for u in stored.units for c in u.columns.values())  # the setting is off

    lab.set("hive.stats.kll.enable", True)
    outcome = lab.sql("ANALYZE TABLE events REFRESH METADATA 'FILE' LEVEL").details
    assert outcome.kind == "full" and "KLL" in outcome.reason  # the last refresh had no sketches to reuse

    def exact(values, type_name):
        present = [_as_metadata(v, type_name) for v in values if v is not None]
        return np.array([v for v in present if not (isinstance(v, float) and math.isnan(v))])

    def check(unit_type: str, rows_of):
        for unit in lab.metastore.table_metadata.get_table_metadata("default", "events").of_type(unit_type):
            for name, type_name in (("x", "int"), ("amount", "double"), ("d", "date"), ("ts", "timestamp")):
                sketch = Distribution.of(unit.columns[name].histogram, type_name)
                _check_ranks(sketch, exact(rows_of(unit, name), type_name))

    check("FILE", lambda unit, name: written[unit.path][name])
    everything = lambda unit, name: [v for rows in written.values() for v in rows[name]]  # noqa: E731
    check("TABLE", everything)

    added = os.path.join(root, "ds=d2", "part-9.parquet")  # another job adds a file
    written[added] = make_rows(99, 250, start_id=99_000, x_range=(500, 600))
    write_file(added, written[added])
    outcome = lab.sql("ANALYZE TABLE events REFRESH METADATA 'FILE' LEVEL").details
    assert outcome.kind == "incremental" and outcome.scanned_files == [added]
    check("TABLE", everything)


def test_the_tidy_frame_and_the_json_report_carry_describes_quartiles(analyzed, tmp_path):
    lab, _ = analyzed
    frame = lab.tables["t"].inspect.stats()
    for column in ("b", "dt", "ts"):
        described = lab.sql(f"DESCRIBE FORMATTED t {column}").df
        histogram = dict(zip(described.info_name, described.info_value, strict=True))["histogram"]
        row = frame[frame.partition.isna() & (frame.column == column)].iloc[0]
        shown = [str(v) if column != "ts" else v.strftime("%Y-%m-%d %H:%M:%S") for v in (row["q1"], row["median"], row["q3"])]
        assert histogram == ", ".join(f"Q{i}: {v}" for i, v in enumerate(shown, 1))
    assert frame[frame.column == "b"]["q1"].notna().all()  # every partition's too
    report = json.loads(open(lab.tables["t"].report(str(tmp_path / "t.json"))).read())
    dates = [r for r in report["statistics"] if r["column"] == "dt" and r["partition"] is None][0]
    assert dates["q1"] == str(frame[frame.partition.isna() & (frame.column == "dt")].iloc[0].q1)


def test_the_html_report_shows_quartiles_as_text_not_markup(analyzed, tmp_path):
    """The report's "Q1, median, Q3" cells are HTML the page renders: the reader sees the values, never
    `<span ...>` spelled out (which also pushed the status column off the page)."""
    import html as html_module
    import re

    lab, _ = analyzed
    page = open(lab.tables["t"].report(str(tmp_path / "t.html")), encoding="utf-8").read()
    assert "&lt;span" not in page
    row = lab.tables["t"].inspect.stats().query("partition.isna() and column == 'b'").iloc[0]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", page)
    text = [html_module.unescape(re.sub(r"<[^>]+>", "", c)) for c in cells]
    from colstats_lab.ui.format import number

    assert " / ".join(number(row[q]) for q in ("q1", "median", "q3")) in text


def test_quartiles_of_timestamps_fit_their_cell_to_the_second_and_a_shared_day_once():
    from colstats_lab.column_statistics.model import Timestamp
    from colstats_lab.frames import FRAME_COLUMNS
    from colstats_lab.ui.stats_view import display_frame

    stamps = [Timestamp.from_datetime(dt.datetime(2026, 11, 15, h, 30, 0, 123456)) for h in (9, 12, 18)]
    frame = pd.DataFrame([dict(dict.fromkeys(FRAME_COLUMNS), column="ts", type="timestamp", quartiles=stamps,
                               accurate=True, reason="")], dtype=object)
    cell = display_frame(frame)["Q1, median, Q3"][0]
    text = __import__("re").sub(r"<[^>]+>", "", cell)
    assert text == "2026-11-15 09:30:00 / 12:30:00 / 18:30:00"

"""Data a user brings, end to end: write -> ANALYZE (Hive's and Drill's forms) -> DESCRIBE FORMATTED ->
TableHandle.skew and %skew -> lab.explain -> the statistics, skew and pruning views -> Spark's properties.

Every figure is checked against Spark's own aggregates over the same rows (the DataFrame written),
computed here and not by the code under test.
"""
from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from pyspark.sql import functions as F

from colstats_lab.errors import ParseError
from colstats_lab.frames import level_frame
from colstats_lab.metastore import DEFAULT_PARTITION_NAME
from colstats_lab.stats.spark_properties import (
    CatalogStatistics,
    column_stat_from_hive,
    stats_from_properties,
    stats_to_properties,
    to_external_string,
)

HLL_BOUND = 0.05  # lgK 12: about 1.6 % standard error; 5 % is over three of them


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _oracle(frame, column: str) -> dict:
    """Spark's own figures over the rows written."""
    ref = F.col(f"`{column}`")
    row = frame.agg(F.count(F.lit(1)).alias("rows"), F.count(ref).alias("non_null"), F.min(ref).alias("min"),
                    F.max(ref).alias("max"), F.count_distinct(ref).alias("ndv")).collect()[0]
    return row.asDict()


def _per_partition_nulls(frame, column: str) -> dict:
    rows = frame.groupBy("ds").agg(F.sum(F.col(f"`{column}`").isNull().cast("int")).alias("n")).collect()
    return {r["ds"]: r["n"] for r in rows}


def end_to_end(lab, spark, name: str, columns_ddl: str, frame, checked: list[str], skew_column: str | None = None):
    """Runs every entry point on `frame` (with a `ds` column) written into a new table `name`."""
    lab.sql(f"CREATE TABLE {name} ({columns_ddl}) PARTITIONED BY (ds STRING)")
    lab.tables[name].write(frame)
    lab.sql(f"ANALYZE TABLE {name} PARTITION (ds) COMPUTE STATISTICS FOR ALL COLUMNS")
    table = lab.metastore.catalog.get_table("default", name)
    total = frame.count()
    assert int(table.parameters["numRows"]) == total
    for column in checked:
        key = column.lower()
        oracle = _oracle(frame, column)
        stats = lab.metastore.column_stats.get_table_column_statistics("default", name, key)
        assert stats.isStatsCompliant, column
        data = stats.obj(key).statsData.value
        assert data.numNulls == total - oracle["non_null"], column
        if hasattr(data, "numDVs") and oracle["ndv"] is not None:
            assert abs(data.numDVs - oracle["ndv"]) <= max(1, HLL_BOUND * oracle["ndv"]), column
        if hasattr(data, "lowValue") and oracle["non_null"]:
            answer = lab.sql(f"SELECT min(`{column}`), max(`{column}`), count(`{column}`) FROM {name}")
            assert answer.answered_from == "stats", answer.reason
            low, high, count = answer.df.iloc[0].tolist()
            assert _same(_plain(low), _plain(oracle["min"])) and _same(_plain(high), _plain(oracle["max"])), column
            assert count == oracle["non_null"]
        if hasattr(data, "maxColLen"):
            lengths = frame.agg(F.max(F.length(F.col(f"`{column}`"))).alias("m"),
                                F.sum(F.coalesce(F.length(F.col(f"`{column}`")), F.lit(0))).alias("s")).collect()[0]
            assert data.maxColLen == (lengths["m"] or 0)
            assert data.avgColLen == pytest.approx((lengths["s"] or 0) / total if total else 0.0)
        described = lab.sql(f"DESCRIBE FORMATTED {name} `{column}`").df.set_index("info_name")["info_value"]
        assert described["num_nulls"] == str(total - oracle["non_null"])
        assert described["col_name"] == key
        # Spark's properties, and back
        spark_stat = column_stat_from_hive(stats.obj(key), total)
        props = stats_to_properties(CatalogStatistics(int(table.parameters["totalSize"]), total, {key: spark_stat}),
                                    [key])
        back = stats_from_properties(props, [key])
        assert back.rowCount == total and back.colStats[key].nullCount == total - oracle["non_null"]
        if spark_stat.min is not None:
            assert spark_stat.min == to_external_string(oracle["min"], table.column(key).type)
    # Drill's form over the same files
    lab.set("metastore.enabled", True)
    lab.sql(f"ANALYZE TABLE {name} REFRESH METADATA 'ROW_GROUP' LEVEL COMPUTE STATISTICS")
    meta = lab.tables[name].inspect.metadata("TABLE")
    for column in checked:
        row = meta[meta.column == column.lower()].iloc[0]
        assert row["rows"] == total and row["nulls"] == total - _oracle(frame, column)["non_null"]
    # the statistics view: the table level and each partition
    frame_out, rows = level_frame(lab.metastore, table)
    assert rows == total
    view = lab.views.stats(name)
    for part in lab.metastore.catalog.get_partition_names("default", name):
        view.level.value = part
    # skew and pruning
    column = (skew_column or checked[0])
    report = lab.tables[name].skew(column.lower(), mode="exact")
    counts = {_key(r[0]): r[1] for r in frame.where(F.col(f"`{column}`").isNotNull()).groupBy(f"`{column}`")
              .count().collect()}
    top = report.for_partition()
    for value, count in zip(top["value"], top["count"], strict=True):
        assert counts[_key(value)] == count
    assert report.null_count() == total - sum(counts.values())
    lab.views.skew(name, column.lower(), mode="approx")
    shell = InteractiveShell.instance()
    shell.user_ns["lab"] = lab
    shell.run_line_magic("load_ext", "colstats_lab")
    with capture_output() as captured:
        shell.run_line_magic("skew", f'"{name}.{column.lower()}" --lab lab --top 3')
    assert "Traceback" not in captured.stderr
    query = f"SELECT * FROM {name} WHERE `{column}` IS NULL"
    explained = lab.explain(query)
    nulls = _per_partition_nulls(frame, column)
    for decision in explained.decisions:
        if decision.level == "partition" and not decision.kept:
            value = decision.identifier.split("=", 1)[1]
            assert nulls.get(None if value == DEFAULT_PARTITION_NAME else _unescape(value), 0) == 0, decision
    lab.views.pruning(query)
    scanned = lab.sql(f"SELECT count(*) AS n FROM {name} WHERE `{column}` IS NULL")
    assert scanned.df["n"][0] == sum(nulls.values())
    return table


def _plain(value):
    if isinstance(value, Decimal):
        return value.normalize()
    if hasattr(value, "to_pydatetime"):
        return value.to_pydatetime()
    return value


def _key(value):
    """A value as a dict key: NaN equals NaN here, as Spark groups it."""
    return "NaN" if isinstance(value, float) and math.isnan(value) else _plain(value)


def _unescape(text: str) -> str:
    from colstats_lab.column_statistics.names import parse_part_name

    return parse_part_name(f"ds={text}")[0][1]


@pytest.mark.slow  # the full lane: seconds of Spark work the fast lane's budget has no room for
def test_a_column_of_nulls_only(lab, spark):
    frame = spark.createDataFrame([(i, None, None, f"d{i % 2}") for i in range(6)], "id bigint, x int, s string, ds string")
    end_to_end(lab, spark, "allnull", "id BIGINT, x INT, s STRING", frame, ["x", "s"])
    x = lab.metastore.column_stats.get_table_column_statistics("default", "allnull", "x").obj("x").statsData.longStats
    assert (x.lowValue, x.highValue, x.numNulls, x.numDVs) == (None, None, 6, 0)
    answer = lab.sql("SELECT min(x), max(x), count(x) FROM allnull")
    assert answer.answered_from == "stats" and answer.df.iloc[0].tolist()[2] == 0
    assert all(v is None or (isinstance(v, float) and math.isnan(v)) for v in answer.df.iloc[0].tolist()[:2])
    assert lab.tables["allnull"].skew("x").recommended == []


@pytest.mark.slow
def test_a_column_of_nan_only(lab, spark):
    frame = spark.createDataFrame([(i, float("nan"), f"d{i % 2}") for i in range(6)], "id bigint, d double, ds string")
    end_to_end(lab, spark, "nans", "id BIGINT, d DOUBLE", frame, ["d"])
    d = lab.metastore.column_stats.get_table_column_statistics("default", "nans", "d").obj("d").statsData.doubleStats
    assert math.isnan(d.lowValue) and math.isnan(d.highValue) and d.numDVs == 1 and d.numNulls == 0


@pytest.mark.slow
def test_only_empty_strings(lab, spark):
    frame = spark.createDataFrame([(i, "", f"d{i % 3}") for i in range(9)], "id bigint, s string, ds string")
    end_to_end(lab, spark, "empties", "id BIGINT, s STRING", frame, ["s"])
    s = lab.metastore.column_stats.get_table_column_statistics("default", "empties", "s").obj("s").statsData.stringStats
    assert (s.maxColLen, s.avgColLen, s.numDVs, s.numNulls) == (0, 0.0, 1, 0)
    assert lab.tables["empties"].skew("s").recommended == []  # one value holds every row: nothing stands out


@pytest.mark.slow  # the full lane: seconds of Spark work the fast lane's budget has no room for
def test_a_partition_with_no_rows_and_one_holding_99_percent(lab, spark):
    rows = [(i, i % 7, "big") for i in range(990)] + [(i, 100 + i, "small") for i in range(10)]
    frame = spark.createDataFrame(rows, "id bigint, x int, ds string")
    end_to_end(lab, spark, "lopsided", "id BIGINT, x INT", frame, ["x"])
    lab.tables["lopsided"].write(spark.createDataFrame([], "id bigint, x int"), partition={"ds": "empty"})
    lab.sql("ALTER TABLE lopsided ADD PARTITION (ds='added')")
    lab.sql("ANALYZE TABLE lopsided PARTITION (ds) COMPUTE STATISTICS FOR ALL COLUMNS")
    answer = lab.sql("SELECT count(*), min(x), max(x) FROM lopsided")
    assert answer.answered_from == "stats" and answer.df.iloc[0].tolist() == [1000, 0, 109]
    empty = lab.sql("SELECT count(*), min(x) FROM lopsided WHERE ds = 'empty'")
    assert empty.answered_from == "stats" and empty.df.iloc[0, 0] == 0
    report = lab.tables["lopsided"].skew("x")
    assert report.totals["ds=big"] == 990 and "ds=empty" not in report.partitions
    explained = lab.explain("SELECT * FROM lopsided WHERE x > 200")
    assert explained.totals()["rows_kept"] == 0


@pytest.mark.slow
def test_names_with_spaces_capitals_and_unicode(lab, spark):
    frame = spark.createDataFrame([(i, f"ü{i % 3}", float(i), f"d{i % 2}") for i in range(8)],
                                  "`My Col` int, `Ünï` string, UPPER double, ds string")
    end_to_end(lab, spark, "odd_names", "`My Col` INT, `Ünï` STRING, UPPER DOUBLE", frame,
               ["My Col", "Ünï", "UPPER"], skew_column="Ünï")
    described = lab.sql("DESCRIBE odd_names").df
    assert described["col_name"].tolist()[:3] == ["my col", "ünï", "upper"]
    # a table whose own name holds capitals and non-ASCII letters, scanned by a query (a temporary view of it);
    # a space is no part of a table's name (Hive's rule: a name is never a path)
    with pytest.raises(ParseError, match="holds U\\+0020"):
        lab.sql("CREATE TABLE `Odd Table ü` (`My Col` INT)")
    lab.sql("CREATE TABLE `Odd_Table_ü` (`My Col` INT) PARTITIONED BY (ds STRING)")
    lab.tables["Odd_Table_ü"].write(frame.select("`My Col`", "ds"))
    scanned = lab.sql("SELECT ds, sum(`My Col`) AS s FROM `odd_table_ü` GROUP BY ds ORDER BY ds")
    assert scanned.answered_from == "scan" and scanned.df.values.tolist() == [["d0", 12], ["d1", 16]]
    joined = lab.sql("SELECT count(*) AS n FROM `Odd_Table_ü` a JOIN odd_names b ON a.`My Col` = b.`My Col`")
    assert joined.df.n[0] == 8


@pytest.mark.slow
def test_partition_values_with_slashes_equals_percent_spaces_unicode_and_null(lab, spark):
    values = ["a/b", "k=v", "50%", "with space", "ünï", None]
    frame = spark.createDataFrame([(i, i, values[i % len(values)]) for i in range(12)], "id bigint, x int, ds string")
    end_to_end(lab, spark, "odd_parts", "id BIGINT, x INT", frame, ["x"])
    names = lab.metastore.catalog.get_partition_names("default", "odd_parts")
    assert len(names) == 6 and f"ds={DEFAULT_PARTITION_NAME}" in names and "ds=a%2Fb" in names
    for value in values[:-1]:
        answer = lab.sql(f"SELECT count(*) FROM odd_parts WHERE ds = '{value}'")
        assert answer.answered_from == "stats" and answer.df.iloc[0, 0] == 2, value
    scanned = lab.sql("SELECT ds, count(*) AS n FROM odd_parts GROUP BY ds").df
    assert sorted(zip(scanned.ds.map(lambda v: v or ""), scanned.n, strict=True)) == sorted((v or "", 2) for v in values)


@pytest.mark.slow
def test_decimal_38_18_at_its_extremes(lab, spark):
    big = Decimal("99999999999999999999.999999999999999999")
    tiny = Decimal("0.000000000000000001")
    least = Decimal("-99999999999999999999.999999999999999999")  # not -big: Python's context keeps 28 digits
    frame = spark.createDataFrame([(1, big, "a"), (2, least, "a"), (3, tiny, "b"), (4, None, "b")],
                                  "id bigint, amount decimal(38,18), ds string")
    end_to_end(lab, spark, "decimals", "id BIGINT, amount DECIMAL(38,18)", frame, ["amount"])
    data = lab.metastore.column_stats.get_table_column_statistics("default", "decimals", "amount").obj("amount").statsData
    assert Decimal(str(data.value.lowValue)) == least and Decimal(str(data.value.highValue)) == big


@pytest.mark.slow
def test_dates_and_timestamps_before_1900_and_after_2262(lab, spark):
    rows = [(1, dt.date(1800, 1, 1), dt.datetime(1850, 6, 1, 12, 0, 0), "a"),
            (2, dt.date(9999, 12, 31), dt.datetime(2300, 1, 1, 0, 0, 0, 123456), "a"),
            (3, dt.date(1970, 1, 1), None, "b")]
    frame = spark.createDataFrame(rows, "id bigint, day date, ts timestamp, ds string")
    end_to_end(lab, spark, "far_times", "id BIGINT, day DATE, ts TIMESTAMP", frame, ["day", "ts"])
    answer = lab.sql("SELECT min(day), max(day), max(ts) FROM far_times")
    assert answer.answered_from == "stats"
    assert answer.df.iloc[0].tolist()[:2] == [dt.date(1800, 1, 1), dt.date(9999, 12, 31)]
    scanned = lab.sql("SELECT id, day, ts FROM far_times ORDER BY id")
    assert scanned.df["day"].tolist()[1] == dt.date(9999, 12, 31)


@pytest.mark.slow
def test_a_table_of_200_columns(lab, spark):
    names = [f"c{i}" for i in range(200)]
    frame = spark.range(20).select(*[(F.col("id") * i).cast("int").alias(n) for i, n in enumerate(names)],
                                   (F.col("id") % 2).cast("string").alias("ds"))
    end_to_end(lab, spark, "wide", ", ".join(f"{n} INT" for n in names), frame, ["c0", "c57", "c199"])
    frame_out, _ = level_frame(lab.metastore, lab.metastore.catalog.get_table("default", "wide"))
    assert len(frame_out) == 200 and frame_out["accurate"].all()


@pytest.mark.slow
def test_strings_of_a_megabyte(lab, spark):
    huge = "x" * 1_000_000
    frame = spark.createDataFrame([(1, huge, "a"), (2, huge[:-1] + "y", "a"), (3, "short", "b"), (4, None, "b")],
                                  "id bigint, s string, ds string")
    end_to_end(lab, spark, "mega", "id BIGINT, s STRING", frame, ["s"])
    s = lab.metastore.column_stats.get_table_column_statistics("default", "mega", "s").obj("s").statsData.stringStats
    assert s.maxColLen == 1_000_000 and s.numDVs == 3
    report = lab.tables["mega"].skew("s")
    assert len(report.statement) < 3_000_000


def test_zero_finds_the_negative_zeros_another_job_wrote(lab, tmp_path):
    """-0.0 = 0 is true in Spark SQL; parquet-java's dictionary filter compared the bits and skipped the
    row groups holding -0.0, so the lab's query over such files found none of them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    amounts = [-0.0, 1.5, -0.0, 2.5, None, 1.5] * 20  # few distinct values: dictionary-encoded
    root = tmp_path / "ledger"
    (root / "ds=a").mkdir(parents=True)
    pq.write_table(pa.table({"amount": pa.array(amounts, pa.float64()), "rate": pa.array(amounts, pa.float32())}),
                   root / "ds=a" / "part-0.parquet", use_dictionary=True)
    lab.register_external("ledger", str(root), partition_types={"ds": "string"})
    zeros = sum(1 for v in amounts if v == 0)  # Python, like SQL, has -0.0 == 0
    for condition in ("amount = 0", "amount = 0.0D", "amount IN (0, 7)", "amount = -0.0D", "rate = 0"):
        result = lab.sql(f"SELECT count(*) AS n FROM ledger WHERE {condition}")
        assert result.df["n"].iloc[0] == zeros, condition

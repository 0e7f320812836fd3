"""Parquet as other writers make it: pandas' and pyarrow's defaults, camelCase and non-ASCII names, nanosecond
timestamps, columns Spark cannot read. Every figure is computed here from the rows with pandas (or Spark's own
read of the files), never by the code under test."""
from __future__ import annotations

import datetime as dt
import os
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from colstats_lab.errors import InvalidArgument, LabWarning
from colstats_lab.file_columns import AmbiguousColumnError


def _events(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    kinds = np.array(["click", "view", "buy", None], dtype=object)
    frame = pd.DataFrame({
        "userId": rng.integers(0, 50, rows),
        "eventType": kinds[rng.integers(0, 4, rows)],
        "Größe": np.where(rng.random(rows) < 0.2, np.nan, rng.random(rows) * 10),
        "UPPER": rng.integers(-1000, 1000, rows),
    })
    frame.loc[rng.random(rows) < 0.1, "UPPER"] = None
    frame["UPPER"] = frame["UPPER"].astype("Int64")
    return frame


def _nulls(series: pd.Series) -> int:
    return int(series.isna().sum())


def _figures(lab, table: str, column: str):
    stats = lab.metastore.column_stats.get_table_column_statistics("default", table, column)
    return stats.isStatsCompliant, stats.obj(column).statsData.value


def test_mixed_case_names_read_match_and_count_as_pandas_does(lab, tmp_path):
    root = tmp_path / "camel"
    root.mkdir()
    first = _events(3_000, 1)
    first.to_parquet(root / "part-0.parquet")  # pandas' defaults: pyarrow, snappy, one row group
    lab.register_external("camel", str(root))
    spark_count = lab.spark.read.parquet(str(root)).where("eventType = 'click'").count()
    expected = int((first["eventType"] == "click").sum())
    assert spark_count == expected
    # a query on the camelCase name, before any ANALYZE: the lab's pruning reads the footers too
    assert lab.sql("SELECT count(*) AS n FROM camel WHERE eventType = 'click'").df["n"][0] == expected
    assert lab.explain("SELECT * FROM camel WHERE eventType = 'click'").estimate is not None

    analyzed = lab.sql("ANALYZE TABLE camel COMPUTE STATISTICS FOR ALL COLUMNS").message
    assert "userId" in analyzed and "Größe" in analyzed and "userid" not in analyzed  # as the files spell them
    for column, source in (("eventtype", "eventType"), ("größe", "Größe"), ("upper", "UPPER"), ("userid", "userId")):
        accurate, data = _figures(lab, "camel", column)
        assert accurate, column
        assert data.numNulls == _nulls(first[source]), column
        distinct = first[source].dropna().nunique()
        assert abs(data.numDVs - distinct) <= max(1, 0.05 * distinct), column
    _, upper = _figures(lab, "camel", "upper")
    assert (upper.lowValue, upper.highValue) == (int(first["UPPER"].min()), int(first["UPPER"].max()))
    _, size = _figures(lab, "camel", "größe")
    assert size.highValue == pytest.approx(float(first["Größe"].max()))
    _, kind = _figures(lab, "camel", "eventtype")
    assert kind.maxColLen == max(len(v) for v in first["eventType"].dropna())

    # pruning keeps the file and statistics answer as Spark does
    report = lab.explain("SELECT * FROM camel WHERE UPPER > 990")
    assert report.estimate is not None
    assert lab.sql("SELECT count(*) AS n FROM camel WHERE UPPER > 990").df["n"][0] == int((first["UPPER"] > 990).sum())
    answer = lab.stats_answer("SELECT count(*), min(UPPER), max(userId) FROM camel")
    assert answer.frame is not None, answer.reason
    assert list(answer.frame.iloc[0]) == [len(first), first["UPPER"].min(), first["userId"].max()]

    # DESCRIBE names the columns as the files spell them
    described = lab.sql("DESCRIBE camel").df
    assert list(described["col_name"]) == ["userId", "eventType", "Größe", "UPPER"]
    column = lab.sql("DESCRIBE FORMATTED camel eventtype").df.set_index("info_name")["info_value"]
    assert column["col_name"] == "eventType"

    # another job adds a file: the statistics go stale, and the next ANALYZE covers both files
    second = _events(1_000, 2)
    second.to_parquet(root / "part-1.parquet")
    assert not lab.metastore.column_stats.get_table_column_statistics("default", "camel", "upper").isStatsCompliant
    lab.sql("ANALYZE TABLE camel COMPUTE STATISTICS FOR ALL COLUMNS")
    both = pd.concat([first, second], ignore_index=True)
    accurate, upper = _figures(lab, "camel", "upper")
    assert accurate
    assert (upper.numNulls, upper.lowValue, upper.highValue) == (
        _nulls(both["UPPER"]), int(both["UPPER"].min()), int(both["UPPER"].max()))
    assert lab.sql("SELECT count(*) AS n FROM camel WHERE eventType IS NULL").df["n"][0] == _nulls(both["eventType"])


def test_mixed_case_partition_directories_and_keys(lab, tmp_path):
    root = tmp_path / "byregion"
    frames = {}
    for region, seed in (("EU", 3), ("US", 4)):
        (root / f"Region={region}").mkdir(parents=True)
        frames[region] = _events(500, seed)
        frames[region].to_parquet(root / f"Region={region}" / "data.parquet")
    table = lab.register_external("byregion", str(root)).metastore_table()
    assert table.partition_key_names == ["region"]
    lab.sql("ANALYZE TABLE byregion PARTITION (region) COMPUTE STATISTICS FOR ALL COLUMNS")
    for region, frame in frames.items():
        stats = lab.metastore.column_stats.get_partition_column_statistics("default", "byregion", f"region={region}", "userid")
        data = stats.obj("userid").statsData.value
        assert (data.lowValue, data.highValue) == (frame["userId"].min(), frame["userId"].max())
    got = lab.sql("SELECT Region, count(*) AS n FROM byregion WHERE eventType = 'buy' GROUP BY Region").df
    assert dict(zip(got["Region"], got["n"], strict=True)) == {r: int((f["eventType"] == "buy").sum()) for r, f in frames.items()}
    assert list(lab.sql("DESCRIBE byregion").df["col_name"])[-1] == "Region"


def test_names_that_differ_only_in_case_are_refused_by_name(lab, tmp_path):
    root = tmp_path / "twice"
    root.mkdir()
    pq.write_table(pa.table({"id": [1, 2], "Id": [3, 4]}), root / "a.parquet")
    with pytest.raises(AmbiguousColumnError, match=r"a\.parquet has columns 'id' and 'Id'"):
        lab.register_external("twice", str(root))
    assert not lab.metastore.catalog.table_exists("default", "twice")

    # a file another job adds later with such names: ANALYZE names it rather than read either column
    good = tmp_path / "later"
    good.mkdir()
    pq.write_table(pa.table({"id": [1, 2], "x": [5, 6]}), good / "a.parquet")
    lab.register_external("later", str(good))
    pq.write_table(pa.table({"id": [7], "ID": [8], "x": [9]}), good / "b.parquet")
    with pytest.raises(AmbiguousColumnError, match=r"b\.parquet has columns 'id' and 'ID'"):
        lab.sql("ANALYZE TABLE later COMPUTE STATISTICS FOR COLUMNS id")


def test_nanosecond_timestamps_read_truncated_to_the_microsecond(lab, tmp_path):
    root = tmp_path / "nanos"
    root.mkdir()
    stamps = pd.to_datetime(["2026-01-01 00:00:00.123456789", "1969-12-31 23:59:59.999999999", None,
                             "2026-03-01 00:00:00.000000999", "2026-03-01 00:00:00.000001001"])
    frame = pd.DataFrame({"eventTime": stamps, "n": [1, 2, 3, 4, 5]})
    frame.to_parquet(root / "a.parquet")  # pandas' default: INT64 TIMESTAMP(NANOS)
    assert "nanoseconds" in pq.ParquetFile(root / "a.parquet").schema.column(0).logical_type.to_json()
    table = lab.register_external("nanos", str(root)).metastore_table()
    assert table.column_type("eventtime") == "timestamp"

    # Spark keeps microseconds: each value floors to its microsecond (1969's too)
    micros = frame["eventTime"].dt.floor("us")
    read = lab.sql("SELECT n, eventTime FROM nanos ORDER BY n").df
    assert [None if pd.isna(v) else pd.Timestamp(v) for v in read["eventTime"]] == \
        [None if pd.isna(v) else v for v in micros]
    cut = "2026-03-01 00:00:00.000001"
    assert lab.sql(f"SELECT count(*) AS n FROM nanos WHERE eventTime >= '{cut}'").df["n"][0] == \
        int((micros >= pd.Timestamp(cut)).sum())

    result = lab.sql("ANALYZE TABLE nanos COMPUTE STATISTICS FOR ALL COLUMNS")
    assert "eventtime" in result.details.footer_columns
    assert "truncated to the microsecond" in result.message
    accurate, data = _figures(lab, "nanos", "eventtime")
    epoch = pd.Timestamp("1970-01-01")
    assert accurate
    assert data.numNulls == 1
    assert data.lowValue.microsSinceEpoch == (micros.min() - epoch) // pd.Timedelta("1us")
    assert data.highValue.microsSinceEpoch == (micros.max() - epoch) // pd.Timedelta("1us")
    assert data.numDVs == micros.dropna().nunique()


def test_a_column_spark_cannot_read_is_left_out_by_name(lab, tmp_path):
    root = tmp_path / "times"
    root.mkdir()
    frame = pd.DataFrame({"id": [1, 2, 3], "at": [dt.time(1, 2, 3), dt.time(4, 5, 6), None], "note": ["a", None, "c"]})
    frame.to_parquet(root / "a.parquet")
    table = lab.register_external("times", str(root)).metastore_table()
    assert [c.name for c in table.cols] == ["id", "note"]
    assert "TIME" in table.parameters["colstats.columns.skipped"]
    lab.sql("ANALYZE TABLE times COMPUTE STATISTICS FOR ALL COLUMNS")
    _, note = _figures(lab, "times", "note")
    assert note.numNulls == 1
    assert lab.sql("SELECT count(*) AS n FROM times WHERE id > 1").df["n"][0] == 2


def test_a_file_that_is_not_parquet_is_named(lab, tmp_path):
    root = tmp_path / "broken"
    root.mkdir()
    (root / "a.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(InvalidArgument, match="a.parquet"):
        lab.register_external("broken", str(root))
    assert os.path.exists(root / "a.parquet")


def test_a_delta_tables_camel_case_columns_take_the_logs_figures_and_spelling(lab, tmp_path):
    from deltalake import write_deltalake

    path = str(tmp_path / "delta_camel")
    frame = _events(800, 5).rename(columns={"Größe": "sizeCm"}).assign(day=lambda f: np.where(f.index % 2, "a", "b"))
    write_deltalake(path, frame, partition_by=["day"])
    table = lab.register_external("dcamel", path, format="delta").metastore_table()
    assert table.spelled("userid") == "userId"
    result = lab.sql("ANALYZE TABLE dcamel COMPUTE STATISTICS FOR ALL COLUMNS")
    assert "userid" in result.details.footer_columns  # min, max, NULLs from the log's figures, found by spelling
    merged = lab.metastore.column_stats.get_aggr_stats_for("default", "dcamel", ["upper", "eventtype"])
    upper = merged.obj("upper").statsData.value
    assert (upper.numNulls, upper.lowValue, upper.highValue) == (
        _nulls(frame["UPPER"]), int(frame["UPPER"].min()), int(frame["UPPER"].max()))
    assert merged.obj("eventtype").statsData.value.numNulls == _nulls(frame["eventType"])
    assert lab.sql("SELECT count(*) AS n FROM dcamel WHERE eventType = 'view' AND sizeCm > 5").df["n"][0] == \
        int(((frame["eventType"] == "view") & (frame["sizeCm"] > 5)).sum())
    assert list(lab.sql("DESCRIBE dcamel").df["col_name"])[:4] == ["userId", "eventType", "sizeCm", "UPPER"]


def _leaves(table: pa.Table) -> dict[str, pa.ChunkedArray]:
    """Every struct leaf as a column of its own, NULL where a struct on the way is (pyarrow's flatten), keyed
    by its lower-case path; arrays and maps are left out."""
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return {name.lower(): table.column(name) for name in table.column_names
            if not pa.types.is_list(table.schema.field(name).type) and not pa.types.is_map(table.schema.field(name).type)}


def _check_leaf(lab, table: str, column: str, values: pa.ChunkedArray):
    import pyarrow.compute as pc

    accurate, data = _figures(lab, table, column)
    assert accurate, column
    assert data.numNulls == values.null_count, column
    present = values.drop_null()
    distinct = len(pc.unique(present))
    assert abs(data.numDVs - distinct) <= max(1, 0.05 * distinct), column
    if pa.types.is_string(values.type):
        lengths = pc.utf8_length(present).to_pylist()
        assert data.maxColLen == max(lengths, default=0), column
        assert data.avgColLen == pytest.approx(sum(lengths) / len(values)), column
    elif pa.types.is_integer(values.type) or pa.types.is_floating(values.type):
        assert data.lowValue == pc.min(present).as_py() and data.highValue == pc.max(present).as_py(), column


def _users(rng, rows: int, ids: int, names: int) -> pa.StructArray:
    """A struct of a camelCase `Id` (10 % NULL) and a `name` (20 % NULL)."""
    return pa.StructArray.from_arrays(
        [pa.array(np.where(rng.random(rows) < 0.1, None, rng.integers(0, ids, rows)).tolist(), pa.int64()),
         pa.array([None if rng.random() < 0.2 else f"user-{rng.integers(0, names)}" for _ in range(rows)])],
        names=["Id", "name"])


def test_struct_leaves_are_columns_of_their_own_with_pyarrows_figures(lab, tmp_path):
    root = tmp_path / "events"
    root.mkdir()
    rng = np.random.default_rng(7)
    rows = 2_000
    user = _users(rng, rows, 300, 90)
    payload = pa.StructArray.from_arrays(
        [user, pa.array(np.where(rng.random(rows) < 0.3, np.nan, rng.random(rows)), pa.float64(), from_pandas=True),
         pa.array([None if i % 7 == 0 else i % 50 for i in range(rows)], pa.int32())],
        names=["user", "amount", "Score"], mask=pa.array(rng.random(rows) < 0.15))
    first = pa.table({"eventId": np.arange(rows), "payload": payload,
                      "tags": pa.array([[] if i % 3 == 0 else ["a", "b"][: i % 3] for i in range(rows)]),
                      "attrs": pa.array([None if i % 5 == 0 else [("k", i)] for i in range(rows)],
                                        pa.map_(pa.string(), pa.int64()))})
    pq.write_table(first, root / "a.parquet", row_group_size=700)
    lab.register_external("events", str(root))

    result = lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS")
    leaves = _leaves(first)
    assert result.details.columns == ["eventid", "payload", "payload.user", "payload.user.id", "payload.user.name",
                                      "payload.amount", "payload.score", "tags", "tags.element", "attrs", "attrs.key",
                                      "attrs.value"]
    assert "payload.user.id" in result.details.footer_columns and not result.details.skipped_columns
    for name in result.details.columns[3:7]:  # arrays' and maps' figures: tests/test_collection_stats.py
        _check_leaf(lab, "events", name, leaves[name])

    described = lab.sql("DESCRIBE FORMATTED events payload.user.id").df.set_index("info_name")["info_value"]
    assert described["col_name"] == "payload.user.id" and described["data_type"] == "bigint"
    assert int(described["num_nulls"]) == leaves["payload.user.id"].null_count
    frame = lab.tables["events"].inspect.stats().set_index("column")
    assert frame.loc["payload.score", "nulls"] == leaves["payload.score"].null_count
    # a struct: its own NULLs (rows whose whole struct is NULL), and each leaf's
    assert frame.loc["payload", "nulls"] == first.column("payload").null_count
    named = lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR COLUMNS payload").details.columns
    assert named == ["payload", "payload.user", "payload.user.id", "payload.user.name", "payload.amount",
                     "payload.score"]

    # a leaf by itself, after another job added a file
    second = first.slice(0, 500)
    pq.write_table(second, root / "b.parquet")
    lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR COLUMNS payload.user.name, payload.Score")
    both = _leaves(pa.concat_tables([first, second]))
    _check_leaf(lab, "events", "payload.user.name", both["payload.user.name"])
    _check_leaf(lab, "events", "payload.score", both["payload.score"])


def test_a_spark_written_struct_of_a_struct(lab, spark, tmp_path):
    from pyspark.sql import functions as F

    path = str(tmp_path / "spark_nested")
    frame = spark.range(3_000).select(
        F.col("id").alias("eventId"),
        F.when(F.col("id") % 11 == 0, F.lit(None)).otherwise(F.struct(
            F.struct((F.col("id") % 97).alias("Id"), F.when(F.col("id") % 4 == 0, None)
                     .otherwise(F.concat(F.lit("n"), (F.col("id") % 13).cast("string"))).alias("name")).alias("user"),
            F.to_date(F.lit("2026-01-01")).alias("day"))).alias("payload"))
    frame.write.parquet(path)
    lab.register_external("sparknested", path)
    lab.sql("ANALYZE TABLE sparknested COMPUTE STATISTICS FOR ALL COLUMNS")
    expected = frame.agg(F.count(F.lit(1)).alias("rows"), F.count("payload.user.Id").alias("ids"),
                         F.min("payload.user.Id").alias("low"), F.max("payload.user.Id").alias("high"),
                         F.count_distinct("payload.user.name").alias("names"),
                         F.count("payload.user.name").alias("named"), F.count("payload.day").alias("days")).first()
    _, ids = _figures(lab, "sparknested", "payload.user.id")
    assert (ids.numNulls, ids.lowValue, ids.highValue) == (expected["rows"] - expected["ids"], expected["low"],
                                                           expected["high"])
    _, names = _figures(lab, "sparknested", "payload.user.name")
    assert names.numNulls == expected["rows"] - expected["named"] and names.numDVs == expected["names"]
    _, days = _figures(lab, "sparknested", "payload.day")
    assert days.numNulls == expected["rows"] - expected["days"]


def test_leaf_predicates_prune_by_footers_and_answer_as_spark_does(lab, tmp_path):
    root = tmp_path / "leafy"
    for part, (low, high) in {"a": (0, 100), "b": (1_000, 1_100)}.items():
        (root / f"k={part}").mkdir(parents=True)
        ids = list(range(low, high))
        user = pa.StructArray.from_arrays([pa.array(ids, pa.int64()), pa.array([f"u{i % 9}" for i in ids])],
                                          names=["id", "name"])
        pq.write_table(pa.table({"id": [-i for i in ids], "payload": pa.StructArray.from_arrays([user], names=["user"])}),
                       root / f"k={part}" / "data.parquet")
    lab.register_external("leafy", str(root))
    queries = ["SELECT count(*) AS n FROM leafy WHERE payload.user.id >= 1050",
               "SELECT count(*) AS n FROM leafy l WHERE l.payload.user.id < 10 AND id <= 0",
               "SELECT max(payload.user.id) AS n FROM leafy", "SELECT min(leafy.payload.user.id) AS n FROM leafy"]
    spark_view = lab.spark.read.parquet(str(root))
    spark_view.createOrReplaceTempView("leafy_by_spark")
    expected = [lab.spark.sql(q.replace("leafy", "leafy_by_spark")).first()["n"] for q in queries]
    assert expected == [50, 10, 1_099, 0]
    assert [lab.sql(q).df["n"][0] for q in queries] == expected  # before ANALYZE: footers prune, Spark counts
    report = lab.explain(queries[0])
    assert "1 of 2 partitions kept" in str(report) or "1 of 2 files kept" in str(report)
    lab.sql("ANALYZE TABLE leafy PARTITION (k) COMPUTE STATISTICS FOR ALL COLUMNS")
    assert [lab.sql(q).df["n"][0] for q in queries] == expected
    # min and max of a leaf from statistics: the leaf's, never the top-level column `id` of the same last name
    for query, value in zip(queries[2:], expected[2:], strict=True):
        answer = lab.stats_answer(query)
        assert answer.frame is not None and answer.frame.iloc[0, 0] == value, answer.reason


def test_a_struct_field_named_like_a_partition_key_is_not_the_key(lab):
    lab.sql("CREATE TABLE w (id BIGINT, p STRUCT<id:BIGINT, ds:STRING>) PARTITIONED BY (ds STRING)")
    lab.tables["w"].write(lab.spark.sql("SELECT id, named_struct('id', id * 1000, 'ds', 'b') AS p FROM range(10)"),
                          partition={"ds": "a"})
    assert lab.sql("SELECT count(*) AS n FROM w WHERE p.ds = 'b'").df["n"][0] == 10
    assert lab.sql("SELECT count(*) AS n FROM w WHERE ds = 'b'").df["n"][0] == 0
    lab.sql("ANALYZE TABLE w PARTITION (ds) COMPUTE STATISTICS FOR ALL COLUMNS")
    assert lab.stats_answer("SELECT max(p.id) AS m FROM w").frame["m"][0] == 9_000
    assert lab.stats_answer("SELECT max(id) AS m FROM w").frame["m"][0] == 9
    assert lab.sql("SELECT count(*) AS n FROM w WHERE p.ds = 'b'").df["n"][0] == 10


def test_skew_of_a_leaf_counts_as_pandas_does(lab, tmp_path):
    root = tmp_path / "skewed"
    root.mkdir()
    rng = np.random.default_rng(11)
    ids = np.where(rng.random(3_000) < 0.4, 7, rng.integers(0, 1_000, 3_000))
    user = pa.StructArray.from_arrays([pa.array(ids, pa.int64())], names=["Id"],
                                      mask=pa.array(rng.random(3_000) < 0.05))
    table = pa.table({"n": np.arange(3_000), "payload": pa.StructArray.from_arrays([user], names=["user"])})
    pq.write_table(table, root / "a.parquet")
    lab.register_external("skewed", str(root))
    leaf = _leaves(table)["payload.user.id"].to_pandas()
    counts = leaf.dropna().astype("int64").value_counts()
    for mode in ("exact", "approx"):
        report = lab.tables["skewed"].skew("payload.user.id", mode=mode)
        top = report.heavy_hitters()
        assert int(top["value"].iloc[0]) == int(counts.index[0]), mode
        assert int(top["count"].iloc[0]) == int(counts.iloc[0]), mode
        assert report.null_count() == int(leaf.isna().sum()), mode
    with pytest.raises(InvalidArgument, match="payload.user.id"):
        lab.tables["skewed"].skew("payload")

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.user_ns["lab"] = lab
    shell.run_line_magic("load_ext", "colstats_lab")
    for target in ("skewed.payload.user.id", "default.skewed.payload.user.id"):
        view = shell.run_line_magic("skew", f"{target} --lab lab --top 3")
        assert int(view.result.heavy_hitters()["count"].iloc[0]) == int(counts.iloc[0]), target


def test_a_table_of_nothing_readable_is_refused_naming_each_column(lab, tmp_path):
    root = tmp_path / "unreadable"
    root.mkdir()
    stamps = pa.array([[1], None], pa.list_(pa.timestamp("ns")))
    pq.write_table(pa.table({"at": pa.array([dt.time(1), None]), "seen": stamps}), root / "a.parquet")
    with pytest.raises(InvalidArgument, match=r"at is a TIME column.*seen is a nanosecond timestamp inside a list"):
        lab.register_external("unreadable", str(root))


def test_a_delta_tables_struct_leaves_take_the_logs_figures(lab, tmp_path):
    from deltalake import write_deltalake

    path = str(tmp_path / "delta_nested")
    rng = np.random.default_rng(13)
    rows = 600
    user = _users(rng, rows, 500, 40)
    table = pa.table({"eventId": np.arange(rows),
                      "payload": pa.StructArray.from_arrays([user], names=["user"], mask=pa.array(rng.random(rows) < 0.1)),
                      "tags": pa.array([["a"] * (i % 3) for i in range(rows)])})
    # whole tables, not slices: deltalake 1.6 aborts the process on a sliced struct array with a validity mask
    for start, stop in ((0, 400), (400, rows)):
        write_deltalake(path, pa.Table.from_pylist(table.slice(start, stop - start).to_pylist(), table.schema),
                        mode="append")
    registered = lab.register_external("dnested", path, format="delta").metastore_table()
    assert registered.column_type("payload.user.id") == "bigint"
    result = lab.sql("ANALYZE TABLE dnested COMPUTE STATISTICS FOR ALL COLUMNS")
    assert {"payload.user.id", "payload.user.name"} <= set(result.details.footer_columns)  # from the log
    assert "tags" in result.message
    leaves = _leaves(table)
    for name in ("payload.user.id", "payload.user.name", "eventid"):
        _check_leaf(lab, "dnested", name, leaves[name])
    assert lab.sql("SELECT count(*) AS n FROM dnested WHERE payload.user.id < 50").df["n"][0] == \
        int(np.sum(np.array([v is not None and v < 50 for v in leaves["payload.user.id"].to_pylist()])))


def test_analyze_frame_takes_struct_leaves(lab, spark):
    from pyspark.sql import functions as F

    frame = spark.range(500).select(F.col("id").alias("eventId"), F.when(F.col("id") % 5 == 0, None).otherwise(
        F.struct((F.col("id") % 17).alias("Kind"), F.lit("x").alias("tag"))).alias("payload"))
    stats = lab.analyze_frame(frame).set_index("column")
    assert set(stats.index) == {"eventId", "payload.kind", "payload.tag"}
    assert stats.loc["payload.kind", "nulls"] == 100 and stats.loc["payload.kind", "max"] == 16


def test_spark_case_preserving_schema_in_hms_parameters_gives_the_spelling(spark):
    from pyspark.sql import types as T

    from colstats_lab.interop.hms_source import spark_schema_names

    schema = T.StructType([T.StructField("userId", T.LongType()), T.StructField("Größe", T.DoubleType()),
                           T.StructField("ds", T.StringType())]).json()
    whole = {"spark.sql.sources.schema": schema}
    split = {"spark.sql.sources.schema.numParts": "3", **{f"spark.sql.sources.schema.part.{i}": schema[i * 20:(i + 1) * 20]
                                                          for i in range(2)},
             "spark.sql.sources.schema.part.2": schema[40:]}
    assert spark_schema_names(whole) == spark_schema_names(split) == ["userId", "Größe", "ds"]
    assert spark_schema_names({}) == [] and spark_schema_names({"spark.sql.sources.schema": "not json"}) == []


def test_create_external_table_registers_files_and_checks_what_it_declares(lab, tmp_path):
    root = tmp_path / "clicks"
    (root / "region=eu").mkdir(parents=True)
    frame = _events(500, 7)
    frame.to_parquet(root / "region=eu" / "part-0.parquet")
    with pytest.raises(InvalidArgument) as refused:
        lab.sql(f"CREATE EXTERNAL TABLE clicks (userId BIGINT, eventType INT, nope STRING) "
                f"PARTITIONED BY (region STRING) STORED AS PARQUET LOCATION '{root}'")
    message = str(refused.value)
    assert "eventtype is string there, not int" in message and "nope string is not in them" in message
    assert "they also hold größe double" in message
    assert not lab.metastore.catalog.table_exists("default", "clicks")  # nothing registered

    result = lab.sql(f"CREATE EXTERNAL TABLE clicks (userId BIGINT, eventType STRING, Größe DOUBLE, UPPER BIGINT) "
                     f"PARTITIONED BY (region STRING) STORED AS PARQUET LOCATION 'file://{root}'")
    assert "registered over" in result.message
    expected = int((frame["eventType"] == "view").sum())
    assert lab.sql("SELECT count(*) AS n FROM clicks WHERE eventType = 'view' AND region = 'eu'").df["n"][0] == expected
    assert lab.sql(f"CREATE EXTERNAL TABLE IF NOT EXISTS clicks LOCATION '{root}'").message.endswith("already exists.")


def test_parquet_files_with_naive_timestamps_register_as_hive_timestamps(lab, tmp_path):
    """pyarrow and pandas write naive datetimes as Parquet timestamps not adjusted to UTC, which Spark reads as
    timestamp_ntz: registering such files failed with "unknown column type 'timestamp_ntz'"."""
    os.makedirs(tmp_path / "naive" / "ds=a")
    pq.write_table(pa.table({"ts": pa.array([dt.datetime(2026, 1, 2, 3, 4, 5), None, dt.datetime(2025, 12, 31)],
                                            pa.timestamp("us"))}), str(tmp_path / "naive" / "ds=a" / "p.parquet"))
    table = lab.register_external("naive", str(tmp_path / "naive")).metastore_table()
    assert [(c.name, c.type) for c in table.cols] == [("ts", "timestamp")]
    lab.sql("ANALYZE TABLE naive COMPUTE STATISTICS FOR ALL COLUMNS")
    stats = lab.tables["naive"].inspect.stats().set_index("partition").loc["ds=a"]
    assert str(stats["min"]) == "2025-12-31 00:00:00" and str(stats["max"]) == "2026-01-02 03:04:05"
    assert stats["nulls"] == 1


def test_registering_files_spark_cannot_read_or_empty_folders_says_so(lab, tmp_path, capsys):
    root = tmp_path / "landing"
    for day in ("a", "b", "c"):
        (root / f"ds={day}").mkdir(parents=True)
    pd.DataFrame({"v": [1, 2]}).to_parquet(root / "ds=a" / "part-0.parquet")
    good = (root / "ds=a" / "part-0.parquet").read_bytes()
    (root / "ds=b" / "part-0.parquet").write_bytes(good[: len(good) // 2])  # cut short
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", LabWarning)
        lab.register_external("landing", str(root))
    text = " ".join(str(w.message) for w in said if issubclass(w.category, LabWarning))
    assert "1 file(s) that are not Parquet Spark can read (ds=b/part-0.parquet)" in text
    assert "1 partition folder(s) with no data file (ds=c)" in text
    from colstats_lab.cli import main as cli_main

    assert cli_main(["--home", lab.home, "register", "landing2", str(root)]) == 0
    assert "Note: default.landing2 at" in capsys.readouterr().out

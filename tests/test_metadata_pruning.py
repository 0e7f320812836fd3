"""Pruning with table metadata and footers: random conditions never change a query's rows and never
prune a file holding a matching row; the report's decisions, reasons, rows and bytes; the options."""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metadata_tables import ROW_GROUP_ROWS, build_table, make_rows, write_file
from metastore_rows import connect

from colstats_lab.metastore.rows.levels import Level


@pytest.fixture(scope="module")
def pruned_lab(tmp_path_factory, spark):
    from colstats_lab import Lab
    home = tmp_path_factory.mktemp("pruning")
    root = str(home / "events")
    files = build_table(root, partitions=("d1", "d2", "d3", "d4"), files_per_partition=2, rows_per_file=100)
    lab = Lab(home=str(home / "lab"), spark=spark)
    lab.register_external("events", root, partition_types={"ds": "string"})
    # Hive's partition column statistics too: partitions are judged by them where Drill's metadata is off
    lab.sql("ANALYZE TABLE events PARTITION (ds) COMPUTE STATISTICS FOR ALL COLUMNS")
    lab.set("metastore.enabled", True)
    lab.sql("ANALYZE TABLE events REFRESH METADATA 'ROW_GROUP' LEVEL")
    yield lab, root, files
    lab.close()


@pytest.fixture(scope="module")
def every_row(pruned_lab, spark):
    """The oracle, read once: every row of the table by Spark alone (its own partition discovery, every
    file), with the file that holds it, cached for the property test's examples to filter."""
    from pyspark.sql import functions as F
    _, root, _ = pruned_lab
    frame = spark.read.parquet(root).withColumn("file", F.col("_metadata.file_path")).cache()
    frame.count()
    yield frame
    frame.unpersist()


_COMPARISONS = ["=", "<>", "<", "<=", ">", ">="]


def _atom(draw):
    kind = draw(st.sampled_from(["x", "amount", "note", "ds", "id", "d", "ts", "null", "in", "between"]))
    op = draw(st.sampled_from(_COMPARISONS))
    if kind == "x":
        return f"x {op} {draw(st.integers(-10, 220))}"
    if kind == "amount":
        return f"amount {op} {draw(st.floats(-80, 280, allow_nan=False)):.2f}"
    if kind == "note":
        return f"note {op} '{draw(st.sampled_from(['', 'a1', 'n', 'zz9', 'ß', '日本3']))}'"
    if kind == "ds":
        return f"ds {op} 'd{draw(st.integers(0, 5))}'"
    if kind == "id":
        return f"id {op} {draw(st.integers(0, 9000))}"
    if kind == "d":
        return f"d {op} DATE '2026-{draw(st.integers(1, 12)):02d}-{draw(st.integers(1, 28)):02d}'"
    if kind == "null":
        return f"{draw(st.sampled_from(['x', 'amount', 'note', 'ts']))} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if kind == "ts":
        return f"ts {op} TIMESTAMP '2026-{draw(st.integers(1, 12)):02d}-{draw(st.integers(1, 28)):02d} 12:00:00'"
    if kind == "in":
        values = draw(st.lists(st.integers(-5, 200), min_size=1, max_size=4))
        return f"x {draw(st.sampled_from(['', 'NOT ']))}IN ({', '.join(map(str, values))})"
    low = draw(st.integers(-10, 200))
    return f"x BETWEEN {low} AND {low + draw(st.integers(0, 60))}"


@st.composite
def conditions(draw, depth=2):
    if depth == 0 or draw(st.booleans()):
        return _atom(draw)
    shape = draw(st.sampled_from(["and", "or", "not"]))
    if shape == "not":
        return f"NOT ({draw(conditions(depth - 1))})"
    return f"({draw(conditions(depth - 1))}) {shape.upper()} ({draw(conditions(depth - 1))})"


@pytest.mark.slow  # the full lane: seconds of Spark work the fast lane's budget has no room for
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(condition=conditions(), use_metadata=st.booleans())
def test_pruned_reads_return_the_full_scans_rows_and_never_prune_a_matching_file(pruned_lab, every_row, condition,
                                                                                  use_metadata):
    lab, root, files = pruned_lab
    lab.set("metastore.metadata.use_statistics", use_metadata)
    try:
        query = f"SELECT id FROM events WHERE {condition}"
        report = lab.explain(query)
        result = lab.sql(query)
    finally:
        lab.set("metastore.metadata.use_statistics", True)
    # the rows that match, filtered after the read (cached): Spark's own read of the files with the filter may
    # miss some, its Parquet row-group skipping being wrong around NaN and -0.0 (`amount > 214.00` read 109
    # rows of 111, `amount = 0.00` none of 17); the lab's reads must not
    matching = every_row.where(condition).select("id", "file").toPandas()
    assert sorted(result.spark_df.toPandas()["id"]) == sorted(matching["id"])
    pruned = {os.path.join(root, f) for f in report.pruned(Level.FILE)}
    holding = {path for path in matching["file"] if path.removeprefix("file:") in pruned}
    assert not holding, (condition, holding, report.to_pandas())
    frame = report.to_pandas()
    assert set(frame.columns) == {"level", "identifier", "kept", "reason", "rows", "bytes"}
    assert frame.query("level == 'file'").rows.sum() == 800


def test_report_names_the_predicate_and_statistic_that_pruned(pruned_lab):
    lab, root, files = pruned_lab
    # partitions hold x in shifted ranges: d1 0..70, d2 40..110, d3 80..150, d4 120..190
    report = lab.explain("SELECT * FROM events WHERE ds >= 'd2' AND x > 135")
    frame = report.to_pandas().set_index(["level", "identifier"])
    d1 = frame.loc[(Level.PARTITION, "ds=d1")]
    assert not d1.kept and d1.reason.startswith("ds >= 'd2' rules it out (ds: min d1, max d1")
    d2 = frame.loc[(Level.PARTITION, "ds=d2")]
    d2_x = [v for p, rows in files.items() if "/ds=d2/" in p for v in rows["x"]]
    assert not d2.kept and d2.reason.startswith(
        f"x > 135 rules it out (x: min {min(v for v in d2_x if v is not None)}, "
        f"max {max(v for v in d2_x if v is not None)}, {d2_x.count(None)} nulls)")
    assert "[partition metadata]" in d2.reason
    expected_files = {os.path.relpath(p, root) for p, rows in files.items()
                      if p.split("/")[-2] >= "ds=d2" and any(v is not None and v > 135 for v in rows["x"])}
    assert set(report.kept(Level.FILE)) == expected_files
    assert report.totals() == {"rows_kept": 100 * len(expected_files), "rows": 800,
                               "bytes_kept": sum(os.path.getsize(os.path.join(root, f)) for f in expected_files),
                               "bytes": sum(os.path.getsize(p) for p in files)}
    for identifier in report.kept(Level.ROW_GROUP) + report.pruned(Level.ROW_GROUP):
        path, index = identifier.rsplit("#", 1)
        rows = files[os.path.join(root, path)]
        piece_x = [v for v in rows["x"][int(index) * ROW_GROUP_ROWS:(int(index) + 1) * ROW_GROUP_ROWS] if v is not None]
        matches = path.split("/")[0] >= "ds=d2" and max(piece_x) > 135
        assert (identifier in report.kept(Level.ROW_GROUP)) == matches  # min/max decide exactly for x > c


def test_stale_metadata_is_not_used_and_footers_stand_in(tmp_path, lab):
    root = str(tmp_path / "events")
    files = build_table(root, partitions=("d1", "d2"), files_per_partition=1, rows_per_file=50)
    lab.register_external("events", root, partition_types={"ds": "string"})
    lab.set("metastore.enabled", True)
    lab.sql("ANALYZE TABLE events COLUMNS (x) REFRESH METADATA 'FILE' LEVEL")
    target = sorted(files)[0]
    rewritten = make_rows(5, 50, x_range=(900, 950))
    write_file(target, rewritten)
    stat = os.stat(target)
    os.utime(target, (stat.st_atime, stat.st_mtime + 5))
    report = lab.explain("SELECT * FROM events WHERE x >= 900")
    frame = report.to_pandas().set_index(["level", "identifier"])
    changed = frame.loc[(Level.FILE, os.path.relpath(target, root))]
    assert changed.kept and "Parquet footer" in changed.reason  # the stored figures (x < 900) are stale
    assert lab.sql("SELECT count(*) AS n FROM events WHERE x >= 900").df["n"][0] == \
        sum(v is not None for v in rewritten["x"])
    lab.set("metastore.metadata.fallback_to_file_metadata", False)
    frame = lab.explain("SELECT * FROM events WHERE x >= 900").to_pandas().set_index(["level", "identifier"])
    assert frame.loc[(Level.FILE, os.path.relpath(target, root))].reason == "may match (no accurate statistics)"
    other = os.path.relpath(sorted(files)[1], root)
    assert not frame.loc[(Level.FILE, other)].kept  # its partition's stored metadata still describes it
    assert "[partition metadata]" in frame.loc[(Level.PARTITION, "ds=d2")].reason
    lab.set("metastore.enabled", False)  # without the metastore, Drill plans from file metadata
    frame = lab.explain("SELECT * FROM events WHERE x >= 900").to_pandas().set_index(["level", "identifier"])
    assert frame.loc[(Level.PARTITION, "ds=d2")].kept
    assert not frame.loc[(Level.FILE, other)].kept and "[Parquet footer]" in frame.loc[(Level.FILE, other)].reason


def test_a_footer_read_for_one_query_is_read_again_once_another_job_rewrites_the_file(tmp_path, lab):
    root = str(tmp_path / "events")
    files = build_table(root, partitions=("d1", "d2"), files_per_partition=1, rows_per_file=50)
    lab.register_external("events", root, partition_types={"ds": "string"})
    lab.set("metastore.enabled", False)  # footers alone decide
    target = sorted(files)[0]
    query = "SELECT * FROM events WHERE x >= 900"

    def verdict():
        return lab.explain(query).to_pandas().set_index(["level", "identifier"]).loc[
            (Level.FILE, os.path.relpath(target, root))]

    assert not verdict().kept and "[Parquet footer]" in verdict().reason  # x < 900 in every row group
    rewritten = make_rows(5, 50, x_range=(900, 950))
    write_file(target, rewritten)
    stat = os.stat(target)
    os.utime(target, (stat.st_atime, stat.st_mtime + 5))
    assert verdict().kept
    assert lab.sql("SELECT count(*) AS n FROM events WHERE x >= 900").df["n"][0] == \
        sum(v is not None for v in rewritten["x"])


def test_metadata_changing_while_planning_is_planned_again_then_without_it(tmp_path, lab):
    from colstats_lab.pruning import plan_with_metadata
    from colstats_lab.pruning.plan import parse_query, single_table_where
    root = str(tmp_path / "events")
    build_table(root, partitions=("d1",), files_per_partition=1, rows_per_file=50)
    lab.register_external("events", root, partition_types={"ds": "string"})
    lab.set("metastore.enabled", True)
    lab.sql("ANALYZE TABLE events REFRESH METADATA 'FILE' LEVEL")
    table, parts = lab.tables["events"].files()
    where = single_table_where(parse_query("SELECT * FROM events WHERE x > 5"))[1]
    added = []

    def another_writer_refreshes():
        if len(added) < changes:
            path = os.path.join(root, "ds=d1", f"extra-{len(added)}.parquet")
            write_file(path, make_rows(len(added), 10))
            added.append(path)
            lab.sql("ANALYZE TABLE events REFRESH METADATA 'FILE' LEVEL")

    changes = 1
    _, report = plan_with_metadata(lab.metastore, table, parts, where, lab.get, on_planned=another_writer_refreshes)
    assert report.retries == 1 and not report.notes
    lab.set("metastore.retrieval.retry_attempts", 2)
    changes = 10
    _, report = plan_with_metadata(lab.metastore, table, parts, where, lab.get, on_planned=another_writer_refreshes)
    assert report.retries == 3 and "planned without it" in report.notes[0]
    assert all("[file metadata]" not in d.reason for d in report.decisions)


def test_use_schema_ignores_figures_stored_under_another_type(tmp_path, lab):
    root = str(tmp_path / "events")
    build_table(root, partitions=("d1", "d2"), files_per_partition=1, rows_per_file=50)
    lab.register_external("events", root, partition_types={"ds": "string"})
    lab.set("metastore.enabled", True)
    lab.sql("ANALYZE TABLE events COLUMNS (x) REFRESH METADATA 'PARTITION' LEVEL")
    # metadata recorded when x was another type (as after a schema change) must not decide for today's x
    with connect(lab.metastore.url) as conn:
        conn.execute("UPDATE METADATA_COLUMN_STATS SET COLUMN_TYPE = 'smallint' WHERE COLUMN_NAME = 'x'")
    lab.set("metastore.metadata.fallback_to_file_metadata", False)
    query = "SELECT * FROM events WHERE x > 100"  # d1 holds x <= 70
    partitions = lab.explain(query).to_pandas().query("level == 'partition'").set_index("identifier")
    assert partitions.loc["ds=d1"].kept and partitions.loc["ds=d1"].reason == "may match (partition metadata)"
    lab.set("metastore.metadata.use_schema", False)
    partitions = lab.explain(query).to_pandas().query("level == 'partition'").set_index("identifier")
    assert not partitions.loc["ds=d1"].kept


def test_partitions_are_judged_by_their_column_statistics_only_while_accurate(lab, spark):
    lab.sql("CREATE TABLE daily (id BIGINT, x INT) PARTITIONED BY (ds STRING)")
    for day, first in (("d1", 0), ("d2", 100), ("d3", 200)):
        lab.tables["daily"].write(spark.createDataFrame([(i, i) for i in range(first, first + 100)], "id BIGINT, x INT"),
                                  partition={"ds": day})
    lab.sql("ANALYZE TABLE daily COMPUTE STATISTICS FOR ALL COLUMNS")
    decisions = {d.identifier: d for d in lab.explain("SELECT * FROM daily WHERE x >= 250").decisions
                 if d.level is Level.PARTITION}
    assert [name for name, d in decisions.items() if d.kept] == ["ds=d3"]
    assert decisions["ds=d1"].reason == "x >= 250 rules it out (x: min 0, max 99, 0 nulls) [partition column statistics]"

    # a write the statistics do not see: d1's are stale, so d1 is read; the others are still ruled out by theirs
    lab.set("hive.stats.column.autogather", False)
    lab.tables["daily"].write(spark.createDataFrame([(1, 500)], "id BIGINT, x INT"), partition={"ds": "d1"})
    decisions = {d.identifier: d for d in lab.explain("SELECT * FROM daily WHERE x >= 450").decisions
                 if d.level is Level.PARTITION}
    assert [name for name, d in decisions.items() if d.kept] == ["ds=d1"]
    assert "partition column statistics" not in decisions["ds=d1"].reason
    truth = lab.tables["daily"].to_spark().where("x >= 450").count()
    assert truth == 1 and lab.sql("SELECT count(*) AS n FROM daily WHERE x >= 450").df["n"][0] == truth


def test_nan_and_negative_zero_rows_are_read_where_parquets_row_group_skipping_loses_them(lab, tmp_path):
    """Parquet footers leave NaN out of a double's range and keep -0.0: Spark's own read with the filter pushed
    into Parquet skips a row group holding NaN for `v > 3` and one holding -0.0 for `v = 0` (its in-memory
    cache's batch pruning does the same). The lab's reads answer as Spark's SQL defines: NaN above every
    number, -0.0 equal to 0.0."""
    import math

    import pyarrow as pa
    import pyarrow.parquet as pq

    values = [1.0, float("nan"), -0.0, 2.0]
    path = tmp_path / "doubles" / "part-0.parquet"
    path.parent.mkdir()
    pq.write_table(pa.table({"v": values, "p": pa.array([{"w": v} for v in values],
                                                          pa.struct([("w", pa.float64())]))}),
                   path, row_group_size=2)
    lab.register_external("doubles", str(path.parent))

    def key(x: float) -> float:  # Spark's order: NaN above every number; -0.0 is 0.0
        return math.inf if math.isnan(x) else x + 0.0
    for condition, holds in (("v > 3", lambda x: key(x) > 3), ("v = 0", lambda x: key(x) == 0),
                             ("v >= 1", lambda x: key(x) >= 1), ("p.w > 3", lambda x: key(x) > 3),
                             ("p.w = 0", lambda x: key(x) == 0)):
        expected = sum(holds(v) for v in values)
        assert lab.sql(f"SELECT count(*) AS n FROM doubles WHERE {condition}").df["n"][0] == expected, condition
        assert lab.tables["doubles"].to_spark().where(condition).count() == expected, condition

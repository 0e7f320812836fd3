"""Drill-style metadata: ANALYZE TABLE ... REFRESH METADATA at each level, footers against a scan,
up-to-date and incremental refreshes against a refresh from scratch, SAMPLE/ESTIMATE, the
INFORMATION_SCHEMA views and the metastore.* options."""
from __future__ import annotations

import math
import os

import pytest
from metadata_tables import COLUMNS, ROW_GROUP_ROWS, TYPES, build_table, distinct, make_rows, spark_min, write_file
from metastore_rows import connect
from pyspark.sql import functions as F

from colstats_lab.analyze import UP_TO_DATE
from colstats_lab.column_statistics.sketches import ndv_relative_error
from colstats_lab.errors import InvalidArgument
from colstats_lab.metastore import NoSuchObjectException
from colstats_lab.sql.lexer import ParseError

pytestmark = pytest.mark.both_backends  # a metastore behaviour: on SQLite and on PostgreSQL


@pytest.fixture
def ext(lab, tmp_path):
    root = str(tmp_path / "events")
    files = build_table(root)
    lab.register_external("events", root, partition_types={"ds": "string"})
    lab.set("metastore.enabled", True)
    return lab, root, files


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return a == b


def _units(lab, level=None):
    metadata = lab.metastore.table_metadata.get_table_metadata("default", "events")
    return [u for u in metadata.units if level is None or u.type == level]


def _expected(rows_list: list[dict[str, list]], column: str):
    values = [v for rows in rows_list for v in rows[column]]
    low, high = spark_min(values, TYPES[column])
    return low, high, sum(v is None for v in values), len(values)


def _check_unit(unit, rows_list, columns=COLUMNS, ndv=True):
    assert unit.rows == sum(len(r["id"]) for r in rows_list), unit.identifier
    for column in columns:
        low, high, nulls, _ = _expected(rows_list, column)
        got = unit.columns[column]
        assert _same(got.low, low) and _same(got.high, high) and got.nulls == nulls, (unit.identifier, column, got)
        if ndv:
            true = distinct(v for r in rows_list for v in r[column])
            assert got.non_nulls == unit.rows - nulls
            assert abs(got.ndv - true) <= max(1, ndv_relative_error() * true), (unit.identifier, column, got.ndv, true)


def test_row_group_level_every_level_equals_the_rows(ext):
    lab, root, files = ext
    result = lab.sql("ANALYZE TABLE events REFRESH METADATA 'ROW_GROUP' LEVEL COMPUTE STATISTICS")
    assert result.message.startswith("Collected / refreshed metadata for table [default.events]")
    assert result.df.to_dict("list") == {"ok": [True], "summary": ["Collected / refreshed metadata for table [default.events]"]}
    for unit in _units(lab, "ROW_GROUP"):
        rows = files[unit.path]
        piece = {c: v[unit.row_group * ROW_GROUP_ROWS:(unit.row_group + 1) * ROW_GROUP_ROWS] for c, v in rows.items()}
        _check_unit(unit, [piece])
    assert len(_units(lab, "ROW_GROUP")) == 6 * 3  # 100 rows in groups of 40
    for unit in _units(lab, "FILE"):
        _check_unit(unit, [files[unit.path]])
        assert unit.bytes == os.path.getsize(unit.path)
    for unit in _units(lab, "PARTITION") + _units(lab, "SEGMENT"):
        members = [rows for path, rows in files.items() if f"/{unit.identifier}/" in path]
        assert len(members) == 2
        _check_unit(unit, members)
    (table,) = _units(lab, "TABLE")
    _check_unit(table, list(files.values()))
    assert table.last_modified == max(int(os.stat(p).st_mtime * 1000) for p in files)


@pytest.mark.slow  # the full lane: seconds of Spark work the fast lane's budget has no room for
def test_footer_fast_path_equals_a_spark_scan(ext, spark):
    lab, root, files = ext
    outcome = lab.sql("ANALYZE TABLE events COLUMNS (id, x, note, d, ts) REFRESH METADATA 'ROW_GROUP' LEVEL").details
    assert outcome.footer_columns == ["id", "x", "note", "d", "ts"] and not outcome.spark_job
    for unit in _units(lab, "FILE"):
        frame = spark.read.parquet(unit.path)
        aggregates = [F.count(F.lit(1)).alias("rows")]
        for c in ["id", "x", "note", "d", "ts"]:
            value = F.unix_date(c) if c == "d" else F.unix_micros(c) if c == "ts" else F.col(c)
            aggregates += [F.min(value).alias(f"{c}_min"), F.max(value).alias(f"{c}_max"),
                           F.count_if(F.col(c).isNull()).alias(f"{c}_nulls")]
        scan = frame.agg(*aggregates).first().asDict()
        assert unit.rows == scan["rows"]
        for c in ["id", "x", "note", "d", "ts"]:
            got = unit.columns[c]
            assert (got.low, got.high, got.nulls) == (scan[f"{c}_min"], scan[f"{c}_max"], scan[f"{c}_nulls"]), c
    for unit in _units(lab, "ROW_GROUP"):
        frame = spark.read.parquet(unit.path).where(
            F.col("_metadata.row_index").between(unit.row_group * ROW_GROUP_ROWS, (unit.row_group + 1) * ROW_GROUP_ROWS - 1))
        scan = frame.agg(F.min("note"), F.max("note"), F.count_if(F.col("x").isNull()), F.count(F.lit(1))).first()
        assert (unit.columns["note"].low, unit.columns["note"].high, unit.columns["x"].nulls, unit.rows) == tuple(scan)


def _normalized(lab):
    out = {}
    for u in _units(lab):
        columns = {c: (m.low if not (isinstance(m.low, float) and math.isnan(m.low)) else "NaN",
                       m.high if not (isinstance(m.high, float) and math.isnan(m.high)) else "NaN",
                       m.nulls, m.non_nulls, m.ndv, m.sketch) for c, m in u.columns.items()}
        out[(u.type, u.identifier)] = (u.rows, u.bytes, u.last_modified, sorted(map(tuple, u.files or [])), columns,
                                       u.part_name, u.key, u.location, u.row_group)
    return out


def _equals_from_scratch(lab, statement):
    incremental = _normalized(lab)
    lab.sql("ANALYZE TABLE events DROP METADATA")
    full = lab.sql(statement).details
    assert full.kind == "full"
    assert _normalized(lab) == incremental


STATEMENT = "ANALYZE TABLE events REFRESH METADATA 'ROW_GROUP' LEVEL COMPUTE STATISTICS"


def _touch(path):
    stat = os.stat(path)
    os.utime(path, (stat.st_atime + 5, stat.st_mtime + 5))


def test_nothing_changed_is_up_to_date_with_no_spark_job(ext):
    lab, root, files = ext
    lab.sql(STATEMENT)
    version = lab.metastore.table_metadata.get_metadata_version("default", "events")
    again = lab.sql(STATEMENT)
    assert again.message == UP_TO_DATE and again.details.scanned_files == [] and not again.details.spark_job
    narrower = lab.sql("ANALYZE TABLE events COLUMNS (x) REFRESH METADATA 'ROW_GROUP' LEVEL COMPUTE STATISTICS")
    assert narrower.message == UP_TO_DATE
    assert lab.metastore.table_metadata.get_metadata_version("default", "events") == version


def test_added_file_alone_is_read(ext):
    lab, root, files = ext
    lab.sql(STATEMENT)
    rows_before = {(u.type, u.identifier): u.unit_id for u in _units(lab)}
    new = os.path.join(root, "ds=d2", "part-9.parquet")
    write_file(new, make_rows(99, 70, start_id=99_000))
    outcome = lab.sql(STATEMENT).details
    assert outcome.kind == "incremental" and outcome.scanned_files == [new]
    assert sorted(outcome.reused_files) == sorted(files)
    # only what holds the new file is merged again: its file (from its row groups), ds=d2, its segment, the table
    assert outcome.merged_units == {"FILE": 1, "PARTITION": 1, "SEGMENT": 1, "TABLE": 1}
    rows_after = {(u.type, u.identifier): u.unit_id for u in _units(lab)}
    rewritten = {key for key, unit_id in rows_after.items() if rows_before.get(key) != unit_id}
    assert rewritten == {("TABLE", "default.events"), ("PARTITION", "ds=d2"), ("SEGMENT", "ds=d2")} | {
        (u.type, u.identifier) for u in _units(lab) if u.path == new}
    _equals_from_scratch(lab, STATEMENT)


def test_rewritten_file_alone_is_read(ext):
    lab, root, files = ext
    lab.sql(STATEMENT)
    target = sorted(files)[1]
    write_file(target, make_rows(77, 55, start_id=77_000, x_range=(500, 600)))
    _touch(target)
    outcome = lab.sql(STATEMENT).details
    assert outcome.scanned_files == [target] and target not in outcome.reused_files
    (unit,) = [u for u in _units(lab, "FILE") if u.path == target]
    assert unit.rows == 55 and unit.columns["x"].low >= 500
    _equals_from_scratch(lab, STATEMENT)


def test_deleted_file_reads_nothing_and_upper_levels_are_merged_again(ext):
    lab, root, files = ext
    lab.sql(STATEMENT)
    gone = sorted(files)[0]
    os.remove(gone)
    outcome = lab.sql(STATEMENT).details
    assert outcome.scanned_files == [] and outcome.removed_files == [gone] and not outcome.spark_job
    (table,) = _units(lab, "TABLE")
    _check_unit(table, [rows for path, rows in files.items() if path != gone])
    _equals_from_scratch(lab, STATEMENT)


def test_added_partition_alone_is_read(ext):
    lab, root, files = ext
    lab.sql(STATEMENT)
    new = os.path.join(root, "ds=d4", "part-0.parquet")
    write_file(new, make_rows(44, 90, start_id=44_000))
    lab.sql("ALTER TABLE events ADD PARTITION (ds='d4')")
    outcome = lab.sql(STATEMENT).details
    assert outcome.kind == "incremental" and outcome.scanned_files == [new]
    assert {u.identifier for u in _units(lab, "PARTITION")} == {"ds=d1", "ds=d2", "ds=d3", "ds=d4"}
    _equals_from_scratch(lab, STATEMENT)


def test_partition_level_rereads_only_the_changed_partition(ext):
    lab, root, files = ext
    statement = "ANALYZE TABLE events REFRESH METADATA 'PARTITION' LEVEL COMPUTE STATISTICS"
    lab.sql(statement)
    assert not _units(lab, "FILE")
    new = os.path.join(root, "ds=d3", "part-5.parquet")
    write_file(new, make_rows(55, 30, start_id=55_000))
    outcome = lab.sql(statement).details
    assert sorted(outcome.scanned_files) == sorted([p for p in files if "ds=d3" in p] + [new])
    _equals_from_scratch(lab, statement)


def test_widened_columns_or_another_level_analyze_everything_again(ext):
    lab, root, files = ext
    lab.sql("ANALYZE TABLE events COLUMNS (x) REFRESH METADATA 'FILE' LEVEL")
    wider = lab.sql("ANALYZE TABLE events COLUMNS (x, note) REFRESH METADATA 'FILE' LEVEL").details
    assert wider.kind == "full" and "not a subset" in wider.reason and sorted(wider.scanned_files) == sorted(files)
    other_level = lab.sql("ANALYZE TABLE events COLUMNS (x, note) REFRESH METADATA 'ROW_GROUP' LEVEL").details
    assert other_level.kind == "full" and "level differs" in other_level.reason
    assert sorted(other_level.scanned_files) == sorted(files)
    with_ndv = lab.sql("ANALYZE TABLE events COLUMNS (x, note) REFRESH METADATA 'ROW_GROUP' LEVEL "
                       "COMPUTE STATISTICS").details
    assert with_ndv.kind == "full" and with_ndv.ndv_columns == ["x", "note"]


def test_sample_scales_the_statistics_and_marks_them_estimated(ext):
    lab, root, files = ext
    outcome = lab.sql("ANALYZE TABLE events COLUMNS (id, x) REFRESH METADATA 'FILE' LEVEL "
                      "COMPUTE STATISTICS SAMPLE 50 PERCENT").details
    assert outcome.spark_job
    (table,) = _units(lab, "TABLE")
    all_rows = list(files.values())
    for column in ("id", "x"):
        low, high, nulls, rows = _expected(all_rows, column)
        got = table.columns[column]
        assert (got.low, got.high, got.nulls) == (low, high, nulls)  # metadata stays exact
        assert got.estimated and table.estimated
        assert abs(got.non_nulls - (rows - nulls)) <= 0.2 * (rows - nulls)  # a 50 % Bernoulli sample of 600 rows
    true_ids = distinct(v for r in all_rows for v in r["id"])
    assert 0.7 * true_ids <= table.columns["id"].ndv <= true_ids  # all distinct: scaled up to about the rows
    assert table.columns["x"].ndv <= distinct(v for r in all_rows for v in r["x"]) * 1.1  # few values: not inflated


def test_estimate_statistics_reads_a_ten_percent_sample(ext):
    lab, root, files = ext
    lab.sql("ANALYZE TABLE events COLUMNS (id) REFRESH METADATA 'TABLE' LEVEL ESTIMATE STATISTICS")
    metadata = lab.metastore.table_metadata.get_table_metadata("default", "events")
    assert (metadata.analysis.mode, metadata.analysis.sample_percent) == ("ESTIMATE", 10.0)
    assert [u.type for u in metadata.units] == ["TABLE"]
    assert metadata.units[0].columns["id"].estimated and metadata.units[0].rows == 600


def test_information_schema_views(ext):
    lab, root, files = ext
    lab.sql("ANALYZE TABLE events REFRESH METADATA 'PARTITION' LEVEL COMPUTE STATISTICS")
    with connect(lab.metastore.url) as conn:
        (table,) = conn.dicts("SELECT * FROM INFORMATION_SCHEMA_TABLES WHERE TABLE_NAME = 'events'")
        assert (table["TABLE_SOURCE"], table["LOCATION"], table["NUM_ROWS"], table["TABLE_TYPE"]) == \
            ("PARQUET", root, 600, "EXTERNAL TABLE")
        columns = {r["COLUMN_NAME"]: r for r in conn.dicts(
            "SELECT * FROM INFORMATION_SCHEMA_COLUMNS WHERE TABLE_NAME = 'events' ORDER BY ORDINAL_POSITION")}
        assert list(columns) == COLUMNS
        all_rows = list(files.values())
        low, high, nulls, rows = _expected(all_rows, "d")
        d = columns["d"]
        assert (d["COLUMN_FORMAT"], d["NUM_NULLS"], d["EST_NUM_NON_NULLS"], d["IS_NESTED"]) == \
            ("yyyy-MM-dd", nulls, rows - nulls, 0)
        assert d["MIN_VAL"] == min(v for r in all_rows for v in r["d"] if v).isoformat()
        assert columns["amount"]["MAX_VAL"] == "NaN"
        assert columns["ts"]["MIN_VAL"] == min(v for r in all_rows for v in r["ts"] if v).strftime("%Y-%m-%d %H:%M:%S.%f")
        partitions = conn.dicts("SELECT * FROM INFORMATION_SCHEMA_PARTITIONS WHERE TABLE_NAME = 'events' "
                                "ORDER BY METADATA_TYPE, METADATA_IDENTIFIER")
        assert [(p["METADATA_TYPE"], p["METADATA_IDENTIFIER"], p["PARTITION_COLUMN"], p["PARTITION_VALUE"],
                 p["METADATA_KEY"]) for p in partitions] == \
            [("PARTITION", f"ds={v}", "ds", v, f"ds={v}") for v in ("d1", "d2", "d3")] + \
            [("SEGMENT", f"ds={v}", "ds", v, f"ds={v}") for v in ("d1", "d2", "d3")]
        assert [p["LOCATION"] for p in partitions] == [None] * 3 + [f"{root}/ds={v}" for v in ("d1", "d2", "d3")]


def test_options_and_errors_name_the_problem(ext):
    lab, root, files = ext
    lab.set("metastore.enabled", False)
    with pytest.raises(InvalidArgument, match="Metastore is disabled.*metastore.enabled"):
        lab.sql("ANALYZE TABLE events REFRESH METADATA")
    lab.sql("SET metastore.enabled = true")
    lab.sql("SET metastore.metadata.store.depth_level = 'FILE'")
    assert lab.sql("ANALYZE TABLE events COLUMNS NONE REFRESH METADATA").details.level == "FILE"
    assert {u.type for u in _units(lab)} == {"TABLE", "SEGMENT", "PARTITION", "FILE"}
    with pytest.raises(InvalidArgument, match="unknown metadata level 'ROWS'"):
        lab.set("metastore.metadata.store.depth_level", "ROWS")
    with pytest.raises(InvalidArgument, match="retry_attempts takes 0 or more"):
        lab.sql("SET metastore.retrieval.retry_attempts = -1")
    with pytest.raises(NoSuchObjectException, match="column amnt does not exist in table default.events"):
        lab.sql("ANALYZE TABLE events COLUMNS (x, amnt) REFRESH METADATA")
    with pytest.raises(InvalidArgument, match="ds is a partition key"):
        lab.sql("ANALYZE TABLE events COLUMNS (ds) REFRESH METADATA")
    statement = "ANALYZE TABLE events REFRESH METADATA COMPUTE STATISTICS SAMPLE 0 PERCENT"
    with pytest.raises(ParseError) as error:
        lab.sql(statement)
    assert "above 0 and at most 100" in str(error.value)
    assert error.value.column == statement.index(" 0 PERCENT") + 2  # the caret is under the 0
    with pytest.raises(ParseError, match="SAMPLE belongs to a COMPUTE or ESTIMATE"):
        lab.sql("ANALYZE TABLE events REFRESH METADATA 'FILE' LEVEL SAMPLE 5 PERCENT")
    assert lab.sql("ANALYZE TABLE events DROP METADATA").message == "Metadata for table [default.events] dropped."
    with pytest.raises(NoSuchObjectException, match="no metadata to drop"):
        lab.sql("ANALYZE TABLE events DROP METADATA")
    assert "nothing dropped" in lab.sql("ANALYZE TABLE events DROP METADATA IF EXISTS").message


def test_managed_table_writes_are_seen_as_new_files(lab):
    lab.set("metastore.enabled", True)
    lab.sql("CREATE TABLE m (id BIGINT, note STRING) PARTITIONED BY (ds STRING)")
    import pandas as pd
    lab.tables["m"].write(pd.DataFrame({"id": range(10), "note": list("abcdefghij")}), partition={"ds": "a"})
    lab.sql("ANALYZE TABLE m REFRESH METADATA 'FILE' LEVEL")
    lab.tables["m"].write(pd.DataFrame({"id": range(10, 15), "note": list("vwxyz")}), partition={"ds": "b"})
    outcome = lab.sql("ANALYZE TABLE m REFRESH METADATA 'FILE' LEVEL").details
    assert outcome.kind == "incremental" and all("/ds=b/delta_" in p for p in outcome.scanned_files)
    lab.tables["m"].write(pd.DataFrame({"id": [99], "note": ["q"]}), partition={"ds": "a"}, mode="overwrite")
    outcome = lab.sql("ANALYZE TABLE m REFRESH METADATA 'FILE' LEVEL").details
    assert all("/ds=a/base_" in p for p in outcome.scanned_files) and len(outcome.removed_files) >= 1
    table = [u for u in lab.metastore.table_metadata.get_table_metadata("default", "m").units if u.type == "TABLE"][0]
    assert table.rows == 6 and (table.columns["note"].low, table.columns["note"].high) == ("q", "z")

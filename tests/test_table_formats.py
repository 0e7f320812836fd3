"""Iceberg and Delta tables as lab tables: written by pyiceberg and deltalake themselves, analyzed by the lab,
every figure checked against pandas over the format library's own read of the same snapshot; a later commit
makes stale exactly the partitions whose files it added or removed, and says which commit did."""
from __future__ import annotations

import datetime as dt
import io
import json
import os
import struct
import uuid
from decimal import Decimal

import mmh3
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasketches import compact_theta_sketch, theta_union, update_theta_sketch
from delta_commits import take_column_mapping
from deltalake import DeltaTable, write_deltalake
from duckdb_readers import duckdb_with
from iceberg_v3 import commit_v3_deletion_vectors
from pyiceberg.catalog import load_catalog
from pyiceberg.expressions import EqualTo
from pyiceberg.manifest import DataFile as IcebergDataFile
from pyiceberg.manifest import DataFileContent, FileFormat, ManifestContent, ManifestWriterV2
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.puffin import PuffinFile
from pyiceberg.table.snapshots import Operation
from pyiceberg.table.update.snapshot import _FastAppendFiles
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform, MonthTransform, TruncateTransform
from pyiceberg.typedef import Record
from pyiceberg.types import DoubleType, IntegerType, ListType, LongType, NestedField, StringType, TimestampType
from pyspark.sql import functions as F

from colstats_lab.errors import InvalidArgument, QueryError
from colstats_lab.frames import tables_frame
from colstats_lab.interop.iceberg_publish import theta_inputs
from colstats_lab.metastore import NoSuchObjectException, escape_path_name
from colstats_lab.ui.stats_view import StatsView
from colstats_lab.workbench.dashboard import TABS, TablePage

ICEBERG_SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False), NestedField(2, "ds", StringType(), required=False),
    NestedField(3, "ts", TimestampType(), required=False), NestedField(4, "x", IntegerType(), required=False),
    NestedField(5, "amount", DoubleType(), required=False), NestedField(6, "note", StringType(), required=False))
BY_DS_AND_DAY = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "ds"),
                              PartitionField(3, 1001, DayTransform(), "ts_day"))


def rows(n: int, ds: str, day: int, first_id: int = 0) -> pa.Table:
    """Rows with NULLs in every column but id and the partition's; strings of several lengths, one non-ASCII."""
    ids = list(range(first_id, first_id + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()), "ds": [ds] * n,
        "ts": pa.array([dt.datetime(2026, 1, day, i % 24, i % 60) for i in ids], pa.timestamp("us")),
        "x": pa.array([None if i % 5 == 0 else (i * 7) % 23 - 4 for i in ids], pa.int32()),
        "amount": pa.array([None if i % 4 == 3 else i * 1.25 - 10 for i in ids], pa.float64()),
        "note": [None if i % 6 == 1 else "é" * (i % 4) + "n" * (i % 3) for i in ids]})


def expected(frame: pd.DataFrame, column: str) -> dict:
    """The lab's figures of a column, from pandas: rows, nulls, distinct values, min and max (strings: lengths
    over all rows, a NULL as 0, as Hive counts them)."""
    values = frame[column].dropna()
    figures = {"rows": len(frame), "nulls": int(frame[column].isna().sum()), "ndv": values.nunique()}
    if frame[column].dtype == object and len(values) and isinstance(values.iloc[0], str):
        lengths = values.map(len)
        return {**figures, "max_len": int(lengths.max()), "avg_len": float(lengths.sum()) / len(frame)}
    return {**figures, "min": values.min(), "max": values.max()}


def assert_stats(lab, table: str, frame: pd.DataFrame, partition_of=None) -> None:
    """Every column's figures in the lab, per partition and for the table, equal pandas' over `frame`."""
    stats = lab.tables[table].inspect.stats()
    for _, row in stats.iterrows():
        part = frame if row.partition is None else frame[partition_of(frame) == row.partition]
        want = expected(part, row.column)
        where = f"{row.partition}.{row.column}"
        assert row.rows == want["rows"] and row.nulls == want["nulls"], (where, row.to_dict(), want)
        assert row.ndv == want["ndv"], (where, row.ndv, want)  # HLL is exact on these few values
        if want["nulls"] == want["rows"]:  # no value: no bounds (a string's lengths are 0)
            assert row["min"] is None and row["max"] is None, (where, row.to_dict())
        elif "avg_len" in want:
            assert row.max_len == want["max_len"] and row.avg_len == pytest.approx(want["avg_len"]), (where, want)
        elif row.type == "timestamp":
            assert pd.Timestamp(row["min"]).tz_localize(None) == want["min"], (where, row["min"], want)
            assert pd.Timestamp(row["max"]).tz_localize(None) == want["max"], (where, row["max"], want)
        else:
            assert float(row["min"]) == float(want["min"]) and float(row["max"]) == float(want["max"]), (where, want)
        assert row.accurate, (where, row.reason)


def stale(lab, table: str) -> dict:
    """The partitions whose statistics are not accurate now, with the reason."""
    fresh = lab.tables[table].inspect.freshness()
    return dict(sorted({r.partition: r.reason for r in fresh.itertuples() if not r.accurate}.items()))


@pytest.fixture
def iceberg(tmp_path):
    """A SQL catalog on SQLite with a local warehouse, as pyiceberg keeps one; its properties."""
    properties = {"type": "sql", "uri": f"sqlite:///{tmp_path}/iceberg-catalog.db",
                  "warehouse": f"file://{tmp_path}/iceberg-warehouse"}
    catalog = load_catalog("ice", **properties)
    catalog.create_namespace("db")
    return catalog, properties


def three_appends(catalog):
    """db.events partitioned by ds and day(ts), written by three appends: three partitions, two days."""
    table = catalog.create_table("db.events", schema=ICEBERG_SCHEMA, partition_spec=BY_DS_AND_DAY)
    table.append(rows(30, "web", 1))
    table.append(rows(12, "app", 2, 100))
    table.append(rows(7, "web", 2, 200))
    return table


def iceberg_partition(frame: pd.DataFrame) -> pd.Series:
    return "ds=" + frame["ds"] + "/ts_day=" + frame["ts"].dt.strftime("%Y-%m-%d")


def test_an_iceberg_table_is_analyzed_as_pyiceberg_reads_it(lab, iceberg):
    catalog, properties = iceberg
    three_appends(catalog)
    lab.attach("ice", properties)
    assert lab.sql("SHOW TABLES IN ice.db").df["tab_name"].tolist() == ["events"]
    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    assert lab.sql("SHOW PARTITIONS ice.db.events").df["partition"].tolist() == [
        "ds=app/ts_day=2026-01-02", "ds=web/ts_day=2026-01-01", "ds=web/ts_day=2026-01-02"]
    truth = catalog.load_table("db.events").scan().to_pandas()
    assert_stats(lab, "ice.db.events", truth, iceberg_partition)
    answer = lab.stats_answer("SELECT count(*), min(id), max(x) FROM ice.db.events")
    assert answer.frame is not None, answer.reason
    assert answer.frame.iloc[0].tolist() == [len(truth), truth["id"].min(), truth["x"].max()]
    described = lab.sql("DESCRIBE FORMATTED ice.db.events PARTITION (ds='web', ts_day='2026-01-02') note").df
    figures = dict(zip(described.info_name, described.info_value, strict=True))
    part = truth[iceberg_partition(truth) == "ds=web/ts_day=2026-01-02"]
    assert figures["num_nulls"] == str(part["note"].isna().sum())
    # the lab's name for it works as well, and a query reads the snapshot's rows
    assert lab.sql("SELECT count(*) FROM ice_db.events WHERE ds = 'web'").df.iloc[0, 0] == (truth.ds == "web").sum()


def test_each_iceberg_commit_makes_stale_exactly_the_partitions_it_touched(lab, iceberg):
    catalog, properties = iceberg
    three_appends(catalog)
    lab.attach("ice", properties)
    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    assert stale(lab, "ice.db.events") == {}

    table = catalog.load_table("db.events")
    table.append(rows(3, "app", 2, 300))  # another writer appends to one partition
    appended = catalog.load_table("db.events").current_snapshot().snapshot_id
    # a reader of the metastore alone (the dashboard's landing) sees a commit the lab has not followed yet
    judged = lab.metastore.accuracy.stats_compliance("ice_db", "events", ["x"])
    assert all(not ok and "not followed yet" in why for ok, why in judged.values()), judged
    landing = lab.tables.overview().set_index("table").loc["events"]
    assert landing.kind == "iceberg" and landing.stale_partitions == 3
    assert stale(lab, "ice.db.events") == {
        "ds=app/ts_day=2026-01-02": f"snapshot {appended} appended 1 file to ds=app/ts_day=2026-01-02 after the last "
                                    "analyze"}
    # an answer is never a figure of a snapshot gone by: count(*) comes from the new snapshot's record counts,
    # a min from a scan (the lab's statistics of that partition are stale)
    count = lab.stats_answer("SELECT count(*) AS n FROM ice.db.events WHERE ds = 'app'")
    assert count.frame.n.tolist() == [15] and f"metadata of snapshot {appended}" in count.reason
    smallest = lab.stats_answer("SELECT min(id) FROM ice.db.events")
    assert smallest.frame is None and "appended 1 file" in smallest.reason
    assert lab.sql("SELECT count(*) FROM ice.db.events").df.iloc[0, 0] == 52

    # a copy-on-write delete rewrites the files holding the rows it deletes, in the partitions they are in
    catalog.load_table("db.events").delete(EqualTo("id", 5))
    deleting = catalog.load_table("db.events").current_snapshot().snapshot_id
    assert sorted(stale(lab, "ice.db.events")) == ["ds=app/ts_day=2026-01-02", "ds=web/ts_day=2026-01-01"]
    assert stale(lab, "ice.db.events")["ds=web/ts_day=2026-01-01"] == (
        f"snapshot {deleting} removed 1 file, wrote 1 file in ds=web/ts_day=2026-01-01 after the last analyze")

    # re-analyzing in Drill's form reads only the files the commits added
    lab.sql("SET metastore.enabled = true")
    first = lab.sql("ANALYZE TABLE ice.db.events REFRESH METADATA COMPUTE STATISTICS").details
    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    catalog.load_table("db.events").append(rows(2, "web", 2, 400))
    refresh = lab.sql("ANALYZE TABLE ice.db.events REFRESH METADATA COMPUTE STATISTICS").details
    newest = [t.file.file_path for t in catalog.load_table("db.events").scan().plan_files()
              if t.file.file_path not in {f"file://{p}" for p in first.scanned_files + first.reused_files}]
    assert [f"file://{p}" for p in refresh.scanned_files] == newest and len(newest) == 1
    lab.sql("ANALYZE TABLE ice.db.events PARTITION (ds='web', ts_day='2026-01-02') COMPUTE STATISTICS FOR ALL COLUMNS")
    assert stale(lab, "ice.db.events") == {}
    assert_stats(lab, "ice.db.events", catalog.load_table("db.events").scan().to_pandas(), iceberg_partition)


def test_an_overwritten_iceberg_partition_is_stale_and_its_old_files_are_not_read(lab, iceberg):
    catalog, properties = iceberg
    table = catalog.create_table("db.events", schema=ICEBERG_SCHEMA, partition_spec=BY_DS_AND_DAY)
    table.append(rows(30, "web", 1))
    table.append(rows(12, "app", 2, 100))
    lab.attach("ice", properties)
    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    catalog.load_table("db.events").overwrite(rows(4, "app", 2, 500), overwrite_filter=EqualTo("ds", "app"))
    assert list(stale(lab, "ice.db.events")) == ["ds=app/ts_day=2026-01-02"]
    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    truth = catalog.load_table("db.events").scan().to_pandas()
    assert len(truth) == 34  # the replaced files are still on disk, and are not rows of this snapshot
    assert_stats(lab, "ice.db.events", truth, iceberg_partition)


def test_renamed_and_added_iceberg_columns_are_read_by_field_id(lab, iceberg):
    catalog, properties = iceberg
    table = catalog.create_table("db.events", schema=ICEBERG_SCHEMA, partition_spec=BY_DS_AND_DAY)
    table.append(rows(20, "web", 1))
    with table.update_schema() as update:
        update.rename_column("x", "clicks")
        update.add_column("score", DoubleType())
    table = catalog.load_table("db.events")
    later = rows(6, "web", 1, 50).rename_columns(["id", "ds", "ts", "clicks", "amount", "note"])
    table.append(later.append_column("score", pa.array([0.5 * i for i in range(6)], pa.float64())))
    lab.attach("ice", properties)
    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    truth = catalog.load_table("db.events").scan().to_pandas()
    assert truth["clicks"].notna().sum() > 6  # the older file's values, under the new name
    assert_stats(lab, "ice.db.events", truth, iceberg_partition)
    # footers are read by field id too (Drill's levels and pruning use them)
    lab.sql("SET metastore.enabled = true")
    lab.sql("ANALYZE TABLE ice.db.events REFRESH METADATA COMPUTE STATISTICS")
    assert truth["clicks"].max() < 100
    report = lab.explain("SELECT * FROM ice.db.events WHERE clicks > 100")
    assert report.kept() == [] and len(report.pruned()) == 2, report.to_pandas()
    report = lab.explain("SELECT * FROM ice.db.events WHERE clicks >= 18")  # only the older file holds one
    assert len(report.kept()) == 1 and "ts_day" in report.kept()[0], report.to_pandas()
    # a run over the attached table is kept under its mirror, with the snapshot's rows counted
    ran = lab.explain("SELECT * FROM ice.db.events WHERE clicks >= 18", run=True)
    assert ran.actual_rows == int((truth["clicks"] >= 18).sum()) and ran.run_id is not None
    assert len(lab.tables["ice.db.events"].inspect.runs()) == 1


def test_promoted_dropped_and_added_iceberg_columns_read_every_file_as_the_current_schema_says(lab, iceberg):
    """int -> long and float -> double (the spec's promotions), a column dropped and one added between two
    appends: the older file's int32 and float32 values are read as the wider type, the dropped column is gone,
    the added one NULL in the older file; every tier's figures equal pandas' over pyiceberg's own read."""
    from pyiceberg.types import FloatType

    catalog, properties = iceberg
    table = catalog.create_table("db.evolved", schema=Schema(
        NestedField(1, "n", IntegerType(), required=False), NestedField(2, "f", FloatType(), required=False),
        NestedField(3, "gone", StringType(), required=False)))
    table.append(pa.table({"n": pa.array([1, 2, None, 2**31 - 1], pa.int32()),
                           "f": pa.array([1.5, None, -2.25, 3.0], pa.float32()), "gone": ["a", "b", "c", "d"]}))
    with table.update_schema() as update:
        update.update_column("n", LongType())
        update.update_column("f", DoubleType())
        update.delete_column("gone")
        update.add_column("added", StringType())
    catalog.load_table("db.evolved").append(pa.table({"n": pa.array([2**40, -5], pa.int64()),
                                                      "f": pa.array([1e300, 0.1], pa.float64()),
                                                      "added": ["x", None]}))
    truth = catalog.load_table("db.evolved").scan().to_pandas()
    lab.attach("ice", properties)
    for clause in ("", "NOSCAN"):
        lab.sql(f"ANALYZE TABLE ice.db.evolved COMPUTE STATISTICS FOR ALL COLUMNS {clause}")
        stats = lab.tables["ice.db.evolved"].inspect.stats().set_index("column")
        assert list(stats.index) == ["n", "f", "added"] and list(stats.type) == ["bigint", "double", "string"]
        for column in ("n", "f"):
            values = truth[column].dropna()
            assert (stats.loc[column, "nulls"], stats.loc[column, "ndv"]) == (1, values.nunique()), (clause, column)
            assert (stats.loc[column, "min"], stats.loc[column, "max"]) == (values.min(), values.max()), (clause, column)
        assert stats.loc["added", "nulls"] == int(truth.added.isna().sum()) == 5
    assert sorted(lab.sql("SELECT n FROM ice.db.evolved WHERE n IS NOT NULL").df.n) == sorted(truth.n.dropna())


def test_a_delta_table_is_analyzed_and_followed_version_by_version(lab, tmp_path):
    path = str(tmp_path / "delta-events")
    frame = rows(30, "2026-01-01", 1).to_pandas()
    write_deltalake(path, frame, partition_by=["ds"])
    write_deltalake(path, rows(10, "2026-01-02", 2, 100).to_pandas(), partition_by=["ds"], mode="append")
    write_deltalake(path, rows(5, "2026-01-03", 3, 200).to_pandas(), partition_by=["ds"], mode="append")
    lab.register_external("events", path, format="delta")
    lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS")

    def truth():
        return DeltaTable(path).to_pandas()

    def partition_of(f):
        return "ds=" + f["ds"]
    assert_stats(lab, "events", truth(), partition_of)

    write_deltalake(path, rows(4, "2026-01-02", 2, 300).to_pandas(), partition_by=["ds"], mode="append")  # version 3
    judged = lab.metastore.accuracy.stats_compliance("default", "events", ["x"])  # the metastore alone: not followed yet
    assert all(not ok and "versions after 2, not followed yet" in why for ok, why in judged.values()), judged
    assert lab.tables.overview().set_index("table").loc["events"].kind == "delta"
    DeltaTable(path).delete("id = 7")  # version 4: rewrites the file of 2026-01-01 holding it
    assert stale(lab, "events") == {
        "ds=2026-01-01": "version 4 removed 1 file, wrote 1 file in ds=2026-01-01 after the last analyze",
        "ds=2026-01-02": "version 3 appended 1 file to ds=2026-01-02 after the last analyze"}
    assert lab.sql("SELECT count(*) FROM events").df.iloc[0, 0] == len(truth()) == 48
    # a partition overwritten (version 5): its old files stay on disk and are not rows of this version
    write_deltalake(path, rows(2, "2026-01-03", 3, 900).to_pandas(), partition_by=["ds"], mode="overwrite",
                    predicate="ds = '2026-01-03'")
    assert sorted(stale(lab, "events")) == ["ds=2026-01-01", "ds=2026-01-02", "ds=2026-01-03"]
    assert len(os.listdir(os.path.join(path, "ds=2026-01-03"))) == 2
    lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS")
    assert stale(lab, "events") == {}
    assert_stats(lab, "events", truth(), partition_of)
    # the Engines tab: which columns Delta's log keeps figures for, in how many files (the lab has no NDV to put there)
    page = TablePage(lab, "default.events")
    page.selected_index = TABS.index("Engines")
    text = page.children[TABS.index("Engines")].children[0].value
    files = len(DeltaTable(path).file_uris())
    for column in ("id", "ts", "x", "amount", "note"):
        assert f"<code>{column}</code>: {files} of {files} file(s)" in text, text
    shown = lab.tables["events"].engines()
    shown_files = dict(zip(shown.column, shown.files_with_figures, strict=True))
    assert shown_files == dict.fromkeys(("id", "ts", "x", "amount", "note"), files)
    # its directories keep the files of older versions: they are not its partitions, and MSCK REPAIR says so
    with pytest.raises(InvalidArgument, match="is a delta table, whose partitions are those its snapshot lists"):
        lab.sql("MSCK REPAIR TABLE events")


def test_what_the_lab_cannot_read_is_refused_by_name(lab, iceberg, tmp_path):
    catalog, properties = iceberg
    catalog.create_table("db.nothing_yet", schema=Schema(NestedField(1, "id", LongType(), required=False)))
    lab.attach("ice", properties)
    with pytest.raises(InvalidArgument, match="ice.db.nothing_yet has no snapshot yet"):
        lab.tables["ice.db.nothing_yet"].publish()
    catalog.create_table("db.tagged", schema=Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "tags", ListType(3, StringType(), element_required=False), required=False)))
    lab.attach("ice", properties)
    # a column the lab cannot read is left out by name, never the whole table
    analyzed = lab.sql("ANALYZE TABLE ice.db.tagged COMPUTE STATISTICS FOR ALL COLUMNS").details
    assert analyzed.columns == ["id"]
    tagged = lab.resolve("ice.db.tagged")
    assert [c.name for c in tagged.cols] == ["id"]
    assert "tags" in json.loads(tagged.parameters["colstats.columns.skipped"])
    with pytest.raises(NoSuchObjectException, match="table ice.db.nothing does not exist"):
        lab.sql("DESCRIBE ice.db.nothing")
    with pytest.raises(NoSuchObjectException, match="no Delta table at .*not-delta"):
        lab.register_external("nothing", str(tmp_path / "not-delta"), format="delta")
    # column mapping set without its reader feature (as deltalake 1.6.6 writes it when deletion vectors are on too)
    mapped = str(tmp_path / "mapped")
    write_deltalake(mapped, pd.DataFrame({"id": [1, 2]}), configuration={"delta.enableDeletionVectors": "true"})
    take_column_mapping(mapped)
    with open(os.path.join(mapped, "_delta_log", f"{2:020d}.json"), "x") as f:
        f.write(json.dumps({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                                         "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]}}))
    with pytest.raises(InvalidArgument, match=r"sets column mapping \(name\) but its protocol does not list"):
        lab.register_external("mapped", mapped, format="delta")
    assert "mapped" not in lab.metastore.catalog.get_tables("default")
    with pytest.raises(InvalidArgument, match="cannot open Iceberg catalog bad"):
        lab.attach("bad", {"type": "no-such-catalog-type"})
    path = str(tmp_path / "delta")
    write_deltalake(path, pd.DataFrame({"id": [1, 2]}))
    lab.register_external("plain", path, format="delta")
    with pytest.raises(InvalidArgument, match="Delta keeps no NDV"):
        lab.tables["plain"].publish()


def iceberg_serialized(value, type_name: str) -> bytes:
    """Iceberg's single-value serialization, written from the spec here (not by the lab)."""
    if type_name == "string":
        return value.encode("utf-8")
    if type_name == "bigint":
        return struct.pack("<q", int(value))
    if type_name == "int":
        return struct.pack("<i", int(value))
    if type_name == "double":
        return struct.pack("<d", float(value))
    if type_name == "timestamp":
        return struct.pack("<q", (pd.Timestamp(value) - pd.Timestamp("1970-01-01")) // pd.Timedelta(microseconds=1))
    raise AssertionError(type_name)


def theta_hashes(values: list[bytes]) -> set[int]:
    """The hashes a DataSketches theta sketch keeps of these values in exact mode (default seed 9001: the
    first 64 bits of MurmurHash3 x64-128, shifted right once); DataSketches skips an empty value, as Iceberg's
    and Trino's sketches do."""
    return {mmh3.hash64(v, seed=9001, x64arch=True, signed=False)[0] >> 1 for v in values if v}


def assert_puffin_matches(catalog, lab, table_name: str) -> dict[str, int]:
    """The statistics file registered on the current snapshot, read with pyiceberg's Puffin reader: one theta
    blob per column whose sketch holds exactly the hashes of Iceberg's serialization of the column's values;
    returns each column's `ndv` property."""
    table = catalog.load_table(table_name)
    snapshot = table.current_snapshot().snapshot_id
    registered = [f for f in table.metadata.statistics if f.snapshot_id == snapshot]
    assert len(registered) == 1
    with table.io.new_input(registered[0].statistics_path).open() as handle:  # pyiceberg's own FileIO: local or S3
        puffin = PuffinFile(handle.read())
    assert puffin.footer.properties["created-by"].startswith("colstats_lab")
    truth = table.scan().to_arrow()
    types = {"id": "bigint", "ds": "string", "ts": "timestamp", "x": "int", "amount": "double", "note": "string"}
    by_id = {f.field_id: f.name for f in table.schema().fields}
    ndv = {}
    for blob in puffin.footer.blobs:
        assert blob.type == "apache-datasketches-theta-v1" and blob.snapshot_id == snapshot
        column = by_id[blob.fields[0]]
        values = [iceberg_serialized(v, types[column]) for v in truth.column(column).to_pylist() if v is not None]
        sketch = compact_theta_sketch.deserialize(puffin.get_blob_payload(blob))
        assert set(sketch) == theta_hashes(values), column
        if types[column] == "string":  # Python's DataSketches fed the same UTF-8 bytes keeps the same hashes
            fed = update_theta_sketch()
            for v in truth.column(column).to_pylist():
                if v is not None:
                    fed.update(v)
            assert set(fed.compact()) == set(sketch), column
        assert int(blob.properties["ndv"]) == len(set(values) - {b""}), column
        ndv[column] = int(blob.properties["ndv"])
    assert sorted(ndv) == sorted(types)
    return ndv


def test_publish_writes_a_puffin_file_iceberg_readers_read_and_rescans_only_what_changed(lab, iceberg):
    catalog, properties = iceberg
    three_appends(catalog)
    lab.attach("ice", properties)
    first = lab.tables["ice.db.events"].publish().details  # nothing analyzed yet: it analyzes first
    assert sorted(first.analyzed_first) == sorted(first.scanned) == [
        "ds=app/ts_day=2026-01-02", "ds=web/ts_day=2026-01-01", "ds=web/ts_day=2026-01-02"]
    assert_puffin_matches(catalog, lab, "db.events")
    # registering the file is a commit of the table's metadata, which the lab follows: statistics stay accurate
    assert all(ok for ok, _ in lab.metastore.accuracy.stats_compliance("ice_db", "events", ["x"]).values())
    assert lab.tables["ice.db.events"].publish().details.unchanged  # nothing changed: nothing written

    catalog.load_table("db.events").overwrite(rows(5, "app", 2, 700), overwrite_filter=EqualTo("ds", "app"))
    again = lab.tables["ice.db.events"].publish().details
    assert again.scanned == again.analyzed_first == ["ds=app/ts_day=2026-01-02"]
    assert sorted(again.reused) == ["ds=web/ts_day=2026-01-01", "ds=web/ts_day=2026-01-02"]
    ndv = assert_puffin_matches(catalog, lab, "db.events")
    shown = lab.tables["ice.db.events"].engines()
    current = shown[shown.current]
    assert sorted(current.column) == sorted(ndv) and dict(zip(current.column, current.puffin_ndv, strict=True)) == ndv
    lab_ndv = dict(zip(current.column, current.lab_ndv, strict=True))
    # the lab's NDV counts the empty string, which a theta sketch never holds (DataSketches skips empty input)
    assert lab_ndv == {**ndv, "ds": None, "note": ndv["note"] + 1} and current.lab_accurate.dropna().all()
    # the dashboard's Engines tab of an Iceberg table: the blobs registered, the current snapshot's first
    page = TablePage(lab, "ice_db.events")
    page.selected_index = TABS.index("Engines")
    view = page.children[TABS.index("Engines")].children[0]
    assert f"{2 * len(ndv)} theta blob(s) registered, {len(ndv)} for the current snapshot" in view.header.value
    assert view.grid.value.count("(current)") == len(ndv) and view.grid.value.count("(older)") == len(ndv)


def test_a_publish_another_writers_commit_beat_is_tried_again_and_gives_up_after_three_removing_only_its_file(
        lab, iceberg, monkeypatch):
    """Another writer's append lands while the catalog stages the lab's statistics commit (a real pyiceberg commit,
    made as the catalog writes the lab's new metadata file, before it swaps the pointer): the catalog refuses the
    lab's, which registers the same file on the table as it is now. A writer that wins every race: three refusals,
    one line, the lab's unregistered file removed and nothing else of the table's."""
    from pyiceberg.catalog import MetastoreCatalog

    catalog, properties = iceberg
    three_appends(catalog)
    lab.attach("ice", properties)
    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    followed = catalog.load_table("db.events").current_snapshot().snapshot_id
    write_metadata = MetastoreCatalog._write_metadata
    won: list[int] = []
    racing: list[bool] = []

    def another_writer_wins(metadata, io, metadata_path):
        if not racing and len(won) < wins and metadata.statistics:  # the lab's commit: it registers statistics
            racing.append(True)
            try:
                catalog.load_table("db.events").append(rows(2, "web", 3, 900 + 10 * len(won)))
            finally:
                racing.clear()
            won.append(1)
        return write_metadata(metadata, io, metadata_path)

    monkeypatch.setattr(MetastoreCatalog, "_write_metadata", staticmethod(another_writer_wins))
    wins = 1
    outcome = lab.tables["ice.db.events"].publish().details
    assert len(won) == 1 and outcome.snapshot_id == followed
    now = catalog.load_table("db.events")
    assert now.current_snapshot().snapshot_id != followed  # the other writer's append is the current snapshot
    registered = [f for f in now.metadata.statistics if f.snapshot_id == followed]
    assert [f.statistics_path for f in registered] == [outcome.statistics_path]
    assert os.path.exists(outcome.statistics_path.removeprefix("file://"))

    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")  # the lab follows the new snapshot
    metadata_dir = now.metadata.location.removeprefix("file://") + "/metadata"
    before = set(os.listdir(metadata_dir))
    won.clear()
    wins = 3
    with pytest.raises(QueryError, match="refused 3 commits in a row"):
        lab.tables["ice.db.events"].publish()
    assert len(won) == 3
    after = set(os.listdir(metadata_dir))
    # the three winning appends' files came (and the metadata files the refused commits staged); no statistics file
    # of the lab's stays, and nothing that was there is gone
    assert not [name for name in after - before if "-colstats-" in name] and before <= after
    assert outcome.statistics_path.rsplit("/", 1)[-1] in after  # the first publish's file, registered, stays


@pytest.mark.both_backends  # the round's claims and history, the tiers' bounds: on PostgreSQL too
def test_an_auto_analyze_round_republishes_a_table_that_asks_for_it_on_the_snapshot_another_engine_committed(
        lab, iceberg):
    """After another engine's commit, one round re-reads the partition it changed and, for the table whose property
    says `colstats.publish=auto`, registers the statistics on the new current snapshot, saying how long after the
    commit they landed; a table without it is analyzed, its Puffin left where it was."""
    catalog, properties = iceberg
    three_appends(catalog)
    plain = catalog.create_table("db.plain", schema=ICEBERG_SCHEMA, partition_spec=BY_DS_AND_DAY)
    plain.append(rows(10, "web", 1))
    catalog.load_table("db.events").transaction().set_properties({"colstats.publish": "auto"}).commit_transaction()
    lab.attach("ice", properties)
    lab.tables["ice.db.events"].publish()
    lab.tables["ice.db.plain"].publish()
    catalog.load_table("db.events").append(rows(6, "app", 2, 900))  # another engine commits to each
    catalog.load_table("db.plain").append(rows(4, "web", 1, 950))
    current = catalog.load_table("db.events").current_snapshot().snapshot_id

    outcome = lab.autoanalyze.run(databases="ice_db").details
    by_table = {a["table"]: a for a in outcome.analyzed}
    assert by_table["ice_db.events"]["owners"] == ["ds=app/ts_day=2026-01-02"]  # only what the commit changed
    landed = by_table["ice_db.events"]["published"]
    assert landed["snapshot"] == current and 0 <= landed["after_commit_seconds"] < 600
    assert f"published ice_db.events for snapshot {current}" in outcome.message
    assert "published" not in by_table["ice_db.plain"]
    assert_puffin_matches(catalog, lab, "db.events")  # on the new snapshot: the rows a reader sees now
    plain = catalog.load_table("db.plain")
    assert [f.snapshot_id for f in plain.metadata.statistics] != [plain.current_snapshot().snapshot_id]


def test_uuid_fixed_and_decimal_columns_are_analyzed_and_a_time_column_is_left_out_by_name(lab, iceberg):
    """pyiceberg's own `inspect.entries()` fails on a uuid column (ArrowNotImplementedError: extension): the lab reads
    the manifests itself. A uuid and a fixed are kept as their bytes (what Spark reads of the file, and Iceberg's
    serialization of them in the Puffin blobs), a decimal's blob hashes its unscaled value's fewest big-endian
    bytes; Spark has no time type here: that column is left out, named."""
    from pyiceberg.types import DecimalType, FixedType, TimeType, UUIDType

    catalog, properties = iceberg
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "eventUuid", UUIDType(), required=False),
                    NestedField(3, "at", TimeType(), required=False), NestedField(4, "code", FixedType(4), required=False),
                    NestedField(5, "price", DecimalType(10, 2), required=False))
    table = catalog.create_table("db.types", schema=schema)
    table.append(pa.Table.from_pylist([
        {"id": i, "eventUuid": uuid.UUID(int=(i % 9) * 7919).bytes if i % 3 else None,
         "at": dt.time(i % 24, i % 60) if i % 4 else None, "code": bytes([i % 5, 1, 2, 3]) if i % 5 else None,
         "price": None if i % 6 == 0 else Decimal(i) / 4} for i in range(60)], schema=table.schema().as_arrow()))
    lab.attach("ice", properties)
    said = lab.sql("ANALYZE TABLE ice.db.types COMPUTE STATISTICS FOR ALL COLUMNS").message
    assert "(id, eventuuid, code, price)" in said.lower(), said
    truth = catalog.load_table("db.types").scan().to_arrow()
    stats = lab.tables["ice.db.types"].inspect.stats().set_index("column")
    for column in ("eventUuid", "code", "price"):
        values = truth.column(column)
        assert stats.loc[column, "nulls"] == values.null_count, column
    lengths = [len(v) for v in truth.column("code").to_pylist() if v is not None]
    assert stats.loc["code", "max_len"] == 4 and stats.loc["code", "avg_len"] == pytest.approx(sum(lengths) / 60)
    prices = [v for v in truth.column("price").to_pylist() if v is not None]
    assert (Decimal(str(stats.loc["price", "min"])), Decimal(str(stats.loc["price", "max"]))) == (min(prices), max(prices))
    skipped = json.loads(lab.resolve("ice.db.types").parameters["colstats.columns.skipped"])
    assert "at" in skipped and "time" in skipped["at"], skipped
    assert "Every value read" not in lab.sql("ANALYZE TABLE ice.db.types COMPUTE STATISTICS FOR ALL COLUMNS NOSCAN").message

    lab.tables["ice.db.types"].publish()
    table = catalog.load_table("db.types")
    registered = [f for f in table.metadata.statistics if f.snapshot_id == table.current_snapshot().snapshot_id]
    with table.io.new_input(registered[0].statistics_path).open() as handle:
        puffin = PuffinFile(handle.read())
    by_id = {blob.fields[0]: blob for blob in puffin.footer.blobs}
    for field_id, column in ((2, "eventUuid"), (4, "code")):  # the values' bytes, as the spec serializes both
        values = [v if isinstance(v, bytes) else v.bytes for v in truth.column(column).to_pylist() if v is not None]
        sketch = compact_theta_sketch.deserialize(puffin.get_blob_payload(by_id[field_id]))
        assert set(sketch) == theta_hashes(values), column
    # a decimal as the spec serializes it: its unscaled value, two's complement, big-endian, in the fewest bytes
    unscaled = [int(v.scaleb(2)) for v in truth.column("price").to_pylist() if v is not None]
    serialized = [u.to_bytes(((u if u >= 0 else ~u).bit_length() + 8) // 8, "big", signed=True) for u in unscaled]
    assert {len(b) for b in serialized} == {1, 2}  # 0.25 .. 14.75: one byte up to 1.27, two above
    sketch = compact_theta_sketch.deserialize(puffin.get_blob_payload(by_id[5]))
    assert set(sketch) == theta_hashes(serialized) and int(by_id[5].properties["ndv"]) == len(set(unscaled))


def test_publish_registers_a_partition_statistics_file_and_one_another_engine_wrote_is_read(lab, iceberg):
    """The file holds what pyiceberg's own `inspect.partitions()` says of the snapshot, in the spec's schema (field
    ids 1 to 12), and is registered on the snapshot; a file another writer registered on a later snapshot is shown
    as it is and not replaced."""
    catalog, properties = iceberg
    three_appends(catalog)
    web = next(t.file for t in catalog.load_table("db.events").scan().plan_files() if "ds=web" in t.file.file_path)
    commit_position_deletes(catalog.load_table("db.events"), web, [1, 2])
    lab.attach("ice", properties)
    outcome = lab.tables["ice.db.events"].publish().details
    assert outcome.partition_statistics_path.endswith(".parquet") and "Partition statistics:" in outcome.message
    table = catalog.load_table("db.events")
    snapshot = table.current_snapshot().snapshot_id
    assert [(f.snapshot_id, f.statistics_path) for f in table.metadata.partition_statistics] == [
        (snapshot, outcome.partition_statistics_path)]
    written = pq.read_schema(outcome.partition_statistics_path.removeprefix("file://"))
    assert [(f.name, int(f.metadata[b"PARQUET:field_id"])) for f in written] == [
        ("partition", 1), ("spec_id", 2), ("data_record_count", 3), ("data_file_count", 4),
        ("total_data_file_size_in_bytes", 5), ("position_delete_record_count", 6), ("position_delete_file_count", 7),
        ("equality_delete_record_count", 8), ("equality_delete_file_count", 9), ("total_record_count", 10),
        ("last_updated_at", 11), ("last_updated_snapshot_id", 12)]
    truth = {f"ds={r['partition']['ds']}/ts_day={r['partition']['ts_day']}": r
             for r in table.inspect.partitions().to_pylist()}
    shown = lab.tables["ice.db.events"].partition_statistics().set_index("partition")
    assert sorted(shown.index) == sorted(truth)
    for name, row in truth.items():
        assert [shown.loc[name, c] for c in ("data_record_count", "data_file_count", "total_data_file_size_in_bytes",
                                             "position_delete_record_count", "position_delete_file_count",
                                             "equality_delete_record_count", "last_updated_snapshot_id")] == [
            row["record_count"], row["file_count"], row["total_data_file_size_in_bytes"],
            row["position_delete_record_count"], row["position_delete_file_count"],
            row["equality_delete_record_count"], row["last_updated_snapshot_id"]], name
    assert shown.position_delete_record_count.sum() == 2 and shown.position_delete_file_count.sum() == 1

    # another engine appends and registers its own file for the new snapshot: shown as it wrote it, kept
    catalog.load_table("db.events").append(rows(3, "app", 2, 800))
    table = catalog.load_table("db.events")
    theirs = table.location() + "/metadata/partition-stats-theirs.parquet"
    frame = pa.table({"partition": pa.array([{"ds": "app", "ts_day": dt.date(2026, 1, 2)}]),
                      "spec_id": pa.array([0], pa.int32()), "data_record_count": pa.array([15], pa.int64()),
                      "data_file_count": pa.array([2], pa.int32()),
                      "total_data_file_size_in_bytes": pa.array([4321], pa.int64())})
    pq.write_table(frame, theirs.removeprefix("file://"))
    from pyiceberg.table.statistics import PartitionStatisticsFile
    from pyiceberg.table.update import SetPartitionStatisticsUpdate
    registered = PartitionStatisticsFile.model_validate({"snapshot-id": table.current_snapshot().snapshot_id,
                                                         "statistics-path": theirs, "file-size-in-bytes": 1})
    catalog.commit_table(table, (), (SetPartitionStatisticsUpdate.model_validate({"partition-statistics": registered}),))
    shown = lab.tables["ice.db.events"].partition_statistics()
    assert shown[["partition", "data_record_count", "data_file_count"]].values.tolist() == [
        ["ds=app/ts_day=2026-01-02", 15, 2]]
    assert lab.tables["ice.db.events"].publish().details.partition_statistics_path == theirs


def test_odd_partition_values_and_a_warehouse_path_with_spaces_read_every_row(lab, tmp_path):
    """Files found by their partition (Spark's discovery where the layout allows, else by path as Spark spells
    it, %-quoted): a space, %, # and non-ASCII in the warehouse path and in partition values."""
    properties = {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db",
                  "warehouse": f"file://{tmp_path}/ware house"}  # pyiceberg fails under a % or # (its own decoding)
    catalog = load_catalog("odd", **properties)
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", schema=ICEBERG_SCHEMA,
                                 partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "ds")))
    for index, ds in enumerate(["a b", "50%", "x#y", "é/ü", "plain"]):
        table.append(rows(3 + index, ds, 1, 100 * index))
    lab.attach("odd", properties)
    lab.sql("ANALYZE TABLE odd.db.t COMPUTE STATISTICS FOR ALL COLUMNS")
    truth = catalog.load_table("db.t").scan().to_pandas()
    assert_stats(lab, "odd.db.t", truth, lambda f: "ds=" + f["ds"].map(escape_path_name))
    counted = lab.sql("SELECT ds, count(*) AS n FROM odd.db.t GROUP BY ds").df
    assert dict(zip(counted.ds, counted.n, strict=True)) == truth.groupby("ds").size().to_dict()


class _DeleteManifestWriter(ManifestWriterV2):
    """A v2 manifest of delete files (pyiceberg writes data manifests only): content "deletes"."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


def commit_delete_file(table, delete_file) -> None:
    """A delete file committed in a delete manifest by a snapshot of operation "delete"; pyiceberg writes neither
    itself, so its snapshot producer is given the manifest writer here."""
    with table.transaction() as transaction:
        producer = _FastAppendFiles(operation=Operation.DELETE, transaction=transaction, io=table.io)
        producer.new_manifest_writer = lambda spec: _DeleteManifestWriter(  # type: ignore[method-assign]
            spec, producer.schema(), producer.new_manifest_output(), producer._snapshot_id, producer._compression)
        with producer:
            producer.append_data_file(delete_file)


def commit_position_deletes(table, data_file, positions: list[int]) -> None:
    """A position-delete file as Iceberg's spec lays it out (`file_path` and `pos` with their reserved field
    ids, sorted by position), committed in a delete manifest by a snapshot of operation "delete"; pyiceberg
    writes neither itself, so its snapshot producer is given the manifest writer here."""
    schema = pa.schema([pa.field("file_path", pa.string(), nullable=False, metadata={"PARQUET:field_id": "2147483546"}),
                        pa.field("pos", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "2147483545"})])
    path = f"{data_file.file_path.rsplit('/', 1)[0]}/deletes-{uuid.uuid4()}.parquet"  # local or on an object store
    written = io.BytesIO()
    pq.write_table(pa.table({"file_path": [data_file.file_path] * len(positions), "pos": sorted(positions)},
                            schema=schema), written)
    with table.io.new_output(path).create() as out:
        out.write(written.getvalue())
    delete_file = IcebergDataFile.from_args(
        content=DataFileContent.POSITION_DELETES, file_path=path, file_format=FileFormat.PARQUET,
        partition=data_file.partition, record_count=len(positions), file_size_in_bytes=len(written.getvalue()),
        column_sizes={}, value_counts={}, null_value_counts={}, nan_value_counts={}, lower_bounds={},
        upper_bounds={}, split_offsets=None, equality_ids=None, sort_order_id=None, spec_id=data_file.spec_id)
    commit_delete_file(table, delete_file)


def test_position_deletes_are_applied_and_their_commit_makes_the_partition_stale(lab, iceberg):
    catalog, properties = iceberg
    table = catalog.create_table("db.events", schema=ICEBERG_SCHEMA, partition_spec=BY_DS_AND_DAY,
                                 properties={"format-version": "2"})
    table.append(rows(30, "web", 1))
    table.append(rows(12, "app", 2, 100))
    lab.attach("ice", properties)
    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    web = next(t.file for t in table.scan().plan_files() if "ds=web" in t.file.file_path)
    commit_position_deletes(catalog.load_table("db.events"), web, [0, 5, 6, 29])  # ids 0, 5, 6 and 29
    deleting = catalog.load_table("db.events").current_snapshot().snapshot_id
    assert stale(lab, "ice.db.events") == {
        "ds=web/ts_day=2026-01-01": f"snapshot {deleting} appended 1 file to ds=web/ts_day=2026-01-01 after the "
                                    "last analyze"}
    truth = catalog.load_table("db.events").scan().to_pandas()  # pyiceberg applies the deletes itself
    assert len(truth) == 38 and not {0, 5, 6, 29} & set(truth.id)
    assert lab.sql("SELECT count(*), sum(id) FROM ice.db.events").df.iloc[0].tolist() == [38, truth.id.sum()]
    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    assert_stats(lab, "ice.db.events", truth, iceberg_partition)
    assert lab.stats_answer("SELECT count(*) FROM ice.db.events").frame.iloc[0, 0] == 38
    lab.tables["ice.db.events"].publish()
    assert_puffin_matches(catalog, lab, "db.events")  # the sketches hold the rows a reader sees
    lab.sql("SET metastore.enabled = true")
    with pytest.raises(InvalidArgument, match="delete files in ds=web/ts_day=2026-01-01"):
        lab.sql("ANALYZE TABLE ice.db.events REFRESH METADATA COMPUTE STATISTICS")


@pytest.mark.both_backends  # the round's claims and history, the tiers' bounds: on PostgreSQL too
def test_metadata_alone_and_a_sample_apply_position_deletes_and_their_bands_hold(lab, iceberg):
    """Row groups of 100 rows, a position-delete file naming rows of one file (two of them twice, as two writers
    may): NOSCAN counts the live rows exactly from the footers less the distinct positions deleted, and a sample
    leaves those rows out of the row groups it reads; every band holds the rows pyiceberg reads."""
    catalog, properties = iceberg
    table = catalog.create_table("db.events", schema=ICEBERG_SCHEMA, partition_spec=BY_DS_AND_DAY,
                                 properties={"format-version": "2", "write.parquet.row-group-limit": "100"})
    table.append(rows(2_000, "web", 1))
    table.append(rows(1_500, "app", 2, 5_000))
    web = next(t.file for t in table.scan().plan_files() if "ds=web" in t.file.file_path)
    commit_position_deletes(catalog.load_table("db.events"), web, list(range(0, 2_000, 7)))
    commit_position_deletes(catalog.load_table("db.events"), web, [0, 7, 3])  # 0 and 7 again
    truth = catalog.load_table("db.events").scan().to_pandas()
    assert len(truth) == 3_500 - len(set(range(0, 2_000, 7)) | {3})
    lab.attach("ice", properties)
    lab.set("colstats.sample.seed", 7)  # every band is checked: a fixed sample, not 1 % of runs missing one
    for clause in ("NOSCAN", "SAMPLE 20 PERCENT"):
        said = lab.sql(f"ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS {clause}").message
        assert "Every value read" not in said and "read whole" not in said, (clause, said)
        bounds = lab.tables["ice.db.events"].inspect.bounds()
        checked = 0
        for band in bounds[bounds.partition.notna() & bounds.figure.isin(["rows", "nulls", "ndv", "min", "max"])
                           & bounds.column.isin(["id", "x", "amount"])].itertuples():
            live = truth[iceberg_partition(truth) == band.partition][band.column]
            actual = {"rows": len(live), "nulls": int(live.isna().sum()), "ndv": live.nunique(),
                      "min": live.min(), "max": live.max()}[band.figure]
            where = (clause, band.partition, band.column, band.figure, band.value, band.low, band.high, actual)
            if band.exact:
                assert float(band.value) == float(actual), where
            assert band.low is None or float(band.low) <= float(actual), where
            assert band.high is None or float(actual) <= float(band.high), where
            checked += 1
        assert checked >= 20, clause
        counted = bounds[(bounds.figure == "rows") & (bounds.partition == "ds=web/ts_day=2026-01-01")]
        assert counted.exact.all() and (counted.value == int((truth.ds == "web").sum())).all(), clause


def commit_equality_deletes(table, deleted: pa.Table, partition=None) -> None:
    """An equality-delete file of `deleted`'s columns (each with its field id; the file's `equality_ids` are
    theirs), of `partition` (a data file's partition tuple; None: an unpartitioned table's), committed in a delete
    manifest by a snapshot of operation "delete", as Flink's upserts write them; pyiceberg writes none itself."""
    ids = {f.name: f.field_id for f in table.schema().fields}
    schema = pa.schema([pa.field(name, deleted.schema.field(name).type,
                                 metadata={"PARQUET:field_id": str(ids[name])}) for name in deleted.column_names])
    path = f"{table.location()}/data/equality-deletes-{uuid.uuid4()}.parquet"
    written = io.BytesIO()
    pq.write_table(deleted.cast(schema), written)
    with table.io.new_output(path).create() as out:
        out.write(written.getvalue())
    delete_file = IcebergDataFile.from_args(
        content=DataFileContent.EQUALITY_DELETES, file_path=path, file_format=FileFormat.PARQUET,
        partition=partition if partition is not None else Record(), record_count=deleted.num_rows,
        file_size_in_bytes=len(written.getvalue()), column_sizes={}, value_counts={}, null_value_counts={},
        nan_value_counts={}, lower_bounds={}, upper_bounds={}, split_offsets=None,
        equality_ids=[ids[name] for name in deleted.column_names], sort_order_id=None, spec_id=table.spec().spec_id)
    commit_delete_file(table, delete_file)


def duckdb_iceberg_rows(catalog, name: str) -> pd.DataFrame:
    """The rows DuckDB's iceberg_scan reads of the table's current metadata file."""
    return duckdb_iceberg_rows_of(catalog.load_table(name).metadata_location)


def duckdb_iceberg_rows_of(metadata: str) -> pd.DataFrame:
    """The rows DuckDB's iceberg_scan reads of an Iceberg metadata file."""
    connection = duckdb_with("avro", "iceberg")
    try:
        return connection.execute("SELECT * FROM iceberg_scan(?)", [metadata]).fetch_df()
    finally:
        connection.close()


@pytest.mark.both_backends  # the files' sequence numbers and equality columns kept in the metastore: PostgreSQL too
def test_equality_deletes_apply_to_their_partition_and_to_older_files_only(lab, iceberg):
    """Two equality-delete files of one partition, on `id` and on `x` (a NULL among its values, matching NULLs),
    one naming an id that lives in another partition; then rows with deleted ids written again: a delete
    applies to the rows of its own partition written before it (a smaller data sequence number), never to later
    ones. The truth is that rule applied with pandas to the rows written (pyiceberg cannot read these deletes;
    DuckDB 1.5.5's iceberg_scan applies an equality delete to every partition, ds=app's id 105 and NULL x too: it
    is the oracle of the delete's own partition here)."""
    catalog, properties = iceberg
    table = catalog.create_table("db.events", schema=ICEBERG_SCHEMA, partition_spec=BY_DS_AND_DAY,
                                 properties={"format-version": "2"})
    web, app = rows(30, "web", 1), rows(12, "app", 2, 100)
    table.append(web)
    table.append(app)
    lab.attach("ice", properties)
    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    web_file = next(t.file for t in table.scan().plan_files() if "ds=web" in t.file.file_path)
    commit_equality_deletes(catalog.load_table("db.events"), pa.table({"id": pa.array([3, 4, 105], pa.int64())}),
                            web_file.partition)
    commit_equality_deletes(catalog.load_table("db.events"), pa.table({"x": pa.array([None, 5], pa.int32())}),
                            web_file.partition)
    deleting = [s.snapshot_id for s in catalog.load_table("db.events").snapshots()[-2:]]
    reasons = stale(lab, "ice.db.events")
    assert list(reasons) == ["ds=web/ts_day=2026-01-01"]
    assert all(f"snapshot {snapshot} appended 1 file" in reasons["ds=web/ts_day=2026-01-01"] for snapshot in deleting)
    again = rows(3, "web", 1, 3)  # ids 3, 4 and 5 written again after the deletes, x of id 5 NULL
    catalog.load_table("db.events").append(again)
    before = web.to_pandas()
    kept = before[~before.id.isin([3, 4, 105]) & before.x.notna() & (before.x != 5)]
    truth = pd.concat([kept, app.to_pandas(), again.to_pandas()], ignore_index=True)
    assert len(truth) == 30 - 9 + 12 + 3 and 105 in set(truth.id)  # ids 3 and 4, 6 NULL x, id 21 (x of 5)
    assert lab.sql("SELECT count(*), sum(id) FROM ice.db.events").df.iloc[0].tolist() == [len(truth), truth.id.sum()]
    said = lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS").message
    assert_stats(lab, "ice.db.events", truth, iceberg_partition)
    assert lab.stats_answer("SELECT count(*) FROM ice.db.events").frame.iloc[0, 0] == len(truth), said
    duck = duckdb_iceberg_rows(catalog, "db.events")  # it deletes ds=app's rows too: compared where they agree
    assert sorted(duck[duck.ds == "web"].id) == sorted(truth[truth.ds == "web"].id)


def test_equality_deletes_of_an_unpartitioned_table_read_as_duckdb_reads_them_and_tiers_band_them(lab, iceberg):
    """An unpartitioned table with equality deletes on two column sets (one matching NULLs) and rows written again
    after them: a full ANALYZE gives every figure of the rows DuckDB's iceberg_scan reads; NOSCAN cannot count what
    equality deletes remove, so its rows are a band that holds, never exact; a sample reads such a table whole."""
    catalog, properties = iceberg
    table = catalog.create_table("db.flat", schema=ICEBERG_SCHEMA, properties={
        "format-version": "2", "write.parquet.row-group-limit": "20"})
    table.append(rows(120, "web", 1))
    commit_equality_deletes(catalog.load_table("db.flat"), pa.table({"note": pa.array(["", None], pa.string())}))
    commit_equality_deletes(catalog.load_table("db.flat"),
                            pa.table({"id": pa.array([2, 3, 500], pa.int64()), "x": pa.array([10, 7, 1], pa.int32())}))
    catalog.load_table("db.flat").append(rows(4, "app", 2, 0))  # ids 0-3 again, after the deletes: kept
    duck = duckdb_iceberg_rows(catalog, "db.flat")
    first = rows(120, "web", 1).to_pandas()
    gone = first.note.isna() | (first.note == "") | ((first.id == 2) & (first.x == 10)) | ((first.id == 3) & (first.x == 7))
    assert len(duck) == int((~gone).sum()) + 4 < 124  # DuckDB and the rule agree on this table
    lab.attach("ice", properties)
    said = lab.sql("ANALYZE TABLE ice.db.flat COMPUTE STATISTICS FOR ALL COLUMNS").message
    assert_stats(lab, "ice.db.flat", duck, None)
    said = lab.sql("ANALYZE TABLE ice.db.flat COMPUTE STATISTICS FOR ALL COLUMNS NOSCAN").message
    bounds = lab.tables["ice.db.flat"].inspect.bounds()
    counted = bounds[bounds.figure == "rows"].iloc[0]
    assert not counted.exact and counted.low <= len(duck) <= counted.high, (said, counted.to_dict())
    assert "equality deletes" in counted.method, counted.method
    # the count is shown as an estimate wherever it reaches: the landing, the statistics view's header, the report
    landing = tables_frame(lab.metastore).set_index("table")
    assert landing.loc["flat", "rows_band"] is not None and landing.loc["flat", "rows_band"][:2] == [counted.low,
                                                                                                  counted.high]
    header = StatsView(lab, "ice_db.flat").header.value
    assert "colstats-estimate" in header.split(" rows")[0] and f"{counted.value:,}" in header, header
    assert lab.tables["ice.db.flat"].report_data()["rows_band"] is not None
    for query in ("SELECT count(*) FROM ice.db.flat", "SELECT count(x) FROM ice.db.flat"):  # never a guessed count
        answer = lab.stats_answer(query)
        assert answer.frame is None and "rows of" in answer.reason and "estimated" in answer.reason, answer.reason
    assert lab.sql("SELECT count(*) FROM ice.db.flat").df.iloc[0, 0] == len(duck)
    for band in bounds[bounds.figure.isin(["nulls", "min", "max"]) & bounds.column.isin(["id", "x", "amount"])
                       ].itertuples():
        values = duck[band.column]
        actual = {"nulls": int(values.isna().sum()), "min": values.min(), "max": values.max()}[band.figure]
        assert band.low is None or float(band.low) <= float(actual), band
        assert band.high is None or float(actual) <= float(band.high), band
    said = lab.sql("ANALYZE TABLE ice.db.flat COMPUTE STATISTICS FOR ALL COLUMNS SAMPLE 10 PERCENT").message
    assert "read whole" in said, said
    assert_stats(lab, "ice.db.flat", duck, None)


def test_v3_deletion_vectors_are_applied_counted_exactly_from_metadata_and_read_as_duckdb_reads_them(lab, iceberg):
    """A v3 table whose deletion vectors (Puffin `deletion-vector-v1` blobs) delete rows of one partition's file:
    every figure of a full ANALYZE, NOSCAN's exact live rows (the vectors' cardinalities) and count(*) from
    metadata are those of the rows DuckDB's iceberg_scan reads; a sample leaves the deleted rows out."""
    catalog, properties = iceberg
    table = catalog.create_table("db.events", schema=ICEBERG_SCHEMA, partition_spec=BY_DS_AND_DAY,
                                 properties={"format-version": "2", "write.parquet.row-group-limit": "50"})
    web = rows(400, "web", 1)
    table.append(web)
    table.append(rows(120, "app", 2, 1_000))
    web_file = next(t.file for t in table.scan().plan_files() if "ds=web" in t.file.file_path)
    deleted = sorted(set(range(0, 400, 3)) | {1, 398})
    metadata = commit_v3_deletion_vectors(catalog.load_table("db.events"), {web_file: deleted})
    duck = duckdb_iceberg_rows_of(metadata)
    truth = pd.concat([web.to_pandas().drop(index=deleted), rows(120, "app", 2, 1_000).to_pandas()], ignore_index=True)
    assert sorted(duck.id) == sorted(truth.id)  # DuckDB applies the vectors as the positions say
    lab.register_external("v3events", metadata, format="iceberg")
    said = lab.sql("ANALYZE TABLE v3events COMPUTE STATISTICS FOR ALL COLUMNS").message
    assert_stats(lab, "v3events", duck, iceberg_partition)
    assert lab.stats_answer("SELECT count(*) FROM v3events").frame.iloc[0, 0] == len(duck), said
    lab.set("colstats.sample.seed", 3)
    for clause in ("NOSCAN", "SAMPLE 30 PERCENT"):
        said = lab.sql(f"ANALYZE TABLE v3events COMPUTE STATISTICS FOR ALL COLUMNS {clause}").message
        bounds = lab.tables["v3events"].inspect.bounds()
        counted = bounds[(bounds.figure == "rows") & (bounds.partition == "ds=web/ts_day=2026-01-01")]
        assert counted.exact.all() and (counted.value == 400 - len(deleted)).all(), (clause, said)
        for band in bounds[bounds.partition.notna() & bounds.figure.isin(["nulls", "min", "max"])
                           & bounds.column.isin(["id", "x", "amount"])].itertuples():
            values = duck[iceberg_partition(duck) == band.partition][band.column]
            actual = {"nulls": int(values.isna().sum()), "min": values.min(), "max": values.max()}[band.figure]
            assert band.low is None or float(band.low) <= float(actual), (clause, band)
            assert band.high is None or float(actual) <= float(band.high), (clause, band)


def test_a_table_whose_partition_spec_changed_is_partitioned_by_the_fields_every_live_file_has(lab, iceberg):
    """Files written before `day(ts)` was added keep a tuple of `ds` alone: the lab partitions by `ds`, which every
    file has, and its figures equal pyiceberg's read; a table that took its first partition field later is one
    partition. Publishing writes partition statistics over both specs."""
    catalog, properties = iceberg
    by_ds = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "ds"))
    table = catalog.create_table("db.events", schema=ICEBERG_SCHEMA, partition_spec=by_ds)
    table.append(rows(30, "web", 1))
    table.append(rows(12, "app", 2, 100))
    with table.update_spec() as update:
        update.add_field("ts", DayTransform(), "ts_day")
    catalog.load_table("db.events").append(rows(9, "web", 3, 200))
    plain = catalog.create_table("db.plain", schema=ICEBERG_SCHEMA)
    plain.append(rows(10, "web", 1))
    with plain.update_spec() as update:
        update.add_identity("ds")
    catalog.load_table("db.plain").append(rows(6, "app", 2, 50))
    lab.attach("ice", properties)

    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    assert lab.sql("SHOW PARTITIONS ice.db.events").df["partition"].tolist() == ["ds=app", "ds=web"]
    truth = catalog.load_table("db.events").scan().to_pandas()
    assert_stats(lab, "ice.db.events", truth, lambda f: "ds=" + f["ds"])
    lab.sql("ANALYZE TABLE ice.db.plain COMPUTE STATISTICS FOR ALL COLUMNS")
    assert not lab.resolve("ice.db.plain").is_partitioned
    assert_stats(lab, "ice.db.plain", catalog.load_table("db.plain").scan().to_pandas())
    shown = lab.tables["ice.db.events"].publish().details
    assert shown.partition_statistics_path
    counted = lab.tables["ice.db.events"].partition_statistics()
    assert sorted(counted.spec_id) == [0, 0, 1] and counted.data_record_count.sum() == len(truth)


def test_theta_inputs_hash_every_type_as_iceberg_serializes_it(spark):
    """Each type's sketch holds the hashes of Iceberg's single-value serialization, written here from the spec:
    negatives, extremes, -0.0 apart from 0.0, a date before 1970, a non-ASCII string."""
    values = {
        "bigint": ([0, -1, 2**63 - 1, -2**63, 42], lambda v: struct.pack("<q", v)),
        "int": ([0, -7, 2**31 - 1, -2**31, 300], lambda v: struct.pack("<i", v)),
        "smallint": ([0, -2, 32767], lambda v: struct.pack("<i", v)),
        "double": ([0.0, -0.0, 1.5, -2.25, 1e300], lambda v: struct.pack("<d", v)),
        "float": ([0.0, 2.5, -1.25], lambda v: struct.pack("<f", v)),
        "date": ([dt.date(2026, 1, 2), dt.date(1969, 12, 31), dt.date(1, 1, 1)],
                 lambda v: struct.pack("<i", (v - dt.date(1970, 1, 1)).days)),
        "timestamp": ([dt.datetime(2026, 1, 2, 3, 4, 5, 6), dt.datetime(1960, 1, 1)],
                      lambda v: struct.pack("<q", (v - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1))),
        "string": (["é", "abc", "a b"], lambda v: v.encode("utf-8")),
        "boolean": ([True, False], lambda v: bytes([int(v)])),
        # the unscaled value in the fewest two's-complement big-endian bytes: 1.27 in one, 1.28 and -1.29 in two
        "decimal(18,2)": ([Decimal("0.00"), Decimal("1.27"), Decimal("1.28"), Decimal("-1.28"), Decimal("-1.29"),
                           Decimal("9999999999999999.99"), Decimal("-0.01")],
                          lambda v: int(v.scaleb(2)).to_bytes(
                              ((u if (u := int(v.scaleb(2))) >= 0 else ~u).bit_length() + 8) // 8, "big", signed=True)),
    }
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    for type_name, (items, serialized) in values.items():
        frame = spark.createDataFrame([(v,) for v in items] + [(None,)], f"v {type_name}")
        inputs = theta_inputs("v", type_name)
        row = frame.select(*[c.alias(f"c{i}") for i, c in enumerate(inputs)]).agg(
            *[F.theta_sketch_agg(f"c{i}").alias(f"c{i}") for i in range(len(inputs))]).first()
        union = theta_union()
        for i in range(len(inputs)):
            union.update(compact_theta_sketch.deserialize(bytes(row[f"c{i}"])))
        assert set(union.get_result()) == theta_hashes([serialized(v) for v in items]), type_name
    assert theta_inputs("v", "decimal(19,2)") is None  # an unscaled value past a long's: no blob yet


def test_month_bucket_and_truncate_partitions_are_the_formats_own(lab, tmp_path):
    """Partitions named by the transforms' own values (Iceberg's text of a month, a bucket number, a truncated
    string), each partition's figures equal to pandas' over the rows pyiceberg places there."""
    properties = {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"file://{tmp_path}/warehouse"}
    catalog = load_catalog("ice", **properties)
    catalog.create_namespace("db")
    spec = PartitionSpec(PartitionField(3, 1000, MonthTransform(), "ts_month"),
                         PartitionField(1, 1001, BucketTransform(4), "id_bucket"),
                         PartitionField(6, 1002, TruncateTransform(2), "note_trunc"))
    table = catalog.create_table("db.events", schema=ICEBERG_SCHEMA, partition_spec=spec)
    table.append(rows(40, "web", 1))
    lab.attach("ice", properties)
    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    truth = catalog.load_table("db.events").scan().to_pandas()
    bucket = BucketTransform(4).transform(LongType())

    def partition_of(frame):
        # Hive names an empty value's partition as NULL's: Iceberg's '' and NULL partitions are one lab partition
        notes = frame["note"].map(lambda v: "__HIVE_DEFAULT_PARTITION__" if not v else escape_path_name(v[:2]))
        return ("ts_month=" + frame["ts"].dt.strftime("%Y-%m") + "/id_bucket=" + frame["id"].map(bucket).astype(str)
                + "/note_trunc=" + notes)
    assert sorted(lab.sql("SHOW PARTITIONS ice.db.events").df["partition"]) == sorted(set(partition_of(truth)))
    assert_stats(lab, "ice.db.events", truth, partition_of)


def test_a_delta_column_named_in_mixed_case_with_a_space_is_read_and_its_log_figures_counted(lab, tmp_path):
    path = str(tmp_path / "mixed")
    write_deltalake(path, pd.DataFrame({"Odd Name": ["x", None, "zz"], "n": [1.0, None, None]}))
    lab.register_external("mixed", path, format="delta")
    lab.sql("ANALYZE TABLE mixed COMPUTE STATISTICS FOR ALL COLUMNS")
    stats = lab.tables["mixed"].inspect.stats().set_index("column")
    assert stats.loc["Odd Name", "nulls"] == 1 and stats.loc["Odd Name", "max_len"] == 2  # as the files spell it
    assert stats.loc["n", "nulls"] == 2 and float(stats.loc["n", "max"]) == 1.0
    shown = lab.tables["mixed"].engines()
    assert dict(zip(shown.column, shown.files_with_figures, strict=True)) == {"odd name": 1, "n": 1}


def test_string_bounds_a_writer_cut_are_no_minimum_or_maximum_but_still_prune(lab, tmp_path):
    """delta-rs (Rust's parquet crate) keeps 64 bytes of a string bound in footers and in the log, the maximum
    rounded up: 'c' * 100 is bounded by 'c' * 63 + 'd'. Drill's metadata must still say the true maximum, and
    a query must still find the rows its bound admits."""
    path = str(tmp_path / "long-strings")
    long_values = ["a" * 100 + "b", "c" * 100, "bb", None]
    write_deltalake(path, pd.DataFrame({"id": [1, 2, 3, 4], "s": long_values}))
    lab.register_external("long_strings", path, format="delta")
    lab.set("metastore.enabled", True)
    lab.sql("ANALYZE TABLE long_strings REFRESH METADATA 'FILE' LEVEL")
    file_level = lab.tables["long_strings"].inspect.metadata("FILE").set_index("column").loc["s"]
    assert (file_level["min"], file_level["max"]) == ("a" * 100 + "b", "c" * 100)
    assert lab.sql("SELECT id FROM long_strings WHERE s > '" + "c" * 99 + "'").df["id"].tolist() == [2]
    report = lab.explain("SELECT id FROM long_strings WHERE s > '" + "d" + "'")
    assert [d.kept for d in report.decisions if d.level.name == "FILE"] == [False], report.decisions


def test_manifest_figures_feed_drills_file_level_and_pruning_without_footers(lab, iceberg, monkeypatch):
    """Iceberg's manifests keep each file's record count, NULL counts and bounds: Drill's FILE level takes them
    where they are exact and reads no footer; a string bound cut at 16 characters prunes but is no maximum."""
    catalog, properties = iceberg
    three_appends(catalog)
    table = catalog.create_table("db.notes", schema=pa.schema([("id", pa.int64()), ("note", pa.string())]))
    table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "note": ["ant", None, "bee"]}))
    table.append(pa.table({"id": pa.array([4, 5], pa.int64()), "note": ["x" * 40 + "1", "x" * 40 + "2"]}))
    lab.attach("ice", properties)
    lab.set("metastore.enabled", True)
    footers_read = []
    real_read_metadata = pq.read_metadata
    monkeypatch.setattr(pq, "read_metadata", lambda path, *a, **k: footers_read.append(path) or
                        real_read_metadata(path, *a, **k))
    outcome = lab.sql("ANALYZE TABLE ice.db.events REFRESH METADATA 'FILE' LEVEL").details
    assert outcome.metadata_columns == ["id", "ts", "x", "note"] and footers_read == [], (outcome.message, footers_read)
    assert outcome.scan_columns == ["amount"]  # a double's bounds leave NaN out: the scan gives them
    truth = catalog.load_table("db.events").scan().to_pandas()
    table_level = lab.tables["ice.db.events"].inspect.metadata("TABLE").set_index("column")
    for column in ("id", "x", "note", "amount"):
        assert table_level.loc[column, "nulls"] == truth[column].isna().sum(), column
    assert int(table_level.loc["x", "max"]) == truth["x"].max()
    assert table_level.loc["note", "min"] == truth["note"].dropna().min()

    footers_read.clear()  # before any metadata of db.notes: files are decided by their manifest figures
    report = lab.explain("SELECT id FROM ice.db.notes WHERE note > 'y'")
    files = [d for d in report.decisions if d.level.name == "FILE"]
    assert [d.kept for d in files] == [False, False] and footers_read == [], (report.decisions, footers_read)
    assert all(d.reason.endswith("[Iceberg manifest]") for d in files), files
    assert any("max xxxxxxxxxxxxxxxy" in d.reason for d in files), files  # the bound cut at 16 characters, rounded up
    landing = lab.tables.overview().set_index("table").loc["notes"]  # never analyzed: rows from the record counts
    assert (landing.kind, landing.rows) == ("iceberg", 5)
    outcome = lab.sql("ANALYZE TABLE ice.db.notes REFRESH METADATA 'FILE' LEVEL").details
    assert outcome.metadata_columns == ["id"] and outcome.footer_columns == ["note"], outcome.message
    notes = lab.tables["ice.db.notes"].inspect.metadata("TABLE").set_index("column")
    assert (notes.loc["note", "min"], notes.loc["note", "max"]) == ("ant", "x" * 40 + "2")
    lab.sql("ANALYZE TABLE ice.db.notes DROP METADATA")  # the lab's record only: allowed on a catalog's table
    assert lab.metastore.table_metadata.get_table_metadata("ice_db", "notes") is None
    assert lab.sql("SELECT id FROM ice.db.notes WHERE note > '" + "x" * 40 + "1'").df["id"].tolist() == [5]


def test_delta_millisecond_bounds_never_prune_a_row_they_cut(lab, tmp_path):
    """Delta's log keeps timestamps to the millisecond, the maximum cut down: 00:00:00.999999 is logged as
    00:00:00.999. A query for later instants must still read the file, and the maximum must stay exact."""
    path = str(tmp_path / "delta-ms")
    stamps = pa.array([dt.datetime(2026, 1, 1, 0, 0, 0, 123456), dt.datetime(2026, 1, 1, 0, 0, 0, 999999), None],
                      pa.timestamp("us"))
    write_deltalake(path, pa.table({"id": pa.array([1, 2, 3], pa.int64()), "ts": stamps}))
    logged = pa.table(DeltaTable(path).get_add_actions(flatten=True)).column("max.ts").to_pylist()
    assert logged == [dt.datetime(2026, 1, 1, 0, 0, 0, 999000)]  # what delta-rs keeps: the case at hand
    lab.register_external("stamps", path, format="delta")
    lab.set("metastore.enabled", True)
    query = "SELECT id FROM stamps WHERE ts > '2026-01-01 00:00:00.9995'"
    assert lab.sql(query).df["id"].tolist() == [2]
    assert [d.kept for d in lab.explain(query).decisions if d.level.name == "FILE"] == [True]
    later = lab.explain("SELECT id FROM stamps WHERE ts > '2026-01-01 00:00:01'")
    assert [(d.kept, "Delta log" in d.reason) for d in later.decisions if d.level.name == "FILE"] == [(False, True)]
    outcome = lab.sql("ANALYZE TABLE stamps REFRESH METADATA 'FILE' LEVEL").details
    assert "ts" not in outcome.metadata_columns and outcome.metadata_columns == ["id"], outcome.message
    file_level = lab.tables["stamps"].inspect.metadata("FILE").set_index("column").loc["ts"]
    assert file_level["max"].startswith("2026-01-01 00:00:00.999999"), file_level["max"]


def test_an_iceberg_key_named_on_the_labs_mirror_keeps_its_frequent_values_and_predicts_a_join(lab, iceberg, tmp_path):
    """Which columns keep frequent-items sketches is the lab's setting: set on its mirror of a catalog's table
    (never written to the catalog), the next ANALYZE keeps them and a join predicted from them is placed as
    Spark places it; another commit makes them stale, and the side is counted."""
    catalog, properties = iceberg
    table = three_appends(catalog)
    path = str(tmp_path / "dim")
    write_deltalake(path, pd.DataFrame({"x": list(range(-4, 19)) * 3}))
    lab.attach("ice", properties)
    lab.register_external("dim", path, format="delta")
    lab.sql("ALTER TABLE ice.db.events SET TBLPROPERTIES ('colstats.frequent.items.columns'='x')")
    lab.sql("ALTER TABLE dim SET TBLPROPERTIES ('colstats.frequent.items.columns'='x')")
    assert "colstats.frequent.items.columns" not in catalog.load_table("db.events").properties
    with pytest.raises(InvalidArgument, match="change it with the engine that owns it"):
        lab.sql("ALTER TABLE ice.db.events SET TBLPROPERTIES ('team'='x')")
    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    lab.sql("ANALYZE TABLE dim COMPUTE STATISTICS FOR ALL COLUMNS")
    report = lab.tables["ice.db.events"].join_skew("dim", "x", "x", run=True)
    assert all(side.source.startswith("statistics") for side in report.sides)
    truth = table.scan().to_pandas().dropna(subset=["x"]).merge(pd.DataFrame({"x": list(range(-4, 19)) * 3}), on="x")
    assert report.tasks["actual_rows"].sum() == len(truth)
    top = report.hot_keys.iloc[0]
    assert top["output_rows"] == truth.groupby("x").size().max()
    table.append(rows(5, "web", 1, 900))
    assert lab.tables["ice.db.events"].join_skew("dim", "x", "x").sides[0].source.startswith("counted")


def test_an_iceberg_tables_struct_leaves_read_by_field_id_take_the_manifests_figures(lab, iceberg):
    from pyiceberg.types import StructType

    catalog, properties = iceberg
    schema = Schema(NestedField(1, "eventId", LongType(), required=False),
                    NestedField(2, "payload", StructType(
                        NestedField(3, "user", StructType(NestedField(4, "Id", LongType(), required=False),
                                                          NestedField(5, "name", StringType(), required=False)),
                                    required=False)), required=False),
                    NestedField(6, "tags", ListType(7, StringType(), element_required=False), required=False))
    table = catalog.create_table("db.nested", schema=schema)
    for first in (0, 40):
        table.append(pa.Table.from_pylist(
            [{"eventId": i, "payload": None if i % 9 == 0 else {"user": {"Id": None if i % 4 == 0 else i % 13,
                                                                         "name": None if i % 5 == 0 else f"n{i % 7}"}},
              "tags": ["a"] * (i % 3)} for i in range(first, first + 40)], schema=table.schema().as_arrow()))
    with table.update_schema() as update:  # older files keep the old name: only the field id finds them
        update.rename_column("payload.user.Id", "userId")
    lab.attach("ice", properties)
    result = lab.sql("ANALYZE TABLE ice.db.nested COMPUTE STATISTICS FOR ALL COLUMNS")
    assert result.details.columns == ["eventid", "payload", "payload.user", "payload.user.userid", "payload.user.name"]
    assert {"payload.user.userid"} <= set(result.details.footer_columns)  # from the manifests' metrics
    truth = catalog.load_table("db.nested").scan().to_arrow()
    while any(pa.types.is_struct(f.type) for f in truth.schema):
        truth = truth.flatten()
    for name, source in (("payload.user.userid", "payload.user.userId"), ("payload.user.name", "payload.user.name")):
        values = truth.column(source)
        stats = lab.metastore.column_stats.get_table_column_statistics("ice_db", "nested", name)
        data = stats.obj(name).statsData.value
        assert data.numNulls == values.null_count, name
        assert data.numDVs == len(set(values.drop_null().to_pylist())), name
    data = lab.metastore.column_stats.get_table_column_statistics("ice_db", "nested", "payload.user.userid").obj(
        "payload.user.userid").statsData.value
    ids = truth.column("payload.user.userId").drop_null().to_pylist()
    assert (data.lowValue, data.highValue) == (min(ids), max(ids))
    assert "tags" in json.loads(lab.resolve("ice.db.nested").parameters["colstats.columns.skipped"])

    # the Puffin file has a theta blob per leaf, by its field id, holding the hashes of Iceberg's serialization
    lab.tables["ice.db.nested"].publish()
    table = catalog.load_table("db.nested")
    registered = [f for f in table.metadata.statistics if f.snapshot_id == table.current_snapshot().snapshot_id]
    with table.io.new_input(registered[0].statistics_path).open() as handle:  # pyiceberg's own FileIO: local or S3
        puffin = PuffinFile(handle.read())
    sources = {table.schema().find_field(name).field_id: (name, type_name) for name, type_name in (
        ("eventId", "bigint"), ("payload.user.userId", "bigint"), ("payload.user.name", "string"))}
    assert sorted(blob.fields[0] for blob in puffin.footer.blobs) == sorted(sources)
    for blob in puffin.footer.blobs:
        column, type_name = sources[blob.fields[0]]
        values = [iceberg_serialized(v, type_name) for v in truth.column(column).to_pylist() if v is not None]
        assert set(compact_theta_sketch.deserialize(puffin.get_blob_payload(blob))) == theta_hashes(values), column

    # metadata alone finds the renamed leaf by its field id in the older file too
    said = str(lab.sql("ANALYZE TABLE ice.db.nested COMPUTE STATISTICS FOR ALL COLUMNS NOSCAN"))
    assert "Every value read" not in said, said
    bounds = lab.tables["ice.db.nested"].inspect.bounds()
    nulls = bounds[(bounds.column == "payload.user.userid") & (bounds.figure == "nulls")].iloc[0]
    assert nulls.low <= truth.column("payload.user.userId").null_count <= nulls.high
    assert nulls.high < truth.num_rows  # read, not taken as NULL in the file that names it Id

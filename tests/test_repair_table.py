"""MSCK REPAIR TABLE: an external table's partitions follow the directories another job writes and
removes, so queries and statistics read what is on disk."""
from __future__ import annotations

import shutil

import pytest

from colstats_lab import InvalidArgument, ParseError
from colstats_lab.commands import Repair
from colstats_lab.sql import parse_one
from colstats_lab.sql import statements as st

pytestmark = pytest.mark.both_backends  # a metastore behaviour: on SQLite and on PostgreSQL


@pytest.fixture
def landing(lab, spark, tmp_path):
    root = tmp_path / "landing"
    for k, ids in {1: [1, 2], 2: [3, 4, 5]}.items():
        spark.createDataFrame([(i,) for i in ids], "id int").write.parquet(str(root / f"k={k}"))
    lab.register_external("logs", str(root))
    return root


def _on_disk_rows(spark, root) -> int:
    return spark.read.parquet(str(root)).count()


def test_repair_registers_new_directories_and_sync_forgets_removed_ones(lab, spark, landing):
    spark.createDataFrame([(6,), (7,)], "id int").write.parquet(str(landing / "k=3"))  # another job's day
    shutil.rmtree(landing / "k=1")
    assert lab.sql("SELECT count(*) AS n FROM logs").df["n"][0] == 3  # k=3 unknown yet, k=1 gone
    added = lab.sql("MSCK REPAIR TABLE logs")
    assert added.details == Repair(added=["k=3"], dropped=[])
    assert added.message == "Repaired default.logs: added 1 partition(s): k=3."
    assert lab.metastore.catalog.get_partition_names("default", "logs") == ["k=1", "k=2", "k=3"]
    assert lab.sql("SELECT count(*) AS n FROM logs").df["n"][0] == _on_disk_rows(spark, landing) == 5
    synced = lab.sql("MSCK TABLE logs SYNC PARTITIONS")
    assert synced.details == Repair(added=[], dropped=["k=1"])
    assert lab.metastore.catalog.get_partition_names("default", "logs") == ["k=2", "k=3"]
    assert lab.metastore.catalog.get_table("default", "logs").parameters["numPartitions"] == "2"
    lab.sql("ANALYZE TABLE logs PARTITION (k) COMPUTE STATISTICS FOR ALL COLUMNS")
    frame = lab.tables["logs"].inspect.stats().set_index("partition")
    assert frame.loc["k=3", "min"] == 6 and frame.loc["k=3", "max"] == 7 and frame.loc["k=3", "accurate"] is True
    assert lab.sql("MSCK REPAIR TABLE logs SYNC PARTITIONS").details == Repair(added=[], dropped=[])


def test_repair_refuses_what_it_cannot_do_by_name(lab, spark, landing, tmp_path):
    lab.sql("CREATE TABLE managed_t (v INT) PARTITIONED BY (d STRING)")
    with pytest.raises(InvalidArgument, match="default.managed_t is managed"):
        lab.sql("MSCK REPAIR TABLE managed_t")
    spark.createDataFrame([(9,)], "id int").write.parquet(str(landing / "k=4" / "extra=1"))
    with pytest.raises(InvalidArgument, match="k=4/extra=1 does not follow the partition layout k"):
        lab.sql("MSCK REPAIR TABLE logs")
    assert lab.metastore.catalog.get_partition_names("default", "logs") == ["k=1", "k=2"]  # nothing half-done
    assert parse_one("msck repair table db.t drop partitions") == st.RepairTable(table=st.TableName("db", "t"), mode="DROP")
    with pytest.raises(ParseError, match="expected PARTITIONS"):
        parse_one("MSCK REPAIR TABLE t SYNC")


def test_repair_of_camel_case_directories_adds_the_new_one_only(lab, spark, tmp_path):
    """Directories as pandas and Spark name them (`eventDay=`): the table's key is `eventday`; MSCK refused the
    table (found by hand), and comparing names as spelled would have added every directory again."""
    root = tmp_path / "events"
    for day, ids in {"2026-01-01": [1, 2], "Ü day": [3]}.items():
        spark.createDataFrame([(i,) for i in ids], "id int").write.parquet(str(root / f"eventDay={day}"))
    lab.register_external("events", str(root))
    spark.createDataFrame([(4,), (5,)], "id int").write.parquet(str(root / "eventDay=2026-01-03"))
    repaired = lab.sql("MSCK REPAIR TABLE events SYNC PARTITIONS")
    assert repaired.details == Repair(added=["eventday=2026-01-03"], dropped=[])
    assert lab.sql("SELECT count(*) AS n FROM events").df["n"][0] == _on_disk_rows(spark, root) == 5

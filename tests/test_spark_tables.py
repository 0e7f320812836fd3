"""Tables where they already are: `ANALYZE TABLE spark_catalog.db.t` analyzes a table of Spark's session
catalog with no registration by hand, and follows the partitions Spark's own writes add and drop."""
from __future__ import annotations

import uuid

import pytest

from colstats_lab import InvalidArgument, ParseError
from colstats_lab.errors import QueryError

ROWS = [(1, "a", "d1"), (2, None, "d1"), (5, "ccc", "d1"), (3, "bb", "d2"), (None, "e", "d2")]


@pytest.fixture
def spark_table(spark):
    db = f"wh_{uuid.uuid4().hex[:8]}"  # Spark's catalog lives as long as the test session
    spark.sql(f"CREATE DATABASE {db}")
    spark.sql(f"CREATE TABLE {db}.events (id INT, kind STRING, ds STRING) USING parquet PARTITIONED BY (ds)")
    spark.createDataFrame(ROWS, "id int, kind string, ds string").write.insertInto(f"{db}.events")
    yield db
    spark.sql(f"DROP DATABASE {db} CASCADE")


def _figures(lab, db: str) -> dict:
    frame = lab.tables[f"{db}.events"].inspect.stats()
    return {(r.partition, r.column): (r.min, r.max, r.nulls, r.accurate) for r in frame.itertuples()}


def test_a_spark_table_is_analyzed_where_it_is(lab, spark, spark_table):
    db = spark_table
    result = lab.sql(f"ANALYZE TABLE spark_catalog.{db}.events COMPUTE STATISTICS FOR ALL COLUMNS")
    assert result.details.table == f"{db}.events" and sorted(result.details.partitions) == ["ds=d1", "ds=d2"]
    table = lab.metastore.catalog.get_table(db, "events")
    assert table.tableType == "EXTERNAL_TABLE" and table.partition_key_names == ["ds"]
    figures = _figures(lab, db)
    for ds in ("d1", "d2"):
        ids = [r[0] for r in ROWS if r[2] == ds]
        present = [i for i in ids if i is not None]
        assert figures[(f"ds={ds}", "id")] == (min(present), max(present), len(ids) - len(present), True)
        assert figures[(f"ds={ds}", "kind")][2] == sum(r[1] is None for r in ROWS if r[2] == ds)


def test_spark_writes_make_statistics_stale_and_new_partitions_follow(lab, spark, spark_table):
    db = spark_table
    lab.sql(f"ANALYZE TABLE spark_catalog.{db}.events COMPUTE STATISTICS FOR ALL COLUMNS")
    spark.createDataFrame([(40, "z", "d2"), (7, "y", "d3")], "id int, kind string, ds string").write.insertInto(
        f"{db}.events")
    spark.sql(f"ALTER TABLE {db}.events DROP PARTITION (ds='d1')")
    stale = _figures(lab, db)
    assert stale[("ds=d2", "id")][3] is False  # Spark added a file to ds=d2
    result = lab.sql(f"ANALYZE TABLE spark_catalog.{db}.events COMPUTE STATISTICS FOR ALL COLUMNS")
    assert sorted(result.details.partitions) == ["ds=d2", "ds=d3"]
    assert lab.metastore.catalog.get_partition_names(db, "events") == ["ds=d2", "ds=d3"]
    figures = _figures(lab, db)
    assert figures[("ds=d2", "id")] == (3, 40, 1, True) and figures[("ds=d3", "id")] == (7, 7, 0, True)
    ours = lab.sql(f"SELECT count(*) AS n, sum(id) AS s FROM {db}.events").df.iloc[0]
    theirs = spark.sql(f"SELECT count(*) AS n, sum(id) AS s FROM {db}.events").collect()[0]
    assert (ours["n"], ours["s"]) == (theirs["n"], theirs["s"])


def test_spark_table_names_that_cannot_be_analyzed_are_named(lab, spark, spark_table):
    db = spark_table
    with pytest.raises(QueryError, match=f"cannot read Spark's table {db}.nosuch"):
        lab.sql(f"ANALYZE TABLE spark_catalog.{db}.nosuch COMPUTE STATISTICS")
    spark.sql(f"CREATE TABLE {db}.j (a INT) USING json")
    with pytest.raises(InvalidArgument, match=f"Spark's table {db}.j is stored as json"):
        lab.sql(f"ANALYZE TABLE spark_catalog.{db}.j COMPUTE STATISTICS")
    assert not lab.metastore.catalog.table_exists(db, "j")
    with pytest.raises(InvalidArgument, match="named by ANALYZE TABLE only"):
        lab.sql(f"DESCRIBE spark_catalog.{db}.events")
    with pytest.raises(ParseError) as caught:
        lab.sql(f"ANALYZE TABLE hive.{db}.events COMPUTE STATISTICS")
    assert "unknown catalog 'hive'" in caught.value.message and caught.value.position == len("ANALYZE TABLE ")


def test_a_partition_spark_keeps_at_a_location_of_its_own_is_read_there(lab, spark, spark_table, tmp_path):
    db = spark_table
    elsewhere = str(tmp_path / "elsewhere" / "day three")
    spark.createDataFrame([(9, "x"), (None, "y"), (11, None)], "id int, kind string").write.parquet(elsewhere)
    spark.sql(f"ALTER TABLE {db}.events ADD PARTITION (ds='d3') LOCATION '{elsewhere}'")
    lab.sql(f"ANALYZE TABLE spark_catalog.{db}.events COMPUTE STATISTICS FOR ALL COLUMNS")
    assert lab.metastore.catalog.get_partition(db, "events", "ds=d3").location == elsewhere
    figures = _figures(lab, db)
    assert figures[("ds=d3", "id")] == (9, 11, 1, True)  # not an empty partition read at <table>/ds=d3
    theirs = spark.sql(f"SELECT count(*) AS n, sum(id) AS s FROM {db}.events").collect()[0]
    ours = lab.sql(f"SELECT count(*) AS n, sum(id) AS s FROM {db}.events").df.iloc[0]
    assert (ours.n, ours.s) == (theirs.n, theirs.s) == (8, 31)
    # Spark moves another day: the lab follows it there
    moved = str(tmp_path / "moved")
    spark.createDataFrame([(100, "m")], "id int, kind string").write.parquet(moved)
    spark.sql(f"ALTER TABLE {db}.events PARTITION (ds='d1') SET LOCATION '{moved}'")
    lab.sql(f"ANALYZE TABLE spark_catalog.{db}.events PARTITION (ds='d1') COMPUTE STATISTICS FOR COLUMNS id")
    assert _figures(lab, db)[("ds=d1", "id")] == (100, 100, 0, True)


def test_partition_values_with_hives_escapes_are_read_where_spark_wrote_them(lab, spark, spark_table):
    db = spark_table
    spark.createDataFrame([(7, "k", "a:b c"), (8, None, "50%"), (9, "m", "50%")], "id int, kind string, ds string") \
        .write.insertInto(f"{db}.events")
    lab.sql(f"ANALYZE TABLE spark_catalog.{db}.events COMPUTE STATISTICS FOR ALL COLUMNS")
    figures = _figures(lab, db)
    assert figures[("ds=a%3Ab c", "id")] == (7, 7, 0, True) and figures[("ds=50%25", "id")] == (8, 9, 0, True)

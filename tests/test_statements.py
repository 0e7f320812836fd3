"""Statements through Lab.sql: DESCRIBE rows, SHOW, DDL, external tables, errors that name the problem."""
from __future__ import annotations

import os

import pandas as pd
import pytest
from metastore_rows import connect

from colstats_lab import InvalidArgument, NoSuchObjectException, ParseError
from colstats_lab.cli import main as cli_main


@pytest.fixture
def sales(lab, spark):
    lab.sql("CREATE TABLE sales (id BIGINT, x INT, note STRING, flag BOOLEAN, tags ARRAY<STRING>) "
            "PARTITIONED BY (ds STRING)")
    frame = spark.createDataFrame(
        [(1, 5, "ab", True, ["t"], "d1"), (2, None, None, False, [], "d1"), (3, -2, "", None, None, "d2")],
        "id bigint, x int, note string, flag boolean, tags array<string>, ds string")
    lab.tables["sales"].write(frame)
    return lab


def _info(result) -> dict[str, str]:
    return dict(zip(result.df.info_name, result.df.info_value, strict=True))


def test_describe_formatted_column_gives_hives_rows(sales):
    sales.sql("ANALYZE TABLE sales COMPUTE STATISTICS FOR ALL COLUMNS")
    info = _info(sales.sql("DESCRIBE FORMATTED sales x"))
    # Hive's rows in Hive's order; a partitioned table's adds how many partitions the figures cover
    assert list(info) == ["col_name", "data_type", "min", "max", "num_nulls", "distinct_count", "avg_col_len",
                          "max_col_len", "num_trues", "num_falses", "bit_vector", "histogram", "comment",
                          "COLUMN_STATS_ACCURATE", "coverage"]
    assert info["coverage"] == f"all {len(sales.metastore.catalog.get_partition_names('default', 'sales'))} partitions"
    assert (info["min"], info["max"], info["num_nulls"], info["distinct_count"]) == ("-2", "5", "1", "2")
    assert info["COLUMN_STATS_ACCURATE"] == '{"BASIC_STATS":"true","COLUMN_STATS":{"x":"true"}}'
    part = _info(sales.sql("DESCRIBE FORMATTED sales PARTITION (ds='d1') note"))
    assert (part["max_col_len"], part["avg_col_len"], part["num_nulls"]) == ("2", "1.0", "1")
    flag = _info(sales.sql("DESCRIBE FORMATTED sales flag"))
    assert (flag["num_trues"], flag["num_falses"], flag["num_nulls"], flag["distinct_count"]) == ("1", "1", "1", "")


def test_all_columns_takes_an_array_and_its_elements(sales):
    result = sales.sql("ANALYZE TABLE sales COMPUTE STATISTICS FOR ALL COLUMNS")
    assert not result.details.skipped_columns and "Skipped" not in result.message
    assert result.details.columns[-2:] == ["tags", "tags.element"]
    assert sales.sql("ANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS tags").details.columns == ["tags"]


def test_unknown_names_are_named(sales):
    with pytest.raises(NoSuchObjectException, match="table default.nosuch does not exist"):
        sales.sql("ANALYZE TABLE nosuch COMPUTE STATISTICS")
    with pytest.raises(NoSuchObjectException, match="column nocol does not exist in table default.sales"):
        sales.sql("ANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS x, nocol")
    with pytest.raises(NoSuchObjectException, match="hr is not a partition key of default.sales"):
        sales.sql("ANALYZE TABLE sales PARTITION (hr=1) COMPUTE STATISTICS")
    with pytest.raises(NoSuchObjectException, match=r"no partition of default.sales matches \(ds='d9'\)"):
        sales.sql("ANALYZE TABLE sales PARTITION (ds='d9') COMPUTE STATISTICS")
    with pytest.raises(InvalidArgument, match="ds is a partition key"):
        sales.sql("ANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS ds")
    with pytest.raises(NoSuchObjectException, match="column nocol does not exist"):
        sales.sql("DESCRIBE FORMATTED sales nocol")


def test_a_parse_error_runs_nothing(sales):
    for part in sales.metastore.catalog.get_partition_names("default", "sales"):  # the write gathered some
        sales.metastore.column_stats.delete_partition_column_statistics("default", "sales", part)
    with pytest.raises(ParseError) as info:
        sales.sql("ANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS x; ANALYZE TABLE sales COMPUTE STATS")
    assert info.value.excerpt.endswith("COMPUTE STATS")
    assert sales.metastore.column_stats.get_partitions_statistics("default", "sales", None, ["x"]) == {}


def test_hostile_identifiers_and_values_are_data(sales):
    sales.set("hive.stats.column.autogather", False)
    hostile = "x'); DROP TABLE TBLS; --"
    with pytest.raises(NoSuchObjectException):
        sales.sql(f"ANALYZE TABLE sales PARTITION (ds='{hostile.replace(chr(39), chr(39) * 2)}') COMPUTE STATISTICS")
    with pytest.raises(NoSuchObjectException):
        sales.sql(f"DESCRIBE FORMATTED `{hostile}`")
    sales.tables["sales"].write(pd.DataFrame({"id": [9], "x": [1], "note": ["n"], "flag": [True], "tags": [["a"]]}),
                                partition={"ds": hostile})
    sales.sql(f"ANALYZE TABLE sales PARTITION (ds='{hostile.replace(chr(39), chr(39) * 2)}') "
              "COMPUTE STATISTICS FOR COLUMNS x")
    conn = connect(sales.metastore.url)
    assert conn.execute("SELECT COUNT(*) FROM TBLS").fetchone()[0] == 1
    names = {r[0] for r in conn.execute("SELECT PART_NAME FROM PART_COL_STATS")}
    assert names == {"ds=d1", "ds=d2", "ds=x%27); DROP TABLE TBLS; --"}  # the first two gathered on write


def test_show_and_drop(sales):
    assert list(sales.sql("SHOW TABLES").df.tab_name) == ["sales"]
    assert list(sales.sql("SHOW PARTITIONS sales").df.partition) == ["ds=d1", "ds=d2"]
    sales.sql("ANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS x")
    sales.sql("ALTER TABLE sales DROP PARTITION (ds='d1')")
    assert list(sales.metastore.column_stats.get_partitions_statistics("default", "sales", None, ["x"])) == ["ds=d2"]
    x = sales.metastore.column_stats.get_table_column_statistics("default", "sales", "x").obj("x").statsData.longStats
    assert (x.lowValue, x.highValue, x.numNulls) == (-2, -2, 0)  # the table level forgot ds=d1's rows
    assert sales.metastore.catalog.get_table("default", "sales").parameters["numRows"] == "1"
    location = sales.metastore.catalog.get_table("default", "sales").location
    assert not os.path.exists(os.path.join(location, "ds=d1"))
    sales.sql("DROP TABLE sales")
    assert not os.path.exists(location)
    assert sales.sql("SHOW TABLES").df.empty


def test_register_external_partitioned_parquet(lab, spark, tmp_path):
    path = str(tmp_path / "logs")
    spark.createDataFrame([(1, "a", "2026-11-20", 1), (2, "b", "2026-11-20", 2), (3, None, "2026-11-21", 1)],
                          "n int, s string, ds string, hr int").write.partitionBy("ds", "hr").parquet(path)
    table = lab.register_external("logs", path).metastore_table()
    assert table.tableType == "EXTERNAL_TABLE"
    assert [(k.name, k.type) for k in table.partitionKeys] == [("ds", "date"), ("hr", "int")]  # as Spark infers them
    assert [c.name for c in table.cols] == ["n", "s"]
    assert table.parameters["numRows"] == "0" and "COLUMN_STATS_ACCURATE" not in table.parameters
    lab.sql("ANALYZE TABLE logs COMPUTE STATISTICS FOR ALL COLUMNS")
    s = lab.metastore.column_stats.get_table_column_statistics("default", "logs", "s").obj("s").statsData.stringStats
    assert (s.numNulls, s.maxColLen, s.numDVs) == (1, 1, 2)
    assert lab.tables["logs"].to_spark().where("hr = 1").count() == 2
    with pytest.raises(InvalidArgument, match="external"):
        lab.tables["logs"].write(pd.DataFrame({"n": [1], "s": ["x"], "ds": ["d"], "hr": [1]}))
    lab.sql("DROP TABLE logs")
    assert os.path.isdir(path)  # dropping an external table keeps its files


@pytest.mark.slow
def test_cli_demo_prints_statistics(tmp_path, spark, capsys):
    assert cli_main(["--home", str(tmp_path / "demo"), "demo"]) == 0
    out = capsys.readouterr().out
    assert "Analyzed default.sales" in out
    assert "col_name=x, data_type=int, min=" in out
    assert cli_main(["--home", str(tmp_path / "demo"), "sql", "ANALYZE TABLE sales COMPUTE STATISTIC"]) == 2
    assert "^" in capsys.readouterr().err

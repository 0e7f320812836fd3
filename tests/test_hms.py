"""A real Hive Metastore both ways: the lab analyzes the tables it lists and publishes per-partition and
table statistics that the server then returns, and Spark (pointed at the same server) plans with.

Tables are made straight through the server's Thrift API, as another engine makes them, over Parquet
files pyarrow writes; every expected figure comes from pandas over the same rows."""
from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from decimal import Decimal

import hms_tables
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pymetastore.hive_metastore import ttypes

from colstats_lab import Lab
from colstats_lab.errors import ColstatsError, InvalidArgument, ParseError
from colstats_lab.metastore import escape_path_name
from colstats_lab.workbench.dashboard import TABS, TablePage

pytestmark = pytest.mark.slow  # the full lane only: a Hive Metastore in another process

HERE = os.path.dirname(__file__)
COLUMNS = [("id", "bigint"), ("x", "int"), ("amount", "double"), ("f", "float"), ("price", "decimal(10,2)"),
           ("note", "string"), ("raw", "binary"), ("flag", "boolean"), ("day", "date"), ("ts", "timestamp")]
ARROW = {"bigint": pa.int64(), "int": pa.int32(), "double": pa.float64(), "float": pa.float32(),
         "decimal(10,2)": pa.decimal128(10, 2), "string": pa.string(), "binary": pa.binary(), "boolean": pa.bool_(),
         "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC")}
DAYS = ["2026-01-01", "2026-01-02", "2026-01-03"]


def rows_of(day_index: int, n: int = 40) -> pd.DataFrame:
    """Rows with NULLs in every column but id; the third day's `note` is NULL throughout."""
    i = np.arange(n)
    base = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    frame = pd.DataFrame({
        "id": i + 1000 * day_index,
        "x": [None if k % 7 == 3 else int((k * 37) % 23 - 5 + day_index) for k in i],
        "amount": [None if k % 5 == 4 else [1.5, 1e10, -2.25, 0.001][k % 4] * (day_index + 1) for k in i],
        "f": [None if k % 3 == 2 else [0.1, 2.5][k % 2] for k in i],
        "price": [None if k % 4 == 3 else Decimal(int(k) * 25 - 300 + day_index).scaleb(-2) for k in i],
        "note": [None if day_index == 2 or k % 6 == 0 else "é" * (1 + k % 9) for k in i],
        "raw": [None if k % 8 == 1 else bytes(range(k % 5)) for k in i],
        "flag": [None if k % 9 == 0 else bool(k % 3 == 0) for k in i],
        "day": [None if k % 10 == 7 else dt.date(2026, 1 + day_index, 1) + dt.timedelta(days=int(k % 12)) for k in i],
        "ts": [None if k == 5 else base + dt.timedelta(days=day_index, seconds=int(k) * 3601, microseconds=int(k) * 7)
               for k in i],
    })
    return frame


def write_rows(directory: str, frame: pd.DataFrame, name: str = "part-0.parquet") -> None:
    os.makedirs(directory, exist_ok=True)
    schema = pa.schema([(c, ARROW[t]) for c, t in COLUMNS])
    pq.write_table(pa.Table.from_pandas(frame, schema=schema, preserve_index=False), os.path.join(directory, name))


def expected(frame: pd.DataFrame, column: str, type_name: str) -> dict:
    """Hive's figures of a column, from pandas (strings and binaries: lengths over all rows, a NULL as 0)."""
    values = frame[column].dropna()
    figures = {"nulls": int(frame[column].isna().sum())}
    if type_name == "boolean":
        return {**figures, "trues": int((values == True).sum()), "falses": int((values == False).sum())}  # noqa: E712
    if type_name in ("string", "binary"):
        lengths = values.map(len)
        figures.update(max_len=int(lengths.max()) if len(lengths) else 0, avg_len=float(lengths.sum()) / len(frame))
        if type_name == "string":
            figures["ndv"] = values.nunique()
        return figures
    figures["ndv"] = values.nunique()
    if type_name in ("bigint", "int"):
        values = values.astype("int64")
    if type_name == "float":
        values = values.astype(np.float32).astype(float)
    if type_name == "date":
        values = values.map(lambda d: (d - dt.date(1970, 1, 1)).days)
    if type_name == "timestamp":
        values = values.map(lambda t: int(t.timestamp() // 1))
    figures.update(low=values.min() if len(values) else None, high=values.max() if len(values) else None)
    return figures


def served(obj: ttypes.ColumnStatisticsObj) -> dict:
    """The figures the server returns, read from Thrift's fields."""
    union = obj.statsData
    if union.booleanStats:
        s = union.booleanStats
        return {"nulls": s.numNulls, "trues": s.numTrues, "falses": s.numFalses}
    if union.stringStats:
        s = union.stringStats
        return {"nulls": s.numNulls, "ndv": s.numDVs, "max_len": s.maxColLen, "avg_len": s.avgColLen}
    if union.binaryStats:
        s = union.binaryStats
        return {"nulls": s.numNulls, "max_len": s.maxColLen, "avg_len": s.avgColLen}
    if union.decimalStats:
        s = union.decimalStats

        def number(d):
            return None if d is None else Decimal(int.from_bytes(d.unscaled, "big", signed=True)).scaleb(-d.scale)
        return {"nulls": s.numNulls, "ndv": s.numDVs, "low": number(s.lowValue), "high": number(s.highValue)}
    if union.dateStats:
        s = union.dateStats
        return {"nulls": s.numNulls, "ndv": s.numDVs, "low": s.lowValue and s.lowValue.daysSinceEpoch,
                "high": s.highValue and s.highValue.daysSinceEpoch}
    s = union.longStats or union.doubleStats
    return {"nulls": s.numNulls, "ndv": s.numDVs, "low": s.lowValue, "high": s.highValue}


def assert_figures(got: dict, want: dict, where: str) -> None:
    for key, value in want.items():
        if key == "ndv":  # HLL: within 3 % (exact on these few values in practice)
            assert abs(got[key] - value) <= max(1, 0.03 * value), (where, key, got, want)
        elif key == "avg_len":
            assert got[key] == pytest.approx(value, rel=1e-9), (where, key, got, want)
        else:
            assert got[key] == value, (where, key, got, want)


@pytest.fixture
def hms(hms_uri):
    return hms_tables.connect(hms_uri)


@pytest.fixture
def sales(hms, tmp_path, request):
    """A partitioned table of every type in the HMS, in a database of this test's own."""
    db = "t_" + request.node.name.lower().replace("test_", "")[:40]
    location = str(tmp_path / "data" / "sales")
    frames = {}
    for index, day in enumerate(DAYS):
        frames[day] = rows_of(index)
        write_rows(f"{location}/ds={day}", frames[day])
    hms_tables.create_table(hms, db, "sales", COLUMNS, [("ds", "string")], location)
    hms_tables.add_partitions(hms, db, "sales", COLUMNS, {(d,): f"{location}/ds={d}" for d in DAYS})
    return db, location, frames


@pytest.fixture
def hms_lab(tmp_path, spark, hms_uri):
    lab = Lab(home=str(tmp_path / "lab"), spark=spark)
    lab.attach("hms", hms_uri)
    yield lab
    lab.close()


def test_analyze_and_publish_every_type_partition_and_table_level(hms_lab, hms, sales):
    db, location, frames = sales
    assert "sales" in hms_lab.sql(f"SHOW TABLES IN hms.{db}").df["tab_name"].tolist()
    hms_lab.sql(f"ANALYZE TABLE hms.{db}.sales COMPUTE STATISTICS FOR ALL COLUMNS")
    described = hms_lab.sql(f"DESCRIBE FORMATTED hms.{db}.sales PARTITION (ds='2026-01-02') x").df
    info = dict(zip(described.info_name, described.info_value, strict=True))
    assert info["min"] == str(expected(frames["2026-01-02"], "x", "int")["low"])
    outcome = hms_lab.tables[f"hms.{db}.sales"].publish().details
    assert sorted(outcome.published) == [f"ds={d}" for d in DAYS] and outcome.withdrawn == []
    names = [c for c, _ in COLUMNS]
    stats = hms.get_partitions_statistics_req(ttypes.PartitionsStatsRequest(db, "sales", names, [f"ds={d}" for d in DAYS]))
    for day in DAYS:
        got = {o.colName: o for o in stats.partStats[f"ds={day}"]}
        assert sorted(got) == sorted(names)
        for column, type_name in COLUMNS:
            assert got[column].statsData.__dict__[_member(type_name)] is not None, (column, type_name)
            assert got[column].statsData.__dict__[_member(type_name)].bitVectors is None
            assert_figures(served(got[column]), expected(frames[day], column, type_name), f"{day}.{column}")
        params = hms.get_partition_by_name(db, "sales", f"ds={day}").parameters
        files = [os.path.join(location, f"ds={day}", f) for f in os.listdir(os.path.join(location, f"ds={day}"))]
        assert params["numRows"] == "40" and params["numFiles"] == str(len(files))
        assert params["totalSize"] == str(sum(os.path.getsize(f) for f in files))
        assert json.loads(params["COLUMN_STATS_ACCURATE"]) == {"BASIC_STATS": "true",
                                                               "COLUMN_STATS": dict.fromkeys(sorted(names), "true")}
        assert params["spark.sql.statistics.numRows"] == "40"
        assert params["spark.sql.statistics.totalSize"] == params["totalSize"]
    whole = pd.concat(frames.values(), ignore_index=True)
    table_params = hms.get_table(db, "sales").parameters
    assert table_params["numRows"] == "120" and json.loads(table_params["COLUMN_STATS_ACCURATE"]) == {"BASIC_STATS": "true"}
    assert table_params["spark.sql.statistics.numRows"] == "120"
    assert table_params["spark.sql.statistics.colStats.x.nullCount"] == str(expected(whole, "x", "int")["nulls"])
    for column, type_name in COLUMNS:
        table_stats = hms.get_table_column_statistics(db, "sales", column)
        assert table_stats.statsDesc.isTblLevel
        assert_figures(served(table_stats.statsObj[0]), expected(whole, column, type_name), f"table.{column}")


def _member(type_name: str) -> str:
    return {"bigint": "longStats", "int": "longStats", "timestamp": "longStats", "double": "doubleStats",
            "float": "doubleStats", "decimal(10,2)": "decimalStats", "string": "stringStats", "binary": "binaryStats",
            "boolean": "booleanStats", "date": "dateStats"}[type_name]


def test_publish_twice_writes_nothing_and_a_stale_partition_is_withdrawn(hms_lab, hms, sales, hms_uri):
    db, location, frames = sales
    hms_lab.sql(f"ANALYZE TABLE hms.{db}.sales COMPUTE STATISTICS FOR ALL COLUMNS")
    assert hms_lab.tables[f"hms.{db}.sales"].publish().details.write_calls > 0
    again = hms_lab.tables[f"hms.{db}.sales"].publish().details
    assert again.write_calls == 0 and again.unchanged == 3 and again.published == []
    time.sleep(1.1)  # another job appends a file to one day
    write_rows(f"{location}/ds=2026-01-03", rows_of(2, 5), "part-1.parquet")
    withdrawn = hms_lab.tables[f"hms.{db}.sales"].publish().details
    assert withdrawn.withdrawn == ["ds=2026-01-03"] and withdrawn.table_withdrawn
    # every column there was the lab's: one delete for the partition, one for the table, then the two flags
    assert withdrawn.write_calls == 4
    stats = hms.get_partitions_statistics_req(ttypes.PartitionsStatsRequest(
        db, "sales", ["x", "note"], [f"ds={d}" for d in DAYS])).partStats
    assert sorted(stats) == ["ds=2026-01-01", "ds=2026-01-02"]
    stale = hms.get_partition_by_name(db, "sales", "ds=2026-01-03").parameters
    assert not {"numRows", "COLUMN_STATS_ACCURATE", "spark.sql.statistics.numRows"} & set(stale)
    assert stale["numFiles"] == "2"
    kept = hms.get_partition_by_name(db, "sales", "ds=2026-01-01").parameters
    assert kept["numRows"] == "40" and "COLUMN_STATS_ACCURATE" in kept
    assert hms.get_table_statistics_req(ttypes.TableStatsRequest(db, "sales", ["x", "note"])).tableStats == []
    table_params = hms.get_table(db, "sales").parameters
    assert "numRows" not in table_params and not any(k.startswith("spark.sql.statistics.colStats") for k in table_params)
    # ANALYZE of the changed day only, then publish: everything back, the new day's figures included
    hms_lab.sql(f"ANALYZE TABLE hms.{db}.sales PARTITION (ds='2026-01-03') COMPUTE STATISTICS FOR ALL COLUMNS")
    back = hms_lab.tables[f"hms.{db}.sales"].publish().details
    assert back.published == ["ds=2026-01-03"] and back.table_columns
    assert hms.get_partition_by_name(db, "sales", "ds=2026-01-03").parameters["numRows"] == "45"
    assert hms.get_table(db, "sales").parameters["numRows"] == "125"
    # another lab on the same metastore file (a dashboard, say) reaches the HMS from the mirror's record
    other = Lab(home=hms_lab.home, spark=hms_lab.spark)
    assert other.tables[f"hms_{db}.sales"].publish().details.write_calls == 0
    page = TablePage(other, f"hms_{db}.sales")
    page.selected_index = TABS.index("Engines")
    view = page.children[TABS.index("Engines")].children[0]
    assert f"{db}.sales</b>" in view.header.value and "0 where the HMS disagrees" in view.header.value
    assert view.grid.value.count("colstats_lab") == len(COLUMNS) and ">stale</span>" not in view.grid.value
    time.sleep(1.1)
    write_rows(f"{location}/ds=2026-01-01", rows_of(0, 3), "part-2.parquet")
    view.show("ds=2026-01-01")
    assert f"{len(COLUMNS)} stale by the lab's evidence" in view.header.value and "files changed" in view.message.value
    view.publish()
    assert "1 withdrawn" in view.message.value and "0 stale" in view.header.value


def test_partitions_the_hms_adds_and_drops_are_followed(hms_lab, hms, sales):
    db, location, _ = sales
    hms_lab.sql(f"ANALYZE TABLE hms.{db}.sales COMPUTE STATISTICS FOR ALL COLUMNS")
    write_rows(f"{location}/moved/elsewhere", rows_of(3, 7))
    hms_tables.add_partitions(hms, db, "sales", COLUMNS, {("2026-01-04",): f"{location}/moved/elsewhere"})
    hms.drop_partition_by_name(db, "sales", "ds=2026-01-01", False)
    shown = hms_lab.sql(f"SHOW PARTITIONS hms.{db}.sales").df["partition"].tolist()
    assert shown == ["ds=2026-01-02", "ds=2026-01-03", "ds=2026-01-04"]
    hms_lab.sql(f"ANALYZE TABLE hms.{db}.sales PARTITION (ds='2026-01-04') COMPUTE STATISTICS FOR COLUMNS x")
    stats = hms_lab.metastore.column_stats.get_partition_column_statistics(f"hms_{db}", "sales", "ds=2026-01-04", "x")
    assert stats.statsObj[0].statsData.value.numNulls == int(rows_of(3, 7)["x"].isna().sum())
    def accuracy(column: str) -> str:
        described = hms_lab.sql(f"DESCRIBE FORMATTED hms.{db}.sales {column}").df
        return dict(zip(described.info_name, described.info_value, strict=True)).get("COLUMN_STATS_ACCURATE", "")

    # ds=2026-01-04 was analyzed for x only: the table level's x is accurate in every partition, note is not
    assert '"x":"true"' in accuracy("x") and '"note":"false"' in accuracy("note")


def test_partition_values_hive_escapes_in_directory_names(hms_lab, hms, tmp_path):
    """`a:b c` lives in `ds=a%3Ab c`, as Hive names it: the HMS's location is the directory's own name."""
    db, location = "t_escaped", str(tmp_path / "data" / "odd")
    values = {"a:b c": rows_of(0, 6), "50%": rows_of(1, 4)}
    directories = {}
    for value, frame in values.items():
        directories[(value,)] = f"{location}/ds={escape_path_name(value)}"
        write_rows(directories[(value,)], frame)
    hms_tables.create_table(hms, db, "odd", COLUMNS, [("ds", "string")], location)
    hms_tables.add_partitions(hms, db, "odd", COLUMNS, directories)
    hms_lab.sql(f"ANALYZE TABLE hms.{db}.odd COMPUTE STATISTICS FOR COLUMNS x")
    for value, frame in values.items():
        name = f"ds={escape_path_name(value)}"
        x = hms_lab.metastore.column_stats.get_partition_column_statistics(f"hms_{db}", "odd", name,
                                                                           "x").statsObj[0].statsData.value
        assert (x.numNulls, x.lowValue) == (int(frame["x"].isna().sum()), int(frame["x"].dropna().min())), value
    counted = hms_lab.sql(f"SELECT ds, count(*) AS n FROM hms.{db}.odd GROUP BY ds ORDER BY ds").df
    assert dict(zip(counted["ds"], counted["n"], strict=True)) == {"50%": 4, "a:b c": 6}


def test_engines_shows_what_other_engines_wrote_and_what_spark_reads(hms_lab, hms, sales, hms_uri, tmp_path):
    db, location, frames = sales
    hms_lab.sql(f"ANALYZE TABLE hms.{db}.sales COMPUTE STATISTICS FOR ALL COLUMNS")
    hms_lab.tables[f"hms.{db}.sales"].publish()
    # another engine writes figures of its own on a table the lab also analyzes: a wrong null count
    write_rows(str(tmp_path / "data" / "other"), rows_of(0, 10))
    hms_tables.create_table(hms, db, "other", COLUMNS, [], str(tmp_path / "data" / "other"),
                            {"trino_query_id": "20261124_000000_00001_abcde", "numRows": "10"})
    hms.update_table_column_statistics(ttypes.ColumnStatistics(
        ttypes.ColumnStatisticsDesc(True, db, "other", None, int(time.time())),
        [ttypes.ColumnStatisticsObj("x", "int", ttypes.ColumnStatisticsData(
            longStats=ttypes.LongColumnStatsData(-5, 17, 99, 4)))]))
    hms_lab.sql(f"ANALYZE TABLE hms.{db}.other COMPUTE STATISTICS FOR COLUMNS x")
    other = hms_lab.tables[f"hms.{db}.other"].engines().set_index("column")
    assert other.loc["x", "hms_writer"] == "trino" and other.loc["x", "hms_nulls"] == 99
    assert other.loc["x", "lab_nulls"] == int(rows_of(0, 10)["x"].isna().sum())
    assert other.loc["x", "agrees"] is False and "nulls" in other.loc["x", "reason"]
    # Spark, pointed at the same HMS, reads the lab's published figures and makes a table of its own
    home = tmp_path / "spark"
    home.mkdir()
    done = subprocess.run([sys.executable, os.path.join(HERE, "hms_spark_reader.py"), str(home), hms_uri,
                           f"{db}.sales", "x,note"], capture_output=True, text=True, timeout=600, cwd=str(home),
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    whole = pd.concat(frames.values(), ignore_index=True)
    x = expected(whole, "x", "int")
    assert report["described"]["x"]["min"] == str(x["low"]) and report["described"]["x"]["max"] == str(x["high"])
    assert report["described"]["x"]["num_nulls"] == str(x["nulls"])
    assert report["described"]["note"]["max_col_len"] == str(expected(whole, "note", "string")["max_len"])
    assert "rowCount=120" in report["plan"]
    day = os.path.join(location, "ds=2026-01-02", "part-0.parquet")
    assert report["partition"] == f"{os.path.getsize(day)} bytes, 40 rows"  # Spark's partition statistics
    hms_lab.sql(f"ANALYZE TABLE hms.{db}.spark_made COMPUTE STATISTICS FOR ALL COLUMNS")
    made = hms_lab.tables[f"hms.{db}.spark_made"].engines().set_index("column")
    assert made.loc["k", "spark_ndv"] == 4 and made.loc["k", "spark_rows"] == 5 and made.loc["k", "spark_min"] == "1"
    assert made.loc["k", "lab_ndv"] == 4 and made.loc["k", "lab_accurate"] is True
    assert made.loc["k", "stale"] is False
    partitions = hms_lab.tables[f"hms.{db}.sales"].engines("*")
    assert len(partitions) == 3 * len(COLUMNS)
    assert (partitions["hms_writer"] == "colstats_lab").all() and partitions["agrees"].all()


def test_one_day_of_ten_thousand_partitions_fetches_that_day(tmp_path, spark, hms, hms_uri):
    db, location = "t_big", str(tmp_path / "data" / "big")
    cols = [("x", "int")]
    days = [(dt.date(2000, 1, 1) + dt.timedelta(days=i)).isoformat() for i in range(10_000)]
    hms_tables.create_table(hms, db, "events", cols, [("ds", "string")], location)
    hms_tables.add_partitions(hms, db, "events", cols, {(d,): f"{location}/ds={d}" for d in days})
    day = days[4321]
    os.makedirs(f"{location}/ds={day}", exist_ok=True)
    pq.write_table(pa.table({"x": pa.array([1, 2, 2, None], pa.int32())}), f"{location}/ds={day}/part-0.parquet")
    lab = Lab(home=str(tmp_path / "lab"), spark=spark)
    lab.attach("hms", hms_uri)
    client = lab.catalogs["hms"]
    lab.sql(f"ANALYZE TABLE hms.{db}.events PARTITION (ds='{day}') COMPUTE STATISTICS FOR ALL COLUMNS")
    outcome = lab.tables[f"hms.{db}.events"].publish().details
    assert outcome.published == [f"ds={day}"] and outcome.table_columns == []
    assert client.partitions_fetched <= 3  # the day's partition object, for ANALYZE and for publish: never 10,000
    got = hms.get_partitions_statistics_req(ttypes.PartitionsStatsRequest(db, "events", ["x"], [f"ds={day}"]))
    assert served(got.partStats[f"ds={day}"][0]) == {"nulls": 1, "ndv": 2, "low": 1, "high": 2}
    lab.close()


def test_an_unpartitioned_table_is_published_and_withdrawn_at_the_table_level(hms_lab, hms, tmp_path):
    db, location = "t_flat", str(tmp_path / "data" / "flat")
    write_rows(location, rows_of(0, 25))
    hms_tables.create_table(hms, db, "flat", COLUMNS, [], location)
    hms_lab.sql(f"ANALYZE TABLE hms.{db}.flat COMPUTE STATISTICS FOR ALL COLUMNS")
    first = hms_lab.tables[f"hms.{db}.flat"].publish().details
    assert sorted(first.table_columns) == sorted(c for c, _ in COLUMNS) and "partition" not in first.message
    params = hms.get_table(db, "flat").parameters
    assert params["numRows"] == "25" and json.loads(params["COLUMN_STATS_ACCURATE"])["COLUMN_STATS"]["x"] == "true"
    assert hms_lab.tables[f"hms.{db}.flat"].publish().details.write_calls == 0
    time.sleep(1.1)
    write_rows(location, rows_of(1, 3), "part-9.parquet")  # another job appends
    assert hms_lab.tables[f"hms.{db}.flat"].engines()["stale"].all()
    withdrawn = hms_lab.tables[f"hms.{db}.flat"].publish().details
    assert withdrawn.table_withdrawn and "no longer accurate" in withdrawn.message
    assert "numRows" not in hms.get_table(db, "flat").parameters
    assert hms.get_table_statistics_req(ttypes.TableStatsRequest(db, "flat", ["x"])).tableStats == []
    assert hms_lab.sql(f"SELECT count(*) AS n FROM hms.{db}.flat").df.n[0] == 28


def test_bad_names_and_servers_are_named(hms_lab, hms, sales, tmp_path, spark):
    db, _, _ = sales
    with pytest.raises(ParseError) as caught:
        hms_lab.sql(f"ANALYZE TABLE nosuch.{db}.sales COMPUTE STATISTICS")
    assert "unknown catalog 'nosuch'" in caught.value.message and caught.value.position == len("ANALYZE TABLE ")
    with pytest.raises(ColstatsError, match=f"{db}.nosuch"):
        hms_lab.sql(f"DESCRIBE hms.{db}.nosuch")
    with pytest.raises(InvalidArgument, match="change it with the engine that owns it"):
        hms_lab.sql(f"DROP TABLE hms.{db}.sales")
    with pytest.raises(ColstatsError, match="database hms.nodb does not exist"):
        hms_lab.sql("SHOW TABLES IN hms.nodb")
    text = ttypes.Table("texty", db, "test", 0, 0, 0, hms_tables.storage(str(tmp_path / "text"), [("a", "int")]), [], {},
                        None, None, "EXTERNAL_TABLE")
    text.sd.inputFormat = "org.apache.hadoop.mapred.TextInputFormat"
    text.sd.serdeInfo.serializationLib = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
    hms.create_table(text)
    with pytest.raises(InvalidArgument, match=f"hms.{db}.texty is stored as org.apache.hadoop.mapred.TextInputFormat"):
        hms_lab.sql(f"ANALYZE TABLE hms.{db}.texty COMPUTE STATISTICS")
    other = Lab(home=str(tmp_path / "other"), spark=spark)
    with pytest.raises(ColstatsError, match="thrift://127.0.0.1:9"):
        other.attach("dead", "thrift://127.0.0.1:9")
    with pytest.raises(InvalidArgument, match="thrift://host:port"):
        other.attach("bad", "http://example")
    other.close()


def test_the_dashboards_engines_tab_in_a_browser(hms_lab, hms, sales):
    from playwright.sync_api import sync_playwright
    from served import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, free_port, serving

    from colstats_lab.cli import DASHBOARD_NOTEBOOK, voila_command

    db, location, _ = sales
    hms_lab.sql(f"ANALYZE TABLE hms.{db}.sales COMPUTE STATISTICS FOR ALL COLUMNS")
    hms_lab.tables[f"hms.{db}.sales"].publish()
    time.sleep(1.1)
    write_rows(f"{location}/ds=2026-01-02", rows_of(1, 4), "part-1.parquet")  # another job appends to one day
    port = free_port()
    env = {**os.environ, "COLSTATS_HOME": hms_lab.home, "PLOOMBER_STATS_ENABLED": "false"}
    os.makedirs(ARTIFACTS, exist_ok=True)
    with serving(voila_command(DASHBOARD_NOTEBOOK, port), port, os.path.join(hms_lab.home, "voila.log"), env=env) as url:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1400})
            page.goto(url, timeout=120_000)
            page.locator("table.colstats-table").first.wait_for(timeout=120_000)
            page.locator(".widget-dropdown", has_text="Table").locator("select").select_option(f"hms_{db}.sales")
            page.locator("table.colstats-table").nth(1).wait_for(timeout=120_000)
            page.locator(".lm-TabBar-tab", has_text="Engines").click()
            tab = page.locator(".widget-tab-contents .lm-Widget:visible").first
            tab.locator("table.colstats-table").wait_for(timeout=60_000)
            text = tab.inner_text()
            # the table level: the lab published it, then a partition's files changed: every column stale
            assert f"hms.{db}.sales at thrift://" in text and f"{len(COLUMNS)} stale by the lab's evidence" in text
            assert "files changed since the last analyze (1 added" in text
            tab.locator("button", has_text="Publish to the HMS").click()
            tab.locator("text=1 withdrawn").wait_for(timeout=60_000)
            assert "0 stale by the lab's evidence" in tab.inner_text()
            page.screenshot(path=os.path.join(ARTIFACTS, "dashboard_engines.png"), full_page=True)
            browser.close()
    assert "COLUMN_STATS_ACCURATE" not in hms.get_partition_by_name(db, "sales", "ds=2026-01-02").parameters


def test_figures_from_metadata_alone_are_published_without_claiming_what_is_not_exact(hms_lab, hms, tmp_path):
    """Hive answers count, min and max from the columns COLUMN_STATS_ACCURATE flags: a double's maximum footers
    cannot prove (a NaN would be above it) and a boolean's counts are published unflagged, and say their tier."""
    db, location = "t_tiers", str(tmp_path / "data" / "tiers")
    frame = rows_of(0, 30)
    write_rows(location, frame)
    hms_tables.create_table(hms, db, "tiers", COLUMNS, [], location)
    hms_lab.sql(f"ANALYZE TABLE hms.{db}.tiers COMPUTE STATISTICS FOR ALL COLUMNS NOSCAN")
    hms_lab.tables[f"hms.{db}.tiers"].publish()
    params = hms.get_table(db, "tiers").parameters
    flagged = json.loads(params["COLUMN_STATS_ACCURATE"])["COLUMN_STATS"]
    assert flagged.get("x") == "true" and flagged.get("id") == "true"  # footers: exact
    assert "amount" not in flagged  # published, not flagged
    assert "amount=metadata" in params["colstats.tiers"].split(";")
    published = {o.colName: o for o in hms.get_table_statistics_req(
        ttypes.TableStatsRequest(db, "tiers", ["x", "amount"])).tableStats}
    assert published["x"].statsData.longStats.numNulls == frame["x"].isna().sum()
    assert published["amount"].statsData.doubleStats.numNulls == frame["amount"].isna().sum()

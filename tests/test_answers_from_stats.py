"""count(*), count(c), min(c), max(c) answered from statistics when they are accurate for the
query's snapshot, and always equal to the same query run by Spark over the rows."""
from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pandas as pd
import pytest

from colstats_lab import Lab

ROWS = [
    # ds, hr, x, amount, price, day, ts, note
    ("a", 1, 5, 1.5, Decimal("1.10"), dt.date(2026, 1, 3), dt.datetime(2026, 1, 1, 10, tzinfo=dt.UTC), "n1"),
    ("a", 1, None, float("nan"), None, None, None, None),
    ("a", 2, -7, -0.5, Decimal("-2.00"), dt.date(2025, 5, 1), dt.datetime(2025, 1, 1, tzinfo=dt.UTC), "n2"),
    ("b", 1, 40, 9.0, Decimal("9.99"), dt.date(2027, 2, 2), dt.datetime(2027, 1, 1, 1, 1, 1, 5, tzinfo=dt.UTC), ""),
    ("b", 3, 2, None, Decimal("0.01"), dt.date(2026, 6, 6), None, "n3"),
    ("c", 3, None, None, None, None, None, None),
]
SCHEMA = "ds string, hr int, x int, amount double, price decimal(10,2), day date, ts timestamp, note string"

QUERIES = [
    "SELECT count(*) FROM t",
    "SELECT count(*) AS n, count(x), min(x), max(x) FROM t WHERE ds = 'a'",
    "SELECT min(amount), max(amount), count(amount) FROM t",
    "SELECT min(price) lo, max(price) hi FROM t WHERE hr > 1 AND ds IN ('a', 'b')",
    "SELECT min(day), max(day), min(ts), max(ts) FROM t WHERE ds BETWEEN 'a' AND 'b'",
    "SELECT count(x), max(x) FROM t WHERE NOT ds = 'a' OR hr = 2",
    "SELECT count(*), min(x) FROM t WHERE ds = 'zzz'",
    "SELECT count(*), count(note) FROM t WHERE 3 <= hr",
]


def _analyzed_t(lab, spark):
    lab.sql("CREATE TABLE t (x INT, amount DOUBLE, price DECIMAL(10,2), day DATE, ts TIMESTAMP, note STRING) "
            "PARTITIONED BY (ds STRING, hr INT)")
    lab.tables["t"].write(spark.createDataFrame(ROWS, SCHEMA))
    lab.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS")
    return lab


@pytest.fixture
def t(lab, spark):
    return _analyzed_t(lab, spark)


@pytest.fixture(scope="module")
def read_only_t(tmp_path_factory, spark):
    """The analyzed table once, for the queries that only read it."""
    lab = _analyzed_t(Lab(home=str(tmp_path_factory.mktemp("answers") / "lab"), spark=spark), spark)
    yield lab
    lab.close()


def _scan(lab, query: str) -> pd.DataFrame:
    lab.set("hive.compute.query.using.stats", False)
    try:
        result = lab.sql(query)
    finally:
        lab.set("hive.compute.query.using.stats", True)
    assert result.answered_from == "scan"
    return result.df


def _same(a, b) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a) and not isinstance(b, float)):
        return b is None or pd.isna(b)
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, dt.datetime):
        b = pd.Timestamp(b)
        return pd.Timestamp(a) == (b.tz_localize(None) if b.tzinfo else b)
    return a == b


@pytest.mark.parametrize("query", QUERIES)
def test_answers_from_stats_equal_the_scan(read_only_t, query):
    result = read_only_t.sql(query)
    assert result.answered_from == "stats", result.reason
    scan = _scan(read_only_t, query)
    assert list(result.df.columns) == list(scan.columns)
    for column in scan.columns:
        ours, theirs = result.df[column].iloc[0], scan[column].iloc[0]
        assert _same(ours, theirs), (column, ours, theirs)


def test_queries_statistics_cannot_answer_say_why_and_scan(t):
    cases = {
        "SELECT count(*) FROM t WHERE x > 1": "not a partition key",
        "SELECT min(note) FROM t": "no min/max statistic for note",
        "SELECT ds, count(*) FROM t GROUP BY ds": "GROUP",
        "SELECT sum(x) FROM t": "is not count, min or max",
        "SELECT count(DISTINCT x) FROM t": "DISTINCT",
    }
    for query, why in cases.items():
        result = t.sql(query)
        assert result.answered_from == "scan" and why in result.reason, (query, result.reason)


def test_stale_statistics_go_to_a_scan_until_analyzed_again(t, spark):
    t.set("hive.stats.column.autogather", False)
    t.tables["t"].write(spark.createDataFrame([("a", 1, 99, 1.0, Decimal("1.00"), None, None, "z")], SCHEMA).drop("ds", "hr"),
                        partition={"ds": "a", "hr": 1})
    result = t.sql("SELECT count(*), max(x) FROM t WHERE ds = 'a'")
    assert result.answered_from == "scan"
    assert "partition ds=a/hr=1" in result.reason and "after the last analyze of x" in result.reason
    assert (result.df.iloc[0, 0], result.df.iloc[0, 1]) == (4, 99)
    assert t.sql("SELECT count(*) FROM t WHERE ds = 'b'").answered_from == "stats"  # untouched partitions
    t.sql("ANALYZE TABLE t PARTITION (ds='a') COMPUTE STATISTICS FOR COLUMNS x")
    again = t.sql("SELECT count(*), max(x) FROM t WHERE ds = 'a'")
    assert again.answered_from == "stats" and (again.df.iloc[0, 0], again.df.iloc[0, 1]) == (4, 99)


def test_a_transaction_older_than_the_stats_scans_its_own_snapshot(t, spark):
    reader = t.transaction()
    assert t.sql("SELECT count(*) FROM t", txn=reader).answered_from == "stats"  # fixes the reader's snapshot
    t.tables["t"].write(spark.createDataFrame([(1, 1.0, Decimal("1.00"), None, None, "q")],
                                              "x int, amount double, price decimal(10,2), day date, ts timestamp, note string"),
                   partition={"ds": "d", "hr": 1})
    t.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS")
    old = t.sql("SELECT count(*) FROM t", txn=reader)
    assert old.answered_from == "scan" and "not visible in your snapshot" in old.reason
    assert old.df.iloc[0, 0] == len(ROWS)  # what the reader's snapshot holds
    new = t.sql("SELECT count(*) FROM t")
    assert new.answered_from == "stats" and new.df.iloc[0, 0] == len(ROWS) + 1
    reader.abort()


def test_statistics_gathered_on_write_keep_answers_from_stats(t, spark):
    more = spark.createDataFrame([(99, -3.0, Decimal("5.00"), None, None, "z"), (None, 2.0, None, None, None, None)],
                                 "x int, amount double, price decimal(10,2), day date, ts timestamp, note string")
    t.tables["t"].write(more, partition={"ds": "a", "hr": 1})
    query = "SELECT count(*), count(x), min(x), max(x), min(amount) FROM t WHERE ds = 'a'"
    result = t.sql(query)
    assert result.answered_from == "stats", result.reason
    scan = _scan(t, query)
    assert [_same(result.df.iloc[0, i], scan.iloc[0, i]) for i in range(5)] == [True] * 5

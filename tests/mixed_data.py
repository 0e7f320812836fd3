"""A mixed-type table with the awkward values statistics must get right, and the same rows in Python.

Nulls, empty strings, NaN, -0.0, negative numbers, multi-byte characters, a float that widens
(0.1), an all-null column, and an empty partition.
"""
from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

from pyspark.sql import types as T

DDL = ("CREATE TABLE mix (id BIGINT, x INT, small SMALLINT, amount DOUBLE, f FLOAT, price DECIMAL(10,2), "
       "note STRING, flag BOOLEAN, day DATE, ts TIMESTAMP, raw BINARY, nothing INT) PARTITIONED BY (ds STRING)")

SCHEMA = T.StructType([
    T.StructField("id", T.LongType()), T.StructField("x", T.IntegerType()), T.StructField("small", T.ShortType()),
    T.StructField("amount", T.DoubleType()), T.StructField("f", T.FloatType()),
    T.StructField("price", T.DecimalType(10, 2)), T.StructField("note", T.StringType()),
    T.StructField("flag", T.BooleanType()), T.StructField("day", T.DateType()),
    T.StructField("ts", T.TimestampType()), T.StructField("raw", T.BinaryType()),
    T.StructField("nothing", T.IntegerType()),
])
COLUMNS = [f.name for f in SCHEMA.fields]
PARTITIONS = {"a": 60, "b": 45, "c": 0}  # c is an empty partition


def rows_for(partition: str, count: int, seed: int) -> list[tuple]:
    rnd = random.Random(seed)
    out = []
    for i in range(count):
        def maybe(value, p_null=0.15):
            return None if rnd.random() < p_null else value
        amount = rnd.choice([rnd.uniform(-1e6, 1e6), -0.0, 0.0, float("nan"), -3.5, 1e-300])
        note = rnd.choice(["", "a", "héllo wörld", "zzz", "x" * rnd.randint(1, 40), "日本語"])
        out.append((
            i + (1000 if partition == "b" else 0),
            maybe(rnd.randint(-50, 50)),
            maybe(rnd.randint(-32768, 32767)),
            maybe(amount),
            maybe(rnd.choice([0.1, -2.5, 3.25, float("nan"), 1e10])),
            maybe(Decimal(rnd.randint(-99999, 99999)).scaleb(-2)),
            maybe(note),
            maybe(rnd.random() < 0.3),
            maybe(dt.date(2026, 1, 1) + dt.timedelta(days=rnd.randint(-400, 400))),
            maybe(dt.datetime(2026, 11, 21, tzinfo=dt.UTC)
                  + dt.timedelta(microseconds=rnd.randint(-10**13, 10**13))),
            maybe(bytes(rnd.randint(0, 255) for _ in range(rnd.randint(0, 12)))),
            None,
        ))
    return out


def all_rows() -> dict[str, list[tuple]]:
    return {p: rows_for(p, n, seed) for seed, (p, n) in enumerate(PARTITIONS.items())}


def write_mix(lab, spark) -> dict[str, list[tuple]]:
    """Creates `mix` in the lab and writes every partition (one static write each)."""
    lab.sql(DDL)
    data = all_rows()
    for partition, rows in data.items():
        lab.tables["mix"].write(spark.createDataFrame(rows, SCHEMA), partition={"ds": partition})
    return data

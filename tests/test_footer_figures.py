"""ANALYZE takes minimum, maximum and NULL count from footers where every file holds them exactly, and scans
only for what footers lack: over random files written by pyarrow and by Spark, every stored figure equals
pyarrow's computation over the rows themselves (never their footers), and the columns the footers served are
named; footers that cannot be trusted (INT96, doubles, cut strings, a file without statistics) are scanned."""
from __future__ import annotations

import datetime as dt
import decimal
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colstats_lab import Lab

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
TYPES = {"tiny": pa.int8(), "n": pa.int64(), "i": pa.int32(), "day": pa.date32(),
         "ts": pa.timestamp("us", tz="UTC"), "note": pa.string(), "amount": pa.float64(), "flag": pa.bool_()}


def _value(draw, name: str, precision: int, scale: int):
    if name == "tiny":
        return draw(st.integers(-128, 127))
    if name == "n":
        return draw(st.integers(-2**63, 2**63 - 1))
    if name == "i":
        return draw(st.integers(-2**31, 2**31 - 1))
    if name == "day":
        return dt.date(1, 1, 1) + dt.timedelta(days=draw(st.integers(0, 3_000_000)))
    if name == "ts":
        return EPOCH + dt.timedelta(microseconds=draw(st.integers(-2**55, 2**55)))
    if name == "note":  # past 32 characters too, where a writer may cut a footer's bound
        return draw(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
    if name == "amount":
        return draw(st.floats(allow_nan=True, allow_infinity=True))
    if name == "flag":
        return draw(st.booleans())
    digits = draw(st.integers(-(10**precision - 1), 10**precision - 1))
    return decimal.Decimal((int(digits < 0), tuple(int(d) for d in str(abs(digits))), -scale))  # exact: no context


@st.composite
def tables(draw):
    """Partitions of files of row groups, any column NULL anywhere (whole row groups too), a decimal of any
    precision and scale."""
    precision = draw(st.integers(1, 38))
    scale = draw(st.integers(0, precision))
    types = {**TYPES, "price": pa.decimal128(precision, scale)}
    partitions = {}
    for ds in ("a", "b")[:draw(st.integers(1, 2))]:
        files = []
        for _ in range(draw(st.integers(1, 3))):
            rows = draw(st.integers(1, 12))
            null_share = {name: draw(st.sampled_from([0.0, 0.3, 1.0])) for name in types}
            columns = {name: [None if draw(st.floats(0, 1)) < null_share[name] else
                              _value(draw, name, precision, scale) for _ in range(rows)] for name in types}
            files.append((pa.table({n: pa.array(v, type=types[n]) for n, v in columns.items()}),
                          draw(st.integers(1, 5))))  # rows per row group
        partitions[ds] = files
    return partitions, precision, scale


def _write(root, partitions, writer: str, spark) -> None:
    for ds, files in partitions.items():
        folder = os.path.join(root, f"ds={ds}")
        os.makedirs(folder)
        for index, (table, group_rows) in enumerate(files):
            if writer == "pyarrow":
                pq.write_table(table, os.path.join(folder, f"part-{index}.parquet"), row_group_size=group_rows)
            else:  # Spark's own writer: timestamps as INT96, which keeps no bounds in footers
                frame = spark.createDataFrame(table.to_pylist(), schema=_spark_schema(table))
                frame.coalesce(1).write.parquet(os.path.join(folder, f"spark-{index}"))
                for name in os.listdir(os.path.join(folder, f"spark-{index}")):
                    if name.endswith(".parquet"):
                        os.rename(os.path.join(folder, f"spark-{index}", name), os.path.join(folder, f"part-{index}.parquet"))
                _drop_tree(os.path.join(folder, f"spark-{index}"))


def _drop_tree(path: str) -> None:
    for name in os.listdir(path):
        os.remove(os.path.join(path, name))
    os.rmdir(path)


def _spark_schema(table: pa.Table):
    from pyspark.sql import types as T
    names = {pa.int8(): T.ByteType(), pa.int64(): T.LongType(), pa.int32(): T.IntegerType(), pa.date32(): T.DateType(),
             pa.string(): T.StringType(), pa.float64(): T.DoubleType(), pa.bool_(): T.BooleanType()}
    fields = []
    for field in table.schema:
        if pa.types.is_timestamp(field.type):
            kind = T.TimestampType()
        elif pa.types.is_decimal(field.type):
            kind = T.DecimalType(field.type.precision, field.type.scale)
        else:
            kind = names[field.type]
        fields.append(T.StructField(field.name, kind))
    return T.StructType(fields)


def _expected(rows: pa.Table, name: str) -> dict:
    """Hive's figures of one column, computed by pyarrow from the rows (Spark orders NaN above every number)."""
    column = rows.column(name)
    present = pc.drop_null(column)
    out = {"nulls": column.null_count}
    if name in ("note",):
        lengths = pc.utf8_length(present)
        out["maxlen"] = pc.max(lengths).as_py() or 0
        return out
    if name == "flag":
        out["trues"] = pc.sum(pc.cast(present, pa.int64())).as_py() or 0
        return out
    if len(present) == 0:
        out["low"] = out["high"] = None
        return out
    if name == "amount":
        values = present.to_pylist()
        numbers = [v for v in values if v == v]
        out["low"] = min(numbers) if numbers else float("nan")
        out["high"] = float("nan") if len(numbers) < len(values) else max(numbers)
        return out
    low, high = pc.min(present).as_py(), pc.max(present).as_py()
    if name == "day":
        low, high = (low - dt.date(1970, 1, 1)).days, (high - dt.date(1970, 1, 1)).days
    elif name == "ts":
        low, high = ((v - EPOCH) // dt.timedelta(microseconds=1) for v in (low, high))
    out["low"], out["high"] = low, high
    return out


def _stored(obj) -> dict:
    data, kind = obj.statsData.value, obj.statsData.kind.value
    out = {"nulls": data.numNulls}
    if kind == "stringStats":
        out["maxlen"] = data.maxColLen
    elif kind == "booleanStats":
        out["trues"] = data.numTrues
    else:
        low, high = data.lowValue, data.highValue
        if kind == "dateStats":
            low, high = (None if v is None else v.daysSinceEpoch for v in (low, high))
        elif kind == "timestampStats":
            low, high = (None if v is None else v.microsSinceEpoch for v in (low, high))
        out["low"], out["high"] = low, high
    return out


def _same(stored: dict, expected: dict) -> bool:
    nan = lambda v: isinstance(v, float) and v != v  # noqa: E731
    return all(stored.get(k) == v or (nan(stored.get(k)) and nan(v)) for k, v in expected.items())


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("FOOTER_EXAMPLES", 12)), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(drawn=tables(), writer=st.sampled_from(["pyarrow", "spark"]))
def test_footer_figures_equal_the_rows_over_random_files(tmp_path_factory, spark, drawn, writer):
    partitions, _, _ = drawn
    home = tmp_path_factory.mktemp("footers")
    root = str(home / "random")
    _write(root, partitions, writer, spark)
    lab = Lab(home=str(home / "lab"), spark=spark)
    try:
        lab.register_external("random", root, partition_types={"ds": "string"})
        outcome = lab.sql("ANALYZE TABLE random PARTITION (ds) COMPUTE STATISTICS FOR ALL COLUMNS").details
        # doubles are always scanned (a footer's bounds leave NaN out); Spark's INT96 timestamps keep no bounds
        assert "amount" not in outcome.footer_columns
        assert {"tiny", "n", "i", "day", "price", "flag"} <= set(outcome.footer_columns)
        int96 = any(pq.ParquetFile(os.path.join(root, f"ds={ds}", f"part-{index}.parquet")).schema.column(4)
                    .physical_type == "INT96" for ds, files in partitions.items() for index in range(len(files)))
        assert ("ts" in outcome.footer_columns) == (not int96)
        names = list(TYPES) + ["price"]
        for ds, files in partitions.items():
            rows = pa.concat_tables([table for table, _ in files])
            stored = lab.metastore.column_stats.get_partitions_statistics("default", "random", [f"ds={ds}"], names)[f"ds={ds}"]
            for obj in stored.statsObj:
                expected = _expected(rows, obj.colName)
                assert _same(_stored(obj), expected), (writer, ds, obj.colName, _stored(obj), expected)
    finally:
        lab.close()


def test_analyze_names_the_columns_its_footers_served_and_equals_a_scan(lab, spark):
    """Footers of one file another job wrote without statistics serve nothing for the whole table: its
    figures come from the scan, and equal the footer-served ones of the same rows."""
    root = lab.home + "/ext"
    rows = pa.table({"x": pa.array([3, None, -7, 12], pa.int64()), "note": pa.array(["b", None, "a" * 40, ""]),
                     "day": pa.array([dt.date(2026, 1, 2), None, dt.date(1900, 3, 1), dt.date(2262, 4, 12)])})
    os.makedirs(f"{root}/ds=1")
    pq.write_table(rows.slice(0, 2), f"{root}/ds=1/a.parquet")
    pq.write_table(rows.slice(2), f"{root}/ds=1/b.parquet")
    lab.register_external("ext", root)
    served = lab.sql("ANALYZE TABLE ext COMPUTE STATISTICS FOR ALL COLUMNS").details
    assert served.footer_columns == ["x", "note", "day"]
    from_footers = {o.colName: _stored(o) for o in lab.metastore.column_stats.get_partitions_statistics(
        "default", "ext", ["ds=1"], ["x", "note", "day"])["ds=1"].statsObj}
    assert from_footers["x"] == {"nulls": 1, "low": -7, "high": 12}
    assert from_footers["day"] == {"nulls": 1, "low": (dt.date(1900, 3, 1) - dt.date(1970, 1, 1)).days,
                                   "high": (dt.date(2262, 4, 12) - dt.date(1970, 1, 1)).days}
    assert from_footers["note"] == {"nulls": 1, "maxlen": 40}

    pq.write_table(rows.slice(2), f"{root}/ds=1/b.parquet", write_statistics=False)  # another job rewrites it
    scanned = lab.sql("ANALYZE TABLE ext COMPUTE STATISTICS FOR ALL COLUMNS").details
    assert scanned.footer_columns == []
    again = {o.colName: _stored(o) for o in lab.metastore.column_stats.get_partitions_statistics(
        "default", "ext", ["ds=1"], ["x", "note", "day"])["ds=1"].statsObj}
    assert again == from_footers


def _written(lab, table: str, partition: str, names: list[str]) -> dict:
    stats = lab.metastore.column_stats.get_partitions_statistics("default", table, [partition], names)[partition]
    flags = lab.metastore.catalog.get_partition("default", table, partition).parameters["COLUMN_STATS_ACCURATE"]
    assert all(f'"{n}":"true"' in flags for n in names), flags
    return {o.colName: _stored(o) for o in stats.statsObj}


def test_a_gathered_write_takes_min_max_and_nulls_from_the_footers_it_wrote(lab, spark):
    """A static and a dynamic write gather from the new files' footers; Spark's INT96 timestamps and strings
    too long for a footer's bounds are gathered from the rows instead; every figure equals pandas'."""
    import pandas as pd

    lab.sql("CREATE TABLE w (n BIGINT, note STRING, ts TIMESTAMP, day DATE) PARTITIONED BY (ds STRING)")
    rows = pd.DataFrame({"n": [5, None, -2], "note": ["ab", None, "xyz"],
                         "ts": pd.to_datetime(["2026-01-01 00:00:00.000001", None, "1969-12-31 23:59:59"], utc=True,
                                              format="ISO8601"),
                         "day": [dt.date(2026, 5, 1), dt.date(1999, 1, 2), None]}).astype({"n": "Int64"})
    micros = lambda text: (dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC) - EPOCH)  # noqa: E731
    expected = {"n": {"nulls": 1, "low": -2, "high": 5}, "note": {"nulls": 1, "maxlen": 3},
                "ts": {"nulls": 1, "low": micros("1969-12-31 23:59:59") // dt.timedelta(microseconds=1),
                       "high": micros("2026-01-01 00:00:00.000001") // dt.timedelta(microseconds=1)},
                "day": {"nulls": 1, "low": (dt.date(1999, 1, 2) - dt.date(1970, 1, 1)).days,
                        "high": (dt.date(2026, 5, 1) - dt.date(1970, 1, 1)).days}}
    names = list(expected)

    static = lab.tables["w"].write(rows, partition={"ds": "s"})
    assert static.footer_columns == names
    assert _written(lab, "w", "ds=s", names) == expected

    dynamic = lab.tables["w"].write(rows.assign(ds=["d1", "d2", "d1"]))
    assert dynamic.footer_columns == names
    assert _written(lab, "w", "ds=d1", ["n"])["n"] == {"nulls": 0, "low": -2, "high": 5}

    spark.conf.set("spark.sql.parquet.outputTimestampType", "INT96")
    try:
        int96 = lab.tables["w"].write(rows, partition={"ds": "int96"})
    finally:
        spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    assert int96.footer_columns == ["n", "note", "day"]
    assert _written(lab, "w", "ds=int96", names) == expected

    long_notes = rows.assign(note=["x" * 70_000, None, "y"])  # parquet-mr keeps no bounds past 4 KiB
    long = lab.tables["w"].write(long_notes, partition={"ds": "long"})
    assert "note" not in long.footer_columns and "n" in long.footer_columns
    assert _written(lab, "w", "ds=long", names) == {**expected, "note": {"nulls": 1, "maxlen": 70_000}}


def test_every_cache_of_the_lab_is_bounded_together_in_bytes(lab, tmp_path):
    """The footer caches were bounded by entries (8,192 each), not bytes: ANALYZE of 10,000 files of 20 columns
    took the lab's process to 1 GiB, and a wide table's footers would have taken tens of GiB."""
    from colstats_lab import caches
    from colstats_lab.storage import forget_footers

    rng = np.random.default_rng(6)
    root = tmp_path / "many"
    frames = []
    for day in range(40):
        part = pd.DataFrame({f"c{i}": rng.integers(0, 1000, 50) for i in range(20)})
        (root / f"ds={day:02d}").mkdir(parents=True)
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False), root / f"ds={day:02d}" / "p.parquet")
        frames.append(part.assign(ds=f"{day:02d}"))
    every = pd.concat(frames)
    footer = pq.read_metadata(root / "ds=00" / "p.parquet")
    assert lab.get("colstats.cache.max_bytes") == caches.DEFAULT_MAX_BYTES
    budget = 10 * 10 * footer.serialized_size  # ten footers' worth, by the estimate: a tenth of the files
    lab.set("colstats.cache.max_bytes", budget)
    try:
        forget_footers()
        lab.register_external("many", str(root))
        lab.tables["many"].analyze()
        assert 0 < caches.held_bytes() <= budget
        answer = lab.sql("SELECT count(*), min(c3), max(c3) FROM many WHERE ds = '07'")
        day = every[every.ds == "07"]
        assert answer.answered_from == "stats" and list(answer.df.iloc[0]) == [len(day), day.c3.min(), day.c3.max()]
        assert lab.explain("SELECT c1 FROM many WHERE c2 > 990").estimate.rows is not None
        assert caches.held_bytes() <= budget
        lab.set("colstats.cache.max_bytes", 100)  # less than one footer: nothing is kept, the reads still answer
        assert caches.held_bytes() == 0
        assert lab.sql("SELECT count(*) FROM many WHERE c2 > 990").df.iloc[0, 0] == (every.c2 > 990).sum()
        assert caches.held_bytes() == 0
    finally:
        assert lab.sql("RESET colstats.cache.max_bytes").message == "Reset colstats.cache.max_bytes"
    assert caches.max_bytes() == caches.DEFAULT_MAX_BYTES

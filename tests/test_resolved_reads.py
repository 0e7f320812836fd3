"""A command over a snapshot whose files are unchanged reuses the Spark read an earlier command resolved; a file
another job rewrites (even in place, at the same path), adds or removes is read again, so every figure stays the
rows' own, checked here against pyarrow's over the files themselves. The DataFrames a user is given are never
reused: two of one table join as two."""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from colstats_lab.tables.kinds import read_snapshot


def _write(path: str, values: list[int]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.table({"x": pa.array(values, pa.int64())}), path, row_group_size=500)


def _figures(lab) -> tuple[int, int, int]:
    """Rows, minimum and maximum of x as the table's statistics say after an ANALYZE."""
    lab.sql("ANALYZE TABLE ext COMPUTE STATISTICS FOR COLUMNS x")
    table = lab.metastore.catalog.get_table("default", "ext")
    data = lab.metastore.column_stats.get_table_statistics("default", "ext", ["x"]).statsObj[0].statsData.value
    return int(table.parameters["numRows"]), data.lowValue, data.highValue


def _expected(root: str) -> tuple[int, int, int]:
    """The same figures from the rows of every file under `root`, as pyarrow reads them."""
    column = pa.concat_arrays([pq.read_table(os.path.join(d, f))["x"].combine_chunks()
                               for d, _, files in os.walk(root) for f in files if f.endswith(".parquet")])
    bounds = pc.min_max(column)
    return len(column), bounds["min"].as_py(), bounds["max"].as_py()


def test_a_file_rewritten_in_place_added_or_removed_is_read_again(lab, tmp_path):
    root = str(tmp_path / "ext")
    first, second = os.path.join(root, "p=1", "part-0.parquet"), os.path.join(root, "p=2", "part-0.parquet")
    _write(first, [1, 2, 3])
    _write(second, [10, 20])
    lab.register_external("ext", root)
    assert _figures(lab) == _expected(root) == (5, 1, 20)
    table, parts = lab.tables["ext"].files()
    assert read_snapshot(lab.spark, table, parts, reuse=True) is read_snapshot(lab.spark, table, parts, reuse=True)

    # the same path, other rows in row groups past the old file's length (a read resolved before would split the
    # file at that length, and so leave them out)
    _write(first, [-7, *range(4_998), 100_000])
    stat = os.stat(first)
    os.utime(first, (stat.st_atime + 5, stat.st_mtime + 5))  # a rewrite within the same millisecond still shows
    assert _figures(lab) == _expected(root) == (5_002, -7, 100_000)

    _write(os.path.join(root, "p=2", "part-1.parquet"), [500, 600, 700, 800])  # another job adds a file
    assert _figures(lab) == _expected(root) == (5_006, -7, 100_000)

    os.remove(first)  # and removes one
    assert _figures(lab) == _expected(root) == (6, 10, 800)


def test_the_dataframes_a_user_is_given_are_their_own(lab):
    """`TableHandle.to_spark` resolves a new read each time: a self-join's sides keep columns of their own."""
    lab.sql("CREATE TABLE t (id BIGINT, x INT)")
    lab.tables["t"].write(lab.spark.createDataFrame([(1, 10), (2, 20), (3, 10)], "id bigint, x int"))
    left, right = lab.tables["t"].to_spark(), lab.tables["t"].to_spark()
    assert left is not right
    pairs = left.join(right, left["x"] == right["x"]).select(left["id"], right["id"]).collect()
    assert sorted(tuple(r) for r in pairs) == [(1, 1), (1, 3), (2, 2), (3, 1), (3, 3)]

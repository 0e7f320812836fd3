"""`colstats-lab metastore copy SRC DST`: a lab moved from its SQLite file to a team's PostgreSQL database and back,
history and sketches included, checked table by table with each database's own driver; a destination that holds
anything is refused, untouched."""
from __future__ import annotations

import contextlib
import io
import math

import pandas as pd
import pytest
from metastore_rows import connect

from colstats_lab import Lab
from colstats_lab.cli import main as cli_main


def _same(a, b) -> bool:
    """One value as each database gives it back: a float NaN is NaN, a typeless SQLite column's number is the
    text PostgreSQL keeps of it."""
    if isinstance(a, memoryview):
        a = bytes(a)
    if isinstance(b, memoryview):
        b = bytes(b)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, str) and isinstance(b, (int, float)) or isinstance(b, str) and isinstance(a, (int, float)):
        text, number = (a, b) if isinstance(a, str) else (b, a)
        return float(text) == number or (math.isnan(float(text)) and math.isnan(number))
    return a == b


def assert_same_rows(source: str, destination: str) -> dict[str, int]:
    """Every table of the two metastores holds the same rows (compared in one order); returns the counts."""
    counts = {}
    with connect(source) as src, connect(destination) as dst:
        tables = src.tables() - {"COLSTATS_SCHEMA_VERSION"}
        assert tables == dst.tables() - {"COLSTATS_SCHEMA_VERSION"}
        for table in sorted(tables):
            columns = sorted(src.columns(table))
            assert columns == sorted(dst.columns(table)), table
            names = ", ".join('"DESC"' if c == "DESC" else c for c in columns)  # DBS."DESC": a keyword
            select = f"SELECT {names} FROM {table}"
            left, right = src.execute(select).fetchall(), dst.execute(select).fetchall()
            assert len(left) == len(right), table
            for row in left:  # each row pairs with one of the other's, value by value
                match = next((r for r in right if all(_same(a, b) for a, b in zip(row, r, strict=True))), None)
                assert match is not None, (table, row)
                right.remove(match)
            counts[table] = len(left)
    return counts


def _run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_a_lab_moves_to_postgresql_and_back_with_its_history_and_sketches(tmp_path, spark, postgres):
    home = str(tmp_path / "lab")
    lab = Lab(home=home, spark=spark)
    lab.sql("CREATE TABLE sales (x BIGINT, note STRING, amount DOUBLE) PARTITIONED BY (ds STRING)")
    lab.sql("ALTER TABLE sales SET TBLPROPERTIES ('colstats.frequent.items.columns'='x, note')")
    for day in ("d1", "d2", "d3"):
        lab.tables["sales"].write(pd.DataFrame({"x": range(40), "note": [f"n{i % 6}" if i % 5 else None for i in range(40)],
                                                "amount": [i / 3 for i in range(40)]}), partition={"ds": day})
    lab.tables["sales"].expect("x", nulls_below=0.5)
    lab.sql("ANALYZE TABLE sales COMPUTE STATISTICS FOR ALL COLUMNS")
    lab.set("metastore.enabled", True)
    lab.sql("ANALYZE TABLE sales REFRESH METADATA 'PARTITION' LEVEL COMPUTE STATISTICS")
    before = lab.tables["sales"].inspect.stats()
    history = lab.tables["sales"].inspect.history("x", "ds=d1")
    sqlite_path = lab.metastore.path
    lab.close()

    team = postgres.new_database("team")
    code, out, err = _run_cli("metastore", "copy", sqlite_path, team)
    assert code == 0, err
    assert "into postgresql://postgres@127.0.0.1" in out and postgres.url().split(":")[2].split("@")[0] not in out
    counts = assert_same_rows(sqlite_path, team)
    assert counts["PART_COL_STATS"] == 9 and counts["COL_STATS_HISTORY"] >= 12 and counts["METADATA_UNITS"] > 0
    assert counts["PART_COL_FREQUENT_ITEMS"] > 0 and counts["STATS_EXPECTATIONS"] == 1

    moved = Lab(home=home, spark=spark, metastore=team)
    try:
        pd.testing.assert_frame_equal(moved.tables["sales"].inspect.stats(), before)
        pd.testing.assert_frame_equal(moved.tables["sales"].inspect.history("x", "ds=d1"), history)
        # new rows take new ids past the copied ones: a new partition, its statistics and their history
        moved.tables["sales"].write(pd.DataFrame({"x": [7], "note": ["new"], "amount": [1.5]}), partition={"ds": "d4"})
        assert moved.tables["sales"].inspect.stats().query("partition == 'ds=d4' and column == 'x'").rows.iloc[0] == 1
        assert moved.tables["sales"].inspect.staleness()["accurate"].all()
    finally:
        moved.close()

    code, _, err = _run_cli("metastore", "copy", sqlite_path, team)  # the team's database holds a lab now
    assert code == 2 and "is not empty" in err and err.count("\n") == 1
    back = str(tmp_path / "back" / "metastore.db")
    code, _, err = _run_cli("metastore", "copy", team, back)
    assert code == 0, err
    assert assert_same_rows(team, back)["PART_COL_STATS"] == 12


def test_a_copy_into_a_metastore_that_holds_a_table_writes_nothing(tmp_path, postgres):
    from colstats_lab.metastore import FieldSchema, MetaException, Metastore, Table
    from colstats_lab.metastore.copy import copy_metastore

    source = Metastore(str(tmp_path / "a.db"))
    source.catalog.create_table(Table("default", "a", [FieldSchema("x", "int")], location=str(tmp_path / "a")))
    source.close()
    target_url = postgres.new_database()
    target = Metastore(target_url, str(tmp_path / "wh"))
    target.catalog.create_table(Table("default", "b", [FieldSchema("y", "int")], location=str(tmp_path / "b")))
    target.close()
    with pytest.raises(MetaException, match=r"is not empty \(.*TBLS 1 rows\): a copy goes into a new one only"):
        copy_metastore(str(tmp_path / "a.db"), target_url)
    with connect(target_url) as conn:
        assert [r[0] for r in conn.execute("SELECT TBL_NAME FROM TBLS")] == ["b"]

"""lab.explain's row estimates from statistics alone, against the rows pandas counts over the same data:
ranges within the KLL sketch's rank error per bound, equalities from the sketch's heavy hitters or 1/NDV,
IS NULL from the null counts, AND across independent columns; no estimate from statistics a reader
cannot trust."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from colstats_lab.column_statistics.quantiles import rank_error

PER_DAY = 4_000


def _day(index: int) -> pd.DataFrame:
    rng = np.random.default_rng(10 + index)
    i = np.arange(PER_DAY)
    skewed = np.where(rng.random(PER_DAY) < 0.35, 7, rng.integers(100, 100_000, PER_DAY))
    amount = rng.lognormal(3.0, 1.0, PER_DAY)
    amount[i % 9 == 0] = np.nan
    return pd.DataFrame({"u": i % 100, "v": (i // 100) % 40, "s": skewed,
                         "amount": pd.array(amount, dtype="Float64").fillna(pd.NA)})


@pytest.fixture(scope="module")
def sales(tmp_path_factory, spark):
    from colstats_lab import Lab

    lab = Lab(home=str(tmp_path_factory.mktemp("estimates")), spark=spark)
    lab.set("hive.stats.kll.enable", True)
    lab.sql("CREATE TABLE sales (u BIGINT, v INT, s BIGINT, amount DOUBLE) PARTITIONED BY (ds STRING)")
    frames = {}
    for index, day in enumerate(("a", "b", "c")):
        frames[day] = _day(index)
        lab.tables["sales"].write(frames[day], partition={"ds": day})
    everything = pd.concat([f.assign(ds=d) for d, f in frames.items()], ignore_index=True)
    yield lab, everything
    lab.close()


def _kept(rows: pd.DataFrame, condition: str) -> int:
    return int(len(rows.query(condition, engine="python"))) if condition else len(rows)


CASES = [
    # (WHERE, the same condition for pandas, allowed error in rank-error units of the rows read)
    ("u < 37", "u < 37", 1),
    ("u >= 80", "u >= 80", 1),
    ("u BETWEEN 10 AND 19", "u >= 10 and u <= 19", 2),
    ("amount > 40.5", "amount > 40.5", 1),
    ("s = 7", "s == 7", 2),  # the heavy hitter
    ("u < 30 AND v < 10", "u < 30 and v < 10", 2),
    ("ds = 'b' AND u < 50", "ds == 'b' and u < 50", 1),
]


@pytest.mark.parametrize("where, condition, bounds", CASES)
def test_range_and_heavy_hitter_estimates_are_within_the_sketch_error(sales, where, condition, bounds):
    lab, rows = sales
    report = lab.explain(f"SELECT * FROM sales WHERE {where}", run=True)
    actual = _kept(rows, condition)
    read = len(rows[rows.ds == "b"]) if "ds =" in where else len(rows)
    assert report.actual_rows == actual
    assert report.estimated_rows is not None, report.estimate.how
    assert abs(report.estimated_rows - actual) <= bounds * rank_error() * read + 1, report.estimate.describe()


def test_equality_and_null_estimates_use_ndv_and_null_counts(sales):
    lab, rows = sales
    one_value = lab.explain("SELECT * FROM sales WHERE u = 42")
    # kept by default, the frequent items count the value itself: 100 values equally often
    assert one_value.estimated_rows == _kept(rows, "u == 42")
    assert "u: 42 among its frequent values (1.0%)" in one_value.estimate.how
    # a value the sketch does not list: what the listed ones leave, over the other distinct values
    other = lab.explain("SELECT * FROM sales WHERE s = 12345")
    assert any(how.startswith("s: not among its 1 frequent values") for how in other.estimate.how)
    assert other.estimated_rows <= 3  # the rows s holds beyond 7 spread over ~65,000 values
    nulls = lab.explain("SELECT * FROM sales WHERE amount IS NULL")
    assert nulls.estimated_rows == int(rows.amount.isna().sum())
    outside = lab.explain("SELECT * FROM sales WHERE u = 1000")
    assert outside.estimated_rows == 0
    everything = lab.explain("SELECT * FROM sales")
    assert everything.estimated_rows == len(rows)


def test_an_unknown_condition_is_named_and_taken_as_a_third(sales):
    lab, rows = sales
    report = lab.explain("SELECT * FROM sales WHERE u + v > 10")
    assert report.estimated_rows == round(len(rows) / 3)
    assert any("taken as 0.33" in how for how in report.estimate.how)


def test_no_estimate_from_statistics_the_reader_cannot_trust(lab):
    lab.set("hive.stats.column.autogather", False)
    lab.sql("CREATE TABLE t (x BIGINT) PARTITIONED BY (ds STRING)")
    lab.tables["t"].write(pd.DataFrame({"x": range(10)}), partition={"ds": "a"})
    report = lab.explain("SELECT * FROM t WHERE x < 5")
    assert report.estimated_rows is None
    assert "no estimate" in report.summary()


def test_the_pruning_view_shows_the_estimate_and_on_request_the_rows_kept(sales):
    lab, rows = sales
    view = lab.views.pruning("SELECT * FROM sales WHERE amount > 40.5")
    assert f"Estimated: about {view.report.estimated_rows:,} rows (amount: KLL CDF)" in view.header.value
    assert "Kept when run" not in view.header.value  # no Spark job until asked
    view.count_button.click()
    assert f"Kept when run: {_kept(rows, 'amount > 40.5'):,} rows" in view.header.value


def test_not_skips_the_nulls_an_all_null_column_keeps_nothing_and_a_function_of_a_key_is_unknown(lab):
    lab.set("hive.stats.kll.enable", True)
    lab.sql("CREATE TABLE n (a BIGINT, e BIGINT) PARTITIONED BY (ds STRING)")
    lab.tables["n"].write(pd.DataFrame({"a": pd.array([None] * 100 + list(range(100)), dtype="Int64"),
                                        "e": pd.array([None] * 200, dtype="Int64")}), partition={"ds": "x"})
    assert lab.explain("SELECT * FROM n WHERE NOT (a < 10)", run=True).estimated_rows == 90  # NULL < 10 is NULL
    assert lab.explain("SELECT * FROM n WHERE a IS NOT NULL").estimated_rows == 100
    assert lab.explain("SELECT * FROM n WHERE e < 5").estimated_rows == 0
    unknown = lab.explain("SELECT * FROM n WHERE upper(ds) = 'X'")  # the pruning cannot decide it
    assert unknown.estimated_rows == round(200 / 3)
    assert unknown.estimate.how == ["UPPER(ds) = 'X' taken as 0.33"]
    assert lab.explain("SELECT * FROM n WHERE ds = 'x'").estimated_rows == 200

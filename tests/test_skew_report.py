"""Skew reports on generated zipf-like data with a planted skewed set per day (the seed's story: about
ten heavy keys among thousands, and the set changes from day to day)."""
from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from colstats_lab.cli import main as cli_main
from colstats_lab.errors import InvalidArgument
from colstats_lab.metastore import NoSuchObjectException
from colstats_lab.metastore.rows.levels import TABLE_LEVEL

HOT = {"2026-11-20": [6, 20, 30, 40], "2026-11-21": [20, 30, 40, 77], "2026-11-22": [20, 30, 77, 91]}
ROWS_PER_DAY = 4000


def _day(ds: str, seed: int) -> pd.DataFrame:
    rnd = random.Random(seed)
    xs, ys = [], []
    for _ in range(ROWS_PER_DAY):
        if rnd.random() < 0.55:  # 55 % of the rows go to the planted values, evenly
            x = rnd.choice(HOT[ds])
        else:  # the rest spread over thousands of values, each far below 2 %
            x = rnd.randint(1000, 6000)
        xs.append(x)
        ys.append("a" if x in (20, 30) else rnd.choice("bcdefgh"))
    return pd.DataFrame({"id": range(ROWS_PER_DAY), "x": xs, "y": ys})


@pytest.fixture(scope="module")
def skewed(spark, tmp_path_factory):
    from colstats_lab import Lab

    lab = Lab(home=str(tmp_path_factory.mktemp("skew")), spark=spark)
    lab.sql("CREATE TABLE events (id BIGINT, x INT, y STRING) PARTITIONED BY (ds STRING)")
    data = {}
    for seed, ds in enumerate(HOT):
        data[ds] = _day(ds, seed)
        lab.tables["events"].write(data[ds], partition={"ds": ds})
    yield lab, data
    lab.close()


def _true_counts(data, ds=None) -> Counter:
    frames = [data[ds]] if ds else list(data.values())
    return Counter(x for frame in frames for x in frame["x"])


def test_exact_mode_finds_exactly_the_planted_heavy_hitters(skewed):
    lab, data = skewed
    report = lab.tables["events"].skew("x", mode="exact", min_share=0.02)
    for ds in HOT:
        found = report.heavy_hitters(f"ds={ds}")
        assert set(found["value"]) == set(HOT[ds])
        truth = _true_counts(data, ds)
        assert all(found["count"] == [truth[v] for v in found["value"]])
        assert all(abs(found["share"] - found["count"] / ROWS_PER_DAY) < 1e-12)
    table = report.heavy_hitters()
    truth = _true_counts(data)
    total = sum(truth.values())
    expected = {v for v, n in truth.items() if n / total >= 0.02}
    assert set(table["value"]) == expected == {6, 20, 30, 40, 77, 91}
    assert list(table["count"]) == sorted(table["count"], reverse=True)
    measures = report.measures().set_index("partition")
    assert measures.loc["ds=2026-11-20", "distinct"] == data["2026-11-20"]["x"].nunique()
    assert measures.loc["ds=2026-11-20", "rows"] == ROWS_PER_DAY


def test_drift_shows_keys_entering_and_leaving(skewed):
    lab, _ = skewed
    drift = lab.tables["events"].skew("x").drift().set_index("partition")
    assert drift.loc["ds=2026-11-21", "entered"] == [77] and drift.loc["ds=2026-11-21", "left"] == [6]
    assert drift.loc["ds=2026-11-22", "entered"] == [91] and drift.loc["ds=2026-11-22", "left"] == [40]
    assert drift.loc["ds=2026-11-21", "overlap"] == pytest.approx(3 / 5)


def test_recommendation_statement_and_scan_fractions(skewed):
    lab, data = skewed
    report = lab.tables["events"].skew("x", min_share=0.05, max_keys=4, max_items=10_000)  # a scan, room for all
    truth = _true_counts(data)
    total = sum(truth.values())
    top4 = [v for v, _ in sorted(truth.items(), key=lambda kv: -kv[1])[:4]]
    assert report.recommended == top4
    assert report.covered_share == pytest.approx(sum(truth[v] for v in top4) / total)
    assert report.statement == f"ALTER TABLE `default`.`events` SKEWED BY (`x`) ON ({', '.join(map(str, top4))}) " \
                               "STORED AS DIRECTORIES"
    fractions = report.scan_fractions()
    assert fractions["with"].iloc[0] == pytest.approx(truth[top4[0]] / total)
    assert fractions["with"].iloc[1] == pytest.approx(1 - report.covered_share)
    assert (fractions["without"] == 1.0).all()


def test_a_report_shows_itself_as_a_summary_and_the_tables_heavy_hitters(skewed):
    """What a notebook cell or a console prints for `lab.tables[name].skew(...)`: one line naming the column, the rows and the
    values to declare, then the table's heavy hitters; never the whole table object."""
    lab, data = skewed
    report = lab.tables["events"].skew("x", mode="exact", min_share=0.05, max_keys=4)
    truth = _true_counts(data)
    total = sum(truth.values())
    top4 = [v for v, _ in sorted(truth.items(), key=lambda kv: -kv[1])[:4]]
    lines = repr(report).splitlines()
    assert lines[0] == (f"Skew of default.events.x (exact, scan): {total:,} rows in 3 partitions; the top 20 values "
                        f"hold {sum(n for _, n in truth.most_common(20)) / total:.1%}; to declare skewed: "
                        f"{', '.join(map(str, top4))} ({sum(truth[v] for v in top4) / total:.1%} of the rows)")
    heavy = [v for v, n in truth.items() if n / total >= 0.05]
    assert len(lines) == 2 + len(heavy) and "FieldSchema" not in repr(report)
    assert report._repr_html_().count("<tr") == 1 + len(heavy)  # the header row, then one a value


def test_multi_column_skew_and_partial_keys(skewed):
    lab, data = skewed
    report = lab.tables["events"].skew(["x", "y"], min_share=0.05)
    values = set(report.heavy_hitters()["value"])
    assert {(20, "a"), (30, "a")} <= values
    assert report.statement.startswith("ALTER TABLE `default`.`events` SKEWED BY (`x`, `y`) ON ((")
    partial = report.partial_key_pruning()
    row = partial[(partial.column == "x") & (partial.value == 20)].iloc[0]
    shares = dict(zip(report.heavy_hitters()["value"].head(report.max_keys), report.heavy_hitters()["share"], strict=True))
    assert row["reads"] == pytest.approx(sum(s for v, s in shares.items() if v[0] == 20) + 1 - report.covered_share)


def test_approximate_mode_meets_its_guarantee(skewed):
    lab, data = skewed
    max_items = 64  # far fewer than the ~4,000 distinct values: the sketch must evict
    report = lab.tables["events"].skew("x", mode="approx", max_items=max_items, min_share=0.02, top=10)
    for ds in HOT:
        truth = _true_counts(data, ds)
        bound = 2.0 * ROWS_PER_DAY / max_items
        found = report.heavy_hitters(f"ds={ds}")
        assert set(HOT[ds]) <= set(found["value"])  # every planted key holds ~14 % >> the bound
        for value, count in zip(found["value"], found["count"], strict=True):
            assert abs(count - truth[value]) <= bound, (ds, value, count, truth[value])


def test_the_approximate_table_level_merges_the_partitions_sketches_within_the_guarantee(skewed):
    lab, data = skewed
    total = len(HOT) * ROWS_PER_DAY
    truth = _true_counts(data)
    evicting = lab.tables["events"].skew("x", mode="approx", max_items=64, min_share=0.02, top=10)
    found = evicting.heavy_hitters(TABLE_LEVEL)
    assert {20, 30, 40, 77} <= set(found["value"])  # in two or three days each: far above the bound
    for value, count in zip(found["value"], found["count"], strict=True):
        assert abs(count - truth[value]) <= 2.0 * total / 64, (value, count, truth[value])
    # with room for every value, each count is exact: an int, a string and a pair of them, against pandas
    rows = pd.concat(data.values())
    for columns in (["x"], ["y"], ["x", "y"]):
        report = lab.tables["events"].skew(columns if len(columns) > 1 else columns[0], mode="approx", top=5,
                                           min_share=0.0, max_items=10_000)  # more than the kept sketches track
        keys = rows[columns[0]] if len(columns) == 1 else pd.Series(list(zip(rows["x"], rows["y"], strict=True)))
        expected = [(v, n) for v, n in _pandas_top(keys, 5)]
        got = list(zip(report.heavy_hitters(TABLE_LEVEL)["value"], report.heavy_hitters(TABLE_LEVEL)["count"], strict=True))
        assert [(tuple(v) if isinstance(v, (list, tuple)) else v, n) for v, n in got] == expected, columns


def test_approximate_counts_of_a_date_a_double_and_a_boolean(lab):
    """Each comes out as pandas counts it; values tied at the k-th count are kept by value, so reports repeat."""
    import datetime

    frame = pd.DataFrame({"d": [datetime.date(2026, 1, 1 + i % 3) for i in range(30)],
                          "f": [0.5 * (i % 4) for i in range(30)], "b": [i % 5 == 0 for i in range(30)]})
    lab.sql("CREATE TABLE typed (d DATE, f DOUBLE, b BOOLEAN) PARTITIONED BY (p STRING)")
    lab.tables["typed"].write(frame.iloc[:12], partition={"p": "one"})
    lab.tables["typed"].write(frame.iloc[12:], partition={"p": "two"})
    for column in ("d", "f", "b"):
        report = lab.tables["typed"].skew(column, mode="approx", top=3, min_share=0.0)
        got = list(zip(report.heavy_hitters(TABLE_LEVEL)["value"], report.heavy_hitters(TABLE_LEVEL)["count"], strict=True))
        assert got == _pandas_top(frame[column], 3), column
        part = list(zip(report.heavy_hitters("p=one")["value"], report.heavy_hitters("p=one")["count"], strict=True))
        assert part == _pandas_top(frame[column].iloc[:12], 3), column


def test_bad_requests_name_the_problem(skewed):
    lab, _ = skewed
    with pytest.raises(NoSuchObjectException, match="column zz does not exist in table default.events"):
        lab.tables["events"].skew("zz")
    for call in (lambda: lab.tables["events"].skew("idd"), lambda: lab.sql("DESCRIBE FORMATTED events idd"),
                 lambda: lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR COLUMNS idd")):
        with pytest.raises(NoSuchObjectException, match=r"column idd does not exist in table default.events; "
                                                        r"did you mean id\?"):
            call()
    with pytest.raises(InvalidArgument, match="ds is a partition key of default.events"):
        lab.tables["events"].skew("ds")
    with pytest.raises(NoSuchObjectException, match="partition ds=2030-01-01 of default.events does not exist"):
        lab.tables["events"].skew("x", partition="ds=2030-01-01")
    with pytest.raises(InvalidArgument, match="mode must be one of exact, approx, not .magic."):
        lab.tables["events"].skew("x", mode="magic")
    with pytest.raises(InvalidArgument, match="top takes at most 100,000 values per partition"):
        lab.tables["events"].skew("x", top=100_001)


def _lower_median(counts) -> int:
    ordered = sorted(counts)
    return ordered[(len(ordered) + 1) // 2 - 1]


def test_exact_measures_and_ties_against_pandas(skewed, spark):
    """Every exact figure recomputed from the rows with pandas: ranks (ties by value), rows, NULLs,
    distinct values and the median frequency, per partition and for the table."""
    lab, data = skewed
    lab.sql("CREATE TABLE ties (x STRING) PARTITIONED BY (ds STRING)")
    rows = {"a": ["q", "p", "r", "q", "p", "r", None, None, None, "s", "t", "t"],
            "b": [None, None], "c": ["z"] * 3 + ["y"] * 3 + ["x"]}
    for ds, xs in rows.items():
        lab.tables["ties"].write(spark.createDataFrame([(x,) for x in xs], "x string"), partition={"ds": ds})
    report = lab.tables["ties"].skew("x", mode="exact", top=3, min_share=0.0)
    every = pd.DataFrame([(ds, x) for ds, xs in rows.items() for x in xs], columns=["ds", "x"])
    measures = report.measures().set_index("partition")
    for part, frame in [(f"ds={ds}", every[every.ds == ds]) for ds in rows] + [("(table)", every)]:
        counts = frame["x"].value_counts()  # NULLs left out, as a skewed value never is NULL
        expected = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        got = report.for_partition(part)
        assert list(zip(got["value"], got["count"], strict=True)) == expected, part
        assert measures.loc[part, "rows"] == len(frame)
        assert measures.loc[part, "nulls"] == frame["x"].isna().sum()
        assert measures.loc[part, "distinct"] == frame["x"].nunique()
        if len(counts):
            assert measures.loc[part, "max_over_median"] == pytest.approx(counts.max() / _lower_median(counts))
        else:
            assert pd.isna(measures.loc[part, "max_over_median"])  # no values, no median
    # events: the median frequency of a day's values, against pandas
    report = lab.tables["events"].skew("x", mode="exact")
    measures = report.measures().set_index("partition")
    counts = data["2026-11-21"]["x"].value_counts()
    assert measures.loc["ds=2026-11-21", "max_over_median"] == pytest.approx(counts.max() / _lower_median(counts))


def test_approximate_rows_and_nulls_equal_pandas_from_footers_or_the_scan(lab, tmp_path):
    """The approximate report takes each partition's rows (and one column's NULLs) from the footers where they
    stand for the rows; a key Spark spells otherwise (hr=01 read as 1), a double's NULLs and the NULL
    partition still come out as pandas counts them."""
    import os

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = str(tmp_path / "ext")
    frames = {}
    for index, (ds, hr) in enumerate([("a", "01"), ("a", "2"), ("b", "01"), ("__HIVE_DEFAULT_PARTITION__", "3")]):
        rnd = np.random.default_rng(index)
        x = pd.array(rnd.integers(0, 5, 200 + 50 * index), dtype="Int64")
        x[rnd.random(len(x)) < 0.1 * index] = pd.NA
        amount = np.where(rnd.random(len(x)) < 0.2, np.nan, rnd.random(len(x)))
        frame = pd.DataFrame({"x": x, "amount": pd.array(amount, dtype="Float64").fillna(pd.NA) if index % 2 else amount})
        os.makedirs(f"{root}/ds={ds}/hr={hr}")
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), f"{root}/ds={ds}/hr={hr}/part.parquet")
        frames[(ds, hr)] = frame
    for key_type in ("string", "int"):
        name = f"ext_{key_type}"
        lab.register_external(name, root, partition_types={"ds": "string", "hr": key_type})
        for column in ("x", "amount"):
            report = lab.tables[name].skew(column, mode="approx", top=3)
            for (ds, hr), frame in frames.items():
                label = f"ds={ds}/hr={int(hr) if key_type == 'int' else hr}"  # Spark reads hr=01 as 1
                assert report.totals[label] == len(frame), (key_type, column, label, report.totals)
                assert report.null_count(label) == int(frame[column].isna().sum()), (key_type, column, label)
            assert report.totals[TABLE_LEVEL] == sum(len(f) for f in frames.values())
            assert report.null_count() == sum(int(f[column].isna().sum()) for f in frames.values())


def _pandas_top(values: pd.Series, k: int) -> list[tuple]:
    return sorted(values.value_counts().items(), key=lambda kv: (-kv[1], kv[0]))[:k]


def test_exact_table_top_values_merged_from_the_partitions_lists_equal_pandas(skewed):
    """The table's exact top k come from the partitions' ranked lists where those prove them (the two values
    hot every day), with an estimated distinct count and no median; where they do not (a value hot one day
    only, absent from another day's list), from every value's count, with the exact distinct count."""
    from colstats_lab.column_statistics.sketches import ndv_relative_error

    lab, data = skewed
    every = pd.concat(list(data.values()))
    for k in (2, 3, 20):
        report = lab.tables["events"].skew("x", mode="exact", top=k, min_share=0.0)
        got = report.for_partition(TABLE_LEVEL)
        assert list(zip(got["value"], got["count"], strict=True)) == _pandas_top(every["x"], k), k
        measures = report.measures().set_index("partition")
        if k == 2:  # 20 and 30 are in every day's list and no other value can reach them
            assert TABLE_LEVEL in report.estimated and bool(measures.loc[TABLE_LEVEL, "distinct_estimated"])
            truth = every["x"].nunique()
            assert abs(measures.loc[TABLE_LEVEL, "distinct"] - truth) <= ndv_relative_error() * truth
            assert pd.isna(measures.loc[TABLE_LEVEL, "max_over_median"])
        else:  # 40 or 77 is missing from a day's list, or the 20th count is within reach of the tail
            assert not report.estimated
            assert measures.loc[TABLE_LEVEL, "distinct"] == every["x"].nunique()
            counts = every["x"].value_counts()
            assert measures.loc[TABLE_LEVEL, "max_over_median"] == pytest.approx(counts.max() / _lower_median(counts))
        for ds in HOT:  # each day keeps its own top k, whatever the table's path
            day = report.for_partition(f"ds={ds}")
            assert list(zip(day["value"], day["count"], strict=True)) == _pandas_top(data[ds]["x"], k)


def test_a_value_below_every_partitions_list_still_tops_the_table(lab, spark):
    """Each day 150 values of its own hold 5 rows and value 0 holds 4: no day lists 0 in its top 100, yet the
    table's top value is 0 with 12 rows; the lists cannot prove otherwise, so the table is counted."""
    lab.sql("CREATE TABLE hidden (x INT) PARTITIONED BY (ds STRING)")
    rows = []
    for day in range(3):
        xs = [0] * 4 + [v for v in range(1000 * (day + 1), 1000 * (day + 1) + 150) for _ in range(5)]
        lab.tables["hidden"].write(spark.createDataFrame([(x,) for x in xs], "x int"), partition={"ds": f"d{day}"})
        rows += [(f"d{day}", x) for x in xs]
    every = pd.DataFrame(rows, columns=["ds", "x"])
    report = lab.tables["hidden"].skew("x", mode="exact", top=3, min_share=0.0)
    got = report.for_partition(TABLE_LEVEL)
    assert list(zip(got["value"], got["count"], strict=True)) == _pandas_top(every["x"], 3) == [(0, 12), (1000, 5), (1001, 5)]
    assert report.measures().set_index("partition").loc[TABLE_LEVEL, "distinct"] == every["x"].nunique()
    assert not report.estimated


def test_values_that_just_pass_the_floor_are_called_flat_not_skewed(lab, spark):
    """Forty values of 2.5 % each: each passes the 2 % floor, but none stands out of the others, so none is
    recommended and the report says the column is flat."""
    lab.sql("CREATE TABLE flat_keys (x INT)")
    lab.tables["flat_keys"].write(spark.createDataFrame([(i % 40,) for i in range(4000)], "x int"))
    report = lab.tables["flat_keys"].skew("x", mode="exact")
    assert report.recommended == [] and report.covered_share == 0
    assert any(n.startswith("No value stands out: the 20 holding 2% or more hold 2.5% to 2.5% each")
               for n in report.notes())
    assert report.statement == "-- no value of `x` stands out: nothing to skew"


@pytest.mark.parametrize("mode", ["exact", "approx"])
def test_only_the_values_that_stand_out_of_the_columns_spread_are_recommended(lab, mode):
    """Eight values near 8 % each and one at 39 %: all nine passed the 2 % floor and all nine were
    recommended; the hot one is what list bucketing pays for."""
    rng = np.random.default_rng(4)
    kinds = np.array(["view", "buy", "cart", "search", "login", "logout", "share", "like"])
    rows = np.where(rng.random(20_000) < 0.39, "click", kinds[rng.integers(0, 8, 20_000)])
    lab.sql("CREATE TABLE clicks (eventType STRING) PARTITIONED BY (d STRING)")
    lab.tables["clicks"].write(pd.DataFrame({"eventType": rows, "d": np.where(np.arange(20_000) % 2, "a", "b")}))
    report = lab.tables["clicks"].skew("eventType", mode=mode)
    counts = pd.Series(rows).value_counts()
    assert report.recommended == ["click"]
    assert report.covered_share == pytest.approx(counts["click"] / len(rows), abs=0.002 if mode == "approx" else 0)
    assert len(report.heavy_hitters()) == 9  # all nine pass the floor
    assert report.statement == "ALTER TABLE `default`.`clicks` SKEWED BY (`eventtype`) ON ('click') STORED AS DIRECTORIES"
    # two hot values of different heat both stand out of the rest
    two = np.where(rng.random(20_000) < 0.3, "a", np.where(rng.random(20_000) < 0.3, "b", kinds[rng.integers(0, 8, 20_000)]))
    lab.sql("CREATE TABLE two (k STRING)")
    lab.tables["two"].write(pd.DataFrame({"k": two}))
    assert lab.tables["two"].skew("k", mode=mode).recommended == ["a", "b"]


def test_the_skew_tab_lists_first_the_column_whose_top_value_holds_most(lab, tmp_path):
    """It listed userId (most distinct values that repeat) before eventType, whose top value holds 39 %."""
    from colstats_lab.workbench.dashboard import TABS, TablePage

    rng = np.random.default_rng(2)
    rows = 30_000
    kinds = np.array(["view", "buy", "cart", "search", "login", "logout", "share", "like"])
    frame = pd.DataFrame({"userId": rng.integers(0, 2_000, rows), "page": rng.integers(0, 50, rows),
                          "eventType": np.where(rng.random(rows) < 0.39, "click", kinds[rng.integers(0, 8, rows)])})
    (tmp_path / "ev").mkdir()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / "ev" / "part-0.parquet")
    lab.register_external("ev", str(tmp_path / "ev"))
    lab.tables["ev"].analyze()
    page = TablePage(lab, "default.ev")
    page.selected_index = TABS.index("Skew")
    assert list(page.column.options)[1] == ("eventType", "eventtype")  # no frequent values kept: 1/NDV ranks it first
    assert frame["eventType"].value_counts(normalize=True).iloc[0] > frame["page"].value_counts(normalize=True).iloc[0]
    lab.sql("ALTER TABLE ev SET TBLPROPERTIES ('colstats.frequent.items.columns'='userId,page,eventType')")
    lab.tables["ev"].analyze()
    top = lab.tables["ev"].inspect.frequent_values("eventType")
    assert top["value"].iloc[0] == "click"
    assert top["share"].iloc[0] == pytest.approx((frame["eventType"] == "click").mean(), abs=0.001)
    page = TablePage(lab, "default.ev")
    page.selected_index = TABS.index("Skew")
    assert list(page.column.options)[1] == ("eventType", "eventtype")


def test_top_is_the_one_spelling_of_how_many_values_a_skew_lists(lab, capsys):
    """The handle took `k=`, the magic `--top` and ColstatsMagics.top: `skew(col, top=3)` was a TypeError."""
    from colstats_lab.deprecated import LabDeprecationWarning

    lab.sql("CREATE TABLE s (v INT)")
    values = [i % 7 for i in range(70)] + [0] * 30
    lab.tables["s"].write(pd.DataFrame({"v": values}))
    report = lab.tables["s"].skew("v", top=3, mode="exact")
    counts = pd.Series(values).value_counts()
    assert report.top == 3 and list(report.for_partition()["count"]) == list(counts.head(3))
    with pytest.warns(LabDeprecationWarning, match=r"skew\(k=...\) is deprecated .* use top="):
        assert lab.tables["s"].skew("v", k=2, mode="exact").top == 2
    assert cli_main(["--home", lab.home, "skew", "s", "v", "--top", "2", "--mode", "exact"]) == 0
    assert lab.views.skew("s", "v", top=2, mode="exact").rows["count"].tolist() == list(counts.head(2))

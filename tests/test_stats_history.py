"""Statistics over time: every stored state of a column's statistics is kept (with its sketches), none
from an aborted transaction; `compare` measures drift between two states from statistics alone, checked
against the same measures computed with pandas over the two snapshots' rows."""
from __future__ import annotations

import math
import os
import time
from itertools import pairwise

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metastore_rows import connect

from colstats_lab.column_statistics import drift
from colstats_lab.column_statistics.quantiles import Distribution, rank_error
from colstats_lab.column_statistics.sketches import ndv_relative_error
from colstats_lab.metastore.rows.levels import TABLE_LEVEL

pytestmark = pytest.mark.both_backends  # a metastore behaviour: on SQLite and on PostgreSQL


def _figures(values: pd.Series) -> dict:
    present = values.dropna()
    return {"rows": len(values), "nulls": int(values.isna().sum()),
            "min": None if present.empty else int(present.min()), "max": None if present.empty else int(present.max())}


def _states(lab, partition):
    return [(s.rows, s.stats.statsData.value.numNulls, s.stats.statsData.value.lowValue,
             s.stats.statsData.value.highValue) for _, s in lab.metastore.stats_history.get_stats_history("default", "t",
                                                                                                          "x", partition)]


def _as_tuple(f: dict) -> tuple:
    return f["rows"], f["nulls"], f["min"], f["max"]


def test_each_committed_state_is_kept_with_its_writer_and_an_aborted_one_is_not(lab):
    lab.sql("CREATE TABLE t (x BIGINT) PARTITIONED BY (ds STRING)")
    first = pd.Series([1, 2, None, 4], dtype="Int64")
    lab.tables["t"].write(pd.DataFrame({"x": first}), partition={"ds": "a"})
    more = pd.Series([10, None], dtype="Int64")
    lab.tables["t"].write(pd.DataFrame({"x": more}), partition={"ds": "a"})
    with pytest.raises(RuntimeError):
        with lab.transaction() as txn:
            lab.tables["t"].write(pd.DataFrame({"x": pd.Series([99], dtype="Int64")}), partition={"ds": "a"}, txn=txn)
            raise RuntimeError("the job failed after writing")
    lab.sql("ANALYZE TABLE t PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS")
    replaced = pd.Series([-5, None, None], dtype="Int64")
    lab.tables["t"].write(pd.DataFrame({"x": replaced}), partition={"ds": "a"}, mode="overwrite")

    both = pd.concat([first, more], ignore_index=True)
    # the ANALYZE found what the second write's gathering had kept: no second copy, the kept one confirmed
    expected = [_figures(first), _figures(both), _figures(replaced)]
    assert _states(lab, "ds=a") == [_as_tuple(f) for f in expected]
    assert _states(lab, None) == [_as_tuple(f) for f in expected]  # the table level holds the one partition

    kept = lab.metastore.stats_history.get_stats_history("default", "t", "x", "ds=a")
    assert [s.write_id for _, s in kept] == [1, 2, 5]  # write 3 was the aborted one's, 4 the ANALYZE's
    assert [s.cause.split()[0] for _, s in kept] == ["append", "append", "overwrite"]
    assert kept[1][1].confirmed_at is not None and kept[0][1].confirmed_at is None
    history = lab.tables["t"].inspect.history("x", partition="ds=a")
    assert list(history["rows"]) == [4, 6, 3] and list(history["nulls"]) == [1, 2, 2]
    assert list(history["null_fraction"]) == [0.25, 2 / 6, 2 / 3]


def test_retention_keeps_the_last_states_and_a_dropped_partition_takes_its_history(lab):
    lab.sql("CREATE TABLE t (x BIGINT) PARTITIONED BY (ds STRING)")
    for day in ("a", "b"):
        for value in range(4):
            lab.tables["t"].write(pd.DataFrame({"x": [value]}), partition={"ds": day})
    assert len(_states(lab, "ds=a")) == 4
    lab.set("colstats.history.keep", 2)
    lab.clean()
    assert [s[2:] for s in _states(lab, "ds=a")] == [(0, 2), (0, 3)]  # the last two: min and max
    lab.sql("ALTER TABLE t DROP PARTITION (ds='a')")
    with connect(lab.metastore.url) as conn:
        left = conn.execute("SELECT DISTINCT PART_NAME FROM COL_STATS_HISTORY WHERE PART_NAME IS NOT NULL").fetchall()
    assert left == [("ds=b",)]
    lab.sql("DROP TABLE t")
    with connect(lab.metastore.url) as conn:
        assert conn.execute("SELECT count(*) FROM COL_STATS_HISTORY").fetchone()[0] == 0


def _pandas_psi(then: np.ndarray, now: np.ndarray, edges: list) -> float:
    """PSI over the same bins, from the rows themselves."""
    def shares(values):
        cuts = [0, *(np.searchsorted(np.sort(values), e, side="left") for e in edges), len(values)]
        return [(b - a) / len(values) for a, b in pairwise(cuts)]
    return drift.psi(shares(then), shares(now))


def test_compare_gives_what_pandas_says_changed_between_two_snapshots(lab):
    lab.set("hive.stats.kll.enable", True)
    lab.sql("CREATE TABLE t (x BIGINT, amount DOUBLE) PARTITIONED BY (ds STRING)")
    rng = np.random.default_rng(5)
    before = pd.DataFrame({"x": pd.array(rng.integers(0, 3000, 4000), dtype="Int64"),
                           "amount": rng.normal(100, 10, 4000)})
    before.loc[::20, "x"] = pd.NA
    lab.tables["t"].write(before, partition={"ds": "a"})
    after = pd.DataFrame({"x": pd.array(rng.integers(0, 6000, 4000), dtype="Int64"),
                          "amount": rng.normal(110, 10, 4000)})  # a shift of one standard deviation
    after.loc[::5, "x"] = pd.NA
    lab.tables["t"].write(after, partition={"ds": "a"}, mode="overwrite")

    changes = lab.tables["t"].inspect.compare(then=1)
    row = changes[(changes.partition == "ds=a") & (changes.column == "x")].iloc[0]
    assert (row.write_id_then, row.write_id_now) == (1, 2)
    assert row.null_fraction_then == before.x.isna().mean() and row.null_fraction_now == after.x.isna().mean()
    assert row.null_fraction_change == pytest.approx(after.x.isna().mean() - before.x.isna().mean())
    exact_change = after.x.nunique() / before.x.nunique() - 1
    assert abs(row.ndv_change - exact_change) <= 3 * ndv_relative_error() * (1 + exact_change)
    assert row.max_now == after.x.max() and bool(row.new_max) and not bool(row.new_min)

    amount = changes[(changes.partition == "ds=a") & (changes.column == "amount")].iloc[0]
    then_sketch = Distribution.of(lab.metastore.stats_history.get_stats_history("default", "t", "amount", "ds=a")[0][1]
                                  .stats.statsData.value.histogram, "double")
    exact = _pandas_psi(before.amount.to_numpy(), after.amount.to_numpy(), drift.bin_edges(then_sketch))
    assert exact > 0.25  # a shift a person should hear of
    # each of the 20 shares is within twice the rank error; PSI moves by at most that times its slope
    assert abs(amount.psi - exact) <= 0.15 * exact
    same = lab.tables["t"].inspect.compare(then=1, now=1)
    assert (same.psi.dropna() == 0).all() and (same.null_fraction_change == 0).all()
    with pytest.raises(Exception, match="write ID"):
        lab.tables["t"].inspect.compare(then=1.5)


@st.composite
def _operations(draw):
    ops = []
    for _ in range(draw(st.integers(2, 5))):
        kind = draw(st.sampled_from(["append", "overwrite", "analyze", "aborted"]))
        day = draw(st.sampled_from(["a", "b"]))
        values = draw(st.lists(st.one_of(st.none(), st.integers(-50, 50)), min_size=1, max_size=6))
        ops.append((kind, day, values))
    return ops


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_operations())
def test_the_history_is_what_a_model_of_the_commits_predicts(tmp_path_factory, spark, ops):
    from colstats_lab import Lab

    lab = Lab(home=str(tmp_path_factory.mktemp("history")), spark=spark)
    try:
        lab.sql("CREATE TABLE t (x BIGINT) PARTITIONED BY (ds STRING)")
        rows: dict[str, pd.Series] = {}
        expected: dict[str, list] = {"a": [], "b": []}
        last_key: dict[str, tuple] = {}

        def keep(day: str) -> None:
            """A state is kept unless it equals the day's previous one: the same rows, figures and distinct
            values (hence the same sketch)."""
            key = (_as_tuple(_figures(rows[day])), frozenset(rows[day].dropna()))
            if last_key.get(day) != key:
                expected[day].append(key[0])
                last_key[day] = key
        for kind, day, values in ops:
            batch = pd.Series(values, dtype="Int64")
            if kind == "analyze":
                lab.sql("ANALYZE TABLE t PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS")
                for known in rows:
                    keep(known)
            elif kind == "aborted":
                with pytest.raises(RuntimeError):
                    with lab.transaction() as txn:
                        lab.tables["t"].write(pd.DataFrame({"x": batch}), partition={"ds": day}, txn=txn)
                        raise RuntimeError("aborted")
            else:
                lab.tables["t"].write(pd.DataFrame({"x": batch}), partition={"ds": day}, mode=kind)
                rows[day] = batch if kind == "overwrite" or day not in rows else \
                    pd.concat([rows[day], batch], ignore_index=True)
                keep(day)
        for day in ("a", "b"):
            if day in rows:
                assert _states(lab, f"ds={day}") == expected[day], (day, ops)
        if rows:
            everything = pd.concat(list(rows.values()), ignore_index=True)
            assert _states(lab, None)[-1] == _as_tuple(_figures(everything))
    finally:
        lab.close()


def test_psi_of_identical_shares_is_zero_and_grows_with_the_shift():
    same = [0.1] * 10
    assert drift.psi(same, same) == 0
    assert drift.psi(same, [0.2, 0.0] * 5) > drift.psi(same, [0.12, 0.08] * 5) > 0
    assert math.isfinite(drift.psi(same, [1.0] + [0.0] * 9))
    assert rank_error() < 0.02


def test_describe_as_of_a_write_or_a_time_answers_from_the_state_kept_then(lab):
    lab.set("hive.stats.kll.enable", True)
    lab.sql("CREATE TABLE t (x BIGINT) PARTITIONED BY (ds STRING)")
    lab.tables["t"].write(pd.DataFrame({"x": [1, 2, 3, 4]}), partition={"ds": "a"})
    stored_first = lab.tables["t"].inspect.history("x", partition="ds=a").recorded_at.iloc[0]
    time.sleep(1.1)  # states are timed to the second
    lab.tables["t"].write(pd.DataFrame({"x": [50, None]}), partition={"ds": "a"})

    def described(as_of, partition=True):
        text = "DESCRIBE FORMATTED t PARTITION (ds='a') x" if partition else "DESCRIBE FORMATTED t x"
        frame = lab.sql(text, as_of=as_of).df
        return dict(zip(frame.info_name, frame.info_value, strict=True))

    then = described(1)
    assert (then["max"], then["num_nulls"], then["histogram"]) == ("4", "0", "Q1: 2, Q2: 3, Q3: 4")
    assert "write ID 1" in then["as_of"] and then["COLUMN_STATS_ACCURATE"] == ""
    now = described(2, partition=False)
    assert (now["max"], now["num_nulls"]) == ("50", "1")
    assert described(stored_first.to_pydatetime())["max"] == "4"  # a time as well as a write ID
    assert described(stored_first.isoformat())["max"] == "4"
    assert "no statistics of x kept" in described(0)["as_of"]
    with pytest.raises(Exception, match="as_of answers DESCRIBE"):
        lab.sql("SHOW TABLES", as_of=1)


def test_rules_fire_exactly_when_the_figures_cross_their_thresholds_and_are_checked_at_each_commit(lab):
    from colstats_lab import InvalidArgument

    lab.set("hive.stats.kll.enable", True)
    lab.sql("CREATE TABLE t (x BIGINT) PARTITIONED BY (ds STRING)")
    rng = np.random.default_rng(9)
    days = {"a": pd.Series(rng.integers(0, 1000, 2000), dtype="Int64"),
            "b": pd.Series(rng.integers(0, 1000, 2000), dtype="Int64")}
    days["a"][:100] = pd.NA  # 5 % nulls
    days["b"][:300] = pd.NA  # 15 % nulls
    for day, values in days.items():
        lab.tables["t"].write(pd.DataFrame({"x": values}), partition={"ds": day})
    outcomes = lab.tables["t"].expect("x", nulls_below=0.10, max_at_most=998)
    by_cell = {(r.partition, r.rule): r for r in outcomes.itertuples()}
    assert bool(by_cell[("ds=a", "nulls_below")].passed) and not by_cell[("ds=b", "nulls_below")].passed
    assert float(by_cell[("ds=b", "nulls_below")].figure) == days["b"].isna().mean()
    assert by_cell[("ds=a", "max_at_most")].passed == (days["a"].max() <= 998)
    assert (None, "nulls_below") in by_cell  # the table level too: 10 % nulls, not below 0.10
    assert not by_cell[(None, "nulls_below")].passed

    lab.tables["t"].expect("x", psi_below=0.2)
    shifted = pd.Series(rng.integers(500, 1500, 2000), dtype="Int64")  # half the values above a's range
    lab.tables["t"].write(pd.DataFrame({"x": shifted}), partition={"ds": "c"})  # checked in the commit itself
    with pytest.raises(RuntimeError):
        with lab.transaction() as txn:
            lab.tables["t"].write(pd.DataFrame({"x": shifted}), partition={"ds": "d"}, txn=txn)
            raise RuntimeError("aborted")
    results = lab.tables["t"].inspect.expectations()
    assert "ds=d" not in set(results.partition)  # the aborted write stored no state to check
    new_day = results[(results.partition == "ds=c")]
    psi = new_day[new_day.rule == "psi_below"].iloc[0]  # against ds=b, the partition before it
    assert not psi.passed and float(psi.figure) > 0.2
    assert bool(new_day[new_day.rule == "nulls_below"].iloc[0].passed)

    with pytest.raises(InvalidArgument, match="nulls_above is not a rule"):
        lab.tables["t"].expect("x", nulls_above=0.1)
    with pytest.raises(InvalidArgument, match="ndv_between"):
        lab.tables["t"].expect("x", ndv_between=(10, 5))
    with pytest.raises(InvalidArgument, match="max_at_most 'abc'"):
        lab.tables["t"].expect("x", max_at_most="abc")


def test_drift_shows_the_kept_states_as_timelines_with_the_rules_outcomes(lab):
    from IPython.core.error import UsageError
    from IPython.core.interactiveshell import InteractiveShell

    lab.set("hive.stats.kll.enable", True)
    lab.sql("CREATE TABLE t (x BIGINT) PARTITIONED BY (ds STRING)")
    for values in ([1, 2, None, 4], [5, 6, 7, None, None]):
        lab.tables["t"].write(pd.DataFrame({"x": pd.Series(values, dtype="Int64")}), partition={"ds": "a"})
    lab.tables["t"].expect("x", nulls_below=0.3)
    ip = InteractiveShell.instance()
    ip.user_ns["lab"] = lab
    ip.run_line_magic("load_ext", "colstats_lab")
    view = ip.run_line_magic("drift", "t.x --lab lab --partition ds=a")
    assert list(view.result["null_fraction"]) == [0.25, 3 / 9]  # the states kept, as the timeline draws them
    nulls, ndv, median = view.figure.data[:3]
    assert list(nulls.y) == [0.25, 3 / 9] and list(ndv.y) == [3, 6]
    shift = view.figure.data[-1]  # the second state's PSI against the first, as compare measures it
    measured = lab.tables["t"].inspect.compare(then=1).query("partition == 'ds=a'").psi.iloc[0]
    assert shift.name == "PSI" and list(shift.y) == [pytest.approx(measured)] and measured > 0.25
    assert "FAIL" in view.rules_html.value and "0.3" in view.rules_html.value  # 3/9 nulls is not below 0.3
    view.picker.dropdown.value = TABLE_LEVEL
    assert "whole table" in view.header.value and len(view.result) == 2
    assert "whole table" in ip.run_line_magic("drift", "t.x --lab lab --over-time").header.value
    with pytest.raises(UsageError, match="column nope does not exist"):
        ip.run_line_magic("drift", "t.nope --lab lab")
    ip.user_ns.pop("_", None)


def test_heavy_hitters_entering_and_leaving_are_read_off_the_two_sketches():
    from colstats_lab.column_statistics.model import ColumnStatisticsData, ColumnStatisticsObj, LongColumnStatsData
    from colstats_lab.column_statistics.quantiles import SketchFamily, dump, new_sketch

    def state(values):
        sketch = new_sketch(SketchFamily.BIGINT)
        for v in values:
            sketch.update(int(v))
        data = LongColumnStatsData(int(min(values)), int(max(values)), 0, len(set(values)),
                                   histogram=dump(sketch, SketchFamily.BIGINT))
        return ColumnStatisticsObj("x", "bigint", ColumnStatisticsData.of(data))

    rng = np.random.default_rng(3)
    then = np.concatenate([np.full(3000, 7), rng.integers(100, 100_000, 7000)])  # 7 holds 30 %
    now = np.concatenate([np.full(2000, 9), np.full(200, 7), rng.integers(100, 100_000, 7800)])  # 9: 20 %, 7: 2 %
    change = drift.compare(state(then), len(then), state(now), len(now))
    assert change.hitters_entering == (9,) and change.hitters_leaving == (7,)
    assert drift.compare(state(then), len(then), state(then), len(then)).hitters_entering == ()


@pytest.mark.slow  # the full lane: seconds of Spark work the fast lane's budget has no room for
def test_each_refresh_metadata_keeps_the_table_and_partition_figures_as_metadata_states(lab):
    lab.sql("CREATE TABLE t (x BIGINT, s STRING) PARTITIONED BY (ds STRING)")
    day_a = pd.DataFrame({"x": pd.Series([3, None, 7], dtype="Int64"), "s": ["p", None, "q"]})
    day_b = pd.DataFrame({"x": pd.Series([50, 60], dtype="Int64"), "s": ["r", "r"]})
    lab.tables["t"].write(day_a, partition={"ds": "a"})
    lab.sql("SET metastore.enabled = true")
    lab.sql("ANALYZE TABLE t REFRESH METADATA 'partition' LEVEL")
    time.sleep(1.1)  # states are stamped to the second: `then` below must pick the first refresh's
    lab.tables["t"].write(day_b, partition={"ds": "b"})
    lab.sql("ANALYZE TABLE t REFRESH METADATA 'partition' LEVEL")

    statistics_before = len(lab.tables["t"].inspect.history("x"))
    table = lab.tables["t"].inspect.history("x", source="metadata")
    both = pd.concat([day_a, day_b], ignore_index=True)
    assert [_as_tuple(f) for f in (_figures(day_a["x"]), _figures(both["x"]))] == \
        list(zip(table["rows"], table["nulls"], table["min"], table["max"], strict=True))
    assert all(cause.startswith("replace the metadata of default.t") for cause in table["cause"])
    assert list(lab.tables["t"].inspect.history("s", source="metadata")["nulls"]) == [1, 1]
    day = lab.tables["t"].inspect.history("x", partition="ds=a", source="metadata")
    assert list(zip(day["rows"], day["min"], day["max"], strict=True)) == [(3, 3, 7)]  # refreshed, unchanged: kept once
    assert len(lab.tables["t"].inspect.history("x")) == statistics_before  # the statistics' own history is apart

    change = lab.tables["t"].inspect.compare(then=table["recorded_at"].iloc[0].to_pydatetime(), source="metadata")
    level = change[change["partition"].isna() & (change["column"] == "x")].iloc[0]
    assert (level["rows_then"], level["rows_now"], level["max_then"], level["max_now"], level["new_max"]) == \
        (3, 5, 7, 60, True)
    with pytest.raises(Exception, match="source 'drill' is not one of statistics, metadata"):
        lab.tables["t"].inspect.history("x", source="drill")


def _top_psi(before: pd.Series, after: pd.Series, k: int) -> float:
    """PSI over the earlier rows' k most frequent values and one bin for the rest, from the rows alone."""
    then = before.value_counts().head(k) / before.count()
    now = after.value_counts().head(k) / after.count()
    expected = [*then, 1 - then.sum()]
    actual = [now.get(v, 0.0) for v in then.index] + [1 - sum(now.get(v, 0.0) for v in then.index)]
    return sum((max(a, 1e-4) - max(e, 1e-4)) * math.log(max(a, 1e-4) / max(e, 1e-4))
               for e, a in zip(expected, actual, strict=True))


@pytest.mark.slow  # the full lane: seconds of Spark work the fast lane's budget has no room for
def test_a_skew_report_keeps_top_values_on_fresh_states_and_compare_measures_strings_by_them(lab):
    lab.sql("CREATE TABLE t (s STRING) PARTITIONED BY (ds STRING)")
    rng = np.random.default_rng(11)
    before = pd.Series(rng.choice(["red", "green", "blue", "grey"], 3000, p=[0.4, 0.3, 0.2, 0.1]), dtype=object)
    before[::10] = None
    lab.tables["t"].write(pd.DataFrame({"s": before}), partition={"ds": "a"})
    lab.tables["t"].skew("s", mode="exact", top=5)
    lab.tables["t"].expect("s", psi_below=0.2)
    after = pd.Series(rng.choice(["red", "green", "blue", "pink"], 3000, p=[0.1, 0.3, 0.2, 0.4]), dtype=object)
    lab.tables["t"].write(pd.DataFrame({"s": after}), partition={"ds": "a"}, mode="overwrite")
    lab.tables["t"].skew("s", mode="exact", top=5)

    kept = lab.tables["t"].inspect.history("s", partition="ds=a")
    counted = before.value_counts().head(5)
    assert kept["top_values"].iloc[0] == [(value, int(count)) for value, count in counted.items()]
    assert kept["top_values"].iloc[1][0] == ("pink", int((after == "pink").sum()))
    assert kept["psi"].iloc[0] is None and kept["psi"].iloc[1] == pytest.approx(_top_psi(before.dropna(), after, 5))
    change = lab.tables["t"].inspect.compare(then=1)
    day = change[change.partition == "ds=a"].iloc[0]
    assert day.psi == pytest.approx(_top_psi(before.dropna(), after, 5))
    assert day.hitters_entering == ["pink"] and day.hitters_leaving == ["grey"]
    level = change[change.partition.isna()].iloc[0]
    assert level.psi == pytest.approx(day.psi)  # one partition: the table level counted the same rows
    # the rule could not be checked at the overwrite's commit (no top values yet): the report checked it
    outcome = lab.tables["t"].inspect.expectations().query("partition == 'ds=a' and rule == 'psi_below'")
    assert list(outcome.passed) == [False] and float(outcome.figure.iloc[0]) == pytest.approx(day.psi, rel=1e-3)

    lab.set("hive.stats.column.autogather", False)
    lab.tables["t"].write(pd.DataFrame({"s": ["red"] * 5}), partition={"ds": "a"})  # the statistics go stale
    lab.tables["t"].skew("s", mode="exact", top=5)
    assert lab.tables["t"].inspect.history("s", partition="ds=a")["top_values"].iloc[-1][0][0] == "pink"  # not the stale one's


def test_heavy_hitters_are_not_guessed_from_a_top_list_that_ends_above_their_share():
    from colstats_lab.column_statistics.frequent_items import TopValues

    short = TopValues((("a", 50), ("b", 40)), rows=100, nulls=0, mode="exact", k=2)  # a third value may hold 10 %
    assert drift.top_value_hitters(short, "string") is None
    complete = TopValues((("a", 50), ("b", 46), ("c", 4)), rows=100, nulls=0, mode="exact", k=3)
    assert drift.top_value_hitters(complete, "string") == {"a": 0.5, "b": 0.46}
    assert drift.top_values_psi(complete, complete) == 0


@pytest.mark.slow  # the full lane: seconds of Spark work the fast lane's budget has no room for
def test_across_partitions_shows_each_days_latest_state_against_the_day_before(lab):
    from IPython.core.interactiveshell import InteractiveShell

    lab.set("hive.stats.kll.enable", True)
    lab.sql("CREATE TABLE t (x BIGINT) PARTITIONED BY (ds STRING)")
    rng = np.random.default_rng(3)
    days = {"ds=2026-11-01": rng.integers(0, 1000, 2000), "ds=2026-11-02": rng.integers(0, 1000, 2000),
            "ds=2026-11-03": rng.integers(500, 1500, 2000)}  # the third day moved up by half its range
    for name, values in days.items():
        lab.tables["t"].write(pd.DataFrame({"x": values}), partition={"ds": name.split("=")[1]})
    lab.tables["t"].write(pd.DataFrame({"x": [5000]}), partition={"ds": "2026-11-01"})  # a later state of day one

    across = lab.tables["t"].inspect.across_partitions("x")
    assert list(across["partition"]) == list(days)
    first = np.append(days["ds=2026-11-01"], 5000)
    assert (across["rows"].iloc[0], across["max"].iloc[0]) == (len(first), 5000)  # its latest state
    assert list(across["min"]) == [int(first.min()), int(days["ds=2026-11-02"].min()),
                                   int(days["ds=2026-11-03"].min())]
    assert across["psi"].iloc[0] is None and across["psi"].iloc[1] < 0.1 < 0.25 < across["psi"].iloc[2]
    assert list(lab.tables["t"].inspect.across_partitions("x", limit=2)["partition"]) == list(days)[1:]
    assert list(across["accurate"]) == [True, True, True]
    lab.set("hive.stats.column.autogather", False)
    lab.tables["t"].write(pd.DataFrame({"x": [7]}), partition={"ds": "2026-11-02"})  # its state no longer describes it
    lab.set("hive.stats.column.autogather", True)
    stale = lab.tables["t"].inspect.across_partitions("x")
    assert list(stale["accurate"]) == [True, False, True] and "write" in stale["reason"].iloc[1]

    ip = InteractiveShell.instance()
    ip.user_ns["lab"] = lab
    ip.run_line_magic("load_ext", "colstats_lab")
    view = ip.run_line_magic("drift", "t.x --lab lab")  # a partitioned table: across its partitions first
    assert "across partitions" in view.header.value and list(view.figure.data[0].x) == list(days)
    assert "1 not accurate now" in view.header.value
    assert list(view.figure.data[0].marker.symbol) == ["circle", "circle-open", "circle"]
    with pytest.raises(Exception, match="is not partitioned"):
        lab.sql("CREATE TABLE flat (x BIGINT)")
        lab.tables["flat"].inspect.across_partitions("x")
    ip.user_ns.pop("_", None)


def test_the_latest_states_keep_their_sketches_and_drift_on_older_ones_stays_what_it_was(lab):
    """Sketches are kept for the latest `colstats.history.sketches` states of a cell; an older state keeps its
    quartiles and its shares of its decile edges, so its PSI against the next state and its quartiles read
    the same after its sketches went as before."""
    lab.set("hive.stats.kll.enable", True)
    lab.set("colstats.history.sketches", 2)
    lab.sql("CREATE TABLE k (x BIGINT) PARTITIONED BY (ds STRING)")
    seen = []  # each state's psi against the one before and its quartiles, read while both had sketches
    for step in range(5):
        values = pd.Series([(i * (step + 3)) % (50 + 40 * step) for i in range(600)], dtype="Int64")
        lab.tables["k"].write(pd.DataFrame({"x": values}), partition={"ds": "a"}, mode="overwrite")
        history = lab.tables["k"].inspect.history("x", partition="ds=a")
        seen.append(tuple(history.iloc[-1][["psi", "q1", "median", "q3"]]))
    history = lab.tables["k"].inspect.history("x", partition="ds=a")
    assert [tuple(r) for r in history[["psi", "q1", "median", "q3"]].itertuples(index=False)] == seen
    kept = lab.metastore.stats_history.get_stats_history("default", "k", "x", "ds=a")
    with_sketches = [s.stats.statsData.value.histogram is not None for _, s in kept]
    assert with_sketches == [False, False, False, True, True]
    assert all(s.quantiles is not None for _, s in kept[:3]) and all(s.quantiles is None for _, s in kept[3:])

    lab.set("colstats.history.sketches", 1)  # lowered: the states past the latest one are thinned at once
    kept = lab.metastore.stats_history.get_stats_history("default", "k", "x", "ds=a")
    assert [s.stats.statsData.value.histogram is not None for _, s in kept] == [False, False, False, False, True]
    assert [tuple(r) for r in lab.tables["k"].inspect.history("x", partition="ds=a")[["psi", "q1", "median", "q3"]]
            .itertuples(index=False)] == seen
    lab.tables["k"].write(pd.DataFrame({"x": pd.Series(range(300), dtype="Int64")}), partition={"ds": "a"}, mode="overwrite")
    kept = lab.metastore.stats_history.get_stats_history("default", "k", "x", "ds=a")
    assert [s.stats.statsData.value.histogram is not None for _, s in kept] == [False] * 5 + [True]


def test_history_can_be_turned_off_and_bounded_in_bytes(lab):
    lab.sql("CREATE TABLE b (x BIGINT, s STRING) PARTITIONED BY (ds STRING)")
    for day in range(6):
        frame = pd.DataFrame({"x": pd.Series(range(day * 100, day * 100 + 300), dtype="Int64"),
                              "s": [f"v{i % (day + 5)}" for i in range(300)]})
        lab.tables["b"].write(frame, partition={"ds": f"d{day % 2}"})
    states = len(lab.metastore.stats_history.get_stats_history("default", "b", None, False))
    lab.set("colstats.history.enabled", False)  # a backfill: statistics stored, no history kept
    lab.tables["b"].write(pd.DataFrame({"x": pd.Series([7], dtype="Int64"), "s": ["new"]}), partition={"ds": "d0"})
    assert len(lab.metastore.stats_history.get_stats_history("default", "b", None, False)) == states
    assert lab.tables["b"].inspect.stats().query("partition == 'ds=d0' and column == 'x'").rows.iloc[0] == 901
    lab.set("colstats.history.enabled", True)

    def on_disk() -> int:  # a SQLite file and its write-ahead log (a server's VACUUM keeps its files for reuse)
        path = lab.metastore.db.path
        return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p)) if path else 0
    size_before = on_disk()
    budget = lab.metastore.stats_history.history_bytes() // 3
    lab.clean(max_bytes=budget)
    kept = lab.metastore.stats_history.get_stats_history("default", "b", None, False)
    latest = {(owner, s.stats.colName) for owner, s in kept}
    assert lab.metastore.stats_history.history_bytes() <= budget or len(kept) == len(latest)  # a cell's latest always stays
    assert len(kept) < states and latest == {(o, c) for o in (None, "ds=d0", "ds=d1") for c in ("x", "s")}
    assert on_disk() < size_before or lab.metastore.db.path is None  # compacted: the space went back to the disk

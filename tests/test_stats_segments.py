"""Table-level statistics through segments of partitions equal a flat merge of every partition, after
any sequence of partition writes, ANALYZEs, overwrites and drops (a real SQLite metastore)."""
from __future__ import annotations

import datetime as dt
import math
import sqlite3

import pytest
from datasketches import hll_sketch, tgt_hll_type
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metastore_rows import connect

from colstats_lab.column_statistics.merge import merge_stats_column
from colstats_lab.column_statistics.sketches import estimate, ndv_relative_error
from colstats_lab.metastore import (
    BooleanColumnStatsData,
    ColumnStatistics,
    ColumnStatisticsData,
    ColumnStatisticsDesc,
    ColumnStatisticsObj,
    DecimalColumnStatsData,
    DoubleColumnStatsData,
    FieldSchema,
    LongColumnStatsData,
    Metastore,
    Partition,
    StringColumnStatsData,
    Table,
    Timestamp,
    TimestampColumnStatsData,
)
from colstats_lab.metastore.changes import merge_table_level
from colstats_lab.metastore.rows import hive_rows

pytestmark = pytest.mark.both_backends  # a metastore behaviour: on SQLite and on PostgreSQL

COLUMNS = [("n", "bigint"), ("d", "double"), ("s", "string"), ("b", "boolean"), ("p", "decimal(20,4)"),
           ("t", "timestamp")]

_sketch_values = st.lists(st.integers(0, 3_000), max_size=40)
_partition_values = st.fixed_dictionaries({
    "n": st.lists(st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)), min_size=1, max_size=6),
    "d": st.lists(st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)), min_size=1, max_size=6),
    "s": st.lists(st.one_of(st.none(), st.text(max_size=7)), min_size=1, max_size=6),
    "b": st.lists(st.one_of(st.none(), st.booleans()), min_size=1, max_size=6),
    "p": st.lists(st.one_of(st.none(), st.decimals(-10**15, 10**15, places=4, allow_nan=False)), min_size=1,
                  max_size=6),
    "t": st.lists(st.one_of(st.none(), st.integers(-62_135_596_800_000_000, 253_402_300_799_999_999)),  # Spark's range
                  min_size=1, max_size=6),
})
_operation = st.one_of(
    st.tuples(st.just("write"), st.integers(0, 11), st.integers(0, 50)),
    st.tuples(st.just("analyze"), st.integers(0, 11), _partition_values, st.sets(st.sampled_from([c for c, _ in COLUMNS]),
                                                                                min_size=1), st.booleans(),
              _sketch_values),
    st.tuples(st.just("drop"), st.integers(0, 11)),
    st.tuples(st.just("forget"), st.integers(0, 11), st.sampled_from([c for c, _ in COLUMNS])),
    st.tuples(st.just("merge"),),
    st.tuples(st.just("flags"), st.integers(0, 11), st.sampled_from([None, '{"BASIC_STATS":"true"}', "TRUE"])),
    st.tuples(st.just("writer"), st.integers(0, 11), st.integers(0, 5)),
    st.tuples(st.just("read"),),
)


def _sketch(values) -> bytes | None:
    if not values:
        return None
    sketch = hll_sketch(12, tgt_hll_type.HLL_8)
    for value in values:
        sketch.update(value)
    return sketch.serialize_compact()


def _stats_of(name: str, values: list, sketch: bytes | None, keep_sketch: bool) -> ColumnStatisticsObj:
    """A partition's statistics of one column, computed here from its values."""
    present = [v for v in values if v is not None]
    nulls = len(values) - len(present)
    ndv = len(set(present))
    bits = sketch if keep_sketch else None
    if name == "n":
        data = LongColumnStatsData(min(present, default=None), max(present, default=None), nulls, ndv, bits)
    elif name == "d":
        order = lambda v: (1, 0.0) if math.isnan(v) else (0, v)  # noqa: E731 (Spark orders NaN above all)
        data = DoubleColumnStatsData(min(present, key=order, default=None), max(present, key=order, default=None),
                                     nulls, ndv, bits)
    elif name == "s":
        lengths = [len(v) for v in present]
        data = StringColumnStatsData(max(lengths, default=0), sum(lengths) / len(values), nulls, ndv, bits)
    elif name == "b":
        data = BooleanColumnStatsData(sum(present), len(present) - sum(present), nulls)
    elif name == "p":
        data = DecimalColumnStatsData(min(present, default=None), max(present, default=None), nulls, ndv, bits)
    else:
        stamps = [Timestamp(v) for v in present]
        data = TimestampColumnStatsData(min(stamps, key=lambda v: v.microsSinceEpoch, default=None),
                                        max(stamps, key=lambda v: v.microsSinceEpoch, default=None), nulls, ndv, bits)
    return ColumnStatisticsObj(name, dict(COLUMNS)[name], ColumnStatisticsData.of(data))


def _part(index: int) -> str:
    return f"ds=2026-01-{index + 1:02d}"


def _flat(ms: Metastore, name: str):
    column = ms.column_stats.partition_stats_columns("default", "wide", [name]).get(name)
    return merge_stats_column(column) if column else None


def _same(merged, flat) -> None:
    """Equal statistics; the sketches by estimate (a union's bytes may order a small set's entries
    differently, its registers and estimate may not differ)."""
    got, want = merged.statsData.value, flat.statsData.value
    for attribute in vars(want):
        if attribute == "bitVectors":
            assert (got.bitVectors is None) == (want.bitVectors is None)
            assert estimate(got.bitVectors) == estimate(want.bitVectors)
        elif isinstance(getattr(want, attribute), float) and math.isnan(getattr(want, attribute)):
            assert math.isnan(getattr(got, attribute))
        else:
            assert getattr(got, attribute) == getattr(want, attribute), attribute


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=st.lists(_operation, max_size=25))
def test_segments_merge_to_the_flat_merge_of_every_partition(new_metastore, operations):
    ms = new_metastore()
    ms.settings.segment_bits = 1  # 2 partitions a segment: a few partitions build a tree of every level
    try:
        ms.catalog.create_table(Table("default", "wide", [FieldSchema(n, t) for n, t in COLUMNS], [FieldSchema("ds", "string")],
                              location="/tmp/wide", parameters={"transactional": "false"}))
        table = ms.catalog.get_table("default", "wide")
        live: dict[str, dict[str, list]] = {}  # partition -> column -> the values its statistics describe
        for op in operations:
            kind = op[0]
            existing = set(ms.catalog.get_partition_names("default", "wide"))
            if kind == "write":
                _, index, rows = op
                if _part(index) not in existing:
                    ms.catalog.add_partitions([Partition("default", "wide", [_part(index)[3:]])])
                ms.catalog.alter_partition_params("default", "wide", _part(index), {"numRows": str(rows)})
            elif kind == "analyze" and _part(op[1]) in existing:
                _, index, values, columns, keep_sketch, sketch_values = op
                sketch = _sketch(sketch_values)
                objs = [_stats_of(c, values[c], sketch, keep_sketch) for c in sorted(columns)]
                ms.catalog.alter_partition_params("default", "wide", _part(index), {"numRows": str(len(values["n"]))})
                ms.column_stats.set_aggr_stats_for([ColumnStatistics(ColumnStatisticsDesc(False, "default", "wide",
                                                                                          _part(index), 1),
                                                        objs)])
                live.setdefault(_part(index), {}).update({c: values[c] for c in columns})
            elif kind == "drop" and _part(op[1]) in existing:
                ms.catalog.drop_partition("default", "wide", _part(op[1]))
                live.pop(_part(op[1]), None)
            elif kind == "forget" and _part(op[1]) in existing:
                ms.column_stats.delete_partition_column_statistics("default", "wide", _part(op[1]), op[2])
                live.get(_part(op[1]), {}).pop(op[2], None)
            elif kind == "merge":
                merge_table_level(ms, table, [c for c, _ in COLUMNS], 1)
            elif kind == "flags" and _part(op[1]) in existing:
                ms.catalog.alter_partition_params("default", "wide", _part(op[1]), {"COLUMN_STATS_ACCURATE": op[2]})
            elif kind == "writer" and _part(op[1]) in existing:  # another process's write, by SQL
                with connect(ms.url) as other:
                    other.execute("UPDATE PARTITIONS SET WRITE_ID = ? WHERE PART_NAME = ?", (op[2], _part(op[1])))
            elif kind == "read":
                _check_partition_state(ms)
        _check_partition_state(ms)
        merge_table_level(ms, table, [c for c, _ in COLUMNS], 1)
        for name, _ in COLUMNS:
            flat = _flat(ms, name)
            stored = ms.column_stats.get_table_statistics("default", "wide", [name])
            if flat is None:
                assert stored is None
                continue
            _same(stored.statsObj[0], flat)
            _check_against_values(name, flat, [v[name] for v in live.values() if name in v])
    finally:
        ms.close()


def _check_partition_state(ms: Metastore) -> None:
    """The segments' summary of the partitions (what accuracy is judged from) equals a grouping of the
    partitions as they are, and so does the partition count."""
    with connect(ms.url) as conn:
        want = {flags: (parts, low, high, first) for flags, parts, low, high, first in conn.execute(
            "SELECT COALESCE(PP.PARAM_VALUE, ''), count(*), min(P.WRITE_ID), max(P.WRITE_ID), min(P.PART_NAME) "
            "FROM PARTITIONS P LEFT JOIN PARTITION_PARAMS PP ON PP.PART_ID = P.PART_ID "
            "AND PP.PARAM_KEY = 'COLUMN_STATS_ACCURATE' GROUP BY 1")}
        writers = dict(conn.execute("SELECT PART_NAME, WRITE_ID FROM PARTITIONS"))
    state = ms.segments.partition_state("default", "wide")
    assert state is not None
    assert {g.flags: (g.parts, g.min_write_id, g.max_write_id, g.first_name) for g in state} == want
    assert all(g.first_write_id == writers[g.first_name] for g in state)
    assert ms.catalog.count_partitions("default", "wide") == len(writers)


def _check_against_values(name: str, merged: ColumnStatisticsObj, value_lists: list[list]) -> None:
    """The flat merge itself against the values the partitions' statistics were computed from."""
    values = [v for values in value_lists for v in values]
    present = [v for v in values if v is not None]
    data = merged.statsData.value
    assert data.numNulls == len(values) - len(present)
    if name in ("n", "p"):
        assert (data.lowValue, data.highValue) == (min(present, default=None), max(present, default=None))
    elif name == "t":
        assert (data.lowValue, data.highValue) == (Timestamp(min(present)) if present else None,
                                                   Timestamp(max(present)) if present else None)
    elif name == "b":
        assert (data.numTrues, data.numFalses) == (sum(present), len(present) - sum(present))
    elif name == "s":
        assert data.maxColLen == max((len(v) for v in present), default=0)


def test_changing_one_partition_re_merges_only_its_segments(new_metastore):
    """One partition's new statistics re-merge the 3 segments above it (and the table), whatever the
    number of partitions: counted as rows rewritten in PART_STATS_SEGMENTS."""
    ms = new_metastore()
    ms.catalog.create_table(Table("default", "wide", [FieldSchema("n", "bigint")], [FieldSchema("ds", "string")],
                          location="/tmp/wide", parameters={"transactional": "false"}))
    days = [(dt.date(2020, 1, 1) + dt.timedelta(days=i)).isoformat() for i in range(300)]
    ms.catalog.add_partitions([Partition("default", "wide", [d], parameters={"numRows": "10"}) for d in days])

    def stats(day, high):
        return ColumnStatistics(ColumnStatisticsDesc(False, "default", "wide", f"ds={day}", 1), [
            ColumnStatisticsObj("n", "bigint", ColumnStatisticsData.of(LongColumnStatsData(0, high, 1, 5, None)))])

    ms.column_stats.set_aggr_stats_for([stats(d, i) for i, d in enumerate(days)])
    table = ms.catalog.get_table("default", "wide")
    merge_table_level(ms, table, ["n"], 1)
    conn = connect(ms.url)
    before = {(lvl, idx): high for lvl, idx, high in conn.execute(
        "SELECT SEG_LEVEL, SEG_INDEX, HIGH_VALUE FROM PART_STATS_SEGMENTS")}
    assert len(before) == 5 + 1 + 1  # 300 partitions: 5 level-1 segments, one above each
    ms.column_stats.set_aggr_stats_for([stats(days[150], 10_000)])
    assert conn.execute("SELECT count(*) FROM STALE_STATS_SEGMENTS").fetchone()[0] == 1
    merge_table_level(ms, table, ["n"], 1)
    after = {(lvl, idx): high for lvl, idx, high in conn.execute(
        "SELECT SEG_LEVEL, SEG_INDEX, HIGH_VALUE FROM PART_STATS_SEGMENTS")}
    changed = {key for key in after if after[key] != before[key]}
    assert changed == {(1, (hive_rows.part_id(ms.db, "default", "wide", f"ds={days[150]}")) >> 6), (2, 0), (3, 0)}
    assert ms.column_stats.get_table_column_statistics("default", "wide", "n").statsObj[0].statsData.value.highValue == 10_000
    ms.catalog.drop_partition("default", "wide", f"ds={days[150]}")
    merge_table_level(ms, table, ["n"], 1)
    assert ms.column_stats.get_table_column_statistics("default", "wide", "n").statsObj[0].statsData.value.highValue == 299
    conn.close()
    ms.close()


def test_merged_ndv_stays_within_the_sketch_bound():
    """The segments' union estimates the distinct values of all partitions within HLL's bound."""
    from colstats_lab.column_statistics.merge import merge_partitions, merge_segments, segment_to_obj
    from colstats_lab.column_statistics.stats_rows import StatsColumn

    parts = [list(range(i * 700, i * 700 + 1_000)) for i in range(40)]  # overlapping ranges
    column = StatsColumn.from_objects([(_stats_of("n", p, _sketch(p), True), len(p)) for p in parts])
    grouped = merge_segments([merge_partitions(column.subset(list(range(i, min(i + 7, 40))))) for i in range(0, 40, 7)])
    truth = len({v for p in parts for v in p})
    ndv = segment_to_obj("n", grouped).statsData.value.numDVs
    assert abs(ndv - truth) <= ndv_relative_error() * truth
    assert ndv == merge_stats_column(column).statsData.value.numDVs


@pytest.mark.sqlite_only("a file of the releases that had SQLite only")
def test_a_metastore_from_before_the_partition_summary_gets_it_built_from_its_partitions(tmp_path):
    """Schema 8 builds every level of PART_STATE_SEGMENTS from the partitions a file already holds."""
    path = str(tmp_path / "metastore.db")
    ms = Metastore(path)
    ms.catalog.create_table(Table("default", "wide", [FieldSchema("n", "bigint")], [FieldSchema("ds", "string")],
                          location="/tmp/wide", parameters={"transactional": "false"}))
    days = [(dt.date(2020, 1, 1) + dt.timedelta(days=i)).isoformat() for i in range(200)]
    ms.catalog.add_partitions([Partition("default", "wide", [d], parameters={"numRows": "10"}) for d in days])
    for i, day in enumerate(days[:150]):
        if i % 3:
            ms.catalog.alter_partition_params("default", "wide", f"ds={day}", {"COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}'})
    ms.close()
    with sqlite3.connect(path) as conn:  # the file as schema 7 left it
        conn.execute("UPDATE PARTITIONS SET WRITE_ID = PART_ID % 4")
        for trigger in ("PARTITION_ADDED", "PARTITION_RENAMED_OR_WRITTEN", "PARTITION_FLAGS_INSERTED",
                        "PARTITION_FLAGS_UPDATED", "PARTITION_FLAGS_DELETED"):
            conn.execute(f"DROP TRIGGER {trigger}")
        conn.execute("DROP TABLE PART_STATE_SEGMENTS")
        conn.execute("DELETE FROM STALE_STATS_SEGMENTS")
        conn.execute("DROP TRIGGER PARTITION_HISTORY_DROPPED")  # 10's (its other triggers went in 16)
        for table in ("STATS_EXPECTATION_RESULTS", "STATS_EXPECTATIONS", "COL_STATS_HISTORY", "STATS_HISTORY_CONTEXT"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("DROP TABLE SNAPSHOT_FILES")  # 12's
        conn.execute("DROP TABLE THETA_SKETCHES")
        conn.execute("DROP TABLE AUTOANALYZE_CLAIMS")  # 14's
        conn.execute("DROP TABLE AUTOANALYZE_ROUNDS")
        conn.execute("DROP TABLE PART_COL_FREQUENT_ITEMS")  # 17's
        conn.execute("DROP TABLE TAB_COL_FREQUENT_ITEMS")
        for later in ("TAB_COL_STATS", "PART_COL_STATS"):  # 18's
            conn.execute(f"ALTER TABLE {later} DROP COLUMN NUM_VALUES")
        for later in ("TAB_COL_STATS", "PART_COL_STATS", "PART_STATS_SEGMENTS", "METADATA_COLUMN_STATS"):  # 9's
            conn.execute(f"ALTER TABLE {later} DROP COLUMN HISTOGRAM")
        conn.execute("ALTER TABLE ANALYZED_FILES DROP COLUMN ETAG")  # 19's
        for later in ("TAB_COL_STATS", "PART_COL_STATS", "PART_STATS_SEGMENTS"):  # 24's (the history went above)
            conn.execute(f"ALTER TABLE {later} DROP COLUMN NUM_NANS")
        conn.execute("DROP VIEW STATS_FLAGS")  # 25's
        for later in ("TAB_COL_STATS", "PART_COL_STATS", "PART_STATS_SEGMENTS"):  # 26's
            conn.execute(f"ALTER TABLE {later} DROP COLUMN SUM_VALUES")
            conn.execute(f"ALTER TABLE {later} DROP COLUMN SUM_SQUARED_DEVIATIONS")
        conn.execute("DROP TABLE ROW_SKETCHES")  # 27's
        conn.execute("DROP TABLE QUERY_RUN_TABLES")  # 28's
        conn.execute("DROP TABLE QUERY_RUNS")
        for later in ("TAB_COL_STATS", "PART_COL_STATS", "PART_STATS_SEGMENTS"):  # 30's
            conn.execute(f"ALTER TABLE {later} DROP COLUMN NUM_ZEROS")
            conn.execute(f"ALTER TABLE {later} DROP COLUMN LENGTH_HISTOGRAM")
        conn.execute("PRAGMA user_version = 7")
    ms = Metastore(path)
    try:
        with sqlite3.connect(path) as conn:
            levels = {level for (level,) in conn.execute("SELECT DISTINCT SEG_LEVEL FROM PART_STATE_SEGMENTS")}
            assert levels == {1, 2, 3}
            assert conn.execute("SELECT count(*) FROM STALE_STATS_SEGMENTS").fetchone()[0] == 0
        _check_partition_state(ms)
        assert ms.catalog.count_partitions("default", "wide") == 200
    finally:
        ms.close()


def test_a_partition_twice_in_one_bulk_update_keeps_its_later_statistics(new_metastore):
    ms = new_metastore()
    try:
        ms.catalog.create_table(Table("default", "wide", [FieldSchema("n", "bigint")], [FieldSchema("ds", "string")],
                              location="/tmp/wide", parameters={"transactional": "false"}))
        ms.catalog.add_partitions([Partition("default", "wide", [d], parameters={"numRows": "10"}) for d in ("a", "b")])

        def stats(day, high):
            return ColumnStatistics(ColumnStatisticsDesc(False, "default", "wide", f"ds={day}", 1), [
                ColumnStatisticsObj("n", "bigint", ColumnStatisticsData.of(LongColumnStatsData(0, high, 1, 5, None)))])

        ms.column_stats.set_aggr_stats_for([stats("a", 1), stats("b", 2), stats("a", 3)])  # new rows, "a" repeated
        ms.column_stats.set_aggr_stats_for([stats("b", 4), stats("b", 5)])  # existing rows, "b" repeated
        high = {p: ms.column_stats.get_partition_column_statistics("default", "wide", f"ds={p}", "n").statsObj[0]
                .statsData.value.highValue for p in ("a", "b")}
        assert high == {"a": 3, "b": 5}
        with connect(ms.url) as conn:
            assert conn.execute("SELECT count(*) FROM PART_COL_STATS").fetchone()[0] == 2
    finally:
        ms.close()

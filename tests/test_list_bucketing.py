"""List bucketing: SKEWED BY ... STORED AS DIRECTORIES laid out on disk, recorded in Hive's tables,
changed by each ALTER form, refused where Hive refuses it, and pruned by queries — with every pruned
query returning exactly the rows of a full scan."""
from __future__ import annotations

import glob
import os

import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metastore_rows import connect

from colstats_lab.errors import InvalidArgument
from colstats_lab.metastore import NoSuchObjectException
from colstats_lab.metastore.rows.levels import Level
from colstats_lab.sql.lexer import ParseError

pytestmark = pytest.mark.both_backends  # a metastore behaviour: on SQLite and on PostgreSQL

LIST_BUCKETING_LEVEL = str(Level.LIST_BUCKETING)  # read by DataFrame.query("... @LIST_BUCKETING_LEVEL")

DEFAULT = "HIVE_DEFAULT_LIST_BUCKETING_DIR_NAME"


def _rows(n: int = 120, offset: int = 0) -> pd.DataFrame:
    xs = [30 if i % 3 == 0 else 6 if i % 5 == 0 else 20 if i % 7 == 0 else 100 + i for i in range(n)]
    return pd.DataFrame({"id": [offset + i for i in range(n)], "x": xs,
                         "y": ["a" if i % 2 else "c" for i in range(n)]})


@pytest.fixture
def lb(lab):
    lab.sql("CREATE TABLE t (id BIGINT, x INT, y STRING) PARTITIONED BY (ds STRING) "
            "SKEWED BY (x) ON (6, 20, 30, 40) STORED AS DIRECTORIES")
    lab.tables["t"].write(_rows(), partition={"ds": "2026-11-21"})
    return lab


def _subdirs(lab, part: str) -> set[str]:
    location = os.path.join(lab.metastore.catalog.get_table("default", "t").location, part)
    out = set()
    for delta in glob.glob(os.path.join(location, "*_*")):
        for root, _, files in os.walk(delta):
            if any(f.endswith(".parquet") for f in files):
                out.add(os.path.relpath(root, delta))
    return out


def _file_values(lab, part: str, sub: str, column: str) -> set:
    location = os.path.join(lab.metastore.catalog.get_table("default", "t").location, part)
    values = set()
    for path in glob.glob(os.path.join(location, "*_*", sub, "*.parquet")):
        values |= set(pq.read_table(path).column(column).to_pylist())
    return values


def test_layout_on_disk_one_directory_per_skewed_value_with_rows(lb):
    assert _subdirs(lb, "ds=2026-11-21") == {"x=6", "x=20", "x=30", DEFAULT}  # 40 has no rows: no directory
    assert _file_values(lb, "ds=2026-11-21", "x=30", "x") == {30}
    assert _file_values(lb, "ds=2026-11-21", DEFAULT, "x").isdisjoint({6, 20, 30, 40})
    assert lb.sql("SELECT count(*) AS n FROM t").df["n"][0] == 120
    described = lb.sql("SELECT count(*) AS n, sum(id) AS s FROM t WHERE ds = '2026-11-21'").df.iloc[0]
    assert (described["n"], described["s"]) == (120, sum(range(120)))
    part = lb.metastore.catalog.get_partition("default", "t", "ds=2026-11-21")
    files = glob.glob(os.path.join(part.location, "*_*", "**", "*.parquet"), recursive=True)
    assert part.parameters["numRows"] == "120" and part.parameters["numFiles"] == str(len(files))


def test_analyze_of_a_list_bucketing_table_sees_every_directory(lb):
    lb.set("hive.stats.column.autogather", False)
    lb.tables["t"].write(_rows(30, offset=500), partition={"ds": "2026-11-22"})
    lb.sql("ANALYZE TABLE t PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS x, id")
    rows = pd.concat([_rows(), _rows(30, offset=500)])
    for part, frame in (("ds=2026-11-21", _rows()), ("ds=2026-11-22", _rows(30, offset=500))):
        stats = lb.metastore.column_stats.get_partition_column_statistics("default", "t", part, "x").obj("x").statsData.longStats
        assert (stats.lowValue, stats.highValue, stats.numNulls) == (frame.x.min(), frame.x.max(), 0)
    table = lb.metastore.column_stats.get_table_column_statistics("default", "t", "id").obj("id").statsData.longStats
    assert (table.lowValue, table.highValue) == (rows.id.min(), rows.id.max())


def test_metastore_rows_follow_hive(lb):
    conn = connect(lb.metastore.url)
    part_sd = conn.execute("SELECT SD_ID FROM PARTITIONS WHERE PART_NAME = 'ds=2026-11-21'").fetchone()[0]
    names = conn.execute("SELECT SKEWED_COL_NAME FROM SKEWED_COL_NAMES WHERE SD_ID = ? ORDER BY INTEGER_IDX",
                         (part_sd,)).fetchall()
    values = conn.execute(
        "SELECT L.STRING_LIST_VALUE FROM SKEWED_VALUES V JOIN SKEWED_STRING_LIST_VALUES L "
        "ON L.STRING_LIST_ID = V.STRING_LIST_ID_EID WHERE V.SD_ID_OID = ? ORDER BY V.INTEGER_IDX", (part_sd,)).fetchall()
    locations = dict(conn.execute(
        "SELECT L.STRING_LIST_VALUE, M.LOCATION FROM SKEWED_COL_VALUE_LOC_MAP M JOIN SKEWED_STRING_LIST_VALUES L "
        "ON L.STRING_LIST_ID = M.STRING_LIST_ID_KID WHERE M.SD_ID = ?", (part_sd,)).fetchall())
    stored = conn.execute("SELECT IS_STOREDASSUBDIRECTORIES FROM SDS WHERE SD_ID = ?", (part_sd,)).fetchone()[0]
    conn.close()
    assert [n for (n,) in names] == ["x"]
    assert [v for (v,) in values] == ["6", "20", "30", "40"]
    assert locations == {"6": "x=6", "20": "x=20", "30": "x=30"}  # a value without rows gets no entry
    assert stored == 1


def test_each_alter_form_affects_later_partitions_only(lb):
    lb.sql("ALTER TABLE t SKEWED BY (x) ON (100, 101) STORED AS DIRECTORIES")
    lb.tables["t"].write(_rows(), partition={"ds": "2026-11-22"})
    lb.tables["t"].write(_rows(), partition={"ds": "2026-11-21"})  # an existing partition keeps its own spec
    assert _subdirs(lb, "ds=2026-11-22") == {"x=101", DEFAULT}  # no row has x = 100
    assert _subdirs(lb, "ds=2026-11-21") == {"x=6", "x=20", "x=30", DEFAULT}
    lb.sql("ALTER TABLE t NOT STORED AS DIRECTORIES")
    table = lb.metastore.catalog.get_table("default", "t")
    assert table.skewedInfo.skewedColValues == [["100"], ["101"]] and not table.storedAsSubDirectories
    lb.tables["t"].write(_rows(), partition={"ds": "2026-11-23"})
    assert _subdirs(lb, "ds=2026-11-23") == {"."}
    lb.sql("ALTER TABLE t SKEWED BY (x) ON (30) STORED AS DIRECTORIES")
    lb.sql("ALTER TABLE t SET SKEWED LOCATION (30='hot')")
    lb.tables["t"].write(_rows(), partition={"ds": "2026-11-24"})
    assert _subdirs(lb, "ds=2026-11-24") == {"hot", DEFAULT}
    assert _file_values(lb, "ds=2026-11-24", "hot", "x") == {30}
    lb.sql("ALTER TABLE t NOT SKEWED")
    assert lb.metastore.catalog.get_table("default", "t").skewedInfo is None
    lb.tables["t"].write(_rows(), partition={"ds": "2026-11-25"})
    assert _subdirs(lb, "ds=2026-11-25") == {"."}
    assert lb.sql("SELECT count(*) AS n FROM t").df["n"][0] == 6 * 120


def test_relayout_rewrites_a_partition_under_the_current_spec(lab):
    lab.sql("CREATE TABLE t (id BIGINT, x INT, y STRING) PARTITIONED BY (ds STRING)")
    lab.tables["t"].write(_rows(), partition={"ds": "2026-11-21"})
    lab.sql("ALTER TABLE t SKEWED BY (x) ON (30, 6) STORED AS DIRECTORIES")
    assert _subdirs(lab, "ds=2026-11-21") == {"."}
    lab.tables["t"].relayout(partition={"ds": "2026-11-21"})
    part = lab.metastore.catalog.get_partition("default", "t", "ds=2026-11-21")
    assert part.storedAsSubDirectories and part.skewedInfo.skewedColValueLocationMaps == {("30",): "x=30", ("6",): "x=6"}
    assert lab.sql("SELECT count(*) AS n, sum(id) AS s FROM t").df.iloc[0].tolist() == [120, sum(range(120))]
    assert lab.explain("SELECT * FROM t WHERE x = 30").totals()["rows_kept"] == 40
    flags = part.parameters["COLUMN_STATS_ACCURATE"]
    assert '"x":"true"' in flags  # the rewrite gathered its statistics


@pytest.mark.slow  # the full lane: seconds of Spark work the fast lane's budget has no room for
def test_relayout_of_every_partition_in_one_transaction_keeps_every_row_and_its_statistics(lab):
    lab.sql("CREATE TABLE t (id BIGINT, x INT, y STRING) PARTITIONED BY (ds STRING)")
    days = {"2026-11-21": _rows(120), "2026-11-22": _rows(60, offset=1000), "2026-11-23": _rows(30, offset=5000)}
    for ds, rows in days.items():
        lab.tables["t"].write(rows, partition={"ds": ds})
    lab.sql("ALTER TABLE t ADD PARTITION (ds='2026-11-24')")  # no files: rewritten on its own
    lab.sql("ALTER TABLE t SKEWED BY (x) ON (30, 6) STORED AS DIRECTORIES")
    results = lab.tables["t"].relayout()
    assert sorted(name for r in results for name in r.partitions) == [f"ds={d}" for d in [*days, "2026-11-24"]]
    assert len({r.write_id for r in results}) == 1  # one transaction, one write ID
    for ds, rows in days.items():
        part = lab.metastore.catalog.get_partition("default", "t", f"ds={ds}")
        assert part.storedAsSubDirectories
        assert part.skewedInfo.skewedColValueLocationMaps == {("30",): "x=30", ("6",): "x=6"}
        assert _file_values(lab, f"ds={ds}", "x=30", "x") == {30}
        got = lab.sql(f"SELECT count(*) AS n, sum(id) AS s, count_if(x = 6) AS six FROM t WHERE ds = '{ds}'").df
        assert got.iloc[0].tolist() == [len(rows), rows["id"].sum(), (rows["x"] == 6).sum()]
        assert part.parameters["numRows"] == str(len(rows))
        assert '"x":"true"' in part.parameters["COLUMN_STATS_ACCURATE"]  # gathered in the same write
    assert lab.metastore.catalog.get_partition("default", "t", "ds=2026-11-24").storedAsSubDirectories
    hot = sum(int((rows["x"] == 30).sum()) for rows in days.values())
    assert lab.explain("SELECT * FROM t WHERE x = 30").totals()["rows_kept"] == hot


def test_multi_column_layout_and_the_seeds_partial_keys(lab):
    lab.sql("CREATE TABLE t (id BIGINT, x INT, y STRING) PARTITIONED BY (ds STRING) "
            "SKEWED BY (x, y) ON ((10, 'a'), (20, 'c')) STORED AS DIRECTORIES")
    rows = pd.DataFrame({"id": range(8), "x": [10, 10, 20, 20, 30, 10, 20, 50],
                         "y": ["a", "a", "c", "c", "b", "b", "a", "b"]})
    lab.tables["t"].write(rows, partition={"ds": "d"})
    assert _subdirs(lab, "ds=d") == {"x=10/y=a", "x=20/y=c", f"{DEFAULT}/{DEFAULT}"}

    def kept(query):
        frame = lab.explain(query).to_pandas().query("level == @LIST_BUCKETING_LEVEL")
        return {i.split("/", 1)[1] for i, k in zip(frame.identifier, frame.kept, strict=True) if k}

    assert kept("SELECT * FROM t WHERE x = 10 AND y = 'a'") == {"x=10/y=a"}
    assert kept("SELECT * FROM t WHERE x = 10") == {"x=10/y=a", f"{DEFAULT}/{DEFAULT}"}  # prunes (20, 'c')
    assert kept("SELECT * FROM t WHERE y = 'b'") == {f"{DEFAULT}/{DEFAULT}"}  # prunes (10, 'a') and (20, 'c')
    assert kept("SELECT * FROM t WHERE id > 3") == {"x=10/y=a", "x=20/y=c", f"{DEFAULT}/{DEFAULT}"}
    for query in ("SELECT id FROM t WHERE x = 10", "SELECT id FROM t WHERE y = 'b'",
                  "SELECT id FROM t WHERE x = 10 AND y = 'a'", "SELECT id FROM t WHERE x IN (10, 20) AND y = 'c'"):
        got = sorted(lab.sql(query).df["id"])
        assert got == sorted(rows.query(query.split("WHERE ")[1].replace("=", "==").replace("AND", "and")
                                        .replace("IN", "in").replace("(10, 20)", "[10, 20]"))["id"])


def test_pruning_keeps_only_the_directories_that_can_match(lb):
    def decisions(query):
        frame = lb.explain(query).to_pandas().query("level == @LIST_BUCKETING_LEVEL")
        return {i.rsplit("/", 1)[1]: k for i, k in zip(frame.identifier, frame.kept, strict=True)}

    assert decisions("SELECT * FROM t WHERE x = 30") == {"x=30": True, "x=6": False, "x=20": False, DEFAULT: False}
    assert decisions("SELECT * FROM t WHERE x = 50") == {"x=30": False, "x=6": False, "x=20": False, DEFAULT: True}
    assert decisions("SELECT * FROM t WHERE x IN (30, 50)") == {"x=30": True, "x=6": False, "x=20": False,
                                                                DEFAULT: True}
    assert decisions("SELECT * FROM t WHERE x IN (30, 6)") == {"x=30": True, "x=6": True, "x=20": False,
                                                               DEFAULT: False}
    assert all(decisions("SELECT * FROM t WHERE y = 'a'").values())
    assert all(decisions("SELECT * FROM t WHERE x > 25").values())  # not an equality: nothing pruned
    report = lb.explain("SELECT * FROM t WHERE x = 30")
    assert report.totals()["rows_kept"] == 40 and report.totals()["rows"] == 120
    result = lb.sql("SELECT count(*) AS n FROM t WHERE x = 30")
    assert result.df["n"][0] == 40 and result.pruning.totals()["rows_kept"] == 40


def test_or_in_and_not_prune_directories_in_three_valued_logic(lb):
    """Hive's list-bucketing pruner evaluates the whole predicate per directory (ListBucketingPruner:
    OR, AND, NOT, IN over the skewed columns): a directory is read only where the condition can be TRUE.
    A skewed value's directory holds only that value; the default directory any other value, or NULL
    (where `NOT x = 30` is NULL, not TRUE)."""
    lb.tables["t"].write(pd.DataFrame({"id": [500, 501], "x": pd.array([None, 7], dtype="Int64"), "y": ["n", "n"]}),
                         partition={"ds": "2026-11-21"})

    def kept(query):
        frame = lb.explain(query).to_pandas().query("level == @LIST_BUCKETING_LEVEL")
        return {i.rsplit("/", 1)[1] for i, k in zip(frame.identifier, frame.kept, strict=True) if k}

    assert kept("SELECT * FROM t WHERE x = 30 OR x = 6") == {"x=30", "x=6"}
    assert kept("SELECT * FROM t WHERE x = 30 OR x IN (20, 40)") == {"x=30", "x=20"}
    assert kept("SELECT * FROM t WHERE NOT x IN (30, 6, 20)") == {DEFAULT}
    assert kept("SELECT * FROM t WHERE x <> 30") == {"x=6", "x=20", DEFAULT}
    assert kept("SELECT * FROM t WHERE x IS NULL") == {DEFAULT}
    assert kept("SELECT * FROM t WHERE x = 30 AND NOT x = 30") == set()
    assert kept("SELECT * FROM t WHERE x = 30 OR y = 'a'") == {"x=30", "x=6", "x=20", DEFAULT}
    reason = lb.explain("SELECT * FROM t WHERE x = 30 OR x = 6").to_pandas().query(
        "level == @LIST_BUCKETING_LEVEL and identifier.str.endswith(@DEFAULT)").reason.iloc[0]
    assert "cannot be true" in reason and "or NULL" in reason
    assert sorted(lb.sql("SELECT id FROM t WHERE x IS NULL").df["id"]) == [500]
    assert 500 not in set(lb.sql("SELECT id FROM t WHERE NOT x = 30").df["id"])  # NULL is not TRUE
    assert 501 in set(lb.sql("SELECT id FROM t WHERE NOT x IN (30, 6, 20)").df["id"])


_VALUES = [6, 20, 30, 40, 50, 101, 119]
_PREDICATES = st.one_of(
    st.sampled_from(_VALUES).map(lambda v: (f"x = {v}", lambda r, v=v: r.x == v)),
    st.lists(st.sampled_from(_VALUES), min_size=1, max_size=3).map(
        lambda vs: (f"x IN ({', '.join(map(str, vs))})", lambda r, vs=vs: r.x in vs)),
    st.sampled_from([("y = 'a'", lambda r: r.y == "a"), ("id < 50", lambda r: r.id < 50),
                     ("x > 25", lambda r: r.x > 25), ("x = '30'", lambda r: r.x == 30),
                     ("NOT x = 30", lambda r: r.x != 30), ("x = 30 OR y = 'a'", lambda r: r.x == 30 or r.y == "a"),
                     ("30 = x", lambda r: r.x == 30), ("x = 30 OR x = 6", lambda r: r.x in (30, 6)),
                     ("NOT x IN (30, 6)", lambda r: r.x not in (30, 6)), ("x <> 20", lambda r: r.x != 20),
                     ("NOT (x = 30 OR x = 50)", lambda r: r.x not in (30, 50)), ("x IS NULL", lambda r: False),
                     ("x IS NOT NULL AND NOT x = 30", lambda r: r.x != 30),
                     ("x = 6 OR (x = 30 AND y = 'a')", lambda r: r.x == 6 or (r.x == 30 and r.y == "a"))]),
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_PREDICATES, min_size=1, max_size=2))
def test_pruned_queries_return_exactly_the_full_scans_rows(lb, predicates):
    where = " AND ".join(f"({text})" for text, _ in predicates)
    expected = sorted(r.id for r in _rows().itertuples() if all(test(r) for _, test in predicates))
    assert sorted(lb.sql(f"SELECT id FROM t WHERE {where}").df["id"]) == expected, where


@pytest.mark.parametrize("statement, error, message", [
    ("CREATE TABLE u (x INT) SKEWED BY (x) ON (1) STORED AS DIRECTORIES", InvalidArgument,
     "default.u is not partitioned"),
    ("CREATE TABLE u (x INT) PARTITIONED BY (ds STRING) SKEWED BY (ds) ON ('a')", InvalidArgument,
     "skewed column ds is a partition key of default.u"),
    ("CREATE TABLE u (x INT) PARTITIONED BY (ds STRING) SKEWED BY (z) ON (1)", NoSuchObjectException,
     "column z does not exist in table default.u"),
    ("CREATE TABLE u (x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON ('abc')", InvalidArgument,
     "skewed value 'abc' is not a int"),
    ("CREATE TABLE u (x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1, 01)", InvalidArgument,
     "skewed value 1 is listed twice"),
    ("CREATE TABLE u (x INT, y INT) PARTITIONED BY (ds STRING) SKEWED BY (x, y) ON ((1, 2), 3)", ParseError,
     "a skewed value needs 2 elements"),
])
def test_ddl_errors(lab, statement, error, message):
    with pytest.raises(error, match=message):
        lab.sql(statement)
    assert not lab.metastore.catalog.table_exists("default", "u")


def test_list_bucketing_rules(lb, tmp_path):
    with pytest.raises(InvalidArgument, match="default list-bucketing directory name"):
        lb.tables["t"].write(_rows(), partition={"ds": DEFAULT})
    with pytest.raises(InvalidArgument, match="default list-bucketing directory name"):
        lb.sql(f"ALTER TABLE t ADD PARTITION (ds='{DEFAULT}')")
    with pytest.raises(InvalidArgument, match="is not a skewed value of default.t"):
        lb.sql("ALTER TABLE t SET SKEWED LOCATION (99='d')")
    with pytest.raises(InvalidArgument, match="a location is a directory inside each partition"):
        lb.sql("ALTER TABLE t SET SKEWED LOCATION (30='/elsewhere')")
    source = tmp_path / "ext" / "ds=1"
    source.mkdir(parents=True)
    _rows().to_parquet(source / "part.parquet")
    lb.register_external("ext", str(tmp_path / "ext"))
    with pytest.raises(InvalidArgument, match="default.ext is an external table"):
        lb.sql("ALTER TABLE ext SKEWED BY (x) ON (30) STORED AS DIRECTORIES")
    lb.sql("ALTER TABLE ext SKEWED BY (x) ON (30)")  # a skewed table without directories is fine
    assert lb.metastore.catalog.get_table("default", "ext").skewedInfo.skewedColValues == [["30"]]


@pytest.mark.slow  # the full lane: seconds of Spark work the fast lane's budget has no room for
def test_partition_values_with_escaped_characters_read_back_from_list_bucketing_directories(lab):
    lab.sql("CREATE TABLE t (id BIGINT, x INT, y STRING) PARTITIONED BY (ds STRING, hr INT) "
            "SKEWED BY (x) ON (30) STORED AS DIRECTORIES")
    odd = ["a b+c", "p%q:r/s", "日本=é", None]
    for i, ds in enumerate(odd):
        lab.tables["t"].write(_rows(12, offset=100 * i), partition={"ds": ds, "hr": i})
    frame = lab.sql("SELECT ds, hr, count(*) AS n, sum(x) AS sx FROM t GROUP BY ds, hr ORDER BY hr").df
    assert frame["ds"].tolist()[:3] == odd[:3] and frame["ds"].isna().tolist() == [False, False, False, True]
    assert frame["hr"].tolist() == [0, 1, 2, 3] and frame["n"].tolist() == [12] * 4
    assert frame["sx"].tolist() == [int(_rows(12)["x"].sum())] * 4
    kept = lab.sql("SELECT ds, count(*) AS n FROM t WHERE x = 30 AND hr = 1 GROUP BY ds").df
    assert kept.values.tolist() == [["p%q:r/s", int((_rows(12)["x"] == 30).sum())]]


@pytest.mark.slow
def test_concatenate_merges_each_directorys_files_into_one_in_a_new_write(lb):
    """Hive's ALTER TABLE t [PARTITION (..)] CONCATENATE merges a table's or partition's small files; with
    list bucketing each directory's files are merged within that directory. Here as an overwrite under a
    new write ID: readers of the older snapshot still read the older files."""
    for offset in (1000, 2000):  # two more appends: three files in every directory
        lb.tables["t"].write(_rows(60, offset), partition={"ds": "2026-11-21"})
    lb.tables["t"].write(_rows(30, 5000), partition={"ds": "2026-11-22"})
    before = lb.tables["t"].valid_write_ids()
    rows_before = sorted(lb.sql("SELECT id, x, y FROM t").df.itertuples(index=False))
    result = lb.sql("ALTER TABLE t PARTITION (ds='2026-11-21') CONCATENATE")
    assert "Concatenated 1 partition of default.t" in result.message
    table, parts = lb.tables["t"].files()
    files = [f for p in parts if p.part_name == "ds=2026-11-21" for f in p.files]
    by_directory = {}
    for f in files:
        sub = os.path.basename(os.path.dirname(f.path))
        by_directory[sub] = by_directory.get(sub, 0) + 1
    assert by_directory == {"x=6": 1, "x=20": 1, "x=30": 1, DEFAULT: 1}
    assert all("/base_" in f.path for f in files)
    assert sorted(lb.sql("SELECT id, x, y FROM t").df.itertuples(index=False)) == rows_before
    assert lb.tables["t"].to_spark(snapshot=before).count() == len(rows_before)  # the older snapshot is untouched
    assert lb.sql("SELECT count(*) FROM t WHERE ds = '2026-11-21'").answered_from == "stats"
    whole = lb.sql("ALTER TABLE t CONCATENATE")
    assert "Concatenated 2 partitions" in whole.message
    with pytest.raises(ParseError, match="CONCATENATE"):
        lb.sql("ALTER TABLE t PARTITION (ds='2026-11-21') MERGE")

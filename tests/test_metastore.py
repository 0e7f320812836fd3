"""The metastore API over a real SQLite file and a real PostgreSQL database: Hive's names, its exceptions, one
transaction per call."""
from __future__ import annotations

import sqlite3
from decimal import Decimal

import pg_server
import pytest
from metastore_rows import connect

from colstats_lab.column_statistics.names import escape_path_name, make_part_name, parse_part_name
from colstats_lab.metastore import (
    AlreadyExistsException,
    BooleanColumnStatsData,
    ColumnStatistics,
    ColumnStatisticsData,
    ColumnStatisticsDesc,
    ColumnStatisticsObj,
    Date,
    DateColumnStatsData,
    DecimalColumnStatsData,
    DoubleColumnStatsData,
    FieldSchema,
    InvalidInputException,
    InvalidObjectException,
    LongColumnStatsData,
    MetaException,
    Metastore,
    NoSuchObjectException,
    Partition,
    SkewedInfo,
    StringColumnStatsData,
    Table,
    Timestamp,
    TimestampColumnStatsData,
    ValidWriteIdList,
)
from colstats_lab.metastore.changes import AddPartitions, AlterPartitionParams, FollowPartitions

pytestmark = pytest.mark.both_backends


@pytest.fixture
def ms(new_metastore):
    return new_metastore()


def _sales(ms: Metastore) -> Table:
    table = Table("default", "sales", [FieldSchema("x", "int"), FieldSchema("amount", "double"),
                                       FieldSchema("note", "string"), FieldSchema("flag", "boolean"),
                                       FieldSchema("price", "decimal(10,2)"), FieldSchema("day", "date"),
                                       FieldSchema("ts", "timestamp")],
                  [FieldSchema("ds", "string")], location="/tmp/sales")
    ms.catalog.create_table(table)
    ms.catalog.add_partitions([Partition("default", "sales", ["2026-11-21"]), Partition("default", "sales", ["2026-11-22"])])
    return table


def _long_stats(part: str | None, low=1, high=9, nulls=0, ndv=5) -> ColumnStatistics:
    return ColumnStatistics(ColumnStatisticsDesc(part is None, "default", "sales", part, 100),
                            [ColumnStatisticsObj("x", "int", ColumnStatisticsData(
                                longStats=LongColumnStatsData(low, high, nulls, ndv)))])


def test_schema_has_hives_tables_and_sqlite_is_configured(ms):
    conn = connect(ms.path)
    tables = conn.tables()
    assert {"DBS", "TBLS", "SDS", "COLUMNS_V2", "PARTITION_KEYS", "PARTITIONS", "PARTITION_KEY_VALS",
            "TABLE_PARAMS", "PARTITION_PARAMS", "TAB_COL_STATS", "PART_COL_STATS", "TXNS",
            "TXN_TO_WRITE_ID", "NEXT_WRITE_ID"} <= tables
    stats_columns = conn.columns("PART_COL_STATS")
    assert {"CS_ID", "PART_ID", "DB_NAME", "TABLE_NAME", "PART_NAME", "COLUMN_NAME", "COLUMN_TYPE", "LOW_VALUE",
            "HIGH_VALUE", "NUM_NULLS", "NUM_DISTINCTS", "AVG_COL_LEN", "MAX_COL_LEN", "NUM_TRUES", "NUM_FALSES",
            "LAST_ANALYZED", "BIT_VECTOR", "BIG_DECIMAL_LOW_VALUE", "LONG_LOW_VALUE"} <= stats_columns
    if conn.postgresql:  # a row of its own records the migrations run; a foreign key holds
        assert conn.execute("SELECT MIGRATIONS FROM COLSTATS_SCHEMA_VERSION").fetchone()[0] >= 1
        with pytest.raises(Exception, match="foreign key"):
            conn.execute("INSERT INTO TBLS (CREATE_TIME, DB_ID, TBL_NAME, TBL_TYPE) VALUES (0, 999, 't', 'X')")
        return
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] >= 1
    assert ms.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_reopening_an_existing_file_keeps_its_contents(new_metastore_location, new_metastore):
    path = new_metastore_location()
    first = new_metastore(path)
    _sales(first)
    first.close()
    again = new_metastore(path)
    assert again.catalog.get_partition_names("default", "sales") == ["ds=2026-11-21", "ds=2026-11-22"]
    again.close()


def test_table_round_trip_lowercases_names(ms):
    ms.catalog.create_table(Table("default", "MixedCase", [FieldSchema("Col", "DECIMAL(10, 2)")], location="/x"))
    table = ms.catalog.get_table("DEFAULT", "mixedcase")
    assert table.tableName == "mixedcase"
    assert [(c.name, c.type) for c in table.cols] == [("col", "decimal(10,2)")]


def test_unknown_objects_are_named(ms):
    _sales(ms)
    with pytest.raises(NoSuchObjectException, match="table default.nope does not exist"):
        ms.catalog.get_table("default", "nope")
    with pytest.raises(NoSuchObjectException, match="database nodb does not exist"):
        ms.catalog.get_tables("nodb")
    with pytest.raises(NoSuchObjectException, match="partition ds=1999-01-01 of default.sales does not exist"):
        ms.catalog.get_partition("default", "sales", "ds=1999-01-01")
    with pytest.raises(NoSuchObjectException, match="column zz does not exist in table default.sales"):
        ms.column_stats.get_table_column_statistics("default", "sales", "zz")
    with pytest.raises(NoSuchObjectException, match="no statistics for column x"):
        ms.column_stats.get_partition_column_statistics("default", "sales", "ds=2026-11-21", "x")
    with pytest.raises(AlreadyExistsException, match="table default.sales already exists"):
        ms.catalog.create_table(Table("default", "sales", [FieldSchema("x", "int")]))


def test_every_stats_type_round_trips_exactly(ms):
    _sales(ms)
    objs = [
        ColumnStatisticsObj("x", "int", ColumnStatisticsData(longStats=LongColumnStatsData(-5, 2**40, 3, 7, b"\x01\x02"))),
        ColumnStatisticsObj("amount", "double", ColumnStatisticsData(
            doubleStats=DoubleColumnStatsData(-0.1, float("nan"), 0, 2))),
        ColumnStatisticsObj("note", "string", ColumnStatisticsData(stringStats=StringColumnStatsData(11, 2.75, 1, 4))),
        ColumnStatisticsObj("flag", "boolean", ColumnStatisticsData(booleanStats=BooleanColumnStatsData(3, 4, 5))),
        ColumnStatisticsObj("price", "decimal(10,2)", ColumnStatisticsData(
            decimalStats=DecimalColumnStatsData(Decimal("-12.50"), Decimal("99999999.99"), 0, 9))),
        ColumnStatisticsObj("day", "date", ColumnStatisticsData(dateStats=DateColumnStatsData(Date(-3), Date(20000), 1, 2))),
        ColumnStatisticsObj("ts", "timestamp", ColumnStatisticsData(
            timestampStats=TimestampColumnStatsData(Timestamp(-1), Timestamp(1_795_000_000_123_456), 0, 2))),
    ]
    ms.column_stats.update_partition_column_statistics(ColumnStatistics(
        ColumnStatisticsDesc(False, "default", "sales", "ds=2026-11-21", 1234), objs))
    got = ms.column_stats.get_partitions_statistics("default", "sales", ["ds=2026-11-21"], [o.colName for o in objs])
    back = {o.colName: o for o in got["ds=2026-11-21"].statsObj}
    for obj in objs:
        expected, actual = obj.statsData.value, back[obj.colName].statsData.value
        if obj.colName == "amount":
            assert actual.lowValue == -0.1 and actual.highValue != actual.highValue  # NaN survives
        else:
            assert actual == expected, obj.colName
    assert got["ds=2026-11-21"].statsDesc.lastAnalyzed == 1234
    conn = connect(ms.path)
    row = conn.execute("SELECT LOW_VALUE, HIGH_VALUE, BIG_DECIMAL_LOW_VALUE FROM PART_COL_STATS "
                       "WHERE COLUMN_NAME = 'price'").fetchone()
    assert row == ("-12.50", "99999999.99", "-12.50")
    assert conn.execute("SELECT LOW_VALUE, LONG_LOW_VALUE FROM PART_COL_STATS WHERE COLUMN_NAME = 'day'").fetchone() \
        == ("1969-12-29", -3)


def test_update_replaces_and_delete_removes(ms):
    _sales(ms)
    ms.column_stats.update_table_column_statistics(_long_stats(None, 1, 9))
    ms.column_stats.update_table_column_statistics(_long_stats(None, 2, 8))
    got = ms.column_stats.get_table_column_statistics("default", "sales", "x").obj("x").statsData.longStats
    assert (got.lowValue, got.highValue) == (2, 8)
    assert ms.column_stats.delete_table_column_statistics("default", "sales", "x")
    with pytest.raises(NoSuchObjectException):
        ms.column_stats.get_table_column_statistics("default", "sales", "x")
    ms.column_stats.update_partition_column_statistics(_long_stats("ds=2026-11-22"))
    ms.column_stats.delete_partition_column_statistics("default", "sales", "ds=2026-11-22", "x")
    assert ms.column_stats.get_partitions_statistics("default", "sales", None, ["x"]) == {}


def test_stats_for_the_wrong_type_or_column_are_refused(ms):
    _sales(ms)
    wrong = ColumnStatistics(ColumnStatisticsDesc(True, "default", "sales"), [ColumnStatisticsObj(
        "note", "string", ColumnStatisticsData(stringStats=StringColumnStatsData(1, 1.0, 0, 1)))])
    wrong.statsObj[0].colName = "x"
    with pytest.raises(InvalidObjectException, match="column x of default.sales is int"):
        ms.column_stats.update_table_column_statistics(wrong)
    with pytest.raises(NoSuchObjectException, match="column nope does not exist"):
        ms.column_stats.update_table_column_statistics(ColumnStatistics(ColumnStatisticsDesc(True, "default", "sales"), [
            ColumnStatisticsObj("nope", "int", ColumnStatisticsData(longStats=LongColumnStatsData(1, 1, 0, 1)))]))
    with pytest.raises(InvalidInputException, match="partName"):
        ms.column_stats.update_partition_column_statistics(_long_stats(None))


def test_a_failing_bulk_update_writes_nothing(ms):
    _sales(ms)
    good = _long_stats("ds=2026-11-21")
    bad = _long_stats("ds=1999-01-01")
    with pytest.raises(NoSuchObjectException):
        ms.column_stats.set_aggr_stats_for([good, bad])
    assert ms.column_stats.get_partitions_statistics("default", "sales", None, ["x"]) == {}


def test_figures_found_malformed_while_a_bulk_update_is_stored_write_nothing(ms):
    """Each row's figures are checked as it is sent (on PostgreSQL while the COPY of the batch runs): a malformed
    one is one line naming its column, and the rows sent before it are gone with the transaction."""
    _sales(ms)
    first, second = _long_stats("ds=2026-11-21"), _long_stats("ds=2026-11-22", nulls=-1)
    with pytest.raises(InvalidInputException, match="column x: numNulls must be a count, got -1"):
        ms.column_stats.set_aggr_stats_for([first, second])
    assert ms.column_stats.get_partitions_statistics("default", "sales", None, ["x"]) == {}
    ms.column_stats.set_aggr_stats_for([first, _long_stats("ds=2026-11-22", nulls=3)])  # the connection is usable after it
    stored = ms.column_stats.get_partitions_statistics("default", "sales", None, ["x"])
    assert {name: stats.obj("x").statsData.longStats.numNulls for name, stats in stored.items()} == {
        "ds=2026-11-21": 0, "ds=2026-11-22": 3}


def test_dropping_a_partition_or_table_deletes_its_statistics(ms):
    _sales(ms)
    ms.column_stats.set_aggr_stats_for([_long_stats("ds=2026-11-21"), _long_stats("ds=2026-11-22")])
    ms.column_stats.update_table_column_statistics(_long_stats(None))
    ms.catalog.drop_partition("default", "sales", "ds=2026-11-21")
    conn = connect(ms.path)
    assert conn.execute("SELECT PART_NAME FROM PART_COL_STATS").fetchall() == [("ds=2026-11-22",)]
    ms.catalog.drop_table("default", "sales")
    for table in ("PART_COL_STATS", "TAB_COL_STATS", "PARTITIONS", "PARTITION_PARAMS", "TABLE_PARAMS",
                  "PARTITION_KEY_VALS", "COLUMNS_V2", "SDS", "TBLS"):
        assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0, table


def test_hostile_names_and_values_are_data(ms):
    hostile = "x'); DROP TABLE TBLS; --"
    _sales(ms)
    ms.catalog.add_partitions([Partition("default", "sales", [hostile])])
    name = make_part_name(["ds"], [hostile])
    assert ms.catalog.get_partition("default", "sales", name).values == [hostile]
    with pytest.raises(NoSuchObjectException):
        ms.catalog.get_table("default", hostile)
    assert "sales" in ms.catalog.get_tables("default")


def test_part_names_follow_hive_escaping():
    assert make_part_name(["ds", "hr"], ["2026-11-21", "11"]) == "ds=2026-11-21/hr=11"
    assert escape_path_name("a:b/c=d%") == "a%3Ab%2Fc%3Dd%25"
    assert make_part_name(["ds"], [None]) == "ds=__HIVE_DEFAULT_PARTITION__"
    assert parse_part_name("ds=a%3Ab%2Fc/hr=__HIVE_DEFAULT_PARTITION__") == [("ds", "a:b/c"), ("hr", None)]


def test_write_ids_and_valid_write_id_list(ms):
    _sales(ms)
    t1 = ms.txns.open_txn()
    assert ms.txns.allocate_table_write_id(t1, "default", "sales") == 1
    ms.txns.commit_txn(t1)
    t2, t3 = ms.txns.open_txn(), ms.txns.open_txn()
    assert ms.txns.allocate_table_write_id(t2, "default", "sales") == 2
    assert ms.txns.allocate_table_write_id(t3, "default", "sales") == 3
    ms.txns.abort_txn(t3)
    valid = ms.txns.get_valid_write_ids("default", "sales")
    assert str(valid) == "default.sales:3:2:2:3"
    assert [valid.is_write_id_valid(i) for i in (0, 1, 2, 3, 4)] == [True, True, False, False, False]
    ms.txns.commit_txn(t2)
    assert str(ms.txns.get_valid_write_ids("default", "sales")) == "default.sales:3:9223372036854775807::3"
    assert ValidWriteIdList.parse("default.t:6:6:6:") == ValidWriteIdList("default.t", 6, frozenset({6}))
    assert str(ValidWriteIdList.parse("default.t:8:9223372036854775807::")) == "default.t:8:9223372036854775807::"


def test_partitioned_table_basic_stats_follow_hive(ms):
    _sales(ms)
    ms.catalog.alter_partition_params("default", "sales", "ds=2026-11-21", {
        "numRows": "10", "numFiles": "1", "totalSize": "100", "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}'})
    ms.catalog.refresh_partitioned_table_params("default", "sales")
    params = ms.catalog.get_table("default", "sales").parameters
    assert params["numRows"] == "10" and params["numPartitions"] == "2"
    assert "COLUMN_STATS_ACCURATE" not in params  # one partition does not know its stats
    ms.catalog.alter_partition_params("default", "sales", "ds=2026-11-22", {
        "numRows": "5", "numFiles": "2", "totalSize": "50", "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}'})
    ms.catalog.refresh_partitioned_table_params("default", "sales")
    params = ms.catalog.get_table("default", "sales").parameters
    assert (params["numRows"], params["numFiles"], params["totalSize"]) == ("15", "3", "150")
    assert params["COLUMN_STATS_ACCURATE"] == '{"BASIC_STATS":"true"}'


@pytest.mark.sqlite_only("a file of the releases that had SQLite only")
def test_a_file_from_an_earlier_schema_version_is_migrated_in_place(tmp_path):
    from colstats_lab.metastore.db.dialect import SQLITE
    from colstats_lab.metastore.db.schema import MIGRATIONS, migration_statements

    path = str(tmp_path / "old.db")
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in migration_statements(0, SQLITE):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO DBS (NAME, DB_LOCATION_URI, CREATE_TIME) VALUES ('old', '/tmp/old', 0)")
    conn.close()
    store = Metastore(path)
    assert "old" in store.catalog.get_all_databases()
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert check.execute("SELECT COUNT(*) FROM TXN_COMPONENTS").fetchone()[0] == 0
    store.close()


def test_a_commit_of_several_changes_is_one_transaction_and_sums_its_table_once_at_the_end(ms):
    """`Metastore.apply`: every change in order, then each touched table's sums added up again from its
    partitions; a commit whose last change fails keeps nothing of the ones before."""
    table = _sales(ms)
    ms.catalog.alter_partitions_params("default", "sales", {
        "ds=2026-11-21": {"numRows": "10", "numFiles": "1", "totalSize": "100"},
        "ds=2026-11-22": {"numRows": "5", "numFiles": "2", "totalSize": "50"}})
    added = Partition("default", "sales", ["2026-11-23"],
                      parameters={"numRows": "40", "numFiles": "4", "totalSize": "400"})
    ms.apply([AddPartitions(table, (added,)), FollowPartitions(table, dropped=("ds=2026-11-21",)),
              AlterPartitionParams(table, (("ds=2026-11-22", (("numRows", "7"),)),))])
    partitions = {p.partName: p.parameters for p in ms.catalog.get_partitions("default", "sales")}
    assert sorted(partitions) == ["ds=2026-11-22", "ds=2026-11-23"]
    params = ms.catalog.get_table("default", "sales").parameters
    assert (params["numPartitions"], params["numRows"], params["numFiles"], params["totalSize"]) == \
        (str(len(partitions)), str(sum(int(p["numRows"]) for p in partitions.values())),
         str(sum(int(p["numFiles"]) for p in partitions.values())),
         str(sum(int(p["totalSize"]) for p in partitions.values())))

    with pytest.raises(NoSuchObjectException, match="partition ds=nope of default.sales does not exist"):
        ms.apply([AddPartitions(table, (Partition("default", "sales", ["2026-11-24"]),)),
                  AlterPartitionParams(table, (("ds=nope", (("numRows", "1"),)),))])
    assert sorted(p.partName for p in ms.catalog.get_partitions("default", "sales")) == sorted(partitions)
    assert ms.catalog.get_table("default", "sales").parameters == params


def test_a_server_that_cannot_be_used_is_one_line_naming_the_url_without_its_password(postgres, tmp_path):
    from colstats_lab.cli import main as cli_main

    unreachable = f"postgresql://postgres:{pg_server.PASSWORD}@127.0.0.1:1/lab"
    wrong_password = postgres.url("postgres", password="not-the-password")
    missing = postgres.url("no_such_database")
    cases = [(unreachable, "cannot reach the metastore's PostgreSQL server at postgresql://postgres@127.0.0.1:1/lab"),
             (wrong_password, f"at postgresql://postgres@127.0.0.1:{postgres.port}/postgres refused the user's password"),
             (missing, "database no_such_database does not exist on the metastore's PostgreSQL server at "
                       f"postgresql://postgres@127.0.0.1:{postgres.port}/no_such_database: create it")]
    newer = postgres.new_database(migrated=False)  # the lab makes its tables in an empty database
    Metastore(newer, str(tmp_path / "warehouse")).close()
    with connect(newer) as other:
        other.execute("UPDATE COLSTATS_SCHEMA_VERSION SET MIGRATIONS = 999")
    cases.append((newer, "metastore schema version 999 at postgresql://postgres@127.0.0.1:"))
    for url, message in cases:
        with pytest.raises(MetaException) as raised:
            Metastore(url, str(tmp_path / "warehouse"))
        assert message in str(raised.value) and pg_server.PASSWORD not in str(raised.value)
        assert "not-the-password" not in str(raised.value) and "\n" not in str(raised.value)
    # the CLI: the same line, exit code 2, no traceback
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert cli_main(["--home", str(tmp_path / "home"), "--metastore", wrong_password, "sql", "SHOW TABLES"]) == 2
    assert err.getvalue().count("\n") == 1 and "refused the user's password" in err.getvalue()


def test_partitions_added_in_one_call_keep_their_own_values_parameters_location_and_skew(ms):
    """A write adds thousands of partitions in one call, stored a batch a schema table (ids drawn ahead on
    PostgreSQL): each partition's key values, parameters, location and skew spec must stay its own."""
    ms.catalog.create_table(Table("default", "events", [FieldSchema("v", "bigint")],
                          [FieldSchema("ds", "string"), FieldSchema("hr", "string")], location="/tmp/events"))
    asked = [Partition("default", "events", [f"2026-{1 + i // 600:02d}-{1 + i % 28:02d}", f"{i % 24:02d}"],
                       location=f"/tmp/events/p{i}", parameters={"numFiles": str(i), "tag": f"t{i % 7}"})
             for i in range(2_500)]
    for p in asked:
        p.keys = ["ds", "hr"]
    asked = list({p.partName: p for p in asked}.values())
    asked[3].skewedInfo, asked[3].storedAsSubDirectories = SkewedInfo(["v"], [["1"], ["2"]]), True
    assert len(ms.catalog.add_partitions(asked)) == len(asked)
    stored = {p.partName: p for p in ms.catalog.get_partitions("default", "events")}
    assert sorted(stored) == sorted(p.partName for p in asked)
    for p in asked:
        assert (stored[p.partName].location, stored[p.partName].parameters) == (p.location, p.parameters), p.partName
    assert stored[asked[3].partName].skewedInfo.skewedColValues == [["1"], ["2"]]
    assert stored[asked[3].partName].storedAsSubDirectories
    assert all(p.skewedInfo is None for name, p in stored.items() if name != asked[3].partName)
    conn = connect(ms.path)
    key_values: dict[str, list] = {}
    for name, value in conn.execute("SELECT P.PART_NAME, K.PART_KEY_VAL FROM PARTITION_KEY_VALS K JOIN PARTITIONS P "
                                    "ON P.PART_ID = K.PART_ID ORDER BY P.PART_NAME, K.INTEGER_IDX").fetchall():
        key_values.setdefault(name, []).append(value)
    assert key_values == {p.partName: p.values for p in asked}


@pytest.mark.postgresql_only("writers of different tables run side by side on a server; SQLite's follow each other")
def test_a_commit_of_one_tables_statistics_holds_off_that_tables_write_ids_only(new_metastore_location, new_metastore):
    """While one process commits statistics of table a, another opens transactions and takes write IDs of table b
    at once, and waits for the commit only to take a write ID of a (whose next write ID that commit may read)."""
    import threading

    location = new_metastore_location()
    committing, other = new_metastore(location), new_metastore(location)
    for name in ("a", "b"):
        committing.catalog.create_table(Table("default", name, [FieldSchema("x", "bigint")],
                                      parameters={"transactional": "true"}))
    with committing.transaction({("default", "a")}):  # a commit of a's statistics, in progress
        txn = other.txns.open_txn()
        assert other.txns.allocate_table_write_id(txn, "default", "b") == 1
        other.txns.heartbeat(txn)
        taken: list[int] = []
        waiting = threading.Thread(target=lambda: taken.append(other.txns.allocate_table_write_id(txn, "default", "a")))
        waiting.start()
        waiting.join(timeout=1.0)
        assert waiting.is_alive() and taken == []  # held off by a's commit
    waiting.join(timeout=30)
    assert taken == [1]
    other.txns.commit_txn(txn)
    assert other.txns.get_valid_write_ids("default", "a").high_watermark == 1


def test_a_write_that_would_wait_leaves_no_transaction_behind(new_metastore_location, new_metastore):
    """A reader's short write (the segments' refresh) skipped because another writer held the lock left its
    BEGIN open on PostgreSQL, and the process's next read failed ("SET TRANSACTION ISOLATION LEVEL must be
    called before any query"): an auto-analyze worker died of it beside another worker."""
    from colstats_lab.metastore.db import WouldWait

    location = new_metastore_location()
    holder, reader = new_metastore(location), new_metastore(location)
    holder.catalog.create_table(Table("default", "a", [FieldSchema("x", "bigint")]))
    with holder.transaction():
        with pytest.raises(WouldWait), reader.db.without_waiting(), reader.db.transaction():
            pass
        with reader.db.snapshot():
            assert reader.catalog.get_tables("default") == ["a"]
    with reader.db.transaction():  # the holder is done: the reader writes
        pass


def test_a_former_flat_call_names_the_repository_it_lives_in_now(ms):
    """The Metastore keeps no forwarders: `metastore.get_table` and a setting read off the Metastore each fail
    with one line naming where it is now, and the new spellings answer."""
    for name, where in [("get_table", "catalog"), ("get_aggr_stats_for", "column_stats"), ("open_txn", "txns"),
                        ("partition_state", "segments"), ("stats_compliance", "accuracy"), ("keep_run", "runs"),
                        ("txn_stats_enabled", "settings")]:
        with pytest.raises(AttributeError, match=rf"^Metastore has no {name}: it is metastore\.{where}\.{name}$"):
            getattr(ms, name)
    with pytest.raises(AttributeError):
        ms.txn_stats_enabled = False  # a setting set on the Metastore would change nothing: refused
    assert ms.catalog.get_tables("default") == [] and ms.settings.txn_stats_enabled

"""Hostile input: names that are paths, values that end a string, statements pasted together, metastore URLs
with passwords, odd numbers. Each test tried the attack on the lab before its fix (the closing note of issue 75
lists them); each asserts what a careful user would check: nothing ran that was not asked for, nothing outside the
lab's folders was touched, one line names the problem."""
from __future__ import annotations

import datetime as dt
import math
import os
import socket
from decimal import Decimal

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colstats_lab.cli import dashboard_token
from colstats_lab.cli import main as cli_main
from colstats_lab.errors import ColstatsError, InvalidArgument, MetaException, ParseError, ValueOutOfRange
from colstats_lab.metastore import OWNED_LOCATION, FieldSchema, InvalidObjectException, Metastore, Table
from colstats_lab.metastore.db import check_location, redacted
from colstats_lab.pruning.page_filter import count_query, page_filter
from colstats_lab.quoting import column_ref, identifier, literal, qualified, string_literal
from colstats_lab.sql import parse_one, parse_partition_spec
from colstats_lab.sql.lexer import TokenKind, tokenize

# any text a name or a value may hold: quotes, backslashes, backquotes, `;`, `--`, NUL, line breaks, any script
HOSTILE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=24) | st.sampled_from(
    ["a\\", "'", "\\'", "''", "`", "``", "); DROP TABLE victim; --", "x' OR '1'='1", "\x00", "a\nb", "--", "/*", "ü"])


# ---- one quoting helper, read back the same by the lab's parser and by Spark -----------------------------------

@settings(max_examples=300, deadline=None)
@given(value=HOSTILE, name=HOSTILE.filter(bool))
def test_any_text_reads_back_as_itself_from_the_labs_lexer(value, name):
    (string, end) = tokenize(string_literal(value))
    assert (string.kind, string.text, end.kind) == (TokenKind.STRING, value, TokenKind.END)
    (quoted, end) = tokenize(identifier(name))
    assert (quoted.kind, quoted.text, end.kind) == (TokenKind.QUOTED, name, TokenKind.END)
    (item,) = parse_partition_spec(f"{identifier(name)}={string_literal(value)}")
    assert (item.key, item.value, item.is_null) == (name.lower(), value, False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=HOSTILE, name=HOSTILE.filter(lambda n: bool(n) and "\x00" not in n))
def test_any_text_reads_back_as_itself_from_sparks_parser(spark, value, name):
    frame = spark.sql(f"SELECT {string_literal(value)} AS {identifier(name)}")
    assert frame.columns == [name] and frame.first()[0] == value


@pytest.mark.parametrize("value, type_name", [
    (math.nan, "double"), (math.inf, "double"), (-math.inf, "double"), (1e-7, "double"), (-2.5e300, "double"),
    (0.1 + 0.2, "double"), (Decimal("1E+3"), "decimal(10,2)"), (Decimal("-0.000000000000000001"), "decimal(38,18)"),
    (dt.date(1, 1, 1), "date"), (dt.date(9999, 12, 31), "date"), (dt.datetime(2026, 1, 1, 12, 0, 0, 5), "timestamp"),
    (True, "boolean"), (-(2 ** 63), "bigint"), (b"\x00'\\`", "binary"), ("It's a \\ `name`", "string")])
def test_every_literal_spark_reads_back_as_its_value(spark, value, type_name):
    got = spark.sql(f"SELECT {literal(value, type_name)} AS v").first().v
    if isinstance(value, float) and math.isnan(value):
        assert math.isnan(got)
    elif type_name == "timestamp":
        assert got.replace(tzinfo=None) == value
    elif type_name == "binary":
        assert bytes(got) == value
    else:
        assert got == value


def test_a_column_reference_is_one_name_whatever_it_holds():
    assert column_ref("a.b") == "`a.b`" and column_ref("p`.`q") == "`p``.``q`" and column_ref("a", "b") == "`a`.`b`"
    assert qualified("default", "t") == "`default`.`t`"


# ---- statements the lab writes: skew reports, the command line ------------------------------------------------

def test_a_skew_reports_statement_takes_hostile_values_as_values(lab):
    lab.sql("CREATE TABLE victim (id BIGINT)")
    lab.sql("CREATE TABLE sk (k STRING) PARTITIONED BY (ds STRING)")
    hostile = ["a\\", "); DROP TABLE victim; --", "x' OR '1'='1"]
    lab.tables["sk"].write(pd.DataFrame({"k": hostile * 60 + [str(i) for i in range(60)]}), partition={"ds": "d1"})
    report = lab.tables["sk"].skew("k")
    assert sorted(report.recommended) == sorted(hostile)
    lab.sql(report.statement)  # what the skew guide tells a user to run
    assert lab.metastore.catalog.table_exists("default", "victim")
    skewed = lab.metastore.catalog.get_table("default", "sk").skewedInfo
    assert sorted(v[0] for v in skewed.skewedColValues) == sorted(hostile)


def test_a_nothing_to_skew_comment_keeps_a_column_name_with_a_line_break_on_its_line(lab):
    lab.sql("CREATE TABLE victim (id BIGINT)")
    frame = pd.DataFrame({"x\nDROP TABLE victim": [str(i) for i in range(200)]})
    folder = os.path.join(lab.home, "flat")
    os.makedirs(folder)
    frame.to_parquet(os.path.join(folder, "part-0.parquet"))
    lab.register_external("flat", folder)
    report = lab.tables["flat"].skew("x\nDROP TABLE victim")
    assert report.statement.startswith("-- no value of") and "\n" not in report.statement
    lab.sql(report.statement + "\nSELECT 1")  # the comment ends where the lab put it
    assert lab.metastore.catalog.table_exists("default", "victim")


def test_the_command_lines_partition_is_parsed_never_pasted(lab, spark, capsys):
    lab.sql("CREATE TABLE victim3 (id BIGINT)")
    lab.sql("CREATE TABLE p (id BIGINT) PARTITIONED BY (ds STRING)")
    lab.tables["p"].write(spark.createDataFrame([(1,)], "id bigint"), partition={"ds": "d1"})
    injected = "ds='d1') COMPUTE STATISTICS NOSCAN; DROP TABLE victim3; --"
    for args in (["analyze", "p", "--noscan", "--partition", injected],
                 ["describe", "p", "--partition", injected]):
        assert cli_main(["--home", lab.home, *args]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("colstats-lab: unexpected 'COMPUTE' after the partition spec") and "Traceback" not in err
    assert lab.metastore.catalog.table_exists("default", "victim3")
    assert cli_main(["--home", lab.home, "analyze", "p", "--noscan", "--partition", "ds='d1'"]) == 0
    assert cli_main(["--home", lab.home, "describe", "p", "--partition", "ds = 'd1'"]) == 0


# ---- names are names -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["/{outside}", "a/b", "..", "x\x00y", "x y", "a\nb", "a\\b", "ü/x"])
def test_a_name_that_would_be_a_path_is_refused_before_anything_is_written(lab, tmp_path, name):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "sentinel").write_text("keep me")
    name = name.format(outside=str(outside).lstrip("/"))
    tables_before = lab.metastore.catalog.get_tables("default")
    warehouse = os.listdir(lab.metastore.catalog.get_database_location("default")) \
        if os.path.isdir(lab.metastore.catalog.get_database_location("default")) else []
    for statement in (f"CREATE TABLE {identifier(name)} (id BIGINT)", f"CREATE DATABASE {identifier(name)}",
                      f"DROP TABLE {identifier(name)}"):
        with pytest.raises(ColstatsError) as refused:
            lab.sql(statement)
        assert "\n  " in str(refused.value) or "does not exist" in str(refused.value)  # a caret, or not found
    with pytest.raises(ColstatsError):
        lab.register_external(name, str(outside))
    assert lab.metastore.catalog.get_tables("default") == tables_before
    assert (os.listdir(lab.metastore.catalog.get_database_location("default"))
            if os.path.isdir(lab.metastore.catalog.get_database_location("default")) else []) == warehouse
    assert (outside / "sentinel").read_text() == "keep me"


def test_drop_deletes_only_the_folder_the_lab_made_and_never_one_holding_another_table(lab, spark, tmp_path):
    lab.sql("CREATE TABLE a (id BIGINT)")
    lab.tables["a"].write(spark.createDataFrame([(1,)], "id bigint"))
    folder = lab.metastore.catalog.get_table("default", "a").location
    assert lab.metastore.catalog.get_table("default", "a").parameters[OWNED_LOCATION] == folder
    # a table another version of the lab placed inside `a`'s folder (a name such as `a/b` once did)
    inner = os.path.join(folder, "b")
    os.makedirs(inner)
    pq.write_table(pa.table({"id": [1, 2, 3, 4, 5]}), os.path.join(inner, "part-0.parquet"))
    lab.metastore.catalog.create_table(Table("default", "inner_b", [FieldSchema("id", "bigint")], location=inner,
                                     tableType="EXTERNAL_TABLE", parameters={"EXTERNAL": "TRUE"}))
    message = lab.sql("DROP TABLE a").message
    assert "were kept: the folder also holds" in message and os.path.exists(os.path.join(inner, "part-0.parquet"))
    # a managed table the lab has no record of making (an old metastore's, a copied one's) keeps its files
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "sentinel").write_text("keep me")
    lab.metastore.catalog.create_table(Table("default", "stray", [FieldSchema("id", "bigint")], location=str(elsewhere)))
    assert "the lab did not create that folder" in lab.sql("DROP TABLE stray").message
    assert (elsewhere / "sentinel").read_text() == "keep me"
    # the lab's own folder, holding nothing of another table, goes with its table
    lab.sql("CREATE TABLE c (id BIGINT)")
    c_folder = lab.metastore.catalog.get_table("default", "c").location
    lab.tables["c"].write(spark.createDataFrame([(1,)], "id bigint"))
    assert lab.sql("DROP TABLE c").message == "Dropped table default.c and its statistics."
    assert not os.path.exists(c_folder)


def test_create_refuses_a_folder_that_holds_files_already(lab):
    folder = os.path.join(lab.metastore.catalog.get_database_location("default"), "left_behind")
    os.makedirs(folder)
    open(os.path.join(folder, "part-0.parquet"), "w").close()
    with pytest.raises(ColstatsError, match="its folder .* exists and is not empty"):
        lab.sql("CREATE TABLE left_behind (id BIGINT)")
    assert not lab.metastore.catalog.table_exists("default", "left_behind") and os.listdir(folder) == ["part-0.parquet"]


def test_a_top_level_column_and_a_struct_leaf_of_one_name_are_kept_apart(lab, tmp_path):
    # `p`.`q` (a column whose name holds backquotes) beside struct p's field q: each its own figures
    folder = tmp_path / "ticks"
    folder.mkdir()
    pq.write_table(pa.table({"p`.`q": [1, 2, 3], "p": [{"q": 10}, {"q": 20}, {"q": 30}]}), folder / "part-0.parquet")
    lab.register_external("ticks", str(folder))
    lab.sql("ANALYZE TABLE ticks COMPUTE STATISTICS FOR ALL COLUMNS")
    stats = lab.tables["ticks"].inspect.stats().set_index("column")
    assert (stats.loc["p`.`q", "min"], stats.loc["p`.`q", "max"]) == (1, 3)
    assert (stats.loc["p.q", "min"], stats.loc["p.q", "max"]) == (10, 30)
    # `a.b` beside struct a's field b would share a statistics name: refused by name, never mixed
    clash = tmp_path / "clash"
    clash.mkdir()
    pq.write_table(pa.table({"a.b": [1], "a": [{"b": 2}]}), clash / "part-0.parquet")
    with pytest.raises(InvalidObjectException, match="under the name a.b"):
        lab.register_external("clash", str(clash))


# ---- metastore URLs ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("url, shown", [
    ("postgresql://lab:s3cret@db:5432/colstats", "postgresql://lab@db:5432/colstats"),
    ("postgresql://db/colstats?user=lab&password=s3cret", "postgresql://db/colstats?user=lab"),
    ("postgresql://lab@db/colstats?sslpassword=s3cret&sslmode=verify-full", "postgresql://lab@db/colstats?sslmode=verify-full"),
    ("postgres://lab:s3cret@db/colstats?passfile=/etc/colstats/pgpass", "postgres://lab@db/colstats?passfile=/etc/colstats/pgpass"),
    ("postgresql://lab:s3cret@db:notaport/colstats", "postgresql://lab@db:notaport/colstats"),
    ("mysql://root:s3cret@db/colstats", "mysql://root@db/colstats"),
])
def test_every_credential_is_left_out_where_a_url_is_shown(url, shown):
    assert redacted(url) == shown and "s3cret" not in redacted(url)


def test_a_metastore_url_of_another_scheme_is_refused_and_a_path_stays_a_file(tmp_path, capsys):
    with pytest.raises(InvalidArgument, match="is a mysql:// URL; the lab takes a PostgreSQL URL") as refused:
        check_location("mysql://root:s3cret@db/colstats")
    assert "s3cret" not in str(refused.value)
    os.chdir(tmp_path)
    assert cli_main(["--metastore", "mysql://root:s3cret@db/colstats", "check"]) == 2
    err = capsys.readouterr().err
    assert "mysql://" in err and "s3cret" not in err and os.listdir(tmp_path) == []  # no folder named after it
    assert check_location("relative/metastore.db") == "relative/metastore.db"
    assert cli_main(["--metastore", "postgresql://lab:s3cret@127.0.0.1:notaport/colstats", "check"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "s3cret" not in err and "notaport" in err


def test_a_damaged_metastore_or_a_home_that_cannot_be_a_folder_is_one_line(tmp_path, capsys):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    for args, said in ((["--metastore", str(garbage), "check"], "is not a SQLite database"),
                       (["--home", str(a_file), "check"], "cannot be a folder here"),
                       (["--home", "/proc/colstats", "check"], "cannot be a folder here")):
        assert cli_main(args) == 2
        err = capsys.readouterr().err
        assert said in err and err.count("\n") == 1, err
    with pytest.raises(MetaException, match="is not a SQLite database"):
        Metastore(str(garbage), str(tmp_path / "warehouse"))


# ---- odd values ------------------------------------------------------------------------------------------

def _write_partitions(root, partitions: dict[str, int]) -> None:
    for folder, rows in partitions.items():
        os.makedirs(os.path.join(root, folder))
        pq.write_table(pa.table({"v": list(range(rows))}), os.path.join(root, folder, "part-0.parquet"))


def test_nan_and_the_infinities_are_partition_values_as_spark_counts_them(lab, spark, tmp_path):
    root = str(tmp_path / "odd_keys")
    _write_partitions(root, {"k=NaN": 300, "k=1.50": 100, "k=Infinity": 50, "k=-Infinity": 20})
    lab.register_external("odd_keys", root, partition_types={"k": "double"})
    lab.sql("ANALYZE TABLE odd_keys COMPUTE STATISTICS FOR ALL COLUMNS")
    files = spark.read.parquet(root)
    for condition in ("k = 'NaN'", "k = 1.5", "k > 1", "k >= 'Infinity'", "k < 0", "k IN ('NaN', '-Infinity')",
                      "k BETWEEN 1 AND 'NaN'", "NOT k = 'NaN'"):
        answer = lab.sql(f"SELECT count(*) FROM odd_keys WHERE {condition}")
        assert answer.df.iloc[0, 0] == files.where(condition).count(), condition
    assert lab.sql("SELECT count(*) FROM odd_keys WHERE k = 'NaN'").answered_from == "stats"
    described = lab.sql("DESCRIBE FORMATTED odd_keys PARTITION (k='Infinity') v").df.set_index("info_name")
    assert described.loc["max", "info_value"] == "49"  # the 50 rows of folder k=Infinity
    lab.sql("ANALYZE TABLE odd_keys PARTITION (k=1.5) COMPUTE STATISTICS")  # the folder spells it 1.50
    # a value Spark cannot read as a double is named before anything is registered
    bad = str(tmp_path / "bad_keys")
    _write_partitions(bad, {"k=inf": 3, "k=1": 3})
    with pytest.raises(InvalidArgument, match=r"folder .*k=inf: .*'inf' is not a double"):
        lab.register_external("bad_keys", bad, partition_types={"k": "double"})
    assert not lab.metastore.catalog.table_exists("default", "bad_keys")
    # the lab writes the infinities as Spark reads them back
    lab.sql("CREATE TABLE written (v BIGINT) PARTITIONED BY (k DOUBLE)")
    lab.tables["written"].write(pd.DataFrame({"v": [1, 2]}), partition={"k": float("inf")})
    assert lab.metastore.catalog.get_partition_names("default", "written") == ["k=Infinity"]
    assert lab.tables["written"].to_spark().where("k = 'Infinity'").count() == 2


def test_a_date_past_9999_is_one_line_naming_its_file_and_column_and_analyze_all_goes_on(lab, tmp_path, capsys):
    lab.sql("CREATE DATABASE far")
    folder = tmp_path / "future"
    folder.mkdir()
    pq.write_table(pa.table({"d": pa.array([1, 3_000_000], pa.int32()).cast(pa.date32()), "v": [1, 2]}),
                   folder / "part-0.parquet")
    lab.register_external("far.future", str(folder))
    lab.sql("CREATE TABLE far.fine (v BIGINT)")
    lab.tables["far.fine"].write(pd.DataFrame({"v": [1, 2, 3]}))
    with pytest.raises(ValueOutOfRange, match=r"part-0.parquet: column d holds a date outside 0001-01-01"):
        lab.sql("ANALYZE TABLE far.future COMPUTE STATISTICS FOR ALL COLUMNS NOSCAN")
    assert cli_main(["--home", lab.home, "analyze", "--all", "far"]) == 1  # a table not analyzed, as the docs say
    out = capsys.readouterr().out
    assert "Analyzed 1 of 2 table(s) in far; not analyzed: far.future" in out and "Traceback" not in out


def test_deep_nesting_is_one_line_and_a_long_or_chain_is_answered(lab, spark):
    lab.sql("CREATE TABLE chain (k STRING, v BIGINT) PARTITIONED BY (ds STRING)")
    lab.tables["chain"].write(pd.DataFrame({"k": ["1", "b", "999"], "v": [1, 2, 3], "ds": ["1", "y", "2"]}))
    with pytest.raises(ParseError, match="nests parentheses more than 32 deep"):
        lab.sql("SELECT count(*) FROM chain WHERE " + "(" * 50 + "k = 'a'" + ")" * 50)
    for key in ("k", "ds"):
        ored = " OR ".join(f"{key} = '{i}'" for i in range(1000))
        assert lab.sql(f"SELECT count(*) FROM chain WHERE {ored}").df.iloc[0, 0] == 2
        assert lab.explain(f"SELECT count(*) FROM chain WHERE {ored}").summary()
    anded = " AND ".join(f"v <> {i}" for i in range(1000))
    assert lab.sql(f"SELECT count(*) FROM chain WHERE {anded}").df.iloc[0, 0] == 0


def test_every_setting_is_checked_against_its_range(lab):
    for key, value, said in (("colstats.history.sketches", "100000000000000000000000", "takes at most 2,147,483,647"),
                             ("colstats.history.sketches", "1e23", "takes a whole number"),
                             ("hive.txn.heartbeat.interval", "1e300", "takes at most 604,800 seconds"),
                             ("hive.txn.timeout", "inf", "positive number of seconds"),
                             ("spark.master", "local[1]", "is chosen when the lab starts Spark")):
        with pytest.raises(InvalidArgument, match=said):
            lab.sql(f"SET {key}={value}")
    lab.spark  # noqa: B018 - started: what is fixed at start is refused now, not taken and ignored
    with pytest.raises(InvalidArgument, match="is fixed when Spark starts"):
        lab.set("spark.driver.memory", "8g")


# ---- the dashboard --------------------------------------------------------------------------------------------

def _events_table() -> Table:
    return Table("default", "ev", [FieldSchema("x", "int"), FieldSchema("note", "string"),
                                   FieldSchema("payload", "struct<user:struct<id:bigint>>")], [FieldSchema("ds", "string")])


@pytest.mark.parametrize("text, said", [
    ("cast(java_method('java.lang.System', 'getenv', 'COLSTATS_METASTORE') AS INT) = 1", "function JAVA_METHOD"),
    ("reflect('java.io.File', 'createTempFile', 'pwned', '.x') IS NULL", "function REFLECT"),
    ("x IN (SELECT x FROM ev)", "IN takes a list of values"),
    ("x = (SELECT max(x) FROM ev)", "a query is not allowed"),
    ("input_file_name() = 'a'", "function INPUT_FILE_NAME"),
    ("nosuch = 1", "column nosuch does not exist in table default.ev"),
    ("x = 1; DROP TABLE ev", "Invalid expression"),
    ("cast(x AS map<string,int>) IS NULL", "casts to plain types only"),
])
def test_a_pages_filter_passes_only_the_allowlist(text, said):
    with pytest.raises(ParseError, match=said) as refused:
        page_filter(text, _events_table())
    assert refused.value.pretty().count("\n") == 2  # one line, the text, the caret


def test_a_pages_filter_is_rebuilt_by_sqlglot_from_the_checked_tree():
    table = _events_table()
    assert count_query(table, page_filter("x = 3 AND lower(note) LIKE 'a%' -- */ OR 1=1", table)) == \
        "SELECT COUNT(*) FROM `default`.`ev` WHERE x = 3 AND LOWER(note) LIKE 'a%'"
    assert count_query(table, page_filter("payload.user.id IN (1, 2) OR ds BETWEEN 'a' AND 'b'", table)) == \
        "SELECT COUNT(*) FROM `default`.`ev` WHERE payload.user.id IN (1, 2) OR ds BETWEEN 'a' AND 'b'"
    assert page_filter("   ", table) is None


def test_the_dashboard_asks_for_a_token_off_this_machine_and_never_moves_its_port(tmp_path, capsys):
    assert dashboard_token("127.0.0.1", None) is None and dashboard_token("::1", None) is None
    made = dashboard_token("0.0.0.0", None)
    assert made is not None and len(made) >= 32 and made != dashboard_token("0.0.0.0", None)
    with pytest.raises(InvalidArgument, match="16 characters"):
        dashboard_token("0.0.0.0", "short")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert cli_main(["--home", str(tmp_path / "lab"), "dashboard", "--port", str(port)]) == 2
    assert f"port {port} on 127.0.0.1 is taken" in capsys.readouterr().err


def test_a_lab_home_and_names_round_trip_through_the_cli_quoted(lab, spark, capsys):
    lab.sql("CREATE TABLE `Grüße` (`odd ``col``` STRING)")
    lab.tables["grüße"].write(spark.createDataFrame([("a",), (None,)], "`odd ``col``` string"))
    assert cli_main(["--home", lab.home, "analyze", "Grüße", "--columns", "odd `col`"]) == 0
    assert cli_main(["--home", lab.home, "describe", "grüße", "odd `col`"]) == 0
    assert "num_nulls" in capsys.readouterr().out
    assert parse_one(f"ANALYZE TABLE {identifier('Grüße')} COMPUTE STATISTICS").table.name == "grüße"


@pytest.mark.slow
def test_a_dashboard_served_with_a_token_shows_nothing_without_it(lab):
    import urllib.request

    from served import free_port, serving

    from colstats_lab.cli import DASHBOARD_NOTEBOOK, voila_command

    port, token = free_port(), dashboard_token("0.0.0.0", None)
    env = {**os.environ, "COLSTATS_HOME": lab.home, "PLOOMBER_STATS_ENABLED": "false"}
    with serving(voila_command(DASHBOARD_NOTEBOOK, port, token=token), port, os.path.join(lab.home, "voila.log"),
                 env=env) as url:
        without = urllib.request.urlopen(url, timeout=60)
        assert "/login" in without.url and "colstats_lab" not in without.read().decode()
        with urllib.request.urlopen(f"{url}?token={token}", timeout=120) as page:
            assert page.status == 200 and "/login" not in page.url

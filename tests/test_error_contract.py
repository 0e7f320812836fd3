"""The error contract, fuzzed: whatever a user types, only the package's errors come out, each naming
what it is about, and a failed command leaves the metastore and the warehouse as they were.

Every example starts from a copy of one small lab (a partitioned managed table with statistics, an
unpartitioned one and an external one), so that a statement that happens to succeed does not change
what the next example meets.
"""
from __future__ import annotations

import inspect
import os
import re

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from lab_copies import copy_lab_home
from metastore_rows import connect
from pyspark.errors import AnalysisException

import colstats_lab
from colstats_lab import Lab
from colstats_lab.errors import ColstatsError, ParseError

pytestmark = pytest.mark.both_backends  # a metastore behaviour: on SQLite and on PostgreSQL

# what may change in a failed command: its own transaction, aborted, and the write ID it took
TXN_TABLES = ("TXNS", "TXN_TO_WRITE_ID", "NEXT_WRITE_ID", "TXN_COMPONENTS")

STATEMENTS = [
    "ANALYZE TABLE sales PARTITION (ds='d1') COMPUTE STATISTICS FOR COLUMNS x, note",
    "ANALYZE TABLE sales PARTITION (ds) COMPUTE STATISTICS",
    "ANALYZE TABLE flat COMPUTE STATISTICS NOSCAN",
    "ANALYZE TABLE ext COMPUTE STATISTICS FOR ALL COLUMNS",
    "ANALYZE TABLE sales COLUMNS (x, note) REFRESH METADATA 'FILE' LEVEL COMPUTE STATISTICS (x) SAMPLE 50 PERCENT",
    "ANALYZE TABLE sales DROP METADATA IF EXISTS",
    "CREATE TABLE t2 (a INT, b DECIMAL(10,2), `c d` STRING) PARTITIONED BY (p STRING) "
    "SKEWED BY (a) ON (1, 2) STORED AS DIRECTORIES",
    "CREATE TABLE IF NOT EXISTS flat (a INT)",
    "DROP TABLE IF EXISTS nosuch",
    "CREATE DATABASE IF NOT EXISTS db2 COMMENT 'x'",
    "DROP DATABASE IF EXISTS db3 CASCADE",
    "USE default",
    "ALTER TABLE sales ADD IF NOT EXISTS PARTITION (ds='d9')",
    "ALTER TABLE sales DROP IF EXISTS PARTITION (ds='d8')",
    "ALTER TABLE sales SKEWED BY (x) ON (1, 2) STORED AS DIRECTORIES",
    "ALTER TABLE sales SET SKEWED LOCATION (1='hot')",
    "ALTER TABLE sales NOT SKEWED",
    "DESCRIBE FORMATTED sales PARTITION (ds='d1') x",
    "DESCRIBE sales",
    "SHOW PARTITIONS sales PARTITION (ds='d1')",
    "SHOW TABLES IN default",
    "SET hive.txn.timeout = 300",
    "SET metastore.retrieval.retry_attempts = 2",
    "SELECT count(*), min(x), max(x) FROM sales WHERE ds = 'd1'",
    "SELECT x, note FROM sales WHERE x > 1 AND note IS NOT NULL",
]

ODD_TOKENS = st.sampled_from([
    "(", ")", ",", ";", "=", "'", "`", "--", "/*", "*/", "\"", ".", "*", "-", "0", "-1", "1e400", "NULL",
    "PARTITION", "COLUMNS", "FOR", "TABLE", "ANALYZE", "COMPUTE", "STATISTICS", "LEVEL", "SAMPLE", "PERCENT",
    "'ds=x/y'", "`we ird`", "'%2F'", "'ünï'", "`ünï`", "'a''b'", "nosuch", "ds", "x", "DECIMAL(38,18)",
    "'" + "z" * 10_000 + "'", "`" + "q" * 300 + "`",
])
RANDOM_NAMES = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
TOKEN = re.compile(r"'(?:[^']|'')*'|`[^`]*`|\w+|\S")


@st.composite
def mutated_statements(draw) -> str:
    tokens = TOKEN.findall(draw(st.sampled_from(STATEMENTS)))
    for _ in range(draw(st.integers(1, 3))):
        what = draw(st.sampled_from(["delete", "insert", "swap", "replace", "name"]))
        i = draw(st.integers(0, len(tokens) - 1))
        if what == "delete" and len(tokens) > 1:
            del tokens[i]
        elif what == "insert":
            tokens.insert(i, draw(ODD_TOKENS))
        elif what == "swap":
            j = draw(st.integers(0, len(tokens) - 1))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif what == "replace":
            tokens[i] = draw(ODD_TOKENS)
        else:  # a random identifier, quoted or not
            name = draw(RANDOM_NAMES)
            tokens[i] = draw(st.sampled_from([name, "`" + name.replace("`", "") + "`",
                                              "'" + name.replace("'", "''") + "'"]))
    return " ".join(tokens)


@pytest.fixture(scope="module")
def template(tmp_path_factory, spark):
    """A lab folder to copy: sales (partitioned, analyzed), flat (unpartitioned), ext (external)."""
    home = tmp_path_factory.mktemp("contract") / "template"
    lab = Lab(home=str(home), spark=spark)
    lab.sql("CREATE TABLE sales (id BIGINT, x INT, note STRING) PARTITIONED BY (ds STRING)")
    lab.tables["sales"].write(pd.DataFrame({"id": [1, 2, 3], "x": pd.array([1, None, 3], dtype="Int32"),
                                            "note": ["a", None, "c"]}), partition={"ds": "d1"})
    lab.sql("ANALYZE TABLE sales PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS x, note")
    lab.sql("CREATE TABLE flat (a INT)")
    external = home / "outside"
    os.makedirs(external / "k=1")
    pq.write_table(pa.table({"v": [1, 2]}), external / "k=1" / "part-0.parquet")
    lab.register_external("ext", str(external))
    lab.close()
    return home


@pytest.fixture
def fresh(template, tmp_path_factory, spark):
    """A function that gives a new lab on a copy of the template."""
    root = tmp_path_factory.mktemp("examples")
    count = iter(range(10**9))
    opened: list[Lab] = []

    def make() -> Lab:
        home = root / f"ex{next(count)}"
        copy_lab_home(template, home)
        lab = Lab(home=str(home), spark=spark)
        opened.append(lab)
        return lab

    yield make
    for lab in opened:
        lab.close()


def metastore_dump(lab: Lab) -> list[str]:
    conn = connect(lab.metastore.url)
    try:
        return conn.dump(exclude=TXN_TABLES)
    finally:
        conn.close()


def warehouse_listing(lab: Lab) -> list[tuple[str, int]]:
    out = []
    for root, _dirs, files in os.walk(lab.home):
        for name in files:
            if name.startswith("metastore.db"):
                continue
            path = os.path.join(root, name)
            out.append((os.path.relpath(path, lab.home), os.path.getsize(path)))
    return sorted(out)


def _names_input(exc: ColstatsError, text: str) -> bool:
    """The message points at the input: a caret within it, or one of its words."""
    if isinstance(exc, ParseError):
        return exc.sql == text and 0 <= exc.position <= len(text) and exc.excerpt in text
    message = str(exc).lower()
    words = {w.strip("`'\"").lower() for w in TOKEN.findall(text)}
    return any(len(w) > 0 and w in message for w in words if w.strip())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@pytest.mark.slow
@given(text=mutated_statements())
def test_mutated_statements_raise_only_our_errors_and_change_nothing(fresh, text):
    lab = fresh()
    before, files_before = metastore_dump(lab), warehouse_listing(lab)
    try:
        lab.sql(text)
    except ColstatsError as exc:
        assert _names_input(exc, text), f"{type(exc).__name__}: {exc} does not name anything in {text!r}"
        assert metastore_dump(lab) == before, f"{text!r} failed but changed the metastore"
        assert warehouse_listing(lab) == files_before, f"{text!r} failed but changed the warehouse"
        assert not list(lab.metastore.db.execute("SELECT TXN_ID FROM TXNS WHERE TXN_STATE = 'o'")), \
            f"{text!r} failed and left its transaction open"


MAGIC_WORDS = st.sampled_from(["sales.x", "sales.note", "flat.a", "sales", "nosuch.x", "sales.x,note", "ext.v",
                               "--top", "--partition", "--mode", "--min-share", "--lab", "lab", "exact", "approx",
                               "-3", "0", "2", "1.5", "ds=d1", "ds=zzz", "'", '"', "`", "--", "ünï", "SELECT",
                               "*", "FROM", "WHERE", "x", ">", "=", "'d1'", "ds"])


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(magic=st.sampled_from(["skew", "explain"]), words=st.lists(MAGIC_WORDS, min_size=0, max_size=6))
def test_magic_argument_lines_fail_as_one_usage_line(fresh, magic, words):
    lab = fresh()
    shell = InteractiveShell.instance()
    shell.user_ns["lab"] = lab
    shell.run_line_magic("load_ext", "colstats_lab")
    line = " ".join(words)
    before = metastore_dump(lab)
    with capture_output():
        try:
            shell.run_line_magic(magic, line)
        except UsageError as exc:
            assert str(exc).strip() and "Traceback" not in str(exc)
            assert metastore_dump(lab) == before


def test_every_error_the_package_defines_is_in_the_family():
    found = []
    for module_name in list(__import__("sys").modules):
        if not module_name.startswith("colstats_lab"):
            continue
        for _, cls in inspect.getmembers(__import__("sys").modules[module_name], inspect.isclass):
            if issubclass(cls, Exception) and not issubclass(cls, Warning) and \
                    cls.__module__.startswith("colstats_lab") and not cls.__name__.startswith("_"):
                found.append(cls)
    assert {c.__name__ for c in found} >= {"ColstatsError", "ParseError", "QueryError", "MetastoreError",
                                            "NoSuchObjectException", "InvalidArgument", "UnsupportedCatalog"}
    assert [c for c in found if not issubclass(c, ColstatsError)] == []
    assert colstats_lab.ColstatsError is ColstatsError


def test_spark_refusing_a_query_is_a_query_error_naming_the_column(fresh):
    lab = fresh()
    with pytest.raises(colstats_lab.QueryError, match="nosuchcol") as caught:
        lab.sql("SELECT nosuchcol FROM sales")
    assert caught.value.error_class and "\n" not in str(caught.value)
    assert "colstats__" not in str(caught.value)  # the lab's view names stay out of the message


@pytest.mark.parametrize("call, named", [
    (lambda lab: lab.tables["sales"].skew("x", top=0), "top takes a whole number of at least 1, not 0"),
    (lambda lab: lab.tables["sales"].skew("x", partition="ds=zz"), "partition ds=zz of default.sales does not exist"),
    (lambda lab: lab.tables["sales"].skew("x", partition={"dz": "d1"}), "does not name the keys of default.sales"),
    (lambda lab: lab.tables["sales"].skew([]), "skew takes one or more column names"),
    (lambda lab: lab.set("hive.txn.timeout", "soon"), "hive.txn.timeout takes a number of seconds, not 'soon'"),
    (lambda lab: lab.set("hive.txn.heartbeat.interval", -1), "positive number of seconds"),
    (lambda lab: lab.explain("SELECT * FROM sales WHERE x >"), "line 1"),
    (lambda lab: lab.explain("DROP TABLE sales"), "explain takes a query (SELECT, WITH, a set operation), not a DROP"),
    (lambda lab: lab.tables["sales"].write([1, 2]), "write takes a Spark or pandas DataFrame, not list"),
    (lambda lab: lab.tables["sales"].write(pd.DataFrame({"id": [1]}), partition={"ds": "d2"}), "no column x"),
    (lambda lab: lab.tables["ext"].write(pd.DataFrame({"v": [1]})), "default.ext is external"),
    (lambda lab: lab.tables["sales"].write(pd.DataFrame({"id": ["a"], "x": [1], "note": ["n"]}), partition={"ds": "d2"}),
     "cannot write the data into default.sales: [CAST_INVALID_INPUT] The value 'a'"),
    (lambda lab: lab.tables["flat"].relayout(), "default.flat is not partitioned"),
    (lambda lab: lab.tables["sales"].relayout("ds=nope"), "partition ds=nope of default.sales does not exist"),
    (lambda lab: lab.register_external("again", "/nonexistent/dir"), "no data files under /nonexistent/dir"),
    (lambda lab: lab.register_external("again", "/tmp", format="csv"), "metadata file can be registered, not csv"),
    (lambda lab: lab.tables["sales"].inspect.metadata(), "has no metadata"),
    (lambda lab: lab.tables["sales"].inspect.metadata("BOGUS"), "unknown metadata level 'BOGUS'"),
    (lambda lab: lab.views("nosuchview"), "no view named 'nosuchview'"),
    (lambda lab: lab.views.stats("sales", partition="ds=zz"), "partition ds=zz of default.sales does not exist"),
    (lambda lab: lab.views.skew("sales", "x", partition="ds=zz"), "partition ds=zz of default.sales does not exist"),
    (lambda lab: lab.metastore.catalog.get_partitions_by_filter("default", "sales", "ds >"), "does not parse"),
    (lambda lab: lab.metastore.column_stats.get_table_column_statistics("default", "sales", "nosuch"), "nosuch"),
    (lambda lab: lab.metastore.column_stats.update_table_column_statistics("x"), "expected a ColumnStatistics"),
    (lambda lab: lab.metastore.catalog.get_partition("default", "sales", "no-equals"), "no-equals"),
    (lambda lab: lab.tables["sales"].to_spark(snapshot=__import__("colstats_lab").metastore.ValidWriteIdList.parse("t:a:b:c:d")),
     "not a ValidWriteIdList: 't:a:b:c:d'"),
    (lambda lab: lab.sql(None), "lab.sql takes the text of statements, not NoneType"),
    (lambda lab: lab.sql("SELECT nosuchcol FROM sales"), "nosuchcol"),
    (lambda lab: lab.sql("SELECT * FROM sales WHERE x >"), "line 1"),
    (lambda lab: lab.tables["sales"].export_spark_stats("default.nosuch_in_spark"), "nosuch_in_spark"),
    (lambda lab: lab.resolve("nosuch"), "default.nosuch"),
    (lambda lab: lab.resolve(""), "a table is named by a non-empty string, not ''"),
    (lambda lab: lab.resolve(7), "a table is named by a non-empty string, not 7"),
    (lambda lab: lab.register_external("a.b.c", "/tmp"), "may not contain a dot"),
    (lambda lab: lab.import_spark_stats("default.nosuch_in_spark"), "nosuch_in_spark"),
])
def test_public_entry_points_raise_only_our_errors(fresh, call, named):
    lab = fresh()
    before, files_before = metastore_dump(lab), warehouse_listing(lab)
    with pytest.raises(ColstatsError) as caught:
        call(lab)
    assert named in str(caught.value)
    assert metastore_dump(lab) == before and warehouse_listing(lab) == files_before


def test_a_bad_file_in_an_external_directory_is_named(fresh, tmp_path):
    lab = fresh()
    root = tmp_path / "junk"
    os.makedirs(root)
    (root / "data.parquet").write_text("not parquet at all")
    with pytest.raises(ColstatsError, match="data.parquet"):
        lab.register_external("junk", str(root))
    assert not lab.metastore.catalog.table_exists("default", "junk")


API_TABLES = st.sampled_from(["sales", "flat", "ext", "nosuch", "", "default.sales", "sales.x", "`sales`", 7, None])
API_COLUMNS = st.sampled_from(["x", "note", "id", "ds", "nosuch", "X", "`x`", "", " ", "ünï", "x,note", None, 3,
                               ["x", "note"], [], ["x", "x"], ["id", 1]])
API_WHERES = st.sampled_from([None, "ds = 'd1'", "ds >", "x = 1", "nosuch = 1", "", "1", "ds = 'd1' AND",
                              "ds IN ('d1', 'd2')", "x = 'a'", "'"])


@pytest.mark.slow
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(call=st.sampled_from(["skew", "join_skew", "explain"]), table=API_TABLES, column=API_COLUMNS,
       other=API_TABLES, other_column=API_COLUMNS, where=API_WHERES,
       k=st.sampled_from([1, 0, -1, 2.5, "3", 10**9]), how=st.sampled_from(["inner", "left", "outer", "cross", "", None]))
def test_skew_join_skew_and_explain_arguments_raise_only_our_errors(fresh, call, table, column, other, other_column,
                                                                    where, k, how):
    lab = fresh()
    before = metastore_dump(lab)
    try:
        if call == "skew":
            lab.tables[table].skew(column, top=k)
        elif call == "join_skew":
            lab.tables[table].join_skew(other, column, other_column, where=where, how=how)
        else:
            lab.explain(f"SELECT * FROM {table}" + (f" WHERE {where}" if where is not None else ""))
    except ColstatsError as exc:
        text = str(exc)
        assert text.strip() and "Traceback" not in text and "py4j" not in text.lower(), text
        assert isinstance(exc, ParseError) or "\n" not in text, text  # one line; a parse error adds its caret
        assert metastore_dump(lab) == before


def test_spark_refusing_what_the_lab_ran_logs_no_json_error_line(fresh):
    """PySpark 4 logs every captured SQL error as a JSON ERROR line with Java's stack on stderr; the lab's own
    calls raise it as one line instead. Outside the lab's calls PySpark logs as it always does."""
    import logging

    from pyspark.logger import PySparkLogger

    lab = fresh()
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = PySparkLogger.getLogger("SQLQueryContextLogger")
    logger.addHandler(handler)
    try:
        with pytest.raises(colstats_lab.QueryError):
            lab.sql("SELECT nosuchcol FROM sales")
        with pytest.raises(colstats_lab.QueryError):
            lab.sql("SELECT CAST('a' AS INT) FROM sales")
        assert records == []
        with pytest.raises(AnalysisException):
            lab.spark.sql("SELECT nosuchcol_outside_the_lab").collect()
        assert len(records) == 1
    finally:
        logger.removeHandler(handler)

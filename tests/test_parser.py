"""The statement parser: what each statement parses to, and errors with a caret under the bad token."""
from __future__ import annotations

import pytest

from colstats_lab.sql import ParseError, parse, parse_one
from colstats_lab.sql import statements as st


def test_analyze_forms():
    stmt = parse_one("analyze table Sales partition (ds='2026-11-21', hr) compute statistics for columns X, note;")
    assert isinstance(stmt, st.Analyze)
    assert stmt.table == st.TableName(None, "sales")
    assert [(p.key, p.value) for p in stmt.partition] == [("ds", "2026-11-21"), ("hr", None)]
    assert stmt.mode == "columns" and [c for c, _ in stmt.columns] == ["x", "note"]
    assert parse_one("ANALYZE TABLE db1.t COMPUTE STATISTICS FOR ALL COLUMNS").columns is None
    assert parse_one("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS").columns is None
    assert parse_one("ANALYZE TABLE t COMPUTE STATISTICS NOSCAN").mode == "noscan"
    assert parse_one("ANALYZE TABLE t PARTITION (hr=-3) COMPUTE STATISTICS").partition[0].value == "-3"
    assert parse_one("ANALYZE TABLE t COMPUTE STATISTICS").mode == "basic"


def test_analyze_tables_forms():
    assert parse_one("ANALYZE TABLES IN Shop COMPUTE STATISTICS FOR ALL COLUMNS") == st.AnalyzeTables(db="shop",
                                                                                                    mode="columns")
    assert parse_one("analyze tables from `my db` compute statistics noscan") == st.AnalyzeTables(db="my db",
                                                                                                mode="noscan")
    assert parse_one("ANALYZE TABLES COMPUTE STATISTICS") == st.AnalyzeTables(db=None, mode="basic")
    with pytest.raises(ParseError) as caught:
        parse_one("ANALYZE TABLES IN shop COMPUTE STATISTICS FOR COLUMNS a")
    assert "FOR ALL COLUMNS" in caught.value.message and caught.value.position == len("ANALYZE TABLES IN shop "
                                                                                        "COMPUTE STATISTICS FOR ")


def test_create_table_with_every_type():
    stmt = parse_one("CREATE TABLE IF NOT EXISTS s (id BIGINT, x INT COMMENT 'key', a DOUBLE, p DECIMAL(10, 2), "
                     "n STRING, v VARCHAR(20), f BOOLEAN, d DATE, t TIMESTAMP, r BINARY, tags ARRAY<STRING>, "
                     "m MAP<STRING, INT>) COMMENT 'sales' PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET")
    assert stmt.if_not_exists and stmt.comment == "sales"
    assert [(c.name, c.type) for c in stmt.columns] == [
        ("id", "bigint"), ("x", "int"), ("a", "double"), ("p", "decimal(10,2)"), ("n", "string"),
        ("v", "varchar(20)"), ("f", "boolean"), ("d", "date"), ("t", "timestamp"), ("r", "binary"),
        ("tags", "array<string>"), ("m", "map<string,int>")]
    assert stmt.columns[1].comment == "key"
    assert [(k.name, k.type) for k in stmt.partition_keys] == [("ds", "string"), ("hr", "int")]


def test_several_statements_and_strings_with_semicolons():
    stmts = parse("DESCRIBE FORMATTED t x; SHOW PARTITIONS t PARTITION (ds='a;b'); select ';' as s")
    assert [type(s) for s in stmts] == [st.Describe, st.ShowPartitions, st.Query]
    assert stmts[1].partition[0].value == "a;b"
    assert stmts[2].text == "select ';' as s"


def test_quoted_identifiers_and_escaped_strings():
    stmt = parse_one("DESCRIBE `my db`.`odd name` PARTITION (ds='it''s') `weird col`")
    assert stmt.table == st.TableName("my db", "odd name")
    assert stmt.partition[0].value == "it's"
    assert stmt.column[0] == "weird col"


def _error(sql: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(sql)
    return info.value


def test_error_points_at_the_bad_token():
    sql = "ANALYZE TABLE sales COMPUTE STATISTIC FOR COLUMNS x"
    err = _error(sql)
    assert err.position == sql.index("STATISTIC")
    lines = str(err).splitlines()
    assert "expected STATISTICS" in lines[0] and "found 'STATISTIC'" in lines[0]
    assert lines[1].strip() == sql
    assert lines[2].index("^") - lines[1].index("A") == sql.index("STATISTIC")


def test_error_on_a_later_line_reports_line_and_column():
    err = _error("ANALYZE TABLE sales\nPARTITION (ds='a'\nCOMPUTE STATISTICS")
    assert (err.line, err.column) == (3, 1)
    assert "expected ')'" in err.message


def test_other_errors():
    assert "unknown statement 'ANALYSE'" in _error("ANALYSE TABLE t COMPUTE STATISTICS").message
    assert "unknown column type 'INTEGR'" in _error("CREATE TABLE t (x INTEGR)").message
    assert _error("CREATE TABLE t (x INTEGR)").position == len("CREATE TABLE t (x ")
    assert "partition key ds is given twice" in _error("ANALYZE TABLE t PARTITION (ds, ds) COMPUTE STATISTICS").message
    assert "unterminated string" in _error("DESCRIBE t PARTITION (ds='x").message
    assert "STORED AS takes PARQUET for a managed table, not ORC" in _error("CREATE TABLE t (x INT) STORED AS ORC").message
    assert "no statement" in _error(" ; ").message
    assert "unexpected" in _error("SHOW TABLES extra").message


@pytest.mark.parametrize("sql, token", [
    ("CREATE TABLE `a.b` (x INT)", "`a.b`"),
    ("CREATE DATABASE `shop.eu`", "`shop.eu`"),
    ("ANALYZE TABLE `shop.eu`.sales COMPUTE STATISTICS", "`shop.eu`"),
])
def test_a_dot_inside_a_quoted_table_or_database_name_is_refused_under_it(sql, token):
    """`db.t` is two names; Hive 3 refuses a dot inside one too ("may not contain dot(.) character")."""
    err = _error(sql)
    assert "may not contain a dot" in str(err) and err.position == sql.index(token)


@pytest.mark.parametrize("text, message", [
    ("SELECT * FROM sales WHERE", "expected a condition after WHERE"),
    ("SELECT * FROM t WHERE x =", "expected an expression after '='"),
    ("SELECT * FROM t WHERE = 3", "expected an expression before '='"),
    ("SELECT * FROM t WHERE NOT", "expected an expression after NOT"),
])
def test_an_unfinished_expression_says_what_is_missing_in_the_users_words(text, message):
    from colstats_lab.errors import ParseError, parse_sql

    with pytest.raises(ParseError) as caught:
        parse_sql(text)
    assert caught.value.message == message
    assert "this" not in caught.value.message.split()


def test_create_external_table_in_hives_form():
    stmt = parse_one("CREATE EXTERNAL TABLE IF NOT EXISTS shop.clicks (userId BIGINT, page STRING) "
                     "PARTITIONED BY (region STRING) STORED AS PARQUET LOCATION '/data/clicks'")
    assert (stmt.external, stmt.if_not_exists, stmt.location, stmt.stored_as) == (True, True, "/data/clicks", "parquet")
    assert [(c.name, c.type) for c in stmt.columns] == [("userid", "bigint"), ("page", "string")]
    assert [k.name for k in stmt.partition_keys] == ["region"]
    bare = parse_one("CREATE EXTERNAL TABLE ev STORED AS DELTA LOCATION 'file:///lake/ev'")
    assert (bare.columns, bare.stored_as, bare.location) == ([], "delta", "file:///lake/ev")


@pytest.mark.parametrize("sql, token, message", [
    ("CREATE EXTERNAL TABLE t STORED AS PARQUET", None, "an EXTERNAL table needs LOCATION"),
    ("CREATE EXTERNAL TABLE t STORED AS ORC LOCATION '/x'", "ORC", "STORED AS takes PARQUET or DELTA or ICEBERG"),
    ("CREATE TABLE t (x INT) LOCATION '/x'", "LOCATION", "LOCATION is for an EXTERNAL table"),
    ("CREATE EXTERNAL TABLE t SKEWED BY (x) ON (1) LOCATION '/x'", "SKEWED", "SKEWED BY lays out a managed"),
])
def test_create_external_table_errors_point_at_the_token(sql, token, message):
    err = _error(sql)
    assert message in err.message
    assert err.position == (sql.index(token) if token else len(sql))

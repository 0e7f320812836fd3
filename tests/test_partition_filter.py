"""`get_partitions_by_filter` (Hive's listPartitionsByFilter) against a three-valued evaluation in Python, on a
SQLite metastore and on PostgreSQL (whose LIKE, casts and NULL order differ from SQLite's)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metastore_rows import connect

from colstats_lab.metastore import FieldSchema, InvalidInputException, Metastore, Partition, Table

DAYS = ["2026-10-30", "2026-10-31", "2026-11-01", "2026-11-02", None]
HOURS = [0, 2, 3, 9, 10, 23, None]
REGIONS = ["eu", "EU", "us_west", "us%east"]
VALUES = [(d, h, r) for d in DAYS for h in HOURS for r in REGIONS]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def ms(request, tmp_path_factory):
    if request.param == "postgresql":
        location = request.getfixturevalue("postgres").new_database()
    else:
        location = str(tmp_path_factory.mktemp("filter") / "metastore.db")
    store = Metastore(location, str(tmp_path_factory.mktemp("warehouse")))
    store.catalog.create_table(Table("default", "events", [FieldSchema("v", "int")],
                             [FieldSchema("ds", "string"), FieldSchema("hr", "int"), FieldSchema("region", "string")],
                             location="/tmp/events"))
    store.catalog.create_table(Table("default", "other", [FieldSchema("v", "int")], [FieldSchema("ds", "string")],
                             location="/tmp/other"))
    store.catalog.add_partitions([Partition("default", "events", [d, None if h is None else str(h), r]) for d, h, r in VALUES])
    store.catalog.add_partitions([Partition("default", "other", ["2026-11-01"])])
    yield store
    store.close()


def _names(parts) -> list[tuple]:
    return [(p.values[0], None if p.values[1] is None else int(p.values[1]), p.values[2]) for p in parts]


def _expected(predicate) -> list[tuple]:
    return sorted((v for v in VALUES if predicate(dict(zip(("ds", "hr", "region"), v, strict=True))) is True),
                  key=lambda v: tuple((x is None, x) for x in v))


def _sorted(values):
    return sorted(values, key=lambda v: tuple((x is None, x) for x in v))


def test_the_issue_example(ms):
    parts = ms.catalog.get_partitions_by_filter("default", "events", "ds >= '2026-11-01' AND hr = 3")
    assert _sorted(_names(parts)) == _expected(lambda r: r["ds"] is not None and r["ds"] >= "2026-11-01"
                                               and r["hr"] == 3)
    assert all(p.tableName == "events" and len(p.values) == 3 for p in parts)
    assert len(parts) == 2 * len(REGIONS)


@pytest.mark.parametrize("text, predicate", [
    ("hr > 9", lambda r: None if r["hr"] is None else r["hr"] > 9),  # numeric, so 10 > 9 and 23 > 9
    ("hr IN (0, 23) OR ds = \"2026-10-30\"", lambda r: (r["hr"] in (0, 23)) or r["ds"] == "2026-10-30"),
    ("hr BETWEEN 2 AND 9", lambda r: r["hr"] is not None and 2 <= r["hr"] <= 9),
    ("ds IS NULL", lambda r: r["ds"] is None),
    ("NOT (hr IS NULL) AND NOT ds < '2026-11-01'", lambda r: r["hr"] is not None and r["ds"] is not None
     and not r["ds"] < "2026-11-01"),
    ("region LIKE 'us%'", lambda r: r["region"].startswith("us")),
    ("region LIKE 'eu'", lambda r: r["region"] == "eu"),  # case-sensitive
    ("region LIKE 'us[%]east' OR region LIKE 'us_west'", lambda r: r["region"] == "us_west"),
    ("3 = hr", lambda r: r["hr"] == 3),
    ("hr <> 3", lambda r: None if r["hr"] is None else r["hr"] != 3),
])
def test_filters(ms, text, predicate):
    assert _sorted(_names(ms.catalog.get_partitions_by_filter("default", "events", text))) == _expected(predicate)


def test_max_parts_and_other_tables_are_apart(ms):
    assert len(ms.catalog.get_partitions_by_filter("default", "events", "ds = '2026-11-01'", max_parts=3)) == 3
    assert [p.values for p in ms.catalog.get_partitions_by_filter("default", "other", "ds = '2026-11-01'")] == [["2026-11-01"]]


@pytest.mark.parametrize("text, message", [
    ("ds >= AND hr = 3", r"does not parse at column \d+ \('AND'\)"),
    ("amount > 3", r"amount is not a partition key of default.events \(keys: ds, hr, region\)"),
    ("upper(ds) = 'A'", r"the left side must be a partition key: UPPER\(ds\) = 'A'"),
    ("hr = 'three'", r"'three' is not a number: hr = 'three'"),
    ("ds = hr", r"compare a partition key with literals only: ds = hr"),
    ("ds", r"not a condition on partition keys"),
])
def test_bad_filters_name_the_bad_part(ms, text, message):
    with pytest.raises(InvalidInputException, match=message):
        ms.catalog.get_partitions_by_filter("default", "events", text)


def test_the_listing_uses_the_key_value_index(ms):
    sql = ("SELECT P.PART_NAME FROM PARTITIONS P JOIN PARTITION_KEY_VALS K0 ON K0.PART_ID = P.PART_ID "
           "AND K0.INTEGER_IDX = 0 WHERE P.TBL_ID = 1 AND K0.PART_KEY_VAL >= '2026-11-01'")
    conn = connect(ms.url)
    try:
        if conn.postgresql:  # its planner scans a table this small whatever the index: asked to avoid that, it
            conn.execute("SET enable_seqscan = off")  # must find the index on key values serves the condition
            plan = " ".join(r[0] for r in conn.execute("EXPLAIN " + sql)).lower()
            assert "partition_key_vals_by_value" in plan, plan
            return
        plan = " ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql))
    finally:
        conn.close()
    assert "USING INDEX" in plan or "USING PRIMARY KEY" in plan or "USING COVERING INDEX" in plan, plan
    assert "SCAN P" not in plan.replace("SCAN PARTITIONS", "SCAN P"), plan


_ATOMS = st.one_of(
    st.tuples(st.just("ds"), st.sampled_from(["=", "<>", "<", "<=", ">", ">="]), st.sampled_from(DAYS[:-1])),
    st.tuples(st.just("hr"), st.sampled_from(["=", "<>", "<", "<=", ">", ">="]), st.integers(-1, 24)),
    st.tuples(st.just("hr"), st.just("IN"), st.lists(st.integers(0, 24), min_size=1, max_size=3)),
    st.tuples(st.sampled_from(["ds", "hr"]), st.sampled_from(["IS NULL", "IS NOT NULL"]), st.none()),
)


def _atom(atom):
    key, op, value = atom
    if op in ("IS NULL", "IS NOT NULL"):
        return f"{key} {op}", lambda r: (r[key] is None) == (op == "IS NULL")
    if op == "IN":
        return (f"{key} IN ({', '.join(map(str, value))})",
                lambda r: None if r[key] is None else r[key] in value)
    text_value = f"'{value}'" if key == "ds" else str(value)
    compare = {"=": lambda a, b: a == b, "<>": lambda a, b: a != b, "<": lambda a, b: a < b,
               "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}[op]
    return f"{key} {op} {text_value}", lambda r: None if r[key] is None else compare(r[key], value)


def _and(a, b):
    return False if a is False or b is False else (None if a is None or b is None else True)


def _or(a, b):
    return True if a is True or b is True else (None if a is None or b is None else False)


_FILTERS = st.recursive(
    _ATOMS.map(_atom),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda ab: (f"({ab[0][0]}) AND ({ab[1][0]})",
                                                lambda r, ab=ab: _and(ab[0][1](r), ab[1][1](r)))),
        st.tuples(inner, inner).map(lambda ab: (f"({ab[0][0]}) OR ({ab[1][0]})",
                                                lambda r, ab=ab: _or(ab[0][1](r), ab[1][1](r)))),
        inner.map(lambda a: (f"NOT ({a[0]})", lambda r, a=a: None if a[1](r) is None else not a[1](r))),
    ), max_leaves=5)


@settings(max_examples=150, deadline=None)
@given(_FILTERS)
def test_random_filters_select_what_three_valued_logic_selects(ms, text_and_predicate):
    text, predicate = text_and_predicate
    assert _sorted(_names(ms.catalog.get_partitions_by_filter("default", "events", text))) == _expected(predicate), text


@settings(max_examples=150, deadline=None)
@given(_FILTERS)
def test_answers_select_partitions_through_the_index_as_three_valued_logic_does(ms, text_and_predicate):
    """An answer from statistics asks the metastore only for the partitions its filter's indexable
    conjuncts select, then decides by the whole filter: the same partitions as evaluating it on all."""
    from sqlglot import parse_one

    from colstats_lab.pruning.answers import _selected_partitions

    text, predicate = text_and_predicate
    where = parse_one(f"SELECT count(*) FROM events WHERE {text}", read="spark").args["where"]
    chosen = _selected_partitions(ms, ms.catalog.get_table("default", "events"), where)
    assert _sorted(_names(chosen)) == _expected(predicate), text

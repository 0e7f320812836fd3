"""One statement, two ways in: `TableHandle.analyze`'s arguments build the ANALYZE the parser reads from the same
SQL, field for field (table, partition clause, mode, columns, tier), with no Spark and no text in between; and the
arguments that contradict each other are refused by the statement's one rule."""
from __future__ import annotations

import pytest

from colstats_lab.column_statistics.estimators import METADATA_TIER, WHOLE_TIER, Tier
from colstats_lab.errors import InvalidArgument
from colstats_lab.handles import analyze_statement
from colstats_lab.sql import parse
from colstats_lab.sql.statements import Analyze

# (handle's arguments, the SQL a person would write for them)
SAME = [
    (dict(name="sales"), "ANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS"),
    (dict(name="shop.sales", columns="x"), "ANALYZE TABLE shop.sales COMPUTE STATISTICS FOR COLUMNS x"),
    (dict(name="sales", columns=["X", "payload.user.id"]),
     "ANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS x, payload.user.id"),
    (dict(name="sales", partition={"ds": "2026-11-21"}, sample=0.05),
     "ANALYZE TABLE sales PARTITION (ds='2026-11-21') COMPUTE STATISTICS FOR COLUMNS SAMPLE 5 PERCENT"),
    (dict(name="sales", partition="ds=2026-11-21/hr=3", sample=0.125),
     "ANALYZE TABLE sales PARTITION (ds='2026-11-21', hr=3) COMPUTE STATISTICS FOR COLUMNS SAMPLE 12.5 PERCENT"),
    (dict(name="sales", partition={"ds": None}, metadata_only=True),
     "ANALYZE TABLE sales PARTITION (ds) COMPUTE STATISTICS FOR COLUMNS NOSCAN"),
    (dict(name="sales", partition={"ds": "__HIVE_DEFAULT_PARTITION__"}),
     "ANALYZE TABLE sales PARTITION (ds=NULL) COMPUTE STATISTICS FOR COLUMNS"),
    (dict(name="sales", partition="city=S%C3%A3o Paulo"),
     "ANALYZE TABLE sales PARTITION (city='São Paulo') COMPUTE STATISTICS FOR COLUMNS"),
    (dict(name="sales", noscan=True, partition="ds=a"), "ANALYZE TABLE sales PARTITION (ds='a') COMPUTE STATISTICS NOSCAN"),
    (dict(name="sales", sample=1), "ANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS SAMPLE 100 PERCENT"),
    (dict(name="näme `x'"), "ANALYZE TABLE `näme ``x'` COMPUTE STATISTICS FOR COLUMNS"),
]


def _fields(stmt: Analyze) -> tuple:
    """What the statement asks for, without the text and offsets only a parsed one has."""
    partition = None if stmt.partition is None else [(i.key, i.value, i.is_null) for i in stmt.partition]
    columns = None if stmt.columns is None else [name for name, _ in stmt.columns]
    return (str(stmt.table), stmt.table.catalog, partition, stmt.mode, columns, stmt.tier)


@pytest.mark.parametrize("arguments, sql", SAME, ids=[s for _, s in SAME])
def test_the_handles_arguments_build_the_statement_the_parser_reads(arguments, sql):
    assert _fields(analyze_statement(**arguments)) == _fields(parse(sql)[0])


def test_the_tiers_are_one_type_on_both_ways_in():
    assert analyze_statement("t", metadata_only=True).tier is METADATA_TIER
    assert analyze_statement("t", sample=0.05).tier == Tier("sample", 0.05) == parse(
        "ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS SAMPLE 5 PERCENT")[0].tier
    assert analyze_statement("t").tier is WHOLE_TIER


@pytest.mark.parametrize("arguments, said", [
    (dict(columns=["x"], noscan=True), "counts files and bytes only"),
    (dict(sample=0.1, noscan=True), "counts files and bytes only"),
    (dict(metadata_only=True, noscan=True), "counts files and bytes only"),
    (dict(metadata_only=True, sample=0.1), "reads no value, so it takes no sample"),
    (dict(sample=0), "above 0 and at most 1"),
    (dict(sample=5), r"above 0 and at most 1 \(0.05 for 5 %\), not 5"),
    (dict(sample=True), "not True"),
    (dict(columns=3), "columns are a column's name or a list of names, not 3"),
    (dict(partition=7), "a partition is a name like ds=2026-11-21 or a dict, not 7"),
])
def test_contradicting_arguments_are_refused_by_name(arguments, said):
    with pytest.raises(InvalidArgument, match=said):
        analyze_statement("sales", **arguments)

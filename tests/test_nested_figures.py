"""Over random files as pyarrow writes them, with mixed-case and non-ASCII names, structs of structs (NULL at
any level), lists and maps (NULL, empty, with NULL elements and values) and nanosecond timestamps: every figure
ANALYZE stores for every column, struct leaf, array's elements and map's keys and values equals pyarrow's
computation over the rows themselves (flattened: a leaf is NULL where a struct on its way is; a struct's own
row counts the rows where it is NULL)."""
from __future__ import annotations

import datetime as dt
import decimal
import os

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colstats_lab import Lab

EPOCH = dt.datetime(1970, 1, 1)
NAMES = ["userId", "eventType", "Größe", "UPPER", "x", "Score", "née", "ID2", "camelCaseName", "v"]
LEAF_TYPES = {"long": pa.int64(), "string": pa.string(), "bool": pa.bool_(), "date": pa.date32(),
              "decimal": pa.decimal128(10, 2), "nanos": pa.timestamp("ns")}


# inside a list or map a nanosecond timestamp is left out by name (tests/test_file_columns.py)
ELEMENT_TYPES = {name: kind for name, kind in LEAF_TYPES.items() if name != "nanos"}


@st.composite
def field_types(draw, depth: int):
    """A leaf type, a list of one or a map of strings to one, or (at `depth` > 0) a struct of 1 to 3 fields
    with distinct names whatever their case."""
    shape = draw(st.sampled_from(["leaf", "leaf", "list", "map"] + (["struct", "struct"] if depth > 0 else [])))
    if shape == "struct":
        names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique_by=str.lower))
        return pa.struct([pa.field(name, draw(field_types(depth - 1))) for name in names])
    if shape in ("list", "map"):
        element = ELEMENT_TYPES[draw(st.sampled_from(sorted(ELEMENT_TYPES)))]
        return pa.list_(element) if shape == "list" else pa.map_(pa.string(), element)
    return LEAF_TYPES[draw(st.sampled_from(sorted(LEAF_TYPES)))]


def _value(draw, kind: pa.DataType):
    if pa.types.is_struct(kind):
        if draw(st.integers(0, 4)) == 0:
            return None
        return {kind.field(i).name: _value(draw, kind.field(i).type) for i in range(kind.num_fields)}
    if pa.types.is_map(kind):
        if draw(st.integers(0, 4)) == 0:
            return None
        keys = draw(st.lists(st.text(max_size=3), max_size=4, unique=True))
        return [(key, _value(draw, kind.item_type)) for key in keys]
    if pa.types.is_list(kind):
        if draw(st.integers(0, 4)) == 0:
            return None
        return [_value(draw, kind.value_type) for _ in range(draw(st.integers(0, 4)))]
    if draw(st.integers(0, 3)) == 0:
        return None
    if kind == pa.int64():
        return draw(st.integers(-2**63, 2**63 - 1))
    if kind == pa.string():
        return draw(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12))
    if kind == pa.bool_():
        return draw(st.booleans())
    if kind == pa.date32():
        return dt.date(1900, 1, 1) + dt.timedelta(days=draw(st.integers(0, 150_000)))
    if pa.types.is_decimal(kind):
        return decimal.Decimal(draw(st.integers(-10**10 + 1, 10**10 - 1))).scaleb(-2)
    return draw(st.integers(-2**62, 2**62))  # nanoseconds since the epoch


@st.composite
def files(draw):
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique_by=str.lower))
    schema = pa.schema([pa.field(name, draw(field_types(2))) for name in names])
    tables = []
    for _ in range(draw(st.integers(1, 2))):
        rows = draw(st.integers(1, 10))
        columns = {f.name: [_value(draw, f.type) for _ in range(rows)] for f in schema}
        tables.append((pa.table({f.name: pa.array(columns[f.name], f.type) for f in schema}, schema=schema),
                       draw(st.integers(1, 4))))
    return tables


def _leaves(table: pa.Table) -> dict[str, pa.ChunkedArray]:
    """Each column, struct and struct leaf, and each list's elements and each map's keys and values (NULL
    lists and maps hold none). A struct inside a NULL struct is NULL (pyarrow's flatten says so)."""
    out = {}
    while any(pa.types.is_struct(f.type) for f in table.schema):
        out.update({f.name.lower(): table.column(f.name).combine_chunks() for f in table.schema
                    if pa.types.is_struct(f.type)})
        table = table.flatten()
    for name in table.column_names:
        column = table.column(name).combine_chunks()
        out[name.lower()] = column
        if pa.types.is_map(column.type):
            entries = [entry for row in column.to_pylist() if row for entry in row]
            out[f"{name.lower()}.key"] = pa.array([k for k, _ in entries], column.type.key_type)
            out[f"{name.lower()}.value"] = pa.array([v for _, v in entries], column.type.item_type)
        elif pa.types.is_list(column.type):
            out[f"{name.lower()}.element"] = pc.list_flatten(column)
    return out


def _expected(column: pa.Array) -> dict:
    present = pc.drop_null(column)
    out: dict = {"nulls": column.null_count}
    kind = column.type
    if pa.types.is_struct(kind):  # a struct's own row: its NULLs alone
        return out
    if pa.types.is_list(kind) or pa.types.is_map(kind):  # sizes: fewest, most, per row (a NULL as none)
        sizes = [len(row) for row in present.to_pylist()]
        if sizes:
            out["low"], out["high"] = min(sizes), max(sizes)
        out["avglen"] = sum(sizes) / len(column)
        return out
    if kind == pa.string():
        lengths = pc.utf8_length(present).to_pylist()
        out["maxlen"] = max(lengths, default=0)
        out["avglen"] = sum(lengths) / len(column) if len(column) else 0.0
    elif kind == pa.bool_():
        out["trues"] = sum(present.to_pylist())
    elif len(present):
        values = present.to_pylist() if not pa.types.is_timestamp(kind) else \
            [v // 1000 for v in pc.cast(present, pa.int64()).to_pylist()]  # Spark's microseconds: floor
        if kind == pa.date32():
            values = [(v - EPOCH.date()).days for v in values]
        out["low"], out["high"] = min(values), max(values)
    return out


def _stored(obj) -> dict:
    data, kind = obj.statsData.value, obj.statsData.kind.value
    out = {"nulls": data.numNulls}
    if kind == "collectionStats":
        out["avglen"] = data.avgColLen
    if kind == "stringStats":
        out["maxlen"], out["avglen"] = data.maxColLen, data.avgColLen
    elif kind == "booleanStats":
        out["trues"] = data.numTrues
    elif kind == "structStats":
        pass
    elif data.lowValue is not None:
        low, high = data.lowValue, data.highValue
        if kind == "dateStats":
            low, high = low.daysSinceEpoch, high.daysSinceEpoch
        elif kind == "timestampStats":
            low, high = low.microsSinceEpoch, high.microsSinceEpoch
        out["low"], out["high"] = low, high
    return out


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("NESTED_EXAMPLES", 12)), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(drawn=files())
def test_every_leaf_figure_equals_pyarrows_over_random_nested_files(tmp_path_factory, spark, drawn):
    home = tmp_path_factory.mktemp("nested")
    root = home / "random"
    root.mkdir()
    for index, (table, group_rows) in enumerate(drawn):
        pq.write_table(table, root / f"part-{index}.parquet", row_group_size=group_rows)
    lab = Lab(home=str(home / "lab"), spark=spark)
    try:
        lab.register_external("random", str(root))
        outcome = lab.sql("ANALYZE TABLE random COMPUTE STATISTICS FOR ALL COLUMNS").details
        leaves = _leaves(pa.concat_tables([table for table, _ in drawn]))
        assert sorted(outcome.columns) == sorted(leaves)
        stored = lab.metastore.column_stats.get_table_statistics("default", "random", outcome.columns)
        inside = {name for name in leaves if name.endswith((".element", ".key", ".value"))
                  and name.rsplit(".", 1)[0] in leaves}
        for obj in stored.statsObj:
            # an array's elements and a map's entries are counted where the figures describe them, not the rows
            assert obj.numValues == (len(leaves[obj.colName]) if obj.colName in inside else None), obj.colName
            expected, got = _expected(leaves[obj.colName]), _stored(obj)
            if "avglen" in expected:
                assert got.pop("avglen") == pytest.approx(expected.pop("avglen")), obj.colName
            assert got == expected, (obj.colName, got, expected)
    finally:
        lab.close()

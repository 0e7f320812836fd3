"""Arrays and maps as other writers make them: their NULL count and sizes, and the statistics of an array's
elements and a map's keys and values, per partition and merged, against figures computed here from the rows
pyarrow wrote (plain Python over `to_pylist()`), never by the code under test."""
from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from colstats_lab.interop.hms_publish import COLLECTION_NOT_EXPORTED, LEAF_NOT_EXPORTED, not_exported
from colstats_lab.metastore import NoSuchObjectException

SCHEMA = pa.schema([
    ("id", pa.int64()),
    ("tagList", pa.list_(pa.string())),
    ("nums", pa.list_(pa.int64())),
    ("attrs", pa.map_(pa.string(), pa.int64())),
    ("payload", pa.struct([("u", pa.int64()), ("xs", pa.list_(pa.float64()))])),
])


def _maybe(rng: random.Random, value, share: float = 0.15):
    return None if rng.random() < share else value


def _rows(count: int, seed: int) -> list[dict]:
    """Rows with NULL and empty arrays, NULL elements, NULL maps and NULL map values, NULL structs."""
    rng = random.Random(seed)
    words = ["a", "bb", "ccc", "Größe", "", "zz"]
    out = []
    for i in range(count):
        out.append({
            "id": i,
            "tagList": _maybe(rng, [_maybe(rng, rng.choice(words), 0.1) for _ in range(rng.randint(0, 4))]),
            "nums": _maybe(rng, [_maybe(rng, rng.randint(-50, 50), 0.1) for _ in range(rng.randint(0, 3))]),
            "attrs": _maybe(rng, list({f"k{rng.randint(0, 6)}": _maybe(rng, rng.randint(0, 9), 0.2)
                                       for _ in range(rng.randint(0, 3))}.items())),
            "payload": _maybe(rng, {"u": _maybe(rng, rng.randint(0, 5)),
                                    "xs": _maybe(rng, [_maybe(rng, rng.random(), 0.1)
                                                       for _ in range(rng.randint(0, 3))])}),
        })
    return out


def _write(path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), path)


def _collections(rows: list[dict]) -> dict[str, list]:
    """Each array or map column's values per row (None for a NULL one, or under a NULL struct)."""
    return {
        "taglist": [r["tagList"] for r in rows],
        "nums": [r["nums"] for r in rows],
        "attrs": [None if r["attrs"] is None else list(r["attrs"]) for r in rows],
        "payload.xs": [None if r["payload"] is None else r["payload"]["xs"] for r in rows],
    }


def _inside(rows: list[dict]) -> dict[str, list]:
    """The values inside each collection: every element of every array, every key and value of every map."""
    held = _collections(rows)
    return {
        "taglist.element": [e for v in held["taglist"] if v for e in v],
        "nums.element": [e for v in held["nums"] if v for e in v],
        "attrs.key": [k for v in held["attrs"] if v for k, _ in v],
        "attrs.value": [x for v in held["attrs"] if v for _, x in v],
        "payload.xs.element": [e for v in held["payload.xs"] if v for e in v],
    }


def _check(lab, table: str, part: str | None, rows: list[dict]) -> None:
    names = [*_collections(rows), *_inside(rows)]
    if part is None:
        stats = lab.metastore.column_stats.get_table_statistics("default", table, names)
    else:
        stats = lab.metastore.column_stats.get_partitions_statistics("default", table, [part], names)[part]
    assert stats.isStatsCompliant
    for name, values in _collections(rows).items():
        data = stats.obj(name).statsData.value
        sizes = [len(v) for v in values if v is not None]
        assert data.numNulls == sum(v is None for v in values), (part, name)
        assert (data.lowValue, data.highValue) == (min(sizes), max(sizes)), (part, name)
        assert data.avgColLen == pytest.approx(sum(sizes) / len(rows)), (part, name)
    for name, values in _inside(rows).items():
        obj = stats.obj(name)
        data = obj.statsData.value
        present = [v for v in values if v is not None]
        assert obj.numValues == len(values), (part, name)
        assert data.numNulls == len(values) - len(present), (part, name)
        # the HLL sketch's error (lg_k 12: 1.6 %) where there are hundreds of distinct values, none at a few
        assert data.numDVs == pytest.approx(len(set(present)), rel=0.05), (part, name)
        if isinstance(present[0], str):
            assert data.maxColLen == max(len(v) for v in present), (part, name)
            assert data.avgColLen == pytest.approx(sum(len(v) for v in present) / len(values)), (part, name)
        else:
            assert (data.lowValue, data.highValue) == (min(present), max(present)), (part, name)


def test_arrays_and_maps_figures_match_the_rows_per_partition_merged_and_after_a_new_file(lab, tmp_path):
    root = tmp_path / "events"
    east, west = _rows(400, 1), _rows(250, 2)
    _write(root / "region=east" / "part-0.parquet", east)
    _write(root / "region=west" / "part-0.parquet", west)
    lab.register_external("events", str(root))
    table = lab.resolve("events")
    assert [c.name for c in table.stats_columns] == [
        "id", "taglist", "taglist.element", "nums", "nums.element", "attrs", "attrs.key", "attrs.value",
        "payload.u", "payload.xs", "payload.xs.element"]

    lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS")
    _check(lab, "events", "region=east", east)
    _check(lab, "events", "region=west", west)
    _check(lab, "events", None, east + west)

    # another job adds a file: the partition's statistics are stale until analyzed again, then cover both files
    more = _rows(120, 3)
    _write(root / "region=east" / "part-1.parquet", more)
    assert not lab.metastore.column_stats.get_partitions_statistics(
        "default", "events", ["region=east"], ["taglist.element"])["region=east"].isStatsCompliant
    lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS")
    _check(lab, "events", "region=east", east + more)
    _check(lab, "events", None, east + more + west)

    frame = lab.tables["events"].inspect.stats()
    top = frame[frame["partition"].isna()].set_index("column")
    inside = _inside(east + more + west)
    assert top.loc["attrs.value", "values"] == len(inside["attrs.value"])
    assert top.loc["attrs.value", "null_fraction"] == pytest.approx(
        sum(v is None for v in inside["attrs.value"]) / len(inside["attrs.value"]))
    assert top.loc["attrs", "values"] == len(east + more + west)


def test_one_array_column_analyzed_and_described_by_its_elements(lab, tmp_path):
    rows = _rows(200, 4)
    _write(tmp_path / "flat" / "part-0.parquet", rows)
    lab.register_external("flat", str(tmp_path / "flat"))
    outcome = lab.sql("ANALYZE TABLE flat COMPUTE STATISTICS FOR COLUMNS tagList.element, attrs")
    assert outcome.details.columns == ["taglist.element", "attrs"]
    described = dict(lab.sql("DESCRIBE FORMATTED flat tagList.element").df.values)
    elements = _inside(rows)["taglist.element"]
    assert described["num_nulls"] == str(sum(v is None for v in elements))
    assert described["counted"].startswith(f"{len(elements)} values")
    sizes = [len(v) for v in _collections(rows)["attrs"] if v is not None]
    described = dict(lab.sql("DESCRIBE FORMATTED flat attrs").df.values)
    assert (described["min"], described["max"]) == (str(min(sizes)), str(max(sizes)))


def test_a_write_keeps_its_arrays_sizes_and_leaves_their_elements_to_an_analyze(lab, spark):
    frame = spark.createDataFrame([(1, ["a", "b"]), (2, None), (3, []), (4, ["a", None, "c"])],
                                  "id BIGINT, tags ARRAY<STRING>")
    lab.sql("CREATE TABLE written (id BIGINT, tags ARRAY<STRING>)")
    lab.tables["written"].write(frame)
    stats = lab.metastore.column_stats.get_table_statistics("default", "written", ["tags"])
    assert stats.isStatsCompliant
    data = stats.obj("tags").statsData.value
    assert (data.numNulls, data.lowValue, data.highValue, data.avgColLen) == (1, 0, 3, 5 / 4)
    with pytest.raises(NoSuchObjectException, match="no statistics for column tags.element"):
        lab.metastore.column_stats.get_table_column_statistics("default", "written", "tags.element")
    lab.sql("ANALYZE TABLE written COMPUTE STATISTICS FOR COLUMNS tags.element")
    elements = lab.metastore.column_stats.get_table_column_statistics("default", "written", "tags.element")
    assert elements.isStatsCompliant
    assert (elements.obj("tags.element").numValues, elements.obj("tags.element").statsData.value.numNulls) == (5, 1)


def test_what_hive_and_spark_cannot_carry_is_named_with_why(lab, tmp_path):
    _write(tmp_path / "t" / "part-0.parquet", _rows(10, 5))
    lab.register_external("t", str(tmp_path / "t"))
    reasons = not_exported(lab.resolve("t"))
    assert reasons["taglist"] == reasons["attrs"] == COLLECTION_NOT_EXPORTED
    assert reasons["taglist.element"] == reasons["attrs.key"] == reasons["payload.xs"] == LEAF_NOT_EXPORTED
    assert "id" not in reasons

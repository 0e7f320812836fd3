"""Frequent items kept without asking: a profile's top values, a skew report and an equality's estimate with no
scan, from pandas' Parquet; none kept where more partitions than sketches can carry or a near-unique column (unless
the table names the column); a UTF-8 value's sketch round trips and merges. Counts are pandas' over the rows."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from colstats_lab.column_statistics.frequent_items import FrequentItems


@pytest.fixture
def clicks(lab, tmp_path):
    """Three days of pandas' Parquet: a Zipf user, a few event types, German city names; no table property set."""
    rng = np.random.default_rng(5)
    root = tmp_path / "clicks"
    frames = []
    for day in ("2026-11-01", "2026-11-02", "2026-11-03"):
        (root / f"day={day}").mkdir(parents=True)
        frame = pd.DataFrame({"userId": rng.zipf(1.5, 6_000) % 3_000,
                              "eventType": rng.choice(["click", "view", "buy"], 6_000, p=[0.5, 0.4, 0.1]),
                              "city": rng.choice(["Köln", "Zürich", "München", "Berlin"], 6_000)})
        frame.to_parquet(root / f"day={day}" / "part-0.parquet", row_group_size=1_000)
        frames.append(frame.assign(day=day))
    lab.register_external("clicks", str(root), partition_types={"day": "string"})
    return lab, pd.concat(frames, ignore_index=True)


def test_frequent_items_are_kept_by_default_and_serve_the_profile_skew_and_estimates(clicks):
    lab, frame = clicks
    lab.sql("ANALYZE TABLE clicks COMPUTE STATISTICS FOR ALL COLUMNS")
    top = lab.tables["clicks"].inspect.frequent_values("eventType").set_index("value")["rows"]
    assert dict(top) == frame["eventType"].value_counts().to_dict()  # three values: counted exactly
    cities = lab.tables["clicks"].inspect.frequent_values("city").set_index("value")["rows"]  # merged: UTF-8 kept
    assert dict(cities) == frame["city"].value_counts().to_dict()
    profile = lab.tables["clicks"].profile().columns.set_index("column")
    assert set(profile.loc["city", "top_values"]) == {"Köln", "Zürich", "München", "Berlin"}
    report = lab.tables["clicks"].skew("userId")  # no scan: the kept sketches
    assert report.source.startswith("statistics: the frequent-items sketches kept with them")
    assert report.heavy_hitters("(table)")["value"].iloc[0] == frame["userId"].value_counts().index[0]
    estimate = lab.explain("SELECT * FROM clicks WHERE eventType = 'click'")
    assert estimate.estimated_rows == int((frame["eventType"] == "click").sum())


def test_an_analyze_of_more_partitions_than_sketches_can_carry_keeps_none_unless_the_table_names_columns(
        clicks, monkeypatch):
    """Per partition a frequent-items sketch a column: past FREQUENT_ITEMS_PARTITIONS partitions in one job (100,000
    crashed Spark's driver), the default ones are left out and the summary says so; a table naming its columns keeps
    theirs. The bound is lowered to 2 here so that three partitions pass it."""
    from colstats_lab.analyze import runner

    lab, frame = clicks
    monkeypatch.setattr(runner, "FREQUENT_ITEMS_PARTITIONS", 2)
    summary = str(lab.sql("ANALYZE TABLE clicks COMPUTE STATISTICS FOR ALL COLUMNS"))
    assert "Frequent items not kept: 3 partitions" in summary and "colstats.frequent.items.columns" in summary
    assert lab.tables["clicks"].inspect.frequent_values("eventType").empty
    lab.sql("ALTER TABLE clicks SET TBLPROPERTIES ('colstats.frequent.items.columns'='eventType')")
    summary = str(lab.sql("ANALYZE TABLE clicks COMPUTE STATISTICS FOR ALL COLUMNS"))
    assert "Frequent items not kept" not in summary
    top = lab.tables["clicks"].inspect.frequent_values("eventType").set_index("value")["rows"]
    assert dict(top) == frame["eventType"].value_counts().to_dict()


def test_a_utf8_sketch_round_trips_and_merges():
    from datasketches import frequent_items_sketch

    from colstats_lab.column_statistics.frequent_items import Utf8StringsSerDe

    serde = Utf8StringsSerDe()
    sketches = []
    for words in (["Köln"] * 5 + ["Zürich"] * 2, ["Köln", "東京", "東京"]):
        sketch = frequent_items_sketch(4)
        for word in words:
            sketch.update(word)
        sketches.append(sketch.serialize(serde))
    merged = FrequentItems.merged(sketches, "string")
    union = FrequentItems.union([FrequentItems.of(b, "string") for b in sketches])
    for items in (merged, union):
        assert {v.value: v.estimate for v in items.top()} == {"Köln": 6, "Zürich": 2, "東京": 2}


def test_a_near_unique_column_keeps_no_sketch_unless_its_table_names_it(lab):
    rows = 3_000
    lab.sql("CREATE TABLE ids (id BIGINT, again BIGINT)")
    lab.tables["ids"].write(pd.DataFrame({"id": np.arange(rows), "again": np.arange(rows) // 2}))
    lab.sql("ANALYZE TABLE ids COMPUTE STATISTICS FOR ALL COLUMNS")
    # `id`: every value once, nothing frequent, its NDV says so; `again` repeats each value
    assert lab.metastore.column_stats.columns_with_frequent_items("default", "ids") == {"again"}
    # a dimension's key its table names keeps its sketch: a join's prediction reads it
    lab.sql("CREATE TABLE dims (k BIGINT)")
    lab.sql("ALTER TABLE dims SET TBLPROPERTIES ('colstats.frequent.items.columns'='k')")
    lab.tables["dims"].write(pd.DataFrame({"k": np.arange(rows)}))
    assert lab.metastore.column_stats.columns_with_frequent_items("default", "dims") == {"k"}

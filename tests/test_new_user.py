"""What a new user met on pandas' and pyarrow's files, each fixed: frequent items kept without asking (a profile's
top values, a skew report with no scan), non-ASCII values merged, figures shown as the column holds them, a sample
that says what it read, files that cannot be read named at registration, a quiet terminal."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from colstats_lab.column_statistics.frequent_items import FrequentItems
from colstats_lab.errors import LabWarning
from colstats_lab.ui import format as fmt


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
    assert lab.metastore.columns_with_frequent_items("default", "ids") == {"again"}
    # a dimension's key its table names keeps its sketch: a join's prediction reads it
    lab.sql("CREATE TABLE dims (k BIGINT)")
    lab.sql("ALTER TABLE dims SET TBLPROPERTIES ('colstats.frequent.items.columns'='k')")
    lab.tables["dims"].write(pd.DataFrame({"k": np.arange(rows)}))
    assert lab.metastore.columns_with_frequent_items("default", "dims") == {"k"}


def test_figures_are_shown_as_the_column_holds_them():
    assert fmt.number(4999.998812) == "4,999.998812"  # not rounded up past the column's max
    assert fmt.number(-0.0) == "0.0" and fmt.number(float("nan")) == "NaN"
    from colstats_lab.ui.stats_view import _bound

    assert _bound(float("nan"), "") == "NaN"


def test_a_sample_of_partitions_of_few_row_groups_says_what_it_read(lab, tmp_path):
    root = tmp_path / "few"
    for day in ("a", "b"):
        (root / f"ds={day}").mkdir(parents=True)
        pq.write_table(pa.table({"v": np.arange(8_000)}), root / f"ds={day}" / "part-0.parquet", row_group_size=1_000)
    lab.register_external("few", str(root))
    message = lab.sql("ANALYZE TABLE few COMPUTE STATISTICS FOR ALL COLUMNS SAMPLE 1 PERCENT").message
    assert "of each partition's rows read" in message
    assert "A sample reads 2 row groups of a partition at least" in message and "not 1%" in message


def test_registering_files_spark_cannot_read_or_empty_folders_says_so(lab, tmp_path, capsys):
    root = tmp_path / "landing"
    for day in ("a", "b", "c"):
        (root / f"ds={day}").mkdir(parents=True)
    pd.DataFrame({"v": [1, 2]}).to_parquet(root / "ds=a" / "part-0.parquet")
    good = (root / "ds=a" / "part-0.parquet").read_bytes()
    (root / "ds=b" / "part-0.parquet").write_bytes(good[: len(good) // 2])  # cut short
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", LabWarning)
        lab.register_external("landing", str(root))
    text = " ".join(str(w.message) for w in said if issubclass(w.category, LabWarning))
    assert "1 file(s) that are not Parquet Spark can read (ds=b/part-0.parquet)" in text
    assert "1 partition folder(s) with no data file (ds=c)" in text
    from colstats_lab.cli import main as cli_main

    assert cli_main(["--home", lab.home, "register", "landing2", str(root)]) == 0
    assert "Note: default.landing2 at" in capsys.readouterr().out


@pytest.mark.slow
def test_a_spark_start_prints_no_jvm_notices(tmp_path):
    script = ("from colstats_lab import Lab\nimport pandas as pd\nlab = Lab(home={!r})\n"
              "lab.sql('CREATE TABLE t (x BIGINT)')\nlab.tables['t'].write(pd.DataFrame({{'x': [1, 2]}}))\n"
              "print(lab.sql('ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS').message)\n").format(str(tmp_path / "lab"))
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_SUBMIT_ARGS"}  # Spark's own start, as a user's
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Analyzed default.t" in done.stdout
    assert "incubator modules" not in done.stderr and "restricted mode" not in done.stderr

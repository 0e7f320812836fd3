"""No estimate shown as exact, at any level: after NOSCAN or SAMPLE the table level of a partitioned table merges its
partitions' bands (never Hive's largest partition's NDV shown as accurate), an unknown figure is None (never the 0
Hive's struct holds for it), and every view, frame and DESCRIBE says which figures are estimates. Files pyarrow
wrote, as a user's are: NaN beside NULL, strings too varied for a dictionary, booleans mixed in a chunk."""
from __future__ import annotations

import datetime as dt
import os
import shutil

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from colstats_lab.cli import main as cli_main
from colstats_lab.errors import InvalidArgument
from colstats_lab.ui.stats_view import stats_table_html

DAYS = [f"2026-11-0{d}" for d in range(1, 5)]


def _events(root, rows_per_file: int = 3_000, seed: int = 11) -> pd.DataFrame:
    """Four days, two files a day, row groups of 1,000: a Zipf user id, a price with NaN beside NULL, a note of
    60,000 possible values (too many for a dictionary page), a flag mixed in every chunk, a day."""
    rng = np.random.default_rng(seed)
    frames = []
    for day in DAYS:
        folder = os.path.join(root, f"eventDate={day}")
        os.makedirs(folder)
        for part in range(2):
            n = rows_per_file
            price = rng.uniform(0, 5000, n)
            price[rng.random(n) < 0.05] = np.nan
            price_mask = rng.random(n) < 0.03  # NULL, apart from NaN
            note = [f"nöte-{v}-{'x' * (v % 40)}" for v in rng.integers(0, 60_000, n)]
            table = pa.table({
                "userId": pa.array(rng.zipf(1.4, n) % 50_000, pa.int64()),
                "price": pa.array(price, pa.float64(), mask=price_mask),
                "note": pa.array([None if i % 9 == 0 else v for i, v in enumerate(note)], pa.string()),
                "flag": pa.array(rng.random(n) < 0.3, pa.bool_()),
                "seen": pa.array([dt.date(2026, 1, 1) + dt.timedelta(days=int(d)) for d in rng.integers(0, 300, n)],
                                 pa.date32()),
            })
            pq.write_table(table, os.path.join(folder, f"part-{part}.parquet"), row_group_size=1_000,
                           use_dictionary=["userId", "flag", "seen"])
            frame = table.to_pandas()
            frame["price_nan"] = np.isnan(price) & ~price_mask
            frame["eventDate"] = day
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)


@pytest.fixture
def events(lab, tmp_path):
    root = str(tmp_path / "events")
    truth = _events(root)
    lab.register_external("events", root, partition_types={"eventDate": "string"})
    return lab, truth, root


def _truth(frame: pd.DataFrame) -> dict:
    notes = frame["note"].dropna()
    prices = frame["price"][~frame["price_nan"]].dropna()
    return {"userid": {"ndv": frame["userId"].nunique(), "nulls": 0},
            "price": {"nans": int(frame["price_nan"].sum()), "nulls": int(frame["price"].isna().sum()
                                                                          - frame["price_nan"].sum()),
                      "ndv": frame["price"][~frame["price_nan"]].nunique(), "min": prices.min()},
            "note": {"ndv": notes.nunique(), "max_len": int(notes.str.len().max()),
                     "avg_len": float(frame["note"].fillna("").str.len().mean()), "nulls": int(frame["note"].isna().sum())},
            "flag": {"trues": int(frame["flag"].sum()), "falses": int((~frame["flag"]).sum())},
            "seen": {"min": frame["seen"].min(), "max": frame["seen"].max()}}


def _holds(low, high, truth) -> bool:
    return (low is None or low <= truth) and (high is None or truth <= high)


@pytest.mark.parametrize("tier", ["NOSCAN", "SAMPLE 30 PERCENT"])
def test_the_table_level_of_tiered_partitions_says_which_figures_are_estimates(events, tier):
    lab, frame, _ = events
    lab.set("colstats.sample.seed", 7)
    lab.sql(f"ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS {tier}")
    truth = _truth(frame)
    level = lab.tables["events"].stats_level().frame.set_index("column")
    assert set(level["tier"]) != {"every value"}  # the table level says its partitions' tier
    bounds = lab.tables["events"].inspect.bounds()
    table_bounds = bounds[bounds["partition"].isna()].set_index(["column", "figure"])
    for column, figures in truth.items():
        row = level.loc[column]
        bands = row["bands"] or {}
        for figure, value in figures.items():
            band = table_bounds.loc[(lab.tables["events"].metastore_table().spelled(column), figure)] \
                if (lab.tables["events"].metastore_table().spelled(column), figure) in table_bounds.index else None
            if band is None or band["exact"]:
                if figure not in bands:  # exact: the truth itself
                    shown = row[figure].to_date() if hasattr(row[figure], "to_date") else row[figure]
                    assert shown == pytest.approx(value) if isinstance(value, float) else shown == value, \
                        (column, figure, shown, value)
                continue
            assert figure in bands, (column, figure)  # not exact: marked so in the frame
            assert _holds(band["low"], band["high"], value), (column, figure, band.to_dict(), value)
    # NaNs: unknown without a scan, never 0; the NDV of four partitions without sketches is a band
    if tier == "NOSCAN":
        assert level.loc["price", "nans"] is None and "nans" in level.loc["price", "bands"]
        assert not table_bounds.loc[("userId", "ndv"), "exact"]
    stats = lab.tables["events"].inspect.stats()
    table_row = stats[stats["partition"].isna()].set_index("column").loc["userId"]
    assert "ndv" in table_row["estimated"]
    parts = stats[stats["partition"].notna() & (stats["column"] == "price")]
    if tier == "NOSCAN":
        assert parts["nans"].isna().all() and all("nans" in e for e in parts["estimated"])  # unknown, not 0
    html = stats_table_html(level.reset_index(), lab.tables["events"].metastore_table())
    assert "≈" in html and ("unknown" in html if tier == "NOSCAN" else True)
    described = lab.sql("DESCRIBE FORMATTED events userId").df.set_index("info_name")["info_value"]
    assert described["estimated"].startswith("distinct_count ≈ ")
    if tier == "NOSCAN":
        price = lab.sql("DESCRIBE FORMATTED events price").df.set_index("info_name")["info_value"]
        assert price["num_nans"] == "" and "num_nans unknown" in price["estimated"]


def test_bounds_are_shown_as_their_type(events):
    lab, frame, _ = events
    lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS NOSCAN")
    bounds = lab.tables["events"].inspect.bounds()
    seen = bounds[(bounds["column"] == "seen") & (bounds["figure"].isin(["min", "max"]))]
    assert len(seen) and all(isinstance(v, dt.date) for v in seen["value"])
    assert min(seen["value"]) == frame["seen"].min()


def test_a_file_of_no_rows_adds_nothing_to_its_partition(events):
    lab, frame, root = events
    empty = pq.read_table(os.path.join(root, f"eventDate={DAYS[0]}", "part-0.parquet")).slice(0, 0)
    pq.write_table(empty, os.path.join(root, f"eventDate={DAYS[0]}", "part-9.parquet"))
    lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS NOSCAN")
    day = frame[frame["eventDate"] == DAYS[0]]
    stats = lab.tables["events"].inspect.stats()
    row = stats[(stats["partition"] == f"eventDate={DAYS[0]}") & (stats["column"] == "note")].iloc[0]
    assert row["rows"] == len(day) and row["nulls"] == int(day["note"].isna().sum())
    user = stats[(stats["partition"] == f"eventDate={DAYS[0]}") & (stats["column"] == "userId")].iloc[0]
    assert (user["min"], user["max"], user["nulls"]) == (day["userId"].min(), day["userId"].max(), 0)


def test_files_that_are_gone_make_statistics_stale_and_are_not_recorded_as_empty(events, capsys):
    lab, frame, root = events
    lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS NOSCAN")
    before = lab.metastore.catalog.get_partition("default", "events", f"eventdate={DAYS[0]}").parameters["numRows"]
    shutil.rmtree(os.path.join(root, f"eventDate={DAYS[0]}"))
    with pytest.raises(InvalidArgument, match=r"partition eventDate=2026-11-01 at .* no longer exists; MSCK REPAIR"):
        lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR ALL COLUMNS NOSCAN")
    assert lab.metastore.catalog.get_partition("default", "events", f"eventdate={DAYS[0]}").parameters["numRows"] == before
    freshness = lab.tables["events"].inspect.staleness().set_index("partition")
    gone = freshness.loc[f"eventDate={DAYS[0]}"]
    assert not gone["accurate"] and "no longer exists" in gone["reason"]
    assert cli_main(["--home", lab.home, "check", "events"]) == 1
    assert "no longer exists" in capsys.readouterr().out
    lab.set("colstats.analyze.missing_as_empty", True)  # asked for: recorded as empty
    lab.sql(f"ANALYZE TABLE events PARTITION (eventDate='{DAYS[0]}') COMPUTE STATISTICS FOR ALL COLUMNS NOSCAN")
    assert lab.metastore.catalog.get_partition("default", "events", f"eventdate={DAYS[0]}").parameters["numRows"] == "0"


def test_files_that_disagree_on_a_columns_type_are_named_before_any_job(lab, tmp_path):
    root = tmp_path / "mixed"
    for day, ids in (("a", [1, 2]), ("b", [3.0, None])):  # pandas: an integer column with a NULL is float64
        (root / f"ds={day}").mkdir(parents=True)
        pd.DataFrame({"id": ids, "v": ["x", "y"]}).to_parquet(root / f"ds={day}" / "part-0.parquet")
    with pytest.raises(InvalidArgument, match=r"column id is int64 in ds=a/part-0.parquet and double in "
                                              r"ds=b/part-0.parquet"):
        lab.register_external("mixed", str(root))
    assert not lab.metastore.catalog.table_exists("default", "mixed")
    os.remove(root / "ds=b" / "part-0.parquet")
    lab.register_external("mixed", str(root))
    pd.DataFrame({"id": [3.5], "v": ["z"]}).to_parquet(root / "ds=a" / "part-1.parquet")  # another job's file
    with pytest.raises(InvalidArgument, match="column id is int64 in ds=a/part-0.parquet and double"):
        lab.sql("ANALYZE TABLE mixed COMPUTE STATISTICS FOR ALL COLUMNS NOSCAN")


@pytest.mark.slow
def test_a_notebook_with_a_failing_cell_names_it_and_keeps_its_outputs(tmp_path, capsys):
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('first ran')"),
                                               nbformat.v4.new_code_cell("x = 1\n1 / 0"),
                                               nbformat.v4.new_code_cell("print('third ran')")])
    path = tmp_path / "broken.ipynb"
    nbformat.write(notebook, path)
    assert cli_main(["execute", str(path), "--output", str(tmp_path / "out.ipynb")]) == 1
    err = capsys.readouterr().err
    assert "cell 2 ('x = 1') raised ZeroDivisionError: division by zero" in err
    written = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert written.cells[0].outputs[0]["text"] == "first ran\n" and not written.cells[2].outputs
    assert cli_main(["execute", str(path), "--output", str(tmp_path / "all.ipynb"), "--allow-errors"]) == 1
    assert nbformat.read(tmp_path / "all.ipynb", as_version=4).cells[2].outputs[0]["text"] == "third ran\n"

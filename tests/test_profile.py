"""A profile read from the kept statistics: every figure against pandas over the rows written, each sketch's figure
within the bound its sketch states, the suggestions validated by Great Expectations itself on the same rows, and
the anomaly rules over the kept states."""
from __future__ import annotations

import math
import os
import time
from itertools import pairwise

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from colstats_lab.column_statistics.quantiles import rank_error
from colstats_lab.column_statistics.sketches import ndv_relative_error
from colstats_lab.errors import ColstatsError

pytestmark = pytest.mark.both_backends

DAYS = ("2026-03-01", "2026-03-02", "2026-03-03")


def _frame(rows: int = 9_000, seed: int = 3) -> pd.DataFrame:
    """pandas' own data: camelCase and non-ASCII names, NULLs and NaNs apart, a constant, a unique key, a
    skewed city, whole-row duplicates, zeros."""
    rng = np.random.default_rng(seed)
    amount = rng.lognormal(3, 1, rows)
    amount[rng.random(rows) < 0.08] = np.nan  # NaN values: kept as NaN by the Arrow array below
    frame = pd.DataFrame({
        "orderId": np.arange(rows, dtype=np.int64),
        "qty": np.where(rng.random(rows) < 0.3, 0, rng.integers(1, 9, rows)).astype(np.int64),
        "amountEUR": amount,
        "städte": rng.choice(["Köln", "Berlin", "München", "Zürich"], rows, p=[0.55, 0.25, 0.15, 0.05]),
        "source": "web",
        # a key with a few repeats, each seen twice: too few for the frequent items, too few for the NDV to show
        "ticketNo": np.where(np.arange(rows) % 150 == 1, np.arange(rows) - 1, np.arange(rows)).astype(np.int64),
        "ds": rng.choice(DAYS, rows),
    })
    frame.loc[frame.index % 11 == 0, "städte"] = None
    frame.loc[(frame.index % 97 == 0) & (frame.index > 0), "orderId"] = 0  # a key that is not quite unique
    return frame


def _write(frame: pd.DataFrame, folder) -> None:
    """One file per day in Hive's layout, amountEUR's NaN kept apart from NULL (Arrow's float array, no mask)."""
    for day, part in frame.groupby("ds"):
        where = folder / f"ds={day}"
        where.mkdir(parents=True)
        part = part.drop(columns="ds")
        nulls = part["amountEUR"].index % 13 == 0
        amount = pa.array(part["amountEUR"].to_numpy(), mask=np.asarray(nulls), from_pandas=False)
        table = pa.Table.from_pandas(part, preserve_index=False).set_column(2, "amountEUR", amount)
        pq.write_table(table, where / "part-0.parquet", row_group_size=1_000)


def _expected(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows as the table holds them: amountEUR NULL where _write masked it (the frame's index kept through
    the grouping), NaN elsewhere where it was."""
    return frame.assign(amountNull=frame.index % 13 == 0)


@pytest.fixture
def profiled(lab, tmp_path):
    frame = _frame()
    _write(frame, tmp_path / "orders")
    lab.sql(f"CREATE EXTERNAL TABLE orders (orderId BIGINT, qty BIGINT, amountEUR DOUBLE, `städte` STRING, "
            f"source STRING, ticketNo BIGINT) PARTITIONED BY (ds STRING) STORED AS PARQUET LOCATION '{tmp_path / 'orders'}'")
    lab.sql("MSCK REPAIR TABLE orders")
    lab.sql("ALTER TABLE orders SET TBLPROPERTIES ('colstats.kll.enable'='true', "
            "'colstats.frequent.items.columns'='*')")
    lab.tables["orders"].analyze()
    return lab, _expected(frame)


def _number_truth(values: pd.Series, nulls: pd.Series | None = None) -> dict:
    present = values[~nulls] if nulls is not None else values.dropna()
    numbers = present.dropna()
    return {"nulls": int(len(values) - len(present)), "nans": int(present.isna().sum()), "min": numbers.min(),
            "max": numbers.max(), "mean": numbers.mean(), "std": numbers.std(), "values": numbers.to_numpy()}


def test_a_profile_holds_the_figures_pandas_computes_and_runs_no_spark(profiled):
    lab, frame = profiled
    jobs = lab.spark.sparkContext.statusTracker().getJobIdsForGroup()
    started = time.perf_counter()
    profile = lab.tables["orders"].profile()
    seconds = time.perf_counter() - started
    assert lab.spark.sparkContext.statusTracker().getJobIdsForGroup() == jobs  # no Spark job
    columns = profile.columns.set_index("column")
    assert list(columns.index) == ["orderId", "qty", "amountEUR", "städte", "source", "ticketNo"]  # as spelled
    assert (columns["rows"] == len(frame)).all() and profile.rows == len(frame)

    amount = _number_truth(frame["amountEUR"], frame["amountNull"])
    row = columns.loc["amountEUR"]
    assert (row["nulls"], row["nans"]) == (amount["nulls"], amount["nans"])
    assert (row["min"], row["max"]) == (amount["min"], amount["max"])
    assert math.isclose(row["mean"], amount["mean"], rel_tol=1e-9)
    assert math.isclose(row["std"], amount["std"], rel_tol=1e-9)
    for name in ("orderId", "qty"):
        truth = _number_truth(frame[name])
        row = columns.loc[name]
        assert (row["nulls"], row["min"], row["max"]) == (0, truth["min"], truth["max"])
        assert math.isclose(row["mean"], truth["mean"], rel_tol=1e-12)
        assert math.isclose(row["std"], truth["std"], rel_tol=1e-9)
        assert abs(row["ndv"] - frame[name].nunique()) <= ndv_relative_error() * frame[name].nunique()
    assert columns.loc["qty", "zeros"] == int((frame["qty"] == 0).sum())  # exact: 9 values, all listed

    # the histogram: each bin's count within the sketch's stated error of the rows truly in it
    values = amount["values"]
    histogram = columns.loc["amountEUR", "histogram"]
    edges = histogram["edges"]
    assert (edges[0], edges[-1]) == (values.min(), values.max())
    truth = [int(((values >= a) & (values < b)).sum()) for a, b in zip(edges[:-2], edges[1:-1], strict=True)]
    truth.append(int(((values >= edges[-2]) & (values <= edges[-1])).sum()))
    assert histogram["error"] == math.ceil(2 * rank_error() * len(values))
    assert all(abs(c - t) <= histogram["error"] for c, t in zip(histogram["counts"], truth, strict=True)), (histogram, truth)
    qty = columns.loc["qty", "histogram"]  # whole numbers in a short range: a bin per value
    assert qty["edges"] == list(range(10))
    assert all(abs(c - int((frame["qty"] == v).sum())) <= qty["error"] for v, c in enumerate(qty["counts"]))
    # quantiles: the fraction of values at or below each is within the rank error of its rank
    for name, rank in (("p5", 0.05), ("q1", 0.25), ("median", 0.5), ("q3", 0.75), ("p95", 0.95)):
        share = (values <= columns.loc["amountEUR", "quantiles"][name]).mean()
        assert abs(share - rank) <= rank_error() + 1 / len(values), name

    # top values: shares of the non-NULL values, exact while the sketch holds every value
    shares = frame["städte"].value_counts(normalize=True)
    assert columns.loc["städte", "top_values"] == pytest.approx(shares.to_dict(), abs=1e-12)
    assert list(columns.loc["städte", "top_values"]) == list(shares.index)  # most rows first
    assert columns.loc["städte", "nulls"] == int(frame["städte"].isna().sum())

    # duplicates: every column and the partition key, as pandas counts them, within the sketch's bounds
    duplicates = profile.duplicates
    truth = int(frame[["orderId", "qty", "amountEUR", "städte", "source", "ticketNo", "ds"]].duplicated().sum())
    assert duplicates["low"] <= truth <= duplicates["high"] and duplicates["reason"] == ""

    alerts = {(a.column, a.kind) for a in profile.alerts.itertuples()}
    assert ("source", "constant") in alerts and ("städte", "imbalance") in alerts
    assert ("amountEUR", "NaN") in alerts and ("amountEUR", "missing") in alerts and ("qty", "zeros") in alerts
    assert ("amountEUR", "skewed") in alerts  # a log-normal: mean well above the median
    assert ("orderId", "unique") not in alerts  # 92 repeats of 0, seen by the frequent items
    print(f"profile() of 3 partitions took {seconds:.3f} s")


def test_a_partitions_profile_is_that_partitions_rows(profiled):
    lab, frame = profiled
    day = frame[frame["ds"] == DAYS[1]]
    profile = lab.tables["orders"].profile({"ds": DAYS[1]})
    assert profile.level == f"ds={DAYS[1]}" and profile.rows == len(day)
    row = profile.columns.set_index("column").loc["amountEUR"]
    truth = _number_truth(day["amountEUR"], day["amountNull"])
    assert (row["nulls"], row["nans"]) == (truth["nulls"], truth["nans"])
    assert math.isclose(row["mean"], truth["mean"], rel_tol=1e-9)
    duplicates = profile.duplicates
    truth_rows = int(day[["orderId", "qty", "amountEUR", "städte", "source", "ticketNo"]].duplicated().sum())
    assert duplicates["low"] <= truth_rows <= duplicates["high"]
    with pytest.raises(ColstatsError, match="ds=1999-01-01"):
        lab.tables["orders"].profile("ds=1999-01-01")


def test_suggestions_hold_on_their_rows_in_great_expectations_and_one_fails_after_a_bad_append(profiled, tmp_path):
    import great_expectations as gx  # a test extra: installed wherever the tests run
    lab, frame = profiled
    profile = lab.tables["orders"].profile()
    suggested = profile.suggest()
    kinds = {(r.column, r.constraint) for r in suggested.itertuples()}
    assert {("qty", "complete"), ("qty", "non-negative"), ("städte", "retain completeness"),
            ("städte", "allowed set"), ("source", "allowed set")} <= kinds
    # amountEUR holds NaN: no range holds in every Great Expectations backend (Spark's counts NaN outside it)
    assert ("amountEUR", "range") not in kinds
    assert ("orderId", "unique") not in kinds and ("ticketNo", "unique") not in kinds  # neither proven unique
    assert ("ticketNo", "unique") in {(a.column, a.kind) for a in profile.alerts.itertuples()}  # an estimate says so
    assert "not proof" in profile.alerts.set_index("column").loc["ticketNo", "evidence"]
    assert all(r.evidence for r in suggested.itertuples())
    suite = profile.to_great_expectations(str(tmp_path / "suite.json"))
    assert any(note.startswith("no range for amountEUR: it holds") for note in suite["meta"]["colstats_lab"]["left_out"])

    rows = pd.read_parquet(tmp_path / "orders")  # the table's rows as pandas reads them, the key included
    context = gx.get_context(mode="ephemeral")
    batches = context.data_sources.add_pandas("orders").add_dataframe_asset("rows") \
        .add_batch_definition_whole_dataframe("all")
    result = batches.get_batch(batch_parameters={"dataframe": rows}).validate(gx.ExpectationSuite(**suite))
    failed = [r.expectation_config.type for r in result.results if not r.success]
    assert result.success, failed
    assert len(result.results) == len(suggested)

    bad = rows.head(5).copy()
    bad["städte"] = "Atlantis"
    appended = pd.concat([rows, bad], ignore_index=True)
    after = batches.get_batch(batch_parameters={"dataframe": appended}).validate(gx.ExpectationSuite(**suite))
    assert not after.success
    assert [r.expectation_config.kwargs["column"] for r in after.results if not r.success] == ["städte"]


def test_a_sampled_profile_says_so_and_suggests_nothing_from_estimates(lab, tmp_path):
    frame = _frame(rows=40_000).drop(columns="ds")
    folder = tmp_path / "flat"
    folder.mkdir()
    for i in range(4):
        pq.write_table(pa.Table.from_pandas(frame.iloc[i::4], preserve_index=False), folder / f"f{i}.parquet",
                       row_group_size=1_000)
    lab.sql(f"CREATE EXTERNAL TABLE flat (orderId BIGINT, qty BIGINT, amountEUR DOUBLE, `städte` STRING, "
            f"source STRING, ticketNo BIGINT) STORED AS PARQUET LOCATION '{folder}'")
    lab.sql("ALTER TABLE flat SET TBLPROPERTIES ('colstats.kll.enable'='true')")
    lab.tables["flat"].analyze(sample=0.1)
    profile = lab.tables["flat"].profile()
    columns = profile.columns.set_index("column")
    sampled = [c for c in columns.index if columns.loc[c, "sampled"]]
    assert sampled and all("sample" in columns.loc[c, "sampled"] for c in sampled)
    # a sample's sums describe its row groups: its mean is no estimate of the table's, so none is shown
    assert "amountEUR" in sampled and columns.loc["amountEUR", "mean"] is None
    assert "a sample's sums" in columns.loc["amountEUR", "missing"]
    assert not any(r.column in sampled for r in profile.suggest().itertuples())
    assert profile.duplicates["rows"] is None and profile.duplicates["reason"]
    assert "sample" in profile.to_html()


def test_duplicates_stop_holding_after_a_write_and_hold_again_after_analyze(lab):
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"a": rng.integers(0, 40, 6_000), "b": rng.choice(["x", "y"], 6_000)})
    lab.sql("CREATE TABLE t (a BIGINT, b STRING) PARTITIONED BY (ds STRING)")
    for day in DAYS:
        lab.tables["t"].write(frame, partition={"ds": day})
    lab.tables["t"].analyze()  # a table keeping no distributions: no row sketches, no sums, and the profile says so
    plain = lab.tables["t"].profile()
    assert plain.duplicates["rows"] is None and "colstats.kll.enable" in plain.duplicates["reason"]
    a = plain.columns.set_index("column").loc["a"]
    assert a["mean"] is None and "colstats.kll.enable" in a["missing"]
    lab.sql("DROP TABLE t")
    lab.sql("CREATE TABLE t (a BIGINT, b STRING) PARTITIONED BY (ds STRING)")
    lab.sql("ALTER TABLE t SET TBLPROPERTIES ('colstats.kll.enable'='true')")
    for day in DAYS:
        lab.tables["t"].write(frame, partition={"ds": day})
    lab.tables["t"].analyze()
    truth = int(pd.concat([frame.assign(ds=d) for d in DAYS]).duplicated().sum())
    held = lab.tables["t"].profile().duplicates
    assert held["low"] <= truth <= held["high"]
    lab.tables["t"].analyze(["a"])  # no row changed: the sketches follow to this ANALYZE's write ID
    assert lab.tables["t"].profile().duplicates == held
    lab.tables["t"].write(frame.head(10), partition={"ds": DAYS[0]})
    after = lab.tables["t"].profile().duplicates
    assert after["rows"] is None and "ANALYZE" in after["reason"]
    lab.tables["t"].analyze()
    assert lab.tables["t"].profile().duplicates["low"] <= truth + 10 <= lab.tables["t"].profile().duplicates["high"]


def test_anomaly_rules_check_each_new_state_against_the_ones_before(lab):
    lab.sql("CREATE TABLE daily (amount DOUBLE) PARTITIONED BY (ds STRING)")
    handle = lab.tables["daily"]
    rng = np.random.default_rng(9)
    sizes = [1_000, 1_040, 980, 1_010, 3_000]  # the last day triples
    for i, rows in enumerate(sizes[:4]):
        handle.write(pd.DataFrame({"amount": rng.normal(50, 5, rows)}), partition={"ds": f"2026-04-0{i + 1}"})
    handle.expect("amount", anomaly="relative_change", threshold=0.5)
    baseline = handle.expect("amount", anomaly="baseline", threshold=3, figure="rows", window=3)
    assert set(baseline["passed"]) == {True}
    handle.write(pd.DataFrame({"amount": rng.normal(50, 5, sizes[4])}), partition={"ds": "2026-04-05"})
    outcomes = handle.inspect.expectations()
    last = outcomes[outcomes["partition"] == "ds=2026-04-05"]
    assert len(last) == 2 and not last["passed"].any()
    change = last[last["threshold"].map(lambda t: t["strategy"]) == "relative_change"]["figure"].iloc[0]
    assert float(change) == pytest.approx(sizes[4] / sizes[3] - 1)
    earlier = pd.Series(sizes[1:4], dtype=float)
    distance = last[last["threshold"].map(lambda t: t["strategy"]) == "baseline"]["figure"].iloc[0]
    assert float(distance) == pytest.approx(abs(sizes[4] - earlier.mean()) / earlier.std())
    with pytest.raises(ColstatsError, match="anomaly is relative_change or baseline"):
        handle.expect("amount", anomaly="trend", threshold=1)
    with pytest.raises(ColstatsError, match="threshold"):
        handle.expect("amount", anomaly="baseline")


@pytest.mark.slow  # the full lane: Chromium
@pytest.mark.sqlite_only("the page is the same whatever keeps the statistics")
def test_a_profile_of_200_columns_fits_a_1400_px_screen(lab, tmp_path):
    import os

    from playwright.sync_api import sync_playwright
    from served import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS

    from colstats_lab.ui.profile_view import CARDS_A_PAGE, ProfileView

    rng = np.random.default_rng(1)
    kinds = [lambda n: rng.integers(0, 1_000, n), lambda n: rng.normal(0, 1, n),
             lambda n: rng.choice(["alpha", "beta", "a rather long value of a column"], n)]
    frame = pd.DataFrame({f"c{i:03d}_{'ÄßÇ' if i % 50 == 0 else 'x'}": kinds[i % 3](2_000) for i in range(200)})
    folder = tmp_path / "wide"
    folder.mkdir()
    frame.to_parquet(folder / "part-0.parquet", index=False)
    lab.register_external("wide", str(folder))
    lab.sql("ALTER TABLE wide SET TBLPROPERTIES ('colstats.kll.enable'='true', 'colstats.frequent.items.columns'='*')")
    lab.tables["wide"].analyze()
    started = time.perf_counter()
    view = ProfileView(lab, "wide")  # the view pages the cards: its first page is all a notebook draws at first
    built = time.perf_counter() - started
    assert view.cards.value.count('class="colstats-card"') == CARDS_A_PAGE and view.page.max == -(-200 // CARDS_A_PAGE)
    page_html = str(tmp_path / "wide.html")
    view.result.to_html(page_html)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        opened = time.perf_counter()
        page.goto(f"file://{page_html}")
        page.locator(".colstats-card").nth(199).wait_for()
        shown = time.perf_counter() - opened
        boxes = page.evaluate("() => [...document.querySelectorAll('.colstats-card')].map(c => "
                              "{ const b = c.getBoundingClientRect(); return [b.left, b.right]; })")
        assert len(boxes) == 200 and all(0 <= left and right <= 1400 for left, right in boxes)
        os.makedirs(ARTIFACTS, exist_ok=True)
        page.screenshot(path=os.path.join(ARTIFACTS, "profile_200_columns.png"))
        browser.close()
    with open(os.path.join(ARTIFACTS, "profile_timing.txt"), "w") as out:  # figures for the notes, not asserted
        out.write(f"ProfileView of 200 columns built in {built:.2f} s; its HTML page of 200 cards shown in "
                  f"{shown:.2f} s\n")


def test_a_spread_lost_to_the_values_magnitude_is_unknown_not_wrong(lab):
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"near": 1e12 + rng.integers(0, 3, 5_000).astype(float),  # mean / sd about 1e12
                          "far": 1e6 + rng.normal(0, 1e3, 5_000)})  # about 1e3: kept
    lab.sql("CREATE TABLE spread (near DOUBLE, far DOUBLE)")
    lab.sql("ALTER TABLE spread SET TBLPROPERTIES ('colstats.kll.enable'='true')")
    lab.tables["spread"].write(frame)
    columns = lab.tables["spread"].profile().columns.set_index("column")
    assert columns.loc["near", "mean"] == pytest.approx(frame["near"].mean(), rel=1e-15)
    assert columns.loc["near", "std"] is None and "no standard deviation" in columns.loc["near", "missing"]
    assert columns.loc["far", "std"] == pytest.approx(frame["far"].std(), rel=1e-6)


def test_structs_and_a_column_of_nulls_profile_without_suggesting_what_no_frame_has(lab, tmp_path):
    rows = 3_000
    folder = tmp_path / "people"
    folder.mkdir()
    pq.write_table(pa.table({"userId": pa.array(np.arange(rows)), "allNull": pa.array([None] * rows, pa.float64()),
                             "addr": pa.array([{"city": "Köln" if i % 3 else None, "zip": i % 50}
                                               for i in range(rows)])}), folder / "a.parquet")
    lab.register_external("people", str(folder))
    lab.sql("ALTER TABLE people SET TBLPROPERTIES ('colstats.kll.enable'='true', 'colstats.frequent.items.columns'='*')")
    lab.tables["people"].analyze()
    profile = lab.tables["people"].profile()
    columns = profile.columns.set_index("column")
    assert columns.loc["allNull", "nulls"] == rows and columns.loc["allNull", "mean"] is None
    assert columns.loc["allNull", "missing"] == ""  # nothing to sketch: no note of a missing histogram
    assert columns.loc["addr.city", "nulls"] == rows // 3 and columns.loc["addr.zip", "mean"] == pytest.approx(24.5)
    suggested = set(profile.suggest()["column"])
    assert "userId" in suggested and not {"addr.city", "addr.zip"} & suggested  # a leaf is no column of a frame
    with pytest.raises(ColstatsError, match="default.people is not partitioned"):
        lab.tables["people"].profile("ds=1")


def _payments(tmp_path, rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"discount": np.where(rng.random(rows) < 0.85, 0.0, rng.uniform(1, 9, rows)),
                          "refund": np.where(rng.random(rows) < 0.6, 0.0, -rng.uniform(1, 9, rows)),
                          "price": np.round(rng.uniform(-5, 5, rows), 1)})
    frame.loc[0, "price"] = -0.0  # a zero to pandas as to Spark's comparisons
    os.makedirs(tmp_path / "pay")
    frame.to_parquet(tmp_path / "pay" / "part-0.parquet")
    return frame


@pytest.mark.parametrize("rows", [150, 40_000])  # a sketch holding every value, and one that compacted
def test_every_numbers_zeros_are_counted_exactly_by_the_pass(lab, tmp_path, rows):
    """Issue 76 item 19: zeros were estimated from the KLL sketch, or unknown where 0 lay inside the range
    (ydata-profiling counts them); ANALYZE's pass now counts them beside the sums, exactly, -0.0 among them."""
    frame = _payments(tmp_path, rows)
    lab.register_external("pay", str(tmp_path / "pay"))
    lab.sql("ALTER TABLE pay SET TBLPROPERTIES ('colstats.kll.enable'='true')")
    lab.sql("ANALYZE TABLE pay COMPUTE STATISTICS FOR ALL COLUMNS")
    profile = lab.tables["pay"].profile()
    columns = profile.columns.set_index("column")
    for column in ("discount", "refund", "price"):
        assert columns.loc[column, "zeros"] == int((frame[column] == 0).sum()), column
        assert "zeros estimated" not in columns.loc[column, "missing"]
    assert columns.loc["price", "zeros"] > 0
    for column in ("discount", "refund"):
        assert (column, "zeros") in set(zip(profile.alerts["column"], profile.alerts["kind"], strict=True))
    card = profile.to_html()
    assert f"{int((frame.price == 0).sum()):,} (" in card and "≈" not in card.split("price")[1].split("</dl>")[0]


@pytest.mark.parametrize("rows", [150, 40_000])
def test_zeros_kept_before_they_were_counted_come_from_the_kll_sketch(lab, tmp_path, rows):
    """Statistics kept before the lab counted zeros (NUM_ZEROS NULL): where the range ends at 0 the sketch's ranks
    count them, exactly while it holds every value, else within its rank error, and say so; elsewhere unknown."""
    frame = _payments(tmp_path, rows)
    lab.register_external("pay", str(tmp_path / "pay"))
    lab.sql("ALTER TABLE pay SET TBLPROPERTIES ('colstats.kll.enable'='true')")
    lab.sql("ANALYZE TABLE pay COMPUTE STATISTICS FOR ALL COLUMNS")
    with lab.metastore.db.transaction() as db:  # as a metastore of schema 29 kept them
        db.execute("UPDATE TAB_COL_STATS SET NUM_ZEROS = NULL")
    profile = lab.tables["pay"].profile()
    columns = profile.columns.set_index("column")
    for column in ("discount", "refund"):
        truth = int((frame[column] == 0).sum())
        zeros = columns.loc[column, "zeros"]
        if rows <= 200:
            assert zeros == truth, column
        else:
            assert abs(zeros - truth) <= rank_error() * rows, (column, zeros, truth)
            assert "zeros estimated" in columns.loc[column, "missing"]
            assert "≈ " in profile.to_html()
        assert (column, "zeros") in set(zip(profile.alerts["column"], profile.alerts["kind"], strict=True))
    assert pd.isna(columns.loc["price", "zeros"])  # 0 inside the range: the ranks cannot count one value


def test_strings_have_a_length_histogram_and_dates_their_range_on_the_card(lab, tmp_path):
    """Issue 76 item 19: ydata-profiling shows a histogram of a string's lengths and a datetime's range; the
    lab's profile had neither. Lengths in code points as Spark's length() counts them (non-ASCII, the empty
    string, NULLs left out), merged over partitions, each whole-width bin within the sketch's stated error."""
    rng = np.random.default_rng(5)
    rows = 12_000
    frame = pd.DataFrame({
        "note": ["ü" * int(n) for n in rng.integers(0, 45, rows)],
        "day": pd.to_datetime("2026-01-01") + pd.to_timedelta(rng.integers(0, 300, rows), unit="D"),
        "seenAt": pd.to_datetime("2026-01-01") + pd.to_timedelta(rng.integers(0, 10**8, rows), unit="s"),
        "ds": rng.choice(["a", "b"], rows)})
    frame.loc[frame.index % 9 == 0, "note"] = None
    frame["day"] = frame["day"].dt.date
    for ds, part in frame.groupby("ds"):
        os.makedirs(tmp_path / "notes" / f"ds={ds}")
        part.drop(columns="ds").to_parquet(tmp_path / "notes" / f"ds={ds}" / "part-0.parquet", index=False,
                                           row_group_size=500)
    lab.register_external("notes", str(tmp_path / "notes"))
    lab.sql("ALTER TABLE notes SET TBLPROPERTIES ('colstats.kll.enable'='true')")
    lab.sql("ANALYZE TABLE notes COMPUTE STATISTICS FOR ALL COLUMNS")
    profile = lab.tables["notes"].profile()
    columns = profile.columns.set_index("column")
    lengths = frame["note"].dropna().str.len().to_numpy()
    histogram = columns.loc["note", "length_histogram"]
    edges = histogram["edges"]
    assert all(isinstance(e, int) for e in edges) and edges[0] == 0 and edges[-1] >= lengths.max()
    truth = [int(((lengths >= a) & (lengths < b)).sum()) for a, b in pairwise(edges)]
    assert sum(truth) == len(lengths) and histogram["error"] == math.ceil(2 * rank_error() * len(lengths))
    assert all(abs(c - t) <= histogram["error"] for c, t in zip(histogram["counts"], truth, strict=True)), (histogram, truth)
    assert "length histogram" not in columns.loc["note", "missing"]

    card = profile.to_html()
    assert 'aria-label="length histogram"' in card
    assert str(frame["day"].min()) in card and str(frame["day"].max()) in card
    assert str(frame["seenAt"].min()) in card and str(frame["seenAt"].max()) in card

    lab.sql("ANALYZE TABLE notes COMPUTE STATISTICS FOR COLUMNS note SAMPLE 20 PERCENT")  # of 12 row groups each
    sampled = lab.tables["notes"].profile().columns.set_index("column").loc["note"]
    assert sampled["sampled"] and sampled["length_histogram"] is None and "no length histogram" in sampled["missing"]

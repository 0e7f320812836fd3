"""Exports of a table's statistics: the tidy frame, the JSON report and the standalone HTML page (opened
in headless Chromium with no server), each checked against figures computed from the written rows."""
from __future__ import annotations

import datetime as dt
import json
import os
from decimal import Decimal

import pandas as pd
import pytest
from playwright.sync_api import sync_playwright
from served import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS

from colstats_lab.errors import ColstatsError

SCHEMA = "id bigint, x int, note string, d date, amt decimal(10,2)"


def _rows(ds: str, n: int) -> list[tuple]:
    return [(i, None if i % 4 == 0 else i % 3 + len(ds), None if i % 5 == 0 else "n" * (i % 7 + 1),
             dt.date(2026, 1, 1) + dt.timedelta(days=i), Decimal(i) / 4) for i in range(n)]


@pytest.fixture
def exported(lab, spark):
    """ds=a and ds=b analyzed, then ds=b written again (stale) and ds=c written with no statistics."""
    lab.set("hive.stats.column.autogather", False)
    lab.sql("CREATE TABLE sales (id BIGINT, x INT, note STRING, d DATE, amt DECIMAL(10,2)) PARTITIONED BY (ds STRING)")
    written = {"a": _rows("a", 30), "b": _rows("bb", 20)}
    for ds, rows in written.items():
        lab.tables["sales"].write(spark.createDataFrame(rows, SCHEMA), partition={"ds": ds})
    lab.sql("ANALYZE TABLE sales PARTITION (ds) COMPUTE STATISTICS FOR ALL COLUMNS")
    lab.tables["sales"].write(spark.createDataFrame(_rows("b", 2), SCHEMA), partition={"ds": "b"})
    lab.tables["sales"].write(spark.createDataFrame(_rows("c", 3), SCHEMA), partition={"ds": "c"})
    return written


def _expected(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["id", "x", "note", "d", "amt"], dtype=object)


def test_stats_frame_holds_every_partitions_figures_and_freshness(lab, exported):
    frame = lab.tables["sales"].inspect.stats()
    assert list(frame.columns[:3]) == ["partition", "column", "type"]
    assert sorted(frame["partition"].dropna().unique()) == ["ds=a", "ds=b", "ds=c"]
    assert len(frame) == 4 * 5  # the table level and three partitions, five columns each
    for ds, rows in exported.items():
        truth = _expected(rows)
        got = frame[frame["partition"] == f"ds={ds}"].set_index("column")
        for column in ("id", "x", "d", "amt"):
            values = truth[column].dropna()
            assert (got.loc[column, "min"], got.loc[column, "max"]) == (values.min(), values.max()), (ds, column)
            assert got.loc[column, "nulls"] == truth[column].isna().sum()
        lengths = truth["note"].dropna().map(len)
        assert got.loc["note", "max_len"] == lengths.max()
        assert got.loc["note", "avg_len"] == pytest.approx(lengths.sum() / len(truth))
        assert abs(got.loc["x", "ndv"] - truth["x"].nunique()) <= 1
        assert isinstance(got.loc["d", "min"], dt.date) and isinstance(got.loc["amt", "max"], Decimal)
    b = frame[frame["partition"] == "ds=b"].set_index("column")
    assert (b["accurate"] == False).all() and b.loc["x", "reason"].startswith("partition changed by write")  # noqa: E712
    assert b.loc["x", "rows"] == 22
    c = frame[frame["partition"] == "ds=c"]
    assert c["accurate"].isna().all() and set(c["reason"]) == {"never analyzed"} and c["min"].isna().all()
    a = frame[frame["partition"] == "ds=a"]
    assert (a["accurate"] == True).all()  # noqa: E712
    assert a["last_analyzed"].dt.tz is not None and (a["last_analyzed"] <= pd.Timestamp.now(tz="UTC")).all()


def test_json_report_is_the_frame_as_data(lab, exported, tmp_path):
    path = lab.tables["sales"].report(str(tmp_path / "sales.json"))
    data = json.loads(open(path).read())  # strict JSON: no NaN
    assert (data["table"], data["kind"], data["partition_keys"], data["partitions"]) == ("default.sales", "managed",
                                                                                       ["ds"], 3)
    assert data["rows"] == 30 + 22 + 3
    records = {(r["partition"], r["column"]): r for r in data["statistics"]}
    frame = lab.tables["sales"].inspect.stats()
    assert len(records) == len(frame)
    a_d = records[("ds=a", "d")]
    assert (a_d["min"], a_d["max"]) == ("2026-01-01", (dt.date(2026, 1, 1) + dt.timedelta(days=29)).isoformat())
    assert records[("ds=a", "amt")]["max"] == str(Decimal(29) / 4)
    assert records[("ds=c", "x")]["accurate"] is None and records[("ds=b", "x")]["accurate"] is False
    with pytest.raises(ColstatsError, match="as .html or .json"):
        lab.tables["sales"].report(str(tmp_path / "sales.txt"))
    with pytest.raises(ColstatsError, match="cannot write the report to .*nowhere/sales.json: No such file"):
        lab.tables["sales"].report(str(tmp_path / "nowhere" / "sales.json"))


@pytest.mark.slow
def test_html_report_opens_alone_in_a_browser_with_its_charts(lab, exported, tmp_path):
    path = lab.tables["sales"].report(str(tmp_path / "sales.html"))
    requested = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1300, "height": 1400})
        page.on("request", lambda request: requested.append(request.url))
        page.goto(f"file://{path}")
        page.locator(".js-plotly-plot").nth(1).wait_for(timeout=30_000)  # nulls & NDV, freshness map
        assert page.locator(".js-plotly-plot").count() == 2
        heatmap_rows = page.locator(".js-plotly-plot").nth(1).locator(".ytick text").all_text_contents()
        assert sorted(heatmap_rows) == ["ds=a", "ds=b", "ds=c"]
        stale = page.locator("table.colstats-table").nth(1).inner_text()
        assert stale.count("ds=b") == 5 and "ds=a" not in stale and "partition changed by write" in stale
        header = page.locator(".colstats-header").first.inner_text()
        assert "55 rows" in header and "3 partitions by ds" in header
        os.makedirs(ARTIFACTS, exist_ok=True)
        page.screenshot(path=os.path.join(ARTIFACTS, "report.png"), full_page=True)
        browser.close()
    assert all(url.startswith(("file://", "data:", "blob:")) for url in requested), requested  # no network


def test_analyze_frame_gives_a_dataframes_statistics_without_storing_them(lab, spark):
    rows = [(i, None if i % 7 == 0 else f"k{i % 3}", None if i % 4 == 0 else i * 0.5, dt.date(2026, 1, 1 + i % 28),
             ["a"]) for i in range(200)]
    frame = spark.createDataFrame(rows, "Id bigint, Key string, Amount double, Day date, Tags array<string>")
    truth = pd.DataFrame([r[:4] for r in rows], columns=["Id", "Key", "Amount", "Day"], dtype=object)
    tables_before = lab.metastore.catalog.get_tables("default")
    whole = lab.analyze_frame(frame).set_index("column")
    assert list(whole.index) == ["Id", "Key", "Amount", "Day", "Tags", "Tags.element"]
    # an array's sizes, and its elements' figures over its 200 elements
    assert (whole.loc["Tags", "min"], whole.loc["Tags", "max"], whole.loc["Tags", "nulls"]) == (1, 1, 0)
    assert (whole.loc["Tags.element", "values"], whole.loc["Tags.element", "ndv"]) == (200, 1)
    for column in ("Id", "Amount", "Day"):
        values = truth[column].dropna()
        assert (whole.loc[column, "min"], whole.loc[column, "max"]) == (values.min(), values.max())
        assert whole.loc[column, "nulls"] == truth[column].isna().sum()
    assert abs(whole.loc["Id", "ndv"] - 200) <= 200 * 0.05  # the sketch's bound
    keys = truth["Key"].dropna()
    assert whole.loc["Key", "max_len"] == keys.map(len).max() and whole.loc["Key", "ndv"] == 3
    assert whole["accurate"].isna().all() and whole["rows"].eq(200).all()
    grouped = lab.analyze_frame(frame, by="Key")
    assert sorted(grouped["partition"].unique()) == ["Key=__HIVE_DEFAULT_PARTITION__", "Key=k0", "Key=k1", "Key=k2"]
    k1 = grouped[(grouped["partition"] == "Key=k1") & (grouped["column"] == "Id")].iloc[0]
    in_k1 = [r[0] for r in rows if r[1] == "k1"]
    assert (k1["rows"], k1["min"], k1["max"]) == (len(in_k1), min(in_k1), max(in_k1))
    from_pandas = lab.analyze_frame(pd.DataFrame({"n": [3, None, 1]})).set_index("column")
    assert (from_pandas.loc["n", "min"], from_pandas.loc["n", "max"], from_pandas.loc["n", "nulls"]) == (1.0, 3.0, 1)
    with pytest.raises(ColstatsError, match="column nope does not exist in the DataFrame"):
        lab.analyze_frame(frame, by=["nope"])
    assert lab.metastore.catalog.get_tables("default") == tables_before


def test_the_landing_frame_lists_every_table_the_stalest_first(lab, exported, spark):
    from colstats_lab.frames import tables_frame

    lab.sql("CREATE DATABASE other")
    lab.sql("CREATE TABLE other.fresh (v INT)")
    lab.tables["other.fresh"].write(spark.createDataFrame([(1,), (2,)], "v int"))
    lab.sql("ANALYZE TABLE other.fresh COMPUTE STATISTICS FOR ALL COLUMNS")
    lab.sql("CREATE TABLE other.untouched (v INT)")
    lab.tables["other.untouched"].write(spark.createDataFrame([(1,)], "v int"))
    frame = tables_frame(lab.metastore).set_index("table")
    assert list(frame.index) == ["sales", "untouched", "fresh"]  # stale, never analyzed, accurate
    sales = frame.loc["sales"]
    assert (sales["database"], sales["kind"], sales["partitions"], sales["rows"]) == ("default", "managed", 3, 55)
    # ds=b went stale and ds=c was never analyzed; ANALYZE's write ID and the later writes are named
    assert sales["stale_partitions"] == 2 and sales["stale_reason"].startswith("ds=b: partition changed by write")
    assert (sales["accurate_columns"], sales["columns"]) == (0, 5)
    assert frame.loc["fresh", "accurate_columns"] == 1 and frame.loc["fresh", "stale_partitions"] == 0
    assert pd.isna(frame.loc["untouched", "last_analyzed"]) and not pd.isna(frame.loc["fresh", "last_analyzed"])
    # the last write: the start of the latest committed transaction that inserted into the table
    started = lab.metastore.db.execute(
        "SELECT max(T.TXN_STARTED) FROM TXNS T JOIN TXN_COMPONENTS C ON C.TC_TXNID = T.TXN_ID "
        "WHERE C.TC_TABLE = 'untouched' AND C.TC_OPERATION_TYPE = 'i' AND T.TXN_STATE = 'c'").fetchone()[0]
    assert frame.loc["untouched", "last_write"] == pd.Timestamp(started, unit="s", tz="UTC")
    assert frame.loc["fresh", "last_write"] <= frame.loc["untouched", "last_write"]


def test_a_table_never_analyzed_says_so_on_the_landing(lab, tmp_path):
    """Registered files (or writes without gathering) were never analyzed: nothing went stale."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from colstats_lab.frames import tables_frame
    from colstats_lab.workbench.dashboard import landing_rows

    for day in ("d1", "d2"):
        os.makedirs(tmp_path / "logs" / f"ds={day}")
        pq.write_table(pa.table({"v": [1, 2]}), str(tmp_path / "logs" / f"ds={day}" / "part-0.parquet"))
    lab.register_external("logs", str(tmp_path / "logs"))
    frame = tables_frame(lab.metastore)
    logs = frame.set_index("table").loc["logs"]
    assert logs["stale_partitions"] == 0 and "never computed" in logs["stale_reason"]
    shown = landing_rows(frame).set_index("table").loc["default.logs"]
    assert ">never analyzed</span>" in shown["statistics"] and "not accurate" not in shown["statistics"]
    assert logs["rows"] is None and shown["rows"] == "not counted"  # 4 rows nobody counted yet, not 0
    lab.sql("ANALYZE TABLE logs PARTITION (ds='d1') COMPUTE STATISTICS FOR ALL COLUMNS")
    badge = landing_rows(tables_frame(lab.metastore)).set_index("table").loc["default.logs", "statistics"]
    assert "not accurate in 1 partition(s)" in badge  # analyzed once: the other day is now what is missing

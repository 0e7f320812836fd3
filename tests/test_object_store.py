"""Tables on an object store: a real S3 server (SeaweedFS, started once per session), listed and read by the
lab through s3fs with the standard AWS variables only, read by Spark through the server's FUSE mount of the
bucket (`colstats.storage.spark_prefixes`). Figures are checked against pandas over pyarrow's read of the
same objects, freshness against another job's changes, and requests are counted at the server."""
from __future__ import annotations

import io
import math
import os
import uuid

import fsspec
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fsspec.registry import known_implementations

from colstats_lab import Lab
from colstats_lab.column_statistics.sketches import ndv_relative_error
from colstats_lab.errors import ColstatsError, QueryError, StorageError
from colstats_lab.storage import (
    SPARK_PREFIXES,
    STORAGE_LISTING,
    footer_of,
    list_data_files,
    parse_prefixes,
    spark_file_uri,
    spark_uri,
)


def test_spark_reads_s3_through_s3a_or_the_prefix_a_user_maps():
    assert spark_uri("s3://lake/ev/ds=1/a.parquet", {}) == "s3a://lake/ev/ds=1/a.parquet"
    assert spark_uri("s3n://lake/ev", {}) == "s3a://lake/ev"
    assert spark_uri("s3a://lake/ev", {}) == "s3a://lake/ev"
    assert spark_uri("gs://lake/ev", {}) == "gs://lake/ev"
    mapped = parse_prefixes("s3://lake/=file:///mnt/lake/, s3://other/=s3a://other-copy/")
    assert spark_uri("s3://lake/ev/ds=1/a.parquet", mapped) == "/mnt/lake/ev/ds=1/a.parquet"
    assert spark_uri("s3a://lake/ev", mapped) == "/mnt/lake/ev"  # a catalog's s3a:// names the same bucket
    assert spark_uri("s3://lakehouse/ev", mapped) == "s3a://lakehouse/ev"  # a prefix ends at a slash
    assert spark_uri("s3://other/x", mapped) == "s3a://other-copy/x"
    assert spark_file_uri("s3://lake/a b#1.parquet", mapped) == "file:/mnt/lake/a%20b%231.parquet"
    assert spark_file_uri("s3://lakehouse/a b.parquet", mapped) == "s3a://lakehouse/a%20b.parquet"
    assert spark_uri("/data/ev", mapped) == "/data/ev"
    with pytest.raises(StorageError, match="prefix=prefix pairs"):
        parse_prefixes("s3://lake/ file:///mnt")
    with pytest.raises(StorageError, match="not '/mnt/lake'"):
        parse_prefixes({"/mnt/lake": "s3://lake/"})


def _put(key: str, frame: pd.DataFrame, **options) -> None:
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), buffer, **options)
    fsspec.filesystem("s3").pipe(key, buffer.getvalue())


def _events(rng: np.random.Generator, rows: int) -> pd.DataFrame:
    """What pandas writes by default: camelCase names, NULLs in every column, nanosecond timestamps."""
    frame = pd.DataFrame({
        "userId": rng.integers(0, 400, rows).astype("float64"),
        "eventType": rng.choice(["view", "click", "buy", "ünïcode"], rows),
        "amount": rng.normal(50, 20, rows).round(2),
        "at": pd.Timestamp("2026-01-01") + pd.to_timedelta(rng.integers(0, 10**9, rows), unit="s"),
    })
    for column in frame.columns:
        frame.loc[rng.random(rows) < 0.1, column] = None
    return frame


def _read_back(location: str) -> pd.DataFrame:
    """pandas over pyarrow's own read of every object under `location` (s3fs, no lab code), with `ds`."""
    fs = fsspec.filesystem("s3")
    fs.invalidate_cache()
    parts = []
    for key in sorted(fs.find(location.removeprefix("s3://"))):
        if key.rsplit("/", 1)[-1].startswith(("_", ".")):
            continue
        with fs.open(key, "rb") as handle:
            frame = pq.read_table(handle).to_pandas()
        frame["ds"] = key.split("ds=")[1].split("/")[0]
        parts.append(frame)
    return pd.concat(parts, ignore_index=True)


@pytest.fixture
def s3_lab(lab, s3):
    lab.set(SPARK_PREFIXES, {"s3://lake/": "file://" + s3.mounts["lake"]})
    return lab


def _table_location(name: str) -> str:
    return f"s3://lake/{name}-{uuid.uuid4().hex[:8]}"


def _stats(lab, table: str) -> dict:
    frame = lab.tables[table].inspect.stats()
    return {row["column"]: row for _, row in frame[frame["partition"].isna()].iterrows()}


@pytest.mark.slow
def test_an_s3_table_is_analyzed_from_one_listing_and_a_footer_a_file_and_figures_match_pyarrow(s3_lab, s3):
    lab, location = s3_lab, _table_location("events")
    rng = np.random.default_rng(7)
    for day in ("2026-01-01", "2026-01-02", "2026-01-03"):
        for part in range(3):
            _put(f"{location.removeprefix('s3://')}/ds={day}/part-{part}.parquet", _events(rng, 400))
    fsspec.filesystem("s3").pipe(f"{location.removeprefix('s3://')}/_SUCCESS", b"")  # a marker, not data

    before = s3.requests()
    table = lab.register_external("events", location).metastore_table()
    assert table.location == location and [c.name for c in table.cols] == ["userid", "eventtype", "amount", "at"]
    registering = s3.requests() - before
    assert registering["LIST"] == 1 and registering["HEAD"] == 0  # one flat listing, not one a partition

    before = s3.requests()
    lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR COLUMNS")
    analyzing = s3.requests() - before
    assert analyzing["LIST"] == 1 and analyzing["HEAD"] == 0 and analyzing["GET"] <= 9  # one GET a footer at most

    truth = _read_back(location)
    stats = _stats(lab, "events")
    assert all(stats[c]["accurate"] for c in stats)
    assert int(lab.resolve("events").parameters["numRows"]) == len(truth) == 3600
    for column in ("userId", "eventType", "amount", "at"):  # named as the files spell them
        values = truth[column]
        assert stats[column]["nulls"] == values.isna().sum(), column
        exact = values.nunique()
        assert abs(stats[column]["ndv"] - exact) <= max(1, ndv_relative_error() * exact), column
        if column in ("userId", "amount"):
            assert stats[column]["min"] == values.min() and stats[column]["max"] == values.max(), column
    assert stats["at"]["min"] == truth["at"].min().to_pydatetime()
    answer = lab.sql("SELECT count(*) AS n, max(amount) AS top FROM events WHERE ds = '2026-01-02'").df
    day = truth[truth["ds"] == "2026-01-02"]
    assert answer["n"][0] == len(day) and math.isclose(answer["top"][0], day["amount"].max())

    before = s3.requests()
    assert lab.tables["events"].inspect.staleness()["accurate"].all()
    checking = s3.requests() - before
    assert checking["LIST"] == 1 and checking["GET"] == 0 and checking["HEAD"] == 0  # never a cached listing

    lab.sql("ALTER TABLE events SET TBLPROPERTIES ('colstats.kll.enable'='true')")
    lab.tables["events"].analyze()  # the profile's sums and row sketches, read from the store as any ANALYZE
    before = s3.requests()
    profile = lab.tables["events"].profile()
    profiling = s3.requests() - before
    before = s3.requests()
    lab.tables["events"].stats_level()
    viewing = s3.requests() - before
    # no data read; its freshness proof lists what the statistics view lists (2 LISTs today, the view's too)
    assert profiling["GET"] == 0 and profiling["HEAD"] == 0 and profiling["LIST"] == viewing["LIST"], profiling
    amount = profile.columns.set_index("column").loc["amount"]
    assert math.isclose(amount["mean"], truth["amount"].mean()) and math.isclose(amount["std"], truth["amount"].std())
    duplicates = profile.duplicates
    assert duplicates["low"] <= int(truth.duplicated().sum()) <= duplicates["high"]


@pytest.mark.slow
def test_another_jobs_changes_make_exactly_their_partitions_stale_and_an_identical_rewrite_does_not(s3_lab, s3):
    lab, location = s3_lab, _table_location("changed")
    key = location.removeprefix("s3://")
    rng = np.random.default_rng(11)
    frames = {}
    for day in "abcde":
        frames[day] = pd.DataFrame({"id": np.arange(100, dtype="int64"), "v": rng.integers(0, 10**6, 100)})
        for part in range(2):
            _put(f"{key}/ds={day}/part-{part}.parquet", frames[day], compression="none", use_dictionary=False)
    lab.register_external("changed", location)
    lab.sql("ANALYZE TABLE changed COMPUTE STATISTICS FOR COLUMNS")
    fs = fsspec.filesystem("s3")

    _put(f"{key}/ds=a/part-9.parquet", frames["a"], compression="none", use_dictionary=False)  # added
    fs.rm(f"{key}/ds=b/part-1.parquet")  # removed
    other = frames["c"].assign(v=frames["c"]["v"] + 1)  # other bytes, the same size, within the same second
    sizes = [fs.size(f"{key}/ds=c/part-0.parquet")]
    _put(f"{key}/ds=c/part-0.parquet", other, compression="none", use_dictionary=False)
    _put(f"{key}/ds=d/part-0.parquet", frames["d"], compression="none", use_dictionary=False)  # identical bytes
    fs.invalidate_cache()
    sizes.append(fs.size(f"{key}/ds=c/part-0.parquet"))
    assert sizes[0] == sizes[1]  # what a size-and-second check could not tell apart

    staleness = lab.tables["changed"].inspect.staleness().set_index("partition")["accurate"].astype(bool)
    assert sorted(staleness[~staleness].index) == ["ds=a", "ds=b", "ds=c"]
    truth = _read_back(location)
    answer = lab.sql("SELECT count(*) AS n, max(v) AS top FROM changed").df  # never from the stale figures
    assert answer["n"][0] == len(truth) == 1000 and answer["top"][0] == truth["v"].max()

    lab.sql("ANALYZE TABLE changed COMPUTE STATISTICS FOR COLUMNS")
    assert lab.tables["changed"].inspect.staleness()["accurate"].all()
    stats = _stats(lab, "changed")
    assert stats["v"]["max"] == truth["v"].max() and int(lab.resolve("changed").parameters["numRows"]) == 1000


@pytest.mark.slow
def test_a_footer_of_an_object_rewritten_since_its_listing_fails_by_name(s3):
    key = f"lake/{uuid.uuid4().hex[:8]}/f.parquet"
    _put(key, pd.DataFrame({"x": [1, 2, 3]}))
    listed = list_data_files("s3://" + key.rsplit("/", 1)[0])
    assert [f.path for f in listed] == ["s3://" + key] and listed[0].etag
    _put(key, pd.DataFrame({"x": [4, 5, 6]}))
    with pytest.raises(StorageError, match=f"s3://{key} changed since it was listed"):
        footer_of(listed[0])


@pytest.mark.slow
def test_storage_errors_are_one_line_naming_the_uri(s3_lab, s3, monkeypatch):
    lab = s3_lab
    with pytest.raises(StorageError) as missing:
        lab.register_external("nowhere", "s3://no-such-bucket-here/ev")
    assert "s3://no-such-bucket-here" in str(missing.value) and "\n" not in str(missing.value)
    with pytest.raises(ColstatsError, match="no data files under s3://lake/empty-prefix"):
        lab.register_external("empty", "s3://lake/empty-prefix")
    with pytest.raises(StorageError, match="no file system is known for nosuch://"):
        lab.register_external("odd", "nosuch://lake/ev")
    if known_implementations.get("gs") and not _installed("gcsfs"):
        with pytest.raises(StorageError, match="gcsfs"):
            lab.register_external("gcs", "gs://lake/ev")

    location = _table_location("guarded")
    _put(f"{location.removeprefix('s3://')}/part-0.parquet", pd.DataFrame({"x": [1]}))
    import s3fs

    for variable, value, said in (("AWS_SECRET_ACCESS_KEY", "not-the-secret", "denied"),
                                  ("AWS_ENDPOINT_URL", "http://127.0.0.1:9", "cannot reach")):
        monkeypatch.setenv(variable, value)
        s3fs.S3FileSystem.clear_instance_cache()  # a new client reads the environment again
        try:
            with pytest.raises(StorageError) as refused:
                lab.register_external("guarded", location)
            assert said in str(refused.value) and location in str(refused.value) and "\n" not in str(refused.value)
        finally:
            monkeypatch.undo()
            s3fs.S3FileSystem.clear_instance_cache()
    assert not lab.metastore.catalog.table_exists("default", "guarded")

    # registering reads the footers through s3fs, no Spark; a Spark with neither the S3A connector nor a mapping of
    # the bucket is refused by name when it reads
    assert lab.register_external("guarded", location).metastore_table().location == location
    lab.spark.conf.unset(SPARK_PREFIXES)
    try:
        with pytest.raises(QueryError, match=r"Spark cannot read s3a:// here: add the connector .* or map the prefix "
                                             r"with colstats.storage.spark_prefixes"):
            lab.sql("ANALYZE TABLE guarded COMPUTE STATISTICS FOR ALL COLUMNS")
    finally:
        lab.set(SPARK_PREFIXES, {"s3://lake/": "file://" + s3.mounts["lake"]})


def _installed(package: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(package) is not None


def _delta_options(s3) -> dict[str, str]:
    """What deltalake needs to write to the test server: its own keys, from the server's identity."""
    return {"AWS_ENDPOINT_URL": s3.endpoint, "AWS_ACCESS_KEY_ID": s3.environment["AWS_ACCESS_KEY_ID"],
            "AWS_SECRET_ACCESS_KEY": s3.environment["AWS_SECRET_ACCESS_KEY"], "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true"}


@pytest.mark.slow
def test_a_delta_table_written_by_deltalake_to_s3_is_analyzed_and_followed_by_its_log(s3_lab, s3):
    from deltalake import write_deltalake

    lab, location = s3_lab, _table_location("delta")
    rng = np.random.default_rng(5)
    first = pd.DataFrame({"orderId": rng.integers(0, 10**6, 600), "amount": rng.normal(100, 30, 600).round(2),
                          "ds": rng.choice(["2026-01-01", "2026-01-02", "2026-01-03"], 600)})
    write_deltalake(location, first, partition_by=["ds"], storage_options=_delta_options(s3))
    table = lab.register_external("orders", location, format="delta").metastore_table()
    assert table.location == location
    lab.sql("ANALYZE TABLE orders COMPUTE STATISTICS FOR COLUMNS")
    stats = _stats(lab, "orders")
    assert stats["orderId"]["min"] == first["orderId"].min() and stats["amount"]["max"] == first["amount"].max()
    assert int(lab.resolve("orders").parameters["numRows"]) == 600 and all(stats[c]["accurate"] for c in stats)

    more = pd.DataFrame({"orderId": [10**7], "amount": [-5.0], "ds": ["2026-01-02"]})
    write_deltalake(location, more, partition_by=["ds"], mode="append", storage_options=_delta_options(s3))
    staleness = lab.tables["orders"].inspect.staleness().set_index("partition")["accurate"].astype(bool)
    assert sorted(staleness[~staleness].index) == ["ds=2026-01-02"]  # the log's version 1 added one file there
    answer = lab.sql("SELECT count(*) AS n, max(orderId) AS top FROM orders").df
    assert answer["n"][0] == 601 and answer["top"][0] == 10**7
    lab.sql("ANALYZE TABLE orders COMPUTE STATISTICS FOR COLUMNS")
    assert _stats(lab, "orders")["amount"]["min"] == -5.0


@pytest.mark.slow
def test_a_delta_table_with_deletion_vectors_on_s3_counts_its_live_rows(s3_lab, s3):
    """deltalake writes the table to the server; the vectors are committed through the bucket's mount (the
    protocol's bytes, as Databricks writes them); the lab reads log, vectors and files through S3."""
    from delta_commits import delete_rows, deltalake_rows, duckdb_rows, live_adds
    from deltalake import write_deltalake

    lab, location = s3_lab, _table_location("delta-dv")
    rng = np.random.default_rng(9)
    first = pd.DataFrame({"orderId": np.arange(300), "amount": rng.normal(100, 30, 300).round(2),
                          "ds": ["2026-01-01"] * 150 + ["2026-01-02"] * 150})
    write_deltalake(location, first, partition_by=["ds"], storage_options=_delta_options(s3),
                    configuration={"delta.enableDeletionVectors": "true"})
    mounted = os.path.join(s3.mounts["lake"], location.removeprefix("s3://lake/"))
    files = {add["partitionValues"]["ds"]: path for path, add in live_adds(mounted).items()}
    delete_rows(mounted, {files["2026-01-01"]: list(range(0, 150, 2))}, prefix="q9")
    delete_rows(mounted, {files["2026-01-02"]: [0, 149]}, storage="i")
    truth = deltalake_rows(mounted).to_pandas()
    assert sorted(truth.orderId) == sorted(duckdb_rows(mounted).to_pandas().orderId) and len(truth) == 300 - 75 - 2
    lab.register_external("orders", location, format="delta")
    assert lab.sql("SELECT count(*) FROM orders").df.iloc[0, 0] == len(truth)  # the log's counts, no scan
    lab.sql("ANALYZE TABLE orders COMPUTE STATISTICS FOR ALL COLUMNS")
    stats = _stats(lab, "orders")
    assert int(lab.resolve("orders").parameters["numRows"]) == len(truth)
    assert stats["orderId"]["min"] == truth.orderId.min() == 1 and stats["orderId"]["max"] == truth.orderId.max()
    assert stats["amount"]["ndv"] == pytest.approx(truth.amount.nunique(), rel=0.05)
    assert all(stats[c]["accurate"] for c in stats)


@pytest.mark.slow
def test_an_iceberg_table_in_an_s3_warehouse_is_analyzed_and_its_puffin_file_lands_beside_it(s3_lab, s3, tmp_path):
    from pyiceberg.catalog import load_catalog
    from test_table_formats import assert_puffin_matches, assert_stats, iceberg_partition, three_appends

    lab, warehouse = s3_lab, _table_location("warehouse")
    properties = {"type": "sql", "uri": f"sqlite:///{tmp_path}/iceberg-catalog.db", "warehouse": warehouse,
                  "s3.endpoint": s3.endpoint, "s3.access-key-id": s3.environment["AWS_ACCESS_KEY_ID"],
                  "s3.secret-access-key": s3.environment["AWS_SECRET_ACCESS_KEY"], "s3.region": "us-east-1"}
    catalog = load_catalog("ice", **properties)
    catalog.create_namespace("db")
    three_appends(catalog)  # pyiceberg writes its data and metadata files to the server
    lab.attach("ice", properties)
    assert lab.resolve("ice.db.events").location.startswith(warehouse + "/")
    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    truth = catalog.load_table("db.events").scan().to_pandas()
    assert_stats(lab, "ice.db.events", truth, iceberg_partition)

    published = lab.tables["ice.db.events"].publish().details
    assert published.statistics_path.startswith(lab.resolve("ice.db.events").location + "/metadata/")  # on S3
    assert_puffin_matches(catalog, lab, "db.events")
    assert lab.tables["ice.db.events"].publish().details.unchanged


@pytest.mark.slow
def test_an_iceberg_table_of_a_rest_catalog_is_analyzed_and_its_statistics_committed_through_the_catalog(s3_lab, s3):
    """SeaweedFS's Iceberg REST catalog over an S3 Tables bucket, attached with pyiceberg's REST properties (OAuth2
    client credentials): pyiceberg writes the table, the lab analyzes it and commits its statistics file through
    the catalog (`set-statistics`); another engine's commit leaves them on the old snapshot, a new ANALYZE and
    publish put them on the new one, and the lab's older file is removed."""
    from pyiceberg.catalog import load_catalog
    from test_table_formats import (
        assert_puffin_matches,
        assert_stats,
        commit_equality_deletes,
        commit_position_deletes,
        iceberg_partition,
        rows,
        three_appends,
    )

    bucket = f"tables-{uuid.uuid4().hex[:8]}"
    s3.table_bucket(bucket)
    lab = s3_lab
    properties = {"type": "rest", "uri": s3.iceberg_uri, "warehouse": f"s3://{bucket}/",
                  "credential": f"{s3.environment['AWS_ACCESS_KEY_ID']}:{s3.environment['AWS_SECRET_ACCESS_KEY']}",
                  "s3.endpoint": s3.endpoint, "s3.access-key-id": s3.environment["AWS_ACCESS_KEY_ID"],
                  "s3.secret-access-key": s3.environment["AWS_SECRET_ACCESS_KEY"], "s3.region": "us-east-1"}
    catalog = load_catalog("rest", **properties)
    catalog.create_namespace("db")
    three_appends(catalog)
    # Spark reads the data files through a mount of their folder (a mount of the bucket's, the namespace's or the
    # table's folder drops the attributes that make them the catalog's)
    lab.set(SPARK_PREFIXES, {"s3://lake/": "file://" + s3.mounts["lake"],
                             f"s3://{bucket}/db/events/data/": "file://" + s3.mount(f"{bucket}/db/events/data")})
    lab.attach("rest", properties)
    assert lab.sql("SHOW TABLES IN rest.db").df["tab_name"].tolist() == ["events"]
    lab.sql("ANALYZE TABLE rest.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    truth = catalog.load_table("db.events").scan().to_pandas()
    assert_stats(lab, "rest.db.events", truth, iceberg_partition)

    first = lab.tables["rest.db.events"].publish().details
    assert first.statistics_path.startswith(f"s3://{bucket}/") and first.statistics_path.endswith(".stats")
    assert_puffin_matches(catalog, lab, "db.events")  # read back through the catalog and pyiceberg's FileIO
    # SeaweedFS refuses Parquet under metadata/: the partition statistics file goes beside the data files
    assert first.partition_statistics_path.startswith(f"s3://{bucket}/db/events/data/partition-stats-")
    counted = lab.tables["rest.db.events"].partition_statistics()
    assert counted.data_record_count.sum() == len(truth) and counted.data_file_count.sum() == 3

    catalog.load_table("db.events").append(rows(5, "app", 2, 300))  # another engine commits, and another deletes
    web = next(t.file for t in catalog.load_table("db.events").scan().plan_files() if "ds=web" in t.file.file_path)
    commit_position_deletes(catalog.load_table("db.events"), web, [0, 3, 4])  # by its s3:// path, as Iceberg names it
    assert lab.tables["rest.db.events"].inspect.freshness().accurate.eq(False).any()
    lab.sql("ANALYZE TABLE rest.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    second = lab.tables["rest.db.events"].publish().details
    truth = catalog.load_table("db.events").scan().to_pandas()  # pyiceberg applies the deletes itself
    assert len(truth) == 30 + 12 + 7 + 5 - 3
    assert_stats(lab, "rest.db.events", truth, iceberg_partition)
    assert_puffin_matches(catalog, lab, "db.events")
    table = catalog.load_table("db.events")
    assert {f.statistics_path for f in table.metadata.statistics} == {first.statistics_path, second.statistics_path}

    # an equality delete on the store, by value in its own partition (pyiceberg cannot read it: the truth is the
    # spec's rule over the rows before it)
    app = next(t.file for t in table.scan().plan_files() if "ds=app" in t.file.file_path)
    commit_equality_deletes(catalog.load_table("db.events"), pa.table({"id": pa.array([100, 301, 5], pa.int64())}),
                            app.partition)
    lab.sql("ANALYZE TABLE rest.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    kept = truth[~((truth.ds == "app") & truth.id.isin([100, 301, 5]))]
    assert len(kept) == len(truth) - 2  # id 5 lives in ds=web: the delete of ds=app leaves it
    assert_stats(lab, "rest.db.events", kept, iceberg_partition)


@pytest.mark.slow
def test_the_dashboard_shows_an_s3_table_and_what_another_job_changed_in_a_browser(s3_lab, s3):
    import os

    from playwright.sync_api import sync_playwright
    from served import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, free_port, serving

    from colstats_lab.cli import DASHBOARD_NOTEBOOK, voila_command

    lab, location = s3_lab, _table_location("shown")
    key = location.removeprefix("s3://")
    rng = np.random.default_rng(3)
    for day in ("2026-02-01", "2026-02-02"):
        _put(f"{key}/ds={day}/part-0.parquet", _events(rng, 300))
    lab.register_external("shown", location)
    lab.sql("ANALYZE TABLE shown COMPUTE STATISTICS FOR COLUMNS")
    _put(f"{key}/ds=2026-02-02/part-0.parquet", _events(rng, 300))  # another job rewrites a file
    port = free_port()
    env = {**os.environ, "COLSTATS_HOME": lab.home, "PLOOMBER_STATS_ENABLED": "false"}  # the AWS variables too
    with serving(voila_command(DASHBOARD_NOTEBOOK, port), port, os.path.join(lab.home, "voila.log"), env=env) as url, \
            sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1400})
        page.goto(url, timeout=120_000)
        landing = page.locator("table.colstats-table").first
        landing.wait_for(timeout=120_000)
        row = landing.locator("tbody tr", has_text="default.shown")
        assert "\texternal\t" in row.inner_text() and "not accurate in 1 partition(s)" in row.inner_text()
        row.click()
        table = page.locator("table.colstats-table").nth(1)
        table.wait_for(timeout=120_000)
        assert all(f"\n{c}\t" in "\n" + table.inner_text() for c in ("userId", "eventType", "amount", "at"))
        page.locator(".lm-TabBar-tab", has_text="Freshness").click()
        freshness = page.locator(".widget-tab-contents .lm-Widget:visible").first
        freshness.locator(".js-plotly-plot").wait_for(timeout=60_000)
        assert "1 of 2 partitions need an ANALYZE" in freshness.inner_text()
        os.makedirs(ARTIFACTS, exist_ok=True)
        page.screenshot(path=os.path.join(ARTIFACTS, "dashboard_s3_table.png"), full_page=True)
        browser.close()


@pytest.mark.slow
def test_without_storage_credentials_spark_lists_the_table_and_freshness_says_its_proof_is_weaker(s3_lab, s3,
                                                                                                monkeypatch):
    import s3fs

    lab, location = s3_lab, _table_location("listed")
    key = location.removeprefix("s3://")
    rng = np.random.default_rng(17)
    for day in ("a", "b"):  # no nanosecond timestamps: Spark's inference, which stands in for footers here, refuses them
        for part in range(2):
            _put(f"{key}/ds={day}/part-{part}.parquet", _events(rng, 200).drop(columns="at"))
    truth = _read_back(location)
    for variable in s3.environment:
        monkeypatch.delenv(variable)  # this process has no credentials, its Spark reads the bucket its own way
    s3fs.S3FileSystem.clear_instance_cache()
    before = s3.requests()
    lab.register_external("listed", location)
    lab.sql("ANALYZE TABLE listed COMPUTE STATISTICS FOR COLUMNS")
    assert sum((s3.requests() - before).values()) == 0  # not one request of the lab's own: Spark listed the files
    stats = _stats(lab, "listed")
    for column in ("userId", "amount"):
        assert stats[column]["nulls"] == truth[column].isna().sum() and stats[column]["max"] == truth[column].max()
    assert int(lab.resolve("listed").parameters["numRows"]) == len(truth) == 800
    basis = lab.tables["listed"].freshness_basis()
    assert basis.startswith("each file's size and modification time (listed through Spark")

    other_job = s3fs.S3FileSystem(key=s3.environment["AWS_ACCESS_KEY_ID"], endpoint_url=s3.endpoint,
                                  secret=s3.environment["AWS_SECRET_ACCESS_KEY"])
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(_events(rng, 50).drop(columns="at"), preserve_index=False), buffer)
    other_job.pipe(f"{key}/ds=b/part-7.parquet", buffer.getvalue())
    staleness = lab.tables["listed"].inspect.staleness().set_index("partition")["accurate"].astype(bool)
    assert sorted(staleness[~staleness].index) == ["ds=b"]
    assert lab.sql("SELECT count(*) AS n FROM listed").df["n"][0] == 850


@pytest.mark.slow
def test_two_labs_in_one_process_each_list_the_store_as_their_own_setting_says(s3_lab, s3, spark, tmp_path):
    """colstats.storage.listing is held by each lab: a lab made after another, or set after it, leaves the other's
    listing as it was, and a call of each lists as its lab says, one after the other."""
    location = _table_location("two_labs")
    key = location.removeprefix("s3://")
    rng = np.random.default_rng(23)
    for day in ("a", "b"):
        _put(f"{key}/ds={day}/part-0.parquet", _events(rng, 300).drop(columns="at"))
    truth = _read_back(location)
    through_spark = s3_lab
    through_spark.set(STORAGE_LISTING, "spark")
    through_store = Lab(home=str(tmp_path / "second"), spark=spark)  # made after, with the default (auto)
    try:
        through_store.set(SPARK_PREFIXES, {"s3://lake/": "file://" + s3.mounts["lake"]})
        through_store.set(STORAGE_LISTING, "store")
        assert (through_spark.get(STORAGE_LISTING), through_store.get(STORAGE_LISTING)) == ("spark", "store")
        for lab in (through_spark, through_store, through_spark):  # the first lab again, after the second ran
            lab.sql("DROP TABLE IF EXISTS events")
            lab.register_external("events", location)
            before = s3.requests()
            lab.sql("ANALYZE TABLE events COMPUTE STATISTICS FOR COLUMNS")
            made = s3.requests() - before
            basis = lab.tables["events"].freshness_basis()
            if lab is through_spark:
                assert sum(made.values()) == 0, made  # Spark listed the files, the lab sent nothing of its own
                assert basis.startswith("each file's size and modification time (listed through Spark")
            else:
                assert made["LIST"] >= 1 and basis == "each file's ETag"
            stats = _stats(lab, "events")
            for column in ("userId", "amount"):
                assert stats[column]["nulls"] == truth[column].isna().sum()
                assert stats[column]["max"] == truth[column].max()
    finally:
        through_store.close()


# what a notebook on a Spark Connect server runs: a process of its own (PySpark makes no remote session in a
# process that holds a classic one), printing what it found as JSON
_REMOTE_NOTEBOOK = """
import json, sys
from colstats_lab import Lab
from colstats_lab.storage import SPARK_PREFIXES
home, url, location, mount = sys.argv[1:5]
lab = Lab(home=home, remote=url)
lab.set(SPARK_PREFIXES, {"s3://lake/": "file://" + mount})
lab.register_external("remote", location)
lab.sql("ANALYZE TABLE remote COMPUTE STATISTICS FOR COLUMNS")
frame = lab.tables["remote"].inspect.stats()
table = frame[frame["partition"].isna()].set_index("column")
print(json.dumps({"amount": [float(table.loc["amount", "min"]), float(table.loc["amount", "max"])],
                  "eventtype_nulls": int(table.loc["eventType", "nulls"]),
                  "partitions": sorted(frame["partition"].dropna().unique().tolist()),
                  "basis": lab.tables["remote"].freshness_basis()}))
lab.close()
"""


@pytest.mark.slow
def test_a_spark_connect_session_without_storage_credentials_analyzes_an_s3_table(s3, tmp_path):
    import json
    import os
    import subprocess
    import sys

    from spark_servers import connect_server

    location = _table_location("remote")
    rng = np.random.default_rng(23)
    for day in ("a", "b", "c"):
        _put(f"{location.removeprefix('s3://')}/ds={day}/part-0.parquet", _events(rng, 150).drop(columns="at"))
    truth = _read_back(location)
    # neither the notebook nor the Connect server has credentials: the server reads the bucket through its mount
    bare = {key: value for key, value in os.environ.items() if key not in s3.environment}
    with connect_server(tmp_path, env=bare) as (url, _):
        done = subprocess.run([sys.executable, "-c", _REMOTE_NOTEBOOK, str(tmp_path / "lab"), url, location,
                               s3.mounts["lake"]], capture_output=True, text=True, timeout=600, env=bare)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["amount"] == [truth["amount"].min(), truth["amount"].max()]
    assert found["eventtype_nulls"] == truth["eventType"].isna().sum()
    assert found["partitions"] == ["ds=a", "ds=b", "ds=c"] and "listed through Spark" in found["basis"]


@pytest.mark.slow
def test_a_managed_table_in_an_s3_warehouse_is_written_analyzed_and_cleaned(s3, spark, tmp_path):
    from colstats_lab import Lab

    warehouse = _table_location("warehouse")
    lab = Lab(home=str(tmp_path / "lab"), spark=spark, warehouse=warehouse)
    fs = fsspec.filesystem("s3")
    try:
        lab.set(SPARK_PREFIXES, {"s3://lake/": "file://" + s3.mounts["lake"]})
        lab.sql("CREATE TABLE orders (id BIGINT, amount DOUBLE) PARTITIONED BY (ds STRING)")
        assert lab.resolve("orders").location == warehouse + "/orders"
        rng = np.random.default_rng(29)
        first = pd.DataFrame({"id": np.arange(100), "amount": rng.normal(50, 10, 100).round(2)})
        before = s3.requests()
        lab.tables["orders"].write(first, partition={"ds": "2026-03-01"})  # static: one delta directory
        static = s3.requests() - before
        # straight into its delta directory, Spark's output where it stays: no copy (S3 has no rename)
        assert static["COPY"] == 0 and static["DELETE"] == 0 and static["HEAD"] == 0
        landed = fs.find(f"{warehouse.removeprefix('s3://')}/orders/ds=2026-03-01/delta_0000001_0000001")
        names = [k.rsplit("/", 1)[-1] for k in landed]  # (Hadoop's hidden .crc files: Spark writes through a mount)
        assert any(n.endswith(".parquet") for n in names) and "_SUCCESS" not in names
        both = pd.DataFrame({"id": np.arange(100, 160), "amount": rng.normal(70, 10, 60).round(2),
                             "ds": ["2026-03-01", "2026-03-02"] * 30})
        lab.tables["orders"].write(both)  # dynamic: staged (Spark names each folder key=value), then copied into place
        with pytest.raises(RuntimeError):
            with lab.transaction() as txn:
                lab.tables["orders"].write(pd.DataFrame({"id": [999], "amount": [10**6]}), partition={"ds": "2026-03-02"},
                                           txn=txn)
                raise RuntimeError("the job fails after its files landed")
        keys = fs.find(warehouse.removeprefix("s3://"))
        aborted = [k for k in keys if "/delta_0000003_0000003/" in k]
        assert aborted and all("/ds=2026-03-02/" in k for k in aborted)  # on S3, yet no reader sees it
        assert not any("_staging_" in k for k in keys)

        truth = pd.concat([first.assign(ds="2026-03-01"), both], ignore_index=True)
        answer = lab.sql("SELECT count(*) AS n, max(amount) AS top FROM orders").df
        assert answer["n"][0] == len(truth) == 160 and answer["top"][0] == truth["amount"].max()
        lab.sql("ANALYZE TABLE orders COMPUTE STATISTICS FOR COLUMNS")
        stats = _stats(lab, "orders")
        assert stats["amount"]["min"] == truth["amount"].min() and stats["amount"]["max"] == truth["amount"].max()
        assert int(lab.resolve("orders").parameters["numRows"]) == 160

        lab.clean()
        fs.invalidate_cache()
        assert not any("/delta_0000003_0000003/" in k for k in fs.find(warehouse.removeprefix("s3://")))
        lab.sql("DROP TABLE orders")
        fs.invalidate_cache()
        # no file left (the FUSE mount Spark wrote through may leave the folder itself as an empty marker)
        assert [k for k in fs.find(warehouse.removeprefix("s3://") + "/orders") if k.endswith(".parquet")] == []
    finally:
        lab.close()


@pytest.mark.slow
def test_an_hms_table_at_an_s3a_location_is_analyzed_published_and_withdrawn_when_another_job_writes(s3_lab, s3,
                                                                                                     hms_uri):
    import hms_tables
    from pymetastore.hive_metastore import ttypes

    lab, location = s3_lab, _table_location("hms").replace("s3://", "s3a://") + "/sales"  # its database: the parent
    key, db, days = location.removeprefix("s3a://"), f"s3_{uuid.uuid4().hex[:8]}", ["2026-01-01", "2026-01-02"]
    rng = np.random.default_rng(31)
    frames = {day: pd.DataFrame({"id": np.arange(200, dtype="int64") + 1000 * i,
                                 "amount": np.where(rng.random(200) < 0.1, np.nan, rng.normal(50, 9, 200).round(2)),
                                 "note": rng.choice(["a", "bb", None], 200)}) for i, day in enumerate(days)}
    for day, frame in frames.items():
        _put(f"{key}/ds={day}/part-0.parquet", frame)
    hms = hms_tables.connect(hms_uri)
    cols = [("id", "bigint"), ("amount", "double"), ("note", "string")]
    # made by the HMS itself: it checks and makes s3a:// folders through Hadoop's file system for the scheme
    hms_tables.create_table(hms, db, "sales", cols, [("ds", "string")], location)
    hms_tables.add_partitions(hms, db, "sales", cols, {(day,): f"{location}/ds={day}" for day in days})
    assert hms.get_table(db, "sales").sd.location == location

    lab.attach("hms", hms_uri)
    before = s3.requests()
    lab.sql(f"ANALYZE TABLE hms.{db}.sales COMPUTE STATISTICS FOR ALL COLUMNS")
    analyzing = s3.requests() - before
    assert analyzing["HEAD"] == 0 and 0 < analyzing["GET"] <= len(days)  # a footer a file at most
    assert lab.resolve(f"hms.{db}.sales").location == location
    outcome = lab.tables[f"hms.{db}.sales"].publish().details
    assert sorted(outcome.published) == [f"ds={day}" for day in days]

    fs = fsspec.filesystem("s3")
    for day, frame in frames.items():
        params = hms.get_partition_by_name(db, "sales", f"ds={day}").parameters
        objects = [info for info in fs.ls(f"{key}/ds={day}", detail=True, refresh=True) if info["type"] == "file"]
        assert params["numRows"] == str(len(frame)) and params["numFiles"] == str(len(objects))
        assert params["totalSize"] == str(sum(info["size"] for info in objects))
        served = {o.colName: o.statsData for o in hms.get_partitions_statistics_req(ttypes.PartitionsStatsRequest(
            db, "sales", ["amount", "note"], [f"ds={day}"])).partStats[f"ds={day}"]}
        amount = frame["amount"].dropna()
        assert served["amount"].doubleStats.numNulls == frame["amount"].isna().sum()
        assert (served["amount"].doubleStats.lowValue, served["amount"].doubleStats.highValue) == (amount.min(),
                                                                                                   amount.max())
        assert served["note"].stringStats.numNulls == frame["note"].isna().sum()
        assert served["note"].stringStats.maxColLen == frame["note"].dropna().map(len).max()

    _put(f"{key}/ds={days[1]}/part-1.parquet", frames[days[1]].head(5))  # another job appends to one day
    staleness = lab.tables[f"hms.{db}.sales"].inspect.staleness().set_index("partition")["accurate"].astype(bool)
    assert sorted(staleness[~staleness].index) == [f"ds={days[1]}"]
    answer = lab.sql(f"SELECT count(*) AS n FROM hms.{db}.sales").df
    assert answer["n"][0] == sum(len(frame) for frame in frames.values()) + 5
    assert lab.tables[f"hms.{db}.sales"].publish().details.withdrawn == [f"ds={days[1]}"]
    assert "numRows" not in hms.get_partition_by_name(db, "sales", f"ds={days[1]}").parameters


@pytest.mark.slow
def test_a_spark_catalog_table_at_an_s3a_location_is_analyzed_where_spark_wrote_it(s3_lab, s3, spark):
    import s3_server

    lab, location = s3_lab, _table_location("spark").replace("s3://", "s3a://")
    db = f"s3_{uuid.uuid4().hex[:8]}"
    # the session's Spark writes s3a:// as a cluster with the S3A connector does (here: through the mount)
    # (the context's settings, and the copy Spark's catalog took of them when it started)
    hadoop = [spark.sparkContext._jsc.hadoopConfiguration(), spark._jsparkSession.sharedState().hadoopConf()]
    settings = {**s3_server.hadoop_settings(s3.mount_root, ["lake"]), "fs.s3a.impl.disable.cache": "true"}
    try:
        for conf in hadoop:
            for name, value in settings.items():
                conf.set(name, value)
        spark.sql(f"CREATE DATABASE {db}")
        spark.sql(f"CREATE TABLE {db}.events (id BIGINT, kind STRING, ds STRING) USING parquet PARTITIONED BY (ds) "
                  f"LOCATION '{location}'")
        rows = [(i, None if i % 7 == 0 else f"k{i % 5}", "d1" if i < 60 else "d2") for i in range(100)]
        spark.createDataFrame(rows, "id bigint, kind string, ds string").write.insertInto(f"{db}.events")
        result = lab.sql(f"ANALYZE TABLE spark_catalog.{db}.events COMPUTE STATISTICS FOR ALL COLUMNS")
        assert sorted(result.details.partitions) == ["ds=d1", "ds=d2"]
        assert lab.metastore.catalog.get_table(db, "events").location == location
        truth = _read_back(location.replace("s3a://", "s3://"))
        assert len(truth) == 100
        stats = lab.tables[f"{db}.events"].inspect.stats().set_index(["partition", "column"])
        for ds, day in truth.groupby("ds"):
            assert (stats.loc[(f"ds={ds}", "id"), "min"], stats.loc[(f"ds={ds}", "id"), "max"]) == (day["id"].min(),
                                                                                                  day["id"].max())
            assert stats.loc[(f"ds={ds}", "kind"), "nulls"] == day["kind"].isna().sum()
            assert stats.loc[(f"ds={ds}", "kind"), "accurate"]
        spark.createDataFrame([(500, "z", "d2")], "id bigint, kind string, ds string").write.insertInto(f"{db}.events")
        staleness = lab.tables[f"{db}.events"].inspect.staleness().set_index("partition")["accurate"].astype(bool)
        assert sorted(staleness[~staleness].index) == ["ds=d2"]  # Spark's new object, seen in S3's listing
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
        for conf in hadoop:
            for name in settings:
                conf.unset(name)


@pytest.mark.slow
def test_the_tiers_read_an_s3_tables_dictionary_pages_and_sampled_row_groups_by_ranged_gets(s3_lab, s3):
    """NOSCAN's NDV from the dictionary pages (ranged GETs naming the ETag), SAMPLE's row groups read by Spark tasks
    through s3fs: figures equal or bound pyarrow's own read of the objects."""
    lab, location = s3_lab, _table_location("tiers")
    rng = np.random.default_rng(11)
    for day in ("2026-01-01", "2026-01-02"):
        _put(f"{location.removeprefix('s3://')}/ds={day}/part-0.parquet", _events(rng, 4_000), row_group_size=400)
    lab.register_external("tiers", location)
    truth = _read_back(location)

    before = s3.requests()
    lab.tables["tiers"].analyze(metadata_only=True)
    reading = s3.requests() - before
    assert reading["LIST"] == 1 and reading["GET"] >= 2  # the listing, footers, dictionary pages: no whole object
    bounds = lab.tables["tiers"].inspect.bounds()
    ndv = bounds[(bounds["figure"] == "ndv")].set_index(["partition", "column"])
    for day, rows in truth.groupby("ds"):
        for column in ("userId", "eventType"):
            row = ndv.loc[(f"ds={day}", column)]
            assert row["exact"] and row["value"] == rows[column].nunique(), (day, column)

    lab.set("colstats.sample.seed", 2)
    result = lab.tables["tiers"].analyze(sample=0.2)
    assert "20 % sample of row groups" in result.message
    bounds = lab.tables["tiers"].inspect.bounds().set_index(["partition", "column", "figure"])
    for day, rows in truth.groupby("ds"):
        nulls = bounds.loc[(f"ds={day}", "amount", "nulls")]
        assert nulls["exact"] and nulls["value"] == rows["amount"].isna().sum()
        ndv = bounds.loc[(f"ds={day}", "at", "ndv")]
        assert ndv["low"] <= rows["at"].nunique() <= ndv["high"]

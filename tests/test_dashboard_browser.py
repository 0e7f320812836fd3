"""The Voila dashboard in headless Chromium: the landing table, then a table's page and each of its tabs."""
from __future__ import annotations

import os
import tempfile
import time

import psutil
import pytest
from metadata_tables import build_table, make_rows, write_file
from playwright.sync_api import sync_playwright
from served import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, free_port, serving

from colstats_lab.cli import DASHBOARD_NOTEBOOK, voila_command
from colstats_lab.demo import build_demo
from colstats_lab.ui import format as fmt

pytestmark = pytest.mark.slow  # the full lane only: Voila in Chromium


@pytest.fixture
def dashboard(lab, spark, tmp_path):
    """The demo table analyzed, its Drill metadata refreshed, then one partition appended to without
    gathering (stale); an external table whose directory another job added a file to (stale); and a
    list-bucketing table never analyzed."""
    build_demo(lab, rows_per_day=2_000)
    lab.sql("ANALYZE TABLE sales COMPUTE STATISTICS FOR ALL COLUMNS")
    lab.set("metastore.enabled", True)
    lab.sql("ANALYZE TABLE sales REFRESH METADATA")
    lab.autoanalyze(threshold=0.001)  # a worker's round while all is accurate: the queue keeps its options
    lab.set("hive.stats.column.autogather", False)
    first_day = lab.metastore.catalog.get_partition_names("default", "sales")[0]
    lab.tables["sales"].write(lab.tables["sales"].to_spark().where(f"ds = '{first_day.split('=')[1]}'").limit(5).drop("ds"),
                              partition={"ds": first_day.split("=")[1]})
    root = str(tmp_path / "events")
    build_table(root, partitions=("d1", "d2"), files_per_partition=1, rows_per_file=20)
    lab.register_external("events", root, partition_types={"ds": "string"})
    lab.sql("ANALYZE TABLE events PARTITION (ds) COMPUTE STATISTICS FOR ALL COLUMNS")
    write_file(os.path.join(root, "ds=d2", "part-9.parquet"), make_rows(9, 5))  # another job adds a file
    lab.sql("CREATE TABLE hot (id BIGINT, x INT) PARTITIONED BY (ds STRING) SKEWED BY (x) ON (1, 2) "
            "STORED AS DIRECTORIES")
    lab.tables["hot"].write(spark.createDataFrame([(i, i % 4) for i in range(40)], "id bigint, x int"), partition={"ds": "d1"})
    port = free_port()
    env = {**os.environ, "COLSTATS_HOME": lab.home, "PLOOMBER_STATS_ENABLED": "false"}
    with serving(voila_command(DASHBOARD_NOTEBOOK, port), port, os.path.join(lab.home, "voila.log"), env=env) as url:
        yield url


def _spark_jvms_of(home: str) -> int:
    """Java processes started for the lab at `home` (the dashboard's kernel passes COLSTATS_HOME on)."""
    count = 0
    for process in psutil.process_iter(["name"]):
        try:
            if process.info["name"] == "java" and process.environ().get("COLSTATS_HOME") == home:
                count += 1
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return count


def _assert_fits(table) -> None:
    """Every column of a statistics table inside a 1,400 px screen and no row taller than three lines of text:
    its last columns (analyzed, avg len, reason) were cut off, and a wrapped reason made rows 110 px tall."""
    boxes = table.evaluate("t => [...t.querySelectorAll('th')].map(h => [h.innerText, h.getBoundingClientRect().left,"
                           " h.getBoundingClientRect().right])")
    outside = [(name, left, right) for name, left, right in boxes if left < 0 or right > 1400]
    assert boxes and not outside, outside
    heights = table.evaluate("t => [...t.querySelectorAll('tbody tr')].map(r => r.getBoundingClientRect().height)")
    assert max(heights) <= 80, heights


def _open_tab(page, title: str):
    page.locator(".lm-TabBar-tab", has_text=title).click()
    return page.locator(".widget-tab-contents .lm-Widget:visible").first  # lumino hides the other tabs


def test_dashboard_landing_table_page_and_its_tabs(dashboard, lab):
    assert os.path.exists(CHROMIUM), "Debian's chromium is needed: make test-all installs it (make browser)"
    x = lab.metastore.column_stats.get_table_column_statistics("default", "sales", "x").obj("x").statsData.longStats
    sales = lab.metastore.catalog.get_table("default", "sales")
    rows = int(sales.parameters["numRows"])
    partitions = lab.metastore.catalog.get_partition_names("default", "sales")
    stale = [name for name, (ok, _) in lab.metastore.accuracy.stats_compliance("default", "sales", ["x"]).items() if not ok]
    assert stale == partitions[:1]
    os.makedirs(ARTIFACTS, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        opened = time.perf_counter()
        page.goto(dashboard, timeout=120_000)
        landing = page.locator("table.colstats-table").first
        landing.wait_for(timeout=120_000)  # every table at a glance, before any choice
        with open(os.path.join(ARTIFACTS, "dashboard_timing.txt"), "w") as out:
            out.write(f"from opening the URL to the landing table visible: {time.perf_counter() - opened:.2f} s\n")
        names = [row.split("\t")[0] for row in landing.locator("tbody tr").all_inner_texts()]
        # the stale ones first (the one analyzed longest ago first), the one never analyzed last
        assert names == ["default.sales", "default.events", "default.hot"]
        by_name = dict(zip(names, landing.locator("tbody tr").all_inner_texts(), strict=True))
        assert "\texternal\t" in by_name["default.events"] and "not accurate in 1 partition(s)" in by_name["default.events"]
        assert "\tlist-bucketing\t" in by_name["default.hot"] and "\tmanaged\t" in by_name["default.sales"]
        assert f"\t{fmt.count(rows)}\t" in by_name["default.sales"]
        assert "not accurate in 1 partition(s)" in by_name["default.sales"]
        badge = landing.locator("tbody tr", has_text="default.sales").locator(".colstats-stale")
        assert badge.get_attribute("title").startswith(f"{stale[0]}: partition changed by write")  # the reason on hover
        assert lab.metastore.path in page.locator(".colstats-muted", has_text="metastore").first.inner_text()
        page.screenshot(path=os.path.join(ARTIFACTS, "dashboard_landing.png"), full_page=True)
        workers = page.locator(".colstats-workers").first.inner_text()
        assert "0 of 0 due analyzed" in workers and "Queue (3 partitions due" in workers, workers
        assert f"default.sales {stale[0]} (0.25% of rows changed)" in workers and "default.hot ds=d1 (never analyzed)" in workers

        assert "never analyzed" in by_name["default.hot"]  # written without gathering: nothing went stale
        landing.locator("tbody tr", has_text="default.sales").click()  # a person clicks the row
        picker = page.locator(".widget-dropdown", has_text="Table").locator("select")
        assert picker.input_value() == "default.sales"
        table = page.locator("table.colstats-table").nth(1)
        table.wait_for(timeout=120_000)
        text = table.inner_text()
        for column in ("id", "x", "amount", "price", "note", "flag", "day", "ts"):
            assert f"\n{column}\t" in f"\n{text}", column
        rows_text = [table.locator("tbody tr").nth(i).inner_text() for i in range(table.locator("tbody tr").count())]
        x_row = next(r for r in rows_text if r.startswith("x\t"))
        assert fmt.count(x.numNulls) in x_row and fmt.number(x.highValue) in x_row
        assert f"{fmt.count(rows)} rows" in page.locator(".colstats-header").first.inner_text()
        # each column's status sits beside its name, inside a 1,400 px screen (it was past the right edge); measured
        # in one script, so a redraw between two badges cannot detach one
        rights = table.evaluate("t => [...t.querySelectorAll('tbody tr .colstats-badge')]"
                                ".map(b => b.getBoundingClientRect().right)")
        assert len(rights) == 8 and 0 < max(rights) <= 1400, rights
        _assert_fits(table)
        page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)  # the stats chart
        page.screenshot(path=os.path.join(ARTIFACTS, "dashboard_statistics.png"), full_page=True)

        profile = _open_tab(page, "Profile")
        profile.locator(".colstats-card").first.wait_for(timeout=60_000)
        cards = profile.evaluate(
            "p => [...p.querySelectorAll('.colstats-card')].map(c => { const b = c.getBoundingClientRect(); return "
            "[c.querySelector('h4').innerText, b.left, b.right, c.querySelectorAll('svg rect').length, "
            "c.querySelectorAll('.colstats-top .v').length]; })")
        assert [card[0] for card in cards] == ["id", "x", "amount", "price", "note", "flag", "day", "ts"]
        assert all(0 <= left and right <= 1400 for _, left, right, *_ in cards), cards  # every card inside the screen
        by_card = {name: (bins, top) for name, _, _, bins, top in cards}
        assert by_card["amount"][0] == 20 and by_card["x"][1] == 10  # a histogram's bins, the top values
        page.screenshot(path=os.path.join(ARTIFACTS, "dashboard_profile.png"), full_page=True)

        freshness = _open_tab(page, "Freshness")
        freshness.locator(".js-plotly-plot").wait_for(timeout=60_000)  # the partitions x columns map
        cells = len(partitions) * 8
        assert (f"{fmt.count(cells - 8)} of {fmt.count(cells)} statistics accurate, 8 not, 0 never analyzed · "
                f"1 of {len(partitions)} partitions need an ANALYZE") in freshness.inner_text()
        assert freshness.locator("button", has_text="Analyze 1 partition").is_enabled()
        page.screenshot(path=os.path.join(ARTIFACTS, "dashboard_freshness.png"), full_page=True)

        pruning = _open_tab(page, "Pruning")
        where = pruning.locator("input[type=text]")
        where.fill(f"ds = '{partitions[1].split('=')[1]}'")
        where.press("Enter")
        pruning.locator("code", has_text="WHERE ds = ").wait_for(timeout=60_000)  # the kernel took the filter
        pruning.locator(".js-plotly-plot").first.wait_for(timeout=60_000)  # the treemap
        day = lab.metastore.catalog.get_partition("default", "sales", partitions[1])
        assert "answered from statistics, no scan" in pruning.inner_text().replace("\n", " ")
        assert (f"1 of {len(partitions)} partitions kept, {int(day.parameters['numRows']):,} of {rows:,} rows"
                in pruning.inner_text())
        page.screenshot(path=os.path.join(ARTIFACTS, "dashboard_pruning.png"), full_page=True)
        where.fill("x = = 1")
        where.press("Enter")
        pruning.locator("pre", has_text="^").wait_for(timeout=30_000)  # a caret under the bad token
        # a page is a reader: Spark SQL's reflection is refused before any job, and nothing of it runs
        before = set(os.listdir(tempfile.gettempdir()))
        for payload, refused in (
                ("cast(java_method('java.lang.System', 'getenv', 'COLSTATS_HOME') AS INT) = 1", "JAVA_METHOD"),
                ("reflect('java.io.File', 'createTempFile', 'colstats-pwned', '.x') IS NULL", "REFLECT")):
            where.fill(payload)
            where.press("Enter")
            pruning.locator("pre", has_text=f"function {refused} is not allowed").wait_for(timeout=30_000)
            assert lab.home not in pruning.inner_text()  # the environment's value was never read
            assert pruning.locator("button", has_text="Count the rows kept").count() == 0
        assert not [n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("colstats-pwned")]
        page.screenshot(path=os.path.join(ARTIFACTS, "dashboard_pruning_refused.png"), full_page=True)

        transactions = _open_tab(page, "Transactions")
        transactions.locator("table.colstats-table").wait_for(timeout=30_000)
        valid = lab.metastore.txns.get_valid_write_ids("default", "sales")
        written = lab.metastore.txns.table_transactions("default", "sales")
        assert str(valid) in transactions.inner_text()
        assert transactions.locator("tbody tr").count() == len(written)
        page.screenshot(path=os.path.join(ARTIFACTS, "dashboard_transactions.png"), full_page=True)

        drift = _open_tab(page, "Drift")
        drift.locator(".js-plotly-plot").first.wait_for(timeout=60_000)  # across the partitions, the first column's
        assert f"all {len(partitions)} partitions (1 not accurate now" in drift.inner_text()
        assert partitions[-1] in drift.locator(".js-plotly-plot g[class*='tick'] text").all_text_contents()
        page.screenshot(path=os.path.join(ARTIFACTS, "dashboard_drift.png"), full_page=True)

        metadata = _open_tab(page, "Metadata")
        metadata.locator("table.colstats-table").first.wait_for(timeout=30_000)
        assert "outdated: 1 file(s) added or rewritten and 0 removed" in metadata.inner_text()
        page.screenshot(path=os.path.join(ARTIFACTS, "dashboard_metadata.png"), full_page=True)

        runs = _open_tab(page, "Runs")  # no query of sales was explained with run=True here yet
        runs.get_by_text("No run kept yet").wait_for(timeout=30_000)
        assert "of queries that read default.sales" in runs.inner_text()
        assert _spark_jvms_of(lab.home) == 0  # looking at every tab starts no Spark

        skew = _open_tab(page, "Skew")
        skew.locator(".widget-dropdown", has_text="Skew of").locator("select").select_option(index=1)
        skew.locator(".js-plotly-plot").first.wait_for(timeout=180_000)  # the column most likely skewed first
        assert _spark_jvms_of(lab.home) == 1  # the skew view's aggregation started it
        assert skew.locator(".js-plotly-plot .bars path").count() > 0
        page.screenshot(path=os.path.join(ARTIFACTS, "dashboard.png"), full_page=True)

        freshness = _open_tab(page, "Freshness")
        freshness.locator("button", has_text="Analyze 1 partition").click()
        try:
            freshness.locator("button", has_text="Nothing to analyze").wait_for(timeout=180_000)
        except Exception:  # what the tab says then (an error line, a progress bar) is the first clue
            page.screenshot(path=os.path.join(ARTIFACTS, "dashboard_analyze_timeout.png"), full_page=True)
            raise AssertionError(f"the Analyze button did not finish: {freshness.inner_text()[:2000]!r}") from None
        assert f"{fmt.count(cells)} of {fmt.count(cells)} statistics accurate" in freshness.inner_text()
        # the landing's new order moved no page (the picker's options were reset and it opened default.events)
        assert page.locator(".colstats-picker select").input_value() == "default.sales"
        # the landing follows what the page changed: sales accurate now (it said "not accurate in 1 partition(s)")
        rows_now = int(lab.metastore.catalog.get_table("default", "sales").parameters["numRows"])
        row = page.locator("table.colstats-table").first.locator("tbody tr", has_text="default.sales")
        row.locator(".colstats-ok").wait_for(timeout=30_000)
        assert f"\t{fmt.count(rows_now)}\t" in row.inner_text() and "not accurate" not in row.inner_text()
        # the HTML report of the stale table, as a person opens it: every column inside the screen (it cut at max len)
        report = os.path.join(ARTIFACTS, "report_events.html")
        lab.tables["events"].report(report)
        page.goto(f"file://{report}")
        _assert_fits(page.locator("table.colstats-table").first)
        page.screenshot(path=os.path.join(ARTIFACTS, "report_events.png"), full_page=True)
        browser.close()
    assert all(ok for ok, _ in lab.metastore.accuracy.stats_compliance("default", "sales", ["x"]).values())


def _kernels_of(server_pid: int) -> int:
    """The kernels the server runs; one it shut down and has not reaped yet (a zombie, ci21) is not running."""
    running = 0
    for process in psutil.Process(server_pid).children(recursive=True):
        try:
            running += "ipykernel" in " ".join(process.cmdline())
        except (psutil.ZombieProcess, psutil.NoSuchProcess):
            continue
    return running


def test_a_closed_pages_kernel_is_shut_down_and_an_open_ones_is_kept(tmp_path):
    """Voila starts a kernel per page load (with a Spark of its own once a tab needs one) and kept every one
    until the server stopped; a kernel no page is connected to is culled once idle."""
    home = str(tmp_path / "empty")
    port = free_port()
    env = {**os.environ, "COLSTATS_HOME": home, "PLOOMBER_STATS_ENABLED": "false"}
    # A kernel is idle and unconnected between the notebook's run and the page's websocket; at 3 s a loaded CI
    # machine culled one there (stop 72), so the page never drew.
    cull_after = 20
    command = voila_command(DASHBOARD_NOTEBOOK, port, cull_after=cull_after)
    with serving(command, port, str(tmp_path / "voila.log"), env=env) as url, sync_playwright() as p:
        server = next(proc for proc in psutil.process_iter(["cmdline"])
                      if f"--port={port}" in (proc.info["cmdline"] or []))
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        kept, closed = browser.new_page(), browser.new_page()
        for page in (kept, closed):
            page.goto(url, timeout=120_000)
            page.locator(".colstats-dashboard").first.wait_for(timeout=120_000)
        assert _kernels_of(server.pid) == 2
        closed.close()
        deadline = time.time() + 3 * cull_after
        while _kernels_of(server.pid) > 1 and time.time() < deadline:
            time.sleep(0.5)
        time.sleep(cull_after // 2 + 1)  # past another cull pass: the open page's kernel, idle longer, stays
        assert _kernels_of(server.pid) == 1
        assert "No tables in this metastore yet" in kept.inner_text(".colstats-dashboard")
        browser.close()

"""The Voila dashboard in headless Chromium: pick a table, read the statistics view, see the chart."""
from __future__ import annotations

import os

import psutil
import pytest
from playwright.sync_api import sync_playwright

from colstats_lab.cli import DASHBOARD_NOTEBOOK, voila_command
from colstats_lab.demo import build_demo
from colstats_lab.ui import format as fmt
from served import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, free_port, serving


@pytest.fixture
def dashboard(lab):
    build_demo(lab, rows_per_day=2_000)
    lab.sql("ANALYZE TABLE sales COMPUTE STATISTICS FOR ALL COLUMNS")
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


def test_dashboard_shows_the_picked_tables_statistics_and_chart(dashboard, lab):
    assert os.path.exists(CHROMIUM), "Debian's chromium is needed: make test installs it (make browser)"
    x = lab.metastore.get_table_column_statistics("default", "sales", "x").obj("x").statsData.longStats
    rows = int(lab.metastore.get_table("default", "sales").parameters["numRows"])
    os.makedirs(ARTIFACTS, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        page.goto(dashboard, timeout=120_000)
        landing = page.locator("table.colstats-table").first
        landing.wait_for(timeout=120_000)  # every table at a glance, before any choice
        sales_row = landing.locator("tbody tr", has_text="default.sales").inner_text()
        assert "list-bucketing" not in sales_row and f"\t{fmt.count(rows)}\t" in sales_row
        assert "8 of 8" in sales_row and "accurate" in sales_row
        picker = page.locator(".widget-dropdown", has_text="Table").locator("select")
        picker.select_option("default.sales")
        table = page.locator("table.colstats-table").nth(1)
        table.wait_for(timeout=120_000)
        text = table.inner_text()
        for column in ("id", "x", "amount", "price", "note", "flag", "day", "ts"):
            assert f"\n{column}\t" in f"\n{text}", column
        rows_text = [table.locator("tbody tr").nth(i).inner_text() for i in range(table.locator("tbody tr").count())]
        x_row = next(r for r in rows_text if r.startswith("x\t"))
        assert fmt.count(x.numNulls) in x_row and fmt.number(x.highValue) in x_row and "accurate" in x_row
        assert f"{fmt.count(rows)} rows" in page.locator(".colstats-header").first.inner_text()
        page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)  # the stats chart
        assert _spark_jvms_of(lab.home) == 0  # looking at tables and statistics starts no Spark
        skew_of = page.locator(".widget-dropdown", has_text="Skew of").locator("select")
        skew_of.select_option(index=1)  # the column most likely skewed comes first
        page.locator(".js-plotly-plot").nth(1).wait_for(timeout=180_000)  # and the skew chart
        assert _spark_jvms_of(lab.home) == 1  # the skew view's aggregation started it
        assert page.locator(".js-plotly-plot .bars path").count() > 0
        page.wait_for_timeout(1000)
        page.screenshot(path=os.path.join(ARTIFACTS, "dashboard.png"), full_page=True)
        browser.close()

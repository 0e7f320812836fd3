"""The quickstart notebook in JupyterLab itself, driven in headless Chromium: run all cells, then read the
statistics view's table and chart, the skew view and the pruning view from the page (the DOM JupyterLab's
widget and Plotly renderers drew, not the kernel's messages) against the metastore the kernel wrote."""
from __future__ import annotations

import json
import os
import shutil
import sys

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright
from served import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, free_port, serving

from colstats_lab.metastore import Metastore
from colstats_lab.ui import format as fmt

pytestmark = pytest.mark.slow  # the full lane only: JupyterLab in Chromium

NOTEBOOKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "notebooks")
KERNEL_READY = """() => {
    const notebook = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const context = notebook && notebook.sessionContext;
    return !!(context && context.isReady && context.session && context.session.kernel
              && context.session.kernel.connectionStatus === 'connected'
              && context.session.kernel.status === 'idle');
}"""


def shown_within(page, locator, seconds: int, what: str) -> None:
    try:
        locator.wait_for(timeout=seconds * 1000)
    except PlaywrightTimeout:
        raise AssertionError(f"{what} was not drawn in {seconds} s: {notebook_trouble(page)}") from None


def notebook_trouble(page) -> str:
    """What a person would look for when a view never came: the kernel's state and every error output."""
    state = page.evaluate("""() => {
        const k = window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel;
        return k ? k.status + '/' + k.connectionStatus : 'no kernel'; }""")
    errors = page.locator(".jp-OutputArea-output[data-mime-type*='stderr'], .jp-OutputArea-output[data-mime-type*='error']")
    dialogs = page.locator(".jp-Dialog").all_inner_texts()
    return f"kernel {state}; dialogs {dialogs}; errors {errors.all_inner_texts()[-3:]}"


def test_the_quickstart_runs_in_jupyterlab_and_its_views_are_drawn(tmp_path):
    assert os.path.exists(CHROMIUM), "Debian's chromium is needed: make test-all installs it (make browser)"
    shutil.copy(os.path.join(NOTEBOOKS, "01_quickstart.ipynb"), tmp_path)
    home = tmp_path / "lab"
    port = free_port()
    command = [sys.executable, "-m", "jupyter", "lab", f"--port={port}", "--ip=127.0.0.1", "--no-browser",
               f"--ServerApp.root_dir={tmp_path}", "--IdentityProvider.token=", "--ServerApp.password=",
               "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
               "--LabApp.expose_app_in_browser=True"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    settings = tmp_path / "settings"
    # every cell drawn (JupyterLab 4 otherwise leaves cells out of view undrawn), and no news toast
    for plugin, values in {"notebook-extension/tracker": {"windowingMode": "none"},
                           "apputils-extension/notification": {"fetchNews": "false"}}.items():
        path = settings / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = {**os.environ, "COLSTATS_HOME": str(home), "PLOOMBER_STATS_ENABLED": "false",
           "JUPYTERLAB_SETTINGS_DIR": str(settings), "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces")}
    os.makedirs(ARTIFACTS, exist_ok=True)
    with serving(command, port, str(tmp_path / "jupyterlab.log"), timeout=120, env=env) as url, \
            sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(f"{url}lab/tree/01_quickstart.ipynb", timeout=120_000)
            # Run All only once the notebook's kernel is connected and idle: before that JupyterLab asks
            # for a kernel in a dialog, or the menu is not yet wired to the notebook
            page.wait_for_function(KERNEL_READY, timeout=180_000)
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            stats_table = page.locator(".jp-OutputArea table.colstats-table", has_text="amount").first
            shown_within(page, stats_table, 240, "the %%analyze cell's statistics view")
            treemap = page.locator(".jp-OutputArea .js-plotly-plot", has=page.locator(".treemap"))
            shown_within(page, treemap.first, 300, "the %explain cell's treemap, after the skew view")
            page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for(timeout=300_000)
            stats_text = stats_table.inner_text()
            views = page.locator(".jp-OutputArea .colstats-header").all_inner_texts()
            charts = page.locator(".jp-OutputArea .js-plotly-plot").count()
            skew_bars = page.locator(".jp-OutputArea .js-plotly-plot .bars path").count()
            # the quartiles of a date and a timestamp stay inside the notebook's width, a value a line
            stats_table.scroll_into_view_if_needed()
            area = page.locator(".jp-NotebookPanel").first.bounding_box()
            quartile_edges = [stats_table.locator("tbody tr", has_text=column).first.locator("td").nth(7).bounding_box()
                              for column in ("day", "ts")]
            for name, shown in (("stats", stats_table), ("pruning", treemap.first)):
                shown.scroll_into_view_if_needed()
                page.screenshot(path=os.path.join(ARTIFACTS, f"jupyterlab_{name}.png"))
        finally:  # what the page showed, also when a wait timed out
            page.screenshot(path=os.path.join(ARTIFACTS, "jupyterlab.png"), full_page=True)
            browser.close()

    store = Metastore(str(home / "metastore.db"))
    x = store.column_stats.get_table_column_statistics("default", "sales", "x").obj("x").statsData.longStats
    table = store.catalog.get_table("default", "sales")
    rows = int(table.parameters["numRows"])
    day = store.catalog.get_partition("default", "sales", "ds=2026-11-17")
    store.close()
    x_row = next(line for line in stats_text.splitlines() if line.startswith("x\t"))
    assert fmt.count(x.numNulls) in x_row and fmt.number(x.highValue) in x_row and "accurate" in x_row
    assert any(f"default.sales · whole table · {fmt.count(rows)} rows" in v for v in views)  # the stats view
    assert any(f"sales.x · whole table · {fmt.count(rows)} rows" in v for v in views)  # the skew view
    # the pruning view: one of the week's partitions kept, with its rows
    assert any(f"1 of 7 partitions kept, {int(day.parameters['numRows']):,} of {rows:,} rows" in v for v in views)
    assert charts >= 5 and skew_bars > 0  # stats chart, skew bars, heat map and scan fractions, treemap
    for box in quartile_edges:
        assert box["x"] + box["width"] <= area["x"] + area["width"], (box, area)

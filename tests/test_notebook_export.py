"""A notebook run in a real kernel and exported to HTML (nbconvert, what JupyterLab's "Export as HTML"
runs) keeps the views' charts: each chart carries HTML beside Plotly's mime bundle, and that HTML draws
the chart in a browser with no Jupyter and no Plotly extension."""
from __future__ import annotations

import json
import os
import re

import nbformat
import plotly
import pytest
from kernel_runs import run_notebook
from nbconvert import HTMLExporter
from playwright.sync_api import sync_playwright
from served import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.slow  # the full lane only: a real kernel and nbconvert

SETUP = """%load_ext colstats_lab
from colstats_lab import Lab
import pandas as pd

lab = Lab()
lab.sql("CREATE TABLE t (x INT)")
lab.tables["t"].write(pd.DataFrame({"x": [1, 1, 1, 2, 2, 3, None]}))"""
PLOTLY_JS = os.path.join(os.path.dirname(plotly.__file__), "package_data", "plotly.min.js")


def _chart_html(exported: str) -> list[str]:
    """The HTML of every chart the exported page's saved widget state holds."""
    state = re.search(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', exported, re.S)
    assert state, "the export carries no widget state"
    models = json.loads(state.group(1))["state"].values()
    return [output["data"]["text/html"] for model in models if model["model_name"] == "OutputModel"
            for output in model["state"].get("outputs", []) if "text/html" in output.get("data", {})]


def test_an_exported_notebook_keeps_the_skew_views_charts(tmp_path, monkeypatch):
    monkeypatch.setenv("COLSTATS_HOME", str(tmp_path / "lab"))
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(SETUP), nbformat.v4.new_code_cell("%skew t.x --top 2")]
    run_notebook(notebook, str(tmp_path), timeout=300, store_widget_state=True)
    exported, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    charts = _chart_html(exported)
    bars = next(c for c in charts if "Most frequent values of x" in c)
    page_path = tmp_path / "chart.html"
    page_path.write_text(f"<!DOCTYPE html><html><body>{bars}</body></html>")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        # no network here: Plotly's CDN is answered with the plotly.js the plotly package ships
        page.route("https://cdn.plot.ly/**", lambda route: route.fulfill(path=PLOTLY_JS,
                                                                         content_type="application/javascript"))
        page.goto(f"file://{page_path}")
        page.locator(".js-plotly-plot .bars path").first.wait_for(timeout=30_000)
        labels = page.locator(".js-plotly-plot .xtick text").all_text_contents()
        browser.close()
    assert labels == ["1", "2", "(others)", "(NULL)"]  # top 2, the one other value, the NULL row

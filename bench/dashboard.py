"""The dashboard on a table of 30 and of 10,000 partitions x 20 columns of statistics (issue 14's target:
a table of 10,000 partitions opens in under 3 s). For each: in headless Chromium through Voila, the time
from opening the URL to the landing table painted and from picking the table to its statistics painted,
and the JVMs running after that (0: looking starts no Spark); then, in this process, each tab's build time
as the dashboard's kernel spends it. No Spark: the metastore file alone, built as bench/metastore_scale.py
builds it (no data files, so the pruning tab plans over empty directories).

    .venv/bin/python bench/dashboard.py [--partitions 30 10000]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import time

import psutil
from common import peak_rss_mib, timed
from metastore_scale import COLUMNS, build_wide, partition_values, sketch_pool
from playwright.sync_api import sync_playwright

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from served import CHROMIUM, CHROMIUM_ARGS, free_port, serving  # noqa: E402

from colstats_lab import Lab  # noqa: E402
from colstats_lab.cli import DASHBOARD_NOTEBOOK, voila_command  # noqa: E402
from colstats_lab.workbench.dashboard import TABS, Dashboard, TablePage  # noqa: E402

TARGET_S = 3.0


def quiet(action):
    """`action` with the charts' text output (what a terminal gets instead of a drawing) dropped."""
    def run():
        with contextlib.redirect_stdout(io.StringIO()):
            action()
    return run


def jvms_of(home: str) -> int:
    count = 0
    for process in psutil.process_iter(["name"]):
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            if process.info["name"] == "java" and process.environ().get("COLSTATS_HOME") == home:
                count += 1
    return count


def in_the_browser(home: str) -> dict[str, float]:
    port = free_port()
    env = {**os.environ, "COLSTATS_HOME": home, "PLOOMBER_STATS_ENABLED": "false"}
    with serving(voila_command(DASHBOARD_NOTEBOOK, port), port, os.path.join(home, "voila.log"), env=env) as url, \
            sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        started = time.perf_counter()
        page.goto(url, timeout=120_000)
        page.locator("table.colstats-table").first.wait_for(timeout=120_000)
        landing = time.perf_counter() - started
        started = time.perf_counter()
        page.locator(".widget-dropdown", has_text="Table").locator("select").select_option("default.wide")
        page.locator("table.colstats-table").nth(1).wait_for(timeout=120_000)
        table_page = time.perf_counter() - started
        page.wait_for_timeout(2000)  # whatever else the page would start, given time
        jvms = jvms_of(home)
        browser.close()
    return {"browser: URL opened to landing table painted (Voila starts its kernel)": landing,
            "browser: table picked to its statistics painted": table_page, "JVMs running, no action taken": jvms}


def in_the_kernel(lab: Lab) -> dict[str, float]:
    figures = {"kernel: landing (every table at a glance)": timed(quiet(lambda: Dashboard(lab)))}
    pages = []
    figures["kernel: table page with its Statistics tab"] = timed(quiet(lambda: pages.append(TablePage(lab, "default.wide"))))
    for index, title in enumerate(TABS[1:], start=1):
        figures[f"kernel: {title} tab"] = timed(quiet(lambda: pages[0].open_tab(index)))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", type=int, nargs="+", default=[30, 10_000])
    parser.add_argument("--home", default="/tmp/colstats-bench-dashboard")
    args = parser.parse_args()
    pool, now = sketch_pool(256), int(time.time())
    for partitions in args.partitions:
        home = f"{args.home}-{partitions}"
        shutil.rmtree(home, ignore_errors=True)
        lab = Lab(home=home)
        build_wide(lab.metastore, partition_values(partitions), COLUMNS, pool, now)
        figures = {**in_the_browser(home), **in_the_kernel(lab)}
        lab.close()
        print(f"{partitions:,} partitions x {len(COLUMNS)} columns:")
        for what, value in figures.items():
            if what.startswith("JVMs"):
                print(f"  {what:<72} {value:7d}")
                continue
            # the target is a table opening; the landing's first paint includes Voila starting a kernel
            flag = "" if value <= TARGET_S or "landing" in what else f"  over the {TARGET_S:.0f} s target"
            print(f"  {what:<72} {value:7.2f} s{flag}")
    print(f"peak RSS of this process: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()

"""The first `%%analyze` in a fresh kernel: the time from `%load_ext colstats_lab` to its result, with
Spark started in the background at `%load_ext` and without (COLSTATS_SPARK_PRESTART=0), for a user who
runs the next cell at once and for one who takes `--pause` seconds to type it.

    .venv/bin/python bench/first_analyze.py [--rows 100000] [--pause 10] [--runs 2]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from common import BENCH_HOME, bench_lab
from jupyter_client.manager import start_new_kernel

from colstats_lab.demo import build_demo

ANALYZE = "%%analyze --no-view\nANALYZE TABLE sales COMPUTE STATISTICS FOR COLUMNS x, amount, note"


def run_cell(client, code: str) -> None:
    reply = client.execute_interactive(code, timeout=600, output_hook=lambda msg: None)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"{code!r} failed: {reply['content'].get('ename')}: {reply['content'].get('evalue')}")


def first_analyze(prestart: bool, pause: float) -> float:
    env = {**os.environ, "COLSTATS_HOME": BENCH_HOME, "COLSTATS_SPARK_PRESTART": "1" if prestart else "0",
           "PLOOMBER_STATS_ENABLED": "false"}
    manager, client = start_new_kernel(kernel_name="python3", env=env, extra_arguments=[])
    try:
        start = time.perf_counter()
        run_cell(client, "%load_ext colstats_lab")
        time.sleep(pause)  # the user reading and typing the next cell
        run_cell(client, ANALYZE)
        return time.perf_counter() - start
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000, help="rows per day of the demo table")
    parser.add_argument("--pause", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    lab = bench_lab(fresh=True)
    build_demo(lab, rows_per_day=args.rows)
    lab.spark.stop()  # the kernels start their own
    lab.close()
    print(f"demo table: {args.rows:,} rows per day; kernel python: {sys.executable}")
    for pause in (0.0, args.pause):
        times = {}
        for prestart in (False, True):
            times[prestart] = statistics.median(first_analyze(prestart, pause) for _ in range(args.runs))
        saved = times[False] - times[True]
        print(f"pause {pause:4.1f} s: %load_ext to the first %%analyze's result {times[False]:.1f} s without the "
              f"background start, {times[True]:.1f} s with it; saved {saved:.1f} s "
              f"(the analyze cell alone: {times[False] - pause:.1f} s -> {times[True] - pause:.1f} s)")


if __name__ == "__main__":
    main()

"""The lab's profile beside ydata-profiling's on one pandas frame: 60,600 rows (600 of them duplicates), a key, a
count with zeros, a log-normal amount with missing values, a skewed city, a constant. The lab reads its profile
from one ANALYZE's statistics; ydata-profiling computes its own from the frame in memory. Prints each figure side
by side, and each tool's time.

ydata-profiling pins older numpy than the lab's tested set, so it runs in an environment of its own:

    python3 -m venv /tmp/ydata && /tmp/ydata/bin/pip install "ydata-profiling>=4.10" pyarrow
    .venv/bin/python bench/profile_vs_ydata.py --ydata-python /tmp/ydata/bin/python
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import time

import numpy as np
import pandas as pd
from common import bench_lab

FIGURES = ("n_missing", "n_distinct", "min", "max", "mean", "std", "5%", "25%", "50%", "75%", "95%", "n_zeros",
           "top", "top share", "alerts")

# run by the other environment's Python: ydata-profiling's figures of the same file, as JSON on stdout
YDATA_SIDE = """
import json, sys, time
import pandas as pd
from ydata_profiling import ProfileReport
frame = pd.read_parquet(sys.argv[1])
started = time.perf_counter()
description = ProfileReport(frame, progress_bar=False).get_description()
out = {"seconds": time.perf_counter() - started, "duplicates": description.table.get("n_duplicates"), "columns": {}}
for name, figures in description.variables.items():
    column = {k: figures.get(k) for k in ("n_missing", "n_distinct", "min", "max", "mean", "std", "5%", "25%",
                                          "50%", "75%", "95%", "n_zeros")}
    counts = figures.get("value_counts_without_nan")
    if counts is not None and len(counts):
        column.update({"top": str(counts.index[0]), "top share": float(counts.iloc[0] / counts.sum())})
    out["columns"][name] = column
for alert in description.alerts:
    out["columns"].setdefault(alert.column_name, {}).setdefault("alerts", []).append(alert.alert_type.name.lower())
print(json.dumps(out, default=str))
"""


def frame(rows: int = 60_000) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    data = pd.DataFrame({
        "orderId": np.arange(rows, dtype=np.int64),
        "qty": np.where(rng.random(rows) < 0.3, 0, rng.integers(1, 9, rows)),
        "amountEUR": np.where(rng.random(rows) < 0.07, np.nan, rng.lognormal(3, 1, rows)),
        "städte": rng.choice(["Köln", "Berlin", "München", "Zürich"], rows, p=[0.55, 0.25, 0.15, 0.05]),
        "channel": "web",
    })
    return pd.concat([data, data.sample(600, random_state=1)], ignore_index=True)


def lab_side(path: str) -> dict:
    lab = bench_lab(fresh=True)
    lab.register_external("orders", os.path.dirname(path))
    lab.sql("ALTER TABLE orders SET TBLPROPERTIES ('colstats.kll.enable'='true', "
            "'colstats.frequent.items.columns'='*')")
    lab.tables["orders"].analyze()
    started = time.perf_counter()
    profile = lab.tables["orders"].profile()
    out = {"seconds": time.perf_counter() - started, "duplicates": profile.duplicates, "columns": {}}
    for row in profile.columns.itertuples():
        quantiles = row.quantiles or {}
        top = next(iter(row.top_values.items()), (None, None)) if row.top_values else (None, None)
        out["columns"][row.column] = {
            "n_missing": row.nulls, "n_distinct": row.ndv, "min": row.min, "max": row.max, "mean": row.mean,
            "std": row.std, "5%": quantiles.get("p5"), "25%": quantiles.get("q1"), "50%": quantiles.get("median"),
            "75%": quantiles.get("q3"), "95%": quantiles.get("p95"), "n_zeros": row.zeros, "top": top[0],
            "top share": top[1], "alerts": row.alerts}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ydata-python", required=True, help="a Python with ydata-profiling installed")
    args = parser.parse_args()
    folder = "/tmp/colstats-profile-vs-ydata"
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "part-0.parquet")
    frame().to_parquet(path, index=False)
    ours = lab_side(path)
    theirs = json.loads(subprocess.run([args.ydata_python, "-c", YDATA_SIDE, path], capture_output=True, text=True,
                                       check=True).stdout)
    print(f"duplicate rows: lab {ours['duplicates']}, ydata-profiling {theirs['duplicates']}")
    print(f"time: lab's profile() {ours['seconds']:.3f} s (after its ANALYZE), ydata-profiling "
          f"{theirs['seconds']:.2f} s")
    for column, figures in ours["columns"].items():
        print(f"\n{column}")
        for name in FIGURES:
            mine, other = figures.get(name), theirs["columns"].get(column, {}).get(name)
            if mine is not None or other is not None:
                print(f"  {name:10s} lab {str(mine)[:32]:34s} ydata-profiling {str(other)[:32]}")


if __name__ == "__main__":
    main()

"""ANALYZE ... FOR ALL COLUMNS at growing sizes on embedded Spark: time per row, the ratio to Spark's
native ANALYZE on the same rows, and the peak resident memory of the Python process and of the JVM
at each size (each peak reset before its size through /proc/<pid>/clear_refs).

    .venv/bin/python bench/scale.py [--sizes 1000000,10000000,30000000] [--partitions 30]
"""
from __future__ import annotations

import argparse
import os
import time

from common import DDL, bench_lab, generated


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if parent == pid:
                found.append(int(entry))
    return found


def jvm_pid() -> int | None:
    """The Spark driver JVM this Python process started (a descendant running java)."""
    pending = [os.getpid()]
    while pending:
        pid = pending.pop()
        for child in _children(pid):
            try:
                with open(f"/proc/{child}/cmdline", "rb") as f:
                    if b"java" in f.read().split(b"\0")[0]:
                        return child
            except OSError:
                pass
            pending.append(child)
    return None


def reset_peak(pid: int) -> None:
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def peak_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000000,10000000,30000000")
    parser.add_argument("--partitions", type=int, default=30)
    args = parser.parse_args()
    lab = bench_lab(fresh=True, driver_memory="6g")
    spark = lab.spark
    jvm = jvm_pid()
    lab.set("hive.stats.column.autogather", False)
    print(f"{'rows':>12} {'ours s':>8} {'native s':>9} {'ratio':>6} {'ns/row':>7} {'python MiB':>11} {'JVM MiB':>8}")
    for rows in (int(s) for s in args.sizes.split(",")):
        name = f"scale_{rows}"
        staging = os.path.join(lab.home, f"staging_{rows}")
        generated(spark, rows, args.partitions).write.mode("overwrite").parquet(staging)
        source = spark.read.parquet(staging)
        lab.sql(DDL.format(name=name))
        lab.tables[name].write(source)
        source.write.partitionBy("ds").format("parquet").saveAsTable(f"{name}_native")
        lab.sql(f"ANALYZE TABLE {name} PARTITION (ds='2026-10-01') COMPUTE STATISTICS FOR ALL COLUMNS")  # warm
        reset_peak(os.getpid())
        if jvm:
            reset_peak(jvm)
        start = time.perf_counter()
        lab.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR ALL COLUMNS")
        ours = time.perf_counter() - start
        python_peak, jvm_peak = peak_mib(os.getpid()), peak_mib(jvm) if jvm else float("nan")
        start = time.perf_counter()
        spark.sql(f"ANALYZE TABLE {name}_native COMPUTE STATISTICS FOR ALL COLUMNS")
        native = time.perf_counter() - start
        print(f"{rows:>12,} {ours:>8.2f} {native:>9.2f} {ours / native:>6.2f} {ours / rows * 1e9:>7.0f} "
              f"{python_peak:>11.0f} {jvm_peak:>8.0f}", flush=True)


if __name__ == "__main__":
    main()

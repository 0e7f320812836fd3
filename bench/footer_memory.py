"""The lab's process memory while it reads the footers of many files: an external table of one 20-column file a
partition (as bench/partitions_end_to_end.py writes it), registered, analyzed FOR ALL COLUMNS, then planned for a
query of every partition (which reads every footer again). At each step the peak resident memory of this Python
process (reset before the step through /proc/self/clear_refs; Spark's JVM is a process of its own) and what the
lab's caches hold by their estimates, under `colstats.cache.max_bytes`. Target: the ANALYZE at most 1 GiB at
100,000 files (its partitions' results go to a temporary file and the metastore a batch at a time).

    .venv/bin/python bench/footer_memory.py [--files 10000] [--cache-mib 256]

The files are written once per count under the bench's home and reused.
"""
from __future__ import annotations

import argparse
import os
import time

from common import BENCH_HOME, bench_lab
from partitions_end_to_end import write_days

from colstats_lab import caches


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _mib(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


PEAKS: list[float] = []


def step(what: str, work) -> None:
    _reset_peak()
    started = time.perf_counter()
    work()
    PEAKS.append(_mib("VmHWM"))
    print(f"  {what:<44} {time.perf_counter() - started:8.1f} s   peak {_mib('VmHWM'):7.0f} MiB   now "
          f"{_mib('VmRSS'):7.0f} MiB   caches hold {caches.held_bytes() / 2**20:6.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--cache-mib", type=int, default=caches.DEFAULT_MAX_BYTES // 2**20)
    args = parser.parse_args()
    root = os.path.join(BENCH_HOME, "footer_memory", f"days_{args.files}")
    if not os.path.isdir(root):
        started = time.perf_counter()
        write_days(root, args.files)
        print(f"wrote {args.files:,} files in {time.perf_counter() - started:.0f} s")
    lab = bench_lab()
    lab.set("colstats.cache.max_bytes", args.cache_mib * 2**20)
    name = f"footers_{args.files}"
    if lab.metastore.catalog.table_exists("default", name):
        lab.sql(f"DROP TABLE {name}")
    lab.spark  # noqa: B018 - Spark's start is not the footers' memory
    print(f"{args.files:,} files of 20 columns, caches bounded at {args.cache_mib} MiB; "
          f"this process at {_mib('VmRSS'):.0f} MiB with Spark started")
    step("register_external", lambda: lab.register_external(name, root, partition_types={"ds": "string"}))
    step("ANALYZE ... FOR ALL COLUMNS", lambda: lab.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR ALL COLUMNS"))
    analyze_peak = PEAKS[-1]
    step("explain of a query over every partition", lambda: lab.explain(f"SELECT n0 FROM {name} WHERE n1 > 500"))
    step("DESCRIBE FORMATTED t n0", lambda: lab.sql(f"DESCRIBE FORMATTED {name} n0"))
    print(f"peak resident memory of this Python process in the ANALYZE: {analyze_peak:.0f} MiB (target <= 1024); "
          f"over every step: {max(PEAKS):.0f} MiB")


if __name__ == "__main__":
    main()

"""Commit throughput of several processes on one metastore, each committing ANALYZE-like changes to a table of
its own (an AnalyzeChange through Metastore.apply, without the Spark job: statistics rows of `--parts`
partitions x 20 columns, their flags, the table's parameters and merged level, history settled), over the same
commits by one process alone: on a SQLite file and, with --metastore-server, on PostgreSQL.

Prints commits per second alone and with `--processes` at once, and their ratio (the issue's target on
PostgreSQL: >= 2.5 with 4 processes).
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import time

import metastore_scale as scale

from colstats_lab.metastore import Metastore


def prepare(location: str, warehouse: str, tables: int, parts: int) -> None:
    ms = Metastore(location, warehouse)
    pool = scale.sketch_pool(64)
    for index in range(tables):
        scale.build_wide(ms, scale.partition_values(parts), scale.COLUMNS, pool, int(time.time()), table=f"t{index}")
    ms.close()


def _server_cpu_seconds(ms: Metastore) -> float:
    """CPU seconds of this connection's PostgreSQL server process so far (on this machine), 0 on SQLite."""
    if ms.db.dialect.name != "postgresql":
        return 0.0
    (pid,) = ms.db.execute("SELECT pg_backend_pid()").fetchone()
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def commit_loop(location: str, warehouse: str, table: str, commits: int, parts: int, start, results) -> None:
    ms = Metastore(location, warehouse)
    pool = scale.sketch_pool(64)
    values = scale.partition_values(parts)
    start.wait()
    began, cpu, server = time.perf_counter(), time.process_time(), _server_cpu_seconds(ms)
    for round_ in range(commits):
        scale.store_round(ms, values, pool, int(time.time()), first=10_000 + round_, keep=True, table_name=table)
    results.put((time.perf_counter() - began, time.process_time() - cpu, _server_cpu_seconds(ms) - server))
    ms.close()


def throughput(location: str, warehouse: str, processes: int, commits: int, parts: int) -> tuple[float, float]:
    """Commits per second of `processes` processes at once, each on its own table, and the cores they kept busy
    (their own CPU and their server processes', over the wall time)."""
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(processes + 1), context.Queue()
    workers = [context.Process(target=commit_loop, args=(location, warehouse, f"t{i}", commits, parts, start, results))
               for i in range(processes)]
    for w in workers:
        w.start()
    start.wait()
    began = time.perf_counter()
    for w in workers:
        w.join()
    wall = time.perf_counter() - began
    assert all(w.exitcode == 0 for w in workers), [w.exitcode for w in workers]
    used = [results.get() for _ in workers]
    return processes * commits / wall, sum(client + server for _, client, server in used) / wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--commits", type=int, default=20, help="commits each process makes")
    parser.add_argument("--parts", type=int, default=20, help="partitions each commit analyzes (x 20 columns)")
    parser.add_argument("--home", default="/tmp/colstats-bench-concurrency")
    parser.add_argument("--metastore-server", metavar="URL", help="as in metastore_scale.py")
    args = parser.parse_args()
    shutil.rmtree(args.home, ignore_errors=True)
    os.makedirs(args.home)
    (ms,) = scale.open_metastores(args.home, args.metastore_server, ["concurrency"])
    location = ms.db.url
    ms.close()
    warehouse = os.path.join(args.home, "warehouse")
    prepare(location, warehouse, args.processes, args.parts)
    alone, alone_cores = throughput(location, warehouse, 1, args.commits, args.parts)
    together, together_cores = throughput(location, warehouse, args.processes, args.commits, args.parts)
    kind = "PostgreSQL" if args.metastore_server else "SQLite"
    cores = os.cpu_count() or 1
    print(f"{kind}: {args.parts} partitions x {len(scale.COLUMNS)} columns a commit; one process {alone:.1f} commits/s, "
          f"{args.processes} processes on their own tables {together:.1f} commits/s = {together / alone:.2f}x")
    # a lone process and its server keep `alone_cores` busy: with `cores` cores, processes that never waited for
    # each other could reach at most cores / alone_cores times its throughput
    print(f"  cores kept busy (the processes and their server processes): one process {alone_cores:.2f}, "
          f"{args.processes} processes {together_cores:.2f}, of {cores}: the ratio's ceiling here is "
          f"{min(args.processes, cores / alone_cores):.2f}x")


if __name__ == "__main__":
    main()

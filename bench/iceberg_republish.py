"""Statistics that follow every commit (issue 78): an Iceberg table of P day partitions, analyzed and published in
full; then another engine appends to one day and an auto-analyze round (the table's `colstats.publish=auto`)
re-reads that day and republishes on the new snapshot. Prints the full ANALYZE + publish against the round, in
seconds and in data-file bytes read (the partitions' files each scanned), and how long after the commit the
statistics landed. Targets: the round reads at most 2 % of the bytes and takes at most 0.1x the time.

    .venv/bin/python bench/iceberg_republish.py [--rows 5000000] [--partitions 100] [--runs 3]
"""
from __future__ import annotations

import os
import shutil
import sys
import time
from statistics import median

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import BENCH_HOME, bench_arguments, bench_lab  # noqa: E402
from pyiceberg.catalog import load_catalog  # noqa: E402
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: E402
from pyiceberg.transforms import IdentityTransform  # noqa: E402
from table_formats import SCHEMA, day_rows  # noqa: E402


def _bytes_of(lab, table: str, partitions: list[str]) -> int:
    """The data-file bytes of `partitions` (None: the table's), as the lab's metastore records them."""
    db, name = table.split(".")
    return sum(int(p.parameters.get("totalSize", 0) or 0)
               for p in lab.metastore.catalog.get_partitions(db, name) if p.partName in set(partitions))


def main() -> None:
    args = bench_arguments(runs=3)
    args.rows = args.rows if args.rows != 10_000_000 else 5_000_000
    args.partitions = args.partitions if args.partitions != 30 else 100
    root = os.path.join(BENCH_HOME, "iceberg-republish")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    properties = {"type": "sql", "uri": f"sqlite:///{root}/catalog.db", "warehouse": f"file://{root}"}
    catalog = load_catalog("ice", **properties)  # a SQL catalog keys its tables by the catalog's name
    catalog.create_namespace("db")
    spec = PartitionSpec(PartitionField(source_id=8, field_id=1000, transform=IdentityTransform(), name="ds"))
    table = catalog.create_table("db.events", schema=SCHEMA, partition_spec=spec,
                                 properties={"colstats.publish": "auto"})
    per_day = args.rows // args.partitions
    for day in range(args.partitions):
        table.append(day_rows(day, per_day, day))
    lab = bench_lab()
    lab.attach("ice", properties)
    print(f"{args.rows:,} rows in {args.partitions} day partitions, one file each")

    started = time.perf_counter()  # every partition analyzed and sketched: what a full refresh costs
    lab.sql("ANALYZE TABLE ice.db.events COMPUTE STATISTICS FOR ALL COLUMNS")
    lab.tables["ice.db.events"].publish()
    full = time.perf_counter() - started
    everything = _bytes_of(lab, "ice_db.events", [p.partName for p in lab.metastore.catalog.get_partitions("ice_db", "events")])
    round_times, lags, read = [], [], []
    for run in range(args.runs):
        catalog.load_table("db.events").append(day_rows(run, 1_000, 10_000 + run))  # another engine, one day
        started = time.perf_counter()
        outcome = lab.autoanalyze.run(databases="ice_db").details
        round_times.append(time.perf_counter() - started)
        analyzed = [owner for entry in outcome.analyzed for owner in entry["owners"]]
        published = [entry["published"] for entry in outcome.analyzed if entry.get("published")]
        assert len(analyzed) == 1 and published, outcome.message
        lags.append(published[0]["after_commit_seconds"])
        read.append(_bytes_of(lab, "ice_db.events", analyzed) / everything)
    round_s = median(round_times)
    print(f"  full ANALYZE + publish          {full:7.2f} s")
    print(f"  round after a one-day append    {round_s:7.2f} s  ({round_s / full:.3f}x, target <= 0.1; median of "
          f"{args.runs})")
    print(f"  bytes the round read            {median(read):.2%} of the full's (target <= 2 %)")
    print(f"  statistics landed after commit  {median(lags):.1f} s")

if __name__ == "__main__":
    main()

"""What publishing to a real Hive Metastore costs: a table of 20 columns over P partitions in an HMS 2.3
(pyspark's jars, tests/hms_server.py), analyzed by the lab, then published: the first publish (every
partition and the table written), a second with nothing changed (reads only), and one after a day's files
changed and that day alone was analyzed again. Prints seconds and the Thrift calls each made, and, as the
ratio against Spark's own command, the lab's ANALYZE + first publish over Spark's `ANALYZE TABLE ... FOR ALL
COLUMNS` of the same table through the same HMS (which writes table-level properties only).

    .venv/bin/python bench/publish_hms.py --partitions 30 3000
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))  # the HMS launcher the tests use

import hms_server  # noqa: E402
import hms_tables  # noqa: E402
from common import BENCH_HOME  # noqa: E402

from colstats_lab import Lab  # noqa: E402

TYPES = ["bigint", "int", "double", "string", "date"] * 4  # 20 columns
ARROW = {"bigint": pa.int64(), "int": pa.int32(), "double": pa.float64(), "string": pa.string(), "date": pa.date32()}


def columns() -> list[tuple[str, str]]:
    return [(f"c{i}", t) for i, t in enumerate(TYPES)]


def write_day(directory: str, seed: int, rows: int) -> None:
    rng = np.random.default_rng(seed)
    data = {}
    for name, type_name in columns():
        values = rng.integers(0, 1000, rows)
        if type_name == "double":
            data[name] = pa.array(values * 0.5)
        elif type_name == "string":
            data[name] = pa.array([f"v{v}" for v in values])
        elif type_name == "date":
            data[name] = pa.array([dt.date(2026, 1, 1) + dt.timedelta(days=int(v % 300)) for v in values])
        else:
            data[name] = pa.array(values, ARROW[type_name])
    os.makedirs(directory, exist_ok=True)
    pq.write_table(pa.table(data), os.path.join(directory, f"part-{seed}.parquet"))


def run(partitions: int, rows: int, uri: str, client, home: str) -> dict:
    db, location = f"bench{partitions}", os.path.join(home, f"data{partitions}")
    days = [(dt.date(2020, 1, 1) + dt.timedelta(days=i)).isoformat() for i in range(partitions)]
    for i, day in enumerate(days):
        write_day(f"{location}/ds={day}", i, rows)
    started = time.perf_counter()
    hms_tables.create_table(client, db, "events", columns(), [("ds", "string")], location)
    hms_tables.add_partitions(client, db, "events", columns(), {(d,): f"{location}/ds={d}" for d in days})
    made = time.perf_counter() - started
    lab = Lab(home=os.path.join(home, f"lab{partitions}"), spark_conf={
        "spark.sql.shuffle.partitions": "8", "spark.driver.memory": "4g", "spark.sql.catalogImplementation": "hive",
        "spark.hadoop.hive.metastore.uris": uri, "spark.sql.warehouse.dir": os.path.join(home, "spark-warehouse")})
    lab.attach("hms", uri)
    started = time.perf_counter()
    lab.sql(f"ANALYZE TABLE hms.{db}.events COMPUTE STATISTICS FOR ALL COLUMNS")
    analyzed = time.perf_counter() - started
    first = lab.tables[f"hms.{db}.events"].publish().details
    again = lab.tables[f"hms.{db}.events"].publish().details
    time.sleep(1.1)
    write_day(f"{location}/ds={days[0]}", 10**6, rows)  # another job appends to one day
    changed = lab.tables[f"hms.{db}.events"].publish().details  # withdraws that day and the table level
    lab.sql(f"ANALYZE TABLE hms.{db}.events PARTITION (ds='{days[0]}') COMPUTE STATISTICS FOR ALL COLUMNS")
    back = lab.tables[f"hms.{db}.events"].publish().details
    started = time.perf_counter()  # Spark's own, last: it rewrites the table's spark.sql.statistics.* in the HMS
    lab.spark.sql(f"ANALYZE TABLE {db}.events COMPUTE STATISTICS FOR ALL COLUMNS")
    spark_analyzed = time.perf_counter() - started
    lab.close()
    return {"partitions": partitions, "hms_add_s": made, "analyze_s": analyzed, "first": first, "again": again,
            "withdraw": changed, "republish": back, "spark_s": spark_analyzed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, nargs="+", default=[30, 3000])
    parser.add_argument("--rows", type=int, default=200, help="rows per partition")
    args = parser.parse_args()
    home = os.path.join(BENCH_HOME, "publish_hms")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    process, uri = hms_server.start(os.path.join(home, "hms"))
    try:
        client = hms_tables.connect(uri)
        print(f"{'partitions':>10} {'step':<34} {'seconds':>8} {'write calls':>11} {'partitions written':>18}")
        for partitions in args.partitions:
            result = run(partitions, args.rows, uri, client, home)
            print(f"{partitions:>10} {'HMS add_partitions (setup)':<34} {result['hms_add_s']:>8.2f}")
            print(f"{partitions:>10} {'lab ANALYZE ... FOR ALL COLUMNS':<34} {result['analyze_s']:>8.2f}")
            for step, label in (("first", "publish (first)"), ("again", "publish (nothing changed)"),
                                ("withdraw", "publish (a day changed: withdraw)"),
                                ("republish", "publish (the day analyzed again)")):
                outcome = result[step]
                written = len(outcome.published) + len(outcome.withdrawn)
                print(f"{partitions:>10} {label:<34} {outcome.seconds:>8.2f} {outcome.write_calls:>11} {written:>18}")
            ours = result["analyze_s"] + result["first"].seconds
            print(f"{partitions:>10} {'Spark ANALYZE ... FOR ALL COLUMNS':<34} {result['spark_s']:>8.2f}   "
                  f"(lab ANALYZE + first publish / Spark's: {ours / result['spark_s']:.2f})")
    finally:
        hms_server.stop(process)


if __name__ == "__main__":
    main()

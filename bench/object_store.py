"""What an object store costs the lab: a table of P partitions × F files on a real S3 server (SeaweedFS,
tests/s3_server.py, on this machine), registered twice: as `s3://lake/t` (listed and footers read through S3)
and at the bucket's FUSE mount (listed and read as local files). Spark reads both through the mount, so the
difference is the lab's listing and footers. Prints the S3 requests of each command (counted by the server)
and, as ratios, the s3:// table's ANALYZE (median of alternated runs, statistics dropped before each) over the
mounted one's and over Spark's own `ANALYZE TABLE ... FOR ALL COLUMNS` of the mounted files; then the footers
alone (wall and CPU: the floor of the difference), and the time of a freshness check of a table of N objects.

    .venv/bin/python bench/object_store.py --partitions 300 --files 3 --objects 10000
"""
from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))  # the S3 server the tests use

import s3_server  # noqa: E402
from common import BENCH_HOME, alternated_medians, timed  # noqa: E402

from colstats_lab import Lab  # noqa: E402
from colstats_lab.storage import SPARK_PREFIXES, forget_footers, list_data_files, prefetch_footers, states_by_location  # noqa: E402


def objects(prefix: str, partitions: int, files: int, rows: int) -> dict[str, bytes]:
    out = {}
    for day in range(partitions):
        for part in range(files):
            rng = np.random.default_rng(day * 1000 + part)
            table = pa.table({"id": rng.integers(0, 10**9, rows), "v": rng.normal(size=rows),
                              "kind": rng.choice(["a", "b", "c", "d"], rows)})
            buffer = io.BytesIO()
            pq.write_table(table, buffer)
            out[f"{prefix}/ds={day:05d}/part-{part}.parquet"] = buffer.getvalue()
    return out


def requests_of(server, work) -> tuple[float, dict]:
    before = server.requests()
    seconds = timed(work)
    return seconds, dict(server.requests() - before)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", type=int, default=300)
    parser.add_argument("--files", type=int, default=3)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--objects", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    folder = os.path.join(BENCH_HOME, "object-store")
    shutil.rmtree(folder, ignore_errors=True)
    server = s3_server.start(os.path.join(folder, "server"))
    try:
        os.environ.update(server.environment)
        import fsspec

        fs = fsspec.filesystem("s3")
        fs.mkdir("lake")
        mount = server.mount("lake")
        started = time.perf_counter()
        fs.pipe(objects("lake/t", args.partitions, args.files, args.rows))
        print(f"{args.partitions} partitions × {args.files} files of {args.rows:,} rows put in "
              f"{time.perf_counter() - started:.1f} s")

        lab = Lab(home=os.path.join(folder, "lab"), spark_conf={"spark.sql.shuffle.partitions": "8"})
        lab.set(SPARK_PREFIXES, {"s3://lake/": "file://" + mount})
        for name, location in (("on_s3", "s3://lake/t"), ("mounted", os.path.join(mount, "t"))):
            seconds, made = requests_of(server, lambda: lab.register_external(name, location))
            print(f"register {name}: {seconds:.2f} s, S3 requests {made}")
        lab.spark.sql(f"CREATE TABLE spark_native USING parquet LOCATION '{os.path.join(mount, 't')}'")
        lab.spark.sql("MSCK REPAIR TABLE spark_native")

        for name in ("on_s3", "mounted"):
            seconds, made = requests_of(server, lambda: lab.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR COLUMNS"))
            print(f"first ANALYZE {name}: {seconds:.2f} s, S3 requests {made}")
        seconds, made = requests_of(server, lambda: lab.tables["on_s3"].inspect.staleness())
        print(f"freshness check of on_s3 ({args.partitions * args.files} objects): {seconds:.3f} s, S3 requests {made}")
        seconds, made = requests_of(server, lambda: lab.sql(
            "ANALYZE TABLE on_s3 PARTITION (ds='00007') COMPUTE STATISTICS FOR COLUMNS"))
        print(f"ANALYZE of one partition of on_s3: {seconds:.2f} s, S3 requests {made}")
        seconds, made = requests_of(server, lambda: lab.sql("SELECT count(*), max(id) FROM on_s3 WHERE ds = '00011'"))
        print(f"an answer from one partition's statistics of on_s3: {seconds:.3f} s, S3 requests {made}")

        def analyze(name):
            def work():
                forget_footers()  # each run lists and reads its footers again, as a new process would
                lab.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR COLUMNS")
            return work

        medians = alternated_medians(args.runs, {
            "on_s3": analyze("on_s3"), "mounted": analyze("mounted"),
            "spark": lambda: lab.spark.sql("ANALYZE TABLE spark_native COMPUTE STATISTICS FOR ALL COLUMNS").collect()})
        print(f"ANALYZE, median of {args.runs}: s3:// {medians['on_s3']:.2f} s, mounted path {medians['mounted']:.2f} s, "
              f"Spark's own {medians['spark']:.2f} s; s3:// / mounted = {medians['on_s3'] / medians['mounted']:.2f} "
              f"(target <= 1.1), s3:// / Spark = {medians['on_s3'] / medians['spark']:.2f}")

        # the floor of the s3:// table's extra: its footers read alone, one ranged GET each (If-Match), all
        # client CPU (botocore's request pipeline), which Spark's job cannot hide on a machine it keeps busy
        footer_files = list_data_files("s3://lake/t")
        forget_footers()
        wall, cpu = time.perf_counter(), time.process_time()
        prefetch_footers(footer_files)
        print(f"footers of {len(footer_files)} files read alone: {time.perf_counter() - wall:.2f} s wall, "
              f"{time.process_time() - cpu:.2f} s CPU of this process; ANALYZE s3:// - mounted = "
              f"{medians['on_s3'] - medians['mounted']:.2f} s")

        many = args.objects
        fs.pipe({f"lake/many/ds={i // 10:05d}/part-{i % 10}.parquet": b"PAR1" for i in range(many)})
        locations = {f"ds={d:05d}": f"s3://lake/many/ds={d:05d}" for d in range(many // 10)}
        seconds, made = requests_of(server, lambda: states_by_location(locations, "s3://lake/many"))
        print(f"freshness listing of {many:,} objects in {many // 10:,} partitions: {seconds:.2f} s, S3 requests {made}")
    finally:
        s3_server.stop(server)


if __name__ == "__main__":
    main()

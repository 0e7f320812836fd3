"""An external Parquet table written with pyarrow: partitions ds=d1.. with several files each, files
with several row groups, and the Python values of every row kept so tests compute what the
metadata must say without Spark or the lab."""
from __future__ import annotations

import datetime as dt
import math
import os
import random

import pyarrow as pa
import pyarrow.parquet as pq

ROW_GROUP_ROWS = 40
SCHEMA = pa.schema([("id", pa.int64()), ("x", pa.int32()), ("amount", pa.float64()), ("note", pa.string()),
                    ("d", pa.date32()), ("ts", pa.timestamp("us", tz="UTC"))])
COLUMNS = [f.name for f in SCHEMA]
TYPES = {"id": "bigint", "x": "int", "amount": "double", "note": "string", "d": "date", "ts": "timestamp"}


def make_rows(seed: int, n: int, start_id: int = 0, x_range: tuple[int, int] = (0, 100)) -> dict[str, list]:
    """Rows with nulls in every column but id, NaN and -0.0 among the amounts, multi-byte notes."""
    rng = random.Random(seed)
    rows = {c: [] for c in COLUMNS}
    for i in range(n):
        rows["id"].append(start_id + i)
        rows["x"].append(None if rng.random() < 0.1 else rng.randint(*x_range))
        r = rng.random()
        rows["amount"].append(None if r < 0.05 else math.nan if r < 0.08 else -0.0 if r < 0.1
                              else round(rng.uniform(-50, 250), 2))
        missing = rng.random() < 0.2  # drawn first: the same rows as ever for a seed
        rows["note"].append(None if missing else rng.choice(["", "a", "ß", "日本", "zz", "n"]) + str(rng.randint(0, 9)))
        rows["d"].append(None if rng.random() < 0.1 else dt.date(2026, 1, 1) + dt.timedelta(days=rng.randint(0, 300)))
        rows["ts"].append(None if rng.random() < 0.1 else
                          dt.datetime(2026, 1, 1)
                          + dt.timedelta(seconds=rng.randint(0, 10**7), microseconds=rng.randint(0, 999999)))
    return rows


def write_file(path: str, rows: dict[str, list]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    table = pa.Table.from_pydict(rows, schema=SCHEMA)
    pq.write_table(table, path, row_group_size=ROW_GROUP_ROWS)


def build_table(root: str, partitions=("d1", "d2", "d3"), files_per_partition: int = 2,
                rows_per_file: int = 100) -> dict[str, dict[str, list]]:
    """Writes the table; returns each file's rows by path."""
    written = {}
    seed = 0
    for index, ds in enumerate(partitions):
        for f in range(files_per_partition):
            seed += 1
            path = os.path.join(root, f"ds={ds}", f"part-{f}.parquet")
            # partitions hold shifted ranges of x so partition and file statistics differ
            rows = make_rows(seed, rows_per_file, start_id=seed * 1000, x_range=(index * 40 + f * 10, index * 40 + f * 10 + 60))
            write_file(path, rows)
            written[path] = rows
    return written


def spark_min(values, type_name: str):
    """Spark's min/max over non-null values: NaN above every number; dates as days, timestamps as
    microseconds, as the metadata keeps them."""
    present = [_as_metadata(v, type_name) for v in values if v is not None]
    if not present:
        return None, None
    key = lambda v: (1, 0.0) if isinstance(v, float) and math.isnan(v) else (0, v)  # noqa: E731
    return min(present, key=key), max(present, key=key)


def _as_metadata(value, type_name: str):
    if type_name == "date":
        return (value - dt.date(1970, 1, 1)).days
    if type_name == "timestamp":
        return (value - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
    return value


def distinct(values) -> int:
    """count(DISTINCT) as Spark says it: NaN is one value, -0.0 equals 0.0."""
    seen = set()
    for v in values:
        if v is None:
            continue
        if isinstance(v, float):
            v = "nan" if math.isnan(v) else v + 0.0
        seen.add(v)
    return len(seen)

"""Data and queries derived from TPC-DS (never TPC-DS results): DuckDB's tpcds extension generates the data,
written once as Parquet (one folder a table), and gives the query texts, which sqlglot turns into Spark's
SQL. Used by bench/optimizer.py and, at a small scale factor, by the full lane's tests of `lab.explain`."""
from __future__ import annotations

import glob
import os
import shutil
import time

import duckdb
import duckdb_extension_tpcds
import sqlglot


def connect() -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the tpcds extension of the installed package loaded: nothing downloaded."""
    extension = glob.glob(os.path.join(os.path.dirname(duckdb_extension_tpcds.__file__), "extensions", "*",
                                       "tpcds.duckdb_extension"))[0]
    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    con.execute(f"LOAD '{extension}'")
    return con


def generate(folder: str, sf: float, queries: list[int]) -> dict[str, str]:
    """Each table of the schema as a folder of Parquet under `folder` (made once per folder), and the texts
    of `queries` by name ("q17") in Spark's SQL."""
    done = os.path.join(folder, "_done")
    con = connect()
    if not os.path.exists(done):
        shutil.rmtree(folder, ignore_errors=True)
        started = time.perf_counter()
        con.execute(f"CALL dsdgen(sf={sf})")
        for (table,) in con.execute("SHOW TABLES").fetchall():
            os.makedirs(os.path.join(folder, table))
            con.execute(f"COPY {table} TO '{folder}/{table}/part-0.parquet' (FORMAT parquet)")
        open(done, "w").close()
        print(f"data derived from TPC-DS at SF {sf}: {time.perf_counter() - started:.0f} s")
    texts = dict(con.execute("SELECT query_nr, query FROM tpcds_queries()").fetchall())
    return {f"q{n}": sqlglot.transpile(texts[n], read="duckdb", write="spark")[0] for n in queries}


def tables_of(folder: str) -> list[str]:
    return sorted(name for name in os.listdir(folder) if not name.startswith("_"))

"""DuckDB with table-format extensions loaded from their wheels (no download): the tests' independent readers of
the Delta and Iceberg tables they write."""
from __future__ import annotations

import glob
import importlib
import os

import duckdb


def duckdb_with(*extensions: str) -> duckdb.DuckDBPyConnection:
    """A connection with each named extension (`delta`, `avro`, `iceberg`) loaded from its duckdb-extension wheel."""
    connection = duckdb.connect()
    connection.execute("SET autoinstall_known_extensions=false")
    for name in extensions:
        folder = os.path.dirname(importlib.import_module(f"duckdb_extension_{name}").__file__ or "")
        extension = glob.glob(os.path.join(folder, "extensions", "*", f"{name}.duckdb_extension"))[0]
        connection.execute(f"LOAD '{extension}'")
    return connection

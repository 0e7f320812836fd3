"""Tables made in a real Hive Metastore the way another engine makes them: straight through its Thrift API
(pymetastore's generated client), Parquet files written beside them by the test."""
from __future__ import annotations

import os
from urllib.parse import urlparse

from pymetastore.hive_metastore import ThriftHiveMetastore, ttypes
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

PARQUET_INPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUTPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"


def connect(uri: str) -> ThriftHiveMetastore.Client:
    parsed = urlparse(uri)
    transport = TTransport.TBufferedTransport(TSocket.TSocket(parsed.hostname, parsed.port))
    transport.open()
    return ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))


def _uri(location: str) -> str:
    """A local path as Hadoop's `file:` URI; an object store's URI (`s3a://...`) as it is."""
    return location if "://" in location else f"file:{location}"


def storage(location: str, cols: list[tuple[str, str]]) -> ttypes.StorageDescriptor:
    return ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema(name, type_name, None) for name, type_name in cols], location=_uri(location),
        inputFormat=PARQUET_INPUT, outputFormat=PARQUET_OUTPUT, compressed=False, numBuckets=-1,
        serdeInfo=ttypes.SerDeInfo(None, PARQUET_SERDE, {"serialization.format": "1"}), bucketCols=[], sortCols=[],
        parameters={})


def create_table(client, db: str, name: str, cols: list[tuple[str, str]], keys: list[tuple[str, str]],
                 location: str, parameters: dict[str, str] | None = None) -> None:
    if db not in client.get_all_databases():
        client.create_database(ttypes.Database(db, None, _uri(location.rstrip("/").rsplit("/", 1)[0]), {}))
    table = ttypes.Table(name, db, "test", 0, 0, 0, storage(location, cols),
                         [ttypes.FieldSchema(k, t, None) for k, t in keys], {"EXTERNAL": "TRUE", **(parameters or {})},
                         None, None, "EXTERNAL_TABLE")
    client.create_table(table)


def add_partitions(client, db: str, name: str, cols: list[tuple[str, str]], partitions: dict[tuple[str, ...], str]
                   ) -> None:
    """Partitions by their values, each at its own location (made first: an HMS 2.3 that makes them itself
    takes five times as long), 1,000 a call."""
    for location in partitions.values():
        if "://" not in location:  # an object store's "directory" is there once an object is under it
            os.makedirs(location, exist_ok=True)
    parts = [ttypes.Partition(list(values), db, name, 0, 0, storage(location, cols), {})
             for values, location in partitions.items()]
    for start in range(0, len(parts), 1000):
        client.add_partitions_req(ttypes.AddPartitionsRequest(db, name, parts[start:start + 1000], False, False))

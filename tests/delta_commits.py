"""Delta commits deltalake does not write, made as the Delta protocol defines them (what Spark and Databricks
write): deletion vectors (on disk by UUID with or without a random prefix, by absolute path, or inline) and a
column renamed under column mapping. The bitmaps are pyroaring's portable 64-bit format behind the protocol's magic
number, Z85 is pyzmq's: nothing here shares code with the lab's reader.

The oracles read what these commits leave: deltalake's QueryBuilder (delta-kernel) and DuckDB's delta extension
loaded from its wheel (`duckdb_delta`), never deltalake's `to_pyarrow_table`, which reads column-mapped tables as
NULLs."""
from __future__ import annotations

import glob
import json
import os
import struct
import time
import uuid
import zlib

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, QueryBuilder
from duckdb_readers import duckdb_with
from pyroaring import BitMap64
from zmq.utils import z85

PORTABLE_MAGIC = 1681511377


def log_dir(path: str) -> str:
    return os.path.join(path, "_delta_log")


def _version(path: str) -> int:
    return max(int(os.path.basename(name)[:20]) for name in glob.glob(os.path.join(log_dir(path), "*.json")))


def live_adds(path: str) -> dict[str, dict]:
    """The add action of each file of the newest version, replayed from the JSON commits."""
    live: dict[str, dict] = {}
    for name in sorted(glob.glob(os.path.join(log_dir(path), "[0-9]" * 20 + ".json"))):
        adds, removes = [], []
        for line in open(name).read().splitlines():
            action = json.loads(line)
            adds += [action["add"]] if "add" in action else []
            removes += [action["remove"]] if "remove" in action else []
        for remove in removes:
            live.pop(remove["path"], None)
        for add in adds:
            live[add["path"]] = add
    return live


def _z85(data: bytes) -> str:
    return z85.encode(data + b"\0" * (-len(data) % 4)).decode()


def _bitmap_bytes(positions) -> bytes:
    return struct.pack("<I", PORTABLE_MAGIC) + BitMap64(positions).serialize()


def _existing_positions(path: str, descriptor: dict | None) -> set[int]:
    """What a file's vector deletes now (a vector written here: decoded the way it was encoded)."""
    if not descriptor:
        return set()
    if descriptor["storageType"] == "i":
        data = z85.decode(descriptor["pathOrInlineDv"].encode())[:descriptor["sizeInBytes"]]
    else:
        location = _vector_location(path, descriptor)
        content = open(location, "rb").read()
        start = descriptor.get("offset", 1)
        data = content[start + 4:start + 4 + descriptor["sizeInBytes"]]
    return set(BitMap64.deserialize(data[4:]))


def _vector_location(path: str, descriptor: dict) -> str:
    if descriptor["storageType"] == "p":
        return descriptor["pathOrInlineDv"].removeprefix("file://")
    text = descriptor["pathOrInlineDv"]
    prefix, encoded = text[:-20], text[-20:]
    name = f"deletion_vector_{uuid.UUID(bytes=z85.decode(encoded.encode()))}.bin"
    return os.path.join(path, prefix, name)


def delete_rows(path: str, positions: dict[str, list[int]], storage: str = "u", prefix: str = "",
                operation: str = "DELETE") -> int:
    """Commits deletion vectors deleting `positions` (row indexes) of each data file named (its path in the log),
    in addition to what its vector deleted before (the new vector replaces the old one): one vector file for the
    commit (`u`, under `prefix`; `p` by absolute path) holding every vector, or each inline (`i`). Returns the
    version committed."""
    adds = live_adds(path)
    vectors: dict[str, bytes] = {}
    for file_path, rows in positions.items():
        vectors[file_path] = _bitmap_bytes(sorted(_existing_positions(path, adds[file_path].get("deletionVector"))
                                                  | set(rows)))
    descriptors: dict[str, dict] = {}
    if storage == "i":
        for file_path, data in vectors.items():
            descriptors[file_path] = {"storageType": "i", "pathOrInlineDv": _z85(data), "sizeInBytes": len(data)}
    else:
        file_id = uuid.uuid4()
        content = bytearray([1])
        for file_path, data in vectors.items():
            descriptors[file_path] = {"offset": len(content), "sizeInBytes": len(data)}
            content += struct.pack(">I", len(data)) + data + struct.pack(">I", zlib.crc32(data))
        folder = os.path.join(path, prefix) if prefix else path
        os.makedirs(folder, exist_ok=True)
        location = os.path.join(folder, f"deletion_vector_{file_id}.bin")
        with open(location, "wb") as f:
            f.write(bytes(content))
        for descriptor in descriptors.values():
            if storage == "u":
                descriptor.update(storageType="u", pathOrInlineDv=prefix + z85.encode(file_id.bytes).decode())
            else:
                descriptor.update(storageType="p", pathOrInlineDv="file://" + location)
    now = int(time.time() * 1000)
    lines = [{"commitInfo": {"timestamp": now, "operation": operation, "operationParameters": {},
                             "engineInfo": "tests/delta_commits.py"}}]
    for file_path, descriptor in descriptors.items():
        before = adds[file_path]
        descriptor["cardinality"] = len(BitMap64.deserialize(vectors[file_path][4:]))
        remove = {"path": file_path, "deletionTimestamp": now, "dataChange": True, "extendedFileMetadata": True,
                  "partitionValues": before["partitionValues"], "size": before["size"]}
        if before.get("deletionVector"):
            remove["deletionVector"] = before["deletionVector"]
        stats = json.loads(before["stats"])
        stats["tightBounds"] = False
        after = {**before, "dataChange": True, "stats": json.dumps(stats), "deletionVector": descriptor}
        lines += [{"remove": remove}, {"add": after}]
    protocol = _latest(path, "protocol")
    if "deletionVectors" not in protocol.get("readerFeatures", []):  # a table feature table: DVs, and column
        implied = ["columnMapping"] if protocol["minReaderVersion"] == 2 else []  # mapping where version 2 implied it
        readers = sorted(set(protocol.get("readerFeatures", []) + implied + ["deletionVectors"]))
        writers = sorted(set(protocol.get("writerFeatures", []) + implied + ["deletionVectors"]))
        lines.insert(1, {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": readers,
                                      "writerFeatures": writers}})
    version = _version(path) + 1
    with open(os.path.join(log_dir(path), f"{version:020d}.json"), "x") as f:
        f.write("\n".join(json.dumps(line) for line in lines) + "\n")
    return version


def _latest(path: str, kind: str) -> dict:
    """The newest action of `kind` (protocol, metaData) in the JSON commits."""
    found: dict = {}
    for name in sorted(glob.glob(os.path.join(log_dir(path), "[0-9]" * 20 + ".json"))):
        for line in open(name).read().splitlines():
            found = json.loads(line).get(kind, found)
    return found


def rename_column(path: str, old: str, new: str) -> int:
    """Commits a new metaData action whose schema calls column `old` `new` (its physical name and id kept), as
    ALTER TABLE ... RENAME COLUMN does under column mapping."""
    metadata = _latest(path, "metaData")
    schema = json.loads(metadata["schemaString"])
    for field in schema["fields"]:
        if field["name"] == old:
            field["name"] = new
    metadata = {**metadata, "schemaString": json.dumps(schema)}
    version = _version(path) + 1
    with open(os.path.join(log_dir(path), f"{version:020d}.json"), "x") as f:
        f.write(json.dumps({"commitInfo": {"timestamp": int(time.time() * 1000), "operation": "RENAME COLUMN"}}) + "\n")
        f.write(json.dumps({"metaData": metadata}) + "\n")
    return version


def take_column_mapping(path: str) -> int:
    """Commits column mapping in name mode on a table that had none (ALTER TABLE ... SET TBLPROPERTIES
    ('delta.columnMapping.mode' = 'name')): each column's physical name is its name, and its files have no field
    ids. Returns the version committed."""
    metadata = _latest(path, "metaData")
    schema = json.loads(metadata["schemaString"])
    for number, field in enumerate(schema["fields"], 1):
        field["metadata"] = {**field.get("metadata", {}), "delta.columnMapping.id": number,
                             "delta.columnMapping.physicalName": field["name"]}
    configuration = {**(metadata.get("configuration") or {}), "delta.columnMapping.mode": "name",
                     "delta.columnMapping.maxColumnId": str(len(schema["fields"]))}
    version = _version(path) + 1
    with open(os.path.join(log_dir(path), f"{version:020d}.json"), "x") as f:
        f.write(json.dumps({"commitInfo": {"timestamp": int(time.time() * 1000), "operation": "SET TBLPROPERTIES"}})
                + "\n")
        f.write(json.dumps({"protocol": {"minReaderVersion": 2, "minWriterVersion": 5}}) + "\n")
        f.write(json.dumps({"metaData": {**metadata, "schemaString": json.dumps(schema),
                                         "configuration": configuration}}) + "\n")
    return version


def v2_checkpoint(path: str) -> int:
    """Upgrades the table to v2 checkpoints (a protocol commit) and writes a UUID-named JSON checkpoint of that
    version whose add actions sit in a Parquet sidecar under `_delta_log/_sidecars/`, as Databricks writes them.
    Returns the checkpoint's version."""
    protocol = _latest(path, "protocol")
    protocol = {**protocol, "minReaderVersion": 3, "minWriterVersion": 7,
                "readerFeatures": sorted(set(protocol.get("readerFeatures", [])) | {"v2Checkpoint"}),
                "writerFeatures": sorted(set(protocol.get("writerFeatures", [])) | {"v2Checkpoint"})}
    version = _version(path) + 1
    with open(os.path.join(log_dir(path), f"{version:020d}.json"), "x") as f:
        f.write(json.dumps({"protocol": protocol}) + "\n")
    vector = pa.struct([("storageType", pa.string()), ("pathOrInlineDv", pa.string()), ("offset", pa.int32()),
                        ("sizeInBytes", pa.int32()), ("cardinality", pa.int64())])
    add = pa.struct([("path", pa.string()), ("partitionValues", pa.map_(pa.string(), pa.string())),
                     ("size", pa.int64()), ("modificationTime", pa.int64()), ("dataChange", pa.bool_()),
                     ("stats", pa.string()), ("deletionVector", vector)])
    adds = [{"path": a["path"], "partitionValues": list(a["partitionValues"].items()), "size": a["size"],
             "modificationTime": a["modificationTime"], "dataChange": False, "stats": a.get("stats"),
             "deletionVector": a.get("deletionVector")} for a in live_adds(path).values()]
    os.makedirs(os.path.join(log_dir(path), "_sidecars"), exist_ok=True)
    sidecar = f"{uuid.uuid4()}.parquet"
    location = os.path.join(log_dir(path), "_sidecars", sidecar)
    pq.write_table(pa.table({"add": pa.array(adds, add)}), location)
    with open(os.path.join(log_dir(path), f"{version:020d}.checkpoint.{uuid.uuid4()}.json"), "x") as f:
        for action in ({"checkpointMetadata": {"version": version}}, {"protocol": protocol},
                       {"metaData": _latest(path, "metaData")},
                       {"sidecar": {"path": sidecar, "sizeInBytes": os.path.getsize(location),
                                    "modificationTime": int(time.time() * 1000)}}):
            f.write(json.dumps(action) + "\n")
    return version


def clean_up_log(path: str, before: int) -> None:
    """Delta's metadata cleanup: the JSON commits before version `before` removed, a checkpoint standing for them."""
    for version in range(before):
        os.remove(os.path.join(log_dir(path), f"{version:020d}.json"))


def deltalake_rows(path: str) -> pa.Table:
    """The live rows as deltalake's query engine reads them."""
    return pa.table(QueryBuilder().register("t", DeltaTable(path)).execute("SELECT * FROM t").read_all())


def duckdb_delta():
    """A DuckDB connection with the delta extension of its wheel loaded (no download)."""
    return duckdb_with("delta")


def duckdb_rows(path: str) -> pa.Table:
    """The live rows as DuckDB's delta_scan reads them."""
    connection = duckdb_delta()
    try:
        return connection.execute("SELECT * FROM delta_scan(?)", [path]).fetch_arrow_table()
    finally:
        connection.close()

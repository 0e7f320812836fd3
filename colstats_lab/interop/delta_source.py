"""Delta tables through deltalake (delta-rs): each log version as the lab follows a snapshot
(`snapshot_source`). Partition values live in the add actions (and the paths), not in the files. The log's add
actions do not say which commit added a file: the versions after the one the lab followed last are read to
find it (up to `_VERSIONS_READ` of them; past that, a file is said to come from the current version).
Column mapping reads each column by its field id (id mode) or its physical name (name mode), and the log's
figures by physical names; deletion vectors (`deletion_vectors`) are files of their data file's partition, which
the scan applies."""
from __future__ import annotations

import json
from dataclasses import replace
from urllib.parse import unquote

import pandas as pd
import pyarrow as pa
from deltalake import DeltaTable
from deltalake.exceptions import DeltaError, TableNotFoundError

from ..column_statistics.model import leaf_name
from ..errors import InvalidArgument, one_line
from ..file_columns import by_lower_name
from ..files import DELETION_VECTOR, ROWS, ColumnFigures, DataFile, FileKeys
from ..metastore import ColumnPath, FieldSchema, NoSuchObjectException, Table
from ..metastore.repositories.snapshot_files import LOG_RULES_PARAM, LOG_STATISTICS_PARAM
from ..storage import is_local, join, local_path, normalized
from ..storage.options import delta_storage_options
from ..tables.deletion_vectors import vector_file
from .delta_log import LogState, log_state
from .file_figures import DELTA_STRINGS_WHOLE_BELOW, column_figures
from .snapshot_source import FormatFile, FormatSnapshot, TableSource, partition_text

_VERSIONS_READ = 20
# the reader features whose tables the lab reads (a variant column is left out by its type); any other is refused
# by name
READABLE_FEATURES = frozenset({"columnMapping", "deletionVectors", "timestampNtz", "v2Checkpoint", "variantType",
                               "vacuumProtocolCheck"})
DEFAULT_INDEXED_COLUMNS = 32  # delta.dataSkippingNumIndexedCols unless the table sets it
PHYSICAL_NAME, COLUMN_ID = "delta.columnMapping.physicalName", "delta.columnMapping.id"
_PRIMITIVES = {"boolean": "boolean", "byte": "tinyint", "short": "smallint", "integer": "int", "long": "bigint",
               "float": "float", "double": "double", "date": "date", "timestamp": "timestamp",
               "timestamp_ntz": "timestamp", "string": "string", "binary": "binary"}


def hive_type(delta_type, what: str) -> str:
    """The Hive type name the lab keeps for a Delta type; refuses by name what it does not analyze."""
    name = str(getattr(delta_type, "type", ""))
    if name.startswith("decimal"):
        return name.replace(" ", "")
    if name not in _PRIMITIVES:
        raise InvalidArgument(f"{what} is of Delta type {delta_type}, which the lab does not analyze yet")
    return _PRIMITIVES[name]


LOG_STATISTICS_COLUMNS = ["column", "files_with_figures", "files"]


def log_statistics_frame(table: Table) -> pd.DataFrame:
    """What other engines read of a Delta table: per column, how many of its files the log keeps minimum,
    maximum and NULL count for (engines prune files with them; Delta keeps no distinct counts)."""
    kept = json.loads(table.parameters.get(LOG_STATISTICS_PARAM) or "{}")
    files = int(table.parameters.get("numFiles", 0) or 0)
    return pd.DataFrame([(column, count, files) for column, count in kept.items()], columns=LOG_STATISTICS_COLUMNS)


DELTA_AUDIT_COLUMNS = ["column", "type", "log_keeps", "files_with_figures", "files", "why_not", "clustering",
                       "lab_accurate"]
_NO_BOUNDS = ("boolean", "binary", "array", "map")  # Delta's log keeps NULL counts of these, never bounds


def delta_audit_frame(table: Table, accurate: dict[str, bool | None]) -> pd.DataFrame:
    """Per column (and struct leaf): whether Delta's log keeps its minimum, maximum and NULL count, in how many
    files, why not where it does not (past the indexed columns, not among the stats columns, a type without
    bounds), whether it is a liquid clustering column, and whether the lab's own statistics of it are accurate
    (`accurate`: column -> True, False, or None never analyzed)."""
    kept = json.loads(table.parameters.get(LOG_STATISTICS_PARAM) or "{}")
    rules = json.loads(table.parameters.get(LOG_RULES_PARAM) or "{}")
    files = int(table.parameters.get("numFiles", 0) or 0)
    order = rules.get("order", [])
    indexed, named = rules.get("indexed", DEFAULT_INDEXED_COLUMNS), rules.get("stats_columns")
    clustering = set(rules.get("clustering", []))
    records = []
    for column in table.stats_columns:
        if not _logged_kind(column):
            continue
        count = int(kept.get(column.name, 0))
        why = None
        if count < files:
            base = column.type.split("<")[0].split("(")[0]
            if named is not None and column.name not in named and column.path[0] not in named:
                why = "not in delta.dataSkippingStatsColumns"
            elif named is None and indexed >= 0 and column.name in order and order.index(column.name) >= indexed:
                why = f"past the first {indexed} columns (delta.dataSkippingNumIndexedCols)"
            elif base in _NO_BOUNDS:
                why = f"Delta keeps no bounds of a {base}"
            else:
                why = f"the writer kept none in {files - count} of {files} file(s)"
        records.append((table.spelled(column.name), column.type, count == files and files > 0, count, files, why,
                        column.name in clustering, accurate.get(column.name)))
    return pd.DataFrame.from_records(records, columns=DELTA_AUDIT_COLUMNS)


DELETION_VECTOR_COLUMNS = ["partition", "files", "files_with_vectors", "rows_in_files", "rows_deleted", "live_rows"]


def deletion_vectors_frame(metastore, table: Table) -> pd.DataFrame:
    """Per partition of a Delta table (None: the table), its data files and those with deletion vectors, the rows
    the files hold and the rows their vectors delete, from the files the lab follows (no read of the log)."""
    owners = ({p.partName: p.location for p in metastore.catalog.get_partitions(table.dbName, table.tableName)}
              if table.is_partitioned else {None: table.location})
    records = []
    for owner, files in sorted(metastore.snapshot_files.owner_files(table, owners).items(), key=lambda item: item[0] or ""):
        data = [f for f in files if f.content == ROWS]
        vectors = [f for f in files if f.content == DELETION_VECTOR]
        rows = sum(f.record_count or 0 for f in data)
        deleted = sum(f.record_count or 0 for f in vectors)
        records.append((owner, len(data), len(vectors), rows, deleted, rows - deleted))
    return pd.DataFrame.from_records(records, columns=DELETION_VECTOR_COLUMNS)


def _logged_kind(column: ColumnPath) -> bool:
    """A column or struct leaf Delta's log can keep figures of (not a struct as a whole, not an element)."""
    return not column.is_element and not column.type.startswith("struct")


class DeltaSource(TableSource):
    def __init__(self, path: str, since: int | None = None):
        self.path = local_path(path) if is_local(path) else normalized(path)
        self.since = since  # the version the lab followed last: files added after it are placed by version

    def _table(self, version: int | None = None) -> DeltaTable:
        """The log at `version` (the newest without), read with the credentials the lab lists with."""
        return DeltaTable(self.path, version=version, storage_options=delta_storage_options(self.path))

    def current(self) -> FormatSnapshot:
        try:
            table = self._table()
        except TableNotFoundError as error:
            raise NoSuchObjectException(f"no Delta table at {self.path} (no _delta_log there)") from error
        except (DeltaError, OSError) as error:  # an object store's: a missing bucket, denied credentials
            raise InvalidArgument(f"cannot read the Delta table at {self.path}: {one_line(str(error))}") from None
        protocol = table.protocol()
        unread = sorted(set(protocol.reader_features or []) - READABLE_FEATURES)
        if unread:
            raise InvalidArgument(f"the Delta table at {self.path} needs reader feature {unread[0]}, which the lab "
                                  "does not read")
        mapping = table.metadata().configuration.get("delta.columnMapping.mode", "none")
        if mapping not in ("none", "name", "id"):
            raise InvalidArgument(f"the Delta table at {self.path} has column mapping mode {mapping!r}, which the "
                                  "Delta protocol does not define")
        mapped = mapping != "none"
        if mapped and not (protocol.min_reader_version == 2 or "columnMapping" in (protocol.reader_features or [])):
            # readers that follow the protocol read such a table by display names, others by physical ones
            raise InvalidArgument(f"the Delta table at {self.path} sets column mapping ({mapping}) but its protocol "
                                  "does not list the columnMapping reader feature, so readers disagree on its columns; "
                                  "its writer broke the protocol")
        key_names = [k.lower() for k in table.metadata().partition_columns]
        spelled = by_lower_name([f.name for f in table.schema().fields], f"the Delta table at {self.path}")
        fields = {f.name.lower(): f for f in table.schema().fields}
        keys = [FieldSchema(k, hive_type(fields[k].type, f"partition column {k} of {self.path}")) for k in key_names]
        cols, skipped, log_names = [], {}, {}
        field_ids: FileKeys = {}
        for name, f in fields.items():
            if name in key_names:
                continue
            type_name = nested_hive_type(f.type)
            if type_name is None:
                skipped[name] = f"of Delta type {f.type}, which the lab does not read yet"
                continue
            cols.append(FieldSchema(name, type_name))
            log_names.update(_log_names(f, mapped))
            if mapping == "id":
                field_ids.update(_field_ids(f))
            elif mapping == "name":  # by physical names, as the protocol says: files written before the table took
                field_ids.update(_physical_paths(f))  # column mapping have no field ids
        leaves = Table("", "", cols).stats_columns
        actions = pa.table(table.get_add_actions(flatten=True)).to_pylist()
        added_in = self._versions_adding({a["path"] for a in actions}, table.version())
        originals = {k.lower(): k for k in table.metadata().partition_columns}
        replayed = "deletionVectors" in (protocol.reader_features or []) or \
            bool({"clustering", "domainMetadata"} & set(protocol.writer_features or []))
        state = log_state(self.path, table.version()) if replayed else LogState({}, {})
        vectors = state.vectors
        files = []
        for a in actions:
            values = [partition_text(a.get(f"partition.{originals[k]}")) for k in key_names]
            vector = vectors.get(a["path"])
            figures = _figures(a, leaves, log_names)
            if vector is not None:  # the log's figures count the deleted rows: bounds at most, NULL counts none
                figures = {name: replace(figure, nulls=None, exact=False) for name, figure in figures.items()}
            data_file = DataFile(join(self.path, unquote(a["path"])), a["size_bytes"], 0.0, added_in.get(a["path"]),
                                 a.get("num_records"), figures=figures)
            files.append(FormatFile(data_file, values))
            if vector is not None:
                if data_file.record_count is None:
                    raise InvalidArgument(f"{data_file.path} of the Delta table at {self.path} has a deletion vector "
                                          "but no numRecords in the log, which the protocol requires of it")
                files.append(FormatFile(replace(vector_file(data_file.path, vector),
                                                added_in=state.vector_versions.get(a["path"])), values))
        # which columns the log keeps figures for (delta-rs: the first 32), in how many files
        log_statistics = {c.name: sum(1 for a in actions if a.get(f"min.{log_names.get(c.name)}") is not None
                                      or a.get(f"null_count.{log_names.get(c.name)}") is not None) for c in leaves}
        configuration = table.metadata().configuration
        by_log_name = {log_name: name for name, log_name in log_names.items()}
        stats_columns = configuration.get("delta.dataSkippingStatsColumns")
        rules = {"indexed": int(configuration.get("delta.dataSkippingNumIndexedCols", DEFAULT_INDEXED_COLUMNS)),
                 "stats_columns": None if stats_columns is None else
                 [c.strip().strip("`").lower() for c in stats_columns.split(",") if c.strip()],
                 "order": [c.name for c in leaves if _logged_kind(c)],
                 "clustering": [by_log_name.get(c, c) for c in state.clustering_columns()]}
        return FormatSnapshot("delta", self.path, self.path, table.version(), cols, keys, files, field_ids=field_ids,
                              log_statistics=log_statistics, spelled=list(spelled.values()), skipped=skipped,
                              log_rules=rules, operations=state.operations)


    def _versions_adding(self, paths: set[str], current: int) -> dict[str, int]:
        """The version that added each of `paths` not in version `since` (files in it keep what the lab
        recorded); every one of them is the current version's when `since` is unknown or too far back."""
        if self.since is None or self.since >= current:
            return {}
        if current - self.since > _VERSIONS_READ:
            return {}
        seen = set(pa.table(self._table(self.since).get_add_actions()).column("path").to_pylist())
        out: dict[str, int] = {}
        for version in range(self.since + 1, current):
            at = pa.table(self._table(version).get_add_actions()).column("path").to_pylist()
            for path in set(at) & paths - seen - out.keys():
                out[path] = version
        return out


def _figures(action: dict, leaves: list[ColumnPath], log_names: dict[str, str]) -> dict[str, ColumnFigures]:
    """An add action's figures per lab column and struct leaf (the log names them as the table's schema spells
    them, a leaf by its dotted path)."""
    out = {}
    for column in leaves:
        name = log_names.get(column.name)
        if name is None:
            continue
        figure = column_figures(column.type, action.get("num_records"), action.get(f"null_count.{name}"),
                                action.get(f"min.{name}"), action.get(f"max.{name}"),
                                strings_whole_below=DELTA_STRINGS_WHOLE_BELOW, timestamps_in_ms=True)
        if figure is not None:
            out[column.name] = figure
    return out


def nested_hive_type(delta_type) -> str | None:
    """The Hive type of a Delta column, structs, arrays and maps included; None where some part of it is of a
    type the lab does not read, or a struct field's name could not be spelled in a type's text."""
    kind = type(delta_type).__name__
    if kind == "StructType":
        fields = []
        for field in delta_type.fields:
            inner = nested_hive_type(field.type)
            if inner is None or any(c in field.name for c in ":,<>`"):
                return None
            fields.append(f"{field.name.lower()}:{inner}")
        return "struct<" + ",".join(fields) + ">"
    if kind == "ArrayType":
        element = nested_hive_type(delta_type.element_type)
        return None if element is None else f"array<{element}>"
    if kind == "MapType":
        key, value = nested_hive_type(delta_type.key_type), nested_hive_type(delta_type.value_type)
        return None if key is None or value is None else f"map<{key},{value}>"
    try:
        return hive_type(delta_type, "")
    except InvalidArgument:
        return None


def _log_names(field, mapped: bool, path: tuple[str, ...] = (), lab_path: tuple[str, ...] = ()) -> dict[str, str]:
    """Each column and struct leaf (the lab's name) with the dotted name the log keeps its figures under (its
    physical names under column mapping); a leaf under a field whose name holds a dot has none (the log's name
    would be ambiguous)."""
    here = path + (_physical_name(field) if mapped else field.name,)
    lab_here = lab_path + (field.name,)
    if type(field.type).__name__ == "StructType":
        out: dict[str, str] = {}
        for inner in field.type.fields:
            out.update(_log_names(inner, mapped, here, lab_here))
        return out
    if len(here) > 1 and any("." in part for part in here + lab_here):
        return {}
    lab_name = lab_here[0].lower() if len(lab_here) == 1 else leaf_name(tuple(p.lower() for p in lab_here))
    return {lab_name: ".".join(here)}


def _physical_name(field) -> str:
    return str((field.metadata or {}).get(PHYSICAL_NAME, field.name))


def _physical_paths(field, lab_path: tuple[str, ...] = (), path: tuple[str, ...] = ()) -> FileKeys:
    """The path of physical names of a column and of each field below it, by the lab's name (`payload.user.id`)."""
    here, physical = lab_path + (field.name.lower(),), path + (_physical_name(field),)
    out: FileKeys = {here[0] if len(here) == 1 else leaf_name(here): physical}
    if type(field.type).__name__ == "StructType":
        for inner in field.type.fields:
            out.update(_physical_paths(inner, here, physical))
    return out


def _field_ids(field, lab_path: tuple[str, ...] = ()) -> dict[str, int]:
    """The column-mapping id of a column and of each field below it, by the lab's name (`payload.user.id`)."""
    here = lab_path + (field.name.lower(),)
    out: dict[str, int] = {}
    column_id = (field.metadata or {}).get(COLUMN_ID)
    if column_id is not None:
        out[here[0] if len(here) == 1 else leaf_name(here)] = int(column_id)
    if type(field.type).__name__ == "StructType":
        for inner in field.type.fields:
            out.update(_field_ids(inner, here))
    return out

"""Iceberg tables through pyiceberg: an attached catalog (`lab.attach("ice", {...properties})`, whose tables
are `ice.db.t`) or one metadata file (`register_external(..., format="iceberg")`, read-only), each snapshot
as the lab follows one (`snapshot_source`). Columns are Iceberg's field ids, so a renamed column still reads
its older files; partitions are the spec's fields (identity values, or a transform's: `ts_day=2026-01-02`)."""
from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pyiceberg import types as it
from pyiceberg.avro.file import AvroFile
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.conversions import from_bytes
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError
from pyiceberg.manifest import (
    DATA_FILE_TYPE,
    MANIFEST_ENTRY_SCHEMAS,
    DataFileContent,
    FileFormat,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)
from pyiceberg.manifest import DataFile as IcebergDataFile
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.table import StaticTable
from pyiceberg.table import Table as IcebergTable
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)

from ..column_statistics.model import leaf_name
from ..errors import InvalidArgument
from ..file_columns import by_lower_name
from ..files import EQUALITY_DELETES, POSITION_DELETES, ROWS, ColumnFigures, DataFile, FileKeys
from ..metastore import FieldSchema, NoSuchObjectException
from ..storage.options import iceberg_file_io_properties
from ..tables.deletion_vectors import iceberg_vector
from ..tables.external import catalog_location
from .file_figures import column_figures, iceberg_string_cut
from .snapshot_source import FormatFile, FormatSnapshot, TableSource, partition_text

_PRIMITIVES: dict[type, str] = {
    it.BooleanType: "boolean", it.IntegerType: "int", it.LongType: "bigint", it.FloatType: "float",
    it.DoubleType: "double", it.DateType: "date", it.TimestampType: "timestamp", it.TimestamptzType: "timestamp",
    it.StringType: "string", it.BinaryType: "binary",
    # as their bytes (a uuid's 16, big-endian: what Spark reads of the file and Iceberg's serialization of them)
    it.FixedType: "binary", it.UUIDType: "binary",
}


def hive_type(field_type: it.IcebergType, what: str) -> str:
    """The Hive type name the lab keeps for an Iceberg type, structs included; refuses by name what it does not
    analyze (lists and maps, for now)."""
    if isinstance(field_type, it.DecimalType):
        return f"decimal({field_type.precision},{field_type.scale})"
    if isinstance(field_type, it.StructType):
        fields = []
        for field in field_type.fields:
            if any(c in field.name for c in ":,<>`"):
                raise InvalidArgument(f"{what} has a field named {field.name!r}, which the lab cannot spell")
            fields.append(f"{field.name.lower()}:{hive_type(field.field_type, what)}")
        return "struct<" + ",".join(fields) + ">"
    name = _PRIMITIVES.get(type(field_type))
    if name is None:
        raise InvalidArgument(f"{what} is of Iceberg type {field_type}, which the lab does not analyze yet")
    return name


class IcebergCatalog:
    """An Iceberg catalog attached under a name: pyiceberg's `load_catalog(name, **properties)`."""

    kind = "Iceberg catalog"

    def __init__(self, name: str, properties: dict[str, Any]):
        self.name = name
        self.properties = {str(k): str(v) for k, v in properties.items()}
        self.uri = self.properties.get("uri") or json.dumps(self.properties, sort_keys=True)
        try:
            self.catalog: Catalog = load_catalog(name, **self.properties)
        except Exception as error:  # pyiceberg raises ValueError, NotImplementedError, driver errors...
            raise InvalidArgument(f"cannot open Iceberg catalog {name} ({self.uri}): {error}") from error

    @property
    def options(self) -> str:
        return json.dumps(self.properties, sort_keys=True)

    def get_all_databases(self) -> list[str]:
        return [".".join(ns) for ns in self.catalog.list_namespaces()]

    def get_all_tables(self, db: str) -> list[str]:
        try:
            return sorted(identifier[-1] for identifier in self.catalog.list_tables(db))
        except NoSuchNamespaceError as error:
            raise NoSuchObjectException(f"database {self.name}.{db} does not exist in {self.kind} {self.uri}") from error

    def table(self, db: str, name: str) -> IcebergSource:
        qualified = f"{self.name}.{db}.{name}"

        def load() -> IcebergTable:
            try:
                return self.catalog.load_table((db, name))
            except (NoSuchTableError, NoSuchNamespaceError) as error:
                raise NoSuchObjectException(f"table {qualified} does not exist in {self.kind} {self.uri}") from error
        return IcebergSource(load, qualified, self.options)

    def close(self) -> None:
        """Nothing held open: pyiceberg's SQL catalog opens its engine per call."""


def metadata_file_source(path: str) -> IcebergSource:
    """The Iceberg table of one metadata file, read-only and pinned to the snapshot that file names."""
    def load() -> IcebergTable:
        try:
            return StaticTable.from_metadata(path, properties=iceberg_file_io_properties(path))
        except (OSError, ValueError) as error:
            raise InvalidArgument(f"cannot read Iceberg metadata file {path}: {error}") from error
    return IcebergSource(load, path, "", writable=False)


class IcebergSource(TableSource):
    def __init__(self, load: Callable[[], IcebergTable], source: str, options: str, writable: bool = True):
        self.load = load
        self.source = source
        self.options = options
        self.writable = writable  # a catalog's table; a metadata file is read-only

    def current(self) -> FormatSnapshot:
        table = self.load()
        schema = table.schema()
        snapshot = table.current_snapshot()
        # the manifests read here, not through pyiceberg's `inspect.entries()`, whose Arrow conversion fails on some
        # types (a uuid column: "ArrowNotImplementedError: extension"); each entry with its file's partition spec
        entries = [(manifest.partition_spec_id, entry) for manifest in snapshot.manifests(table.io)
                   for entry in _live_entries(manifest, table.io, table.metadata.format_version)] if snapshot else []
        specs = {spec.spec_id: spec for spec in table.metadata.partition_specs}
        # an unpartitioned delete file applies to every partition's files (Iceberg's rule): it fixes no key
        common = _common_fields(table.spec(), [specs[spec_id] for spec_id in {
            s for s, e in entries if e.data_file.content == DataFileContent.DATA or specs[s].fields}])
        keys, key_sources, transforms, identity_ids = [], set(), [], {}
        for pf in common:
            source = schema.find_field(pf.source_id)
            source_type = hive_type(source.field_type, f"partition source column {source.name} of {self.source}")
            keys.append(FieldSchema(pf.name.lower(), _key_type(pf.transform, source_type, pf.name, self.source)))
            transforms.append((pf.name, pf.transform, source.field_type))
            if isinstance(pf.transform, IdentityTransform) and pf.name.lower() == source.name.lower():
                key_sources.add(source.field_id)  # the column is the partition key, as in Hive
                identity_ids[pf.name.lower()] = source.field_id
        spelled = by_lower_name([f.name for f in schema.fields] + [pf.name for pf in common
                                                                   if pf.source_id not in key_sources],
                                f"the Iceberg table {self.source}")
        cols, named, skipped = [], {}, {}
        field_ids: FileKeys = dict(identity_ids)
        for column in schema.fields:
            if column.field_id in key_sources:
                continue
            try:
                type_name = hive_type(column.field_type, f"column {column.name} of {self.source}")
            except InvalidArgument:  # a nested column: Spark would have to find its fields by id too
                skipped[column.name.lower()] = f"of Iceberg type {column.field_type}, which the lab does not read yet"
                continue
            cols.append(FieldSchema(column.name.lower(), type_name, column.doc))
            for names, field_id, field_type in _fields(column):
                lab_name = names[0].lower() if len(names) == 1 else leaf_name(tuple(n.lower() for n in names))
                field_ids[lab_name] = field_id  # a struct's own id too: Spark finds its fields under it by id
                if not isinstance(field_type, it.StructType):
                    named[names] = _Leaf(FieldSchema(lab_name, hive_type(field_type, lab_name)), field_id,
                                         field_type)
        cut = {names: iceberg_string_cut(table.properties, ".".join(names)) for names in named}
        files = []
        # where each of the lab's keys sits in each spec's partition tuple
        positions = {spec_id: [next(i for i, f in enumerate(spec.fields) if _same_field(f, pf)) for pf in common]
                     for spec_id, spec in specs.items() if all(any(_same_field(f, pf) for f in spec.fields)
                                                                for pf in common)}
        every_partition = None  # the partitions of the data files, for deletes that apply to all of them
        for spec_id, entry in entries:
            data = entry.data_file
            content = _CONTENT[data.content]
            if data.content == DataFileContent.EQUALITY_DELETES:
                _check_equality_columns(data, schema, key_sources, self.source)
            path = catalog_location(data.file_path, f"a data file of {self.source}")
            if data.file_format == FileFormat.PUFFIN:  # a v3 deletion vector: a blob of rows of one data file
                made = replace(_deletion_vector(data, path, self.source), added_in=entry.snapshot_id,
                               sequence_number=entry.sequence_number)
            else:
                made = DataFile(path, data.file_size_in_bytes, 0.0, entry.snapshot_id, data.record_count,
                                content=content, sequence_number=entry.sequence_number,
                                figures=_figures(data, named, cut) if data.content == DataFileContent.DATA else None,
                                equality_ids=tuple(data.equality_ids or ()))
            if data.content != DataFileContent.DATA and common and not specs[spec_id].fields:
                if every_partition is None:
                    every_partition = {tuple(_values(positions, s, e.data_file.partition, transforms))
                                       for s, e in entries if e.data_file.content == DataFileContent.DATA}
                files += [FormatFile(made, list(values)) for values in sorted(every_partition, key=str)]
                continue
            files.append(FormatFile(made, _values(positions, spec_id, data.partition, transforms)))
        return FormatSnapshot("iceberg", self.source, catalog_location(table.metadata.location, self.source),
                              None if snapshot is None else snapshot.snapshot_id, cols, keys, files, field_ids,
                              self.options, metadata=catalog_location(table.metadata_location, self.source)
                              if self.writable else "", spelled=list(spelled.values()), skipped=skipped)


# Iceberg's content codes as the lab's
_CONTENT = {DataFileContent.DATA: ROWS, DataFileContent.POSITION_DELETES: POSITION_DELETES,
            DataFileContent.EQUALITY_DELETES: EQUALITY_DELETES}


def _values(positions: dict[int, list[int]], spec_id: int, partition,
            transforms: list) -> list[str | None]:
    """A file's values of the lab's partition keys, from its partition tuple under its own spec."""
    return [_key_text(partition[position], transform, source_type)
            for position, (_, transform, source_type) in zip(positions[spec_id], transforms, strict=True)]


def _live_entries(manifest: ManifestFile, io, format_version: int) -> list[ManifestEntry]:
    """A manifest's live entries. pyiceberg 0.12 reads every manifest as of format 2, which leaves out a v3
    deletion vector's data file, offset and size: a v3 table's are read here as of format 3, each entry taking its
    snapshot, sequence number and spec from the manifest where it leaves them to it (the spec's inheritance)."""
    if format_version < 3:
        return manifest.fetch_manifest_entry(io, discard_deleted=True)
    with AvroFile[ManifestEntry](io.new_input(manifest.manifest_path), MANIFEST_ENTRY_SCHEMAS[3],
                                 read_types={-1: ManifestEntry, 2: IcebergDataFile},
                                 read_enums={0: ManifestEntryStatus, 101: FileFormat, 134: DataFileContent}) as reader:
        entries = [entry for entry in reader if entry.status != ManifestEntryStatus.DELETED]
    for entry in entries:
        if entry.snapshot_id is None and manifest.added_snapshot_id is not None:
            entry.snapshot_id = manifest.added_snapshot_id
        if entry.sequence_number is None and entry.status == ManifestEntryStatus.ADDED:
            entry.sequence_number = manifest.sequence_number
        entry.data_file.spec_id = manifest.partition_spec_id
    return entries


_V3_FIELD = {f.name: i for i, f in enumerate(DATA_FILE_TYPE[3].fields)}


def _deletion_vector(data, path: str, source: str) -> DataFile:
    """A v3 deletion vector's manifest entry as the lab keeps a vector: the data file it names, the Puffin file,
    the blob's place; refused by name where the entry lacks them."""
    referenced, offset, size = (data[_V3_FIELD[name]] if len(data) > _V3_FIELD[name] else None
                                for name in ("referenced_data_file", "content_offset", "content_size_in_bytes"))
    if data.content != DataFileContent.POSITION_DELETES or referenced is None or offset is None or size is None:
        raise InvalidArgument(f"{source} lists Puffin file {path} as a delete file without the data file, offset and "
                              "size of a deletion vector")
    return iceberg_vector(catalog_location(referenced, f"a data file of {source}"), path, offset, size,
                          data.record_count)


def _check_equality_columns(data, schema, key_sources: set[int], source: str) -> None:
    """An equality delete's columns must be top-level columns the lab reads (a struct's field, a column of a type
    the lab leaves out: refused by name, rather than rows counted that a reader does not see)."""
    top = {f.field_id: f for f in schema.fields}
    for field_id in data.equality_ids or ():
        column = top.get(field_id)
        if column is None:
            raise InvalidArgument(f"{source} has an equality delete file ({data.file_path}) on field id {field_id}, "
                                  "which is not a top-level column: the lab does not apply it yet")
        if field_id not in key_sources:
            hive_type(column.field_type, f"column {column.name} of {source}, which an equality delete matches on")


def _common_fields(current: PartitionSpec, live: list[PartitionSpec]) -> list[PartitionField]:
    """The current spec's partition fields that every spec of a live file has too (the same source column and
    transform): the lab's partition keys. After a spec changed, files written under an older spec keep its
    partition tuple, which may lack a newer field's value: a key the lab could not give them is left out, the
    files grouped by the keys all of them have (none: the table is analyzed as one partition)."""
    return [pf for pf in current.fields if all(any(_same_field(f, pf) for f in spec.fields) for spec in live)]


def _same_field(one: PartitionField, other: PartitionField) -> bool:
    return one.source_id == other.source_id and one.transform == other.transform


def _fields(column: it.NestedField, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], int, it.IcebergType]]:
    """The column and, inside a struct, each field under it: (names from the column down, field id, type)."""
    here = path + (column.name,)
    out = [(here, column.field_id, column.field_type)]
    if isinstance(column.field_type, it.StructType):
        for field in column.field_type.fields:
            out += _fields(field, here)
    return out


@dataclass(frozen=True)
class _Leaf:
    """A column or struct leaf the lab reads: its lab column, field id and Iceberg type."""

    column: FieldSchema
    field_id: int
    field_type: it.IcebergType


def _figures(data, named: dict[tuple[str, ...], _Leaf], cut: dict[tuple[str, ...], int | None]
             ) -> dict[str, ColumnFigures]:
    """A data file's figures per lab column and struct leaf, from its manifest entry's metrics (by field id)."""
    nulls, lows, highs = data.null_value_counts or {}, data.lower_bounds or {}, data.upper_bounds or {}
    out = {}
    for name, leaf in named.items():
        low, high = lows.get(leaf.field_id), highs.get(leaf.field_id)
        figure = column_figures(leaf.column.type, data.record_count, nulls.get(leaf.field_id),
                                None if low is None else readable_value(leaf.field_type, low),
                                None if high is None else readable_value(leaf.field_type, high),
                                strings_whole_below=cut[name])
        if figure is not None:
            out[leaf.column.name] = figure
    return out


_EPOCH = dt.datetime(1970, 1, 1)


def readable_value(field_type: it.IcebergType, raw) -> Any:
    """A bound (or a partition value: `raw` already a number) as Python reads the type: a date, a datetime, a
    Decimal, a string, bytes or a number."""
    value = from_bytes(field_type, raw) if isinstance(raw, bytes) and isinstance(field_type, it.PrimitiveType) \
        and not isinstance(field_type, it.BinaryType) else raw
    if isinstance(field_type, it.TimestampType) and isinstance(value, int):
        return _EPOCH + dt.timedelta(microseconds=value)
    if isinstance(field_type, it.TimestamptzType) and isinstance(value, int):
        return (_EPOCH + dt.timedelta(microseconds=value)).replace(tzinfo=dt.UTC)
    if isinstance(field_type, it.DateType) and isinstance(value, int):
        return _EPOCH.date() + dt.timedelta(days=value)
    return value


def _key_type(transform, source_type: str, name: str, source: str) -> str:
    if isinstance(transform, (IdentityTransform, TruncateTransform)):
        return source_type
    if isinstance(transform, DayTransform):
        return "date"
    if isinstance(transform, BucketTransform):
        return "int"
    if isinstance(transform, (YearTransform, MonthTransform, HourTransform)):
        return "string"  # Iceberg's own text of the period: 2026, 2026-01, 2026-01-02-13
    raise InvalidArgument(f"partition field {name} of {source} uses transform {transform}, which the lab "
                                "does not read yet")


def _key_text(value, transform, source_type: it.IcebergType) -> str | None:
    """A partition value (as a manifest keeps it: days, microseconds, a period's ordinal) as the lab's partition
    name spells it; a period (year, month, hour) as Iceberg's own text of it, a day as its date."""
    if isinstance(transform, (YearTransform, MonthTransform, HourTransform)) and isinstance(value, int):
        return transform.to_human_string(source_type, value)
    if isinstance(transform, DayTransform) and isinstance(value, int):
        return partition_text(_EPOCH.date() + dt.timedelta(days=value))
    if isinstance(transform, IdentityTransform):
        return partition_text(readable_value(source_type, value))
    return partition_text(value)

"""The lab's NDV published where Iceberg readers look: a Puffin file for the current snapshot with one
`apache-datasketches-theta-v1` blob per column (Iceberg's single-value serialization, default seed, the `ndv`
property), registered on that snapshot. Each partition's theta sketch is kept in the metastore with the
files it came from, so after one partition is overwritten only that partition is scanned and the table's
blob is the union of the partitions' sketches (Trino and Iceberg's own procedure rescan the whole table).

The serialization is fed through Spark's public functions (`theta_inputs`): DataSketches hashes a long as its
8 little-endian bytes, which is Iceberg's serialization of a bigint, a timestamp's microseconds and (through
its bits) a double; int and date values become their 4 little-endian bytes arithmetically; strings are their
UTF-8 bytes, booleans one byte."""
from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from importlib.metadata import version

import pandas as pd
from datasketches import compact_theta_sketch, theta_union
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.table import Table as IcebergTable
from pyiceberg.table.puffin import PuffinFile
from pyiceberg.table.statistics import StatisticsFile
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from ..coltypes import parse_type, struct_fields
from ..errors import InvalidArgument, QueryError, StorageError, one_line
from ..metastore import Metastore, Table
from ..metastore.repositories.snapshot_files import SNAPSHOT_PARAM, field_ids_of
from ..storage import (
    is_local,
    join,
    local_file_path,
    name_of,
    normalized,
    parent,
    prefixes_for,
    same_location,
    spark_file_uri,
    storage_for,
)
from ..tables.external import catalog_location
from ..tables.kinds import read_snapshot, snapshot_files
from ..tables.snapshot import FILE_COLUMN
from .iceberg_partition_stats import write_partition_statistics
from .puffin import THETA_BLOB, Blob, write_puffin

log = logging.getLogger("colstats_lab.puffin")

_FOUR_BYTES = ("int", "smallint", "tinyint")
_NEGATIVE_ZERO = b"\x00" * 7 + b"\x80"  # -0.0 as Iceberg serializes a double: its IEEE bits, little-endian


def theta_inputs(name: str, type_name: str, path: tuple[str, ...] = ()) -> list[Column] | None:
    """Columns whose theta sketches, unioned, are the sketch of column `name` (a struct's leaf at `path`, its
    column and fields) over Iceberg's single-value serialization (NULL is no value); None for a type without one
    here (a decimal of more than 18 digits). A decimal's value is its unscaled long in the fewest big-endian
    bytes. DataSketches hashes a long as its 8 little-endian bytes, so a bigint, a timestamp's microseconds and a
    double (whose bits it hashes, with -0.0 folded into 0.0: -0.0 gets a sketch of its own) go in as they are;
    4-byte values are turned into their little-endian bytes arithmetically (an order of magnitude faster than by
    text)."""
    base = parse_type(type_name).base
    reference = ".".join("`" + part.replace("`", "``") + "`" for part in (path if len(path) > 1 else (name,)))
    column = F.col(reference)
    if base in ("string", "varchar", "char"):
        return [column.cast("string")]
    if base == "binary":
        return [column]
    if base == "boolean":
        return [F.when(column, F.lit(b"\x01")).when(~column, F.lit(b"\x00"))]
    if base == "bigint":
        return [column]
    if base == "timestamp":
        return [F.unix_micros(column)]
    if base == "date":
        return [_little_endian(F.datediff(column, F.lit("1970-01-01").cast("date")), 4)]
    if base in _FOUR_BYTES:
        return [_little_endian(column, 4)]
    if base == "double":
        # a zero's sign shows in its text (Spark's atan2 and division fold -0.0 into 0.0); text of zeros only
        negative_zero = F.when(column == 0, column.cast("string") == "-0.0").otherwise(F.lit(False))
        return [F.when(~negative_zero, column), F.when(negative_zero, F.lit(_NEGATIVE_ZERO))]
    if base == "decimal":
        precision, scale = parse_type(type_name).precision_scale
        if precision > _LONG_DIGITS:
            return None  # its unscaled value may not fit a long; such columns get no blob yet
        return [_minimal_big_endian((column * F.lit(10 ** scale)).cast("decimal(38,0)").cast("bigint"))]
    if base == "float":  # rare: its IEEE bits through Java (a reflective call a value)
        bits = F.expr(f"reflect('java.lang.Float', 'floatToRawIntBits', {reference})")
        return [_little_endian(F.when(column.isNotNull(), bits).cast("bigint"), 4)]
    return None


_LONG_DIGITS = 18  # a decimal of up to 18 digits has an unscaled value a long holds


def _minimal_big_endian(number: Column) -> Column:
    """A long's two's-complement bytes, most significant first, in the fewest bytes that hold it (Iceberg's
    serialization of a decimal's unscaled value): the low 2n digits of its 16-digit hex."""
    digits = F.lpad(F.hex(number), 16, "0")  # a negative long's hex is already its 16 two's-complement digits
    chosen = F.unhex(F.substring(digits, 1, 16))
    for size in range(7, 0, -1):
        limit = 2 ** (8 * size - 1)
        chosen = F.when((number >= -limit) & (number < limit), F.unhex(F.substring(digits, 17 - 2 * size, 2 * size))
                        ).otherwise(chosen)
    return F.when(number.isNotNull(), chosen)


def _little_endian(value: Column, size: int) -> Column:
    """The low `size` bytes of an integer, least significant first: the bytes swapped into a number whose
    big-endian hex is the little-endian order, then read back as bytes."""
    number = value.cast("bigint")
    swapped = F.shiftleft(number.bitwiseAND(255), 8 * (size - 1))
    for i in range(1, size):
        swapped = swapped.bitwiseOR(F.shiftleft(F.shiftright(number, 8 * i).bitwiseAND(255), 8 * (size - 1 - i)))
    return F.unhex(F.lpad(F.hex(swapped), 2 * size, "0"))


@dataclass
class PuffinOutcome:
    """What a publish to Iceberg did."""

    table: str
    snapshot_id: int
    statistics_path: str = ""
    ndv: dict[str, int] = field(default_factory=dict)   # column -> the NDV its blob says
    scanned: list = field(default_factory=list)         # partitions whose sketches were computed now
    reused: list = field(default_factory=list)          # partitions whose kept sketches still held
    analyzed_first: list = field(default_factory=list)  # partitions ANALYZE refreshed first
    skipped_columns: list = field(default_factory=list)
    unchanged: bool = False  # the registered statistics file already said this: nothing written
    seconds: float = 0.0
    partition_statistics_path: str = ""  # the snapshot's partition statistics file, written now or found there

    @property
    def message(self) -> str:
        if self.unchanged:
            return (f"Nothing to publish: {self.statistics_path} already holds the NDV of {len(self.ndv)} column(s) "
                    f"of {self.table} for snapshot {self.snapshot_id}.")
        where = (f"{len(self.scanned):,} partition(s) scanned for sketches, {len(self.reused)} reused"
                 if self.scanned or self.reused else "no rows")
        text = (f"Published NDV of {len(self.ndv)} column(s) of {self.table} for snapshot {self.snapshot_id} "
                f"to {self.statistics_path} ({where}) in {self.seconds:.1f} s.")
        if self.partition_statistics_path:
            text += f" Partition statistics: {self.partition_statistics_path}."
        if self.analyzed_first:
            text += f" Analyzed first, as their files changed: {', '.join(str(p) for p in self.analyzed_first)}."
        if self.skipped_columns:
            text += (f" No blob for: {', '.join(self.skipped_columns)} (blobs are built for scalar columns other "
                     f"than decimals of more than {_LONG_DIGITS} digits).")
        return text


COMMIT_ATTEMPTS = 3  # a statistics commit another writer's commit beat, tried again on the table as it is now


def publish_puffin(spark: SparkSession, metastore: Metastore, table: Table, iceberg: IcebergTable,
                   source: str) -> PuffinOutcome:
    """Writes and registers the Puffin file of the snapshot `table` follows (the caller followed it and
    analyzed what was stale); scans only the partitions whose files changed since their sketches were kept."""
    started = time.perf_counter()
    followed = table.parameters.get(SNAPSHOT_PARAM) or ""
    snapshot = iceberg.snapshot_by_id(int(followed)) if followed.lstrip("-").isdigit() else None
    if snapshot is None:
        raise InvalidArgument(f"{source} has no snapshot{' ' + followed if followed else ' yet'}: "
                                    "there are no rows to publish statistics of")
    snapshot_id = snapshot.snapshot_id
    outcome = PuffinOutcome(source, snapshot_id)
    field_ids = field_ids_of(table)
    # each scalar column and struct leaf by its field id (the spec's blobs name any field), and the keys
    paths = {c.name: c.path for c in table.stats_columns}
    columns = [(c.name, c.type) for c in table.cols + table.partitionKeys if c.name in field_ids
               and not struct_fields(c.type)] + [(c.name, c.type) for c in table.stats_columns
                                                 if c.is_leaf and c.name in field_ids]
    sketched = [(name, type_name) for name, type_name in columns
                if theta_inputs(name, type_name, paths.get(name, ())) is not None]
    outcome.skipped_columns = [name for name, type_name in columns if (name, type_name) not in sketched]
    owners: list[str | None] = ([p.partName for p in metastore.catalog.get_partitions(table.dbName, table.tableName)]
                                if table.is_partitioned else [None])
    digests = metastore.snapshot_files.files_digest(table, owners)
    kept = metastore.snapshot_files.theta_sketches(table)
    stale = [owner for owner in owners
             if any(kept.get((owner, name), ("",))[0] != digests[owner] for name, _ in sketched)]
    outcome.scanned, outcome.reused = stale, [o for o in owners if o not in stale]
    if stale:
        fresh = _sketch_partitions(spark, metastore, table, stale, sketched)
        metastore.snapshot_files.store_theta_sketches(table, {(owner, name): (digests[owner], sketch)
                                               for (owner, name), sketch in fresh.items()})
        kept.update({key: (digests[key[0]], sketch) for key, sketch in fresh.items()})
    blobs = []
    for name, _ in sketched:
        union = theta_union()
        for owner in owners:
            union.update(compact_theta_sketch.deserialize(kept[(owner, name)][1]))
        result = union.get_result()
        outcome.ndv[name] = round(result.get_estimate())
        blobs.append(Blob(THETA_BLOB, [field_ids[name]], snapshot_id, snapshot.sequence_number or 0,
                          result.serialize(), {"ndv": str(outcome.ndv[name])}))
    registered = next((f for f in iceberg.metadata.statistics if f.snapshot_id == snapshot_id), None)
    metadata_dir = join(catalog_location(iceberg.metadata.location, source), "metadata")
    if registered is not None and _same_blobs(registered, blobs):
        outcome.statistics_path, outcome.unchanged = registered.statistics_path, True
        outcome.partition_statistics_path = _partition_statistics(iceberg, snapshot_id, metadata_dir)
        outcome.seconds = time.perf_counter() - started
        return outcome
    path = join(metadata_dir, f"{snapshot_id}-colstats-{uuid.uuid4()}.stats")
    written = write_puffin(path, blobs, {"created-by": f"colstats_lab {version('colstats_lab')}"})
    statistics = StatisticsFile.model_validate({
        "snapshot-id": snapshot_id, "statistics-path": "file://" + written.path if is_local(path) else written.path,
        "file-size-in-bytes": written.file_size, "file-footer-size-in-bytes": written.footer_size,
        "blob-metadata": [{"type": b.type, "snapshot-id": b.snapshot_id, "sequence-number": b.sequence_number,
                           "fields": b.fields, "properties": b.properties} for b in blobs]})
    for attempt in range(1, COMMIT_ATTEMPTS + 1):
        try:
            with iceberg.update_statistics() as update:
                update.set_statistics(statistics)
            break
        except CommitFailedException as error:
            # another writer committed since the table was loaded: statistics name their snapshot, so the same
            # update applies to the table as it is now (the file another publisher registered meanwhile for this
            # snapshot is replaced, as the spec keeps one a snapshot; only the lab's own is ever removed)
            if attempt == COMMIT_ATTEMPTS:
                storage_for(written.path).remove(written.path)
                raise QueryError(f"cannot publish statistics of {source}: its catalog refused {COMMIT_ATTEMPTS} "
                                 f"commits in a row ({one_line(str(error))}); publish again") from None
            iceberg = iceberg.refresh()
            registered = next((f for f in iceberg.metadata.statistics if f.snapshot_id == snapshot_id), None)
    if registered is not None and name_of(registered.statistics_path).startswith(f"{snapshot_id}-colstats-"):
        # the lab's own file it replaces: nothing references it any more
        replaced = catalog_location(registered.statistics_path, "a statistics file")
        if same_location(parent(replaced), metadata_dir):
            storage_for(replaced).remove(replaced)
    outcome.statistics_path = statistics.statistics_path
    outcome.partition_statistics_path = _partition_statistics(iceberg, snapshot_id, metadata_dir)
    outcome.seconds = time.perf_counter() - started
    log.info("%s", outcome.message)
    return outcome


def _partition_statistics(iceberg: IcebergTable, snapshot_id: int, metadata_dir: str) -> str:
    """The snapshot's partition statistics file: the one registered there (a snapshot's partitions never change,
    so any writer's holds), else one written and registered now; none ("") for a table that was never partitioned,
    whose one partition the snapshot's summary sizes already."""
    if not any(spec.fields for spec in iceberg.metadata.partition_specs):
        return ""
    found = next((f for f in iceberg.metadata.partition_statistics if f.snapshot_id == snapshot_id), None)
    if found is not None:
        return found.statistics_path
    # beside the table's metadata, else beside its data files, where a catalog refusing Parquet under metadata/
    # accepts it (Iceberg finds the file by its registration, not by folder)
    folders = [metadata_dir, join(parent(metadata_dir), "data")]
    return write_partition_statistics(iceberg, snapshot_id, folders).statistics_path


def _same_blobs(registered: StatisticsFile, blobs: list[Blob]) -> bool:
    """Whether the statistics file registered on the snapshot already says what `blobs` say (each column's
    NDV): publishing again would only replace it with its equal."""
    said = {(tuple(b.fields), b.type, (b.properties or {}).get("ndv")) for b in registered.blob_metadata}
    return said == {(tuple(b.fields), b.type, b.properties.get("ndv")) for b in blobs}


def _sketch_partitions(spark: SparkSession, metastore: Metastore, table: Table, owners: list,
                       columns: list[tuple[str, str]]) -> dict[tuple[str | None, str], bytes]:
    """One Spark job: each file's theta sketch of every column, unioned per partition here (a file belongs
    to one partition; grouping by file keeps the job free of the partition keys' types)."""
    partitions = (metastore.catalog.get_partitions(table.dbName, table.tableName, [o for o in owners if o is not None])
                  if table.is_partitioned else None)
    parts = snapshot_files(metastore, table, metastore.txns.get_valid_write_ids(table.dbName, table.tableName), partitions)
    prefixes = prefixes_for(spark, [f.path for p in parts for f in p.files])
    owner_of = {spark_file_uri(normalized(f.path), prefixes): p.part_name for p in parts for f in p.files}
    owner_by_path = {normalized(f.path): p.part_name for p in parts for f in p.files}  # a path Spark spells otherwise
    frame = read_snapshot(spark, table, parts, with_file=True, reuse=True)
    paths = {c.name: c.path for c in table.stats_columns}
    inputs = [(name, i, column) for name, type_name in columns
              for i, column in enumerate(theta_inputs(name, type_name, paths.get(name, ())) or [])]
    aliases = [f"c{n}" for n in range(len(inputs))]
    serialized = frame.select(F.col(FILE_COLUMN), *[column.alias(alias) for (_, _, column), alias
                                                   in zip(inputs, aliases, strict=True)])
    rows = serialized.groupBy(FILE_COLUMN).agg(*[F.theta_sketch_agg(alias).alias(alias) for alias in aliases]).collect()
    unions = {(owner, name): theta_union() for owner in owners for name, _ in columns}
    for row in rows:
        spelled = row[FILE_COLUMN]
        owner = owner_of[spelled] if spelled in owner_of else owner_by_path[normalized(local_file_path(spelled))]
        for (name, _, _), alias in zip(inputs, aliases, strict=True):
            unions[(owner, name)].update(compact_theta_sketch.deserialize(bytes(row[alias])))
    return {key: union.get_result().serialize() for key, union in unions.items()}


PUFFIN_COLUMNS = ["column", "lab_ndv", "lab_accurate", "puffin_ndv", "written_by", "snapshot_id", "current",
                  "statistics_path"]


def puffin_frame(metastore: Metastore, table: Table, iceberg: IcebergTable) -> pd.DataFrame:
    """The NDV every Puffin file registered on the table says, beside the lab's own table-level NDV (and
    whether that is accurate now): one row per theta blob, with who wrote it and whether it describes the
    current snapshot. Other engines' figures are shown, never taken as the lab's."""
    field_ids = field_ids_of(table)
    names = {field_id: name for name, field_id in field_ids.items()}
    columns = [c for c in field_ids if c in table.stats_column_names or c in table.partition_key_names]
    stored = metastore.column_stats.get_table_statistics(table.dbName, table.tableName, [c for c in columns
                                                                            if c in table.stats_column_names])
    lab_ndv = {o.colName: o.statsData.value.numDVs for o in (stored.statsObj if stored else [])
               if getattr(o.statsData.value, "numDVs", None) is not None}
    summary = metastore.accuracy.column_compliance(table.dbName, table.tableName, [[c] for c in lab_ndv]) if lab_ndv else []
    accurate = {c: s.accurate for c, s in zip(lab_ndv, summary, strict=True)}
    current = int(table.parameters.get(SNAPSHOT_PARAM) or 0)
    records = []
    for statistics in iceberg.metadata.statistics:
        path = catalog_location(statistics.statistics_path, f"a statistics file of {table.qualified_name}")
        try:
            puffin = PuffinFile(storage_for(path).read_bytes(path))
        except (OSError, ValueError, StorageError) as error:
            log.warning("cannot read Puffin file %s: %s", path, error)
            continue
        for blob in puffin.footer.blobs:
            if blob.type != THETA_BLOB or len(blob.fields) != 1:
                continue
            column = names.get(blob.fields[0], f"field {blob.fields[0]}")
            ndv = blob.properties.get("ndv")
            records.append({"column": column, "lab_ndv": lab_ndv.get(column), "lab_accurate": accurate.get(column),
                            "puffin_ndv": int(ndv) if ndv is not None and ndv.isdigit() else None,
                            "written_by": puffin.footer.properties.get("created-by", ""),
                            "snapshot_id": blob.snapshot_id, "current": blob.snapshot_id == current,
                            "statistics_path": statistics.statistics_path})
    return pd.DataFrame(records, columns=PUFFIN_COLUMNS, dtype=object)

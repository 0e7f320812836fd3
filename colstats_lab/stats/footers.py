"""Statistics a Parquet footer holds per row group: row counts, and per column min, max and null
count. Read with pyarrow, no data pages touched (Drill turns the same aggregate into a direct scan
of metadata).

A footer figure is used only where it equals what Spark's own min/max/count would say:
integers, strings, booleans, decimals, dates and TIMESTAMP_MICROS timestamps. Floating-point
columns are left to the scan (a footer's min/max leave NaN out, Spark orders NaN above every
number), as are INT96 timestamps (no footer min/max) and a chunk whose writer omitted min/max.

Some writers truncate string bounds: Rust's parquet crate (delta-rs, polars) keeps 64 bytes and rounds
the maximum up. Such a bound still bounds the values, so pruning uses it, but it is no minimum or maximum:
from writers not known to keep strings whole (parquet-mr, which Spark, Hive and Iceberg's Java writers use,
and Arrow's C++ writer, which drops a bound rather than cut it), a string bound of `WHOLE_STRING_BELOW`
characters or more is taken as a bound only.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import pyarrow as pa

from ..caches import BoundedCache
from ..coltypes import parse_type
from ..column_statistics.model import Date, Timestamp
from ..errors import ValueOutOfRange
from ..file_columns import by_lower_name, is_nanosecond_timestamp, micros_of_nanos
from ..files import ARROW_FIELD_ID, DataFile, FileKeys, FileState
from ..metastore.rows.metadata_units import ColumnMetadata, merge_metadata_column
from ..storage import FooterUnavailable, metadata_of_state, parquet_footer, prefetch_footers

WHOLE_STRING_WRITERS = ("parquet-mr", "parquet-cpp")
WHOLE_STRING_BELOW = 32  # Delta's own prefix length; Rust's parquet crate cuts at 64
_STRING_BASES = {"string", "varchar", "char"}
_SERVED_BASES = {"tinyint", "smallint", "int", "bigint", "string", "varchar", "char", "boolean", "decimal",
                 "date", "timestamp"}


@dataclass
class FooterColumn:
    low: object
    high: object
    nulls: int
    exact: bool = True  # low and high are the minimum and maximum; False: bounds only, for pruning


@dataclass
class RowGroupFooter:
    index: int
    first_row: int
    rows: int
    bytes: int  # compressed bytes of the row group's column chunks
    columns: dict[str, FooterColumn] = field(default_factory=dict)  # only the columns the footer serves


@dataclass
class FileFooter:
    path: str
    rows: int
    row_groups: list[RowGroupFooter]
    from_metadata: frozenset[str] = frozenset()  # columns whose figures the table format's metadata gave
    whole_file: bool = False  # one row group stands for the file: the format's figures, no footer's groups
    read: bool = True  # False: its storage reads no footer (listed through Spark): it serves and bounds nothing

    def served(self, column: str) -> bool:
        """True when every row group's footer has this column's figures, its minimum and maximum exact."""
        return self.read and all(column in rg.columns and rg.columns[column].exact for rg in self.row_groups)

    def bounded(self, column: str) -> bool:
        """True when every row group's footer bounds this column's values (what pruning needs)."""
        return self.read and all(column in rg.columns for rg in self.row_groups)


def footer_column(name: str, type_name: str, row_groups: list[RowGroupFooter]) -> ColumnMetadata:
    """One column's footer figures over several row groups (each must serve it), merged."""
    return merge_metadata_column([(rg.rows, ColumnMetadata(name, type_name, rg.columns[name].low,
                                                           rg.columns[name].high, rg.columns[name].nulls))
                                  for rg in row_groups], name, type_name, False)


def footer_servable(type_name: str) -> bool:
    """Whether footers can give this column type's min/max as Spark would compute them."""
    return parse_type(type_name).base in _SERVED_BASES


def read_footer(path: str, columns: dict[str, str], state: FileState | None = None,
                field_ids: FileKeys | None = None) -> FileFooter:
    """The footer of one file with the figures of `columns` (name -> type) it can serve, each found by its
    field id where `field_ids` gives one (Iceberg's: a renamed column keeps its id, not its name in older
    files), else by name. Given the file's state as listed (path, bytes, modified), a footer read before
    from the same state is reused: planning a query over a few thousand files otherwise reads every footer
    again (0.27 s for 1,500)."""
    ids = tuple(sorted((field_ids or {}).items()))
    try:
        if state is None or state[0] != path:
            return _read_footer(path, columns, ids)
        return _footer_of_state(state, tuple(columns.items()), ids)
    except FooterUnavailable:  # no row count, no figures: whoever plans with it has Spark read the file
        return FileFooter(path, 0, [], read=False)


def file_footer(data_file: DataFile, columns: dict[str, str], field_ids: FileKeys | None = None, *,
                exact: bool = True) -> FileFooter:
    """A file's figures as a footer gives them, for the whole file: from the table format's own metadata
    (`data_file.figures`) where it keeps them, reading no footer, and from the file's footer for the columns
    it does not (with `exact`, also those whose bounds the format cut: pruning takes bounds, Drill's levels
    take minimum and maximum). A file without the format's figures is its footer, row groups and all."""
    if data_file.figures is None or data_file.record_count is None:
        return read_footer(data_file.path, columns, data_file.state, field_ids)
    rows = data_file.record_count
    group = RowGroupFooter(0, 0, rows, data_file.size)
    for name, type_name in columns.items():
        figure = data_file.figures.get(name)
        if figure is None or not footer_servable(type_name) or (figure.low is None and figure.nulls != rows):
            continue
        if figure.nulls is not None and (figure.exact or not exact):
            group.columns[name] = FooterColumn(figure.low, figure.high, figure.nulls, figure.exact)
    from_metadata = frozenset(group.columns)
    missing = [name for name, type_name in columns.items() if footer_servable(type_name) and name not in group.columns]
    if missing:
        footer = read_footer(data_file.path, columns, data_file.state, field_ids)
        for name in missing:
            if footer.bounded(name):
                merged = footer_column(name, columns[name], footer.row_groups)
                group.columns[name] = FooterColumn(merged.low, merged.high, merged.nulls or 0, footer.served(name))
    return FileFooter(data_file.path, rows, [group], from_metadata, whole_file=True)


def _footer_weight(footer: FileFooter) -> int:
    """What a parsed footer holds in memory, in bytes (measured: 3.3 KB for one row group of 13 columns)."""
    return 400 + sum(150 + 250 * len(rg.columns) for rg in footer.row_groups)


_parsed = BoundedCache("parsed footers", _footer_weight)


def _footer_of_state(state: FileState, columns: tuple[tuple[str, str], ...],
                     field_ids: tuple[tuple[str, int | tuple[str, ...]], ...]) -> FileFooter:
    key = (state, columns, field_ids)
    footer = _parsed.get(key)
    if footer is None:
        footer = _read_footer(state[0], dict(columns), field_ids, metadata_of_state(state))
        _parsed.put(key, footer)
    return footer


def _read_footer(path: str, columns: dict[str, str], field_ids: tuple[tuple[str, int | tuple[str, ...]], ...] = (),
                 meta=None) -> FileFooter:
    meta = meta if meta is not None else parquet_footer(path, path)
    positions = chunk_positions(meta, path, columns, dict(field_ids))
    whole_strings = (meta.created_by or "").startswith(WHOLE_STRING_WRITERS)
    groups, first = [], 0
    for index in range(meta.num_row_groups):
        rg = meta.row_group(index)
        if rg.num_rows == 0:  # a row group (a file) of no rows holds no figure: it contributes nothing
            continue
        chunks = [rg.column(i) for i in range(rg.num_columns)]
        group = RowGroupFooter(index, first, rg.num_rows, sum(c.total_compressed_size for c in chunks))
        for name, type_name in columns.items():
            if not footer_servable(type_name) or "`" in name:  # a leaf under a field named with a dot: scanned
                continue
            if name not in positions:  # a file written before the column existed: all nulls
                group.columns[name] = FooterColumn(None, None, rg.num_rows)
                continue
            try:
                figure = _column_figure(chunks[positions[name]], rg.num_rows, type_name, whole_strings)
            except OverflowError:  # pyarrow's date or datetime past year 9999 (or before year 1)
                raise ValueOutOfRange(f"Parquet file {path}: column {name} holds a {type_name} outside 0001-01-01 "
                                      f"to 9999-12-31 (row group {index}), which the lab cannot keep as a figure"
                                      ) from None
            if figure is not None:
                group.columns[name] = figure
        groups.append(group)
        first += rg.num_rows
    return FileFooter(path, meta.num_rows, groups)


def chunk_positions(meta, path: str, columns: dict[str, str] | set[str], field_ids: FileKeys) -> dict[str, int]:
    """Each column's (or struct leaf's) chunk index in the file at `path`, by its name in `columns`: found by field
    id or physical path where `field_ids` gives them, else by name; a column the file lacks left out."""
    ids = {name: key for name, key in field_ids.items() if isinstance(key, int)}
    physical = {name: key for name, key in field_ids.items() if isinstance(key, tuple)}
    if ids:
        return _positions_by_field_id(meta, ids)
    if physical:
        return _positions_by_physical_path(meta, physical)
    return _positions_by_name(meta, path, columns)


def _positions_by_name(meta, path: str, columns: dict[str, str] | set[str]) -> dict[str, int]:
    """Each asked column's chunk index found by its name, case-insensitively (the table's names are lower-case,
    a file's as its writer spelled them); raises naming the file when an asked name matches two columns."""
    paths = [meta.schema.column(i).path for i in range(meta.num_columns)]
    index = {name: i for i, name in enumerate(paths)}
    asked = {name.lower() for name in columns}
    spelled = by_lower_name((name for name in paths if name.lower() in asked), f"Parquet file {path}")
    return {lower: index[name] for lower, name in spelled.items()}


def _positions_by_physical_path(meta, physical: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """Each column's (or struct leaf's) chunk index found by its path of physical names (Delta's name mode); a
    column the file lacks was added after it was written."""
    index = {tuple(meta.schema.column(i).path.split(".")): i for i in range(meta.num_columns)}
    return {name: index[path] for name, path in physical.items() if path in index}


def _positions_by_field_id(meta, field_ids: dict[str, int]) -> dict[str, int]:
    """Each column's (or struct leaf's) chunk index found by its field id; a column whose id the file lacks was
    added after the file was written."""
    by_id: dict[int, int] = {}
    next_chunk = [0]
    for top in meta.schema.to_arrow_schema():
        _leaf_chunks(top, by_id, next_chunk)
    return {name: by_id[field_id] for name, field_id in field_ids.items() if field_id in by_id}


def _leaf_chunks(arrow_field, by_id: dict[int, int], next_chunk: list[int]) -> None:
    """The chunk index of each primitive leaf under `arrow_field` with a field id: Parquet keeps one chunk a leaf,
    in the schema's depth-first order (a list's elements, a map's keys and values are leaves of their own)."""
    kind = arrow_field.type
    if pa.types.is_map(kind):
        children = [kind.key_field, kind.item_field]
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        children = [kind.value_field]
    elif pa.types.is_struct(kind):
        children = [kind.field(i) for i in range(kind.num_fields)]
    else:
        children = []
    if children:
        for child in children:
            _leaf_chunks(child, by_id, next_chunk)
        return
    if arrow_field.metadata and ARROW_FIELD_ID in arrow_field.metadata:
        by_id[int(arrow_field.metadata[ARROW_FIELD_ID])] = next_chunk[0]
    next_chunk[0] += 1


def _column_figure(chunk, rows: int, type_name: str, whole_strings: bool) -> FooterColumn | None:
    stats = chunk.statistics
    if chunk.physical_type == "INT96" or stats is None or not stats.has_null_count:
        return None
    if stats.null_count >= rows:
        return FooterColumn(None, None, rows)
    if not stats.has_min_max:
        return None
    try:
        if chunk.physical_type == "INT64" and is_nanosecond_timestamp(stats.logical_type):  # a scan floors them too
            low, high = micros_of_nanos(stats.min_raw), micros_of_nanos(stats.max_raw)
        else:
            low, high = statistics_value(stats.min, type_name), statistics_value(stats.max, type_name)
    except (TypeError, ValueError):
        return None
    return FooterColumn(low, high, stats.null_count, exact=whole_strings or not possibly_cut(low, high, type_name))


def possibly_cut(low, high, type_name: str) -> bool:
    """Whether string bounds this long may have been cut by a writer that truncates them."""
    return parse_type(type_name).base in _STRING_BASES and max(len(low), len(high)) >= WHOLE_STRING_BELOW


def statistics_value(value, type_name: str):
    """A footer value in the same form the metadata scan produces."""
    base = parse_type(type_name).base
    if base == "date":
        if not isinstance(value, dt.date):
            raise TypeError(value)
        return Date.from_date(value).daysSinceEpoch
    if base == "timestamp":
        if not isinstance(value, dt.datetime):
            raise TypeError(value)
        return Timestamp.from_datetime(value).microsSinceEpoch  # naive values are UTC already
    if base in ("string", "varchar", "char"):
        if isinstance(value, bytes):
            return value.decode("utf-8")
        if not isinstance(value, str):
            raise TypeError(value)
        return value
    if base == "boolean":
        return bool(value)
    return value


@dataclass
class GroupFigures:
    """One group's (partition's) rows and, per column its footers serve, the group's minimum, maximum and
    NULL count, merged over every row group of every file."""
    rows: int
    columns: dict[str, ColumnMetadata]


def group_figures(groups: dict[tuple, list[DataFile]], columns: dict[str, str],
                  field_ids: FileKeys | None = None) -> tuple[frozenset[str], dict[tuple, GroupFigures]]:
    """The columns (name -> type) whose minimum, maximum and NULL count every file of every group serves
    exactly, from its footer or its table format's figures, and each group's figures of them: what an ANALYZE
    needs not scan for. A file whose footer cannot be read serves nothing: the scan gives every figure."""
    asked = {name: type_name for name, type_name in columns.items() if footer_servable(type_name)}
    prefetch_footers([f for files in groups.values() for f in files if f.figures is None])
    try:
        footers = {key: [file_footer(f, asked, field_ids) for f in files] for key, files in groups.items()}
    except (OSError, ValueError):  # pyarrow's errors are both: a file not local, not Parquet, or cut short
        return frozenset(), {}
    served = frozenset(name for name in asked if all(f.served(name) for group in footers.values() for f in group))
    return served, {key: GroupFigures(sum(f.rows for f in group),
                                      {name: footer_column(name, asked[name], [rg for f in group for rg in f.row_groups])
                                       for name in served})
                    for key, group in footers.items()}

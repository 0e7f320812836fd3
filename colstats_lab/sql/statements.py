"""The statements the lab runs, as parsed from text."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..column_statistics.estimators import WHOLE_TIER, Tier
from ..column_statistics.model import FieldSchema


class AnalyzeMode(StrEnum):
    """What an ANALYZE computes: basic statistics (rows, files, sizes), files and sizes alone (NOSCAN), or
    column statistics too. A str: it compares, formats and is stored as its value."""

    BASIC = "basic"
    NOSCAN = "noscan"
    COLUMNS = "columns"


@dataclass(frozen=True)
class TableName:
    db: str | None
    name: str
    # "spark_catalog": Spark's table, registered in the lab on first use; another name: an attached catalog's
    catalog: str | None = None
    catalog_position: int = field(default=-1, compare=False)  # the catalog's offset in the statement, for errors

    def __str__(self) -> str:
        name = f"{self.db}.{self.name}" if self.db else self.name
        return f"{self.catalog}.{name}" if self.catalog else name


UNNAMED = TableName(None, "")  # a statement's table until the parser has read it


@dataclass(frozen=True)
class PartitionSpecItem:
    """`ds='2026-11-21'` (value set) or `ds` alone (every value)."""

    key: str
    value: str | None
    position: int  # offset of the key in the statement, for errors
    is_null: bool = False  # `ds=NULL`: the default partition


@dataclass
class Statement:
    sql: str = field(default="", repr=False, compare=False)


@dataclass
class CreateDatabase(Statement):
    name: str = ""
    if_not_exists: bool = False
    comment: str | None = None


@dataclass
class DropDatabase(Statement):
    name: str = ""
    if_exists: bool = False
    cascade: bool = False


@dataclass
class UseDatabase(Statement):
    name: str = ""


@dataclass(frozen=True)
class SkewSpec:
    """`SKEWED BY (x, y) ON ((10, 'a'), (20, 'c')) [STORED AS DIRECTORIES]`: values as literal texts,
    one tuple per skewed value (one element per column); positions are offsets for errors."""

    columns: tuple[tuple[str, int], ...]
    values: tuple[tuple[str, ...], ...]
    value_positions: tuple[int, ...]
    stored_as_directories: bool = False


@dataclass
class CreateTable(Statement):
    table: TableName = UNNAMED
    columns: list[FieldSchema] = field(default_factory=list)
    partition_keys: list[FieldSchema] = field(default_factory=list)
    comment: str | None = None
    if_not_exists: bool = False
    stored_as: str = "parquet"
    skew: SkewSpec | None = None
    # CREATE EXTERNAL TABLE ... LOCATION '...': existing files registered (their columns read from them; any
    # columns and keys the statement declares are checked against them)
    external: bool = False
    location: str | None = None


@dataclass
class AlterSkewed(Statement):
    """`ALTER TABLE t SKEWED BY ...` (skew set), `NOT SKEWED` (skew None, not_skewed), or
    `NOT STORED AS DIRECTORIES` (not_stored_as_directories)."""

    table: TableName = UNNAMED
    skew: SkewSpec | None = None
    not_skewed: bool = False
    not_stored_as_directories: bool = False


@dataclass
class SetSkewedLocation(Statement):
    """`ALTER TABLE t SET SKEWED LOCATION (30='x30', (10, 'a')='x10a')`."""

    table: TableName = UNNAMED
    locations: list[tuple[tuple[str, ...], str, int]] = field(default_factory=list)  # (value, location, offset)


@dataclass
class SetTableProperties(Statement):
    """Hive's `ALTER TABLE t SET TBLPROPERTIES ('k'='v', ...)`."""

    table: TableName = UNNAMED
    properties: list[tuple[str, str, int]] = field(default_factory=list)  # (key, value, offset of the key)


@dataclass
class UnsetTableProperties(Statement):
    """Hive's `ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)`."""

    table: TableName = UNNAMED
    keys: list[tuple[str, int]] = field(default_factory=list)  # (key, offset)
    if_exists: bool = False


@dataclass
class ShowTableProperties(Statement):
    """Hive's `SHOW TBLPROPERTIES t [('k')]`: rows prpt_name, prpt_value."""

    table: TableName = UNNAMED
    key: str | None = None


@dataclass
class Concatenate(Statement):
    """Hive's `ALTER TABLE t [PARTITION (..)] CONCATENATE`: each directory's files merged into one."""

    table: TableName = UNNAMED
    partition: list[PartitionSpecItem] | None = None


@dataclass
class DropTable(Statement):
    table: TableName = UNNAMED
    if_exists: bool = False


@dataclass
class AddPartitions(Statement):
    table: TableName = UNNAMED
    specs: list[list[PartitionSpecItem]] = field(default_factory=list)
    if_not_exists: bool = False


@dataclass
class DropPartitions(Statement):
    table: TableName = UNNAMED
    specs: list[list[PartitionSpecItem]] = field(default_factory=list)
    if_exists: bool = False


@dataclass
class RepairTable(Statement):
    """Hive's `MSCK [REPAIR] TABLE t [ADD | DROP | SYNC PARTITIONS]`: the partitions of an external table
    made those its directories hold (ADD, the default: register new ones; DROP: forget those whose
    directory is gone; SYNC: both)."""

    table: TableName = UNNAMED
    mode: str = "ADD"


@dataclass
class Analyze(Statement):
    """Hive's `ANALYZE TABLE t [PARTITION (..)] COMPUTE STATISTICS [NOSCAN | FOR COLUMNS ..]`, with the
    lab's tiers after the columns: `NOSCAN` (the figures the files' metadata holds, no value read) or
    `SAMPLE n PERCENT` (a random choice of row groups).

    mode: "basic" (row counts and files), "noscan" (files and bytes only) or "columns".
    columns: the named columns, or None for all of them.
    tier: how column statistics read the values: every one, the files' metadata alone (`FOR COLUMNS ...
    NOSCAN`) or a sample of each partition's row groups (`SAMPLE n PERCENT`).
    """

    table: TableName = UNNAMED
    partition: list[PartitionSpecItem] | None = None
    mode: AnalyzeMode = AnalyzeMode.BASIC
    columns: list[tuple[str, int]] | None = None  # (name, offset) pairs
    tier: Tier = WHOLE_TIER
    sample_position: int = 0  # offset of SAMPLE, for errors

    def problem(self) -> str | None:
        """What makes this ANALYZE contradict itself, in words (None: nothing): the parser's grammar and the
        statements built in code (a handle's, a worker's) are checked by this one rule."""
        if self.mode is not AnalyzeMode.COLUMNS and self.columns is not None:
            return "only column statistics (FOR COLUMNS) name columns"
        if self.mode is not AnalyzeMode.COLUMNS and self.tier:
            return ("a tier (the files' metadata alone, or a sample) applies to column statistics "
                    "(FOR COLUMNS ... NOSCAN, FOR COLUMNS ... SAMPLE n PERCENT)")
        return None


@dataclass
class AnalyzeTables(Statement):
    """Spark's `ANALYZE TABLES [{FROM | IN} db] COMPUTE STATISTICS [NOSCAN]`, with Hive's
    `FOR ALL COLUMNS` too: every table of the database, one after another, each as `ANALYZE TABLE t
    COMPUTE STATISTICS ...` of the whole table.

    mode: "basic", "noscan" or "columns" (all of them)."""

    db: str | None = None
    mode: AnalyzeMode = AnalyzeMode.BASIC


@dataclass
class RefreshMetadata(Statement):
    """Drill's `ANALYZE TABLE t [COLUMNS (..) | COLUMNS NONE] REFRESH METADATA ['level' LEVEL]
    [{COMPUTE | ESTIMATE} STATISTICS [(..)] [SAMPLE n PERCENT]]`.

    columns: the interesting columns (None: every column, []: COLUMNS NONE);
    level: the level named, None for the `metastore.metadata.store.depth_level` option;
    statistics_mode: "COMPUTE", "ESTIMATE" or None (no STATISTICS clause);
    statistics_columns: the STATISTICS clause's columns (None: the interesting columns).
    """

    table: TableName = UNNAMED
    columns: list[tuple[str, int]] | None = None  # (name, offset) pairs
    level: tuple[str, int] | None = None
    statistics_mode: str | None = None
    statistics_columns: list[tuple[str, int]] | None = None
    sample_percent: float | None = None
    sample_position: int = 0


@dataclass
class DropMetadata(Statement):
    """Drill's `ANALYZE TABLE t DROP [METADATA | STATISTICS] [IF EXISTS]`: forget the table's metadata
    (Drill's metastore keeps the statistics in it, so both words drop the same)."""

    table: TableName = UNNAMED
    if_exists: bool = False


@dataclass
class Describe(Statement):
    table: TableName = UNNAMED
    partition: list[PartitionSpecItem] | None = None
    column: tuple[str, int] | None = None
    formatted: bool = False


@dataclass
class ShowDatabases(Statement):
    pass


@dataclass
class ShowTables(Statement):
    db: str | None = None
    catalog: str | None = None  # an attached catalog (SHOW TABLES IN hms.db)


@dataclass
class ShowPartitions(Statement):
    table: TableName = UNNAMED
    partition: list[PartitionSpecItem] | None = None


@dataclass
class SetOption(Statement):
    key: str = ""
    value: str | None = None  # None: show the option


@dataclass
class ResetOption(Statement):
    """`RESET` (every setting the lab changed) or `RESET key`."""
    key: str | None = None


@dataclass
class Query(Statement):
    """A SELECT (or WITH) query, run by Spark over the lab's tables. `tree` is its sqlglot syntax tree,
    parsed once by the parser and read by whatever decides how to run it (never changed in place)."""

    text: str = ""
    tree: Any = field(default=None, compare=False, repr=False)

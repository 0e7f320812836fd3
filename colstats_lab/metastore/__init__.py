"""The metastore, on SQLite or PostgreSQL: Hive's schema and its catalog, column-statistics and transaction API
over it, write IDs. Its objects are Hive's Thrift model (`column_statistics.model`), re-exported here."""
from ..column_statistics.model import (
    DEFAULT_LIST_BUCKETING_DIR_NAME,
    AggrStats,
    BinaryColumnStatsData,
    BooleanColumnStatsData,
    ColumnPath,
    ColumnStatistics,
    ColumnStatisticsData,
    ColumnStatisticsDesc,
    ColumnStatisticsObj,
    Date,
    DateColumnStatsData,
    DecimalColumnStatsData,
    DoubleColumnStatsData,
    FieldSchema,
    LongColumnStatsData,
    Partition,
    SkewedInfo,
    StringColumnStatsData,
    Table,
    Timestamp,
    TimestampColumnStatsData,
)
from ..column_statistics.names import DEFAULT_PARTITION_NAME, escape_path_name, make_part_name, parse_part_name
from ..errors import (
    AlreadyExistsException,
    InvalidInputException,
    InvalidObjectException,
    MetaException,
    MetastoreError,
    NoSuchObjectException,
)
from .rows.column_stats_accurate import PARAM as COLUMN_STATS_ACCURATE
from .rows.column_stats_accurate import StatsAccuracy
from .rows.hive_rows import DEFAULT_DB, OWNED_LOCATION
from .rows.write_ids import ValidWriteIdList
from .store import Metastore

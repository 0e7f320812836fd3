"""The SQLite metastore: Hive's schema, Thrift-shaped model, the column-statistics API, write IDs."""
from .accurate import PARAM as COLUMN_STATS_ACCURATE, StatsAccuracy
from .exceptions import (
    AlreadyExistsException,
    InvalidInputException,
    InvalidObjectException,
    MetaException,
    MetastoreError,
    NoSuchObjectException,
)
from .model import (
    DEFAULT_LIST_BUCKETING_DIR_NAME,
    AggrStats,
    BinaryColumnStatsData,
    BooleanColumnStatsData,
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
    ColumnPath,
    StringColumnStatsData,
    Table,
    Timestamp,
    TimestampColumnStatsData,
)
from .names import DEFAULT_PARTITION_NAME, escape_path_name, make_part_name, parse_part_name
from .common import DEFAULT_DB
from .store import Metastore
from .txn import ValidWriteIdList

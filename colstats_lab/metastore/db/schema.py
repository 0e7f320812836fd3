"""The metastore's schema, with Hive's table and column names, and its migrations: one chain for SQLite and
PostgreSQL.

A migration is appended, never changed in effect once released: the database records how many have run
(SQLite's `PRAGMA user_version`, a row on PostgreSQL), and `migrate` runs the rest inside one transaction.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ...errors import MetaException, MetastoreUnavailable
from .dialect import Dialect

if TYPE_CHECKING:
    from .database import Database

_STATS_COLUMNS = """
    CAT_NAME TEXT NOT NULL DEFAULT 'hive',
    DB_NAME TEXT NOT NULL,
    TABLE_NAME TEXT NOT NULL,
    COLUMN_NAME TEXT NOT NULL,
    COLUMN_TYPE TEXT NOT NULL,
    LOW_VALUE TEXT,
    HIGH_VALUE TEXT,
    LONG_LOW_VALUE INTEGER,
    LONG_HIGH_VALUE INTEGER,
    DOUBLE_LOW_VALUE REAL,
    DOUBLE_HIGH_VALUE REAL,
    BIG_DECIMAL_LOW_VALUE TEXT,
    BIG_DECIMAL_HIGH_VALUE TEXT,
    NUM_NULLS INTEGER,
    NUM_DISTINCTS INTEGER,
    BIT_VECTOR BLOB,
    AVG_COL_LEN REAL,
    MAX_COL_LEN INTEGER,
    NUM_TRUES INTEGER,
    NUM_FALSES INTEGER,
    LAST_ANALYZED INTEGER NOT NULL,
    ENGINE TEXT NOT NULL DEFAULT 'hive'
"""

_V1 = f"""
CREATE TABLE VERSION (
    VER_ID INTEGER PRIMARY KEY,
    SCHEMA_VERSION TEXT NOT NULL,
    VERSION_COMMENT TEXT
);
CREATE TABLE DBS (
    DB_ID INTEGER PRIMARY KEY,
    NAME TEXT NOT NULL UNIQUE,
    "DESC" TEXT,
    DB_LOCATION_URI TEXT NOT NULL,
    OWNER_NAME TEXT,
    OWNER_TYPE TEXT DEFAULT 'USER',
    CTLG_NAME TEXT NOT NULL DEFAULT 'hive',
    CREATE_TIME INTEGER NOT NULL
);
CREATE TABLE CDS (
    CD_ID INTEGER PRIMARY KEY
);
CREATE TABLE COLUMNS_V2 (
    CD_ID INTEGER NOT NULL REFERENCES CDS (CD_ID) ON DELETE CASCADE,
    COMMENT TEXT,
    COLUMN_NAME TEXT NOT NULL,
    TYPE_NAME TEXT NOT NULL,
    INTEGER_IDX INTEGER NOT NULL,
    PRIMARY KEY (CD_ID, COLUMN_NAME)
);
CREATE TABLE SDS (
    SD_ID INTEGER PRIMARY KEY,
    CD_ID INTEGER REFERENCES CDS (CD_ID),
    INPUT_FORMAT TEXT,
    OUTPUT_FORMAT TEXT,
    LOCATION TEXT,
    IS_COMPRESSED INTEGER NOT NULL DEFAULT 0,
    NUM_BUCKETS INTEGER NOT NULL DEFAULT -1,
    IS_STOREDASSUBDIRECTORIES INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE TBLS (
    TBL_ID INTEGER PRIMARY KEY,
    CREATE_TIME INTEGER NOT NULL,
    DB_ID INTEGER NOT NULL REFERENCES DBS (DB_ID),
    LAST_ACCESS_TIME INTEGER NOT NULL DEFAULT 0,
    OWNER TEXT,
    RETENTION INTEGER NOT NULL DEFAULT 0,
    SD_ID INTEGER REFERENCES SDS (SD_ID),
    TBL_NAME TEXT NOT NULL,
    TBL_TYPE TEXT NOT NULL,
    VIEW_EXPANDED_TEXT TEXT,
    VIEW_ORIGINAL_TEXT TEXT,
    IS_REWRITE_ENABLED INTEGER NOT NULL DEFAULT 0,
    WRITE_ID INTEGER NOT NULL DEFAULT 0,
    UNIQUE (DB_ID, TBL_NAME)
);
CREATE TABLE TABLE_PARAMS (
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    PARAM_KEY TEXT NOT NULL,
    PARAM_VALUE TEXT,
    PRIMARY KEY (TBL_ID, PARAM_KEY)
);
CREATE TABLE PARTITION_KEYS (
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    PKEY_COMMENT TEXT,
    PKEY_NAME TEXT NOT NULL,
    PKEY_TYPE TEXT NOT NULL,
    INTEGER_IDX INTEGER NOT NULL,
    PRIMARY KEY (TBL_ID, PKEY_NAME)
);
CREATE TABLE PARTITIONS (
    PART_ID INTEGER PRIMARY KEY,
    CREATE_TIME INTEGER NOT NULL,
    LAST_ACCESS_TIME INTEGER NOT NULL DEFAULT 0,
    PART_NAME TEXT NOT NULL,
    SD_ID INTEGER REFERENCES SDS (SD_ID),
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    WRITE_ID INTEGER NOT NULL DEFAULT 0,
    UNIQUE (TBL_ID, PART_NAME)
);
CREATE TABLE PARTITION_KEY_VALS (
    PART_ID INTEGER NOT NULL REFERENCES PARTITIONS (PART_ID) ON DELETE CASCADE,
    PART_KEY_VAL TEXT,
    INTEGER_IDX INTEGER NOT NULL,
    PRIMARY KEY (PART_ID, INTEGER_IDX)
);
CREATE INDEX PARTITION_KEY_VALS_BY_VALUE ON PARTITION_KEY_VALS (INTEGER_IDX, PART_KEY_VAL);
CREATE TABLE PARTITION_PARAMS (
    PART_ID INTEGER NOT NULL REFERENCES PARTITIONS (PART_ID) ON DELETE CASCADE,
    PARAM_KEY TEXT NOT NULL,
    PARAM_VALUE TEXT,
    PRIMARY KEY (PART_ID, PARAM_KEY)
);
CREATE TABLE TAB_COL_STATS (
    CS_ID INTEGER PRIMARY KEY,
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    {_STATS_COLUMNS},
    UNIQUE (TBL_ID, COLUMN_NAME, ENGINE)
);
CREATE TABLE PART_COL_STATS (
    CS_ID INTEGER PRIMARY KEY,
    PART_ID INTEGER NOT NULL REFERENCES PARTITIONS (PART_ID) ON DELETE CASCADE,
    PART_NAME TEXT NOT NULL,
    {_STATS_COLUMNS},
    UNIQUE (PART_ID, COLUMN_NAME, ENGINE)
);
CREATE INDEX PCS_STATS_IDX ON PART_COL_STATS (DB_NAME, TABLE_NAME, COLUMN_NAME, PART_NAME);
CREATE TABLE TXNS (
    TXN_ID INTEGER PRIMARY KEY,
    TXN_STATE TEXT NOT NULL CHECK (TXN_STATE IN ('o', 'c', 'a')),
    TXN_STARTED INTEGER NOT NULL,
    TXN_LAST_HEARTBEAT INTEGER NOT NULL,
    TXN_USER TEXT,
    TXN_HOST TEXT,
    TXN_PID INTEGER
);
CREATE TABLE TXN_TO_WRITE_ID (
    T2W_TXNID INTEGER NOT NULL REFERENCES TXNS (TXN_ID),
    T2W_DATABASE TEXT NOT NULL,
    T2W_TABLE TEXT NOT NULL,
    T2W_WRITEID INTEGER NOT NULL,
    UNIQUE (T2W_DATABASE, T2W_TABLE, T2W_WRITEID),
    UNIQUE (T2W_TXNID, T2W_DATABASE, T2W_TABLE)
);
CREATE TABLE NEXT_WRITE_ID (
    NWI_DATABASE TEXT NOT NULL,
    NWI_TABLE TEXT NOT NULL,
    NWI_NEXT INTEGER NOT NULL,
    PRIMARY KEY (NWI_DATABASE, NWI_TABLE)
);
INSERT INTO VERSION (VER_ID, SCHEMA_VERSION, VERSION_COMMENT)
    VALUES (1, '4.0.0', 'colstats_lab metastore, Hive 4 names');
"""

# 2: Hive's TXN_COMPONENTS, what each transaction writes (kept after the commit, as Hive's
# COMPLETED_TXN_COMPONENTS would, so a partition's writers can be listed).
_V2 = """
CREATE TABLE TXN_COMPONENTS (
    TC_TXNID INTEGER NOT NULL REFERENCES TXNS (TXN_ID),
    TC_DATABASE TEXT NOT NULL,
    TC_TABLE TEXT NOT NULL,
    TC_PARTITION TEXT,
    TC_OPERATION_TYPE TEXT NOT NULL,
    TC_WRITEID INTEGER NOT NULL
);
CREATE INDEX TC_TXNID_INDEX ON TXN_COMPONENTS (TC_TXNID);
UPDATE VERSION SET VERSION_COMMENT = 'colstats_lab metastore, Hive 4 names, with TXN_COMPONENTS' WHERE VER_ID = 1
"""

# Hive's list-bucketing tables: skewed column names per storage descriptor, skewed values as string
# lists, and the value -> location map. SDS.IS_STOREDASSUBDIRECTORIES is already in _V1.
_V3 = """
CREATE TABLE SKEWED_STRING_LIST (
    STRING_LIST_ID INTEGER PRIMARY KEY
);
CREATE TABLE SKEWED_STRING_LIST_VALUES (
    STRING_LIST_ID INTEGER NOT NULL REFERENCES SKEWED_STRING_LIST (STRING_LIST_ID) ON DELETE CASCADE,
    STRING_LIST_VALUE TEXT,
    INTEGER_IDX INTEGER NOT NULL,
    PRIMARY KEY (STRING_LIST_ID, INTEGER_IDX)
);
CREATE TABLE SKEWED_COL_NAMES (
    SD_ID INTEGER NOT NULL REFERENCES SDS (SD_ID) ON DELETE CASCADE,
    SKEWED_COL_NAME TEXT NOT NULL,
    INTEGER_IDX INTEGER NOT NULL,
    PRIMARY KEY (SD_ID, INTEGER_IDX)
);
CREATE TABLE SKEWED_VALUES (
    SD_ID_OID INTEGER NOT NULL REFERENCES SDS (SD_ID) ON DELETE CASCADE,
    STRING_LIST_ID_EID INTEGER NOT NULL REFERENCES SKEWED_STRING_LIST (STRING_LIST_ID) ON DELETE CASCADE,
    INTEGER_IDX INTEGER NOT NULL,
    PRIMARY KEY (SD_ID_OID, INTEGER_IDX)
);
CREATE TABLE SKEWED_COL_VALUE_LOC_MAP (
    SD_ID INTEGER NOT NULL REFERENCES SDS (SD_ID) ON DELETE CASCADE,
    STRING_LIST_ID_KID INTEGER NOT NULL REFERENCES SKEWED_STRING_LIST (STRING_LIST_ID) ON DELETE CASCADE,
    LOCATION TEXT,
    PRIMARY KEY (SD_ID, STRING_LIST_ID_KID)
);
UPDATE VERSION SET VERSION_COMMENT = 'colstats_lab metastore, Hive 4 names, with TXN_COMPONENTS and list bucketing' WHERE VER_ID = 1
"""

# Drill-style table metadata (ANALYZE TABLE ... REFRESH METADATA): one analysis per table, its
# metadata units (TABLE, SEGMENT, PARTITION, FILE, ROW_GROUP) with per-column statistics, and the
# INFORMATION_SCHEMA views with Drill's column names. LOW_VALUE/HIGH_VALUE keep each type's own
# value (days for dates, microseconds for timestamps, text for decimals) so levels merge exactly.
def _v4(d: Dialect) -> list[str]:
    return _statements(d, _V4_SCRIPT.replace("{json_pairs}", d.json_pairs("U.PARTITION_VALUES")))


_V4_SCRIPT = """
CREATE TABLE METADATA_ANALYSES (
    TBL_ID INTEGER PRIMARY KEY REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    METADATA_LEVEL TEXT NOT NULL,
    INTERESTING_COLUMNS TEXT NOT NULL,
    STATISTICS_MODE TEXT NOT NULL,
    SAMPLE_PERCENT REAL,
    ANALYZED_AT INTEGER NOT NULL,
    METADATA_VERSION INTEGER NOT NULL
);
CREATE TABLE METADATA_UNITS (
    UNIT_ID INTEGER PRIMARY KEY,
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    METADATA_TYPE TEXT NOT NULL,
    METADATA_KEY TEXT,
    METADATA_IDENTIFIER TEXT NOT NULL,
    PART_NAME TEXT,
    PARTITION_COLUMN TEXT,
    PARTITION_VALUE TEXT,
    PARTITION_VALUES TEXT,
    LOCATION TEXT,
    PATH TEXT,
    ROW_GROUP_INDEX INTEGER,
    ROW_COUNT INTEGER,
    BYTES INTEGER,
    LAST_MODIFIED_TIME INTEGER,
    FILES TEXT,
    ESTIMATED INTEGER NOT NULL DEFAULT 0,
    UNIQUE (TBL_ID, METADATA_TYPE, METADATA_IDENTIFIER)
);
CREATE TABLE METADATA_COLUMN_STATS (
    UNIT_ID INTEGER NOT NULL REFERENCES METADATA_UNITS (UNIT_ID) ON DELETE CASCADE,
    COLUMN_NAME TEXT NOT NULL,
    COLUMN_TYPE TEXT NOT NULL,
    LOW_VALUE,
    HIGH_VALUE,
    MIN_VAL TEXT,
    MAX_VAL TEXT,
    NULLS_COUNT INTEGER,
    NON_NULLS_COUNT REAL,
    NDV REAL,
    BIT_VECTOR BLOB,
    ESTIMATED INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (UNIT_ID, COLUMN_NAME)
);
CREATE VIEW INFORMATION_SCHEMA_TABLES AS
SELECT D.CTLG_NAME AS TABLE_CATALOG, D.NAME AS TABLE_SCHEMA, T.TBL_NAME AS TABLE_NAME,
       CASE T.TBL_TYPE WHEN 'EXTERNAL_TABLE' THEN 'EXTERNAL TABLE' ELSE 'TABLE' END AS TABLE_TYPE,
       'PARQUET' AS TABLE_SOURCE, S.LOCATION AS LOCATION, U.ROW_COUNT AS NUM_ROWS,
       U.LAST_MODIFIED_TIME AS LAST_MODIFIED_TIME
FROM TBLS T JOIN DBS D ON D.DB_ID = T.DB_ID JOIN SDS S ON S.SD_ID = T.SD_ID
LEFT JOIN METADATA_UNITS U ON U.TBL_ID = T.TBL_ID AND U.METADATA_TYPE = 'TABLE';
CREATE VIEW INFORMATION_SCHEMA_COLUMNS AS
SELECT D.CTLG_NAME AS TABLE_CATALOG, D.NAME AS TABLE_SCHEMA, T.TBL_NAME AS TABLE_NAME,
       C.COLUMN_NAME AS COLUMN_NAME, C.INTEGER_IDX + 1 AS ORDINAL_POSITION, NULL AS COLUMN_DEFAULT,
       'YES' AS IS_NULLABLE, upper(C.TYPE_NAME) AS DATA_TYPE,
       CASE WHEN lower(C.TYPE_NAME) = 'date' THEN 'yyyy-MM-dd'
            WHEN lower(C.TYPE_NAME) = 'timestamp' THEN 'yyyy-MM-dd HH:mm:ss.SSSSSS' END AS COLUMN_FORMAT,
       M.NULLS_COUNT AS NUM_NULLS, M.MIN_VAL AS MIN_VAL, M.MAX_VAL AS MAX_VAL, M.NDV AS NDV,
       M.NON_NULLS_COUNT AS EST_NUM_NON_NULLS, 0 AS IS_NESTED
FROM TBLS T JOIN DBS D ON D.DB_ID = T.DB_ID JOIN SDS S ON S.SD_ID = T.SD_ID
JOIN COLUMNS_V2 C ON C.CD_ID = S.CD_ID
LEFT JOIN METADATA_UNITS U ON U.TBL_ID = T.TBL_ID AND U.METADATA_TYPE = 'TABLE'
LEFT JOIN METADATA_COLUMN_STATS M ON M.UNIT_ID = U.UNIT_ID AND M.COLUMN_NAME = C.COLUMN_NAME;
CREATE VIEW INFORMATION_SCHEMA_PARTITIONS AS
SELECT D.CTLG_NAME AS TABLE_CATALOG, D.NAME AS TABLE_SCHEMA, T.TBL_NAME AS TABLE_NAME,
       U.METADATA_KEY AS METADATA_KEY, U.METADATA_TYPE AS METADATA_TYPE,
       U.METADATA_IDENTIFIER AS METADATA_IDENTIFIER, U.PARTITION_COLUMN AS PARTITION_COLUMN,
       U.PARTITION_VALUE AS PARTITION_VALUE, U.LOCATION AS LOCATION, U.LAST_MODIFIED_TIME AS LAST_MODIFIED_TIME
FROM METADATA_UNITS U JOIN TBLS T ON T.TBL_ID = U.TBL_ID JOIN DBS D ON D.DB_ID = T.DB_ID
WHERE U.METADATA_TYPE = 'SEGMENT'
UNION ALL
SELECT D.CTLG_NAME, D.NAME, T.TBL_NAME, U.METADATA_KEY, U.METADATA_TYPE, U.METADATA_IDENTIFIER,
       K.key, K.value, NULL, U.LAST_MODIFIED_TIME
FROM METADATA_UNITS U JOIN TBLS T ON T.TBL_ID = U.TBL_ID JOIN DBS D ON D.DB_ID = T.DB_ID,
     {json_pairs} K
WHERE U.METADATA_TYPE = 'PARTITION';
UPDATE VERSION SET VERSION_COMMENT = 'colstats_lab metastore, Hive 4 names, with TXN_COMPONENTS, list bucketing and Drill table metadata' WHERE VER_ID = 1
"""

# The files each ANALYZE of an external table read, per partition (PART_ID NULL: an unpartitioned
# table). Another job may change an external table's files at any time: statistics are accurate for
# a reader only while a listing of the directory still shows exactly these files.
_V5 = """
CREATE TABLE ANALYZED_FILES (
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    PART_ID INTEGER REFERENCES PARTITIONS (PART_ID) ON DELETE CASCADE,
    FILE_PATH TEXT NOT NULL,
    FILE_SIZE INTEGER NOT NULL,
    MODIFIED_MS INTEGER NOT NULL
);
CREATE INDEX ANALYZED_FILES_BY_OWNER ON ANALYZED_FILES (TBL_ID, PART_ID);
CREATE INDEX ANALYZED_FILES_BY_PART ON ANALYZED_FILES (PART_ID);
UPDATE VERSION SET VERSION_COMMENT = 'colstats_lab metastore, Hive 4 names, with TXN_COMPONENTS, list bucketing, Drill table metadata and analyzed files of external tables' WHERE VER_ID = 1
"""

# Hive's Timestamp statistics are whole seconds since the epoch, and so are its LONG_LOW_VALUE and
# LONG_HIGH_VALUE for timestamp columns; the lab keeps Spark's microseconds in columns of its own.
_FLOOR_SECONDS = "({0} - (({0} % 1000000) + 1000000) % 1000000) / 1000000"
_V6 = "\n".join(f"""
ALTER TABLE {t} ADD COLUMN LOW_VALUE_MICROS INTEGER;
ALTER TABLE {t} ADD COLUMN HIGH_VALUE_MICROS INTEGER;
UPDATE {t} SET LOW_VALUE_MICROS = LONG_LOW_VALUE, HIGH_VALUE_MICROS = LONG_HIGH_VALUE,
    LONG_LOW_VALUE = {_FLOOR_SECONDS.format("LONG_LOW_VALUE")},
    LONG_HIGH_VALUE = {_FLOOR_SECONDS.format("LONG_HIGH_VALUE")}
    WHERE COLUMN_TYPE = 'timestamp';""" for t in ("TAB_COL_STATS", "PART_COL_STATS"))

_NUM_ROWS = "numRows"
# Hive's parameter name, written out: a migration is frozen text, which a rename elsewhere must not change
_ACCURATE = "COLUMN_STATS_ACCURATE"


def _stale_triggers(d: Dialect) -> list[str]:
    return [
        *d.stale_trigger("PART_COL_STATS_UPDATED", "UPDATE", "PART_COL_STATS", "NEW"),
        *d.stale_trigger("PART_COL_STATS_DELETED", "DELETE", "PART_COL_STATS", "OLD"),
        *d.stale_trigger("PARTITION_ROWS_INSERTED", "INSERT", "PARTITION_PARAMS", "NEW", f"NEW.PARAM_KEY = '{_NUM_ROWS}'"),
        *d.stale_trigger("PARTITION_ROWS_UPDATED", "UPDATE", "PARTITION_PARAMS", "NEW",
                         f"NEW.PARAM_KEY = '{_NUM_ROWS}' OR OLD.PARAM_KEY = '{_NUM_ROWS}'"),
        *d.stale_trigger("PARTITION_ROWS_DELETED", "DELETE", "PARTITION_PARAMS", "OLD", f"OLD.PARAM_KEY = '{_NUM_ROWS}'"),
        # the partition row is gone: its table's ID comes from the deleted row (none when the table went too)
        *d.trigger("PARTITION_DROPPED", "DELETE", "PARTITIONS",
                   "INSERT INTO STALE_STATS_SEGMENTS (TBL_ID, PART_ID) SELECT OLD.TBL_ID, OLD.PART_ID "
                   "WHERE EXISTS (SELECT 1 FROM TBLS WHERE TBL_ID = OLD.TBL_ID) AND NOT EXISTS (SELECT 1 FROM "
                   "STALE_STATS_SEGMENTS S WHERE S.TBL_ID = OLD.TBL_ID AND S.PART_ID = OLD.PART_ID)")]


# Partition statistics merged per segment of partitions, so that the table level follows a change of
# k partitions by re-merging O(k log n) segments instead of every partition. A segment of level L
# covers the PART_IDs [SEG_INDEX << 6L, (SEG_INDEX + 1) << 6L); level 1 merges partitions, each
# level above merges 64 segments of the one below. A change to a partition's statistics, its
# numRows or its existence marks the partition stale, by trigger, so that no writer of those
# tables can forget to (but for the bulk insert of statistics, whose one writer marks each partition
# once rather than a trigger each row); the next merge re-merges the segments above them. Counts
# and total lengths are integers and the sketch is the union, so any grouping merges to the same
# figures (stats/merge.py).
def _v7(d: Dialect) -> list[str]:
    return [*_statements(d, """
CREATE TABLE PART_STATS_SEGMENTS (
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    SEG_LEVEL INTEGER NOT NULL,
    SEG_INDEX INTEGER NOT NULL,
    COLUMN_NAME TEXT NOT NULL,
    ENGINE TEXT NOT NULL,
    COLUMN_TYPE TEXT NOT NULL,
    NUM_PARTS INTEGER NOT NULL,
    NUM_ROWS INTEGER NOT NULL,
    NUM_NULLS INTEGER NOT NULL,
    LOW_VALUE TEXT,
    HIGH_VALUE TEXT,
    BIT_VECTOR BLOB,
    ALL_SKETCHED INTEGER NOT NULL,
    MAX_NUM_DISTINCTS INTEGER NOT NULL,
    TOTAL_COL_LEN INTEGER NOT NULL,
    MAX_COL_LEN INTEGER NOT NULL,
    NUM_TRUES INTEGER NOT NULL,
    NUM_FALSES INTEGER NOT NULL,
    PRIMARY KEY (TBL_ID, SEG_LEVEL, SEG_INDEX, COLUMN_NAME, ENGINE)
) WITHOUT ROWID;
CREATE TABLE STALE_STATS_SEGMENTS (
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    PART_ID INTEGER NOT NULL,
    PRIMARY KEY (TBL_ID, PART_ID)
) WITHOUT ROWID;"""), *_stale_triggers(d),
            "INSERT INTO STALE_STATS_SEGMENTS (TBL_ID, PART_ID) SELECT TBL_ID, PART_ID FROM PARTITIONS WHERE true "
            "ON CONFLICT DO NOTHING"]


# What each segment's partitions are, for judging the statistics' accuracy without reading every
# partition: per distinct COLUMN_STATS_ACCURATE text ('' when absent), how many partitions hold it,
# the range of their writers' IDs, and the first of them by name with its writer (for the reason a
# reader is given). Kept by the same refresh as PART_STATS_SEGMENTS, marked stale by the same table;
# level 1 is built here from the partitions as they are (6 bits a level, segments.BITS), the levels
# above from the level below.
_STATE_SEGMENT = """INSERT INTO PART_STATE_SEGMENTS (TBL_ID, SEG_LEVEL, SEG_INDEX, FLAGS, NUM_PARTS, MIN_WRITE_ID,
        MAX_WRITE_ID, FIRST_NAME, FIRST_WRITE_ID)
    SELECT G.TBL_ID, {level}, G.SEG, G.FLAGS, G.N, G.LO, G.HI, G.FIRST,
        (SELECT P.WRITE_ID FROM PARTITIONS P WHERE P.TBL_ID = G.TBL_ID AND P.PART_NAME = G.FIRST)
    FROM ({groups}) G;"""
def _v8(d: Dialect) -> list[str]:
    return [
    """CREATE TABLE PART_STATE_SEGMENTS (
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    SEG_LEVEL INTEGER NOT NULL,
    SEG_INDEX INTEGER NOT NULL,
    FLAGS TEXT NOT NULL,
    NUM_PARTS INTEGER NOT NULL,
    MIN_WRITE_ID INTEGER NOT NULL,
    MAX_WRITE_ID INTEGER NOT NULL,
    FIRST_NAME TEXT NOT NULL,
    FIRST_WRITE_ID INTEGER NOT NULL,
    PRIMARY KEY (TBL_ID, SEG_LEVEL, SEG_INDEX, FLAGS)
) WITHOUT ROWID;""",
    *d.stale_trigger("PARTITION_ADDED", "INSERT", "PARTITIONS", "NEW"),
    *d.stale_trigger("PARTITION_RENAMED_OR_WRITTEN", "UPDATE OF PART_NAME, WRITE_ID", "PARTITIONS", "NEW"),
    *d.stale_trigger("PARTITION_FLAGS_INSERTED", "INSERT", "PARTITION_PARAMS", "NEW", f"NEW.PARAM_KEY = '{_ACCURATE}'"),
    *d.stale_trigger("PARTITION_FLAGS_UPDATED", "UPDATE", "PARTITION_PARAMS", "NEW",
                     f"NEW.PARAM_KEY = '{_ACCURATE}' OR OLD.PARAM_KEY = '{_ACCURATE}'"),
    *d.stale_trigger("PARTITION_FLAGS_DELETED", "DELETE", "PARTITION_PARAMS", "OLD", f"OLD.PARAM_KEY = '{_ACCURATE}'"),
    _STATE_SEGMENT.format(level=1, groups=(
        "SELECT P.TBL_ID, P.PART_ID >> 6 AS SEG, COALESCE(PP.PARAM_VALUE, '') AS FLAGS, count(*) AS N, "
        "min(P.WRITE_ID) AS LO, max(P.WRITE_ID) AS HI, min(P.PART_NAME) AS FIRST FROM PARTITIONS P "
        f"LEFT JOIN PARTITION_PARAMS PP ON PP.PART_ID = P.PART_ID AND PP.PARAM_KEY = '{_ACCURATE}' GROUP BY 1, 2, 3")),
    *[_STATE_SEGMENT.format(level=level, groups=(
        "SELECT TBL_ID, SEG_INDEX >> 6 AS SEG, FLAGS, sum(NUM_PARTS) AS N, min(MIN_WRITE_ID) AS LO, "
        f"max(MAX_WRITE_ID) AS HI, min(FIRST_NAME) AS FIRST FROM PART_STATE_SEGMENTS WHERE SEG_LEVEL = {level - 1} "
        "GROUP BY 1, 2, 3")) for level in (2, 3)],
]

# Hive 4's HISTOGRAM column (HIVE-26221): a KLL sketch of the column's values per table and partition,
# and its union per segment (and per Drill metadata unit). A merged sketch is NULL when a part holding
# values has none.
_V9 = """
ALTER TABLE TAB_COL_STATS ADD COLUMN HISTOGRAM BLOB;
ALTER TABLE PART_COL_STATS ADD COLUMN HISTOGRAM BLOB;
ALTER TABLE PART_STATS_SEGMENTS ADD COLUMN HISTOGRAM BLOB;
ALTER TABLE METADATA_COLUMN_STATS ADD COLUMN HISTOGRAM BLOB;
"""

# Statistics over time: every state of a (table or partition, column)'s statistics, kept by trigger as
# each is stored (INSERT, and INSERT OR REPLACE, which is how every writer stores them), so no writer can
# forget; the sketches too, so any past state can be merged again. A commit (Metastore.apply) names itself
# in STATS_HISTORY_CONTEXT for the triggers: its transaction, hence the write ID, and what it did; a
# state stored by a direct call has neither. A dropped partition's history goes with it, in the same
# transaction; a dropped table's by its foreign key. Rules on a column's figures (metastore.expectations)
# and their outcome on each kept state live beside it.
_HISTORY_STATS = ("COLUMN_TYPE, LOW_VALUE, HIGH_VALUE, LONG_LOW_VALUE, LONG_HIGH_VALUE, DOUBLE_LOW_VALUE, "
                  "DOUBLE_HIGH_VALUE, BIG_DECIMAL_LOW_VALUE, BIG_DECIMAL_HIGH_VALUE, NUM_NULLS, NUM_DISTINCTS, "
                  "BIT_VECTOR, AVG_COL_LEN, MAX_COL_LEN, NUM_TRUES, NUM_FALSES, LOW_VALUE_MICROS, "
                  "HIGH_VALUE_MICROS, HISTOGRAM, LAST_ANALYZED")


def _history_trigger(d: Dialect, table: str, owner: str, rows: str, switch: bool = False) -> list[str]:
    new = ", ".join(f"NEW.{c.strip()}" for c in _HISTORY_STATS.split(","))
    # from migration 15, a commit may turn keeping off (colstats.history.enabled=false, for a backfill)
    keep = "(SELECT KEEP FROM STATS_HISTORY_CONTEXT WHERE ID = 1)"
    when = (f"{keep} IS DISTINCT FROM 0" if d.postgresql else f"{keep} IS NOT 0") if switch else ""
    now = "CAST(extract(epoch FROM now()) AS BIGINT)" if d.postgresql else "CAST(strftime('%s', 'now') AS INTEGER)"
    return d.trigger(f"{table}_HISTORY", "INSERT", table, f"""INSERT INTO COL_STATS_HISTORY (TBL_ID, PART_NAME, COLUMN_NAME,
        ENGINE, {_HISTORY_STATS}, NUM_ROWS, TXN_ID, WRITE_ID, CAUSE, RECORDED_AT)
    SELECT {owner}, NEW.COLUMN_NAME, NEW.ENGINE, {new}, ({rows}), C.TXN_ID,
        (SELECT T2W_WRITEID FROM TXN_TO_WRITE_ID WHERE T2W_TXNID = C.TXN_ID AND T2W_DATABASE = NEW.DB_NAME
         AND T2W_TABLE = NEW.TABLE_NAME), C.CAUSE, {now}
    FROM (SELECT 1) ONE LEFT JOIN STATS_HISTORY_CONTEXT C ON C.ID = 1""", when)


_TAB_ROWS = "SELECT CAST(PARAM_VALUE AS INTEGER) FROM TABLE_PARAMS WHERE TBL_ID = NEW.TBL_ID AND PARAM_KEY = 'numRows'"
_PART_ROWS = ("SELECT CAST(PARAM_VALUE AS INTEGER) FROM PARTITION_PARAMS WHERE PART_ID = NEW.PART_ID "
              "AND PARAM_KEY = 'numRows'")
_PART_OWNER = "(SELECT TBL_ID FROM PARTITIONS WHERE PART_ID = NEW.PART_ID), NEW.PART_NAME"


def _v10(d: Dialect) -> list[str]:
    return [*_statements(d, """CREATE TABLE COL_STATS_HISTORY (
    HISTORY_ID INTEGER PRIMARY KEY,
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    PART_NAME TEXT,
    COLUMN_NAME TEXT NOT NULL,
    ENGINE TEXT NOT NULL,
    COLUMN_TYPE TEXT NOT NULL,
    LOW_VALUE TEXT,
    HIGH_VALUE TEXT,
    LONG_LOW_VALUE INTEGER,
    LONG_HIGH_VALUE INTEGER,
    DOUBLE_LOW_VALUE REAL,
    DOUBLE_HIGH_VALUE REAL,
    BIG_DECIMAL_LOW_VALUE TEXT,
    BIG_DECIMAL_HIGH_VALUE TEXT,
    NUM_NULLS INTEGER,
    NUM_DISTINCTS INTEGER,
    BIT_VECTOR BLOB,
    AVG_COL_LEN REAL,
    MAX_COL_LEN INTEGER,
    NUM_TRUES INTEGER,
    NUM_FALSES INTEGER,
    LOW_VALUE_MICROS INTEGER,
    HIGH_VALUE_MICROS INTEGER,
    HISTOGRAM BLOB,
    LAST_ANALYZED INTEGER NOT NULL,
    NUM_ROWS INTEGER,
    TXN_ID INTEGER,
    WRITE_ID INTEGER,
    CAUSE TEXT,
    RECORDED_AT INTEGER NOT NULL
);
CREATE INDEX COL_STATS_HISTORY_CELL ON COL_STATS_HISTORY (TBL_ID, COLUMN_NAME, PART_NAME, HISTORY_ID);
CREATE INDEX COL_STATS_HISTORY_TXN ON COL_STATS_HISTORY (TXN_ID);
CREATE TABLE STATS_HISTORY_CONTEXT (
    ID INTEGER PRIMARY KEY CHECK (ID = 1),
    TXN_ID INTEGER,
    CAUSE TEXT
);
CREATE TABLE STATS_EXPECTATIONS (
    EXPECTATION_ID INTEGER PRIMARY KEY,
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    COLUMN_NAME TEXT NOT NULL,
    RULES TEXT NOT NULL,
    CREATED_AT INTEGER NOT NULL
);
CREATE INDEX STATS_EXPECTATIONS_COLUMN ON STATS_EXPECTATIONS (TBL_ID, COLUMN_NAME);
CREATE TABLE STATS_EXPECTATION_RESULTS (
    EXPECTATION_ID INTEGER NOT NULL REFERENCES STATS_EXPECTATIONS (EXPECTATION_ID) ON DELETE CASCADE,
    HISTORY_ID INTEGER NOT NULL REFERENCES COL_STATS_HISTORY (HISTORY_ID) ON DELETE CASCADE,
    RULE TEXT NOT NULL,
    PASSED INTEGER NOT NULL,
    FIGURE TEXT,
    CHECKED_AT INTEGER NOT NULL,
    PRIMARY KEY (EXPECTATION_ID, HISTORY_ID, RULE)
);
CREATE INDEX STATS_EXPECTATION_RESULTS_STATE ON STATS_EXPECTATION_RESULTS (HISTORY_ID);"""),
            *_history_trigger(d, "TAB_COL_STATS", "NEW.TBL_ID, NULL", _TAB_ROWS),
            *_history_trigger(d, "PART_COL_STATS", _PART_OWNER, _PART_ROWS),
            *d.trigger("PARTITION_HISTORY_DROPPED", "DELETE", "PARTITIONS",
                       "DELETE FROM COL_STATS_HISTORY WHERE TBL_ID = OLD.TBL_ID AND PART_NAME = OLD.PART_NAME")]


# The top values a skew report counted, kept on the state of the column they describe (metastore.history):
# JSON, so drift can compare strings, which have no KLL sketch.
_V11 = """
ALTER TABLE COL_STATS_HISTORY ADD COLUMN TOP_VALUES TEXT;
"""

# The data files of an Iceberg or Delta table's snapshot, per partition, as the format's metadata lists them
# (its directories also hold files of older snapshots, which no reader of this one sees): what reads and the
# freshness rule take in place of a directory listing. ADDED_IN is the snapshot id (Delta: the log version)
# that added the file, RECORD_COUNT the rows the format counts in it, CONTENT 1 for a position-delete file. THETA_SKETCHES keeps each partition's
# theta sketch of a column in Iceberg's serialization (what a Puffin blob holds), with a digest of the files
# it was computed from: a table-level blob is their union, and only partitions whose files changed are scanned.
_V12 = """
CREATE TABLE SNAPSHOT_FILES (
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    PART_ID INTEGER REFERENCES PARTITIONS (PART_ID) ON DELETE CASCADE,
    FILE_PATH TEXT NOT NULL,
    FILE_SIZE INTEGER NOT NULL,
    ADDED_IN INTEGER NOT NULL,
    RECORD_COUNT INTEGER,
    CONTENT INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX SNAPSHOT_FILES_BY_OWNER ON SNAPSHOT_FILES (TBL_ID, PART_ID);
CREATE INDEX SNAPSHOT_FILES_BY_PART ON SNAPSHOT_FILES (PART_ID);
CREATE TABLE THETA_SKETCHES (
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    PART_ID INTEGER REFERENCES PARTITIONS (PART_ID) ON DELETE CASCADE,
    COLUMN_NAME TEXT NOT NULL,
    FILES_DIGEST TEXT NOT NULL,
    SKETCH BLOB NOT NULL
);
CREATE UNIQUE INDEX THETA_SKETCHES_BY_OWNER ON THETA_SKETCHES (TBL_ID, IFNULL(PART_ID, -1), COLUMN_NAME);
CREATE INDEX THETA_SKETCHES_BY_PART ON THETA_SKETCHES (PART_ID);
"""

# Each snapshot file's figures as its format's metadata keeps them, JSON {column: [nulls, low, high, exact]}
# (values as table metadata keeps them): Drill's FILE level and pruning take them in place of footers.
_V13 = """
ALTER TABLE SNAPSHOT_FILES ADD COLUMN FIGURES TEXT;
"""

# Auto-analyze workers: the owners (a partition's name, '' for an unpartitioned table) each worker's ANALYZE
# transaction claims, alive while that transaction is open; and every round a worker ran, with its options (JSON)
# and what it did (TABLES: JSON, per table the partitions analyzed and the seconds, or the error).
_V14 = """
CREATE TABLE AUTOANALYZE_CLAIMS (
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    OWNER TEXT NOT NULL,
    TXN_ID INTEGER NOT NULL REFERENCES TXNS (TXN_ID),
    CLAIMED_AT REAL NOT NULL,
    PRIMARY KEY (TBL_ID, OWNER)
);
CREATE INDEX AUTOANALYZE_CLAIMS_BY_TXN ON AUTOANALYZE_CLAIMS (TXN_ID);
CREATE TABLE AUTOANALYZE_ROUNDS (
    ROUND_ID INTEGER PRIMARY KEY,
    WORKER TEXT NOT NULL,
    STARTED_AT REAL NOT NULL,
    ENDED_AT REAL,
    OPTIONS TEXT NOT NULL,
    DUE INTEGER NOT NULL DEFAULT 0,
    ANALYZED INTEGER NOT NULL DEFAULT 0,
    LEFT_FOR_LATER INTEGER NOT NULL DEFAULT 0,
    FAILED INTEGER NOT NULL DEFAULT 0,
    TABLES TEXT
);
"""

# History that fits a Hive-sized table: a commit may keep no history (STATS_HISTORY_CONTEXT.KEEP 0); a state
# equal to its cell's previous one is not kept again, the previous one noting when it was confirmed
# (CONFIRMED_AT); a state past the latest `colstats.history.sketches` of its cell loses its sketches and
# keeps what drift checks need of them (QUANTILES: JSON, its KLL quartiles, decile edges and its shares of
# them).
def _v15(d: Dialect) -> list[str]:
    return [*_statements(d, """ALTER TABLE COL_STATS_HISTORY ADD COLUMN CONFIRMED_AT INTEGER;
ALTER TABLE COL_STATS_HISTORY ADD COLUMN QUANTILES TEXT;
ALTER TABLE STATS_HISTORY_CONTEXT ADD COLUMN KEEP INTEGER NOT NULL DEFAULT 1;"""),
            *d.drop_trigger("TAB_COL_STATS_HISTORY", "TAB_COL_STATS"),
            *d.drop_trigger("PART_COL_STATS_HISTORY", "PART_COL_STATS"),
            *_history_trigger(d, "TAB_COL_STATS", "NEW.TBL_ID, NULL", _TAB_ROWS, switch=True),
            *_history_trigger(d, "PART_COL_STATS", _PART_OWNER, _PART_ROWS, switch=True)]


# History kept by the store itself, one statement per store (metastore.history.keep_states, called by the
# two writers of statistics rows in column_stats.py): the triggers ran their program and lookups once per
# row, 1.3-1.5x a round of auto-analyze's store at 100,000 partitions. A commit finds its states by their
# ids' range (history.last_state), so no index on TXN_ID has to take every state.
def _v16(d: Dialect) -> list[str]:
    return [*d.drop_trigger("TAB_COL_STATS_HISTORY", "TAB_COL_STATS"),
            *d.drop_trigger("PART_COL_STATS_HISTORY", "PART_COL_STATS"), "DROP INDEX COL_STATS_HISTORY_TXN"]

# Frequent values of a column beside its statistics row: Spark's approx_top_k_accumulate sketch (DataSketches'
# frequent-items sketch) of the values. Keyed by the statistics row, so a row replaced by any writer takes
# its sketch with it (INSERT OR REPLACE deletes, and the delete cascades): a sketch is never older than
# the figures beside it. The table level of a partitioned table keeps none: partitions' sketches merge on read.
_V17 = """CREATE TABLE PART_COL_FREQUENT_ITEMS (
    CS_ID INTEGER PRIMARY KEY REFERENCES PART_COL_STATS (CS_ID) ON DELETE CASCADE,
    ITEMS BLOB NOT NULL
);
CREATE TABLE TAB_COL_FREQUENT_ITEMS (
    CS_ID INTEGER PRIMARY KEY REFERENCES TAB_COL_STATS (CS_ID) ON DELETE CASCADE,
    ITEMS BLOB NOT NULL
);
"""

# The count of values a statistics row describes where they are not the rows: an array's elements
# (`tags.element`), a map's entries (`attrs.key`); NULL for every other column, whose values are the rows.
_V18 = """ALTER TABLE TAB_COL_STATS ADD COLUMN NUM_VALUES INTEGER;
ALTER TABLE PART_COL_STATS ADD COLUMN NUM_VALUES INTEGER;
ALTER TABLE COL_STATS_HISTORY ADD COLUMN NUM_VALUES INTEGER;
"""

# An object store's file is told apart by its ETag, which changes with its bytes: its modification time has
# one-second resolution and is the upload's, so a same-size rewrite within a second keeps it. NULL for a local
# file, whose state is its modification time.
_V19 = """ALTER TABLE ANALYZED_FILES ADD COLUMN ETAG TEXT;
"""

# A transaction's start and heartbeat are seconds with their fraction (SQLite's INTEGER column keeps a REAL as it
# is); PostgreSQL's BIGINT would round them, so a heartbeat could look up to half a second older or newer.
def _v20(d: Dialect) -> list[str]:
    if not d.postgresql:
        return []
    return [f"ALTER TABLE TXNS ALTER COLUMN {column} TYPE DOUBLE PRECISION"
            for column in ("TXN_STARTED", "TXN_LAST_HEARTBEAT")]


# A history cell's states are found by partition name, NULL for the table's own level: PostgreSQL's index cannot
# serve IS NOT DISTINCT FROM, so it has one over the name with NULL as '' (Dialect.same_partition); SQLite's
# index on the name serves its IS.
def _v21(d: Dialect) -> list[str]:
    if not d.postgresql:
        return []
    return ["CREATE INDEX COL_STATS_HISTORY_CELL_BY_NAME ON COL_STATS_HISTORY "
            "(TBL_ID, COLUMN_NAME, (COALESCE(PART_NAME, '')), HISTORY_ID)"]


# Commits of different tables run side by side on PostgreSQL (Database.transaction's tables), each naming itself
# in a row of its own connection (Dialect.history_context): the one-row check goes there.
def _v22(d: Dialect) -> list[str]:
    return ["ALTER TABLE STATS_HISTORY_CONTEXT DROP CONSTRAINT STATS_HISTORY_CONTEXT_ID_CHECK"] if d.postgresql else []


# PostgreSQL runs a trigger's function once for each row: the stale markers, 63 us a row, were 1.26 s of the 1.67 s
# a daily round's delete of 20,000 replaced statistics rows took at 100,000 partitions (measured). There they run once
# for each statement, over its rows (transition tables, which take no column list: a rename or write is told apart by
# comparing the old and new rows); SQLite keeps its triggers for each row, which cost it no more.
_STALE_ROWS = {
    "PART_COL_STATS_UPDATED": ("UPDATE", "PART_COL_STATS", "SELECT PART_ID FROM NEW_ROWS"),
    "PART_COL_STATS_DELETED": ("DELETE", "PART_COL_STATS", "SELECT PART_ID FROM OLD_ROWS"),
    "PARTITION_ADDED": ("INSERT", "PARTITIONS", "SELECT PART_ID FROM NEW_ROWS"),
    "PARTITION_RENAMED_OR_WRITTEN": ("UPDATE", "PARTITIONS", "SELECT N.PART_ID FROM NEW_ROWS N JOIN OLD_ROWS O "
                                     "ON O.PART_ID = N.PART_ID WHERE N.PART_NAME IS DISTINCT FROM O.PART_NAME "
                                     "OR N.WRITE_ID IS DISTINCT FROM O.WRITE_ID"),
    **{f"PARTITION_{kind}_{event}D" if event != "INSERT" else f"PARTITION_{kind}_INSERTED": (
        event, "PARTITION_PARAMS", " UNION ".join(f"SELECT PART_ID FROM {rows} WHERE PARAM_KEY = '{key}'" for rows in (
            ("NEW_ROWS",) if event == "INSERT" else ("OLD_ROWS",) if event == "DELETE" else ("NEW_ROWS", "OLD_ROWS"))))
       for kind, key in (("ROWS", _NUM_ROWS), ("FLAGS", _ACCURATE)) for event in ("INSERT", "UPDATE", "DELETE")},
}


def _v23(d: Dialect) -> list[str]:
    if not d.postgresql:
        return []
    statements: list[str] = []
    for name, (event, table, rows) in _STALE_ROWS.items():
        statements += [*d.drop_trigger(name, table), *d.statement_trigger(
            name, event, table, f"INSERT INTO STALE_STATS_SEGMENTS (TBL_ID, PART_ID) SELECT P.TBL_ID, P.PART_ID "
                                f"FROM PARTITIONS P WHERE P.PART_ID IN ({rows}) ON CONFLICT DO NOTHING")]
    # the partition rows are gone: their tables' IDs come from the deleted rows (none when the table went too)
    statements += [*d.drop_trigger("PARTITION_DROPPED", "PARTITIONS"), *d.statement_trigger(
        "PARTITION_DROPPED", "DELETE", "PARTITIONS",
        "INSERT INTO STALE_STATS_SEGMENTS (TBL_ID, PART_ID) SELECT O.TBL_ID, O.PART_ID FROM OLD_ROWS O "
        "WHERE EXISTS (SELECT 1 FROM TBLS T WHERE T.TBL_ID = O.TBL_ID) ON CONFLICT DO NOTHING")]
    return statements


# A double's NaN values, counted apart from its NULLs (Iceberg's nan_value_counts; not Hive's): in the statistics
# rows, their kept states and the merged segments. NULL where not counted (rows from before, other engines').
_V24 = """ALTER TABLE TAB_COL_STATS ADD COLUMN NUM_NANS INTEGER;
ALTER TABLE PART_COL_STATS ADD COLUMN NUM_NANS INTEGER;
ALTER TABLE COL_STATS_HISTORY ADD COLUMN NUM_NANS INTEGER;
ALTER TABLE PART_STATS_SEGMENTS ADD COLUMN NUM_NANS INTEGER;
"""


# What a reader of the tables themselves (`%sql`) needs beside each COLUMN_STATS_ACCURATE flag: when its statistics
# were computed and what keeps it true. A managed table's flags are kept true by every write through the lab (write
# IDs); an external table's say what its files were at that ANALYZE, and another job may have changed them since:
# the lab compares them with a listing before it uses a figure, a SQL reader cannot.
_HOLDS_WHILE = ("CASE WHEN T.TBL_TYPE = 'EXTERNAL_TABLE' THEN 'its files are those ANALYZE read at PROVEN_AT: "
                "another job may have changed them since (the lab lists them before it uses a figure, as colstats-lab "
                "check says)' ELSE 'no write since: every write through the lab keeps the flag true' END")
_V25 = f"""CREATE VIEW STATS_FLAGS AS
SELECT D.NAME AS DB_NAME, T.TBL_NAME AS TABLE_NAME, P.PART_NAME AS PART_NAME,
       PP.PARAM_VALUE AS COLUMN_STATS_ACCURATE,
       (SELECT max(S.LAST_ANALYZED) FROM PART_COL_STATS S WHERE S.PART_ID = P.PART_ID) AS PROVEN_AT,
       {_HOLDS_WHILE} AS HOLDS_WHILE
FROM PARTITIONS P JOIN TBLS T ON T.TBL_ID = P.TBL_ID JOIN DBS D ON D.DB_ID = T.DB_ID
LEFT JOIN PARTITION_PARAMS PP ON PP.PART_ID = P.PART_ID AND PP.PARAM_KEY = 'COLUMN_STATS_ACCURATE'
UNION ALL
SELECT D.NAME, T.TBL_NAME, NULL, TP.PARAM_VALUE,
       (SELECT max(S.LAST_ANALYZED) FROM TAB_COL_STATS S WHERE S.TBL_ID = T.TBL_ID),
       {_HOLDS_WHILE}
FROM TBLS T JOIN DBS D ON D.DB_ID = T.DB_ID
LEFT JOIN TABLE_PARAMS TP ON TP.TBL_ID = T.TBL_ID AND TP.PARAM_KEY = 'COLUMN_STATS_ACCURATE'
"""


# A number column's sum and the sum of its squared deviations from the mean (column_statistics.model.Moments), over
# its values that are neither NULL nor NaN: a profile's mean and standard deviation, kept by ANALYZE's one pass.
# NULL where not kept (statistics from the files' metadata, a sample, another engine, or rows from before).
_V26 = """ALTER TABLE TAB_COL_STATS ADD COLUMN SUM_VALUES REAL;
ALTER TABLE TAB_COL_STATS ADD COLUMN SUM_SQUARED_DEVIATIONS REAL;
ALTER TABLE PART_COL_STATS ADD COLUMN SUM_VALUES REAL;
ALTER TABLE PART_COL_STATS ADD COLUMN SUM_SQUARED_DEVIATIONS REAL;
ALTER TABLE COL_STATS_HISTORY ADD COLUMN SUM_VALUES REAL;
ALTER TABLE COL_STATS_HISTORY ADD COLUMN SUM_SQUARED_DEVIATIONS REAL;
ALTER TABLE PART_STATS_SEGMENTS ADD COLUMN SUM_VALUES REAL;
ALTER TABLE PART_STATS_SEGMENTS ADD COLUMN SUM_SQUARED_DEVIATIONS REAL;
"""


# A sketch of each whole row's hash, per partition (PART_ID) or for an unpartitioned table (PART_ID NULL): the
# distinct rows, hence the duplicate rows, of a profile. Written by an ANALYZE that reads every column, with the
# owner's write ID then: a write since (a larger WRITE_ID on the owner) leaves it describing other rows, and the
# reader then says so instead of using it.
_V27 = """CREATE TABLE ROW_SKETCHES (
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    PART_ID INTEGER REFERENCES PARTITIONS (PART_ID) ON DELETE CASCADE,
    SKETCH BLOB NOT NULL,
    NUM_ROWS INTEGER NOT NULL,
    WRITE_ID INTEGER NOT NULL,
    LAST_ANALYZED INTEGER NOT NULL
);
CREATE INDEX ROW_SKETCHES_BY_OWNER ON ROW_SKETCHES (TBL_ID, PART_ID);
CREATE INDEX ROW_SKETCHES_BY_PART ON ROW_SKETCHES (PART_ID);
"""

# Runs kept (explain(run=True)): each run's operators, estimates beside actuals and what ran (JSON), the query
# and its fingerprint (literals as ?: runs of one query shape compare), and per lab table read the write IDs its
# statistics were planned under; bounded by colstats.runs.keep, oldest first
_V28 = """CREATE TABLE QUERY_RUNS (
    RUN_ID INTEGER PRIMARY KEY,
    FINGERPRINT TEXT NOT NULL,
    QUERY_TEXT TEXT NOT NULL,
    RAN_AT INTEGER NOT NULL,
    SECONDS REAL NOT NULL,
    OPERATORS TEXT NOT NULL
);
CREATE INDEX QUERY_RUNS_BY_FINGERPRINT ON QUERY_RUNS (FINGERPRINT, RUN_ID);
CREATE TABLE QUERY_RUN_TABLES (
    RUN_ID INTEGER NOT NULL REFERENCES QUERY_RUNS (RUN_ID) ON DELETE CASCADE,
    TBL_ID INTEGER NOT NULL REFERENCES TBLS (TBL_ID) ON DELETE CASCADE,
    VALID_WRITE_IDS TEXT,
    STATISTICS_STATE TEXT NOT NULL,
    PRIMARY KEY (RUN_ID, TBL_ID)
);
CREATE INDEX QUERY_RUN_TABLES_BY_TABLE ON QUERY_RUN_TABLES (TBL_ID, RUN_ID);
"""


# the folders the lab made for the managed tables it created before it kept a record of them: exactly those at
# their database's folder joined with their name (common.OWNED_LOCATION); a table anywhere else keeps its files
# when dropped
_V29 = """INSERT INTO TABLE_PARAMS (TBL_ID, PARAM_KEY, PARAM_VALUE)
SELECT T.TBL_ID, 'colstats.location.owned', S.LOCATION
FROM TBLS T JOIN SDS S ON S.SD_ID = T.SD_ID JOIN DBS D ON D.DB_ID = T.DB_ID
WHERE T.TBL_TYPE = 'MANAGED_TABLE' AND S.LOCATION = D.DB_LOCATION_URI || '/' || T.TBL_NAME
AND NOT EXISTS (SELECT 1 FROM TABLE_PARAMS P WHERE P.TBL_ID = T.TBL_ID AND P.PARAM_KEY = 'colstats.location.owned')
"""


# A number column's values equal to 0 and a KLL sketch of a string's (a binary's) lengths, counted by the same pass
# as its sums (column_statistics.model.Moments, StringColumnStatsData.lengths): a profile's exact zeros and its
# length histogram. NULL where not kept (a sample, the files' metadata, another engine, or rows from before).
_V30 = """ALTER TABLE TAB_COL_STATS ADD COLUMN NUM_ZEROS INTEGER;
ALTER TABLE TAB_COL_STATS ADD COLUMN LENGTH_HISTOGRAM BLOB;
ALTER TABLE PART_COL_STATS ADD COLUMN NUM_ZEROS INTEGER;
ALTER TABLE PART_COL_STATS ADD COLUMN LENGTH_HISTOGRAM BLOB;
ALTER TABLE COL_STATS_HISTORY ADD COLUMN NUM_ZEROS INTEGER;
ALTER TABLE COL_STATS_HISTORY ADD COLUMN LENGTH_HISTOGRAM BLOB;
ALTER TABLE PART_STATS_SEGMENTS ADD COLUMN NUM_ZEROS INTEGER;
ALTER TABLE PART_STATS_SEGMENTS ADD COLUMN LENGTH_HISTOGRAM BLOB;
"""


# a migration is a script of statements in SQLite's types (Dialect.ddl turns them into PostgreSQL's), or a
# function of the dialect returning its statements, where they differ (triggers)
# An Iceberg file's data sequence number (an equality delete applies to data files of smaller ones) and an
# equality delete's columns (JSON, field ids); CONTENT 3 for an equality-delete file.
_V31 = """ALTER TABLE SNAPSHOT_FILES ADD COLUMN SEQUENCE_NUMBER INTEGER;
ALTER TABLE SNAPSHOT_FILES ADD COLUMN EQUALITY_IDS TEXT;
"""

MIGRATIONS: list[str | Callable[[Dialect], list[str]]] = [
    _V1, _V2, _V3, _v4, _V5, _V6, _v7, _v8, _V9, _v10, _V11, _V12, _V13, _V14, _v15, _v16, _V17, _V18, _V19, _v20, _v21, _v22, _v23, _V24, _V25, _V26, _V27,
    _V28, _V29, _V30, _V31]


def migrate(db: Database) -> int:
    """Runs the migrations this database has not seen yet, in one transaction that holds every other process's
    migration off; returns the schema version now in force. The version is read first, without a write: a
    metastore that needs none opens beside a writer holding it (a dashboard, a check, a reading notebook), and
    a read-only one opens as long as its schema is this version's."""
    with db.snapshot():
        current = db.schema_version()
    if current > len(MIGRATIONS):
        raise MetaException(f"metastore schema version {current} at {db.display_url} is newer than this "
                            f"colstats_lab knows ({len(MIGRATIONS)}): upgrade colstats_lab")
    if current == len(MIGRATIONS):
        return current
    if getattr(db, "read_only", False):
        raise MetastoreUnavailable(f"the metastore at {db.display_url} is read-only here and of schema version "
                                   f"{current}, older than this colstats_lab's {len(MIGRATIONS)}: open it once where "
                                   "it can be written to upgrade it")
    with db.migration():
        current = db.schema_version()  # again, under the lock: another process may have migrated meanwhile
        for version in range(current, len(MIGRATIONS)):
            for statement in migration_statements(version, db.dialect):
                db.execute_script_statement(statement)
            db.set_schema_version(version + 1)
    return len(MIGRATIONS)


def migration_statements(version: int, dialect: Dialect) -> list[str]:
    """The statements of migration `version` (counted from 0) as `dialect`'s database runs them."""
    migration = MIGRATIONS[version]
    statements = migration(dialect) if callable(migration) else _statements(dialect, migration)
    return [dialect.ddl(statement) for statement in statements]


def _statements(d: Dialect, script: str) -> list[str]:
    """The script's statements: split at ";", so migrations keep ";" out of their string literals."""
    return [statement.strip() for statement in script.split(";") if statement.strip()]

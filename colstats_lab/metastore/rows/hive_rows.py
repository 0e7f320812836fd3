"""Plain functions over the metastore's database that every repository shares: a database's id, a table's row,
a partition's id, owners' parameters; and the constants and small checks the repositories share. No repository
state: each takes the database it reads."""
from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING

from ...column_statistics.model import ColumnStatistics, ColumnStatisticsObj, Table
from ...column_statistics.names import object_name_problem
from ...column_statistics.stats_rows import ROW_COLUMNS
from ...errors import InvalidInputException, InvalidObjectException, NoSuchObjectException
from ...files import FileState
from .write_ids import ValidWriteIdList

if TYPE_CHECKING:
    from ..db import Database, Row

DEFAULT_DB = "default"
HIVE, DRILL = "hive", "drill"  # the engines of kept states: statistics (ANALYZE, writes), REFRESH METADATA


NO_FILES: FileState = ("", 0, 0)
STATS_BATCH = 2_000  # partitions a batch when storing many partitions' statistics
PART_STATS_INSERT = ("PART_ID", "PART_NAME", "CAT_NAME", "DB_NAME", "TABLE_NAME", *ROW_COLUMNS, "LAST_ANALYZED",
                      "ENGINE")
DB_AT, TABLE_AT = PART_STATS_INSERT.index("DB_NAME"), PART_STATS_INSERT.index("TABLE_NAME")


def epoch_seconds() -> int:
    return int(time.time())


def is_transactional(table: Table) -> bool:
    return table.parameters.get("transactional", "").lower() == "true"


def process_alive(pid: int | None) -> bool:
    if not pid:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def checked_stats(stats) -> ColumnStatistics:
    if not isinstance(stats, ColumnStatistics) or not all(isinstance(o, ColumnStatisticsObj) for o in stats.statsObj):
        raise InvalidInputException(f"expected a ColumnStatistics of ColumnStatisticsObj, not {type(stats).__name__}")
    return stats


# a managed table's parameter: the folder the lab created for it, the only one DROP TABLE may delete
OWNED_LOCATION = "colstats.location.owned"


def checked_name(name: str, what: str) -> str:
    if what in ("table", "database"):
        problem = object_name_problem(name, what)
        if problem:
            raise InvalidObjectException(problem)
    elif not name or not isinstance(name, str) or len(name) > 767 or "\x00" in name:
        raise InvalidObjectException(f"invalid {what} name {name!r}")
    return name.lower()


def json_list(items) -> str:
    return json.dumps(list(items))


def db_id(db: Database, name: str, required: bool = True) -> int | None:
    row = db.execute("SELECT DB_ID FROM DBS WHERE NAME = ?", (name.lower(),)).fetchone()
    if row is None and required:
        raise NoSuchObjectException(f"database {name} does not exist")
    return row[0] if row else None


def insert_db(db: Database, name: str, location: str, description: str | None) -> None:
    db.execute(
        'INSERT INTO DBS (NAME, "DESC", DB_LOCATION_URI, OWNER_NAME, CREATE_TIME) VALUES (?, ?, ?, ?, ?)',
        (name, description, location, os.environ.get("USER", "colstats"), epoch_seconds()),
    )


def table_row(db: Database, db_name: str, table_name: str) -> Row:
    row = db.execute(
        "SELECT T.*, S.LOCATION, S.INPUT_FORMAT, S.CD_ID FROM TBLS T JOIN DBS D ON T.DB_ID = D.DB_ID "
        "LEFT JOIN SDS S ON S.SD_ID = T.SD_ID WHERE D.NAME = ? AND T.TBL_NAME = ?",
        (db_name.lower(), table_name.lower()),
    ).fetchone()
    if row is None:
        raise NoSuchObjectException(f"table {db_name.lower()}.{table_name.lower()} does not exist")
    return row


def partition_keys(db: Database, tbl_id: int) -> list[str]:
    return [r[0] for r in db.execute(
        "SELECT PKEY_NAME FROM PARTITION_KEYS WHERE TBL_ID = ? ORDER BY INTEGER_IDX", (tbl_id,))]


def part_id(db: Database, db_name: str, table_name: str, part_name: str) -> int:
    row = table_row(db, db_name, table_name)
    part = db.execute("SELECT PART_ID FROM PARTITIONS WHERE TBL_ID = ? AND PART_NAME = ?",
                              (row["TBL_ID"], part_name)).fetchone()
    if part is None:
        raise NoSuchObjectException(
            f"partition {part_name} of {db_name.lower()}.{table_name.lower()} does not exist")
    return part[0]


def params(db: Database, table: str, id_column: str, owner_id: int) -> dict[str, str]:
    return params_many(db, table, id_column, [owner_id]).get(owner_id, {})


def params_many(db: Database, table: str, id_column: str, owner_ids: list[int]) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {}
    for r in db.execute(
        f"SELECT {id_column}, PARAM_KEY, PARAM_VALUE FROM {table} "
        f"WHERE {id_column} IN (SELECT CAST(value AS INTEGER) FROM json_each(?))", (json_list(owner_ids),)
    ):
        out.setdefault(r[0], {})[r[1]] = r[2]
    return out


def insert_params(db: Database, table: str, id_column: str, params: dict[int, dict[str, str]]) -> None:
    """The parameters of new owners (their id: their parameters), in one batch."""
    db.insert_rows(table, (id_column, "PARAM_KEY", "PARAM_VALUE"),
                        [(owner_id, key, str(value)) for owner_id, owned in params.items()
                         for key, value in owned.items()])


def update_params(db: Database, table: str, id_column: str, owner_id: int, updates: dict[str, str | None]) -> None:
    update_params_many(db, table, id_column, {owner_id: updates})


def update_params_many(db: Database, table: str, id_column: str, updates: dict[int, dict[str, str | None]]) -> None:
    """Each owner's parameters set (a value) or removed (None): one batch of each, not a statement per
    parameter (a round trip each on a server)."""
    removed = [(owner_id, key) for owner_id, changes in updates.items() for key, value in changes.items()
               if value is None]
    kept = [(owner_id, key, str(value)) for owner_id, changes in updates.items() for key, value in changes.items()
            if value is not None]
    db.dialect.delete_rows(db, table, (id_column, "PARAM_KEY"), removed)
    db.dialect.upsert_rows(db, table, (id_column, "PARAM_KEY", "PARAM_VALUE"), (id_column, "PARAM_KEY"),
                                kept)


def existing_partition_names(db: Database, table: Table, part_names: list[str]) -> list[str]:
    """Those of `part_names` that are partitions of the table, in name order."""
    row = table_row(db, table.dbName, table.tableName)
    return [r[0] for r in db.execute(
        "SELECT PART_NAME FROM PARTITIONS WHERE TBL_ID = ? AND PART_NAME IN (SELECT value FROM json_each(?)) "
        "ORDER BY PART_NAME", (row["TBL_ID"], json_list(part_names)))]


def require_columns(table: Table, col_names: list[str]) -> None:
    """Raises NoSuchObjectException naming the first of `col_names` that is not a column of `table` (nor one of
    its figure columns)."""
    known = {c.name for c in table.cols} | {c.name for c in table.figure_columns}
    for name in col_names:
        if name.lower() not in known:
            raise table.no_such_column(name.lower())


def valid_write_ids(db: Database, table: Table, txn_id: int | None = None) -> ValidWriteIdList:
    """The table's ValidWriteIdList now: every allocated write ID, with the open and aborted ones listed. For a
    transaction's own reads (`txn_id`), its own write is valid."""
    row = db.execute("SELECT NWI_NEXT FROM NEXT_WRITE_ID WHERE NWI_DATABASE = ? AND NWI_TABLE = ?",
                     (table.dbName, table.tableName)).fetchone()
    high_watermark = (row[0] - 1) if row else 0
    open_ids: set[int] = set()
    aborted: set[int] = set()
    for r in db.execute(
        "SELECT W.T2W_WRITEID, T.TXN_STATE, T.TXN_ID FROM TXN_TO_WRITE_ID W "
        "JOIN TXNS T ON T.TXN_ID = W.T2W_TXNID "
        "WHERE W.T2W_DATABASE = ? AND W.T2W_TABLE = ? AND T.TXN_STATE != 'c'",
        (table.dbName, table.tableName),
    ):
        if r[1] == "o" and r[2] == txn_id:
            continue
        (open_ids if r[1] == "o" else aborted).add(r[0])
    return ValidWriteIdList(table.qualified_name, high_watermark, frozenset(open_ids), frozenset(aborted))

"""The metastore: Hive's catalog and column-statistics API over one SQLite file.

Every public method runs in one SQLite transaction, or joins the one opened by
`transaction()`, so a command that makes many calls commits all of them or none.
Writers take `BEGIN IMMEDIATE`; several processes may share the file (WAL mode).
"""
from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
from contextlib import contextmanager
from typing import Iterable, Iterator

from ..coltypes import parse_type
from ..files import FileState, describe_changes, file_changes, list_data_files
from .accurate import PARAM as ACCURATE_PARAM
from .accurate import StatsAccuracy
from .exceptions import (
    AlreadyExistsException,
    InvalidInputException,
    InvalidObjectException,
    MetaException,
    NoSuchObjectException,
)
from .model import (
    AggrStats,
    ColumnStatistics,
    ColumnStatisticsDesc,
    ColumnStatisticsObj,
    FieldSchema,
    Partition,
    SkewedInfo,
    Table,
)
from .names import parse_part_name
from .partition_filter import compile_partition_filter
from .schema import migrate
from .stats_rows import ROW_COLUMNS, StatsColumn, obj_to_row, obj_to_values, row_to_obj
from . import segments
from .segments import PARTITION_STATS_SELECT
from .table_metadata import (
    MetadataAnalysis,
    MetadataUnit,
    TableMetadata,
    drop_table_metadata,
    load_table_metadata,
    metadata_version,
    replace_table_metadata,
)
from .txn import ValidWriteIdList

DEFAULT_DB = "default"
_NO_FILES: FileState = ("", 0, 0)
BUSY_TIMEOUT_MS = 60_000
_STATS_BATCH = 2_000  # partitions a batch when storing many partitions' statistics
_PART_STATS_INSERT = ("PART_ID", "PART_NAME", "CAT_NAME", "DB_NAME", "TABLE_NAME", *ROW_COLUMNS, "LAST_ANALYZED",
                      "ENGINE")


def _now() -> int:
    return int(time.time())


class Metastore:
    """A Hive-schema metastore in the SQLite file at `path` (created and migrated on open)."""

    def __init__(self, path: str, warehouse: str | None = None):
        self.path = os.path.abspath(path)
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.warehouse = os.path.abspath(warehouse or os.path.join(os.path.dirname(self.path), "warehouse"))
        self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                                     check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._conn.execute("PRAGMA foreign_keys = ON")
        self._lock = threading.RLock()
        self.txn_stats_enabled = True  # Hive's hive.txn.stats.enabled
        self.txn_timeout_s = 300.0  # Hive's hive.txn.timeout
        self.ndv_density_function = False  # Hive's hive.metastore.stats.ndv.densityfunction
        # 64 partitions a statistics segment; a file's segments are built with one value (tests use 1
        # on a new file, to build deep segment trees from a few partitions)
        self.segment_bits = segments.BITS
        self._depth = 0
        self._writing = False
        migrate(self._conn)
        with self.transaction():
            if not self._db_id(DEFAULT_DB, required=False):
                self._insert_db(DEFAULT_DB, self.warehouse, "Default Hive database")

    @property
    def url(self) -> str:
        """A SQLAlchemy URL for the file (for jupysql's `%sql`)."""
        return f"sqlite:///{self.path}"

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # ---- transactions -------------------------------------------------------------------

    def transaction(self):
        """One write transaction (BEGIN IMMEDIATE); nested calls join the outer one."""
        return self._scope("BEGIN IMMEDIATE", writing=True)

    def snapshot(self):
        """A consistent read of several statements; joins an open transaction."""
        return self._scope("BEGIN", writing=False)

    @contextmanager
    def _scope(self, begin: str, writing: bool) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._depth:
                if writing and not self._writing:
                    raise MetaException("cannot write inside a read-only metastore snapshot")
                self._depth += 1
                try:
                    yield self._conn
                finally:
                    self._depth -= 1
                return
            self._conn.execute(begin)
            self._depth, self._writing = 1, writing
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")
            finally:
                self._depth, self._writing = 0, False

    # ---- databases ----------------------------------------------------------------------

    def _insert_db(self, name: str, location: str, description: str | None) -> None:
        self._conn.execute(
            'INSERT INTO DBS (NAME, "DESC", DB_LOCATION_URI, OWNER_NAME, CREATE_TIME) VALUES (?, ?, ?, ?, ?)',
            (name, description, location, os.environ.get("USER", "colstats"), _now()),
        )

    def create_database(self, name: str, description: str | None = None, if_not_exists: bool = False) -> None:
        name = _check_name(name, "database")
        with self.transaction():
            if self._db_id(name, required=False):
                if if_not_exists:
                    return
                raise AlreadyExistsException(f"database {name} already exists")
            self._insert_db(name, os.path.join(self.warehouse, f"{name}.db"), description)

    def get_all_databases(self) -> list[str]:
        with self.snapshot() as conn:
            return [r["NAME"] for r in conn.execute("SELECT NAME FROM DBS ORDER BY NAME")]

    def get_database_location(self, name: str) -> str:
        with self.snapshot() as conn:
            self._db_id(name)
            return conn.execute("SELECT DB_LOCATION_URI FROM DBS WHERE NAME = ?", (name.lower(),)).fetchone()[0]

    def drop_database(self, name: str, if_exists: bool = False, cascade: bool = False) -> list[Table]:
        """Drops a database; with cascade its tables too (returned, so their files can be removed)."""
        name = name.lower()
        if name == DEFAULT_DB:
            raise MetaException("cannot drop the default database")
        with self.transaction() as conn:
            db_id = self._db_id(name, required=not if_exists)
            if not db_id:
                return []
            tables = [self.get_table(name, t) for t in self.get_tables(name)]
            if tables and not cascade:
                raise InvalidObjectException(f"database {name} is not empty: it holds {len(tables)} tables")
            for table in tables:
                self.drop_table(name, table.tableName)
            conn.execute("DELETE FROM DBS WHERE DB_ID = ?", (db_id,))
            return tables

    def _db_id(self, name: str, required: bool = True) -> int | None:
        row = self._conn.execute("SELECT DB_ID FROM DBS WHERE NAME = ?", (name.lower(),)).fetchone()
        if row is None and required:
            raise NoSuchObjectException(f"database {name} does not exist")
        return row[0] if row else None

    # ---- tables -------------------------------------------------------------------------

    def create_table(self, table: Table, if_not_exists: bool = False) -> bool:
        """Stores a new table; returns False when it existed and if_not_exists was given."""
        _check_name(table.tableName, "table")
        names = [c.name.lower() for c in table.cols + table.partitionKeys]
        if not table.cols:
            raise InvalidObjectException(f"table {table.qualified_name} has no columns")
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise InvalidObjectException(f"table {table.qualified_name}: column {duplicates[0]} is declared twice")
        for column in table.cols + table.partitionKeys:
            _check_name(column.name, "column")
            parse_type(column.type)
        with self.transaction() as conn:
            db_id = self._db_id(table.dbName)
            if conn.execute("SELECT 1 FROM TBLS WHERE DB_ID = ? AND TBL_NAME = ?",
                            (db_id, table.tableName.lower())).fetchone():
                if if_not_exists:
                    return False
                raise AlreadyExistsException(f"table {table.qualified_name} already exists")
            cd_id = conn.execute("INSERT INTO CDS DEFAULT VALUES").lastrowid
            conn.executemany(
                "INSERT INTO COLUMNS_V2 (CD_ID, COMMENT, COLUMN_NAME, TYPE_NAME, INTEGER_IDX) VALUES (?, ?, ?, ?, ?)",
                [(cd_id, c.comment, c.name.lower(), parse_type(c.type).name, i) for i, c in enumerate(table.cols)],
            )
            sd_id = self._insert_sd(cd_id, table.location, table.inputFormat)
            self._write_skew(sd_id, table.skewedInfo, table.storedAsSubDirectories)
            tbl_id = conn.execute(
                "INSERT INTO TBLS (CREATE_TIME, DB_ID, OWNER, SD_ID, TBL_NAME, TBL_TYPE, WRITE_ID) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (table.createTime or _now(), db_id, os.environ.get("USER", "colstats"), sd_id,
                 table.tableName.lower(), table.tableType, table.writeId),
            ).lastrowid
            conn.executemany(
                "INSERT INTO PARTITION_KEYS (TBL_ID, PKEY_COMMENT, PKEY_NAME, PKEY_TYPE, INTEGER_IDX) "
                "VALUES (?, ?, ?, ?, ?)",
                [(tbl_id, k.comment, k.name.lower(), parse_type(k.type).name, i)
                 for i, k in enumerate(table.partitionKeys)],
            )
            params = dict(table.parameters)
            if table.comment:
                params["comment"] = table.comment
            self._set_params("TABLE_PARAMS", "TBL_ID", tbl_id, params)
            return True

    def _insert_sd(self, cd_id: int, location: str, input_format: str) -> int:
        return self._conn.execute(
            "INSERT INTO SDS (CD_ID, INPUT_FORMAT, OUTPUT_FORMAT, LOCATION) VALUES (?, ?, ?, ?)",
            (cd_id, input_format, input_format, location),
        ).lastrowid

    def get_table(self, db_name: str, table_name: str, valid_write_ids: ValidWriteIdList | None = None) -> Table:
        """The table; raises NoSuchObjectException naming `db.table`. With `valid_write_ids` (a reader's
        snapshot), COLUMN_STATS_ACCURATE is left out where the statistics are not accurate for that
        reader, as Hive's getTable(..., validWriteIdList) leaves it out."""
        with self.snapshot() as conn:
            row = self._table_row(db_name, table_name)
            cols = [FieldSchema(r["COLUMN_NAME"], r["TYPE_NAME"], r["COMMENT"]) for r in conn.execute(
                "SELECT COLUMN_NAME, TYPE_NAME, COMMENT FROM COLUMNS_V2 WHERE CD_ID = ? ORDER BY INTEGER_IDX",
                (row["CD_ID"],))]
            keys = [FieldSchema(r["PKEY_NAME"], r["PKEY_TYPE"], r["PKEY_COMMENT"]) for r in conn.execute(
                "SELECT PKEY_NAME, PKEY_TYPE, PKEY_COMMENT FROM PARTITION_KEYS WHERE TBL_ID = ? ORDER BY INTEGER_IDX",
                (row["TBL_ID"],))]
            params = self._params("TABLE_PARAMS", "TBL_ID", row["TBL_ID"])
            skew, stored = self._read_skews([row["SD_ID"]])[row["SD_ID"]]
            table = Table(
                dbName=db_name.lower(), tableName=row["TBL_NAME"], cols=cols, partitionKeys=keys,
                location=row["LOCATION"], tableType=row["TBL_TYPE"], inputFormat=row["INPUT_FORMAT"],
                parameters=params, createTime=row["CREATE_TIME"], writeId=row["WRITE_ID"],
                comment=params.get("comment"), skewedInfo=skew, storedAsSubDirectories=stored,
            )
            if valid_write_ids is not None and not table.is_partitioned:
                self._strip_for_reader(table, [(None, table.parameters, table.writeId, table.location)],
                                       valid_write_ids)
            return table

    def _strip_for_reader(self, table: Table, owners: list[tuple], valid: ValidWriteIdList) -> None:
        """Removes COLUMN_STATS_ACCURATE from the parameters of owners whose statistics are not accurate
        for a reader with `valid` (the reader rule: Hive strips the flag rather than showing it)."""
        changed = self.external_file_changes(table, {name: location for name, _, _, location in owners})
        for name, params, write_id, _ in owners:
            if not self._compliance(table, params, write_id, "", [], valid, changed.get(name))[0]:
                params.pop(ACCURATE_PARAM, None)

    def get_tables(self, db_name: str) -> list[str]:
        with self.snapshot() as conn:
            db_id = self._db_id(db_name)
            return [r[0] for r in conn.execute("SELECT TBL_NAME FROM TBLS WHERE DB_ID = ? ORDER BY TBL_NAME", (db_id,))]

    def table_exists(self, db_name: str, table_name: str) -> bool:
        with self.snapshot():
            try:
                self._table_row(db_name, table_name)
                return True
            except NoSuchObjectException:
                return False

    def drop_table(self, db_name: str, table_name: str, if_exists: bool = False) -> Table | None:
        """Drops a table with its partitions and statistics in one transaction; returns what it was."""
        with self.transaction() as conn:
            try:
                table = self.get_table(db_name, table_name)
            except NoSuchObjectException:
                if if_exists:
                    return None
                raise
            row = self._table_row(db_name, table_name)
            sd_ids = [r[0] for r in conn.execute("SELECT SD_ID FROM PARTITIONS WHERE TBL_ID = ?", (row["TBL_ID"],))]
            conn.execute("DELETE FROM TBLS WHERE TBL_ID = ?", (row["TBL_ID"],))
            sd_ids.append(row["SD_ID"])
            conn.executemany("DELETE FROM SDS WHERE SD_ID = ?", [(i,) for i in sd_ids])
            conn.execute("DELETE FROM CDS WHERE CD_ID = ?", (row["CD_ID"],))
            conn.execute("DELETE FROM NEXT_WRITE_ID WHERE NWI_DATABASE = ? AND NWI_TABLE = ?",
                         (table.dbName, table.tableName))
            # a table created again under the name starts its write IDs afresh (Hive cleans these up too)
            conn.execute("DELETE FROM TXN_TO_WRITE_ID WHERE T2W_DATABASE = ? AND T2W_TABLE = ?",
                         (table.dbName, table.tableName))
            return table

    def alter_table_params(self, db_name: str, table_name: str, updates: dict[str, str | None],
                           write_id: int | None = None, valid_write_ids: ValidWriteIdList | None = None) -> bool:
        """Sets table parameters (None removes a key) and, if given, the write ID of this stats writer.

        Marking a transactional table's statistics accurate needs the writer's write ID and its
        ValidWriteIdList (MetaException otherwise); when the current stats were written by a write the
        writer cannot see, they are stored but not accurate (HIVE-19416). Returns whether the
        statistics are accurate afterwards.
        """
        with self.transaction() as conn:
            row = self._table_row(db_name, table_name)
            table = self.get_table(db_name, table_name)
            accurate = self._guard_accuracy(table, row["WRITE_ID"], updates, write_id, valid_write_ids)
            self._update_params("TABLE_PARAMS", "TBL_ID", row["TBL_ID"], updates)
            if write_id is not None:
                conn.execute("UPDATE TBLS SET WRITE_ID = ? WHERE TBL_ID = ?", (write_id, row["TBL_ID"]))
            return accurate

    def _guard_accuracy(self, table: Table, current_write_id: int, updates: dict[str, str | None],
                        write_id: int | None, valid: ValidWriteIdList | None) -> bool:
        if ACCURATE_PARAM not in updates:
            return StatsAccuracy.parse(table.parameters.get(ACCURATE_PARAM)).basic
        wanted = StatsAccuracy.parse(updates[ACCURATE_PARAM])
        if not wanted.basic or not is_transactional(table):
            return wanted.basic
        if not self.txn_stats_enabled:
            updates[ACCURATE_PARAM] = None
            return False
        if write_id is None or valid is None:
            raise MetaException(f"cannot mark statistics of transactional table {table.qualified_name} accurate "
                                "without the writer's write ID and ValidWriteIdList")
        if not self._writer_sees(table, current_write_id, valid):
            updates[ACCURATE_PARAM] = None
            return False
        return True

    def _writer_sees(self, table: Table, current_write_id: int, valid: ValidWriteIdList) -> bool:
        """Whether a stats writer with `valid` may build on stats written by `current_write_id`: it can
        see that write, or that write aborted (its stats may be replaced)."""
        if current_write_id == 0 or valid.is_write_id_valid(current_write_id):
            return True
        return current_write_id in self.get_valid_write_ids(table.dbName, table.tableName).aborted_write_ids

    def _table_row(self, db_name: str, table_name: str) -> sqlite3.Row:
        row = self._conn.execute(
            "SELECT T.*, S.LOCATION, S.INPUT_FORMAT, S.CD_ID FROM TBLS T JOIN DBS D ON T.DB_ID = D.DB_ID "
            "LEFT JOIN SDS S ON S.SD_ID = T.SD_ID WHERE D.NAME = ? AND T.TBL_NAME = ?",
            (db_name.lower(), table_name.lower()),
        ).fetchone()
        if row is None:
            raise NoSuchObjectException(f"table {db_name.lower()}.{table_name.lower()} does not exist")
        return row

    # ---- partitions ---------------------------------------------------------------------

    def add_partitions(self, partitions: Iterable[Partition], if_not_exists: bool = False) -> list[Partition]:
        """Adds partitions of one table; returns those that were new."""
        added = []
        tables: dict[tuple[str, str], tuple] = {}
        with self.transaction() as conn:
            for part in partitions:
                owner = (part.dbName.lower(), part.tableName.lower())
                if owner not in tables:
                    row = self._table_row(part.dbName, part.tableName)
                    tables[owner] = (row, self._partition_keys(row["TBL_ID"]), self._read_skews([row["SD_ID"]]))
                row, keys, table_skew = tables[owner]
                if len(part.values) != len(keys):
                    raise InvalidObjectException(
                        f"table {part.dbName}.{part.tableName} has partition keys {keys}, got values {part.values}")
                part.keys = keys
                name = part.partName
                if conn.execute("SELECT 1 FROM PARTITIONS WHERE TBL_ID = ? AND PART_NAME = ?",
                                (row["TBL_ID"], name)).fetchone():
                    if if_not_exists:
                        continue
                    raise AlreadyExistsException(f"partition {name} of {part.dbName}.{part.tableName} already exists")
                sd_id = self._insert_sd(row["CD_ID"], part.location, row["INPUT_FORMAT"])
                if part.skewedInfo is None:  # a new partition takes the table's skew spec, without locations
                    skew, stored = table_skew[row["SD_ID"]]
                    part.skewedInfo = None if skew is None else SkewedInfo(skew.skewedColNames, skew.skewedColValues)
                    part.storedAsSubDirectories = stored
                self._write_skew(sd_id, part.skewedInfo, part.storedAsSubDirectories)
                part_id = conn.execute(
                    "INSERT INTO PARTITIONS (CREATE_TIME, PART_NAME, SD_ID, TBL_ID, WRITE_ID) VALUES (?, ?, ?, ?, ?)",
                    (part.createTime or _now(), name, sd_id, row["TBL_ID"], part.writeId),
                ).lastrowid
                conn.executemany(
                    "INSERT INTO PARTITION_KEY_VALS (PART_ID, PART_KEY_VAL, INTEGER_IDX) VALUES (?, ?, ?)",
                    [(part_id, v, i) for i, v in enumerate(part.values)],
                )
                self._set_params("PARTITION_PARAMS", "PART_ID", part_id, part.parameters)
                added.append(part)
        return added

    def get_partition(self, db_name: str, table_name: str, part_name: str) -> Partition:
        parts = self.get_partitions(db_name, table_name, [part_name])
        if not parts:
            raise NoSuchObjectException(
                f"partition {part_name} of {db_name.lower()}.{table_name.lower()} does not exist")
        return parts[0]

    def get_partitions(self, db_name: str, table_name: str, part_names: list[str] | None = None,
                       valid_write_ids: ValidWriteIdList | None = None) -> list[Partition]:
        """Partitions in name order, all of them or those named (unknown names are left out); with
        `valid_write_ids`, without COLUMN_STATS_ACCURATE where it does not hold for that reader."""
        with self.snapshot() as conn:
            row = self._table_row(db_name, table_name)
            keys = self._partition_keys(row["TBL_ID"])
            sql = ("SELECT P.PART_ID, P.PART_NAME, P.CREATE_TIME, P.WRITE_ID, S.LOCATION, P.SD_ID FROM PARTITIONS P "
                   "LEFT JOIN SDS S ON S.SD_ID = P.SD_ID WHERE P.TBL_ID = ?")
            args: list = [row["TBL_ID"]]
            if part_names is not None:
                sql += " AND P.PART_NAME IN (SELECT value FROM json_each(?))"
                args.append(_json_list(part_names))
            part_rows = conn.execute(sql + " ORDER BY P.PART_NAME", args).fetchall()
            params = self._params_many("PARTITION_PARAMS", "PART_ID", [r["PART_ID"] for r in part_rows])
            skews = self._read_skews([r["SD_ID"] for r in part_rows])
            parts = [
                Partition(dbName=db_name.lower(), tableName=row["TBL_NAME"],
                          values=[v for _, v in parse_part_name(r["PART_NAME"])], location=r["LOCATION"],
                          parameters=params.get(r["PART_ID"], {}), createTime=r["CREATE_TIME"],
                          writeId=r["WRITE_ID"], keys=keys, skewedInfo=skews[r["SD_ID"]][0],
                          storedAsSubDirectories=skews[r["SD_ID"]][1])
                for r in part_rows
            ]
            if valid_write_ids is not None:
                self._strip_for_reader(self.get_table(db_name, table_name),
                                       [(p.partName, p.parameters, p.writeId, p.location) for p in parts],
                                       valid_write_ids)
            return parts

    def get_partitions_by_filter(self, db_name: str, table_name: str, filter: str,
                                 max_parts: int = -1) -> list[Partition]:
        """Hive's listPartitionsByFilter: the partitions whose key values satisfy `filter`, e.g.
        `ds >= '2026-11-01' AND hr = 3`, selected by SQL over PARTITION_KEY_VALS (see partition_filter),
        in name order, at most `max_parts` (-1: all). Raises InvalidInputException naming the part of the
        filter that does not parse or is not a condition on partition keys."""
        with self.snapshot() as conn:
            table = self.get_table(db_name, table_name)
            if not table.is_partitioned:
                raise InvalidInputException(f"table {table.qualified_name} is not partitioned")
            compiled = compile_partition_filter(filter, [(k.name, k.type) for k in table.partitionKeys],
                                                table.qualified_name)
            joins = " ".join(f"JOIN PARTITION_KEY_VALS K{i} ON K{i}.PART_ID = P.PART_ID AND K{i}.INTEGER_IDX = {i}"
                             for i in compiled.keys_used)
            row = self._table_row(db_name, table_name)
            limit = f" LIMIT {int(max_parts)}" if max_parts >= 0 else ""
            names = [r[0] for r in conn.execute(
                f"SELECT P.PART_NAME FROM PARTITIONS P {joins} WHERE P.TBL_ID = ? AND {compiled.condition} "
                f"ORDER BY P.PART_NAME{limit}", (row["TBL_ID"], *compiled.args))]
            return self.get_partitions(db_name, table_name, names)

    def get_partition_values(self, db_name: str, table_name: str, filter: str | None = None
                             ) -> dict[str, list[str | None]]:
        """Every partition's key values (None: the default partition's NULL), by name, in name order: one
        query over PARTITION_KEY_VALS, no parameters read (what selecting partitions by a predicate needs).
        With `filter` (get_partitions_by_filter's language), only the partitions it selects, found
        through the index on key values."""
        with self.snapshot() as conn:
            row = self._table_row(db_name, table_name)
            selected, args = "", ()
            if filter is not None:
                table = self.get_table(db_name, table_name)
                compiled = compile_partition_filter(filter, [(k.name, k.type) for k in table.partitionKeys],
                                                    table.qualified_name)
                joins = " ".join(f"JOIN PARTITION_KEY_VALS K{i} ON K{i}.PART_ID = P.PART_ID AND K{i}.INTEGER_IDX = {i}"
                                 for i in compiled.keys_used)
                selected = f"AND P.PART_ID IN (SELECT P.PART_ID FROM PARTITIONS P {joins} WHERE {compiled.condition}) "
                args = compiled.args
            out: dict[str, list[str | None]] = {}
            for name, value in conn.execute(
                    "SELECT P.PART_NAME, K.PART_KEY_VAL FROM PARTITIONS P JOIN PARTITION_KEY_VALS K "
                    f"ON K.PART_ID = P.PART_ID WHERE P.TBL_ID = ? {selected}ORDER BY P.PART_NAME, K.INTEGER_IDX",
                    (row["TBL_ID"], *args)):
                out.setdefault(name, []).append(value)
            return out

    def _existing_partition_names(self, table: Table, part_names: list[str]) -> list[str]:
        """Those of `part_names` that are partitions of the table, in name order."""
        row = self._table_row(table.dbName, table.tableName)
        return [r[0] for r in self._conn.execute(
            "SELECT PART_NAME FROM PARTITIONS WHERE TBL_ID = ? AND PART_NAME IN (SELECT value FROM json_each(?)) "
            "ORDER BY PART_NAME", (row["TBL_ID"], _json_list(part_names)))]

    def get_partition_names(self, db_name: str, table_name: str) -> list[str]:
        with self.snapshot() as conn:
            row = self._table_row(db_name, table_name)
            return [r[0] for r in conn.execute(
                "SELECT PART_NAME FROM PARTITIONS WHERE TBL_ID = ? ORDER BY PART_NAME", (row["TBL_ID"],))]

    def drop_partition(self, db_name: str, table_name: str, part_name: str, if_exists: bool = False) -> Partition | None:
        """Drops one partition and its statistics in one transaction; returns what it was."""
        with self.transaction() as conn:
            row = self._table_row(db_name, table_name)
            part_row = conn.execute("SELECT PART_ID, SD_ID FROM PARTITIONS WHERE TBL_ID = ? AND PART_NAME = ?",
                                    (row["TBL_ID"], part_name)).fetchone()
            if part_row is None:
                if if_exists:
                    return None
                raise NoSuchObjectException(
                    f"partition {part_name} of {db_name.lower()}.{table_name.lower()} does not exist")
            part = self.get_partition(db_name, table_name, part_name)
            conn.execute("DELETE FROM PARTITIONS WHERE PART_ID = ?", (part_row["PART_ID"],))
            conn.execute("DELETE FROM SDS WHERE SD_ID = ?", (part_row["SD_ID"],))
            return part

    def alter_partition_params(self, db_name: str, table_name: str, part_name: str,
                               updates: dict[str, str | None], write_id: int | None = None,
                               valid_write_ids: ValidWriteIdList | None = None) -> bool:
        """Sets partition parameters (None removes a key) and, if given, the write ID of this stats
        writer, with the same rule for accuracy as `alter_table_params`; returns whether the
        partition's statistics are accurate afterwards."""
        with self.transaction() as conn:
            part_id = self._part_id(db_name, table_name, part_name)
            table = self.get_table(db_name, table_name)
            current = conn.execute("SELECT WRITE_ID FROM PARTITIONS WHERE PART_ID = ?", (part_id,)).fetchone()[0]
            accurate = self._guard_accuracy(table, current, updates, write_id, valid_write_ids)
            self._update_params("PARTITION_PARAMS", "PART_ID", part_id, updates)
            if write_id is not None:
                conn.execute("UPDATE PARTITIONS SET WRITE_ID = ? WHERE PART_ID = ?", (write_id, part_id))
            return accurate

    def _partition_keys(self, tbl_id: int) -> list[str]:
        return [r[0] for r in self._conn.execute(
            "SELECT PKEY_NAME FROM PARTITION_KEYS WHERE TBL_ID = ? ORDER BY INTEGER_IDX", (tbl_id,))]

    def _part_id(self, db_name: str, table_name: str, part_name: str) -> int:
        row = self._table_row(db_name, table_name)
        part = self._conn.execute("SELECT PART_ID FROM PARTITIONS WHERE TBL_ID = ? AND PART_NAME = ?",
                                  (row["TBL_ID"], part_name)).fetchone()
        if part is None:
            raise NoSuchObjectException(
                f"partition {part_name} of {db_name.lower()}.{table_name.lower()} does not exist")
        return part[0]

    # ---- parameters ---------------------------------------------------------------------

    def _params(self, table: str, id_column: str, owner_id: int) -> dict[str, str]:
        return self._params_many(table, id_column, [owner_id]).get(owner_id, {})

    def _params_many(self, table: str, id_column: str, owner_ids: list[int]) -> dict[int, dict[str, str]]:
        out: dict[int, dict[str, str]] = {}
        for r in self._conn.execute(
            f"SELECT {id_column}, PARAM_KEY, PARAM_VALUE FROM {table} "
            f"WHERE {id_column} IN (SELECT value FROM json_each(?))", (_json_list(owner_ids),)
        ):
            out.setdefault(r[0], {})[r[1]] = r[2]
        return out

    def _set_params(self, table: str, id_column: str, owner_id: int, params: dict[str, str]) -> None:
        self._conn.executemany(
            f"INSERT INTO {table} ({id_column}, PARAM_KEY, PARAM_VALUE) VALUES (?, ?, ?)",
            [(owner_id, k, str(v)) for k, v in params.items()],
        )

    def _update_params(self, table: str, id_column: str, owner_id: int, updates: dict[str, str | None]) -> None:
        for key, value in updates.items():
            if value is None:
                self._conn.execute(f"DELETE FROM {table} WHERE {id_column} = ? AND PARAM_KEY = ?", (owner_id, key))
            else:
                self._conn.execute(
                    f"INSERT INTO {table} ({id_column}, PARAM_KEY, PARAM_VALUE) VALUES (?, ?, ?) "
                    f"ON CONFLICT ({id_column}, PARAM_KEY) DO UPDATE SET PARAM_VALUE = excluded.PARAM_VALUE",
                    (owner_id, key, str(value)),
                )

    # ---- skewed tables and list bucketing -----------------------------------------------

    def alter_table_skew(self, db_name: str, table_name: str, info: SkewedInfo | None, stored: bool) -> None:
        """Sets the table's skew spec (None: not skewed) and whether it is stored as directories; partitions
        created afterwards take it, existing ones keep theirs (Hive's ALTER TABLE ... SKEWED BY)."""
        with self.transaction():
            row = self._table_row(db_name, table_name)
            self._write_skew(row["SD_ID"], info, stored)

    def alter_partition_skew(self, db_name: str, table_name: str, part_name: str, info: SkewedInfo | None,
                             stored: bool) -> None:
        """Sets one partition's skew spec and location map (its files were laid out again by it)."""
        with self.transaction() as conn:
            row = self._table_row(db_name, table_name)
            part = conn.execute("SELECT SD_ID FROM PARTITIONS WHERE TBL_ID = ? AND PART_NAME = ?",
                                (row["TBL_ID"], part_name)).fetchone()
            if part is None:
                raise NoSuchObjectException(f"partition {part_name} of {db_name.lower()}.{table_name.lower()} "
                                            "does not exist")
            self._write_skew(part["SD_ID"], info, stored)

    def add_skewed_locations(self, db_name: str, table_name: str, part_name: str,
                             locations: dict[tuple[str, ...], str]) -> None:
        """Adds value -> location entries to a partition's map (values that now have rows)."""
        part = self.get_partition(db_name, table_name, part_name)
        if part.skewedInfo is None or all(part.skewedInfo.skewedColValueLocationMaps.get(k) == v
                                          for k, v in locations.items()):
            return
        merged = SkewedInfo(part.skewedInfo.skewedColNames, part.skewedInfo.skewedColValues,
                            {**part.skewedInfo.skewedColValueLocationMaps, **locations})
        self.alter_partition_skew(db_name, table_name, part_name, merged, part.storedAsSubDirectories)

    def _string_list(self, values) -> int:
        list_id = self._conn.execute("INSERT INTO SKEWED_STRING_LIST DEFAULT VALUES").lastrowid
        self._conn.executemany(
            "INSERT INTO SKEWED_STRING_LIST_VALUES (STRING_LIST_ID, STRING_LIST_VALUE, INTEGER_IDX) VALUES (?, ?, ?)",
            [(list_id, v, i) for i, v in enumerate(values)])
        return list_id

    def _write_skew(self, sd_id: int, info: SkewedInfo | None, stored: bool) -> None:
        conn = self._conn
        lists = [r[0] for r in conn.execute(
            "SELECT STRING_LIST_ID_EID FROM SKEWED_VALUES WHERE SD_ID_OID = ? "
            "UNION SELECT STRING_LIST_ID_KID FROM SKEWED_COL_VALUE_LOC_MAP WHERE SD_ID = ?", (sd_id, sd_id))]
        conn.execute("DELETE FROM SKEWED_COL_NAMES WHERE SD_ID = ?", (sd_id,))
        conn.executemany("DELETE FROM SKEWED_STRING_LIST WHERE STRING_LIST_ID = ?", [(i,) for i in lists])
        conn.execute("UPDATE SDS SET IS_STOREDASSUBDIRECTORIES = ? WHERE SD_ID = ?",
                     (int(bool(stored and info)), sd_id))
        if info is None:
            return
        conn.executemany("INSERT INTO SKEWED_COL_NAMES (SD_ID, SKEWED_COL_NAME, INTEGER_IDX) VALUES (?, ?, ?)",
                         [(sd_id, name, i) for i, name in enumerate(info.skewedColNames)])
        for i, value in enumerate(info.skewedColValues):
            conn.execute("INSERT INTO SKEWED_VALUES (SD_ID_OID, STRING_LIST_ID_EID, INTEGER_IDX) VALUES (?, ?, ?)",
                         (sd_id, self._string_list(value), i))
        for value, location in info.skewedColValueLocationMaps.items():
            conn.execute("INSERT INTO SKEWED_COL_VALUE_LOC_MAP (SD_ID, STRING_LIST_ID_KID, LOCATION) VALUES (?, ?, ?)",
                         (sd_id, self._string_list(value), location))

    def _read_skews(self, sd_ids: list[int]) -> dict[int, tuple[SkewedInfo | None, bool]]:
        """Skew spec and stored-as-directories of many storage descriptors in a few queries."""
        conn = self._conn
        ids = _json_list(sd_ids)
        stored = {r[0]: bool(r[1]) for r in conn.execute(
            "SELECT SD_ID, IS_STOREDASSUBDIRECTORIES FROM SDS WHERE SD_ID IN (SELECT value FROM json_each(?))", (ids,))}
        names: dict[int, list[str]] = {}
        for sd_id, name in conn.execute(
                "SELECT SD_ID, SKEWED_COL_NAME FROM SKEWED_COL_NAMES WHERE SD_ID IN (SELECT value FROM json_each(?)) "
                "ORDER BY SD_ID, INTEGER_IDX", (ids,)):
            names.setdefault(sd_id, []).append(name)
        out = {sd_id: (None, stored.get(sd_id, False)) for sd_id in sd_ids}
        if not names:
            return out
        values: dict[int, dict[int, list[str]]] = {}
        for sd_id, index, text in conn.execute(
                "SELECT V.SD_ID_OID, V.INTEGER_IDX, L.STRING_LIST_VALUE FROM SKEWED_VALUES V "
                "JOIN SKEWED_STRING_LIST_VALUES L ON L.STRING_LIST_ID = V.STRING_LIST_ID_EID "
                "WHERE V.SD_ID_OID IN (SELECT value FROM json_each(?)) ORDER BY V.SD_ID_OID, V.INTEGER_IDX, "
                "L.INTEGER_IDX", (ids,)):
            values.setdefault(sd_id, {}).setdefault(index, []).append(text)
        locations: dict[int, dict[int, tuple[list[str], str]]] = {}
        for sd_id, list_id, location, text in conn.execute(
                "SELECT M.SD_ID, M.STRING_LIST_ID_KID, M.LOCATION, L.STRING_LIST_VALUE FROM SKEWED_COL_VALUE_LOC_MAP M "
                "JOIN SKEWED_STRING_LIST_VALUES L ON L.STRING_LIST_ID = M.STRING_LIST_ID_KID "
                "WHERE M.SD_ID IN (SELECT value FROM json_each(?)) ORDER BY M.SD_ID, M.STRING_LIST_ID_KID, "
                "L.INTEGER_IDX", (ids,)):
            locations.setdefault(sd_id, {}).setdefault(list_id, ([], location))[0].append(text)
        for sd_id, cols in names.items():
            info = SkewedInfo(cols, [v for _, v in sorted(values.get(sd_id, {}).items())],
                              {tuple(v): loc for v, loc in locations.get(sd_id, {}).values()})
            out[sd_id] = (info, stored.get(sd_id, False))
        return out

    # ---- column statistics --------------------------------------------------------------

    def update_table_column_statistics(self, stats: ColumnStatistics, write_id: int | None = None,
                                       valid_write_ids: ValidWriteIdList | None = None) -> bool:
        """Stores table-level statistics, replacing those of the same columns, and sets the columns'
        flags in COLUMN_STATS_ACCURATE in the same transaction; returns whether they are accurate.

        A transactional table's statistics change only with the writer's write ID and
        ValidWriteIdList (Hive's verifyStatsChangeCtx): without them MetaException, and a writer
        that cannot see the current statistics' writer stores its figures not accurate (HIVE-19416).
        Raises NoSuchObjectException for an unknown table or column, InvalidInputException for
        a partition-level desc or a malformed object, InvalidObjectException for stats whose type
        does not match the column's.
        """
        desc = _checked_stats(stats).statsDesc
        if not desc.isTblLevel:
            raise InvalidInputException("update_table_column_statistics takes table-level statistics (isTblLevel)")
        with self.transaction():
            table = self.get_table(desc.dbName, desc.tableName)
            self._require_write_state(table, write_id, valid_write_ids)
            row = self._store_table_stats(stats)
            return self._mark_columns(table, ("TABLE_PARAMS", "TBL_ID", row["TBL_ID"]), ("TBLS", row["WRITE_ID"]),
                                      table.parameters, [o.colName for o in stats.statsObj], write_id,
                                      valid_write_ids)

    def store_merged_table_statistics(self, stats: ColumnStatistics) -> None:
        """Stores the table level of a partitioned table, merged from its partitions' statistics. Their
        accuracy stays where Hive keeps it, on the partitions: no flag or write ID changes here."""
        with self.transaction():
            self._store_table_stats(_checked_stats(stats))

    def _store_table_stats(self, stats: ColumnStatistics) -> sqlite3.Row:
        desc = stats.statsDesc
        row = self._table_row(desc.dbName, desc.tableName)
        self._check_stats_columns(desc, stats.statsObj, partition_level=False)
        for obj in stats.statsObj:
            self._upsert_stats(self._conn, "TAB_COL_STATS", {"TBL_ID": row["TBL_ID"]}, desc, obj_to_row(obj),
                               stats.engine)
        return row

    def update_partition_column_statistics(self, stats: ColumnStatistics, write_id: int | None = None,
                                           valid_write_ids: ValidWriteIdList | None = None) -> bool:
        """Stores one partition's statistics, replacing those of the same columns (as the table form)."""
        return self.set_aggr_stats_for([stats], write_id, valid_write_ids)

    def _require_write_state(self, table: Table, write_id: int | None, valid: ValidWriteIdList | None) -> None:
        if is_transactional(table) and (write_id is None or valid is None):
            raise MetaException(f"Cannot change stats state for a transactional table {table.qualified_name} "
                                "without providing the transactional write state for verification "
                                f"(write ID {write_id}, valid write IDs {valid})")

    def _mark_columns(self, table: Table, params_at: tuple[str, str, int], write_id_at: tuple[str, int],
                      params: dict, col_names: list[str], write_id: int | None,
                      valid: ValidWriteIdList | None) -> bool:
        """Sets (or, for a writer that cannot see the current stats' writer, clears) the columns' flags
        of one table or partition and records the writer; returns whether the columns are accurate."""
        flags, verified = self._marked_flags(table, params, write_id_at[1], col_names, write_id, valid)
        params_table, id_column, owner_id = params_at
        self._update_params(params_table, id_column, owner_id, {ACCURATE_PARAM: flags.to_param()})
        if is_transactional(table):
            self._conn.execute(f"UPDATE {write_id_at[0]} SET WRITE_ID = ? WHERE {id_column} = ?", (write_id, owner_id))
        return verified and flags.basic

    def _marked_flags(self, table: Table, params: dict, current: int | None, col_names: list[str],
                      write_id: int | None, valid: ValidWriteIdList | None) -> tuple[StatsAccuracy, bool]:
        """The owner's flags after a writer stored `col_names`, and whether the writer could see the
        current statistics' writer (`current`: the owner's WRITE_ID; this same writer when it set the
        basic statistics first)."""
        flags = StatsAccuracy.parse(params.get(ACCURATE_PARAM))
        names = {c.lower() for c in col_names}
        verified = not is_transactional(table) or (self.txn_stats_enabled and
                                                   (current == write_id or self._writer_sees(table, current, valid)))
        flags.columns = flags.columns | names if verified else flags.columns - names
        return flags, verified

    def set_aggr_stats_for(self, stats_list: Iterable[ColumnStatistics], write_id: int | None = None,
                           valid_write_ids: ValidWriteIdList | None = None) -> bool:
        """Stores many partitions' statistics in one transaction (Hive's SetPartitionsStatsRequest, with
        its writeId and validWriteIdList) and sets their flags as update_table_column_statistics does;
        returns whether all are accurate. Any iterable: it is stored in batches, so a generator of
        millions of rows never sits in memory at once."""
        accurate = True
        with self.transaction() as conn:
            batch: list[ColumnStatistics] = []
            for stats in stats_list:
                batch.append(stats)
                if len(batch) == _STATS_BATCH:
                    accurate &= self._store_partition_stats(conn, batch, write_id, valid_write_ids)
                    batch = []
            if batch:
                accurate &= self._store_partition_stats(conn, batch, write_id, valid_write_ids)
        return accurate

    def _store_partition_stats(self, conn, stats_list: list[ColumnStatistics], write_id: int | None,
                               valid_write_ids: ValidWriteIdList | None) -> bool:
        by_table: dict[tuple[str, str], list[ColumnStatistics]] = {}
        for stats in stats_list:
            desc = _checked_stats(stats).statsDesc
            if desc.isTblLevel or not desc.partName:
                raise InvalidInputException("partition statistics need isTblLevel false and a partName")
            by_table.setdefault((desc.dbName.lower(), desc.tableName.lower()), []).append(stats)
        accurate = True
        for (db_name, table_name), table_stats in by_table.items():
            table = self.get_table(db_name, table_name)
            self._require_write_state(table, write_id, valid_write_ids)
            row = self._table_row(db_name, table_name)
            names = sorted({s.statsDesc.partName for s in table_stats})
            owners = {r["PART_NAME"]: r for r in conn.execute(
                "SELECT PART_NAME, PART_ID, WRITE_ID FROM PARTITIONS WHERE TBL_ID = ? "
                "AND PART_NAME IN (SELECT value FROM json_each(?))", (row["TBL_ID"], _json_list(names)))}
            params = self._params_many("PARTITION_PARAMS", "PART_ID", [r["PART_ID"] for r in owners.values()])
            types = {c.name: parse_type(c.type).name for c in table.cols}
            rows, flags_set, flags_cleared, writers = [], [], [], []
            for stats in table_stats:
                desc = stats.statsDesc
                part = owners.get(desc.partName)
                if part is None:
                    raise NoSuchObjectException(f"partition {desc.partName} of {db_name}.{table_name} does not exist")
                self._check_column_types(table, types, stats.statsObj)
                head = (part["PART_ID"], desc.partName, desc.catName, desc.dbName.lower(), desc.tableName.lower())
                tail = (desc.lastAnalyzed or _now(), stats.engine)
                rows.extend(head + obj_to_values(obj) + tail for obj in stats.statsObj)
                flags, verified = self._marked_flags(table, params.get(part["PART_ID"], {}), part["WRITE_ID"],
                                                     [o.colName for o in stats.statsObj], write_id, valid_write_ids)
                param = flags.to_param()
                params[part["PART_ID"]] = {} if param is None else {ACCURATE_PARAM: param}  # a repeated partition
                (flags_cleared if param is None else flags_set).append(
                    (part["PART_ID"],) if param is None else (part["PART_ID"], param))
                writers.append((write_id, part["PART_ID"]))
                accurate &= verified and flags.basic
            conn.executemany(f"INSERT OR REPLACE INTO PART_COL_STATS ({', '.join(_PART_STATS_INSERT)}) "
                             f"VALUES ({', '.join('?' * len(_PART_STATS_INSERT))})", rows)
            conn.executemany("INSERT INTO PARTITION_PARAMS (PART_ID, PARAM_KEY, PARAM_VALUE) VALUES (?, ?, ?) "
                             "ON CONFLICT (PART_ID, PARAM_KEY) DO UPDATE SET PARAM_VALUE = excluded.PARAM_VALUE",
                             [(owner, ACCURATE_PARAM, value) for owner, value in flags_set])
            conn.executemany("DELETE FROM PARTITION_PARAMS WHERE PART_ID = ? AND PARAM_KEY = ?",
                             [(owner, ACCURATE_PARAM) for (owner,) in flags_cleared])
            if is_transactional(table):
                conn.executemany("UPDATE PARTITIONS SET WRITE_ID = ? WHERE PART_ID = ?", writers)
        return accurate

    def _check_stats_columns(self, desc: ColumnStatisticsDesc, objs: list[ColumnStatisticsObj],
                             partition_level: bool) -> None:
        self._check_columns_of(self.get_table(desc.dbName, desc.tableName), objs)

    def _check_columns_of(self, table: Table, objs: list[ColumnStatisticsObj]) -> None:
        self._check_column_types(table, {c.name: parse_type(c.type).name for c in table.cols}, objs)

    @staticmethod
    def _check_column_types(table: Table, types: dict[str, str], objs: list[ColumnStatisticsObj]) -> None:
        for obj in objs:
            name = obj.colName.lower()
            if name not in types:
                raise NoSuchObjectException(f"column {name} does not exist in table {table.qualified_name}")
            if parse_type(obj.colType).name != types[name]:
                raise InvalidObjectException(
                    f"column {name} of {table.qualified_name} is {types[name]}, statistics are for {obj.colType}")

    def _upsert_stats(self, conn, table: str, owner: dict, desc: ColumnStatisticsDesc, values: dict,
                      engine: str) -> None:
        self._replace_stats_rows(conn, table, [self._stats_row(owner, desc, values, engine)])

    @staticmethod
    def _stats_row(owner: dict, desc: ColumnStatisticsDesc, values: dict, engine: str) -> dict:
        return {**owner, "CAT_NAME": desc.catName, "DB_NAME": desc.dbName.lower(),
                "TABLE_NAME": desc.tableName.lower(), **values,
                "LAST_ANALYZED": desc.lastAnalyzed or _now(), "ENGINE": engine}

    @staticmethod
    def _replace_stats_rows(conn, table: str, rows: list[dict]) -> None:
        """Inserts stats rows, each replacing the row of its owner, column and engine (the UNIQUE key)."""
        if not rows:
            return
        names = list(rows[0])
        conn.executemany(
            f"INSERT OR REPLACE INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            [[r[n] for n in names] for r in rows])

    def get_table_column_statistics(self, db_name: str, table_name: str, col_name: str,
                                    valid_write_ids: ValidWriteIdList | None = None) -> ColumnStatistics:
        """One column's table-level statistics; NoSuchObjectException if the table, column or stats are missing."""
        objs = self.get_table_statistics(db_name, table_name, [col_name], valid_write_ids=valid_write_ids)
        if not objs:
            raise NoSuchObjectException(
                f"no statistics for column {col_name.lower()} of {db_name.lower()}.{table_name.lower()}")
        return objs

    def get_table_statistics(self, db_name: str, table_name: str, col_names: list[str],
                             engine: str = "hive", valid_write_ids: ValidWriteIdList | None = None
                             ) -> ColumnStatistics | None:
        """Table-level statistics of several columns in one call (Hive's get_table_statistics_req);
        `isStatsCompliant` says whether they are accurate for a reader with `valid_write_ids`
        (default: the current snapshot) — for a partitioned table, in every partition."""
        with self.snapshot() as conn:
            table = self.get_table(db_name, table_name)
            self._check_columns_exist(table, col_names)
            row = self._table_row(db_name, table_name)
            rows = conn.execute(
                f"SELECT {', '.join(ROW_COLUMNS)}, LAST_ANALYZED FROM TAB_COL_STATS WHERE TBL_ID = ? AND ENGINE = ? "
                "AND COLUMN_NAME IN (SELECT value FROM json_each(?)) ORDER BY COLUMN_NAME",
                (row["TBL_ID"], engine, _json_list([c.lower() for c in col_names])),
            ).fetchall()
            if not rows:
                return None
            names = [r["COLUMN_NAME"] for r in rows]
            compliance = self.stats_compliance(db_name, table_name, names, valid_write_ids)
            return ColumnStatistics(
                ColumnStatisticsDesc(True, table.dbName, table.tableName,
                                     lastAnalyzed=max(r["LAST_ANALYZED"] for r in rows)),
                [row_to_obj(r) for r in rows], engine=engine,
                isStatsCompliant=all(ok for ok, _ in compliance.values()))

    def get_partition_column_statistics(self, db_name: str, table_name: str, part_name: str,
                                        col_name: str, valid_write_ids: ValidWriteIdList | None = None
                                        ) -> ColumnStatistics:
        """One column's statistics in one partition; NoSuchObjectException if anything is missing."""
        found = self.get_partitions_statistics(db_name, table_name, [part_name], [col_name],
                                               valid_write_ids=valid_write_ids)
        if part_name not in found:
            self._require_partition(db_name, table_name, part_name)
            raise NoSuchObjectException(
                f"no statistics for column {col_name.lower()} in partition {part_name} of "
                f"{db_name.lower()}.{table_name.lower()}")
        return found[part_name]

    def _require_partition(self, db_name: str, table_name: str, part_name: str) -> None:
        with self.snapshot():
            self._part_id(db_name, table_name, part_name)

    def get_partitions_statistics(self, db_name: str, table_name: str, part_names: list[str] | None,
                                  col_names: list[str], engine: str = "hive",
                                  valid_write_ids: ValidWriteIdList | None = None) -> dict[str, ColumnStatistics]:
        """Statistics of many columns in many partitions (all when part_names is None), in one query;
        each partition's `isStatsCompliant` is for a reader with `valid_write_ids` (default: now)."""
        with self.snapshot() as conn:
            table = self.get_table(db_name, table_name)
            self._check_columns_exist(table, col_names)
            row = self._table_row(db_name, table_name)
            # DB_NAME/TABLE_NAME/COLUMN_NAME lead Hive's PCS_STATS_IDX: one index range per column
            sql = (f"SELECT S.PART_NAME, S.LAST_ANALYZED, P.WRITE_ID, PA.PARAM_VALUE AS ACCURATE, "
                   f"{', '.join('S.' + c for c in ROW_COLUMNS)} "
                   "FROM PART_COL_STATS S JOIN PARTITIONS P ON P.PART_ID = S.PART_ID "
                   "LEFT JOIN PARTITION_PARAMS PA ON PA.PART_ID = P.PART_ID AND PA.PARAM_KEY = ? "
                   "WHERE S.DB_NAME = ? AND S.TABLE_NAME = ? AND P.TBL_ID = ? AND S.ENGINE = ? "
                   "AND S.COLUMN_NAME IN (SELECT value FROM json_each(?))")
            args = [ACCURATE_PARAM, table.dbName, table.tableName, row["TBL_ID"], engine,
                    _json_list([c.lower() for c in col_names])]
            if part_names is not None:
                sql += " AND S.PART_NAME IN (SELECT value FROM json_each(?))"
                args.append(_json_list(part_names))
            out: dict[str, ColumnStatistics] = {}
            owners: dict[str, tuple[int, str | None]] = {}
            for r in conn.execute(sql + " ORDER BY S.PART_NAME, S.COLUMN_NAME", args):
                stats = out.get(r["PART_NAME"])
                if stats is None:
                    stats = out[r["PART_NAME"]] = ColumnStatistics(
                        ColumnStatisticsDesc(False, table.dbName, table.tableName, r["PART_NAME"], 0), [],
                        engine=engine)
                    owners[r["PART_NAME"]] = (r["WRITE_ID"], r["ACCURATE"])
                stats.statsObj.append(row_to_obj(r))
                stats.statsDesc.lastAnalyzed = max(stats.statsDesc.lastAnalyzed, r["LAST_ANALYZED"])
            if out:
                valid = valid_write_ids or self.get_valid_write_ids(db_name, table_name)
                changed = self.external_file_changes(table, {
                    p.partName: p.location for p in self.get_partitions(db_name, table_name, list(out))
                } if table.tableType == "EXTERNAL_TABLE" else {})
                for name, stats in out.items():
                    write_id, accurate = owners[name]
                    params = {} if accurate is None else {ACCURATE_PARAM: accurate}
                    stats.isStatsCompliant = self._compliance(table, params, write_id, "partition",
                                                              [o.colName for o in stats.statsObj], valid,
                                                              changed.get(name))[0]
            return out

    def partition_stats_columns(self, db_name: str, table_name: str, col_names: list[str],
                                engine: str = "hive", part_names: list[str] | None = None) -> dict[str, StatsColumn]:
        """The statistics of `col_names` in every partition (or those named) with the partition's numRows,
        as one StatsColumn per column that has any, in partition name order (one query, no object per
        partition): the input of a table-level merge and of get_aggr_stats_for."""
        with self.snapshot() as conn:
            table = self.get_table(db_name, table_name)
            self._check_columns_exist(table, col_names)
            by_column: dict[str, list[tuple]] = {}
            # PART_COL_STATS rows go with their partition (ON DELETE CASCADE), so DB_NAME/TABLE_NAME
            # select this table's rows through Hive's PCS_STATS_IDX without visiting PARTITIONS
            sql = (PARTITION_STATS_SELECT + "WHERE S.DB_NAME = ? AND S.TABLE_NAME = ? AND S.ENGINE = ? "
                   "AND S.COLUMN_NAME IN (SELECT value FROM json_each(?))")
            args = [table.dbName, table.tableName, engine, _json_list([c.lower() for c in col_names])]
            if part_names is not None:
                sql += " AND S.PART_NAME IN (SELECT value FROM json_each(?))"
                args.append(_json_list(part_names))
            for r in conn.execute(sql + " ORDER BY S.PART_NAME", args):
                by_column.setdefault(r[0], []).append(r)
            return {name: StatsColumn.from_rows(rows) for name, rows in by_column.items()}

    def segment_statistics(self, db_name: str, table_name: str, col_names: list[str], merge: segments.Merge,
                           merge_partitions: segments.MergePartitions, engine: str = "hive"
                           ) -> dict[str, list[segments.SegmentStats]]:
        """Each column's partition statistics as the merges of its top segments, after re-merging the
        segments that partition changes left stale (one write transaction; see metastore.segments)."""
        with self.transaction() as conn:
            tbl_id = self._table_row(db_name, table_name)["TBL_ID"]
            segments.refresh(conn, tbl_id, merge, merge_partitions, self.segment_bits)
            return segments.top_segments(conn, tbl_id, col_names, engine)

    def get_aggr_stats_for(self, db_name: str, table_name: str, col_names: list[str],
                           part_names: list[str] | None = None, valid_write_ids: ValidWriteIdList | None = None,
                           engine: str = "hive", check_compliance: bool = True) -> AggrStats:
        """Hive's get_aggr_stats_for: the statistics of `col_names` over a set of partitions (all when
        `part_names` is None; any subset, such as a query's pruned partitions, without storing a merge for
        it). `partsFound` counts the partitions holding statistics of every column; where some partitions
        lack a column's statistics, `colStats` extrapolates to the whole set by Hive's rules and `exact`
        keeps the union of those that have them. `isStatsCompliant` says whether every partition's
        statistics are accurate for a reader with `valid_write_ids` (default: now); None with
        `check_compliance` false, for callers that judge accuracy themselves. Raises
        NoSuchObjectException naming an unknown partition or column."""
        from ..stats.aggr_stats import aggregate_partitions  # the stats package builds on this one

        if part_names is None and not (self._depth and not self._writing):
            self._refresh_segments(db_name, table_name)
        with self.snapshot():
            table = self.get_table(db_name, table_name)
            if not table.is_partitioned:
                raise InvalidInputException(f"table {table.qualified_name} is not partitioned: "
                                            "its statistics come from get_table_statistics")
            whole = self._aggr_from_segments(table, [c.lower() for c in col_names], engine) \
                if part_names is None else None
            if whole is not None:
                names = None
                aggr = whole
            elif part_names is None:
                names = self.get_partition_names(db_name, table_name)
            else:
                names = self._existing_partition_names(table, part_names)  # name order: Hive extrapolates along it
                if len(names) < len(set(part_names)):
                    unknown = sorted(set(part_names) - set(names))
                    raise NoSuchObjectException(
                        f"partition {unknown[0]} of {table.qualified_name} does not exist")
            if whole is None:
                columns = self.partition_stats_columns(db_name, table_name, col_names, engine,
                                                       None if part_names is None else names)
                aggr = aggregate_partitions([c.lower() for c in col_names], columns, names,
                                            density=self.ndv_density_function)
            if check_compliance:
                compliance = self.stats_compliance(db_name, table_name, col_names, valid_write_ids,
                                                   None if part_names is None else names) \
                    if aggr.partsRequested else {}
                aggr.isStatsCompliant = bool(aggr.partsRequested) and all(ok for ok, _ in compliance.values())
            return aggr

    def _refresh_segments(self, db_name: str, table_name: str) -> None:
        """Re-merges the segments a change of partitions left stale (a short write transaction)."""
        from ..stats.merge import merge_partitions, merge_segments

        with self.snapshot() as conn:
            tbl_id = self._table_row(db_name, table_name)["TBL_ID"]
            if not conn.execute("SELECT 1 FROM STALE_STATS_SEGMENTS WHERE TBL_ID = ? LIMIT 1", (tbl_id,)).fetchone():
                return
        self.segment_statistics(db_name, table_name, [], merge_segments, merge_partitions)

    def _aggr_from_segments(self, table: Table, col_names: list[str], engine: str) -> AggrStats | None:
        """AggrStats over every partition from the top segments, when every partition holds statistics of
        every column (nothing to extrapolate) and no segment is stale; else None."""
        from ..stats.merge import merge_segments, segment_to_obj

        conn = self._conn
        tbl_id = self._table_row(table.dbName, table.tableName)["TBL_ID"]
        if conn.execute("SELECT 1 FROM STALE_STATS_SEGMENTS WHERE TBL_ID = ? LIMIT 1", (tbl_id,)).fetchone():
            return None
        count = conn.execute("SELECT count(*) FROM PARTITIONS WHERE TBL_ID = ?", (tbl_id,)).fetchone()[0]
        tops = segments.top_segments(conn, tbl_id, col_names, engine)
        merged = {name: merge_segments(tops[name]) for name in col_names if name in tops}
        if not count or len(merged) < len(set(col_names)) or any(m.parts != count for m in merged.values()):
            return None
        objs = [segment_to_obj(name, merged[name]) for name in col_names]
        return AggrStats(colStats=objs, partsFound=count, partsRequested=count,
                         covered={n: count for n in col_names}, covered_rows={n: merged[n].rows for n in col_names},
                         exact=list(objs))

    def _check_columns_exist(self, table: Table, col_names: list[str]) -> None:
        known = {c.name for c in table.cols}
        for name in col_names:
            if name.lower() not in known:
                raise NoSuchObjectException(f"column {name.lower()} does not exist in table {table.qualified_name}")

    def delete_table_column_statistics(self, db_name: str, table_name: str, col_name: str | None = None) -> bool:
        """Deletes table-level statistics of one column (all columns when col_name is None)."""
        with self.transaction() as conn:
            table = self.get_table(db_name, table_name)
            row = self._table_row(db_name, table_name)
            if col_name is not None:
                self._check_columns_exist(table, [col_name])
            conn.execute("DELETE FROM TAB_COL_STATS WHERE TBL_ID = ? AND (? IS NULL OR COLUMN_NAME = ?)",
                         (row["TBL_ID"], col_name and col_name.lower(), col_name and col_name.lower()))
            self._clear_flags("TABLE_PARAMS", "TBL_ID", row["TBL_ID"], table.parameters, col_name)
        return True

    def _clear_flags(self, params_table: str, id_column: str, owner_id: int, params: dict,
                     col_name: str | None) -> None:
        """Hive's removeColumnStatsState: deleted statistics are no longer accurate."""
        flags = StatsAccuracy.parse(params.get(ACCURATE_PARAM))
        flags.columns = set() if col_name is None else flags.columns - {col_name.lower()}
        self._update_params(params_table, id_column, owner_id, {ACCURATE_PARAM: flags.to_param()})

    def delete_partition_column_statistics(self, db_name: str, table_name: str, part_name: str,
                                           col_name: str | None = None) -> bool:
        """Deletes one partition's statistics of one column (all columns when col_name is None)."""
        with self.transaction() as conn:
            table = self.get_table(db_name, table_name)
            part_id = self._part_id(db_name, table_name, part_name)
            if col_name is not None:
                self._check_columns_exist(table, [col_name])
            conn.execute("DELETE FROM PART_COL_STATS WHERE PART_ID = ? AND (? IS NULL OR COLUMN_NAME = ?)",
                         (part_id, col_name and col_name.lower(), col_name and col_name.lower()))
            self._clear_flags("PARTITION_PARAMS", "PART_ID", part_id, self._params("PARTITION_PARAMS", "PART_ID", part_id),
                              col_name)
        return True

    # ---- stats accuracy -----------------------------------------------------------------

    def stats_compliance(self, db_name: str, table_name: str, col_names: list[str],
                         valid_write_ids: ValidWriteIdList | None = None,
                         part_names: list[str] | None = None) -> dict[str | None, tuple[bool, str]]:
        """Whether the basic statistics and those of `col_names` are accurate for a reader with
        `valid_write_ids` (default: the current snapshot), with the reason when not. Keyed by
        partition name (all or `part_names`), or None for an unpartitioned table. Nothing is
        written: a read never changes the stored state (HIVE-19416's reader rule)."""
        with self.snapshot():
            table = self.get_table(db_name, table_name)
            valid = valid_write_ids or self.get_valid_write_ids(db_name, table_name)
            if table.is_partitioned:
                parts = self.get_partitions(db_name, table_name, part_names)
                owners = [(p.partName, p.parameters, p.writeId, "partition") for p in parts]
                locations = {p.partName: p.location for p in parts}
            else:
                owners = [(None, table.parameters, table.writeId, "table")]
                locations = {None: table.location}
            changed = self.external_file_changes(table, locations)
            return {name: self._compliance(table, params, write_id, what, col_names, valid, changed.get(name))
                    for name, params, write_id, what in owners}

    def _compliance(self, table: Table, params: dict, write_id: int, what: str, col_names: list[str],
                    valid: ValidWriteIdList, files_changed: str | None = None) -> tuple[bool, str]:
        if files_changed and StatsAccuracy.parse(params.get(ACCURATE_PARAM)).basic:
            return False, files_changed
        transactional = is_transactional(table)
        if transactional and not self.txn_stats_enabled:
            return False, "transactional statistics are turned off (hive.txn.stats.enabled=false)"
        flags = StatsAccuracy.parse(params.get(ACCURATE_PARAM))
        if not flags.basic:
            return False, (f"{what} changed by write {write_id} and its statistics were not kept accurate"
                           if write_id else f"{what} statistics were never computed")
        missing = [c for c in col_names if c.lower() not in flags.columns]
        if missing:
            return False, f"{what} changed by write {write_id} after the last analyze of {', '.join(missing)}"
        if transactional and not valid.is_write_id_valid(write_id):
            return False, f"written by write {write_id}, not visible in your snapshot ({valid})"
        return True, ""

    # ---- the files an external table's statistics were computed from ---------------------

    def record_analyzed_files(self, db_name: str, table_name: str,
                              files: dict[str | None, list[FileState]]) -> None:
        """Keeps the files an ANALYZE read, per partition name (None: an unpartitioned table), in place
        of those of the previous one."""
        with self.transaction() as conn:
            tbl_id = self._table_row(db_name, table_name)["TBL_ID"]
            for part_name, states in files.items():
                part_id = None if part_name is None else self._part_id(db_name, table_name, part_name)
                conn.execute("DELETE FROM ANALYZED_FILES WHERE TBL_ID = ? AND PART_ID IS ?", (tbl_id, part_id))
                # an owner analyzed with no files keeps one row with an empty path, so that it reads as
                # "analyzed empty", not "never recorded"
                conn.executemany(
                    "INSERT INTO ANALYZED_FILES (TBL_ID, PART_ID, FILE_PATH, FILE_SIZE, MODIFIED_MS) "
                    "VALUES (?, ?, ?, ?, ?)", [(tbl_id, part_id, *state) for state in states or [_NO_FILES]])

    def external_file_changes(self, table: Table, locations: dict[str | None, str]) -> dict[str | None, str]:
        """For an external table: the owners (partition name or None, with their directory) whose files
        are no longer those their statistics were computed from, with the reason. Other tables' files
        change only through the lab's writes, which write IDs track: for them this is empty."""
        if table.tableType != "EXTERNAL_TABLE" or not locations:
            return {}
        with self.snapshot() as conn:
            tbl_id = self._table_row(table.dbName, table.tableName)["TBL_ID"]
            seen: dict[str | None, set[FileState]] = {}
            for r in conn.execute(
                    "SELECT P.PART_NAME, F.FILE_PATH, F.FILE_SIZE, F.MODIFIED_MS FROM ANALYZED_FILES F "
                    "LEFT JOIN PARTITIONS P ON P.PART_ID = F.PART_ID WHERE F.TBL_ID = ?", (tbl_id,)):
                files = seen.setdefault(r["PART_NAME"], set())
                if r["FILE_PATH"]:
                    files.add((r["FILE_PATH"], r["FILE_SIZE"], r["MODIFIED_MS"]))
        out = {}
        for name, location in locations.items():
            now = {f.state for f in list_data_files(location)} if location and os.path.isdir(location) else set()
            before = seen.get(name)
            if before is None:
                out[name] = "the files it was analyzed from were not recorded: ANALYZE it again"
            elif before != now:
                out[name] = describe_changes(*file_changes(before, now))
        return out

    def refresh_partitioned_table_params(self, db_name: str, table_name: str) -> None:
        """Recomputes a partitioned table's basic stats from its partitions, as Hive keeps them.

        numRows, rawDataSize sum the partitions that know theirs; numFiles and totalSize sum all;
        BASIC_STATS is accurate on the table only when it is on every partition (column flags
        live on partitions).
        """
        with self.transaction() as conn:
            row = self._table_row(db_name, table_name)
            sums = conn.execute(
                "SELECT SUM(CASE WHEN PP.PARAM_KEY = 'numRows' THEN CAST(PP.PARAM_VALUE AS INTEGER) END) AS numRows, "
                "SUM(CASE WHEN PP.PARAM_KEY = 'rawDataSize' THEN CAST(PP.PARAM_VALUE AS INTEGER) END) AS rawDataSize, "
                "SUM(CASE WHEN PP.PARAM_KEY = 'numFiles' THEN CAST(PP.PARAM_VALUE AS INTEGER) END) AS numFiles, "
                "SUM(CASE WHEN PP.PARAM_KEY = 'totalSize' THEN CAST(PP.PARAM_VALUE AS INTEGER) END) AS totalSize "
                "FROM PARTITIONS P LEFT JOIN PARTITION_PARAMS PP ON PP.PART_ID = P.PART_ID WHERE P.TBL_ID = ?",
                (row["TBL_ID"],)).fetchone()
            num_parts = conn.execute("SELECT COUNT(*) FROM PARTITIONS WHERE TBL_ID = ?", (row["TBL_ID"],)).fetchone()[0]
            accurate_parts = 0
            for text, count in conn.execute(  # a few distinct values among many partitions: parse each once
                "SELECT PP.PARAM_VALUE, count(*) FROM PARTITIONS P JOIN PARTITION_PARAMS PP ON PP.PART_ID = P.PART_ID "
                "WHERE P.TBL_ID = ? AND PP.PARAM_KEY = ? GROUP BY PP.PARAM_VALUE", (row["TBL_ID"], ACCURATE_PARAM)):
                accurate_parts += count * StatsAccuracy.parse(text).basic
            flag = StatsAccuracy(basic=accurate_parts == num_parts).to_param()
            self._update_params("TABLE_PARAMS", "TBL_ID", row["TBL_ID"], {
                "numPartitions": str(num_parts),
                "numRows": str(sums["numRows"] or 0),
                "rawDataSize": str(sums["rawDataSize"] or 0),
                "numFiles": str(sums["numFiles"] or 0),
                "totalSize": str(sums["totalSize"] or 0),
                ACCURATE_PARAM: flag,
            })

    # ---- Drill-style table metadata ------------------------------------------------------

    def get_table_metadata(self, db_name: str, table_name: str) -> TableMetadata | None:
        """The table's metadata from its last ANALYZE ... REFRESH METADATA, or None if there was none."""
        with self.snapshot() as conn:
            return load_table_metadata(conn, self._table_row(db_name, table_name)["TBL_ID"])

    def replace_table_metadata(self, db_name: str, table_name: str, analysis: MetadataAnalysis,
                               units: list[MetadataUnit]) -> int:
        """Stores a refresh's metadata in place of the table's previous one; returns the new version."""
        with self.transaction() as conn:
            return replace_table_metadata(conn, self._table_row(db_name, table_name)["TBL_ID"], analysis, units)

    def drop_table_metadata(self, db_name: str, table_name: str, if_exists: bool = False) -> bool:
        """Forgets the table's metadata; raises NoSuchObjectException when it has none, unless if_exists."""
        with self.transaction() as conn:
            dropped = drop_table_metadata(conn, self._table_row(db_name, table_name)["TBL_ID"])
            if not dropped and not if_exists:
                raise NoSuchObjectException(f"table {db_name}.{table_name} has no metadata to drop")
            return dropped

    def get_metadata_version(self, db_name: str, table_name: str) -> int:
        """Grows by one at every refresh of the table's metadata (0: never analyzed)."""
        with self.snapshot() as conn:
            return metadata_version(conn, self._table_row(db_name, table_name)["TBL_ID"])

    # ---- transactions and write IDs -----------------------------------------------------

    def open_txn(self, user: str | None = None) -> int:
        """Opens a transaction; returns its ID. Transactions whose process died are aborted first."""
        self.abort_expired_txns()
        with self.transaction() as conn:
            now = time.time()
            return conn.execute(
                "INSERT INTO TXNS (TXN_STATE, TXN_STARTED, TXN_LAST_HEARTBEAT, TXN_USER, TXN_HOST, TXN_PID) "
                "VALUES ('o', ?, ?, ?, ?, ?)",
                (now, now, user or os.environ.get("USER", "colstats"), socket.gethostname(), os.getpid()),
            ).lastrowid

    def heartbeat(self, txn_id: int) -> None:
        """Keeps an open transaction alive (Hive's heartbeat); MetaException if it was aborted meanwhile."""
        with self.transaction() as conn:
            self._require_open(txn_id)
            conn.execute("UPDATE TXNS SET TXN_LAST_HEARTBEAT = ? WHERE TXN_ID = ?", (time.time(), txn_id))

    def abort_expired_txns(self, timeout_s: float | None = None) -> list[int]:
        """Aborts open transactions that missed their heartbeats for `timeout_s` (default
        `txn_timeout_s`) or whose process on this host is gone; returns their IDs. Readers never
        wait for them: an open write is simply not in anyone's snapshot."""
        timeout_s = self.txn_timeout_s if timeout_s is None else timeout_s
        host = socket.gethostname()
        with self.snapshot() as conn:
            rows = conn.execute("SELECT TXN_ID, TXN_LAST_HEARTBEAT, TXN_HOST, TXN_PID FROM TXNS "
                                "WHERE TXN_STATE = 'o'").fetchall()
        now = time.time()
        dead = [r["TXN_ID"] for r in rows
                if now - r["TXN_LAST_HEARTBEAT"] > timeout_s or (r["TXN_HOST"] == host and not _alive(r["TXN_PID"]))]
        if dead:
            with self.transaction() as conn:
                conn.executemany("UPDATE TXNS SET TXN_STATE = 'a' WHERE TXN_ID = ? AND TXN_STATE = 'o'",
                                 [(t,) for t in dead])
        return dead

    def allocate_table_write_id(self, txn_id: int, db_name: str, table_name: str) -> int:
        """The table's next write ID for an open transaction (the same one if it already has one)."""
        with self.transaction() as conn:
            self._require_open(txn_id)
            table = self.get_table(db_name, table_name)
            existing = conn.execute(
                "SELECT T2W_WRITEID FROM TXN_TO_WRITE_ID WHERE T2W_TXNID = ? AND T2W_DATABASE = ? AND T2W_TABLE = ?",
                (txn_id, table.dbName, table.tableName)).fetchone()
            if existing:
                return existing[0]
            row = conn.execute("SELECT NWI_NEXT FROM NEXT_WRITE_ID WHERE NWI_DATABASE = ? AND NWI_TABLE = ?",
                               (table.dbName, table.tableName)).fetchone()
            write_id = row[0] if row else 1
            conn.execute(
                "INSERT INTO NEXT_WRITE_ID (NWI_DATABASE, NWI_TABLE, NWI_NEXT) VALUES (?, ?, ?) "
                "ON CONFLICT (NWI_DATABASE, NWI_TABLE) DO UPDATE SET NWI_NEXT = excluded.NWI_NEXT",
                (table.dbName, table.tableName, write_id + 1))
            conn.execute("INSERT INTO TXN_TO_WRITE_ID (T2W_TXNID, T2W_DATABASE, T2W_TABLE, T2W_WRITEID) "
                         "VALUES (?, ?, ?, ?)", (txn_id, table.dbName, table.tableName, write_id))
            return write_id

    def commit_txn(self, txn_id: int) -> None:
        with self.transaction() as conn:
            self._require_open(txn_id)
            conn.execute("UPDATE TXNS SET TXN_STATE = 'c' WHERE TXN_ID = ?", (txn_id,))

    def abort_txn(self, txn_id: int) -> None:
        with self.transaction() as conn:
            self._require_open(txn_id)
            conn.execute("UPDATE TXNS SET TXN_STATE = 'a' WHERE TXN_ID = ?", (txn_id,))

    def _require_open(self, txn_id: int) -> None:
        row = self._conn.execute("SELECT TXN_STATE FROM TXNS WHERE TXN_ID = ?", (txn_id,)).fetchone()
        if row is None:
            raise NoSuchObjectException(f"transaction {txn_id} does not exist")
        if row[0] != "o":
            state = {"c": "committed", "a": "aborted"}[row[0]]
            raise MetaException(f"transaction {txn_id} is already {state}")

    def get_valid_write_ids(self, db_name: str, table_name: str, txn_id: int | None = None) -> ValidWriteIdList:
        """The table's ValidWriteIdList now: every allocated write ID, with the open and aborted ones
        listed. For a transaction's own reads (`txn_id`), its own write is valid."""
        with self.snapshot() as conn:
            table = self.get_table(db_name, table_name)
            row = conn.execute("SELECT NWI_NEXT FROM NEXT_WRITE_ID WHERE NWI_DATABASE = ? AND NWI_TABLE = ?",
                               (table.dbName, table.tableName)).fetchone()
            high_watermark = (row[0] - 1) if row else 0
            open_ids, aborted = set(), set()
            for r in conn.execute(
                "SELECT W.T2W_WRITEID, T.TXN_STATE, T.TXN_ID FROM TXN_TO_WRITE_ID W "
                "JOIN TXNS T ON T.TXN_ID = W.T2W_TXNID "
                "WHERE W.T2W_DATABASE = ? AND W.T2W_TABLE = ? AND T.TXN_STATE != 'c'",
                (table.dbName, table.tableName),
            ):
                if r[1] == "o" and r[2] == txn_id:
                    continue
                (open_ids if r[1] == "o" else aborted).add(r[0])
            return ValidWriteIdList(table.qualified_name, high_watermark, frozenset(open_ids), frozenset(aborted))

    def add_txn_components(self, txn_id: int, db_name: str, table_name: str, part_names: list[str | None],
                           operation: str, write_id: int) -> None:
        """Records what an open transaction writes (Hive's TXN_COMPONENTS; operation 'i' insert,
        'u' update of statistics, 'd' drop)."""
        with self.transaction() as conn:
            self._require_open(txn_id)
            conn.executemany(
                "INSERT INTO TXN_COMPONENTS (TC_TXNID, TC_DATABASE, TC_TABLE, TC_PARTITION, TC_OPERATION_TYPE, "
                "TC_WRITEID) VALUES (?, ?, ?, ?, ?, ?)",
                [(txn_id, db_name.lower(), table_name.lower(), p, operation, write_id) for p in part_names])

    def table_write_ids(self, txn_id: int) -> dict[tuple[str, str], int]:
        """The write IDs a transaction holds, by (db, table)."""
        with self.snapshot() as conn:
            return {(r[0], r[1]): r[2] for r in conn.execute(
                "SELECT T2W_DATABASE, T2W_TABLE, T2W_WRITEID FROM TXN_TO_WRITE_ID WHERE T2W_TXNID = ?", (txn_id,))}

    def txn_state(self, txn_id: int) -> str:
        """'open', 'committed' or 'aborted'."""
        with self.snapshot() as conn:
            row = conn.execute("SELECT TXN_STATE FROM TXNS WHERE TXN_ID = ?", (txn_id,)).fetchone()
        if row is None:
            raise NoSuchObjectException(f"transaction {txn_id} does not exist")
        return {"o": "open", "c": "committed", "a": "aborted"}[row[0]]


def is_transactional(table: Table) -> bool:
    return table.parameters.get("transactional", "").lower() == "true"


def _alive(pid: int | None) -> bool:
    if not pid:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _checked_stats(stats) -> ColumnStatistics:
    if not isinstance(stats, ColumnStatistics) or not all(isinstance(o, ColumnStatisticsObj) for o in stats.statsObj):
        raise InvalidInputException(f"expected a ColumnStatistics of ColumnStatisticsObj, not {type(stats).__name__}")
    return stats


def _check_name(name: str, what: str) -> str:
    if not name or not isinstance(name, str) or len(name) > 128:
        raise InvalidObjectException(f"invalid {what} name {name!r}")
    return name.lower()


def _json_list(items) -> str:
    return json.dumps(list(items))

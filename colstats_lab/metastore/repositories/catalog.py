"""Hive's catalog API over the metastore file: databases, tables, partitions and their parameters
(DBS, TBLS, SDS, COLUMNS_V2, PARTITION_KEYS, PARTITIONS, PARTITION_KEY_VALS, *_PARAMS), and a
partitioned table's basic statistics summed from its partitions."""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from ...coltypes import parse_type
from ...column_statistics.model import FieldSchema, Partition, SkewedInfo, Table
from ...column_statistics.names import escape_path_name, make_part_name, parse_part_name
from ...errors import (
    AlreadyExistsException,
    InvalidInputException,
    InvalidObjectException,
    MetaException,
    NoSuchObjectException,
)
from ...storage import join
from ..db import Database
from ..rows import hive_rows, skew_rows
from ..rows.column_stats_accurate import PARAM as ACCURATE_PARAM
from ..rows.column_stats_accurate import StatsAccuracy
from ..rows.hive_rows import DEFAULT_DB, checked_name, epoch_seconds, is_transactional, json_list
from ..rows.partition_filter import compile_partition_filter
from ..rows.write_ids import ValidWriteIdList
from ..settings import MetastoreSettings
from .repository import Repository
from .stats_segments import SegmentRepository


class ReaderRule(Protocol):
    """Removes COLUMN_STATS_ACCURATE from the parameters of `owners` (partition name or None, parameters, write
    ID, location) whose statistics are not accurate for a reader with `valid`."""

    def __call__(self, table: Table, owners: list[tuple], valid: ValidWriteIdList) -> None: ...


def _no_reader_rule(table: Table, owners: list[tuple], valid: ValidWriteIdList) -> None:
    raise MetaException(f"the catalog cannot judge {table.qualified_name} for a reader: no accuracy rule was handed to it")


class CatalogRepository(Repository):
    """Databases, tables, partitions and their parameters: the Metastore's catalog calls. A repository of
    the Metastore (store.py).

    What a reader with a ValidWriteIdList is shown of COLUMN_STATS_ACCURATE is decided by `reader_rule`, which
    the accuracy repository, built over this one, hands it (`StatsAccuracyRepository.strip_for_reader`)."""

    def __init__(self, db: Database, settings: MetastoreSettings, segments: SegmentRepository) -> None:
        super().__init__(db, settings)
        self.segments = segments
        self.reader_rule: ReaderRule = _no_reader_rule

    # ---- databases ----------------------------------------------------------------------

    def create_database(self, name: str, description: str | None = None, if_not_exists: bool = False) -> None:
        name = checked_name(name, "database")
        with self.transaction():
            if hive_rows.db_id(self.db, name, required=False):
                if if_not_exists:
                    return
                raise AlreadyExistsException(f"database {name} already exists")
            hive_rows.insert_db(self.db, name, join(self.settings.warehouse, f"{name}.db"), description)

    def get_all_databases(self) -> list[str]:
        with self.snapshot() as conn:
            return [r["NAME"] for r in conn.execute("SELECT NAME FROM DBS ORDER BY NAME")]

    def get_database_location(self, name: str) -> str:
        with self.snapshot() as conn:
            hive_rows.db_id(self.db, name)
            return conn.execute("SELECT DB_LOCATION_URI FROM DBS WHERE NAME = ?", (name.lower(),)).fetchone()[0]

    def locations_inside(self, folder: str) -> list[str]:
        """The locations of databases, tables and partitions that lie inside `folder` (not `folder` itself), in
        order: what deleting the folder would take from them. Compared by prefix, case and all."""
        prefix = folder.rstrip("/") + "/"
        with self.snapshot() as conn:
            found = [r[0] for r in conn.execute(
                "SELECT LOCATION FROM SDS WHERE SUBSTR(LOCATION, 1, ?) = ? UNION "
                "SELECT DB_LOCATION_URI FROM DBS WHERE SUBSTR(DB_LOCATION_URI, 1, ?) = ?",
                (len(prefix), prefix, len(prefix), prefix))]
        return sorted(found)

    def drop_database(self, name: str, if_exists: bool = False, cascade: bool = False) -> list[Table]:
        """Drops a database; with cascade its tables too (returned, so their files can be removed)."""
        name = name.lower()
        if name == DEFAULT_DB:
            raise MetaException("cannot drop the default database")
        with self.transaction() as conn:
            db_id = hive_rows.db_id(self.db, name, required=not if_exists)
            if not db_id:
                return []
            tables = [self.get_table(name, t) for t in self.get_tables(name)]
            if tables and not cascade:
                raise InvalidObjectException(f"database {name} is not empty: it holds {len(tables)} tables")
            for table in tables:
                self.drop_table(name, table.tableName)
            conn.execute("DELETE FROM DBS WHERE DB_ID = ?", (db_id,))
            return tables

    # ---- tables -------------------------------------------------------------------------

    def create_table(self, table: Table, if_not_exists: bool = False) -> bool:
        """Stores a new table; returns False when it existed and if_not_exists was given."""
        checked_name(table.tableName, "table")
        names = [c.name.lower() for c in table.cols + table.partitionKeys]
        if not table.cols:
            raise InvalidObjectException(f"table {table.qualified_name} has no columns")
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise InvalidObjectException(f"table {table.qualified_name}: column {duplicates[0]} is declared twice")
        for column in table.cols + table.partitionKeys:
            checked_name(column.name, "column")
            parse_type(column.type)
        shared = table.shared_statistics_names()
        if shared:
            raise InvalidObjectException(
                f"table {table.qualified_name}: two of its columns would keep their statistics under the name "
                f"{shared[0]} (a column whose name holds a dot, and a struct's field or a collection's part of the "
                "same path): rename one in the files, as Spark cannot tell them apart in a query either")
        with self.transaction() as conn:
            db_id = hive_rows.db_id(self.db, table.dbName)
            if conn.execute("SELECT 1 FROM TBLS WHERE DB_ID = ? AND TBL_NAME = ?",
                            (db_id, table.tableName.lower())).fetchone():
                if if_not_exists:
                    return False
                raise AlreadyExistsException(f"table {table.qualified_name} already exists")
            cd_id = conn.execute("INSERT INTO CDS DEFAULT VALUES RETURNING CD_ID").fetchone()[0]
            conn.executemany(
                "INSERT INTO COLUMNS_V2 (CD_ID, COMMENT, COLUMN_NAME, TYPE_NAME, INTEGER_IDX) VALUES (?, ?, ?, ?, ?)",
                [(cd_id, c.comment, c.name.lower(), parse_type(c.type).name, i) for i, c in enumerate(table.cols)],
            )
            (sd_id,) = self._insert_sds([(cd_id, table.location, table.inputFormat, False)])
            skew_rows.write_skew(self.db, sd_id, table.skewedInfo, table.storedAsSubDirectories)
            tbl_id = conn.execute(
                "INSERT INTO TBLS (CREATE_TIME, DB_ID, OWNER, SD_ID, TBL_NAME, TBL_TYPE, WRITE_ID) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING TBL_ID",
                (table.createTime or epoch_seconds(), db_id, os.environ.get("USER", "colstats"), sd_id,
                 table.tableName.lower(), table.tableType, table.writeId),
            ).fetchone()[0]
            conn.executemany(
                "INSERT INTO PARTITION_KEYS (TBL_ID, PKEY_COMMENT, PKEY_NAME, PKEY_TYPE, INTEGER_IDX) "
                "VALUES (?, ?, ?, ?, ?)",
                [(tbl_id, k.comment, k.name.lower(), parse_type(k.type).name, i)
                 for i, k in enumerate(table.partitionKeys)],
            )
            params = dict(table.parameters)
            if table.comment:
                params["comment"] = table.comment
            hive_rows.insert_params(self.db, "TABLE_PARAMS", "TBL_ID", {tbl_id: params})
            return True

    def _insert_sds(self, sds: list[tuple[int, str, str, bool]]) -> list[int]:
        """New storage descriptors, each (CD_ID, location, input format, stored as sub-directories); their ids."""
        return self.db.dialect.insert_returning_ids(
            self.db, "SDS", "SD_ID", ("CD_ID", "INPUT_FORMAT", "OUTPUT_FORMAT", "LOCATION", "IS_STOREDASSUBDIRECTORIES"),
            [(cd_id, input_format, input_format, location, int(stored)) for cd_id, location, input_format, stored in sds])

    def get_table(self, db_name: str, table_name: str, valid_write_ids: ValidWriteIdList | None = None) -> Table:
        """The table; raises NoSuchObjectException naming `db.table`. With `valid_write_ids` (a reader's
        snapshot), COLUMN_STATS_ACCURATE is left out where the statistics are not accurate for that
        reader, as Hive's getTable(..., validWriteIdList) leaves it out."""
        with self.snapshot() as conn:
            row = hive_rows.table_row(self.db, db_name, table_name)
            cols = [FieldSchema(r["COLUMN_NAME"], r["TYPE_NAME"], r["COMMENT"]) for r in conn.execute(
                "SELECT COLUMN_NAME, TYPE_NAME, COMMENT FROM COLUMNS_V2 WHERE CD_ID = ? ORDER BY INTEGER_IDX",
                (row["CD_ID"],))]
            keys = [FieldSchema(r["PKEY_NAME"], r["PKEY_TYPE"], r["PKEY_COMMENT"]) for r in conn.execute(
                "SELECT PKEY_NAME, PKEY_TYPE, PKEY_COMMENT FROM PARTITION_KEYS WHERE TBL_ID = ? ORDER BY INTEGER_IDX",
                (row["TBL_ID"],))]
            params = hive_rows.params(self.db, "TABLE_PARAMS", "TBL_ID", row["TBL_ID"])
            skew, stored = skew_rows.read_skews(self.db, [row["SD_ID"]])[row["SD_ID"]]
            table = Table(
                dbName=db_name.lower(), tableName=row["TBL_NAME"], cols=cols, partitionKeys=keys,
                location=row["LOCATION"], tableType=row["TBL_TYPE"], inputFormat=row["INPUT_FORMAT"],
                parameters=params, createTime=row["CREATE_TIME"], writeId=row["WRITE_ID"],
                comment=params.get("comment"), skewedInfo=skew, storedAsSubDirectories=stored,
            )
            if valid_write_ids is not None and not table.is_partitioned:
                self.reader_rule(table, [(None, table.parameters, table.writeId, table.location)],
                                       valid_write_ids)
            return table

    def get_tables(self, db_name: str) -> list[str]:
        with self.snapshot() as conn:
            db_id = hive_rows.db_id(self.db, db_name)
            return [r[0] for r in conn.execute("SELECT TBL_NAME FROM TBLS WHERE DB_ID = ? ORDER BY TBL_NAME", (db_id,))]

    def table_exists(self, db_name: str, table_name: str) -> bool:
        with self.snapshot():
            try:
                hive_rows.table_row(self.db, db_name, table_name)
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
            row = hive_rows.table_row(self.db, db_name, table_name)
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
            row = hive_rows.table_row(self.db, db_name, table_name)
            table = self.get_table(db_name, table_name)
            accurate = self._guard_accuracy(table, row["WRITE_ID"], updates, write_id, valid_write_ids)
            hive_rows.update_params(self.db, "TABLE_PARAMS", "TBL_ID", row["TBL_ID"], updates)
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
        if not self.settings.txn_stats_enabled:
            updates[ACCURATE_PARAM] = None
            return False
        if write_id is None or valid is None:
            raise MetaException(f"cannot mark statistics of transactional table {table.qualified_name} accurate "
                                "without the writer's write ID and ValidWriteIdList")
        if not self._writer_sees(table, current_write_id, valid):
            updates[ACCURATE_PARAM] = None
            return False
        return True

    def _writer_sees(self, table: Table, current_write_id: int, valid: ValidWriteIdList | None) -> bool:
        """Whether a stats writer with `valid` may build on stats written by `current_write_id`: it can
        see that write, or that write aborted (its stats may be replaced)."""
        if current_write_id == 0 or (valid is not None and valid.is_write_id_valid(current_write_id)):
            return True
        return current_write_id in hive_rows.valid_write_ids(self.db, table).aborted_write_ids

    # ---- partitions ---------------------------------------------------------------------

    def add_partitions(self, partitions: Iterable[Partition], if_not_exists: bool = False) -> list[Partition]:
        """Adds partitions of one table; returns those that were new."""
        added: list[tuple[Partition, Any]] = []
        tables: dict[tuple[str, str], tuple] = {}
        partitions = list(partitions)
        with self.transaction() as conn:
            for part in partitions:
                owner = (part.dbName.lower(), part.tableName.lower())
                if owner not in tables:
                    row = hive_rows.table_row(self.db, part.dbName, part.tableName)
                    keys = hive_rows.partition_keys(self.db, row["TBL_ID"])
                    asked = [make_part_name(keys, p.values) for p in partitions
                             if (p.dbName.lower(), p.tableName.lower()) == owner and len(p.values) == len(keys)]
                    existing = {r[0] for r in conn.execute(
                        "SELECT PART_NAME FROM PARTITIONS WHERE TBL_ID = ? AND PART_NAME IN (SELECT value FROM json_each(?))",
                        (row["TBL_ID"], json_list(asked)))}
                    tables[owner] = (row, keys, skew_rows.read_skews(self.db, [row["SD_ID"]]), existing)
                row, keys, table_skew, existing = tables[owner]
                if len(part.values) != len(keys):
                    raise InvalidObjectException(
                        f"table {part.dbName}.{part.tableName} has partition keys {keys}, got values {part.values}")
                part.keys = keys
                name = part.partName
                if name in existing:
                    if if_not_exists:
                        continue
                    raise AlreadyExistsException(f"partition {name} of {part.dbName}.{part.tableName} already exists")
                existing.add(name)  # twice in the list: the second is an existing partition
                if part.skewedInfo is None:  # a new partition takes the table's skew spec, without locations
                    skew, stored = table_skew[row["SD_ID"]]
                    part.skewedInfo = None if skew is None else SkewedInfo(skew.skewedColNames, skew.skewedColValues)
                    part.storedAsSubDirectories = stored
                added.append((part, row))
            self._insert_partitions(added)
        return [part for part, _ in added]

    def _insert_partitions(self, parts: list[tuple[Partition, Any]]) -> None:
        """The rows of new partitions (each with its table's row) and of their storage descriptors, a batch a
        table of the schema, not statements a partition."""
        sd_ids = self._insert_sds([(row["CD_ID"], part.location, row["INPUT_FORMAT"],
                                    bool(part.storedAsSubDirectories and part.skewedInfo)) for part, row in parts])
        for (part, _), sd_id in zip(parts, sd_ids, strict=True):
            if part.skewedInfo is not None:
                skew_rows.write_skew(self.db, sd_id, part.skewedInfo, part.storedAsSubDirectories, new=True)
        part_ids = self.db.dialect.insert_returning_ids(
            self.db, "PARTITIONS", "PART_ID", ("CREATE_TIME", "PART_NAME", "SD_ID", "TBL_ID", "WRITE_ID"),
            [(part.createTime or epoch_seconds(), part.partName, sd_id, row["TBL_ID"], part.writeId)
             for (part, row), sd_id in zip(parts, sd_ids, strict=True)])
        self.db.insert_rows("PARTITION_KEY_VALS", ("PART_ID", "PART_KEY_VAL", "INTEGER_IDX"),
                            [(part_id, value, i) for (part, _), part_id in zip(parts, part_ids, strict=True)
                             for i, value in enumerate(part.values)])
        hive_rows.insert_params(self.db, "PARTITION_PARAMS", "PART_ID",
                            {part_id: part.parameters for (part, _), part_id in zip(parts, part_ids, strict=True)})

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
            row = hive_rows.table_row(self.db, db_name, table_name)
            keys = hive_rows.partition_keys(self.db, row["TBL_ID"])
            sql = ("SELECT P.PART_ID, P.PART_NAME, P.CREATE_TIME, P.WRITE_ID, S.LOCATION, P.SD_ID FROM PARTITIONS P "
                   "LEFT JOIN SDS S ON S.SD_ID = P.SD_ID WHERE P.TBL_ID = ?")
            args: list = [row["TBL_ID"]]
            if part_names is not None:
                sql += " AND P.PART_NAME IN (SELECT value FROM json_each(?))"
                args.append(json_list(part_names))
            part_rows = conn.execute(sql + " ORDER BY P.PART_NAME", args).fetchall()
            params = hive_rows.params_many(self.db, "PARTITION_PARAMS", "PART_ID", [r["PART_ID"] for r in part_rows])
            skews = skew_rows.read_skews(self.db, [r["SD_ID"] for r in part_rows])
            parts = [
                Partition(dbName=db_name.lower(), tableName=row["TBL_NAME"],
                          values=[v for _, v in parse_part_name(r["PART_NAME"])], location=r["LOCATION"],
                          parameters=params.get(r["PART_ID"], {}), createTime=r["CREATE_TIME"],
                          writeId=r["WRITE_ID"], keys=keys, skewedInfo=skews[r["SD_ID"]][0],
                          storedAsSubDirectories=skews[r["SD_ID"]][1])
                for r in part_rows
            ]
            if valid_write_ids is not None:
                self.reader_rule(self.get_table(db_name, table_name),
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
                                                table.qualified_name, conn.dialect)
            joins = " ".join(f"JOIN PARTITION_KEY_VALS K{i} ON K{i}.PART_ID = P.PART_ID AND K{i}.INTEGER_IDX = {i}"
                             for i in compiled.keys_used)
            row = hive_rows.table_row(self.db, db_name, table_name)
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
            row = hive_rows.table_row(self.db, db_name, table_name)
            joins, condition, args = "", "1 = 1", ()
            if filter is not None:
                table = self.get_table(db_name, table_name)
                compiled = compile_partition_filter(filter, [(k.name, k.type) for k in table.partitionKeys],
                                                    table.qualified_name, conn.dialect)
                joins = " ".join(f"JOIN PARTITION_KEY_VALS K{i} ON K{i}.PART_ID = P.PART_ID AND K{i}.INTEGER_IDX = {i}"
                                 for i in compiled.keys_used)
                condition, args = compiled.condition, compiled.args
            # the selected partitions are found first (through the index on key values where the filter
            # allows) and drive the rest, so one day of 100,000 partitions costs what it does of 30
            out: dict[str, list[str | None]] = {}
            for name, value in conn.execute(
                    f"WITH S AS MATERIALIZED (SELECT P.PART_ID FROM PARTITIONS P {joins} WHERE P.TBL_ID = ? "
                    f"AND {condition}) SELECT P.PART_NAME, K.PART_KEY_VAL FROM S CROSS JOIN PARTITIONS P "
                    "ON P.PART_ID = S.PART_ID CROSS JOIN PARTITION_KEY_VALS K ON K.PART_ID = P.PART_ID "
                    "ORDER BY P.PART_NAME, K.INTEGER_IDX", (row["TBL_ID"], *args)):
                out.setdefault(name, []).append(value)
            return out

    def get_partition_names_by_values(self, db_name: str, table_name: str,
                                      values: dict[str, str | None]) -> list[str]:
        """The names of the partitions whose keys hold exactly `values` (key name -> value as stored,
        None: the default partition's NULL; keys left out match anything), through the index on key values."""
        with self.snapshot() as conn:
            row = hive_rows.table_row(self.db, db_name, table_name)
            keys = hive_rows.partition_keys(self.db, row["TBL_ID"])
            joins, args = [], []
            for i, key in enumerate(keys):
                if key in values:
                    # `=` or IS NULL, not SQLite's `IS ?`: PostgreSQL's IS NOT DISTINCT FROM takes no index
                    value = values[key]
                    joins.append(f"JOIN PARTITION_KEY_VALS K{i} ON K{i}.PART_ID = P.PART_ID AND K{i}.INTEGER_IDX = {i} "
                                 f"AND K{i}.PART_KEY_VAL {'IS NULL' if value is None else '= ?'}")
                    args.extend([] if value is None else [value])
            return [r[0] for r in conn.execute(
                f"SELECT P.PART_NAME FROM PARTITIONS P {' '.join(joins)} WHERE P.TBL_ID = ? ORDER BY P.PART_NAME",
                (*args, row["TBL_ID"]))]

    def find_partition_names(self, db_name: str, table_name: str, contains: str = "", limit: int = 200
                             ) -> tuple[list[str], int]:
        """Up to `limit` partition names holding `contains` (case-sensitive; as typed or as a name escapes it,
        so `'` finds `%27`), in name order, and how many hold it: what a picker over 100,000 partitions shows."""
        with self.snapshot() as conn:
            row = hive_rows.table_row(self.db, db_name, table_name)
            where = "WHERE TBL_ID = ? AND (instr(PART_NAME, ?) > 0 OR instr(PART_NAME, ?) > 0)"
            args = (row["TBL_ID"], contains, escape_path_name(contains))
            names = [r[0] for r in conn.execute(f"SELECT PART_NAME FROM PARTITIONS {where} ORDER BY PART_NAME LIMIT ?",
                                                (*args, limit))]
            total = conn.execute(f"SELECT count(*) FROM PARTITIONS {where}", args).fetchone()[0]
            return names, total

    def get_partition_params(self, db_name: str, table_name: str, keys: list[str]) -> dict[str, dict[str, str]]:
        """The parameters `keys` of every partition by partition name, one dict each (absent keys left out),
        in one query and without a Partition object each: what a sum over 100,000 partitions needs."""
        with self.snapshot() as conn:
            row = hive_rows.table_row(self.db, db_name, table_name)
            out: dict[str, dict[str, str]] = {}
            for name, key, value in conn.execute(
                    "SELECT P.PART_NAME, PP.PARAM_KEY, PP.PARAM_VALUE FROM PARTITIONS P LEFT JOIN PARTITION_PARAMS PP "
                    "ON PP.PART_ID = P.PART_ID AND PP.PARAM_KEY IN (SELECT value FROM json_each(?)) WHERE P.TBL_ID = ? "
                    "ORDER BY P.PART_NAME", (json_list(keys), row["TBL_ID"])):
                params = out.setdefault(name, {})
                if key is not None:
                    params[key] = value
            return out

    def partitions_holding(self, db_name: str, table_name: str, key: str, also: Sequence[str] = ()
                           ) -> dict[str, dict[str, str]]:
        """The partitions whose parameters hold `key`, with it and the parameters `also`: the few a tiered ANALYZE
        marked among 100,000, read without visiting the others' parameters."""
        with self.snapshot() as conn:
            row = hive_rows.table_row(self.db, db_name, table_name)
            out: dict[str, dict[str, str]] = {}
            for name, found_key, value in conn.execute(
                    "SELECT P.PART_NAME, PP.PARAM_KEY, PP.PARAM_VALUE FROM PARTITIONS P JOIN PARTITION_PARAMS K "
                    "ON K.PART_ID = P.PART_ID AND K.PARAM_KEY = ? JOIN PARTITION_PARAMS PP ON PP.PART_ID = P.PART_ID "
                    "AND PP.PARAM_KEY IN (SELECT value FROM json_each(?)) WHERE P.TBL_ID = ? ORDER BY P.PART_NAME",
                    (key, json_list([key, *also]), row["TBL_ID"])):
                out.setdefault(name, {})[found_key] = value
            return out

    def changed_rows_summed(self, db_name: str, table_name: str, changed_key: str) -> tuple[int, int, int, int, int]:
        """Over every partition, summed by the database: (partitions, those with `changed_key`, their changed rows,
        their numRows, those whose changed rows are not 0). What `staleness.describe_summed` says, without a row of
        each of 100,000 partitions' parameters in Python."""
        with self.snapshot() as conn:
            row = hive_rows.table_row(self.db, db_name, table_name)
            found = conn.execute(
                "SELECT COUNT(*), COUNT(C.PARAM_VALUE), COALESCE(SUM(CAST(NULLIF(C.PARAM_VALUE, '') AS BIGINT)), 0), "
                "COALESCE(SUM(CASE WHEN C.PARAM_VALUE IS NOT NULL THEN CAST(NULLIF(N.PARAM_VALUE, '') AS BIGINT) END), "
                "0), COALESCE(SUM(CASE WHEN CAST(NULLIF(C.PARAM_VALUE, '') AS BIGINT) <> 0 THEN 1 ELSE 0 END), 0) "
                "FROM PARTITIONS P LEFT JOIN PARTITION_PARAMS C ON C.PART_ID = P.PART_ID AND C.PARAM_KEY = ? "
                "LEFT JOIN PARTITION_PARAMS N ON N.PART_ID = P.PART_ID AND N.PARAM_KEY = 'numRows' WHERE P.TBL_ID = ?",
                (changed_key, row["TBL_ID"])).fetchone()
            return tuple(int(v or 0) for v in found)  # type: ignore[return-value]

    def count_partitions(self, db_name: str, table_name: str) -> int:
        """The number of the table's partitions: from the segments' summary when it is fresh, else counted."""
        state = self.segments.partition_state(db_name, table_name)
        if state is not None:
            return sum(group.parts for group in state)
        with self.snapshot() as conn:
            row = hive_rows.table_row(self.db, db_name, table_name)
            return conn.execute("SELECT count(*) FROM PARTITIONS WHERE TBL_ID = ?", (row["TBL_ID"],)).fetchone()[0]

    def get_partition_names(self, db_name: str, table_name: str) -> list[str]:
        with self.snapshot() as conn:
            row = hive_rows.table_row(self.db, db_name, table_name)
            return [r[0] for r in conn.execute(
                "SELECT PART_NAME FROM PARTITIONS WHERE TBL_ID = ? ORDER BY PART_NAME", (row["TBL_ID"],))]

    def drop_partition(self, db_name: str, table_name: str, part_name: str, if_exists: bool = False) -> Partition | None:
        """Drops one partition and its statistics in one transaction; returns what it was."""
        with self.transaction() as conn:
            row = hive_rows.table_row(self.db, db_name, table_name)
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

    def set_partition_locations(self, db_name: str, table_name: str, locations: dict[str, str]) -> None:
        """Points partitions (by name) at new directories: an external table's partitions as the catalog
        that owns them places them."""
        with self.transaction() as conn:
            tbl_id = hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"]
            conn.executemany(
                "UPDATE SDS SET LOCATION = ? WHERE SD_ID = (SELECT SD_ID FROM PARTITIONS WHERE TBL_ID = ? AND PART_NAME = ?)",
                [(location, tbl_id, name) for name, location in locations.items()])

    def alter_partition_params(self, db_name: str, table_name: str, part_name: str,
                               updates: dict[str, str | None], write_id: int | None = None,
                               valid_write_ids: ValidWriteIdList | None = None) -> bool:
        """Sets partition parameters (None removes a key) and, if given, the write ID of this stats
        writer, with the same rule for accuracy as `alter_table_params`; returns whether the
        partition's statistics are accurate afterwards."""
        return self.alter_partitions_params(db_name, table_name, {part_name: updates}, write_id,
                                            valid_write_ids)[part_name]

    def alter_partitions_params(self, db_name: str, table_name: str, updates: dict[str, dict[str, str | None]],
                                write_id: int | None = None, valid_write_ids: ValidWriteIdList | None = None
                                ) -> dict[str, bool]:
        """`alter_partition_params` of many partitions of one table (partition name -> its updates), the table
        read once; returns whether each partition's statistics are accurate afterwards. Raises
        NoSuchObjectException naming the first partition that does not exist, before changing any."""
        with self.transaction() as conn:
            row = hive_rows.table_row(self.db, db_name, table_name)
            found = {r[0]: (r[1], r[2]) for r in conn.execute(
                "SELECT PART_NAME, PART_ID, WRITE_ID FROM PARTITIONS WHERE TBL_ID = ? "
                "AND PART_NAME IN (SELECT value FROM json_each(?))", (row["TBL_ID"], json_list(list(updates))))}
            missing = [name for name in updates if name not in found]
            if missing:
                raise NoSuchObjectException(
                    f"partition {missing[0]} of {db_name.lower()}.{table_name.lower()} does not exist")
            table = self.get_table(db_name, table_name)
            accurate = {}
            for name, changes in updates.items():
                part_id, current = found[name]
                accurate[name] = self._guard_accuracy(table, current, changes, write_id, valid_write_ids)
            hive_rows.update_params_many(self.db, "PARTITION_PARAMS", "PART_ID",
                                     {found[name][0]: changes for name, changes in updates.items()})
            if write_id is not None:
                conn.execute("UPDATE PARTITIONS SET WRITE_ID = ? WHERE PART_ID IN (SELECT CAST(value AS INTEGER) "
                             "FROM json_each(?))", (write_id, json_list([found[name][0] for name in updates])))
            return accurate

    # ---- parameters ---------------------------------------------------------------------

    def refresh_partitioned_table_params(self, db_name: str, table_name: str) -> None:
        """Recomputes a partitioned table's basic stats from its partitions, as Hive keeps them.

        numRows, rawDataSize sum the partitions that know theirs; numFiles and totalSize sum all;
        BASIC_STATS is accurate on the table only when it is on every partition (column flags
        live on partitions).
        """
        with self.transaction() as conn:
            row = hive_rows.table_row(self.db, db_name, table_name)
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
            hive_rows.update_params(self.db, "TABLE_PARAMS", "TBL_ID", row["TBL_ID"], {
                "numPartitions": str(num_parts),
                "numRows": str(sums["numRows"] or 0),
                "rawDataSize": str(sums["rawDataSize"] or 0),
                "numFiles": str(sums["numFiles"] or 0),
                "totalSize": str(sums["totalSize"] or 0),
                ACCURATE_PARAM: flag,
            })

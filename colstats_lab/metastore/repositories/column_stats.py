"""Hive's column-statistics API over the metastore file (TAB_COL_STATS, PART_COL_STATS and the
segments merged from them): update, get, delete, set_aggr_stats_for and get_aggr_stats_for."""
from __future__ import annotations

from collections.abc import Iterable

from ...coltypes import parse_type
from ...column_statistics.merge import merge_segments, segment_to_obj
from ...column_statistics.model import AggrStats, ColumnStatistics, ColumnStatisticsDesc, ColumnStatisticsObj, Table
from ...column_statistics.stats_rows import ROW_COLUMNS, StatsColumn, obj_to_row, obj_to_values, row_to_obj
from ...errors import InvalidInputException, InvalidObjectException, MetaException, NoSuchObjectException
from ..db import Database, Row
from ..rows import hive_rows, segments
from ..rows.aggr_stats import aggregate_partitions
from ..rows.column_stats_accurate import PARAM as ACCURATE_PARAM
from ..rows.column_stats_accurate import StatsAccuracy
from ..rows.hive_rows import (
    DB_AT,
    PART_STATS_INSERT,
    STATS_BATCH,
    TABLE_AT,
    checked_stats,
    epoch_seconds,
    is_transactional,
    json_list,
)
from ..rows.segments import PARTITION_STATS_SELECT
from ..rows.write_ids import ValidWriteIdList
from ..settings import MetastoreSettings
from .catalog import CatalogRepository
from .history import keep_states, last_stats_row
from .repository import Repository
from .stats_accuracy import StatsAccuracyRepository
from .stats_segments import SegmentRepository
from .transactions import TxnRepository


class ColumnStatisticsRepository(Repository):
    """Table and partition column statistics and their aggregates: the Metastore's statistics calls. A repository of
    the Metastore (store.py)."""

    def __init__(self, db: Database, settings: MetastoreSettings, catalog: CatalogRepository, txns: TxnRepository,
                 accuracy: StatsAccuracyRepository, segments: SegmentRepository) -> None:
        super().__init__(db, settings)
        self.catalog = catalog
        self.txns = txns
        self.accuracy = accuracy
        self.segments = segments

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
        desc = checked_stats(stats).statsDesc
        if not desc.isTblLevel:
            raise InvalidInputException("update_table_column_statistics takes table-level statistics (isTblLevel)")
        with self.transaction():
            table = self.catalog.get_table(desc.dbName, desc.tableName)
            self._require_write_state(table, write_id, valid_write_ids)
            row = self._store_table_stats(stats)
            return self._mark_columns(table, ("TABLE_PARAMS", "TBL_ID", row["TBL_ID"]), ("TBLS", row["WRITE_ID"]),
                                      table.parameters, [o.colName for o in stats.statsObj], write_id,
                                      valid_write_ids)

    def store_merged_table_statistics(self, stats: ColumnStatistics) -> None:
        """Stores the table level of a partitioned table, merged from its partitions' statistics. Their
        accuracy stays where Hive keeps it, on the partitions: no flag or write ID changes here."""
        with self.transaction():
            self._store_table_stats(checked_stats(stats))

    def _store_table_stats(self, stats: ColumnStatistics) -> Row:
        desc = stats.statsDesc
        row = hive_rows.table_row(self.db, desc.dbName, desc.tableName)
        self._check_stats_columns(desc, stats.statsObj)
        # the columns' rows in one store: on a server, a statement (and its history insert) per column was a
        # tenth of an auto-analyze round's commit at 20 columns (measured)
        owner = {"TBL_ID": row["TBL_ID"]}
        self._replace_stats_rows(self.db, "TAB_COL_STATS",
                                 [self._stats_row(owner, desc, obj_to_row(obj), stats.engine) for obj in stats.statsObj])
        self.db.executemany("INSERT INTO TAB_COL_FREQUENT_ITEMS (CS_ID, ITEMS) SELECT CS_ID, ? FROM TAB_COL_STATS "
                               "WHERE TBL_ID = ? AND COLUMN_NAME = ? AND ENGINE = ?",
                               [(obj.frequentItems, row["TBL_ID"], obj.colName.lower(), stats.engine)
                                for obj in stats.statsObj if obj.frequentItems])
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
        hive_rows.update_params(self.db, params_table, id_column, owner_id, {ACCURATE_PARAM: flags.to_param()})
        if is_transactional(table):
            self.db.execute(f"UPDATE {write_id_at[0]} SET WRITE_ID = ? WHERE {id_column} = ?", (write_id, owner_id))
        return verified and flags.basic

    def _marked_flags(self, table: Table, params: dict, current: int | None, col_names: list[str],
                      write_id: int | None, valid: ValidWriteIdList | None) -> tuple[StatsAccuracy, bool]:
        """The owner's flags after a writer stored `col_names`, and whether the writer could see the
        current statistics' writer (`current`: the owner's WRITE_ID; this same writer when it set the
        basic statistics first)."""
        flags = StatsAccuracy.parse(params.get(ACCURATE_PARAM))
        names = {c.lower() for c in col_names}
        catalog = self.catalog
        verified = not is_transactional(table) or (self.settings.txn_stats_enabled and
                                                   (current == write_id or catalog._writer_sees(table, current or 0, valid)))
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
                if len(batch) == STATS_BATCH:
                    accurate &= self._store_partition_stats(conn, batch, write_id, valid_write_ids)
                    batch = []
            if batch:
                accurate &= self._store_partition_stats(conn, batch, write_id, valid_write_ids)
        return accurate

    def _store_partition_stats(self, conn, stats_list: list[ColumnStatistics], write_id: int | None,
                               valid_write_ids: ValidWriteIdList | None) -> bool:
        by_table: dict[tuple[str, str], list[ColumnStatistics]] = {}
        for stats in stats_list:
            desc = checked_stats(stats).statsDesc
            if desc.isTblLevel or not desc.partName:
                raise InvalidInputException("partition statistics need isTblLevel false and a partName")
            by_table.setdefault((desc.dbName.lower(), desc.tableName.lower()), []).append(stats)
        accurate = True
        for (db_name, table_name), table_stats in by_table.items():
            table = self.catalog.get_table(db_name, table_name)
            self._require_write_state(table, write_id, valid_write_ids)
            row = hive_rows.table_row(self.db, db_name, table_name)
            names = sorted({name for s in table_stats if (name := s.statsDesc.partName) is not None})
            owners = {r["PART_NAME"]: r for r in conn.execute(
                "SELECT PART_NAME, PART_ID, WRITE_ID FROM PARTITIONS WHERE TBL_ID = ? "
                "AND PART_NAME IN (SELECT value FROM json_each(?))", (row["TBL_ID"], json_list(names)))}
            params = hive_rows.params_many(self.db, "PARTITION_PARAMS", "PART_ID", [r["PART_ID"] for r in owners.values()])
            types = _column_types(table)
            rows: list[tuple[tuple, ColumnStatisticsObj, tuple]] = []  # a row's owner, its figures, its tail
            flags_set: list[tuple] = []
            flags_cleared: list[tuple] = []
            written: list[int] = []
            for stats in table_stats:
                desc = stats.statsDesc
                part = owners.get(desc.partName)
                if part is None:
                    raise NoSuchObjectException(f"partition {desc.partName} of {db_name}.{table_name} does not exist")
                self._check_column_types(table, types, stats.statsObj)
                head = (part["PART_ID"], desc.partName, desc.catName, desc.dbName.lower(), desc.tableName.lower())
                tail = (desc.lastAnalyzed or epoch_seconds(), stats.engine)
                rows.extend((head, obj, tail) for obj in stats.statsObj)
                flags, verified = self._marked_flags(table, params.get(part["PART_ID"], {}), part["WRITE_ID"],
                                                     [o.colName for o in stats.statsObj], write_id, valid_write_ids)
                param = flags.to_param()
                params[part["PART_ID"]] = {} if param is None else {ACCURATE_PARAM: param}  # a repeated partition
                (flags_cleared if param is None else flags_set).append(
                    (part["PART_ID"],) if param is None else (part["PART_ID"], param))
                written.append(part["PART_ID"])
                accurate &= verified and flags.basic
            self._insert_partition_stats_rows(conn, rows)
            conn.executemany("INSERT INTO PART_COL_FREQUENT_ITEMS (CS_ID, ITEMS) SELECT CS_ID, ? FROM PART_COL_STATS "
                             "WHERE PART_ID = ? AND COLUMN_NAME = ? AND ENGINE = ?",
                             [(obj.frequentItems, owners[s.statsDesc.partName]["PART_ID"], obj.colName.lower(),
                               s.engine) for s in table_stats for obj in s.statsObj if obj.frequentItems])
            segments.mark_stale(conn, row["TBL_ID"], {p["PART_ID"] for p in owners.values()})
            param_key = ("PART_ID", "PARAM_KEY")
            conn.dialect.upsert_rows(conn, "PARTITION_PARAMS", (*param_key, "PARAM_VALUE"), param_key,
                                     [(owner, ACCURATE_PARAM, value) for owner, value in flags_set])
            conn.dialect.delete_rows(conn, "PARTITION_PARAMS", param_key,
                                     [(owner, ACCURATE_PARAM) for (owner,) in flags_cleared])
            if is_transactional(table):
                conn.execute("UPDATE PARTITIONS SET WRITE_ID = ? WHERE PART_ID IN (SELECT CAST(value AS INTEGER) "
                             "FROM json_each(?))", (write_id, json_list(written)))
        return accurate

    @staticmethod
    def _insert_partition_stats_rows(conn, rows: list[tuple[tuple, ColumnStatisticsObj, tuple]]) -> None:
        """Stores PART_COL_STATS rows (head, figures, tail: in PART_STATS_INSERT order once the figures are
        values), each replacing the row of its partition, column and engine: rows new to the table by a plain
        INSERT, which SQLite does in about two thirds of the time of a conflict-resolving one while foreign keys
        are on, their values made as they are inserted (a server stores the first while the next are made)."""
        key_of = lambda head, obj, tail: (head[0], obj.colName.lower(), tail[-1])  # noqa: E731 (PART_ID, COLUMN, ENGINE)
        taken = {tuple(key) for key in conn.execute("SELECT PART_ID, COLUMN_NAME, ENGINE FROM PART_COL_STATS "
                                                    "WHERE PART_ID IN (SELECT CAST(value AS INTEGER) FROM json_each(?))",
                                                    (json_list({head[0] for head, _, _ in rows}),))}
        new: list[tuple] = []
        replacing: list[tuple] = []
        for row in rows:
            key = key_of(*row)
            (replacing if key in taken else new).append(row)
            taken.add(key)  # a partition repeated in the batch: its later rows replace the first
        before = last_stats_row(conn, "PART_COL_STATS")
        conn.insert_rows("PART_COL_STATS", PART_STATS_INSERT, (head + obj_to_values(obj) + tail for head, obj, tail in new))
        conn.dialect.replace_rows(conn, "PART_COL_STATS", PART_STATS_INSERT, ("PART_ID", "COLUMN_NAME", "ENGINE"),
                                  [head + obj_to_values(obj) + tail for head, obj, tail in replacing])
        keep_states(conn, "PART_COL_STATS", before, {(head[DB_AT], head[TABLE_AT]) for head, _, _ in rows})

    def _check_stats_columns(self, desc: ColumnStatisticsDesc, objs: list[ColumnStatisticsObj]) -> None:
        self._check_columns_of(self.catalog.get_table(desc.dbName, desc.tableName), objs)

    def _check_columns_of(self, table: Table, objs: list[ColumnStatisticsObj]) -> None:
        self._check_column_types(table, _column_types(table), objs)

    @staticmethod
    def _check_column_types(table: Table, types: dict[str, str], objs: list[ColumnStatisticsObj]) -> None:
        for obj in objs:
            name = obj.colName.lower()
            if name not in types:
                raise table.no_such_column(name)
            if parse_type(obj.colType).name != types[name]:
                raise InvalidObjectException(
                    f"column {name} of {table.qualified_name} is {types[name]}, statistics are for {obj.colType}")

    @staticmethod
    def _stats_row(owner: dict, desc: ColumnStatisticsDesc, values: dict, engine: str) -> dict:
        return {**owner, "CAT_NAME": desc.catName, "DB_NAME": desc.dbName.lower(),
                "TABLE_NAME": desc.tableName.lower(), **values,
                "LAST_ANALYZED": desc.lastAnalyzed or epoch_seconds(), "ENGINE": engine}

    @staticmethod
    def _replace_stats_rows(conn, table: str, rows: list[dict]) -> None:
        """Inserts stats rows, each replacing the row of its owner, column and engine (the UNIQUE key), each
        kept as a state of the statistics' history."""
        if not rows:
            return
        names = list(rows[0])
        before = last_stats_row(conn, table)
        owner = "TBL_ID" if table == "TAB_COL_STATS" else "PART_ID"
        conn.dialect.replace_rows(conn, table, names, (owner, "COLUMN_NAME", "ENGINE"), [[r[n] for n in names] for r in rows])
        keep_states(conn, table, before, {(r["DB_NAME"], r["TABLE_NAME"]) for r in rows})

    def columns_with_frequent_items(self, db_name: str, table_name: str, engine: str = "hive") -> set[str]:
        """The columns some partition (or the table) keeps a frequent-items sketch of, without reading one."""
        with self.snapshot() as conn:
            row = hive_rows.table_row(self.db, db_name, table_name)
            if hive_rows.partition_keys(self.db, row["TBL_ID"]):
                found = conn.execute(
                    "SELECT DISTINCT S.COLUMN_NAME FROM PART_COL_FREQUENT_ITEMS F JOIN PART_COL_STATS S ON "
                    "S.CS_ID = F.CS_ID WHERE S.DB_NAME = ? AND S.TABLE_NAME = ? AND S.ENGINE = ?",
                    (db_name.lower(), table_name.lower(), engine))
            else:
                found = conn.execute(
                    "SELECT DISTINCT S.COLUMN_NAME FROM TAB_COL_FREQUENT_ITEMS F JOIN TAB_COL_STATS S ON "
                    "S.CS_ID = F.CS_ID WHERE S.TBL_ID = ? AND S.ENGINE = ?", (row["TBL_ID"], engine))
            return {r[0] for r in found}

    def get_frequent_items(self, db_name: str, table_name: str, col_name: str, part_names: list[str] | None = None,
                           engine: str = "hive") -> dict[str | None, bytes]:
        """The frequent-items sketches stored beside a column's statistics (metastore.settings.frequent_items): per
        partition name of `part_names` (None: every partition), or under None the table row of a table
        without partitions. Whether those statistics are accurate for a reader is the caller's to check."""
        with self.snapshot() as conn:
            row = hive_rows.table_row(self.db, db_name, table_name)
            if hive_rows.partition_keys(self.db, row["TBL_ID"]):
                # only the partitions asked for are read: their sketches may be tens of KiB each
                chosen = "" if part_names is None else " AND S.PART_NAME IN (SELECT value FROM json_each(?))"
                rows = conn.execute(
                    "SELECT S.PART_NAME, F.ITEMS FROM PART_COL_FREQUENT_ITEMS F JOIN PART_COL_STATS S ON "
                    "S.CS_ID = F.CS_ID JOIN PARTITIONS P ON P.PART_ID = S.PART_ID WHERE P.TBL_ID = ? AND "
                    f"S.COLUMN_NAME = ? AND S.ENGINE = ?{chosen}",
                    (row["TBL_ID"], col_name.lower(), engine,
                     *([] if part_names is None else [json_list(part_names)]))).fetchall()
            else:
                rows = conn.execute(
                    "SELECT NULL, F.ITEMS FROM TAB_COL_FREQUENT_ITEMS F JOIN TAB_COL_STATS S ON S.CS_ID = F.CS_ID "
                    "WHERE S.TBL_ID = ? AND S.COLUMN_NAME = ? AND S.ENGINE = ?",
                    (row["TBL_ID"], col_name.lower(), engine)).fetchall()
        return {r[0]: bytes(r[1]) for r in rows}

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
            table = self.catalog.get_table(db_name, table_name)
            hive_rows.require_columns(table, col_names)
            row = hive_rows.table_row(self.db, db_name, table_name)
            rows = conn.execute(
                f"SELECT {', '.join(ROW_COLUMNS)}, LAST_ANALYZED FROM TAB_COL_STATS WHERE TBL_ID = ? AND ENGINE = ? "
                "AND COLUMN_NAME IN (SELECT value FROM json_each(?)) ORDER BY COLUMN_NAME",
                (row["TBL_ID"], engine, json_list([c.lower() for c in col_names])),
            ).fetchall()
            if not rows:
                return None
            names = [r["COLUMN_NAME"] for r in rows]
            compliance = self.accuracy.stats_compliance_summary(db_name, table_name, names, valid_write_ids)
            return ColumnStatistics(
                ColumnStatisticsDesc(True, table.dbName, table.tableName,
                                     lastAnalyzed=max(r["LAST_ANALYZED"] for r in rows)),
                [row_to_obj(r) for r in rows], engine=engine,
                isStatsCompliant=compliance.not_accurate == 0)

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
            hive_rows.part_id(self.db, db_name, table_name, part_name)

    def get_partitions_statistics(self, db_name: str, table_name: str, part_names: list[str] | None,
                                  col_names: list[str], engine: str = "hive",
                                  valid_write_ids: ValidWriteIdList | None = None) -> dict[str, ColumnStatistics]:
        """Statistics of many columns in many partitions (all when part_names is None), in one query;
        each partition's `isStatsCompliant` is for a reader with `valid_write_ids` (default: now)."""
        with self.snapshot() as conn:
            table = self.catalog.get_table(db_name, table_name)
            hive_rows.require_columns(table, col_names)
            row = hive_rows.table_row(self.db, db_name, table_name)
            # DB_NAME/TABLE_NAME/COLUMN_NAME lead Hive's PCS_STATS_IDX: one index range per column
            sql = (f"SELECT S.PART_NAME, S.LAST_ANALYZED, P.WRITE_ID, PA.PARAM_VALUE AS ACCURATE, "
                   f"{', '.join('S.' + c for c in ROW_COLUMNS)} "
                   "FROM PART_COL_STATS S JOIN PARTITIONS P ON P.PART_ID = S.PART_ID "
                   "LEFT JOIN PARTITION_PARAMS PA ON PA.PART_ID = P.PART_ID AND PA.PARAM_KEY = ? "
                   "WHERE S.DB_NAME = ? AND S.TABLE_NAME = ? AND P.TBL_ID = ? AND S.ENGINE = ? "
                   "AND S.COLUMN_NAME IN (SELECT value FROM json_each(?))")
            args = [ACCURATE_PARAM, table.dbName, table.tableName, row["TBL_ID"], engine,
                    json_list([c.lower() for c in col_names])]
            if part_names is not None:
                sql += " AND S.PART_NAME IN (SELECT value FROM json_each(?))"
                args.append(json_list(part_names))
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
                valid = valid_write_ids or self.txns.get_valid_write_ids(db_name, table_name)
                changed = self.accuracy.external_file_changes(table, {
                    p.partName: p.location for p in self.catalog.get_partitions(db_name, table_name, list(out))
                } if table.tableType == "EXTERNAL_TABLE" else {})
                for name, stats in out.items():
                    write_id, accurate = owners[name]
                    params = {} if accurate is None else {ACCURATE_PARAM: accurate}
                    stats.isStatsCompliant = self.accuracy.compliance(table, params, write_id, "partition",
                                                              [o.colName for o in stats.statsObj], valid,
                                                              changed.get(name))[0]
            return out

    def analyzed_partition_columns(self, db_name: str, table_name: str) -> dict[str, set[str] | None]:
        """Per column that holds statistics in any partition: the names of those partitions, or None when
        every partition does. From Hive's PCS_STATS_IDX alone (a count per column, then names only for
        columns some partitions lack); the lab keeps one engine's statistics, Hive's."""
        with self.snapshot() as conn:
            table = self.catalog.get_table(db_name, table_name)
            where = "WHERE DB_NAME = ? AND TABLE_NAME = ?"
            key = (table.dbName, table.tableName)
            total = self.catalog.count_partitions(db_name, table_name)
            out: dict[str, set[str] | None] = {}
            for column, count in conn.execute(f"SELECT COLUMN_NAME, count(*) FROM PART_COL_STATS {where} "
                                              "GROUP BY COLUMN_NAME", key).fetchall():
                out[column] = None if count >= total else {r[0] for r in conn.execute(
                    f"SELECT PART_NAME FROM PART_COL_STATS {where} AND COLUMN_NAME = ?", (*key, column))}
            return out

    def partition_stats_columns(self, db_name: str, table_name: str, col_names: list[str],
                                engine: str = "hive", part_names: list[str] | None = None) -> dict[str, StatsColumn]:
        """The statistics of `col_names` in every partition (or those named) with the partition's numRows,
        as one StatsColumn per column that has any, in partition name order (one query, no object per
        partition): the input of a table-level merge and of get_aggr_stats_for."""
        with self.snapshot() as conn:
            table = self.catalog.get_table(db_name, table_name)
            hive_rows.require_columns(table, col_names)
            by_column: dict[str, list[tuple]] = {}
            # PART_COL_STATS rows go with their partition (ON DELETE CASCADE), so DB_NAME/TABLE_NAME
            # select this table's rows through Hive's PCS_STATS_IDX without visiting PARTITIONS
            sql = (PARTITION_STATS_SELECT + "WHERE S.DB_NAME = ? AND S.TABLE_NAME = ? AND S.ENGINE = ? "
                   "AND S.COLUMN_NAME IN (SELECT value FROM json_each(?))")
            args = [table.dbName, table.tableName, engine, json_list([c.lower() for c in col_names])]
            if part_names is not None:
                sql += " AND S.PART_NAME IN (SELECT value FROM json_each(?))"
                args.append(json_list(part_names))
            for r in conn.execute(sql + " ORDER BY S.PART_NAME", args):
                by_column.setdefault(r[0], []).append(r)
            return {name: StatsColumn.from_rows(rows) for name, rows in by_column.items()}

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

        if part_names is None:
            self.segments.refresh_segments(db_name, table_name)
        with self.snapshot():
            table = self.catalog.get_table(db_name, table_name)
            if not table.is_partitioned:
                raise InvalidInputException(f"table {table.qualified_name} is not partitioned: "
                                            "its statistics come from get_table_statistics")
            whole = self._aggr_from_segments(table, [c.lower() for c in col_names], engine) \
                if part_names is None else None
            names: list[str] = []
            if whole is not None:
                aggr = whole
            elif part_names is None:
                names = self.catalog.get_partition_names(db_name, table_name)
            else:
                names = hive_rows.existing_partition_names(self.db, table, part_names)  # name order: Hive extrapolates along it
                if len(names) < len(set(part_names)):
                    unknown = sorted(set(part_names) - set(names))
                    raise NoSuchObjectException(
                        f"partition {unknown[0]} of {table.qualified_name} does not exist")
            if whole is None:
                columns = self.partition_stats_columns(db_name, table_name, col_names, engine,
                                                       None if part_names is None else names)
                aggr = aggregate_partitions([c.lower() for c in col_names], columns, names,
                                            density=self.settings.ndv_density_function)
            if check_compliance:
                aggr.isStatsCompliant = bool(aggr.partsRequested) and self.accuracy.stats_compliance_summary(
                    db_name, table_name, col_names, valid_write_ids, None if part_names is None else names).accurate
            return aggr

    def _aggr_from_segments(self, table: Table, col_names: list[str], engine: str) -> AggrStats | None:
        """AggrStats over every partition from the top segments, when every partition holds statistics of
        every column (nothing to extrapolate) and no segment is stale; else None."""

        conn = self.db
        tbl_id = hive_rows.table_row(self.db, table.dbName, table.tableName)["TBL_ID"]
        state = segments.table_state(conn, tbl_id)
        if state is None:
            return None
        count = sum(group.parts for group in state)
        tops = segments.top_segments(conn, tbl_id, col_names, engine)
        merged = {name: merge_segments(tops[name]) for name in col_names if name in tops}
        if not count or len(merged) < len(set(col_names)) or any(m.parts != count for m in merged.values()):
            return None
        elements = {c.name for c in table.stats_columns if c.is_element}
        objs = [segment_to_obj(name, merged[name], name in elements) for name in col_names]
        return AggrStats(colStats=objs, partsFound=count, partsRequested=count,
                         covered=dict.fromkeys(col_names, count), covered_rows={n: merged[n].rows for n in col_names},
                         exact=list(objs))

    def delete_table_column_statistics(self, db_name: str, table_name: str, col_name: str | None = None) -> bool:
        """Deletes table-level statistics of one column (all columns when col_name is None)."""
        with self.transaction() as conn:
            table = self.catalog.get_table(db_name, table_name)
            row = hive_rows.table_row(self.db, db_name, table_name)
            if col_name is not None:
                hive_rows.require_columns(table, [col_name])
            conn.execute("DELETE FROM TAB_COL_STATS WHERE TBL_ID = ? AND (CAST(? AS TEXT) IS NULL OR COLUMN_NAME = ?)",
                         (row["TBL_ID"], col_name and col_name.lower(), col_name and col_name.lower()))
            self._clear_flags("TABLE_PARAMS", "TBL_ID", row["TBL_ID"], table.parameters, col_name)
        return True

    def _clear_flags(self, params_table: str, id_column: str, owner_id: int, params: dict,
                     col_name: str | None) -> None:
        """Hive's removeColumnStatsState: deleted statistics are no longer accurate."""
        flags = StatsAccuracy.parse(params.get(ACCURATE_PARAM))
        flags.columns = set() if col_name is None else flags.columns - {col_name.lower()}
        hive_rows.update_params(self.db, params_table, id_column, owner_id, {ACCURATE_PARAM: flags.to_param()})

    def delete_partition_column_statistics(self, db_name: str, table_name: str, part_name: str,
                                           col_name: str | None = None) -> bool:
        """Deletes one partition's statistics of one column (all columns when col_name is None)."""
        with self.transaction() as conn:
            table = self.catalog.get_table(db_name, table_name)
            part_id = hive_rows.part_id(self.db, db_name, table_name, part_name)
            if col_name is not None:
                hive_rows.require_columns(table, [col_name])
            conn.execute("DELETE FROM PART_COL_STATS WHERE PART_ID = ? AND (CAST(? AS TEXT) IS NULL OR COLUMN_NAME = ?)",
                         (part_id, col_name and col_name.lower(), col_name and col_name.lower()))
            params = hive_rows.params(self.db, "PARTITION_PARAMS", "PART_ID", part_id)
            self._clear_flags("PARTITION_PARAMS", "PART_ID", part_id, params, col_name)
        return True


def _column_types(table: Table) -> dict[str, str]:
    """Each column statistics may be kept for (struct leaves too: `payload.user.id`, and the structs inside one:
    `payload.user`), with its type."""
    return {**{c.name: parse_type(c.type).name for c in table.cols}, **{c.name: c.type for c in table.figure_columns}}

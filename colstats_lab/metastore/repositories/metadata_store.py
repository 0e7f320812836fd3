"""Drill-style table metadata in the metastore file (METADATA_UNITS, METADATA_COLUMN_STATS): kept,
read and dropped as one unit per table."""
from __future__ import annotations

from ...errors import InvalidInputException, NoSuchObjectException
from ..db import Database
from ..rows import hive_rows
from ..rows.metadata_units import (
    MetadataAnalysis,
    MetadataUnit,
    TableMetadata,
    drop_table_metadata,
    load_metadata_analysis,
    load_table_metadata,
    metadata_version,
    replace_table_metadata,
)
from ..settings import MetastoreSettings
from .catalog import CatalogRepository
from .repository import Repository

INFORMATION_SCHEMA_VIEWS = ("TABLES", "COLUMNS", "PARTITIONS")


class TableMetadataRepository(Repository):
    """Drill-style table metadata: the Metastore's metadata calls. A repository of
    the Metastore (store.py)."""

    def __init__(self, db: Database, settings: MetastoreSettings, catalog: CatalogRepository) -> None:
        super().__init__(db, settings)
        self.catalog = catalog

    # ---- Drill-style table metadata ------------------------------------------------------

    def get_table_metadata(self, db_name: str, table_name: str) -> TableMetadata | None:
        """The table's metadata from its last ANALYZE ... REFRESH METADATA, or None if there was none."""
        with self.snapshot() as conn:
            return load_table_metadata(conn, hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"])

    def get_metadata_analysis(self, db_name: str, table_name: str) -> MetadataAnalysis | None:
        """What the table's last ANALYZE ... REFRESH METADATA collected (level, columns, when), without
        its units; None if there was none."""
        with self.snapshot() as conn:
            return load_metadata_analysis(conn, hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"])

    def replace_table_metadata(self, db_name: str, table_name: str, analysis: MetadataAnalysis,
                               units: list[MetadataUnit]) -> int:
        """Stores a refresh's metadata in place of the table's previous one; returns the new version."""
        with self.transaction() as conn:
            return replace_table_metadata(conn, hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"], analysis, units)

    def drop_table_metadata(self, db_name: str, table_name: str, if_exists: bool = False) -> bool:
        """Forgets the table's metadata; raises NoSuchObjectException when it has none, unless if_exists."""
        with self.transaction() as conn:
            dropped = drop_table_metadata(conn, hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"])
            if not dropped and not if_exists:
                raise NoSuchObjectException(f"table {db_name}.{table_name} has no metadata to drop")
            return dropped

    def get_metadata_version(self, db_name: str, table_name: str) -> int:
        """Grows by one at every refresh of the table's metadata (0: never analyzed)."""
        with self.snapshot() as conn:
            return metadata_version(conn, hive_rows.table_row(self.db, db_name, table_name)["TBL_ID"])

    def information_schema(self, db_name: str, table_name: str, view: str, limit: int = 500) -> list[dict]:
        """The table's rows of Drill's INFORMATION_SCHEMA view `view` (TABLES, COLUMNS or PARTITIONS), at most
        `limit`, as dicts with Drill's column names."""
        if view.upper() not in INFORMATION_SCHEMA_VIEWS:
            raise InvalidInputException(f"INFORMATION_SCHEMA has {', '.join(INFORMATION_SCHEMA_VIEWS)}, not {view!r}")
        with self.snapshot() as conn:
            table = self.catalog.get_table(db_name, table_name)
            cursor = conn.execute(f"SELECT * FROM INFORMATION_SCHEMA_{view.upper()} WHERE TABLE_SCHEMA = ? "
                                  "AND TABLE_NAME = ? LIMIT ?", (table.dbName, table.tableName, limit))
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor]

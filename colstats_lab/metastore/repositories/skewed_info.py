"""Skewed tables and list bucketing in the metastore file (SKEWED_COL_NAMES, SKEWED_VALUES,
SKEWED_STRING_LIST*, SKEWED_COL_VALUE_LOC_MAP): Hive's ALTER TABLE ... SKEWED BY and its locations."""
from __future__ import annotations

from ...column_statistics.model import SkewedInfo
from ...errors import NoSuchObjectException
from ..db import Database
from ..rows import hive_rows, skew_rows
from ..settings import MetastoreSettings
from .catalog import CatalogRepository
from .repository import Repository


class SkewRepository(Repository):
    """Skew specs and list-bucketing locations of tables and partitions: the Metastore's skew calls. A repository of
    the Metastore (store.py)."""

    def __init__(self, db: Database, settings: MetastoreSettings, catalog: CatalogRepository) -> None:
        super().__init__(db, settings)
        self.catalog = catalog


    def alter_table_skew(self, db_name: str, table_name: str, info: SkewedInfo | None, stored: bool) -> None:
        """Sets the table's skew spec (None: not skewed) and whether it is stored as directories; partitions
        created afterwards take it, existing ones keep theirs (Hive's ALTER TABLE ... SKEWED BY)."""
        with self.transaction():
            row = hive_rows.table_row(self.db, db_name, table_name)
            skew_rows.write_skew(self.db, row["SD_ID"], info, stored)

    def alter_partition_skew(self, db_name: str, table_name: str, part_name: str, info: SkewedInfo | None,
                             stored: bool) -> None:
        """Sets one partition's skew spec and location map (its files were laid out again by it)."""
        with self.transaction() as conn:
            row = hive_rows.table_row(self.db, db_name, table_name)
            part = conn.execute("SELECT SD_ID FROM PARTITIONS WHERE TBL_ID = ? AND PART_NAME = ?",
                                (row["TBL_ID"], part_name)).fetchone()
            if part is None:
                raise NoSuchObjectException(f"partition {part_name} of {db_name.lower()}.{table_name.lower()} "
                                            "does not exist")
            skew_rows.write_skew(self.db, part["SD_ID"], info, stored)

    def add_skewed_locations(self, db_name: str, table_name: str, part_name: str,
                             locations: dict[tuple[str, ...], str]) -> None:
        """Adds value -> location entries to a partition's map (values that now have rows)."""
        part = self.catalog.get_partition(db_name, table_name, part_name)
        if part.skewedInfo is None or all(part.skewedInfo.skewedColValueLocationMaps.get(k) == v
                                          for k, v in locations.items()):
            return
        merged = SkewedInfo(part.skewedInfo.skewedColNames, part.skewedInfo.skewedColValues,
                            {**part.skewedInfo.skewedColValueLocationMaps, **locations})
        self.alter_partition_skew(db_name, table_name, part_name, merged, part.storedAsSubDirectories)

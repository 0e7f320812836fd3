"""The levels statistics and pruning speak of, one spelling each.

A `Level`'s value is how the lab shows it ("row group"); `drill_name` is how Drill names its metadata
type ("ROW_GROUP": REFRESH METADATA's LEVEL clause, the metadata units stored, INFORMATION_SCHEMA). Drill
has no list-bucketing level: that one is Hive's sub-directories of a partition, and only pruning has it.
"""
from __future__ import annotations

from enum import StrEnum

from ...errors import InvalidInputException


class Level(StrEnum):
    TABLE = "table"
    SEGMENT = "segment"
    PARTITION = "partition"
    LIST_BUCKETING = "list-bucketing directory"
    FILE = "file"
    ROW_GROUP = "row group"

    @property
    def drill_name(self) -> str:
        if self is Level.LIST_BUCKETING:
            raise InvalidInputException("Drill's metadata has no list-bucketing level")
        return self.name

    @classmethod
    def of_metadata(cls, text: str) -> Level:
        """A metadata level as REFRESH METADATA and `metastore.metadata.store.depth_level` take it (Drill's
        name, any case; ALL is ROW_GROUP); raises naming an unknown one."""
        name = text.strip().upper()
        if name == "ALL":
            name = "ROW_GROUP"
        level = cls.__members__.get(name)
        if level not in METADATA_LEVELS:
            raise InvalidInputException(f"unknown metadata level {text!r}: expected one of "
                                        f"{', '.join(lv.drill_name for lv in METADATA_LEVELS)} or ALL")
        return level


METADATA_LEVELS = (Level.TABLE, Level.SEGMENT, Level.PARTITION, Level.FILE, Level.ROW_GROUP)  # Drill's, top down
PRUNING_LEVELS = (Level.SEGMENT, Level.PARTITION, Level.LIST_BUCKETING, Level.FILE, Level.ROW_GROUP)
TABLE_LEVEL = "(table)"  # the partition label of a whole table's rows in frames, skew reports and pickers

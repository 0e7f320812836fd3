"""What the metastore's API modules share: constants, small checks and helpers."""
from __future__ import annotations

import json
import os
import time

from ..column_statistics.model import ColumnStatistics, ColumnStatisticsObj, Table
from ..column_statistics.names import object_name_problem
from ..column_statistics.stats_rows import ROW_COLUMNS
from ..errors import InvalidInputException, InvalidObjectException
from ..files import FileState

DEFAULT_DB = "default"


_NO_FILES: FileState = ("", 0, 0)
_STATS_BATCH = 2_000  # partitions a batch when storing many partitions' statistics
_PART_STATS_INSERT = ("PART_ID", "PART_NAME", "CAT_NAME", "DB_NAME", "TABLE_NAME", *ROW_COLUMNS, "LAST_ANALYZED",
                      "ENGINE")
_DB_AT, _TABLE_AT = _PART_STATS_INSERT.index("DB_NAME"), _PART_STATS_INSERT.index("TABLE_NAME")


def _now() -> int:
    return int(time.time())


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


# a managed table's parameter: the folder the lab created for it, the only one DROP TABLE may delete
OWNED_LOCATION = "colstats.location.owned"


def _check_name(name: str, what: str) -> str:
    if what in ("table", "database"):
        problem = object_name_problem(name, what)
        if problem:
            raise InvalidObjectException(problem)
    elif not name or not isinstance(name, str) or len(name) > 767 or "\x00" in name:
        raise InvalidObjectException(f"invalid {what} name {name!r}")
    return name.lower()


def _json_list(items) -> str:
    return json.dumps(list(items))

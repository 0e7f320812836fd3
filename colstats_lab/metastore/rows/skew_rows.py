"""The skew spec of a storage descriptor as Hive's rows keep it (SKEWED_COL_NAMES, SKEWED_VALUES,
SKEWED_STRING_LIST*, SKEWED_COL_VALUE_LOC_MAP, SDS.IS_STOREDASSUBDIRECTORIES): plain functions over the database,
which the catalog calls for a table's and a partition's descriptor and the skew repository for ALTER ... SKEWED BY."""
from __future__ import annotations

from ...column_statistics.model import SkewedInfo
from ..db import Database
from .hive_rows import json_list


def string_list(db: Database, values) -> int:
    list_id = db.execute("INSERT INTO SKEWED_STRING_LIST DEFAULT VALUES RETURNING STRING_LIST_ID").fetchone()[0]
    db.executemany(
        "INSERT INTO SKEWED_STRING_LIST_VALUES (STRING_LIST_ID, STRING_LIST_VALUE, INTEGER_IDX) VALUES (?, ?, ?)",
        [(list_id, v, i) for i, v in enumerate(values)])
    return list_id


def write_skew(db: Database, sd_id: int, info: SkewedInfo | None, stored: bool, new: bool = False) -> None:
    """Sets a storage descriptor's skew spec and stored-as-directories flag; `new`: one just inserted with
    its flag, so nothing of an earlier spec is there to remove (four statements fewer a partition)."""
    conn = db
    if new:
        insert_skew(db, sd_id, info)
        return
    lists = [r[0] for r in conn.execute(
        "SELECT STRING_LIST_ID_EID FROM SKEWED_VALUES WHERE SD_ID_OID = ? "
        "UNION SELECT STRING_LIST_ID_KID FROM SKEWED_COL_VALUE_LOC_MAP WHERE SD_ID = ?", (sd_id, sd_id))]
    conn.execute("DELETE FROM SKEWED_COL_NAMES WHERE SD_ID = ?", (sd_id,))
    conn.executemany("DELETE FROM SKEWED_STRING_LIST WHERE STRING_LIST_ID = ?", [(i,) for i in lists])
    conn.execute("UPDATE SDS SET IS_STOREDASSUBDIRECTORIES = ? WHERE SD_ID = ?",
                 (int(bool(stored and info)), sd_id))
    insert_skew(db, sd_id, info)


def insert_skew(db: Database, sd_id: int, info: SkewedInfo | None) -> None:
    if info is None:
        return
    conn = db
    conn.executemany("INSERT INTO SKEWED_COL_NAMES (SD_ID, SKEWED_COL_NAME, INTEGER_IDX) VALUES (?, ?, ?)",
                     [(sd_id, name, i) for i, name in enumerate(info.skewedColNames)])
    for i, value in enumerate(info.skewedColValues):
        conn.execute("INSERT INTO SKEWED_VALUES (SD_ID_OID, STRING_LIST_ID_EID, INTEGER_IDX) VALUES (?, ?, ?)",
                     (sd_id, string_list(db, value), i))
    for values, location in info.skewedColValueLocationMaps.items():
        conn.execute("INSERT INTO SKEWED_COL_VALUE_LOC_MAP (SD_ID, STRING_LIST_ID_KID, LOCATION) VALUES (?, ?, ?)",
                     (sd_id, string_list(db, values), location))


def read_skews(db: Database, sd_ids: list[int]) -> dict[int, tuple[SkewedInfo | None, bool]]:
    """Skew spec and stored-as-directories of many storage descriptors in a few queries."""
    conn = db
    ids = json_list(sd_ids)
    stored = {r[0]: bool(r[1]) for r in conn.execute(
        "SELECT SD_ID, IS_STOREDASSUBDIRECTORIES FROM SDS WHERE SD_ID IN "
        "(SELECT CAST(value AS INTEGER) FROM json_each(?))", (ids,))}
    names: dict[int, list[str]] = {}
    for sd_id, name in conn.execute(
            "SELECT SD_ID, SKEWED_COL_NAME FROM SKEWED_COL_NAMES WHERE SD_ID IN "
            "(SELECT CAST(value AS INTEGER) FROM json_each(?)) "
            "ORDER BY SD_ID, INTEGER_IDX", (ids,)):
        names.setdefault(sd_id, []).append(name)
    out: dict[int, tuple[SkewedInfo | None, bool]] = {sd_id: (None, stored.get(sd_id, False)) for sd_id in sd_ids}
    if not names:
        return out
    values: dict[int, dict[int, list[str]]] = {}
    for sd_id, index, text in conn.execute(
            "SELECT V.SD_ID_OID, V.INTEGER_IDX, L.STRING_LIST_VALUE FROM SKEWED_VALUES V "
            "JOIN SKEWED_STRING_LIST_VALUES L ON L.STRING_LIST_ID = V.STRING_LIST_ID_EID "
            "WHERE V.SD_ID_OID IN (SELECT CAST(value AS INTEGER) FROM json_each(?)) ORDER BY V.SD_ID_OID, V.INTEGER_IDX, "
            "L.INTEGER_IDX", (ids,)):
        values.setdefault(sd_id, {}).setdefault(index, []).append(text)
    locations: dict[int, dict[int, tuple[list[str], str]]] = {}
    for sd_id, list_id, location, text in conn.execute(
            "SELECT M.SD_ID, M.STRING_LIST_ID_KID, M.LOCATION, L.STRING_LIST_VALUE FROM SKEWED_COL_VALUE_LOC_MAP M "
            "JOIN SKEWED_STRING_LIST_VALUES L ON L.STRING_LIST_ID = M.STRING_LIST_ID_KID "
            "WHERE M.SD_ID IN (SELECT CAST(value AS INTEGER) FROM json_each(?)) ORDER BY M.SD_ID, M.STRING_LIST_ID_KID, "
            "L.INTEGER_IDX", (ids,)):
        locations.setdefault(sd_id, {}).setdefault(list_id, ([], location))[0].append(text)
    for sd_id, cols in names.items():
        info = SkewedInfo(cols, [v for _, v in sorted(values.get(sd_id, {}).items())],
                          {tuple(v): loc for v, loc in locations.get(sd_id, {}).values()})
        out[sd_id] = (info, stored.get(sd_id, False))
    return out

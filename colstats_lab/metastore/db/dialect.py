"""The SQL that differs between the metastore's two databases, SQLite and PostgreSQL: the one place it lives.

The metastore's statements are written once, in the SQL both accept (`ON CONFLICT ... DO UPDATE`, `RETURNING`,
`COALESCE`), with `?` parameters and lists passed as one JSON parameter (`IN (SELECT value FROM json_each(?))`);
`Dialect.statement` turns such a statement into the database's own. Its schema's DDL is written in SQLite's types
and turned into PostgreSQL's by `Dialect.ddl`; triggers, whose bodies differ altogether, are made here.
"""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

_JSON_LIST = re.compile(r"\bjson_each\(\?\)")
# `x IN (SELECT value FROM json_each(?))`: PostgreSQL's planner makes an IN over a set-returning function a join,
# of which an index takes no part as a key; `x = ANY(array)` is one
_IN_JSON_LIST = re.compile(r"\bIN \(SELECT (value|CAST\(value AS INTEGER\)) FROM json_each\(\?\)\)")
_CAST = re.compile(r"\bAS (INTEGER|REAL)\)")
_INSTR = re.compile(r"\binstr\(")
_GROUP_CONCAT = re.compile(r"\bgroup_concat\(DISTINCT ([A-Z_.]+)\)")
# SQLite's null-safe comparison, `a IS b` and `a IS NOT b` (not IS NULL, which both write alike)
_IS_NOT = re.compile(r"\bIS NOT (?!NULL\b)")
_IS = re.compile(r"\bIS (?!NOT\b|NULL\b|DISTINCT\b|TRUE\b|FALSE\b)")
# SQLite's CROSS JOIN with ON fixes the join order (a planner hint); PostgreSQL's CROSS JOIN takes no ON
_CROSS_JOIN_ON = re.compile(r"\bCROSS JOIN (\w+ \w+ ON)\b")
_CAST_TYPES = {"INTEGER": "BIGINT", "REAL": "DOUBLE PRECISION"}


def _outside_literals(sql: str, change) -> str:
    """`change` applied to the parts of `sql` outside its string literals ('...')."""
    parts = sql.split("'")
    return "'".join(change(p) if i % 2 == 0 else p for i, p in enumerate(parts))


@dataclass(frozen=True)
class Dialect:
    name: str  # "sqlite" or "postgresql"

    @property
    def postgresql(self) -> bool:
        return self.name == "postgresql"

    def statement(self, sql: str) -> str:
        """`sql`, written with `?` parameters in the SQL both accept, as this database runs it."""
        return _postgresql_statement(sql) if self.postgresql else sql

    def ddl(self, sql: str) -> str:
        """A schema statement written in SQLite's types, in this database's."""
        return _postgresql_ddl(sql) if self.postgresql else sql

    @property
    def concurrent_writers(self) -> bool:
        """Whether writers of different tables commit side by side (PostgreSQL), or one after another (SQLite)."""
        return self.postgresql

    @property
    def history_context(self) -> str:
        """The key of this connection's row of STATS_HISTORY_CONTEXT (what its commit is, for the states it keeps):
        SQLite's writers follow each other, one row serves; PostgreSQL's commits of different tables run side by
        side, each connection (a server process) has its own."""
        return "pg_backend_pid()" if self.postgresql else "1"

    def same_partition(self, left: str, right: str) -> str:
        """Two partition names are the same, NULL (a table's own level) the same as NULL, through an index: SQLite's
        `IS` uses one; PostgreSQL's IS NOT DISTINCT FROM cannot, so there both sides are compared as text with NULL
        as '' (no partition is named ''), which its expression index on the history's cells serves."""
        if not self.postgresql:
            return f"{left} IS {right}"
        right = "CAST(? AS TEXT)" if right == "?" else right
        return f"COALESCE({left}, '') = COALESCE({right}, '')"

    def like(self, column: str) -> str:
        """A case-sensitive SQL LIKE of `column` against one parameter (SQLite's LIKE ignores ASCII case:
        there it is a GLOB of the pattern `like_pattern` gives)."""
        return f"{column} LIKE ?" if self.postgresql else f"{column} GLOB ?"

    def like_pattern(self, pattern: str) -> str:
        if self.postgresql:
            return pattern
        out = []
        for ch in pattern:
            if ch == "%":
                out.append("*")
            elif ch == "_":
                out.append("?")
            elif ch in "*?[]":
                out.append(f"[{ch}]")
            else:
                out.append(ch)
        return "".join(out)

    def number(self, text: str, integer: bool) -> str:
        """The number a text column holds, for comparisons (NULL where it holds none on PostgreSQL, whose CAST
        would fail the statement; SQLite's CAST reads the text's numeric prefix)."""
        if not self.postgresql:
            return f"CAST({text} AS {'INTEGER' if integer else 'REAL'})"
        pattern = r"^\s*[-+]?[0-9]+\s*$" if integer else r"^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$"
        return (f"CASE WHEN {text} ~ '{pattern}' THEN CAST({text} AS "
                f"{'BIGINT' if integer else 'DOUBLE PRECISION'}) END")

    def stale_trigger(self, name: str, event: str, table: str, row: str, when: str = "") -> list[str]:
        """A trigger marking the partition of the changed row stale (a guarded insert: in SQLite a trigger
        takes its outer statement's conflict policy, so OR IGNORE would not hold under an upsert)."""
        insert = (f"INSERT INTO STALE_STATS_SEGMENTS (TBL_ID, PART_ID) SELECT TBL_ID, PART_ID FROM PARTITIONS "
                  f"WHERE PART_ID = {row}.PART_ID AND NOT EXISTS (SELECT 1 FROM STALE_STATS_SEGMENTS S "
                  f"WHERE S.TBL_ID = PARTITIONS.TBL_ID AND S.PART_ID = {row}.PART_ID)")
        return self.trigger(name, event, table, insert, when)

    def trigger(self, name: str, event: str, table: str, body: str, when: str = "") -> list[str]:
        """The statements creating an AFTER trigger for each row, running `body` (one statement reading NEW
        and OLD) when `when` holds."""
        if not self.postgresql:
            condition = f"WHEN {when} " if when else ""
            return [f"CREATE TRIGGER {name} AFTER {event} ON {table} {condition}BEGIN\n    {body};\nEND"]
        returned = "OLD" if event.startswith("DELETE") else "NEW"
        condition = f"\nWHEN ({when})" if when else ""
        if "SELECT" in when:  # a trigger's WHEN takes no subquery in PostgreSQL: its function asks
            condition, body = "", f"IF {when} THEN\n    {body};\n    END IF"
        return [f"CREATE FUNCTION {name}_FN() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN\n    {body};\n"
                f"    RETURN {returned};\nEND $$",
                f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW{condition} EXECUTE FUNCTION {name}_FN()"]

    def statement_trigger(self, name: str, event: str, table: str, body: str) -> list[str]:
        """PostgreSQL: an AFTER trigger run once for each statement, `body` reading the statement's rows as the
        transition tables OLD_ROWS and NEW_ROWS (one set-wise statement, where a trigger for each row runs its
        PL/pgSQL once per row: 63 us a row, measured)."""
        referencing = {"INSERT": "NEW TABLE AS NEW_ROWS", "DELETE": "OLD TABLE AS OLD_ROWS",
                       "UPDATE": "OLD TABLE AS OLD_ROWS NEW TABLE AS NEW_ROWS"}[event]
        return [f"CREATE FUNCTION {name}_FN() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN\n    {body};\n"
                f"    RETURN NULL;\nEND $$",
                f"CREATE TRIGGER {name} AFTER {event} ON {table} REFERENCING {referencing} FOR EACH STATEMENT "
                f"EXECUTE FUNCTION {name}_FN()"]

    def drop_trigger(self, name: str, table: str) -> list[str]:
        if not self.postgresql:
            return [f"DROP TRIGGER {name}"]
        return [f"DROP TRIGGER {name} ON {table}", f"DROP FUNCTION {name}_FN()"]

    def replace_rows(self, db, table: str, names: Sequence[str], key: Sequence[str], rows: list) -> None:
        """Stores `rows` (values in `names` order) in `table`, each replacing the row that holds its `key`:
        deleted first, so whatever hangs off the old row by a cascading foreign key goes with it (SQLite's
        INSERT OR REPLACE; on PostgreSQL a delete, then the insert, of each key's last row)."""
        if not rows:
            return
        insert = f"INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
        if not self.postgresql:
            db.executemany(f"INSERT OR REPLACE {insert}", rows)
            return
        at = [list(names).index(k) for k in key]
        last = {tuple(row[i] for i in at): row for row in rows}
        self.delete_rows(db, table, key, list(last))
        db.insert_rows(table, names, list(last.values()))

    def insert_returning_ids(self, db, table: str, id_column: str, names: Sequence[str], rows: list) -> list[int]:
        """Inserts `rows` (values in `names` order) into `table`; returns the ids they took, in their order."""
        if not rows:
            return []
        if not self.postgresql:  # in-process: a statement a row is as cheap as any batch
            insert = (f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))}) "
                      f"RETURNING {id_column}")
            return [db.execute(insert, row).fetchone()[0] for row in rows]
        # the ids drawn from the identity's sequence at once, the rows COPYed with them: two round trips for any
        # number of rows, where a statement a row made adding 100,000 partitions 22x SQLite's time (measured)
        ids = [r[0] for r in db.execute(
            f"SELECT nextval(pg_get_serial_sequence('{table.lower()}', '{id_column.lower()}')) "
            f"FROM generate_series(1, CAST(? AS integer))", (len(rows),)).fetchall()]
        db.insert_rows(table, (id_column, *names), [(new_id, *row) for new_id, row in zip(ids, rows, strict=True)])
        return ids

    def delete_rows(self, db, table: str, key: Sequence[str], keys: list) -> None:
        """Deletes the rows of `table` whose `key` columns hold one of `keys` (value tuples in `key` order)."""
        if not keys:
            return
        columns = ", ".join(key)
        if not self.postgresql:
            db.executemany(f"DELETE FROM {table} WHERE {' AND '.join(f'{k} = ?' for k in key)}", keys)
            return
        db.execute(f"DELETE FROM {table} WHERE ({columns}) IN (SELECT {columns} FROM {_rows_of(table)})",
                   (_json_rows(key, keys),))

    def update_rows(self, db, table: str, names: Sequence[str], key: Sequence[str], rows: list) -> None:
        """Sets, in each row of `table` whose `key` columns hold a row of `rows` (values in `names` order, the key's
        among them), the other columns of `names` to that row's values."""
        if not rows:
            return
        others = [n for n in names if n not in key]
        if not self.postgresql:
            at = [list(names).index(n) for n in (*others, *key)]
            db.executemany(f"UPDATE {table} SET {', '.join(f'{n} = ?' for n in others)} "
                           f"WHERE {' AND '.join(f'{k} = ?' for k in key)}", [[row[i] for i in at] for row in rows])
            return
        # one statement, not one a row: a round's thinned states at 10,000 partitions 91 -> 26 ms (measured)
        db.execute(f"UPDATE {table} SET {', '.join(f'{n} = J.{n}' for n in others)} FROM {_rows_of(table)} AS J "
                   f"WHERE {' AND '.join(f'{table}.{k} = J.{k}' for k in key)}", (_json_rows(names, rows),))

    def upsert_rows(self, db, table: str, names: Sequence[str], key: Sequence[str], rows: list) -> None:
        """Stores `rows` (values in `names` order) in `table`, a row whose `key` exists updating the other
        columns where they differ (an unchanged row is not written again, so it fires no trigger)."""
        if not rows:
            return
        others = [n for n in names if n not in key]
        update = (f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {', '.join(f'{n} = excluded.{n}' for n in others)} "
                  f"WHERE ({', '.join(f'{table}.{n}' for n in others)}) IS DISTINCT FROM "
                  f"({', '.join(f'excluded.{n}' for n in others)})")
        columns = ", ".join(names)
        if not self.postgresql:  # in-process: a prepared statement a row costs what one statement over a list costs
            db.executemany(f"INSERT INTO {table} ({columns}) VALUES ({', '.join('?' * len(names))}) {update}", rows)
            return
        # one statement, not a statement a row: a round's parameters of 1,000 partitions 451 -> 97 ms (measured)
        db.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {_rows_of(table)} {update}",
                   (_json_rows(names, rows),))

    def json_pairs(self, column: str) -> str:
        """The (key, value) rows of a JSON object held as text in `column`, as a table of the FROM clause."""
        if self.postgresql:
            return f"json_each_text(CAST({column} AS json))"
        return f"json_each({column})"

    def group_concat_distinct(self, column: str) -> str:
        return f"string_agg(DISTINCT {column}, ',')" if self.postgresql else f"group_concat(DISTINCT {column})"


def _rows_of(table: str) -> str:
    """A JSON list of objects (one parameter) read as rows of `table`'s own type, for a set-wise statement."""
    return f"json_populate_recordset(NULL::{table}, CAST(? AS json))"


def _json_rows(names: Sequence[str], rows: list) -> str:
    return json.dumps([{n.lower(): value for n, value in zip(names, row, strict=True)} for row in rows])


SQLITE = Dialect("sqlite")
POSTGRESQL = Dialect("postgresql")


def _any_of_list(match: re.Match) -> str:
    # the list's texts in the collation of the metastore's text columns, or no index takes them
    element = "value COLLATE \"C\"" if match.group(1) == "value" else match.group(1)
    return f"= ANY(ARRAY(SELECT {element} FROM json_array_elements_text(CAST(? AS json)) AS J(value)))"


@functools.lru_cache(maxsize=4096)
def _postgresql_statement(sql: str) -> str:
    def change(part: str) -> str:
        part = part.replace("%", "%%")
        part = _IN_JSON_LIST.sub(_any_of_list, part)
        part = _JSON_LIST.sub("json_array_elements_text(CAST(? AS json))", part)
        part = _CAST.sub(lambda m: f"AS {_CAST_TYPES[m.group(1)]})", part)
        part = _INSTR.sub("strpos(", part)
        part = _CROSS_JOIN_ON.sub(r"JOIN \1", part)
        part = _IS_NOT.sub("IS DISTINCT FROM ", part)
        part = _IS.sub("IS NOT DISTINCT FROM ", part)
        part = _GROUP_CONCAT.sub(lambda m: f"string_agg(DISTINCT {m.group(1)}, ',')", part)
        return part.replace("?", "%s")
    return _outside_literals(sql, change)


_KEY_COLUMN = re.compile(r"^(\s*\w+) INTEGER PRIMARY KEY(?=[\s,]|$)", re.M)
_TYPES = [(re.compile(r"\bINTEGER\b"), "BIGINT"), (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"),
          (re.compile(r"\bBLOB\b"), "BYTEA"), (re.compile(r"\bTEXT\b"), 'TEXT COLLATE "C"')]
# METADATA_COLUMN_STATS.LOW_VALUE and HIGH_VALUE hold each column type's own value in SQLite, where a column
# may be declared without a type: PostgreSQL keeps their text (table_metadata.decode_value reads it back)
_TYPELESS = re.compile(r"^(\s*(?:LOW|HIGH)_VALUE),$", re.M)


def _postgresql_ddl(sql: str) -> str:
    defines_table = sql.lstrip().upper().startswith(("CREATE TABLE", "ALTER TABLE"))

    def change(part: str) -> str:
        part = re.sub(r"\)\s*WITHOUT ROWID", ")", part)
        part = _TYPELESS.sub(r"\1 TEXT,", part)
        part = re.sub(r"\bIFNULL\(", "COALESCE(", part)
        if defines_table:
            # a key column the table's rows are numbered by: SQLite's INTEGER PRIMARY KEY (its rowid)
            part = _KEY_COLUMN.sub(lambda m: f"{m.group(1)} INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
                                   part)
            for pattern, replacement in _TYPES:
                part = pattern.sub(replacement, part)
        else:
            part = _CAST.sub(lambda m: f"AS {_CAST_TYPES[m.group(1)]})", part)
        return part
    return _outside_literals(sql, change)

"""A second client of a test's metastore, whichever its database: reads (and, for the tests that break things on
purpose, writes) its tables directly, with the database's own driver, not through the code under test.

`connect(location)` takes the metastore's `url` (SQLAlchemy's form), its `path` (a SQLite file, or a PostgreSQL
URL without the password, which the session's server's password on file lets in) or the test's own URL. SQL is written with `?`
parameters; for PostgreSQL they become `%s`.
"""
from __future__ import annotations

import sqlite3
from typing import Any

import pg_server


class Client:
    def __init__(self, location: str):
        location = location.replace("postgresql+psycopg://", "postgresql://", 1)
        if location.startswith("sqlite:///"):
            location = location[len("sqlite:///"):]
        self.postgresql = location.startswith("postgresql://")
        if self.postgresql:
            import psycopg

            if "@" in location and ":" not in location.split("//", 1)[1].split("@", 1)[0]:
                location = location.replace("postgres@", f"postgres:{pg_server.PASSWORD}@", 1)
            self.conn: Any = psycopg.connect(location, autocommit=True)
        else:
            self.conn = sqlite3.connect(location, isolation_level=None, timeout=60)

    def execute(self, sql: str, params: tuple = ()):
        if self.postgresql:
            return self.conn.execute(sql.replace("?", "%s"), params)
        return self.conn.execute(sql, params)

    def begin_snapshot(self) -> None:
        """Opens a transaction whose statements all read one committed state (SQLite's BEGIN does; PostgreSQL's
        default READ COMMITTED gives each statement its own)."""
        self.execute("BEGIN ISOLATION LEVEL REPEATABLE READ" if self.postgresql else "BEGIN")

    def intact(self) -> bool:
        """The database's own check of its files (SQLite's integrity_check; a server checks its pages itself),
        and what no writer may break on either: one statistics row per owner, column and engine, none
        without its owner."""
        if not self.postgresql and self.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            return False
        for table, owner, owners in (("TAB_COL_STATS", "TBL_ID", "TBLS"), ("PART_COL_STATS", "PART_ID", "PARTITIONS")):
            if self.execute(f"SELECT count(*) FROM (SELECT 1 FROM {table} GROUP BY {owner}, COLUMN_NAME, ENGINE "
                            "HAVING count(*) > 1) D").fetchone()[0]:
                return False
            if self.execute(f"SELECT count(*) FROM {table} S WHERE NOT EXISTS (SELECT 1 FROM {owners} O "
                            f"WHERE O.{owner} = S.{owner})").fetchone()[0]:
                return False
        return True

    def dicts(self, sql: str, params: tuple = ()) -> list[dict]:
        """The rows as dicts by column name in upper case (PostgreSQL folds unquoted names to lower case)."""
        cursor = self.execute(sql, params)
        names = [d[0].upper() for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def schema_version(self) -> int:
        """How many migrations the metastore has run."""
        if self.postgresql:
            return self.execute("SELECT MIGRATIONS FROM COLSTATS_SCHEMA_VERSION").fetchone()[0]
        return self.execute("PRAGMA user_version").fetchone()[0]

    def dump(self, exclude: tuple[str, ...] = ()) -> list[str]:
        """Every row of every table but `exclude`'s, as text, in one order: what a command that failed must
        leave as it found it."""
        out = []
        for table in sorted(self.tables() - set(exclude)):
            rows = self.execute(f"SELECT * FROM {table}").fetchall()
            out.extend(sorted(f"{table} {tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)!r}"
                              for row in rows))
        return out

    def tables(self) -> set[str]:
        """The metastore's tables, named as in its schema (upper case)."""
        if self.postgresql:
            rows = self.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
                                "AND table_type = 'BASE TABLE'")
            return {r[0].upper() for r in rows}
        return {r[0] for r in self.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def columns(self, table: str) -> set[str]:
        if self.postgresql:
            rows = self.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ?",
                                (table.lower(),))
            return {r[0].upper() for r in rows}
        return {r[1] for r in self.execute(f"PRAGMA table_info({table})")}

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def connect(location: str) -> Client:
    return Client(location)

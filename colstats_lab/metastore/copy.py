"""Moving a lab: every row of one metastore into another, empty one, between SQLite and PostgreSQL either way.

Both are brought to this code's schema first; then each table is copied in the order the migrations create them
(so a row's foreign keys find their rows), ids as they are, in one transaction of the destination, read from one
snapshot of the source. What triggers add on the way (partitions marked stale) is replaced by the source's own
rows of that table, and a PostgreSQL destination's id sequences continue past the copied ids.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import MetaException
from .db import Database, connect
from .db.schema import MIGRATIONS, migrate, migration_statements

_BATCH = 5_000
# kept by triggers on the tables copied before it: replaced by the source's rows once they are in
_TRIGGER_KEPT = "STALE_STATS_SEGMENTS"
# what opening a new metastore writes, which the copy replaces
_MADE_ON_OPEN = ("DBS", "VERSION", "STATS_HISTORY_CONTEXT")


@dataclass(frozen=True)
class CopiedTable:
    name: str
    rows: int


def tables_in_creation_order(db: Database) -> list[str]:
    """The metastore's tables, each after the tables its foreign keys reference (as the migrations made them)."""
    created: list[str] = []
    for version in range(len(MIGRATIONS)):
        for statement in migration_statements(version, db.dialect):
            match = re.match(r"\s*CREATE TABLE (\w+)", statement)
            if match:
                created.append(match.group(1))
            match = re.match(r"\s*DROP TABLE (\w+)", statement)
            if match:
                created.remove(match.group(1))
    return created


def copy_metastore(source: str, destination: str) -> list[CopiedTable]:
    """Copies the metastore at `source` (a SQLite path or a PostgreSQL URL) into the one at `destination`, which
    must hold nothing yet; returns each table with the rows copied. MetaException when the destination holds
    tables, transactions or databases already; nothing is written to it then, or when the copy fails."""
    src, dst = connect(source), connect(destination)
    try:
        migrate(src)
        migrate(dst)
        tables = tables_in_creation_order(src)
        with dst.transaction():
            held = {t: dst.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables if t not in _MADE_ON_OPEN}
            databases = [r[0] for r in dst.execute("SELECT NAME FROM DBS")]
            if any(held.values()) or set(databases) - {"default"}:
                what = ", ".join(f"{t} {n}" for t, n in held.items() if n) or f"databases {', '.join(databases)}"
                raise MetaException(f"the metastore at {dst.display_url} is not empty ({what} rows): a copy goes "
                                    "into a new one only")
            for table in reversed(tables):
                dst.execute(f"DELETE FROM {table}")
            copied = []
            with src.snapshot():
                for table in [t for t in tables if t != _TRIGGER_KEPT] + [_TRIGGER_KEPT]:
                    if table == _TRIGGER_KEPT:
                        dst.execute(f"DELETE FROM {table}")
                    copied.append(CopiedTable(table, _copy_table(src, dst, table)))
            dst.continue_ids_past_copied()
        return copied
    finally:
        src.close()
        dst.close()


def _quoted(column: str) -> str:
    """A column name as the schema spells it: DBS."DESC" is quoted there, a keyword in both databases."""
    return f'"{column}"' if column == "DESC" else column


def _copy_table(src: Database, dst: Database, table: str) -> int:
    count = 0
    for columns, rows in src.batches(f"SELECT * FROM {table}", _BATCH):
        insert = f"INSERT INTO {table} ({', '.join(_quoted(c) for c in columns)}) VALUES ({', '.join('?' * len(columns))})"
        dst.executemany(insert, [tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in rows])
        count += len(rows)
    return count

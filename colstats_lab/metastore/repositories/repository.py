"""The metastore's repositories: each keeps one family of Hive's tables (the catalog, column statistics, their
accuracy, history, transactions, ...) over the metastore's one database object, reads the settings the
Metastore shares with it, and is built with the sibling repositories it calls, passed by name (store.py builds
them bottom up: the catalog first, the column statistics over the catalog, transactions and accuracy)."""
from __future__ import annotations

from collections.abc import Collection
from contextlib import AbstractContextManager

from ..db import Database
from ..settings import MetastoreSettings


class Repository:
    """A family of the metastore's calls; every call runs in one transaction of the metastore's database, or
    joins the one open."""

    def __init__(self, db: Database, settings: MetastoreSettings) -> None:
        self.db = db
        self.settings = settings

    def transaction(self, tables: Collection[tuple[str, str]] = ()) -> AbstractContextManager[Database]:
        return self.db.transaction(tables)

    def snapshot(self) -> AbstractContextManager[Database]:
        return self.db.snapshot()

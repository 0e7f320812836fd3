"""The session a command runs in: the Spark session (started on first use), the metastore, the options
and the current database. `Lab` is the one implementation; commands take it as an argument and never
import `Lab`, so data flows one way (statement -> plan -> Spark job -> merge -> metastore commit -> view)."""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from ..metastore import Metastore, Table
    from ..transaction import Transaction
    from .catalogs import AttachedCatalog
    from .plan_tables import PlanTables


class Session(Protocol):
    metastore: Metastore
    current_db: str
    catalogs: dict[str, AttachedCatalog]  # attached catalogs by name
    plan_tables: PlanTables  # the catalog tables Spark plans lab tables with

    @property
    def spark(self) -> SparkSession: ...

    @property
    def spark_started(self) -> bool: ...

    def get(self, key: str) -> Any: ...

    def set(self, key: str, value: Any) -> None: ...

    def reset(self, key: str | None = None) -> list[str]: ...

    def transaction(self) -> Transaction: ...

    def txn_scope(self, txn: Transaction | None) -> AbstractContextManager[Transaction]: ...

    def resolve(self, name: str | Table) -> Table: ...

"""The session a command runs in: the Spark session (started on first use), the metastore, the options
and the current database. `Lab` is the one implementation; commands take it as an argument and never
import `Lab`, so data flows one way (statement -> plan -> Spark job -> merge -> metastore commit -> view)."""
from __future__ import annotations

import uuid
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from ..interop.hms_client import HiveMetastoreClient
    from ..interop.iceberg_source import IcebergCatalog
    from ..metastore import Metastore, Table
    from ..transaction import Transaction


@dataclass
class PlanTables:
    """The catalog tables one lab made, by name, with the token each was made for; `prefix` keeps two labs on
    one Spark session (two metastores) apart."""
    prefix: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    made: dict[str, str] = field(default_factory=dict)


class Session(Protocol):
    metastore: Metastore
    current_db: str
    catalogs: dict[str, HiveMetastoreClient | IcebergCatalog]  # attached catalogs by name (catalogs.AttachedCatalog)
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

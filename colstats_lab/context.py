"""What running a statement needs of the lab: the executor takes it as an argument and never imports
`Lab`, so data flows one way (statement -> plan -> Spark job -> merge -> metastore transaction -> view)."""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from .metastore import Metastore, Partition, Table, ValidWriteIdList
    from .pruning import PruningReport, StatsAnswer
    from .tables.snapshot import PartitionFiles
    from .tables.writer import WriteResult
    from .transaction import Transaction


class LabContext(Protocol):
    """The lab as a statement sees it (`Lab` is the one implementation)."""

    metastore: Metastore
    current_db: str

    @property
    def spark(self) -> SparkSession: ...

    def get(self, key: str) -> Any: ...

    def set(self, key: str, value: Any) -> None: ...

    def txn_scope(self, txn: Transaction | None) -> AbstractContextManager[Transaction]: ...

    def snapshot(self, name: str) -> ValidWriteIdList: ...

    def stats_answer(self, query: str | Any, txn: Transaction | None = None) -> StatsAnswer: ...

    def snapshot_parts(self, name: str, snapshot: ValidWriteIdList | None = None, txn: Transaction | None = None,
                       partitions: list[Partition] | None = None) -> tuple[Table, list[PartitionFiles]]: ...

    def planned_read(self, name: str, where, alias: str | None = None, txn: Transaction | None = None
                     ) -> tuple[Table, list[PartitionFiles], PruningReport]: ...

    def relayout(self, name: str, partition: dict | str | None = None) -> list[WriteResult]: ...

    def register_external(self, name: str, path: str, format: str = "parquet",
                          partition_types: dict[str, str] | None = None) -> Table: ...

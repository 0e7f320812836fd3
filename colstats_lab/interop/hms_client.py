"""A Hive Metastore over its Thrift API, through pymetastore's generated client (Hive 3.1's IDL).

A 3.1 client speaks to a 2.3 server as long as it sends no field and calls no method 2.3 lacks: the
server's version is told by probing `get_catalogs` (3.0 and later), and the catalog name is sent only to
servers that have catalogs. Every call that returns many things is batched, and the client counts what
it asked for and what the server returned (`calls`, `partitions_fetched`), so a test can hold the lab
to "one day of 100,000 partitions fetches one day".
"""
from __future__ import annotations

import collections
from collections.abc import Iterable, Iterator
from typing import TypeVar
from urllib.parse import urlparse

from pymetastore.hive_metastore import ThriftHiveMetastore, ttypes
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TException
from thrift.transport import TSocket, TTransport

from ..errors import ColstatsError, InvalidArgument
from ..metastore import MetaException, NoSuchObjectException

BATCH = 500  # partitions per call: what Hive's own clients send (hive.metastore.batch.retrieve.max is 300–1000)
DEFAULT_CATALOG = "hive"
# Hive's StatsSetupConst.DO_NOT_UPDATE_STATS: the server keeps the figures it is sent instead of listing files
DO_NOT_UPDATE_STATS = {"DO_NOT_UPDATE_STATS": "true"}

T = TypeVar("T")


class MetastoreUnreachable(ColstatsError):
    """The Hive Metastore at a URI cannot be reached."""


def batches(items: list[T], size: int = BATCH) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


class HiveMetastoreClient:
    """One connection to a Hive Metastore (`thrift://host:port`); raises MetastoreUnreachable naming the URI
    when nothing answers there. Methods are named after the Thrift calls they make."""

    kind = "Hive Metastore"

    def __init__(self, uri: str, timeout_s: float = 60.0):
        parsed = urlparse(uri)
        if parsed.scheme != "thrift" or not parsed.hostname or not parsed.port:
            raise InvalidArgument(f"a Hive Metastore is named thrift://host:port, not {uri!r}")
        self.uri = uri
        self._host, self._port, self._timeout_ms = parsed.hostname, parsed.port, int(timeout_s * 1000)
        self.calls: collections.Counter[str] = collections.Counter()
        self.partitions_fetched = 0
        self._transport: TTransport.TTransportBase | None = None
        self._client: ThriftHiveMetastore.Client | None = None
        self._connect()
        self.has_catalogs = self._probe_catalogs()

    @property
    def version(self) -> str:
        """"2.x" (no catalogs) or "3.x+" (catalogs, write IDs on statistics)."""
        return "3.x+" if self.has_catalogs else "2.x"

    def _connect(self) -> None:
        socket = TSocket.TSocket(self._host, self._port)
        socket.setTimeout(self._timeout_ms)
        self._transport = TTransport.TBufferedTransport(socket)
        try:
            self._transport.open()
        except TTransport.TTransportException as exc:
            raise MetastoreUnreachable(f"cannot reach the Hive Metastore at {self.uri}: {exc}") from None
        # thrift's C codec where it is built (a wheel's fastbinary): decoding 60,000 statistics objects in
        # Python took longer than the server took to send them
        self._client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocolAccelerated(self._transport))

    def _probe_catalogs(self) -> bool:
        try:
            self._call("get_catalogs")
            return True
        except _UnknownMethod:
            return False

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    def _call(self, method: str, *args, about: str = ""):
        """One Thrift call; the server's refusals become the lab's exceptions naming `about` and the
        server's message. A dropped connection is opened again once."""
        for attempt in (1, 2):
            self.calls[method] += 1
            try:
                return getattr(self._client, method)(*args)
            except ttypes.NoSuchObjectException as exc:
                raise NoSuchObjectException(f"{about or method}: the Hive Metastore at {self.uri} says: "
                                            f"{exc.message}") from None
            except (ttypes.MetaException, ttypes.InvalidObjectException, ttypes.InvalidOperationException,
                    ttypes.InvalidInputException, ttypes.AlreadyExistsException) as exc:
                raise MetaException(f"{about or method}: the Hive Metastore at {self.uri} refused "
                                    f"{method}: {exc.message}") from None
            except TApplicationException as exc:
                if exc.type == TApplicationException.UNKNOWN_METHOD:
                    raise _UnknownMethod(method) from None
                if exc.type == TApplicationException.MISSING_RESULT:  # Hive 2.3 answers "none" so
                    raise NoSuchObjectException(f"{about or method}: the Hive Metastore at {self.uri} has none") from None
                raise MetaException(f"{about or method}: the Hive Metastore at {self.uri} failed in {method}: "
                                    f"{exc.message}") from None
            except (TTransport.TTransportException, OSError, EOFError) as exc:
                if attempt == 2:
                    raise MetastoreUnreachable(f"lost the Hive Metastore at {self.uri} during {method}: {exc}") from None
                self.close()
                self._connect()
            except TException as exc:
                raise MetaException(f"{about or method}: the Hive Metastore at {self.uri} failed: {exc}") from None
        raise AssertionError("unreachable")

    # ---- catalog ------------------------------------------------------------------------

    def get_all_databases(self) -> list[str]:
        return self._call("get_all_databases")

    def get_all_tables(self, db: str) -> list[str]:
        return self._call("get_all_tables", db, about=f"database {db}")

    def get_table(self, db: str, table: str) -> ttypes.Table:
        return self._call("get_table", db, table, about=f"table {db}.{table}")

    def get_partition_names(self, db: str, table: str) -> list[str]:
        """Every partition's name: names only, cheap even at 100,000 partitions."""
        return self._call("get_partition_names", db, table, -1, about=f"table {db}.{table}")

    def get_partitions_by_names(self, db: str, table: str, names: Iterable[str]) -> list[ttypes.Partition]:
        out: list[ttypes.Partition] = []
        for chunk in batches(sorted(names)):
            found = self._call("get_partitions_by_names", db, table, chunk, about=f"table {db}.{table}")
            self.partitions_fetched += len(found)
            out += found
        return out

    def alter_table(self, table: ttypes.Table) -> None:
        self._call("alter_table_with_environment_context", table.dbName, table.tableName, table,
                   ttypes.EnvironmentContext(dict(DO_NOT_UPDATE_STATS)), about=f"table {table.dbName}.{table.tableName}")

    def alter_partitions(self, db: str, table: str, partitions: list[ttypes.Partition]) -> None:
        for chunk in batches(partitions):
            self._call("alter_partitions_with_environment_context", db, table, chunk,
                       ttypes.EnvironmentContext(dict(DO_NOT_UPDATE_STATS)), about=f"table {db}.{table}")

    # ---- column statistics --------------------------------------------------------------

    def get_table_statistics(self, db: str, table: str, columns: list[str]) -> list[ttypes.ColumnStatisticsObj]:
        if not columns:
            return []
        request = ttypes.TableStatsRequest(db, table, columns)
        if self.has_catalogs:
            request.catName = DEFAULT_CATALOG
        return self._call("get_table_statistics_req", request, about=f"table {db}.{table}").tableStats

    def get_table_column_statistics(self, db: str, table: str, column: str) -> ttypes.ColumnStatistics | None:
        """One column's table-level statistics with their description (lastAnalyzed), None when there are none."""
        try:
            return self._call("get_table_column_statistics", db, table, column, about=f"{db}.{table}.{column}")
        except NoSuchObjectException:
            return None

    def get_partitions_statistics(self, db: str, table: str, names: list[str], columns: list[str]
                                  ) -> dict[str, list[ttypes.ColumnStatisticsObj]]:
        out: dict[str, list[ttypes.ColumnStatisticsObj]] = {}
        if not columns:
            return out
        for chunk in batches(sorted(names)):
            request = ttypes.PartitionsStatsRequest(db, table, columns, chunk)
            if self.has_catalogs:
                request.catName = DEFAULT_CATALOG
            out.update(self._call("get_partitions_statistics_req", request, about=f"table {db}.{table}").partStats)
        return out

    def set_aggr_stats_for(self, statistics: list[ttypes.ColumnStatistics]) -> None:
        """Stores table- or partition-level statistics, many partitions a call (Hive's own batched path);
        `needMerge` false: what is sent replaces what the server had for those columns."""
        for chunk in batches(statistics):
            if self.has_catalogs:
                for stats in chunk:
                    stats.statsDesc.catName = DEFAULT_CATALOG
            self._call("set_aggr_stats_for", ttypes.SetPartitionsStatsRequest(chunk, False),
                       about=f"table {chunk[0].statsDesc.dbName}.{chunk[0].statsDesc.tableName}")

    def delete_partition_column_statistics(self, db: str, table: str, name: str, column: str | None) -> None:
        """One column's statistics of a partition, or every column's with `column` None."""
        try:
            self._call("delete_partition_column_statistics", db, table, name, column, about=f"{db}.{table} {name}")
        except NoSuchObjectException:
            pass  # nothing there: withdrawn already

    def delete_table_column_statistics(self, db: str, table: str, column: str | None) -> None:
        """One column's table-level statistics, or every column's with `column` None."""
        try:
            self._call("delete_table_column_statistics", db, table, column, about=f"{db}.{table}")
        except NoSuchObjectException:
            pass

    @property
    def write_calls(self) -> int:
        """Calls that change the server's state, so far."""
        return sum(n for method, n in self.calls.items()
                   if method.startswith(("alter_", "set_", "delete_", "update_", "create_", "add_", "drop_")))


class _UnknownMethod(Exception):
    """The server does not have this method (an older Hive)."""

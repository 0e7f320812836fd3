"""Lab: the one object a user holds. It wires the Spark engine, the metastore and the statements."""
from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame, SparkSession

from . import caches, engine
from .analyze.autoanalyze import AUTOANALYZE_SAMPLE, checked_sample
from .column_statistics.frequent_items import MAX_FREQUENT_ITEMS
from .column_statistics.names import split_table_name
from .commands import analyze as analyze_commands
from .commands import catalogs, execute, reads
from .commands import explain as explain_command
from .commands import tables as table_commands
from .commands.plan_tables import drop_plan_tables
from .commands.runs import runs_frame
from .commands.session import PlanTables
from .deprecated import DeprecatedLabMethods, renamed_argument
from .errors import InvalidArgument
from .frames import DEFAULT_LIMIT
from .handles import TableHandle, Tables
from .interop import exchange
from .metastore import DEFAULT_DB, Metastore, Table
from .metastore.db import BUSY_TIMEOUT_MS, check_location
from .metastore.rows.metadata_units import LEVELS, level_depth
from .namespaces import AutoAnalyze, Views
from .plans import PlanReport
from .pruning import StatsAnswer
from .result import Result
from .settings import BOOLEAN, CACHE_MAX_BYTES, COUNT, METASTORE_WAIT, SECONDS, SETTINGS, default_of, maximum_of, names_taking
from .spark_settings import SparkSettings, is_spark_setting
from .sql import parse
from .sql.statements import Statement
from .storage import SPARK_PREFIXES, STORAGE_LISTING, Listing, format_prefixes, listed_by, parse_prefixes
from .transaction import Transaction

_BOOLEAN_OPTIONS = names_taking(BOOLEAN)
_COUNT_OPTIONS, _SECONDS_OPTIONS = names_taking(COUNT) - {CACHE_MAX_BYTES}, names_taking(SECONDS) - {METASTORE_WAIT}
# settings the metastore itself reads, as Hive's metastore-side configuration
_METASTORE_OPTIONS = {setting.name: setting.metastore_attribute for setting in SETTINGS
                      if setting.metastore_attribute is not None}
DEFAULT_HOME = ".colstats"
ENV_HOME = "COLSTATS_HOME"
ENV_METASTORE = "COLSTATS_METASTORE"


def lab_home(home: str | None = None) -> str:
    """The folder a Lab on `home` uses: `home`, else $COLSTATS_HOME, else ./.colstats."""
    return os.path.abspath(home or os.environ.get(ENV_HOME) or DEFAULT_HOME)


def metastore_location(home: str, metastore: str | None = None) -> str:
    """Where a Lab on `home` keeps its metastore: `metastore` (a PostgreSQL URL, a team's, or a SQLite file),
    else $COLSTATS_METASTORE, else the SQLite file `home/metastore.db`."""
    return metastore or os.environ.get(ENV_METASTORE) or os.path.join(home, "metastore.db")


@listed_by(lambda lab: lab.listing)
class Lab(DeprecatedLabMethods):
    """A workbench over one metastore and warehouse. The metastore is the SQLite file `home/metastore.db`, or
    `metastore` (else $COLSTATS_METASTORE): `postgresql://user:password@host:5432/database`, a team's, shared
    by its notebooks, workers and dashboards. The warehouse is `home/warehouse`, or `warehouse`: where a new
    metastore's databases keep their managed tables, an object store's prefix too.

    Spark starts on first use: `spark` (a session of your own), `master` (a master URL) or
    `remote` (a Spark Connect URL, `sc://host:port`); otherwise `COLSTATS_SPARK_REMOTE`,
    `COLSTATS_SPARK_MASTER`, or an embedded `local[*]` session.

    A table's actions and figures are on its handle, `lab.tables["sales"]` (`.analyze()`, `.write(df)`,
    `.skew("x")`, `.inspect.stats()`, ...); the lab keeps its statements (`sql`), settings (`get`, `set`),
    catalogs (`attach`, `register_external`), queries (`explain`, `stats_answer`), `autoanalyze`, `views`
    and its `metastore` (`.path`, `.url`, `.engine`).
    """

    _current: Lab | None = None

    def __init__(self, home: str | None = None, spark: SparkSession | None = None, master: str | None = None,
                 remote: str | None = None, spark_conf: dict[str, str] | None = None, warehouse: str | None = None,
                 metastore: str | None = None):
        self.home = lab_home(home)
        location = metastore_location(self.home, metastore)
        check_location(location)  # a URL of another scheme is refused before any folder is made for it
        try:
            os.makedirs(self.home, exist_ok=True)
        except OSError as error:  # a file there, a folder no one may write, /proc
            raise InvalidArgument(f"the lab's home {self.home} cannot be a folder here: "
                                  f"{error.strerror or error}; give another with Lab(home=...), --home or "
                                  f"${ENV_HOME}") from None
        # where a new metastore's databases keep their managed tables: home/warehouse, or an object store's prefix
        self.metastore = Metastore(location, warehouse or os.path.join(self.home, "warehouse"))
        self._spark = spark
        self._master, self._remote, self._spark_conf = master, remote, spark_conf
        self.current_db = DEFAULT_DB
        self._options: dict[str, Any] = {}
        self._spark_settings = SparkSettings()  # `SET spark.*`: Spark's own settings, through the lab
        self._metastore_defaults = {attr: getattr(self.metastore.settings, attr) for attr in _METASTORE_OPTIONS.values()}
        self.catalogs: dict[str, catalogs.AttachedCatalog] = {}
        self.plan_tables = PlanTables()
        # how this lab's calls list an object store (colstats.storage.listing): one this process has no
        # credentials for, through this lab's Spark
        self.listing = Listing.of(str(default_of(STORAGE_LISTING)), lambda: self.spark)
        self.tables = Tables(self)
        self.autoanalyze = AutoAnalyze(self)
        self.views = Views(self)
        Lab._current = self

    @classmethod
    def current(cls, home: str | None = None) -> Lab:
        """The last Lab created, or a new one.

        Args:
            home: the new Lab's folder (default $COLSTATS_HOME or ./.colstats).

        Returns:
            A Lab."""
        return cls._current or cls(home=home)

    @classmethod
    def start_spark_early(cls) -> engine.BackgroundStart | None:
        """Starts, on a thread, the Spark session the magics' lab will ask for: the last Lab created's, or a
        default Lab's (without creating that Lab). A Lab that then asks for other settings gets its own session;
        see engine.build_session.

        Returns:
            The start under way; None where a session runs or starts already, or COLSTATS_SPARK_PRESTART is "0"."""
        lab = cls._current
        if lab is None:
            return engine.start_in_background(lab_home())
        if lab._spark is None:
            return engine.start_in_background(lab.home, lab._master, lab._remote, lab._spark_conf)
        return None

    @property
    def spark(self) -> SparkSession:
        """This lab's Spark session, started on first use.

        Returns:
            The SparkSession."""
        if self._spark is None:
            conf = {**(self._spark_conf or {}), **self._spark_settings.launch} or None
            self._spark = engine.build_session(self.home, self._master, self._remote, conf)
            if self._options.get(SPARK_PREFIXES):  # set before Spark started: Spark's reads take it from the session
                self._spark.conf.set(SPARK_PREFIXES, self._options[SPARK_PREFIXES])
            self._spark_settings.apply(self._spark)
        return self._spark

    @property
    def spark_started(self) -> bool:
        """Whether this lab's Spark session runs already (reading `spark` starts it).

        Returns:
            True once it runs."""
        return self._spark is not None

    # ---- statements ---------------------------------------------------------------------

    def sql(self, query: str = "", txn: Transaction | None = None, as_of: int | str | dt.datetime | None = None, *,
            text: str | None = None) -> Result:
        """Runs one or more `;`-separated statements; each commits in one metastore transaction or not at all.

        Args:
            query: the statements (Hive's and Drill's ANALYZE, DESCRIBE, SHOW, DDL, SET, queries); `query`, as
                in `explain` and `stats_answer` (`text=`, its name before, still works for one release).
            txn: a transaction whose snapshot the statements read; their statistics are stored when it commits.
            as_of: a write ID, or a time (datetime or ISO text, UTC when naive): `DESCRIBE [FORMATTED] t
                [PARTITION (...)] col` answers from the statistics kept as they stood then (`inspect.history`).

        Returns:
            The last statement's Result.

        Raises:
            ParseError: with a caret under the bad token, before anything runs.
            ColstatsError: the error family's others (NoSuchObjectException, InvalidArgument, QueryError, ...)
                naming what is wrong.
        """
        if text is not None:
            query = renamed_argument("lab.sql", "text", "query", text)
        if as_of is not None:
            return reads.describe_as_of(self, self.parse(query), as_of)
        results = [self.run(stmt, txn) for stmt in self.parse(query)]  # parse never returns none
        return results[-1]

    def parse(self, query: str) -> list[Statement]:
        """The `;`-separated statements of `query`, parsed and not run.

        Args:
            query: the statements' text.

        Returns:
            The statements, in order (`run` runs one).

        Raises:
            ParseError: with a caret under the bad token.
            InvalidArgument: for text that is not a str."""
        if not isinstance(query, str):
            raise InvalidArgument(f"lab.sql takes the text of statements, not {type(query).__name__}")
        return parse(query)

    def run(self, stmt: Statement, txn: Transaction | None = None) -> Result:
        """Runs one statement, parsed (`parse`'s) or built (`TableHandle.analyze` builds its ANALYZE), as `sql`
        runs each of its statements.

        Args:
            stmt: the statement.
            txn: a transaction whose snapshot it reads; its statistics are stored when it commits.

        Returns:
            The statement's Result."""
        return execute(self, stmt, txn)

    def transaction(self) -> Transaction:
        """A transaction: `with lab.transaction() as txn:` commits on success and aborts on an exception.

        Returns:
            A Transaction, open."""
        return Transaction(self.metastore, float(self.get("hive.txn.heartbeat.interval")))

    @contextmanager
    def txn_scope(self, txn: Transaction | None) -> Iterator[Transaction]:
        """The given transaction, or a new one that commits when the block succeeds.

        Args:
            txn: a transaction, or None for a new one.

        Returns:
            A context manager giving the transaction."""
        if txn is not None:
            yield txn
            return
        with self.transaction() as own:
            yield own

    def get(self, key: str) -> Any:
        """The value of a setting: its value in this lab, else its default.

        `lab.settings()` lists every setting with its default and what reads it (the docs' settings page is made
        from the same table, `colstats_lab.settings.SETTINGS`).

        Args:
            key: the setting's name. A `spark.*` key is the lab's Spark session's setting (`spark.sql.cbo.enabled`),
                as Spark has it now; any other unknown key is None until set, as Hive's SET keeps any key.

        Returns:
            The value."""
        if is_spark_setting(key):
            return self._spark_settings.get(self._spark, key)
        if key == CACHE_MAX_BYTES:
            return caches.max_bytes()
        if key == METASTORE_WAIT:
            return self.metastore.db.wait_s
        if key in _METASTORE_OPTIONS:
            return getattr(self.metastore.settings, _METASTORE_OPTIONS[key])
        return self._options.get(key, default_of(key))

    def set(self, key: str, value: Any) -> None:
        """Changes a setting for this lab, as Hive's SET does for a session.

        Args:
            key: the setting's name; a `spark.*` key goes to the lab's Spark session (given before Spark starts, it
                waits for the start).
            value: its new value.

        Raises:
            InvalidArgument: naming the key, for a value it cannot take, or for a Spark setting fixed when Spark
                starts."""
        if not isinstance(key, str) or not key.strip():
            raise InvalidArgument(f"a setting's key is a name such as hive.txn.timeout, not {key!r}")
        if is_spark_setting(key):
            self._spark_settings.set(self._spark, key, value)
            return
        if key in _BOOLEAN_OPTIONS:
            value = _as_bool(key, value)
        elif key == "metastore.metadata.store.depth_level":
            value = LEVELS[level_depth(str(value))] if str(value).upper() != "ALL" else "ALL"
        elif key == "colstats.history.sketches":
            value = max(1, _as_count(key, value))  # the latest state keeps its sketches: it is the one in force
            if value < self.metastore.settings.history_sketches:  # a commit thins only the cells it touches
                self.metastore.stats_history.thin_stats_history(value)
        elif key == "colstats.frequent.items":
            value = _as_count(key, value)
            if value > MAX_FREQUENT_ITEMS:
                raise InvalidArgument(f"{key} takes at most {MAX_FREQUENT_ITEMS:,} (Spark's bound on the values "
                                            f"a frequent-items sketch tracks), not {value:,}")
        elif key == AUTOANALYZE_SAMPLE:
            value = checked_sample(value)
        elif key == "colstats.sample.seed":
            value = None if value is None else _as_count(key, value)
        elif key == "colstats.history.max_bytes":
            value = None if value is None else _as_count(key, value)
        elif key == CACHE_MAX_BYTES:  # the process's: every lab in it reads through the same caches
            caches.set_max_bytes(_as_count(key, value))
            return
        elif key == METASTORE_WAIT:
            self.metastore.db.set_wait(_as_seconds(key, value))
            return
        elif key in _SECONDS_OPTIONS:
            value = _as_seconds(key, value)
        elif key in _COUNT_OPTIONS:
            value = _as_count(key, value)
        elif key == STORAGE_LISTING:
            self.listing = Listing.of(str(value), lambda: self.spark)
        elif key == SPARK_PREFIXES:
            value = format_prefixes(parse_prefixes(value))
            if self._spark is not None:
                self._spark.conf.set(key, value)
        if key in _METASTORE_OPTIONS:
            setattr(self.metastore.settings, _METASTORE_OPTIONS[key], value)
        else:
            self._options[key] = value

    def settings(self) -> pd.DataFrame:
        """Every setting the lab knows, a row each. `spark.*` settings are Spark's own and not listed.

        Returns:
            A DataFrame: `name`, `value` (in this lab now), `default`, `changed`, `takes` (what a value may be),
            `held` (this lab, its metastore or the process), `reads` (what reads it), `summary` and `origin` (Hive,
            Drill or the lab)."""
        rows = [{"name": s.name, "value": self.get(s.name), "default": s.default,
                 "changed": self.get(s.name) != s.default, "takes": s.takes, "held": s.held, "reads": s.reads,
                 "summary": s.summary, "origin": s.origin} for s in SETTINGS]
        return pd.DataFrame(rows, columns=["name", "value", "default", "changed", "takes", "held", "reads",
                                           "summary", "origin"])

    def reset(self, key: str | None = None) -> list[str]:
        """Puts a setting back to its default, as RESET does.

        Args:
            key: the setting; None for every setting this lab changed. A `spark.*` key gets back the value it had in
                Spark before the lab changed it.

        Returns:
            The keys reset."""
        if key is not None and (not isinstance(key, str) or not key.strip()):
            raise InvalidArgument(f"a setting's key is a name such as hive.txn.timeout, not {key!r}")
        if key is not None and is_spark_setting(key):
            return self._spark_settings.reset(self._spark, key)
        keys = [key] if key is not None else sorted({*self._options, *(k for k, attr in _METASTORE_OPTIONS.items()
                                                                       if getattr(self.metastore.settings, attr)
                                                                       != self._metastore_defaults[attr]),
                                                     *([CACHE_MAX_BYTES] if caches.max_bytes()
                                                       != caches.DEFAULT_MAX_BYTES else [])})
        for name in keys:
            if name in _METASTORE_OPTIONS:
                setattr(self.metastore.settings, _METASTORE_OPTIONS[name], self._metastore_defaults[_METASTORE_OPTIONS[name]])
            elif name == STORAGE_LISTING:
                self.listing = Listing.of(str(default_of(STORAGE_LISTING)), lambda: self.spark)
            elif name == SPARK_PREFIXES and self._spark is not None:
                self._spark.conf.unset(SPARK_PREFIXES)
            elif name == CACHE_MAX_BYTES:
                caches.set_max_bytes(caches.DEFAULT_MAX_BYTES)
            elif name == METASTORE_WAIT:
                self.metastore.db.set_wait(BUSY_TIMEOUT_MS / 1000)
            self._options.pop(name, None)
        return keys + (self._spark_settings.reset(self._spark) if key is None else [])

    # ---- data ---------------------------------------------------------------------------

    def resolve(self, table: str | Table) -> Table:
        """The metastore's Table for `table`, read now.

        Args:
            table: a name in the current database, `db.table`, `catalog.db.table`, or a Table (read again by its
                name).

        Returns:
            The Table.

        Raises:
            NoSuchObjectException: naming an unknown table."""
        if isinstance(table, Table):
            return self.metastore.catalog.get_table(table.dbName, table.tableName)
        in_catalog = catalogs.split_catalog_name(self, table)
        if in_catalog is not None:
            return catalogs.catalog_table(self, in_catalog)
        return catalogs.followed(self, self.metastore.catalog.get_table(*split_table_name(table, self.current_db)))

    def stats_answer(self, query: str | Any, txn: Transaction | None = None) -> StatsAnswer:
        """Whether statistics answer `query` without a scan, and why: for the snapshot the query reads
        (`hive.compute.query.using.stats` must be on); no Spark job.

        Args:
            query: a SELECT, as text or sqlglot's tree.
            txn: a transaction whose snapshot the query reads.

        Returns:
            A StatsAnswer whose `.frame` is the answer (None: Spark runs it) and `.reason` says why."""
        return reads.stats_answer(self, query, txn)

    def explain(self, query: str, txn: Transaction | None = None, run: bool = False) -> PlanReport:
        """How Spark plans `query`, and which statistics each estimate came from: any query over lab tables,
        Spark's catalog tables and attached catalogs'.

        With `run`, the query runs once, under the session's settings but for the adaptive rules that drop
        operators (they would drop the metrics of what lies above an empty stage), while its plan is read, and each
        operator's rows are counted from its metrics; each operator then also says what it did (time_s, bytes,
        spill_bytes, peak_memory where Spark keeps them; tasks and the fewest, median and most rows of a task),
        `.skewed()` lists the operators whose largest task held 5x the median or more beside the lab's prediction,
        and the run is kept in the metastore (`.run_id`; `runs()`).

        Args:
            query: the query's text.
            txn: a transaction whose snapshot the query reads.
            run: run the query once and count what each operator produced.

        Returns:
            A PlanReport: `.operators`, one row per operator of the optimized plan, root first (node,
            estimated_rows and estimated_bytes under the session's settings, actual_rows, q_error, statistics:
            whose figures a scan had, cause: why an operator is off by 10x or more) and `.fixes`, what to run about
            it. A SELECT over one lab table gives a PruningReport, a PlanReport with what pruning reads too: a
            decision, the rows and bytes of every segment, partition, list-bucketing directory, file and row group,
            and `estimated_rows`, the rows its WHERE keeps by the lab's statistics accurate for the reader
            (`.estimate.how` says what it used; `actual_rows` once run); it starts no Spark, so its operators come
            with `run` or once Spark runs.

        Raises:
            ParseError: for a query that does not parse.
            InvalidArgument: for a statement that is not a query.
            QueryError: when Spark cannot plan it."""
        return explain_command.explain(self, query, txn, run)

    def runs(self, operators: bool = False, limit: int | None = DEFAULT_LIMIT) -> pd.DataFrame:
        """Every run of `explain(run=True)` the metastore keeps (`colstats.runs.keep`), newest first.
        `inspect.runs()` gives one table's.

        Args:
            operators: a row per operator of each run (estimated and actual rows, time, tasks) instead of one per run.
            limit: at most this many runs (None: every one kept).

        Returns:
            A DataFrame, a row per run: when (UTC), seconds, the query and its fingerprint (its text with literals
            as ?), its operators, the one furthest off and its q-error, how many ran skewed, and the write IDs and
            state of the statistics each lab table was planned with.

        Raises:
            InvalidArgument: for a limit that is not a count."""
        return runs_frame(self, None, operators, limit)

    def analyze_frame(self, frame: DataFrame | pd.DataFrame, by: list[str] | str | None = None) -> pd.DataFrame:
        """Statistics of any DataFrame, by ANALYZE's one-pass aggregation, stored nowhere (a DataFrame has no
        files or writes to judge freshness by).

        Args:
            frame: a Spark DataFrame, or pandas' brought into Spark as a write brings it (missing values are NULL,
                timestamps kept to the microsecond; `.attrs["notes"]` of the result says what that changed).
            by: columns whose every value gets its own statistics.

        Returns:
            `inspect.stats()`'s columns, one row per column, or per value of the `by` columns and column."""
        return analyze_commands.analyze_frame(self, frame, by)

    def register_external(self, table: str, path: str, format: str = "parquet",
                          partition_types: dict[str, str] | None = None) -> TableHandle:
        """Registers existing files as an external table.

        Basic stats count files and bytes; rows stay unknown (numRows 0, no accuracy flag) until ANALYZE, as Hive
        leaves loaded files. A Delta or Iceberg table is followed to its current snapshot whenever the lab uses it:
        statistics of partitions a later commit changed are stale, and the reason names the commit.

        Args:
            table: the new table's name.
            path: Parquet files with `k=v` partition directories; with `format="delta"`, the Delta table there; with
                `format="iceberg"`, the Iceberg table of the metadata file `path` (read-only: pinned to the snapshot
                that file names).
            format: "parquet", "delta" or "iceberg".
            partition_types: a partition key's type by name; the others are inferred from the folders' values as
                Spark infers them (int, bigint, double, date, timestamp, else string). A format's tables carry their
                own.

        Returns:
            The table's handle (`lab.tables[table]`)."""
        registered = table_commands.register_external(self, table, path, format, partition_types)
        return self.tables[registered.qualified_name]

    # ---- attached catalogs ----------------------------------------------------------------

    def attach(self, name: str, uri: str | dict) -> None:
        """Attaches a Hive Metastore or an Iceberg catalog as catalog `name`: its tables are then `name.db.t` in
        statements (`SHOW TABLES IN name.db`, `DESCRIBE FORMATTED name.db.t c`, `ANALYZE TABLE name.db.t ...`) and
        methods. The lab reads their schema, partitions and locations from the catalog (an HMS partition's location
        only when it is used; an Iceberg table's current snapshot on each use), their rows with Spark, and keeps
        their statistics as an external table's in the lab database `name_db`.

        Args:
            name: the catalog's name in the lab.
            uri: the Hive Metastore's URI (`thrift://host:9083`), or the properties pyiceberg opens an Iceberg
                catalog with (a dict: `load_catalog(name, **uri)`).

        Raises:
            MetastoreUnreachable: naming an HMS's URI that does not answer."""
        catalogs.attach(self, name, uri)

    # ---- Spark's catalog ------------------------------------------------------------------

    def import_spark_stats(self, spark_table: str) -> Result:
        """Reads the statistics Spark keeps for `spark_table` (after Spark's own ANALYZE TABLE) into the lab's
        table of the same database and name, registering it as external if the lab doesn't know it.

        Args:
            spark_table: the Spark catalog table's name.

        Returns:
            A Result.

        Raises:
            InvalidArgument: when Spark has no row count for it or the lab's table of that name is another table."""
        return exchange.import_spark_stats(self.spark, self.metastore, spark_table,
                                           lambda *args, **kwargs: self.register_external(*args, **kwargs)
                                           .metastore_table())

    def clean(self, max_bytes: int | None = None) -> list[str]:
        """Removes what aborted writes and ended transactions left, and thins the statistics history: the files
        of aborted writes (never read before) and staging left by ended transactions, in every managed table; keeps
        the last `colstats.history.keep` states of each column's statistics history and drops the oldest states
        until the history takes at most `max_bytes`, a cell's latest state always kept; compacts the file when
        states went, so the space returns to the disk.

        Args:
            max_bytes: the history's budget (default `colstats.history.max_bytes`).

        Returns:
            The directories removed."""
        return table_commands.clean(self, max_bytes)

    def close(self) -> None:
        """Closes the attached catalogs' clients and the metastore.

        Drops the catalog tables Spark planned this lab's tables with; the Spark session stays (it may be a
        session of your own)."""
        for client in self.catalogs.values():
            client.close()
        if self.plan_tables.made:
            drop_plan_tables(self)
        self.metastore.close()
        if Lab._current is self:
            Lab._current = None


def _as_bool(key: str, value) -> bool:
    if isinstance(value, str):
        if value.strip().lower() not in ("true", "false"):
            raise InvalidArgument(f"{key} takes true or false, not {value!r}")
        return value.strip().lower() == "true"
    return bool(value)


def _as_seconds(key: str, value) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgument(f"{key} takes a number of seconds, not {value!r}") from None
    if not seconds > 0 or seconds == float("inf"):
        raise InvalidArgument(f"{key} takes a positive number of seconds, not {value!r}")
    largest = maximum_of(key)
    if largest is not None and seconds > largest:
        raise InvalidArgument(f"{key} takes at most {largest:,.0f} seconds, not {value!r}")
    return seconds


def _as_count(key: str, value) -> int:
    try:
        count = int(value) if not isinstance(value, float) or value.is_integer() else int("x")
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgument(f"{key} takes a whole number, not {value!r}") from None
    if count < 0:
        raise InvalidArgument(f"{key} takes 0 or more, not {count}")
    largest = maximum_of(key)
    if largest is not None and count > largest:
        raise InvalidArgument(f"{key} takes at most {int(largest):,}, not {count:,}")
    return count

"""Every setting `lab.get`/`lab.set` (and SET/RESET) know, in one table: its default, what it takes, where it
is held and what reads it. The lab takes its defaults and its checks from here, and the docs' settings page is
generated from it, so the two cannot drift."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .analyze.autoanalyze import AUTOANALYZE_SAMPLE
from .caches import DEFAULT_MAX_BYTES
from .column_statistics.frequent_items import DEFAULT_FREQUENT_ITEMS
from .commands.plan_tables import PLAN_STATISTICS
from .commands.runs import RUNS_KEEP
from .metastore.db import BUSY_TIMEOUT_MS
from .metastore.repositories.history import DEFAULT_KEEP, DEFAULT_SKETCHES
from .metastore.repositories.run_records import DEFAULT_RUNS_KEPT
from .storage import SPARK_PREFIXES, STORAGE_LISTING
from .transaction import HEARTBEAT_INTERVAL_S

CACHE_MAX_BYTES = "colstats.cache.max_bytes"
METASTORE_WAIT = "colstats.metastore.wait"

# what a value is checked as (lab.set refuses any other in one line naming the key)
BOOLEAN, COUNT, SECONDS, TEXT = "true or false", "a whole number, 0 or more", "seconds, more than 0", "text"
# where a value lives: this lab only, the lab's metastore object (read by every command on it), or the process
LAB, METASTORE, PROCESS = "this lab", "the lab's metastore", "the process"


@dataclass(frozen=True)
class Setting:
    """One setting: `name` as SET spells it, its `default`, what it `takes`, where it is `held`, what
    `reads` it, and a one-line `summary`. `origin` is the system whose setting of that name it follows."""
    name: str
    default: Any
    takes: str
    held: str
    reads: str
    summary: str
    origin: str = "colstats_lab"
    metastore_attribute: str | None = None  # the Metastore attribute holding it, where held by the metastore
    maximum: float | None = None  # the largest value a number may be (None: the kind's, MAXIMUM_OF)


# the largest number of each kind a setting takes unless its row says otherwise: a count the metastore and Spark
# hold as a 32-bit int; seconds of a week (a heartbeat or a wait longer than that is a typo, and 1e300 overflows
# the timers that sleep on it)
MAXIMUM_OF = {COUNT: 2 ** 31 - 1, SECONDS: 7 * 24 * 3600.0}
MAX_BYTES = 2 ** 62  # a byte budget: far past any disk, inside a 64-bit integer


SETTINGS: tuple[Setting, ...] = (
    # Hive's
    Setting("hive.txn.stats.enabled", True, BOOLEAN, METASTORE, "every write and ANALYZE; answers from statistics",
            "keep statistics accurate per write ID (HIVE-19416); false keeps none accurate for a transactional "
            "table", "Hive", "txn_stats_enabled"),
    Setting("hive.txn.timeout", 300.0, SECONDS, METASTORE, "transactions, auto-analyze claims across hosts",
            "a transaction whose heartbeat is older than this is aborted by the next one that looks",
            "Hive", "txn_timeout_s"),
    Setting("hive.txn.heartbeat.interval", HEARTBEAT_INTERVAL_S, SECONDS, LAB, "open transactions",
            "how often an open transaction heartbeats", "Hive"),
    Setting("hive.compute.query.using.stats", True, BOOLEAN, LAB, "lab.sql, stats_answer",
            "answer count(*), min and max from statistics accurate for the reader, without a scan", "Hive"),
    Setting("hive.stats.column.autogather", True, BOOLEAN, LAB, "writes (table handle's write, INSERT)",
            "a write gathers its rows' column statistics in the same Spark job", "Hive"),
    Setting("hive.stats.kll.enable", False, BOOLEAN, METASTORE, "ANALYZE, gathered writes",
            "keep a KLL quantile sketch of every numeric, date and timestamp column (Hive 4's HISTOGRAM)",
            "Hive", "kll_enabled"),
    Setting("hive.metastore.stats.ndv.densityfunction", False, BOOLEAN, METASTORE,
            "the table level's NDV merged from partitions without sketches",
            "estimate a merged NDV from the partitions' density, as Hive's aggregator does", "Hive",
            "ndv_density_function"),
    Setting("hive.optimize.listbucketing", True, BOOLEAN, LAB, "writes of list-bucketed tables, pruning",
            "write declared skewed values to their own directories and prune by them (Hive's default: false)",
            "Hive"),
    Setting("hive.mapred.supports.subdirectories", True, BOOLEAN, LAB, "list-bucketed tables' reads",
            "read a partition's list-bucketing subdirectories (Hive's default: false)", "Hive"),
    # Drill's metastore
    Setting("metastore.enabled", False, BOOLEAN, LAB, "queries' pruning",
            "prune with Drill's table metadata (REFRESH METADATA) where it is current", "Drill"),
    Setting("metastore.metadata.store.depth_level", "ROW_GROUP", "TABLE, SEGMENT, PARTITION, FILE, ROW_GROUP or ALL",
            LAB, "ANALYZE ... REFRESH METADATA", "the deepest level REFRESH METADATA keeps", "Drill"),
    Setting("metastore.metadata.use_schema", True, BOOLEAN, LAB, "queries' planning",
            "take the schema from the kept metadata", "Drill"),
    Setting("metastore.metadata.use_statistics", True, BOOLEAN, LAB, "queries' pruning",
            "take the kept metadata's figures for pruning", "Drill"),
    Setting("metastore.metadata.fallback_to_file_metadata", True, BOOLEAN, LAB, "queries' pruning",
            "where the kept metadata is stale, read the files' footers instead", "Drill"),
    Setting("metastore.retrieval.retry_attempts", 5, COUNT, LAB, "queries reading kept metadata",
            "attempts to read metadata another writer is changing", "Drill"),
    # the lab's own
    Setting("colstats.history.enabled", True, BOOLEAN, METASTORE, "every commit of statistics",
            "keep each state of each column's statistics (false: a backfill keeps none)",
            metastore_attribute="history_enabled"),
    Setting("colstats.history.keep", DEFAULT_KEEP, COUNT, LAB, "lab.clean()",
            "states kept per column and partition"),
    Setting("colstats.history.sketches", DEFAULT_SKETCHES, COUNT, METASTORE, "every commit of statistics",
            "the latest states of a cell that keep their HLL and KLL sketches (at least 1)",
            metastore_attribute="history_sketches"),
    Setting("colstats.history.max_bytes", None, "a whole number of bytes, or None", LAB,
            "lab.clean(), each auto-analyze round", "drop the oldest states until the history takes about this",
            maximum=MAX_BYTES),
    Setting("colstats.frequent.items", DEFAULT_FREQUENT_ITEMS, "a whole number up to 2,147,483,647", METASTORE,
            "ANALYZE and gathered writes of every integer, date and string column (a table's "
            "colstats.frequent.items.columns narrows it)",
            "values each frequent-items sketch tracks (0: none)", metastore_attribute="frequent_items"),
    Setting("colstats.sample.seed", None, "a whole number, or None", METASTORE, "ANALYZE ... SAMPLE",
            "makes a sample's choice of row groups repeatable (None: at random)", metastore_attribute="sample_seed",
            maximum=2 ** 63 - 1),
    Setting("colstats.analyze.missing_as_empty", False, BOOLEAN, METASTORE, "ANALYZE of external tables",
            "record a partition (or table) whose folder is gone as empty, where ANALYZE otherwise refuses it by name",
            metastore_attribute="missing_as_empty"),
    Setting(AUTOANALYZE_SAMPLE, "off", "off, auto, or a fraction in (0, 1]", LAB, "auto-analyze rounds",
            "let auto-analyze sample (auto: 5 % where a due partition holds 1 GiB or more)"),
    Setting(RUNS_KEEP, DEFAULT_RUNS_KEPT, COUNT, LAB, "explain(run=True)",
            "runs the metastore keeps, the oldest dropped first"),
    Setting(PLAN_STATISTICS, True, BOOLEAN, LAB, "lab.sql, explain over several lab tables",
            "plan a query's lab tables with the lab's statistics where they are accurate (false: as files)"),
    Setting(STORAGE_LISTING, "auto", "auto, store or spark", LAB, "every listing of an object store",
            "list through the store's client, or through Spark (auto: Spark where no credentials are found)"),
    Setting(SPARK_PREFIXES, None, "pairs from=to separated by commas, or a dict", LAB, "Spark's reads",
            "what Spark reads for an object store's prefix (s3://lake/=file:///mnt/lake/)"),
    Setting(CACHE_MAX_BYTES, DEFAULT_MAX_BYTES, COUNT, PROCESS, "every footer and listing read",
            "what the process's caches of footers may hold together, in bytes", maximum=MAX_BYTES),
    Setting(METASTORE_WAIT, BUSY_TIMEOUT_MS / 1000, SECONDS, METASTORE, "every write to the metastore",
            "seconds a write waits for another writer's lock, saying so after a moment"),
)

BY_NAME = {setting.name: setting for setting in SETTINGS}


def default_of(name: str) -> Any:
    """The default of a setting this table holds; None for any other key (SET keeps any key, as Hive's)."""
    setting = BY_NAME.get(name)
    return None if setting is None else setting.default


def maximum_of(name: str) -> float | None:
    """The largest value setting `name` takes (its row's, else its kind's); None for a key the table lacks."""
    setting = BY_NAME.get(name)
    if setting is None:
        return None
    return setting.maximum if setting.maximum is not None else MAXIMUM_OF.get(setting.takes, 2 ** 63 - 1)


def names_taking(takes: str) -> frozenset[str]:
    """The settings checked as `takes` (BOOLEAN, COUNT, SECONDS)."""
    return frozenset(setting.name for setting in SETTINGS if setting.takes == takes)

"""The settings a metastore's repositories read, one object the Metastore and each repository share: Hive's
(`hive.txn.stats.enabled`, `hive.txn.timeout`, ...) and the lab's (`colstats.history.enabled`, ...), which
`lab.set` changes on `metastore.settings`, so every repository sees the change at once."""
from __future__ import annotations

from dataclasses import dataclass

from ..column_statistics.frequent_items import DEFAULT_FREQUENT_ITEMS
from .rows import segments

DEFAULT_SKETCHES = 2  # colstats.history.sketches: the latest states of a cell that keep their sketches


@dataclass
class MetastoreSettings:
    """`warehouse`: where a new database keeps its managed tables."""
    warehouse: str
    txn_stats_enabled: bool = True  # Hive's hive.txn.stats.enabled
    txn_timeout_s: float = 300.0  # Hive's hive.txn.timeout
    history_enabled: bool = True  # colstats.history.enabled: commits keep states of their statistics
    history_sketches: int = DEFAULT_SKETCHES  # colstats.history.sketches
    ndv_density_function: bool = False  # Hive's hive.metastore.stats.ndv.densityfunction
    kll_enabled: bool = False  # Hive's hive.stats.kll.enable: statistics gathered with a KLL sketch
    frequent_items: int = DEFAULT_FREQUENT_ITEMS  # colstats.frequent.items: values each sketch tracks (0: none)
    sample_seed: int | None = None  # colstats.sample.seed: the row groups a SAMPLE chooses (None: at random)
    missing_as_empty: bool = False  # colstats.analyze.missing_as_empty: a gone folder analyzed as empty
    # partitions a statistics segment holds, as bits (64 by default); a file's segments are built with one
    # value (tests use 1 on a new file, to build deep segment trees from a few partitions)
    segment_bits: int = segments.BITS

"""Shuffle skew of a join or an aggregation, predicted before it runs and checked against Spark's own placement.

A shuffle sends each row to partition `pmod(hash(key), n)` (Spark's Murmur3 with seed 42; n is
`spark.sql.shuffle.partitions`). The prediction takes each side's heavy keys, with the bounds their
frequent-items sketch states, its rows, NULL keys and distinct keys, all from statistics: a heavy key's
rows land in one task; the other keys' rows spread evenly, each key with the rows an average light key
holds. The partition of each heavy key is computed by Spark itself, on a local relation of those keys (no
job), so types and collations hash as Spark hashes them. The check (`measure`) repartitions each side by
the key exactly as the shuffle does and counts rows per `spark_partition_id()`, through the public API.

What AQE does with it follows Spark's OptimizeSkewedJoin: a partition of a side is skewed when its
bytes exceed both `skewedPartitionFactor` times the median partition and `skewedPartitionThresholdInBytes`;
it is split only for the sides the join type allows (inner: both, left outer: left, right outer: right).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ..column_statistics.frequent_items import FrequentValue
from ..quoting import column_ref
from ..sizes import size

HOW = ("inner", "left", "right", "full")
NULL_HASH = 42  # Murmur3Hash of a NULL key is its seed: every NULL key goes to partition pmod(42, n)
HOT_KEYS = 1024  # listed keys of each side the prediction places one by one (a sketch lists at most this many)
HASHED_AT_ONCE = 256  # keys placed by one projection
BROADCAST_ADVISED_BYTES = 2**30  # a side up to this size is worth broadcasting by hand (Spark's hard limit is 8 GiB)


@dataclass(frozen=True)
class ShuffleSettings:
    """The session's settings a shuffle's placement and AQE's skew rule follow."""

    partitions: int
    adaptive: bool = True
    skew_join: bool = True
    skew_factor: float = 5.0
    skew_threshold_bytes: int = 256 * 2**20
    broadcast_threshold_bytes: int = 10 * 2**20

    @classmethod
    def of(cls, spark: SparkSession) -> ShuffleSettings:
        def conf(key: str, default: str) -> str:
            return str(spark.conf.get(key, default))
        return cls(int(conf("spark.sql.shuffle.partitions", "200")),
                   conf("spark.sql.adaptive.enabled", "true").lower() == "true",
                   conf("spark.sql.adaptive.skewJoin.enabled", "true").lower() == "true",
                   float(conf("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "5.0")),
                   _bytes(conf("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "256MB")),
                   _bytes(conf("spark.sql.autoBroadcastJoinThreshold", "10MB")))


def _bytes(text: str) -> int:
    """Spark's size text ("256MB", "10485760b", "-1") in bytes."""
    text = text.strip().lower()
    units = {"b": 1, "k": 2**10, "kb": 2**10, "m": 2**20, "mb": 2**20, "g": 2**30, "gb": 2**30, "t": 2**40, "tb": 2**40}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit) and text[:-len(unit)].strip().lstrip("-").replace(".", "", 1).isdigit():
            return int(float(text[:-len(unit)]) * units[unit])
    return int(float(text))


@dataclass(frozen=True)
class ShuffleSide:
    """One side of a shuffle as statistics describe it: the rows it reads, their NULL keys and distinct
    keys, its heavy keys (`frequent`, with bounds) and the most rows a key not listed may hold."""

    table: str
    key: str  # the key as a reader names it: one column, or several joined by ", "
    key_type: str
    rows: int
    nulls: int
    distinct: int
    frequent: list[FrequentValue]
    max_error: int
    row_bytes: float  # bytes a row takes in the shuffle (Spark's estimate: 8 per column plus strings' lengths)
    size_bytes: int  # the files' bytes, which Spark compares with autoBroadcastJoinThreshold
    source: str  # where the figures come from, in words
    columns: tuple[str, ...] = ()  # the key's columns (a composite key has several; empty: `key` itself)
    # keys the other side lists and this one does not, with their rows counted exactly (`counted_keys`)
    counted: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def key_columns(self) -> list[str]:
        return list(self.columns) or [self.key]

    def rows_of(self, value) -> tuple[float, int, int]:
        """A key's rows: estimate, lower and upper bound (a counted key's are its exact rows)."""
        if value in self.counted:
            rows = int(self.counted[value])
            return float(rows), rows, rows
        item = self._listed.get(value)
        if item is not None:
            return float(item.estimate), item.lower, item.upper
        return min(self.light_key_rows, float(self.max_error)), 0, self.max_error

    @functools.cached_property
    def _listed(self) -> dict:
        return {item.value: item for item in self.frequent}

    @property
    def light_rows(self) -> float:
        """Rows with a non-NULL key the heavy keys do not hold."""
        return max(self.rows - self.nulls - sum(v.estimate for v in self.frequent), 0)

    @property
    def light_keys(self) -> int:
        return max(self.distinct - len(self.frequent), 1)

    @property
    def light_key_rows(self) -> float:
        return self.light_rows / self.light_keys


@dataclass
class ShuffleSkewReport:
    """The predicted shuffle of a join (or aggregation): `hot_keys` one row per heavy key (left rows, right
    rows, output rows, shuffle partition), `tasks` one row per shuffle partition (`partition`,
    `predicted_rows` of the output, each side's predicted input rows and bytes, `actual_rows` once
    measured), `recommendation` one sentence and `code` the setting or code it names."""

    kind: str  # "join" or "aggregation"
    how: str
    sides: list[ShuffleSide]
    settings: ShuffleSettings
    hot_keys: pd.DataFrame
    tasks: pd.DataFrame
    recommendation: str = ""
    code: str = ""
    broadcast: str | None = None  # the side Spark would broadcast, when one fits its threshold
    measured: bool = False
    # after a run: whether AQE split a skewed partition of this join (its final plan's join marked skew=true);
    # None without a run, or where the plan cannot be read (Spark Connect)
    aqe_observed: bool | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def largest(self) -> pd.Series:
        return self.tasks.sort_values("predicted_rows", ascending=False).iloc[0]

    @property
    def median_rows(self) -> float:
        return float(self.tasks["predicted_rows"].median())

    @property
    def skew_ratio(self) -> float:
        """The largest task's predicted rows over the median task's."""
        median, largest = self.median_rows, float(self.largest["predicted_rows"])
        if not largest:
            return 0.0  # no rows at all
        return largest / median if median else math.inf

    def split_by_aqe(self) -> list[int]:
        """The partitions AQE's skew-join rule would split, with the session's settings, whatever the compression
        of the shuffle's bytes (those it may split are `aqe_may_split`)."""
        return sorted(int(p) for p, split in zip(self.tasks["partition"], self.tasks["aqe_splits"], strict=True) if split is True)

    def aqe_may_split(self) -> list[int]:
        """The partitions whose split turns on the shuffle's compressed bytes, which only a run measures."""
        return sorted(int(p) for p, split in zip(self.tasks["partition"], self.tasks["aqe_splits"], strict=True) if split is None)


def hash_partitions(spark: SparkSession, values: list, type_name: str | list[str], partitions: int) -> list[int]:
    """Each value's shuffle partition as Spark computes it (`pmod(hash(key, ...), n)` on the key as `type_name`;
    a composite key's values are tuples and `type_name` a list), evaluated by Spark as literals over a
    one-row inline table, which its optimizer folds: no job runs."""
    types = type_name if isinstance(type_name, list) else [type_name]
    one_row = spark.sql("SELECT * FROM VALUES (0) AS t(i)")

    def hashed(value) -> Column:
        parts = value if isinstance(type_name, list) else (value,)
        return F.hash(*[key_literal(part, t) for part, t in zip(parts, types, strict=True)])
    placed: list[int] = []
    for start in range(0, len(values), HASHED_AT_ONCE):
        chunk = values[start:start + HASHED_AT_ONCE]
        row = one_row.select(*[F.pmod(hashed(v), F.lit(int(partitions))).alias(f"p{i}")
                               for i, v in enumerate(chunk)]).collect()[0]
        placed += [int(row[f"p{i}"]) for i in range(len(chunk))]
    return placed


def key_literal(value, type_name: str) -> Column:
    """A key's value as a literal of the type the shuffle hashes and the join compares; a decimal as its text,
    since a Python int past a long is no literal Py4J can pass (38 digits fit a decimal)."""
    return F.lit(str(value) if type_name.startswith("decimal") and value is not None else value).cast(type_name)


def predict_join(left: ShuffleSide, right: ShuffleSide, how: str, settings: ShuffleSettings,
                 place: Callable[[list], list[int]]) -> ShuffleSkewReport:
    """The join's shuffle from both sides' statistics; `place` gives heavy keys' shuffle partitions."""
    hot = _hot_values(left, right)
    placed = dict(zip(hot, place(hot), strict=True))
    rows = []
    for value in hot:
        l_est, l_low, l_high = left.rows_of(value)
        r_est, r_low, r_high = right.rows_of(value)
        rows.append({"key": value, "left_rows": l_est, "left_low": l_low, "left_high": l_high,
                     "right_rows": r_est, "right_low": r_low, "right_high": r_high,
                     "output_rows": _output(l_est, r_est, how), "output_low": _output(l_low, r_low, how),
                     "output_high": _output(l_high, r_high, how), "partition": placed[value]})
    hot_keys = pd.DataFrame(rows, columns=["key", "left_rows", "left_low", "left_high", "right_rows", "right_low",
                                           "right_high", "output_rows", "output_low", "output_high", "partition"])
    hot_keys = hot_keys.sort_values("output_rows", ascending=False, kind="stable").reset_index(drop=True)
    tasks = _tasks(left, right, how, settings, hot_keys)
    report = ShuffleSkewReport("join", how, [left, right], settings, hot_keys, tasks)
    _recommend_join(report)
    return report


def predict_aggregation(side: ShuffleSide, settings: ShuffleSettings,
                        place: Callable[[list], list[int]]) -> ShuffleSkewReport:
    """A `groupBy(key)`'s shuffle from the side's statistics: each task's input rows before any map-side
    combining (what an aggregate without a partial form, such as collect_list or a window, receives)."""
    n = settings.partitions
    hot = _hot_values(side)
    placed = dict(zip(hot, place(hot), strict=True))
    rows = []
    for value in hot:
        estimate, low, high = side.rows_of(value)
        rows.append({"key": value, "rows": estimate, "rows_low": low, "rows_high": high, "partition": placed[value]})
    hot_keys = pd.DataFrame(rows, columns=["key", "rows", "rows_low", "rows_high", "partition"]) \
        .sort_values("rows", ascending=False, kind="stable").reset_index(drop=True)
    light = max(side.rows - side.nulls - float(hot_keys["rows"].sum()), 0.0)
    counts = [light / n] * n
    for key in hot_keys.itertuples(index=False):
        counts[key.partition] += key.rows
    counts[NULL_HASH % n] += side.nulls  # NULL is a group of its own, hashed to the seed's task
    tasks = pd.DataFrame({"partition": range(n), "predicted_rows": counts})
    tasks["aqe_splits"] = False  # AQE splits skewed joins, never an aggregation's partitions
    tasks["actual_rows"] = pd.Series([None] * n, dtype="Int64")
    report = ShuffleSkewReport("aggregation", "group by", [side], settings, hot_keys, tasks)
    _recommend_aggregation(report)
    return report


def _recommend_aggregation(report: ShuffleSkewReport) -> None:
    side, settings, ratio = report.sides[0], report.settings, report.skew_ratio
    largest = report.largest
    if ratio < settings.skew_factor:
        report.recommendation = (f"Nothing to do: the largest task is predicted at {ratio:.1f}x the median, under "
                                 f"the skew factor {settings.skew_factor:g}.")
        return
    task = int(largest["partition"])
    held = report.hot_keys[report.hot_keys["partition"] == task]["key"].head(3).tolist()
    if side.nulls and task == NULL_HASH % settings.partitions and side.nulls >= 0.5 * float(largest["predicted_rows"]):
        what = f"the {side.nulls:,} NULL {side.key} rows"
    else:
        what = f"{side.key} = {', '.join(map(str, held))}" if held else "its keys"
    factor = _salt_factor(ratio, settings)
    report.recommendation = (f"Task {task} receives the most rows, {_times_median(ratio)} ({what}): Spark's partial "
                             "aggregation combines them map-side for sum, count, min, max and avg, so only aggregates "
                             "without a partial form (collect_list, percentile, count(DISTINCT ...), a window) feel "
                             f"it; for those, salt by a factor of {factor} and aggregate twice.")
    report.code = (f"df.groupBy('{side.key}', (F.rand() * {factor}).cast('int').alias('salt')).agg(...)"
                   f".groupBy('{side.key}').agg(...)")


def measure_aggregation(report: ShuffleSkewReport, frame: DataFrame, key_type: str | list[str]) -> ShuffleSkewReport:
    """Fills `tasks.actual_rows`: the rows of each task after `repartition(n, key)`, as the aggregation's
    shuffle places them, counted with `spark_partition_id()`."""
    n = report.settings.partitions
    side = report.sides[0]
    counted = {int(r["p"]): int(r["count"]) for r in
               _keyed(frame, side, key_type).repartition(n, *_key_names(side))
               .select(F.spark_partition_id().alias("p")).groupBy("p").count().collect()}  # one row per task
    report.tasks["actual_rows"] = pd.array([counted.get(p, 0) for p in range(n)], dtype="Int64")
    report.measured = True
    return report


def _key_names(side: ShuffleSide) -> list[str]:
    return [f"k{i}" for i in range(len(side.key_columns))]


def _keyed(frame: DataFrame, side: ShuffleSide, key_type: str | list[str]) -> DataFrame:
    """The side's key columns cast to the type(s) the shuffle hashes, named k0, k1, ..."""
    types = key_type if isinstance(key_type, list) else [key_type]
    return frame.select(*[F.col(column_ref(c)).cast(t).alias(n)
                          for c, t, n in zip(side.key_columns, types, _key_names(side), strict=True)])


def _any_null_key(side: ShuffleSide) -> Column:
    condition = F.lit(False)
    for name in _key_names(side):
        condition = condition | F.col(name).isNull()
    return condition


def unlisted_hot_values(side: ShuffleSide, *sides: ShuffleSide) -> list:
    """The keys the prediction places one by one that `side`'s own figures do not list, where its sketch has
    dropped values (a sketch that never did lists every value: an unlisted key has no rows). Their rows are
    known only within the sketch's error, so they are counted (`ShuffleSide.counted`)."""
    if side.max_error <= 0:
        return []
    return [value for value in _hot_values(*sides) if value not in side._listed]


def _hot_values(*sides: ShuffleSide) -> list:
    seen: dict = {}
    for side in sides:
        for item in side.frequent[:HOT_KEYS]:
            seen.setdefault(item.value, None)
    return list(seen)


def _output(left_rows: float, right_rows: float, how: str) -> float:
    """A key's output rows: matched pairs, and unmatched rows an outer side keeps."""
    matched = left_rows * right_rows
    if how == "left":
        return matched if right_rows >= 1 else left_rows
    if how == "right":
        return matched if left_rows >= 1 else right_rows
    if how == "full":
        return matched if left_rows >= 1 and right_rows >= 1 else left_rows + right_rows
    return matched


def _tasks(left: ShuffleSide, right: ShuffleSide, how: str, settings: ShuffleSettings,
           hot_keys: pd.DataFrame) -> pd.DataFrame:
    n = settings.partitions
    # the keys not placed one by one: each side's other rows spread evenly over the tasks; such a key meets an
    # average one of the other side (the containment assumption of join estimates): light x light / max(keys)
    placed = len(hot_keys)
    left_light = max(left.rows - left.nulls - float(hot_keys["left_rows"].sum()), 0.0)
    right_light = max(right.rows - right.nulls - float(hot_keys["right_rows"].sum()), 0.0)
    light_keys = max(left.distinct - placed, right.distinct - placed, 1)
    light_out = left_light * right_light / light_keys
    if how in ("left", "full"):
        light_out = max(light_out, left_light)
    if how in ("right", "full"):
        light_out = max(light_out, right_light)
    out = [light_out / n] * n
    left_in = [left_light / n] * n
    right_in = [right_light / n] * n
    for key in hot_keys.itertuples(index=False):
        out[key.partition] += key.output_rows
        left_in[key.partition] += key.left_rows
        right_in[key.partition] += key.right_rows
    null_partition = NULL_HASH % n
    # an inner join filters NULL keys before the shuffle (Spark infers isnotnull); an outer side ships them
    if how in ("left", "full"):
        out[null_partition] += left.nulls
        left_in[null_partition] += left.nulls
    if how in ("right", "full"):
        out[null_partition] += right.nulls
        right_in[null_partition] += right.nulls
    tasks = pd.DataFrame({"partition": range(n), "predicted_rows": out, "left_rows": left_in, "right_rows": right_in})
    tasks["left_bytes"] = tasks["left_rows"] * left.row_bytes
    tasks["right_bytes"] = tasks["right_rows"] * right.row_bytes
    tasks["aqe_splits"] = _aqe_splits(tasks, how, settings)
    tasks["actual_rows"] = pd.Series([None] * n, dtype="Int64")
    return tasks


# Spark measures a shuffle partition's bytes as written: rows in UnsafeRow form, compressed (lz4 by default). The
# prediction knows the rows' uncompressed bytes only; compression shrinks them by up to about this (a task of one
# hot key repeated compresses best), so a decision that turns within that factor cannot be told from statistics
SHUFFLE_COMPRESSION_UP_TO = 8.0
RATIO_SPREAD = 2.0  # how differently two tasks of one shuffle may compress (a hot key's repeats compress best)


def _aqe_splits(tasks: pd.DataFrame, how: str, settings: ShuffleSettings) -> list[bool | None]:
    """Whether OptimizeSkewedJoin would split each partition, by its rule: a side it may split for the join type is
    skewed there when the partition's bytes exceed both skewedPartitionFactor times the median partition's and
    skewedPartitionThresholdInBytes. True where it does whatever the compression, False where it cannot, None
    where the bytes Spark measures (compressed) decide and statistics cannot tell."""
    if not (settings.adaptive and settings.skew_join):
        return [False] * len(tasks)
    splittable = {"inner": ("left", "right"), "left": ("left",), "right": ("right",), "full": ()}[how]
    out: list[bool | None] = [False] * len(tasks)
    for side in splittable:
        sizes = [float(v) for v in tasks[f"{side}_bytes"]]
        median = float(pd.Series(sizes).median())
        for i, task_bytes in enumerate(sizes):
            # surely: compressed as much as it may, it still passes the threshold and the factor over an
            # uncompressed median; surely not: even uncompressed it passes neither over a median compressed most
            # the factor compares tasks of one shuffle, compressed alike within about RATIO_SPREAD; the threshold
            # compares this task's compressed bytes with a constant, which compression may take anywhere below
            surely = task_bytes / SHUFFLE_COMPRESSION_UP_TO > settings.skew_threshold_bytes and \
                task_bytes > settings.skew_factor * median * RATIO_SPREAD
            never = task_bytes <= settings.skew_threshold_bytes or \
                task_bytes <= settings.skew_factor * median / RATIO_SPREAD
            decided: bool | None = True if surely else False if never else None
            if out[i] is not True:
                out[i] = True if decided is True else (None if decided is None or out[i] is None else False)
    return out


def _recommend_join(report: ShuffleSkewReport) -> None:
    left, right = report.sides
    settings = report.settings
    small = min(report.sides, key=lambda s: s.size_bytes)
    largest = report.largest
    ratio = report.skew_ratio
    task = int(largest["partition"])
    if report.aqe_observed is None and task in report.aqe_may_split():
        report.notes.append(f"AQE may or may not split task {task}: its "
                            f"{_mib(max(largest['left_bytes'], largest['right_bytes']))} of rows compress to bytes only "
                            f"the shuffle measures, and its rule (over {report.settings.skew_factor:g}x the median and "
                            f"{_mib(report.settings.skew_threshold_bytes)}) turns within that; join_skew(run=True) runs "
                            "the join and reads AQE's plan")
    known = small.size_bytes > 0 or small.rows == 0  # a side of rows whose bytes no statistics record: unknown
    fits = known and small.size_bytes <= settings.broadcast_threshold_bytes and settings.broadcast_threshold_bytes >= 0
    broadcastable = report.how == "inner" or (report.how == "left" and small is right) or \
        (report.how == "right" and small is left)
    if fits and broadcastable:
        report.broadcast = small.table
        report.recommendation = (f"Nothing to do: Spark broadcasts {small.table} ({_mib(small.size_bytes)} is within "
                                 f"autoBroadcastJoinThreshold {_mib(settings.broadcast_threshold_bytes)}), so this "
                                 "join shuffles nothing and no task is skewed.")
        return
    if ratio < settings.skew_factor:
        report.recommendation = (f"Nothing to do: the largest task is predicted at {ratio:.1f}x the median, under "
                                 f"AQE's skew factor {settings.skew_factor:g}.")
        return
    null_side = _null_heavy(report)
    if null_side is not None:
        report.recommendation = (f"Filter or handle the NULL keys of {null_side.table}: its {null_side.nulls:,} "
                                 f"NULL {null_side.key} rows all go to task {NULL_HASH % settings.partitions}, "
                                 f"{_times_median(ratio)}; salting them with a random key spreads them.")
        report.code = (f"F.coalesce(F.col('{null_side.key}'), F.concat(F.lit('null-'), "
                       f"(F.rand() * {settings.partitions}).cast('int').cast('string')))")
        return
    if report.aqe_observed is not None:  # the run's own plan says what AQE did
        if report.aqe_observed:
            report.recommendation = (f"Nothing to do: AQE's skew join split this join's skewed tasks in the run "
                                     f"(its plan's SortMergeJoin is marked skew=true); task {task} held "
                                     f"{_times_median(ratio)}.")
            return
    elif task in report.split_by_aqe():
        report.recommendation = (f"Nothing to do: AQE's skew join splits task {task} ({_times_median(ratio)}) with "
                                 "the session's settings, whatever the compression of its shuffle bytes.")
        return

    if broadcastable and known and small.size_bytes <= BROADCAST_ADVISED_BYTES:
        report.recommendation = (f"Broadcast {small.table} ({_mib(small.size_bytes)}): the join then shuffles "
                                 f"nothing, and the largest task ({_times_median(ratio)}) goes away.")
        report.code = f"big.join(F.broadcast({small.table.split('.')[-1]}), ...)"
        return
    largest_bytes = float(max(largest["left_bytes"], largest["right_bytes"]))
    if settings.adaptive and settings.skew_join and report.how != "full" and largest_bytes < settings.skew_threshold_bytes:
        below = max(int(largest_bytes / 2), 1)
        report.recommendation = (f"Lower AQE's skewedPartitionThresholdInBytes below task {int(largest['partition'])}'s "
                                 f"{_mib(largest_bytes)} (it is {_mib(settings.skew_threshold_bytes)}): AQE then splits "
                                 f"the largest task ({_times_median(ratio)}).")
        report.code = f"spark.conf.set('spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes', '{below}b')"
        return
    hot = report.hot_keys.head(5)["key"].tolist()
    factor = _salt_factor(ratio, settings)
    report.recommendation = (f"Salt the hot keys {', '.join(map(str, hot))} by a factor of {factor}: the largest "
                             f"task ({_times_median(ratio)}) then holds about a {factor}th of its rows.")
    report.code = (f"salt = F.when(F.col(key).isin({hot!r}), (F.rand() * {factor}).cast('int')).otherwise(0)  "
                   f"# join on (key, salt); the other side exploded over salt 0..{factor - 1} for those keys")


def _null_heavy(report: ShuffleSkewReport) -> ShuffleSide | None:
    """The outer side whose NULL keys make the largest task, if they do."""
    n = report.settings.partitions
    largest = report.largest
    if int(largest["partition"]) != NULL_HASH % n:
        return None
    outer = {"left": [report.sides[0]], "right": [report.sides[1]], "full": report.sides}.get(report.how, [])
    for side in outer:
        if side.nulls and side.nulls >= 0.5 * float(largest["predicted_rows"]):
            return side
    return None


def _times_median(ratio: float) -> str:
    """`12x the median` (a median task of no rows: `with the median task empty`)."""
    return f"{ratio:.0f}x the median" if math.isfinite(ratio) else "with the median task empty"


def _salt_factor(ratio: float, settings: ShuffleSettings) -> int:
    """How many ways to split a hot key so its task comes down to about the skew factor times the median."""
    if not math.isfinite(ratio):
        return settings.partitions
    return max(2, math.ceil(ratio / settings.skew_factor))


def _mib(num_bytes: float) -> str:
    return size(int(num_bytes))


def observe_aqe(report: ShuffleSkewReport, left: DataFrame, right: DataFrame, key_type: str | list[str]
                ) -> ShuffleSkewReport:
    """Runs the join itself (its rows written nowhere) and reads what AQE did from its final plan: a join AQE split
    is marked skew=true there. Sets `aqe_observed` and says it in the recommendation; over Spark Connect, whose
    client holds no executed plan, it stays None (the prediction's own rule stands)."""
    left_side, right_side = report.sides
    keyed = [_keyed(left, left_side, key_type), _keyed(right, right_side, key_type)]
    names = _key_names(left_side)
    condition = functools.reduce(lambda a, b: a & b, [keyed[0][n] == keyed[1][n] for n in names])
    joined = keyed[0].join(keyed[1], condition, {"left": "left", "right": "right", "full": "full"}.get(report.how,
                                                                                                      "inner"))
    joined.write.format("noop").mode("overwrite").save()
    if not hasattr(joined, "_jdf"):
        return report
    plan = str(joined._jdf.queryExecution().executedPlan().toString())  # AQE's final plan, once it ran
    report.aqe_observed = "(skew=true)" in plan
    report.notes = [n for n in report.notes if not n.startswith("AQE may or may not split")]
    _recommend_join(report)
    return report


def measure(report: ShuffleSkewReport, left: DataFrame, right: DataFrame, key_type: str | list[str]
            ) -> ShuffleSkewReport:
    """Fills `tasks.actual_rows` (and each side's `actual_left_rows`, `actual_right_rows`) from Spark's own
    placement: each side repartitioned by its key cast to `key_type`, as the shuffle does, and the rows of
    every (task, key) counted with `spark_partition_id()`; a task's output is the sum over its keys of
    left rows times right rows (outer sides keep their unmatched rows)."""
    n = report.settings.partitions
    how = report.how

    def placed(frame: DataFrame, side: ShuffleSide, keep_nulls: bool) -> DataFrame:
        keyed = _keyed(frame, side, key_type)
        if not keep_nulls:  # an inner side drops a row with any NULL key before the shuffle
            keyed = keyed.where(~_any_null_key(side))
        names = _key_names(side)
        return keyed.repartition(n, *names).select(F.spark_partition_id().alias("p"), *names) \
            .withColumn("k", F.when(~_any_null_key(side), F.lit(True))) \
            .groupBy("p", *names, "k").count()

    left_side, right_side = report.sides
    lc = placed(left, left_side, how in ("left", "full")).withColumnRenamed("count", "l")
    rc = placed(right, right_side, how in ("right", "full")).withColumnRenamed("count", "r")
    joined = lc.join(rc, on=["p", *_key_names(left_side), "k"], how="full")
    lefts, rights = F.coalesce(F.col("l"), F.lit(0)), F.coalesce(F.col("r"), F.lit(0))
    matched = F.when(F.col("k").isNotNull(), lefts * rights).otherwise(F.lit(0))
    if how == "left":
        output = F.when((rights == 0) | F.col("k").isNull(), lefts).otherwise(matched)
    elif how == "right":
        output = F.when((lefts == 0) | F.col("k").isNull(), rights).otherwise(matched)
    elif how == "full":
        output = F.when((lefts == 0) | (rights == 0) | F.col("k").isNull(), lefts + rights).otherwise(matched)
    else:
        output = matched
    per_task = joined.groupBy("p").agg(F.sum(output).alias("out"), F.sum(lefts).alias("lin"),
                                       F.sum(rights).alias("rin"))
    counted = {int(row["p"]): row for row in per_task.collect()}  # one row per task
    for column, figure in (("actual_rows", "out"), ("actual_left_rows", "lin"), ("actual_right_rows", "rin")):
        report.tasks[column] = pd.array([int(counted[p][figure]) if p in counted else 0 for p in range(n)],
                                        dtype="Int64")
    report.measured = True
    return report

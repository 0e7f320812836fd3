"""The most frequent values of a column, per partition and for the whole table, from one Spark job.

One aggregation counts rows per (partition, value); a window ranks the values inside each
partition and keeps the top k, while a second window sums every partition's total, so only
k rows per partition reach the driver. Table-level figures are summed from the partition counts.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

TABLE_LEVEL = "(table)"


@dataclass
class TopValues:
    """Heavy hitters of one column: `frame` has partition, value, count, share, rank; `totals` the
    rows per partition. NULL is counted as a value, as a skewed NULL is a real skew."""

    column: str
    k: int
    frame: pd.DataFrame
    totals: dict[str, int]

    @property
    def partitions(self) -> list[str]:
        return sorted(self.totals)

    def for_partition(self, partition: str | None = None) -> pd.DataFrame:
        """The top values of one partition (None or TABLE_LEVEL: the whole table, merged)."""
        if partition in (None, TABLE_LEVEL):
            total = sum(self.totals.values())
            merged = self.frame.groupby("value", dropna=False, as_index=False)["count"].sum()
            merged = merged.sort_values(["count", "value"], ascending=[False, True], na_position="last").head(self.k)
            merged["share"] = merged["count"] / total if total else 0.0
            merged.insert(0, "partition", TABLE_LEVEL)
            merged["rank"] = range(1, len(merged) + 1)
            return merged.reset_index(drop=True)
        return self.frame[self.frame.partition == partition].reset_index(drop=True)

    def others(self, partition: str | None = None) -> int:
        """Rows outside the top k (for the whole table, of the merged top k: a lower bound on
        exactness, since a value can miss every partition's top k and still be frequent overall)."""
        rows = self.totals.get(partition) if partition not in (None, TABLE_LEVEL) else sum(self.totals.values())
        return int(rows - self.for_partition(partition)["count"].sum())


def top_values(frame: DataFrame, partition_keys: list[str], column: str, k: int = 10) -> TopValues:
    """Counts of the k most frequent values of `column` in each partition (exact)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    part = (F.concat_ws("/", *[F.concat(F.lit(f"{key}="), F.coalesce(F.col(f"`{key}`").cast("string"),
                                                                        F.lit("__HIVE_DEFAULT_PARTITION__")))
                               for key in partition_keys]) if partition_keys else F.lit(TABLE_LEVEL))
    counts = frame.groupBy(part.alias("partition"), F.col(f"`{column}`").alias("value")).count()
    by_partition = Window.partitionBy("partition")
    ranked = counts.select(
        "partition", "value", "count",
        F.row_number().over(by_partition.orderBy(F.col("count").desc(), F.col("value").asc_nulls_last())).alias("rank"),
        F.sum("count").over(by_partition).alias("total"),
    ).where(F.col("rank") <= k)
    rows = ranked.collect()  # at most k rows per partition
    result = pd.DataFrame({
        "partition": pd.Series([r["partition"] for r in rows], dtype=object),
        "value": pd.Series([r["value"] for r in rows], dtype=object),  # keeps ints ints and None None
        "count": pd.Series([r["count"] for r in rows], dtype="int64"),
        "rank": pd.Series([r["rank"] for r in rows], dtype="int64"),
        "total": pd.Series([r["total"] for r in rows], dtype="int64"),
    })
    totals = {p: int(t) for p, t in result.groupby("partition")["total"].first().items()}
    result["share"] = result["count"] / result["total"]
    result = result.drop(columns="total").sort_values(["partition", "rank"]).reset_index(drop=True)
    return TopValues(column, k, result[["partition", "value", "count", "share", "rank"]], totals)

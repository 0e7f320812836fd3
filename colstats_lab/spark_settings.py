"""`SET spark.*` and `RESET` through the lab: Spark's own settings reach the lab's Spark session.

A setting given before Spark starts waits and is applied as the session starts (one fixed when the driver's JVM
starts, such as `spark.driver.memory`, goes to the session's builder). Once Spark runs, Spark decides: a setting
fixed at start (`spark.sql.warehouse.dir`) or a core setting Spark does not take at run time
(`spark.executor.memory`) is refused in one line naming it. RESET puts back the value each setting had before
the lab first changed it, so the lab's own defaults (shuffle partitions, the time zone) survive it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .engine import JVM_LAUNCH_PREFIXES
from .errors import InvalidArgument, one_line

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PREFIX = "spark."
# where Spark runs: the lab's choice at start (Spark takes a new value silently and keeps running where it was)
CHOSEN_BY_THE_LAB = ("spark.master", "spark.remote", "spark.submit.deploymode", "spark.api.mode")
# read once, when the driver's or an executor's JVM starts
FIXED_AT_START = JVM_LAUNCH_PREFIXES + ("spark.executor.", "spark.app.name", "spark.ui.", "spark.local.dir")


def is_spark_setting(key: str) -> bool:
    return key.lower().startswith(PREFIX)


class SparkSettings:
    """The Spark settings one lab changed: those waiting for Spark to start, and each one's value before."""

    def __init__(self) -> None:
        self.pending: dict[str, str] = {}  # given before Spark started, applied as it starts
        self.launch: dict[str, str] = {}  # fixed when the JVM starts: for the session's builder
        self._before: dict[str, str | None] = {}  # each changed setting's value before the lab's first change

    def get(self, spark: SparkSession | None, key: str) -> Any:
        if spark is None:
            return self.pending.get(key, self.launch.get(key))
        return spark.conf.get(key, None)

    def set(self, spark: SparkSession | None, key: str, value: Any) -> None:
        text = _text(value)
        if key.lower() in CHOSEN_BY_THE_LAB:
            raise InvalidArgument(f"{key} is chosen when the lab starts Spark, not by SET: Lab(master=...), "
                                  "Lab(remote='sc://...') or $COLSTATS_SPARK_MASTER / $COLSTATS_SPARK_REMOTE")
        if spark is not None and key.startswith(FIXED_AT_START):
            raise InvalidArgument(f"{key} is fixed when Spark starts, and Spark runs already: give it to "
                                  f"Lab(spark_conf={{{key!r}: {text!r}}}) before Spark starts")
        if spark is None:
            (self.launch if key.startswith(FIXED_AT_START) else self.pending)[key] = text
            return
        before = spark.conf.get(key, None)
        _checked_set(spark, key, text)
        self._before.setdefault(key, before)

    def apply(self, spark: SparkSession) -> None:
        """Applies what waited for Spark to start, now that it has."""
        waiting, self.pending = self.pending, {}
        for key, value in waiting.items():
            self.set(spark, key, value)

    def reset(self, spark: SparkSession | None, key: str | None = None) -> list[str]:
        """Puts back one setting (None: every setting the lab changed) as it was before; returns those reset."""
        keys = [key] if key is not None else sorted({*self.pending, *self.launch, *self._before})
        for name in keys:
            self.pending.pop(name, None)
            self.launch.pop(name, None)
            if spark is not None and name in self._before:
                before = self._before.pop(name)
                if before is None:
                    spark.conf.unset(name)
                else:
                    spark.conf.set(name, before)
        return keys


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _checked_set(spark: SparkSession, key: str, value: str) -> None:
    from pyspark.errors import PySparkException

    try:
        spark.conf.set(key, value)
    except PySparkException as exc:
        condition = getattr(exc, "getCondition", lambda: None)() or ""
        if "STATIC" in condition or "CANNOT_MODIFY" in condition:
            raise InvalidArgument(f"{key} is fixed when Spark starts: give it to Lab(spark_conf={{{key!r}: "
                                  f"{value!r}}}) before Spark starts") from None
        raise InvalidArgument(f"Spark refuses {key} = {value}: {one_line(str(exc))}") from None
